/** Indexes on a table's columns: build, list, describe, drop. */
import { invalidInput } from "@/server/errors";
import { json, pageLimit, route } from "@/server/http/route";
import { pageOf } from "@/server/catalog/paging";
import { createIndex, dropIndex, indexStats, listIndices } from "@/server/tables/indices";
import { indexOperations as ops } from "@/lib/contract/operations/indexes";

/** An index build or drop applied once per request id: its answer has no fields, so one decided from its commit is the same. */
const once = { scope: "table", decided: async () => json({}) } as const;

/** CreateTableIndex and CreateTableScalarIndex: one request shape, the second refusing vector index types. */
function createIndexRoute(operation: typeof ops.CreateTableIndex, scalarOnly: boolean) {
  return route({
    ...operation,
    access: { need: "editor", on: "table" },
    heavy: true,
    once,
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
  createIndexRoute(ops.CreateTableIndex, false),
  createIndexRoute(ops.CreateTableScalarIndex, true),
  route({
    ...ops.ListTableIndices,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, body, query, tables }) => {
      const indexes = await listIndices(tables, id, { version: body.version ?? undefined, branch: body.branch ?? undefined });
      const byName = new Map(indexes.map((i) => [i.index_name, i]));
      const page = await pageOf([...byName.keys()], body.page_token ?? query.page_token, pageLimit(body.limit ?? query.limit));
      return json({ indexes: page.items.map((name) => byName.get(name)!), page_token: page.pageToken });
    },
  }),
  route({
    ...ops.DescribeTableIndexStats,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, params, body, tables }) =>
      json(await indexStats(tables, id, params.index_name, { version: body.version ?? undefined, branch: body.branch ?? undefined })),
  }),
  route({
    ...ops.DropTableIndex,
    access: { need: "editor", on: "table" },
    once,
    handler: async ({ id, params, query, tables, committed }) => {
      const { version } = await dropIndex(tables, id, params.index_name, query.branch || undefined);
      committed({ table: id, version, branch: query.branch || undefined });
      return json({});
    },
  }),
];
