/**
 * The query a client describes, as QueryTable, ExplainTableQueryPlan and AnalyzeTableQueryPlan take it: the Lance
 * Namespace's QueryTableRequest, and the shapes LanceDB's remote client sends for the same things (a bare
 * `{alias: expression}` map of columns, a full-text query as `{query, columns}`).
 */
import { z } from "zod";
import { distanceType } from "./common";

export const stringQuery = z.object({ query: z.string(), columns: z.array(z.string()).nullish() });

export const queryFields = {
  filter: z.string().nullish(),
  columns: z
    .union([
      z.array(z.string()),
      // Before the spec's object, which would take any map by dropping its keys.
      z.record(z.string(), z.string()).describe("LanceDB's remote client: output name to SQL expression"),
      z.object({ column_names: z.array(z.string()).nullish(), column_aliases: z.record(z.string(), z.string()).nullish() }),
    ])
    .nullish(),
  limit: z.number().int().min(0).nullish(),
  k: z.number().min(0).nullish(),
  offset: z.number().int().min(0).nullish(),
  version: z.number().int().min(0).nullish(),
  tag: z.string().nullish(),
  branch: z.string().nullish(),
  with_row_id: z.boolean().nullish(),
  vector: z
    .union([z.array(z.number()), z.object({ single_vector: z.array(z.number()).nullish(), multi_vector: z.array(z.array(z.number())).nullish() })])
    .nullish(),
  vector_column: z.string().nullish(),
  distance_type: distanceType("The distance metric of a vector search"),
  nprobes: z.number().int().min(0).nullish(),
  minimum_nprobes: z.number().int().min(0).nullish(),
  maximum_nprobes: z.number().int().min(0).nullish(),
  lower_bound: z.number().nullish().describe("Smallest distance kept (inclusive)"),
  upper_bound: z.number().nullish().describe("Distance below which results are kept (exclusive)"),
  refine_factor: z.number().int().min(0).nullish(),
  ef: z.number().int().min(0).nullish(),
  prefilter: z.boolean().nullish(),
  bypass_vector_index: z.boolean().nullish(),
  fast_search: z.boolean().nullish().describe("Search only indexed data"),
  full_text_query: z
    .union([
      stringQuery.describe("LanceDB's remote client"),
      z.object({ string_query: stringQuery.nullish(), structured_query: z.object({ query: z.record(z.string(), z.unknown()) }).nullish() }),
    ])
    .nullish(),
  order_by: z.array(z.object({ column_name: z.string().min(1), ascending: z.boolean().nullish(), nulls_first: z.boolean().nullish() })).nullish(),
};

export type QueryRequest = z.output<z.ZodObject<typeof queryFields>>;
