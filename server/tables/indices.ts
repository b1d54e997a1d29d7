/** A table's indices and statistics: create (vector, scalar, full-text), list, describe, drop. */
import "server-only";
import type { Field } from "apache-arrow";
import { QuiverError, invalidInput } from "@/server/errors";
import { engineCall } from "@/server/lance/native";
import type { Id, ReadAt } from "@/server/catalog/catalog";
import { compare } from "@/server/catalog/catalog-table";
import { indexConfig, indexTypeName, type IndexOptions } from "@/server/lance/index-config";
import { fieldToJson } from "@/lib/arrow-schema";
import { columnKind } from "@/lib/index-types";
import { existingColumn, resolveField } from "./fields";
import type { Tables } from "./tables";
import { versionNow } from "./writes";

export async function tableStats(tables: Tables, id: Id, branch?: string) {
  const { table } = await tables.dataHandle(id, "report statistics", branch);
  const s = await engineCall("read table statistics", () => table.stats());
  return {
    total_bytes: s.totalBytes,
    num_rows: s.numRows,
    num_indices: s.numIndices,
    fragment_stats: { num_fragments: s.fragmentStats.numFragments, num_small_fragments: s.fragmentStats.numSmallFragments, lengths: s.fragmentStats.lengths },
  };
}

export async function listIndices(tables: Tables, id: Id, at: ReadAt = {}) {
  const { table } = await tables.dataAt(id, "have indices", at);
  const indices = await engineCall("list indices", () => table.listIndices());
  return indices
    .map((i) => ({
      index_name: i.name,
      index_uuid: i.indexUuid ?? "",
      index_type: i.indexType,
      type_url: i.typeUrl,
      columns: i.columns,
      status: "done",
      num_segments: i.numSegments,
      index_version: i.indexVersion,
      num_indexed_rows: i.numIndexedRows,
      num_unindexed_rows: i.numUnindexedRows,
      size_bytes: i.sizeBytes,
      created_at: i.createdAt?.toISOString(),
      // How it was built (metric, quantisation, graph, tokenizer), as the engine records it in the index; JSON text,
      // which is what LanceDB's remote client parses.
      index_details: i.indexDetails === undefined ? undefined : typeof i.indexDetails === "string" ? i.indexDetails : JSON.stringify(i.indexDetails),
    }))
    .sort((a, b) => compare(a.index_name, b.index_name));
}

export async function indexStats(tables: Tables, id: Id, name: string, at: ReadAt = {}) {
  const { entry, table } = await tables.dataAt(id, "have indices", at);
  const stats = await engineCall("read index statistics", () => table.indexStats(name));
  if (!stats) throw new QuiverError("TableIndexNotFound", `table '${entry.objectId}' has no index named '${name}'`);
  return {
    index_type: stats.indexType,
    distance_type: stats.distanceType,
    num_indexed_rows: stats.numIndexedRows,
    num_unindexed_rows: stats.numUnindexedRows,
    num_indices: stats.numIndices,
  };
}

export async function dropIndex(tables: Tables, id: Id, name: string, branch?: string) {
  const { entry, table } = await tables.dataHandle(id, "have indices", branch);
  const known = await engineCall("list indices", () => table.listIndices());
  if (!known.some((i) => i.name === name)) throw new QuiverError("TableIndexNotFound", `table '${entry.objectId}' has no index named '${name}'`);
  return tables.guardedCommit(entry, branch, await versionNow(table), async (target) => {
    await engineCall("drop index", () => target.dropIndex(name));
    return { version: await versionNow(target) };
  });
}

export async function createIndex(
  tables: Tables,
  id: Id,
  options: { column: string; indexType: string; name?: string; replace?: boolean; branch?: string; scalarOnly?: boolean; settings: IndexOptions },
) {
  const config = indexConfig(options.indexType, options.settings, options.scalarOnly);
  const { entry, table } = await tables.dataHandle(id, "be indexed", options.branch);
  const schema = await tables.schemaOf(table);
  const field = resolveField(schema.fields, existingColumn(schema.fields, options.column, "column", entry.objectId))!;
  const json = fieldToJson(field as Field);
  const typeName = indexTypeName(options.indexType);
  if (typeName.startsWith("IVF_") && columnKind(json) !== "vector")
    throw invalidInput(`a ${typeName} index needs a vector column (a fixed-size list of floats or of uint8); column '${options.column}' is ${json.type.type}`);
  // Through the commit handle, under the request's guard: the version the build makes names the request.
  return tables.guardedCommit(entry, options.branch, await versionNow(table), async (target) => {
    await engineCall("create index", () => target.createIndex(config, options.column, options.replace ?? true, null, options.name ?? null)).catch((err) => {
      if (err instanceof QuiverError && err.codeName === "TableAlreadyExists") throw new QuiverError("TableIndexAlreadyExists", err.message);
      throw err;
    });
    return { version: await versionNow(target) };
  });
}
