/** Indexes on a table's columns: build, list, describe, drop. */

import { z } from "zod";
import { invalidInput } from "@/server/errors";
import { json, pageLimit, pageQuery, route } from "@/server/http/route";
import { pageOf } from "@/server/catalog/paging";
import { createIndex, dropIndex, indexStats, listIndices } from "@/server/tables/indices";
import { branchField, branchQuery, context, delimiterQuery, requestBase } from "@/lib/contract/common";
import { indexListAnswer, indexStatsAnswer } from "@/lib/contract/catalog";
/** CreateTableIndex and CreateTableScalarIndex: one request shape, the second refusing vector index types. */
function createIndexRoute(operationId: string, path: string, summary: string, scalarOnly: boolean) {
  return route({
    operationId,
    summary,
    group: "Indexes",
    methods: ["POST"],
    path,
    access: { need: "editor", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        ...branchField,
        column: z.string().min(1),
        index_type: z.string().min(1),
        name: z.string().nullish(),
        replace: z.boolean().nullish(),
        distance_type: z.string().nullish(),
        metric_type: z.string().nullish().describe("LanceDB's remote client's name for distance_type"),
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
      }),
    },
    response: z.object({ context }),
    handler: async ({ id, body: b, tables, committed }) => {
      if (b.distance_type && b.metric_type && b.distance_type.toLowerCase() !== b.metric_type.toLowerCase()) {
        throw invalidInput(`distance_type '${b.distance_type}' and metric_type '${b.metric_type}' disagree`);
      }
      const settings = {
        distanceType: b.distance_type ?? b.metric_type ?? undefined,
        numPartitions: b.num_partitions ?? undefined,
        numSubVectors: b.num_sub_vectors ?? undefined,
        numBits: b.num_bits ?? undefined,
        sampleRate: b.sample_rate ?? undefined,
        maxIterations: b.max_iterations ?? undefined,
        targetPartitionSize: b.target_partition_size ?? undefined,
        m: b.m ?? undefined,
        efConstruction: b.ef_construction ?? undefined,
        withPosition: b.with_position ?? undefined,
        baseTokenizer: b.base_tokenizer ?? undefined,
        language: b.language ?? undefined,
        maxTokenLength: b.max_token_length ?? undefined,
        lowercase: b.lower_case ?? undefined,
        stem: b.stem ?? undefined,
        removeStopWords: b.remove_stop_words ?? undefined,
        customStopWords: b.custom_stop_words ?? undefined,
        asciiFolding: b.ascii_folding ?? undefined,
        ngramMinLength: b.min_ngram_length ?? undefined,
        ngramMaxLength: b.max_ngram_length ?? undefined,
        prefixOnly: b.prefix_only ?? undefined,
        blockSize: b.block_size ?? undefined,
        indexOperators: b.index_operators ?? undefined,
        lanceTokenizer: b.lance_tokenizer ?? undefined,
        preserveOriginal: b.preserve_original ?? undefined,
        splitIdentifiers: b.split_identifiers ?? undefined,
        splitOnNumerics: b.split_on_numerics ?? undefined,
      };
      const { version } = await createIndex(tables, id, {
        column: b.column,
        indexType: b.index_type,
        name: b.name ?? undefined,
        replace: b.replace ?? undefined,
        branch: b.branch ?? undefined,
        scalarOnly,
        settings,
      });
      committed({ table: id, version, branch: b.branch ?? undefined });
      return json({});
    },
  });
}

export const indexRoutes = [
  createIndexRoute(
    "CreateTableIndex",
    "/v1/table/{id}/create_index",
    "Build an index on a column (BTREE, BITMAP, LABEL_LIST, FTS, IVF_PQ, IVF_FLAT, IVF_HNSW_PQ, IVF_HNSW_SQ)",
    false,
  ),
  createIndexRoute(
    "CreateTableScalarIndex",
    "/v1/table/{id}/create_scalar_index",
    "Build a scalar or full-text index on a column (BTREE, BITMAP, LABEL_LIST, FTS)",
    true,
  ),
  route({
    operationId: "ListTableIndices",
    summary: "List a table's indices",
    group: "Indexes",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/index/list",
    access: { need: "viewer", on: "table" },
    query: z.object({ ...delimiterQuery, ...pageQuery }),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        ...branchField,
        version: z.number().int().min(0).nullish(),
        page_token: z.string().nullish(),
        limit: z.number().int().min(1).nullish(),
      }),
    },
    response: indexListAnswer,
    handler: async ({ id, body, query, tables }) => {
      const indexes = await listIndices(tables, id, { version: body.version ?? undefined, branch: body.branch ?? undefined });
      const byName = new Map(indexes.map((i) => [i.index_name, i]));
      const page = await pageOf([...byName.keys()], body.page_token ?? query.page_token, pageLimit(body.limit ?? query.limit));
      return json({ indexes: page.items.map((name) => byName.get(name)!), page_token: page.pageToken });
    },
  }),
  route({
    operationId: "DescribeTableIndexStats",
    summary: "An index's statistics: rows indexed and not yet indexed, type, distance",
    group: "Indexes",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/index/{index_name}/stats",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...branchField, version: z.number().int().min(0).nullish() }) },
    response: indexStatsAnswer,
    handler: async ({ id, params, body, tables }) =>
      json(await indexStats(tables, id, params.index_name, { version: body.version ?? undefined, branch: body.branch ?? undefined })),
  }),
  route({
    operationId: "DropTableIndex",
    summary: "Drop an index",
    group: "Indexes",
    methods: ["POST"],
    path: "/v1/table/{id}/index/{index_name}/drop",
    access: { need: "editor", on: "table" },
    query: z.object({ ...delimiterQuery, ...branchQuery }),
    response: z.object({ context }),
    handler: async ({ id, params, query, tables, committed }) => {
      const { version } = await dropIndex(tables, id, params.index_name, query.branch || undefined);
      committed({ table: id, version, branch: query.branch || undefined });
      return json({});
    },
  }),
];
