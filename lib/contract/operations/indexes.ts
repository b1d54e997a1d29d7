/** Indexes on a table's columns: build, list, describe, drop. */
import { z } from "zod";
import { indexListAnswer, indexStatsAnswer } from "../catalog";
import { branchField, branchQuery, context, delimiterQuery, distanceType, pageQuery, requestBase } from "../common";
import { defineOperation } from "../operation";

/** The index types the engine builds, by the names Lance gives them. */
export const INDEX_TYPE_NAMES = ["BTREE", "BITMAP", "LABEL_LIST", "FTS", "IVF_PQ", "IVF_RQ", "IVF_FLAT", "IVF_HNSW_PQ", "IVF_HNSW_SQ"] as const;
export type IndexTypeName = (typeof INDEX_TYPE_NAMES)[number];
export const isIndexTypeName = (name: string): name is IndexTypeName => (INDEX_TYPE_NAMES as readonly string[]).includes(name);

/** What CreateTableIndex and CreateTableScalarIndex take: the column, the index type and its parameters. */
export const createIndexBody = z.object({
  ...requestBase,
  ...branchField,
  column: z.string().min(1),
  index_type: z
    .string()
    .min(1)
    .meta({ enum: INDEX_TYPE_NAMES, description: "The index type (case-insensitive; LanceDB's SCALAR, LABELLIST, INVERTED and VECTOR are taken too)" }),
  name: z.string().nullish(),
  replace: z.boolean().nullish(),
  distance_type: distanceType("The vector index's distance metric"),
  metric_type: distanceType("LanceDB's remote client's name for distance_type"),
  num_partitions: z.number().int().min(1).nullish(),
  num_sub_vectors: z.number().int().min(1).nullish(),
  num_bits: z.number().int().min(1).nullish(),
  sample_rate: z.number().int().min(1).nullish(),
  max_iterations: z.number().int().min(1).nullish(),
  target_partition_size: z.number().int().min(1).nullish(),
  m: z.number().int().min(1).nullish(),
  ef_construction: z.number().int().min(1).nullish(),
  with_position: z.boolean().nullish(),
  base_tokenizer: z.string().nullish(),
  language: z.string().nullish(),
  max_token_length: z.number().int().min(1).nullish(),
  lower_case: z.boolean().nullish(),
  stem: z.boolean().nullish(),
  remove_stop_words: z.boolean().nullish(),
  custom_stop_words: z.array(z.string()).nullish(),
  ascii_folding: z.boolean().nullish(),
  min_ngram_length: z.number().int().min(1).nullish(),
  max_ngram_length: z.number().int().min(1).nullish(),
  prefix_only: z.boolean().nullish(),
  block_size: z.number().int().nullish(),
  index_operators: z.boolean().nullish(),
  lance_tokenizer: z.string().nullish(),
  preserve_original: z.boolean().nullish(),
  split_identifiers: z.boolean().nullish(),
  split_on_numerics: z.boolean().nullish(),
});

/** CreateTableIndex and CreateTableScalarIndex: one request shape, the second refusing vector index types. */
const createIndexOperation = (operationId: string, path: string, summary: string) =>
  defineOperation({
    operationId,
    summary,
    group: "Indexes",
    methods: ["POST"],
    path,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: createIndexBody },
    response: z.object({ context }),
  });

/** A read of a table's indexes: at a version of a branch (the latest of main by default). */
const indexesAt = { ...requestBase, ...branchField, version: z.number().int().min(0).nullish() };

export const indexOperations = {
  CreateTableIndex: createIndexOperation(
    "CreateTableIndex",
    "/v1/table/{id}/create_index",
    "Build an index on a column (BTREE, BITMAP, LABEL_LIST, FTS, IVF_PQ, IVF_FLAT, IVF_HNSW_PQ, IVF_HNSW_SQ)",
  ),
  CreateTableScalarIndex: createIndexOperation(
    "CreateTableScalarIndex",
    "/v1/table/{id}/create_scalar_index",
    "Build a scalar or full-text index on a column (BTREE, BITMAP, LABEL_LIST, FTS)",
  ),
  ListTableIndices: defineOperation({
    operationId: "ListTableIndices",
    summary: "List a table's indices",
    group: "Indexes",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/index/list",
    query: z.object({ ...delimiterQuery, ...pageQuery }),
    body: {
      kind: "json",
      schema: z.object({ ...indexesAt, page_token: z.string().nullish(), limit: z.number().int().min(1).nullish() }),
    },
    response: indexListAnswer,
  }),
  DescribeTableIndexStats: defineOperation({
    operationId: "DescribeTableIndexStats",
    summary: "An index's statistics: rows indexed and not yet indexed, type, distance",
    group: "Indexes",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/index/{index_name}/stats",
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({ ...indexesAt, index_name: z.string().nullish().describe("The index; must agree with the path when given") }),
    },
    response: indexStatsAnswer,
  }),
  DropTableIndex: defineOperation({
    operationId: "DropTableIndex",
    summary: "Drop an index",
    group: "Indexes",
    methods: ["POST"],
    path: "/v1/table/{id}/index/{index_name}/drop",
    query: z.object({ ...delimiterQuery, ...branchQuery }),
    response: z.object({ context }),
  }),
};
