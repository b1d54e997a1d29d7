/**
 * Data, schema and history operations on one table: insert, merge-insert, count, query, alter columns, restore,
 * versions and tags.
 */
import "server-only";
import type { Field } from "apache-arrow";
import type { FullTextQuery } from "@lancedb/lancedb";
import { normalizeDataType } from "@/lib/arrow-schema";
import { formatFieldPath, parseFieldPath } from "@/lib/field-path";
import { QuiverError, fromArrowWriteError, invalidInput, unsupported } from "@/server/errors";
import { joinIpcFiles, type ArrowBody } from "@/server/lance/arrow-ipc";
import { engineCall } from "@/server/storage/datasets";
import { readBranchRefs, readTagRefs } from "@/server/lance/refs";
import { checkWriteSchema } from "./schema-check";
import { pageOf } from "@/server/catalog/paging";
import type { Catalog, Id, ReadAt } from "@/server/catalog/catalog";
import { compare, type TableEntry } from "@/server/catalog/catalog-table";
import type { NativeTable, NativeVectorQuery } from "@/server/lance/native";
import { indexConfig, type IndexOptions } from "@/server/lance/index-config";

/** A field path from the request; a malformed one is the caller's error, named by `where`. */
function requestedFieldPath(path: string, where: string): string[] {
  try {
    return parseFieldPath(path);
  } catch (err) {
    throw invalidInput(`${where}: ${(err as Error).message}`);
  }
}

// ---------------------------------------------------------------- writes

/** Writes the first version of a declared-only table; null when it already had data (a concurrent writer won). */
async function materialize(catalog: Catalog, entry: TableEntry, body: ArrowBody): Promise<number | null> {
  const beingCreated = () => new QuiverError("ConcurrentModification", `Table '${entry.objectId}' is being created by another request; retry`);
  if (!(await catalog.awaitsFirstWrite(entry, beingCreated))) return null;
  return catalog.commitTo(entry, async () => {
    if (!(await catalog.awaitsFirstWrite(entry, beingCreated))) return null;
    try {
      const table = await catalog.datasets.create(entry.location, body, "create");
      return await table.version();
    } catch (err) {
      if (err instanceof QuiverError && err.codeName === "TableAlreadyExists") return null;
      throw err;
    }
  });
}

export async function insertRecords(catalog: Catalog, id: Id, body: ArrowBody, mode: "append" | "overwrite", branch?: string) {
  const entry = await catalog.resolve(id);
  if (!branch) {
    const created = await materialize(catalog, entry, body);
    if (created !== null) return { version: created, num_inserted_rows: body.rows };
  }
  const table = await catalog.writeHandle(entry, branch);
  if (mode === "append") checkWriteSchema(await catalog.schemaOf(table), body.schema, entry.objectId);
  // Appending no rows changes nothing, so it commits nothing: the answer is the version the table is at.
  if (mode === "append" && body.rows === 0) return { version: await engineCall("read the version", () => table.version()), num_inserted_rows: 0 };
  // Appended through a handle refreshed just before the commit, so that the version it reports is the append's own.
  const commit = async (file: Buffer) => {
    const target = await catalog.appendHandle(entry, branch);
    return (await engineCall("insert", () => target.add(file, mode), fromArrowWriteError)).version;
  };
  // A group of appends shares one turn; each commit in it checks on its own whether the table is still there.
  const version =
    mode === "append"
      ? await catalog.appends.append(
          `${entry.location}@${branch ?? "main"}`,
          body,
          (run) => catalog.turnOf(entry, run),
          (file) => catalog.unlessDropped(entry, () => commit(file)),
        )
      : await catalog.commitTo(entry, () => commit(body.file));
  return { version, num_inserted_rows: body.rows };
}

export interface MergeOptions {
  on: string[];
  whenMatchedUpdateAll: boolean;
  whenMatchedUpdateAllFilt?: string;
  whenNotMatchedInsertAll: boolean;
  whenNotMatchedBySourceDelete: boolean;
  whenNotMatchedBySourceDeleteFilt?: string;
  timeoutMs?: number;
  useIndex?: boolean;
  branch?: string;
}

export async function mergeInsert(catalog: Catalog, id: Id, body: ArrowBody, options: MergeOptions) {
  if (options.on.length === 0) throw invalidInput("merge_insert needs at least one 'on' column");
  const keyPaths = options.on.map((p) => ({ text: p, segments: requestedFieldPath(p, "invalid 'on' field path") }));
  const matched = options.whenMatchedUpdateAll || options.whenMatchedUpdateAllFilt !== undefined;
  const bySource = options.whenNotMatchedBySourceDelete || options.whenNotMatchedBySourceDeleteFilt !== undefined;
  if (!matched && !options.whenNotMatchedInsertAll && !bySource) {
    throw invalidInput(
      "merge_insert would change nothing: set when_matched_update_all, when_not_matched_insert_all or when_not_matched_by_source_delete (or a _filt expression)",
    );
  }
  const entry = await catalog.resolve(id);
  if (!options.branch) {
    const created = await materialize(catalog, entry, body);
    if (created !== null) return { version: created, num_inserted_rows: body.rows, num_updated_rows: 0, num_deleted_rows: 0 };
  }
  const table = await catalog.writeHandle(entry, options.branch);
  const schema = await catalog.schemaOf(table);
  checkWriteSchema(schema, body.schema, entry.objectId);
  const keys = keyPaths.map(({ text, segments }) => {
    const field = resolveField(schema.fields, segments);
    if (!field) throw new QuiverError("TableColumnNotFound", `merge key '${text}' does not name a column of table '${entry.objectId}'`);
    if (segments.length > 1) {
      throw unsupported(`merge key '${text}' is a nested field; the engine matches rows only on top-level columns`);
    }
    return segments[0];
  });
  // A source without rows can only delete (the target rows it does not match); otherwise nothing would change.
  if (body.rows === 0 && !bySource) {
    return {
      version: await engineCall("read the version", () => table.version()),
      num_inserted_rows: 0,
      num_updated_rows: 0,
      num_deleted_rows: 0,
      num_attempts: 0,
    };
  }
  let builder = table.mergeInsert(keys);
  if (matched) builder = builder.whenMatchedUpdateAll(options.whenMatchedUpdateAllFilt ?? null);
  if (options.whenNotMatchedInsertAll) builder = builder.whenNotMatchedInsertAll();
  if (bySource) builder = builder.whenNotMatchedBySourceDelete(options.whenNotMatchedBySourceDeleteFilt ?? null);
  if (options.useIndex !== undefined) builder = builder.useIndex(options.useIndex);
  if (options.timeoutMs !== undefined) builder.setTimeout(options.timeoutMs);
  const result = await catalog.commitTo(entry, () => engineCall("merge_insert", () => builder.execute(body.file), fromArrowWriteError));
  return {
    version: result.version,
    num_inserted_rows: result.numInsertedRows,
    num_updated_rows: result.numUpdatedRows,
    num_deleted_rows: result.numDeletedRows,
    num_attempts: result.numAttempts,
  };
}

interface FieldLike {
  name: string;
  type: { children?: FieldLike[] };
  metadata?: Map<string, string>;
}

function resolveField(fields: readonly FieldLike[] | Field[], segments: string[]): FieldLike | undefined {
  let current: readonly FieldLike[] = fields as readonly FieldLike[];
  let found: FieldLike | undefined;
  for (const segment of segments) {
    found = current.find((f) => f.name === segment);
    if (!found) return undefined;
    current = found.type.children ?? [];
  }
  return found;
}

export interface Alteration {
  path: string;
  rename?: string;
  nullable?: boolean;
  data_type?: unknown;
  virtual_column?: unknown;
}

export async function alterColumns(catalog: Catalog, id: Id, alterations: Alteration[], branch?: string) {
  if (alterations.length === 0) throw invalidInput("alterations must list at least one change");
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, "have its columns altered");
  const table = await catalog.writeHandle(entry, branch);
  const schema = await catalog.schemaOf(table);
  const native = alterations.map((a, i) => {
    if (a.virtual_column !== undefined && a.virtual_column !== null) {
      throw unsupported(`alterations[${i}]: virtual columns are not supported by this service`);
    }
    if (a.rename === undefined && a.nullable === undefined && a.data_type === undefined) {
      throw invalidInput(`alterations[${i}] for '${a.path}' needs a rename, nullable or data_type`);
    }
    const segments = requestedFieldPath(a.path, `alterations[${i}]`);
    if (!resolveField(schema.fields, segments)) {
      throw new QuiverError("TableColumnNotFound", `column '${a.path}' does not exist in table '${entry.objectId}'`);
    }
    if (a.rename !== undefined && (a.rename.length === 0 || a.rename.includes("."))) {
      throw invalidInput(`alterations[${i}]: '${a.rename}' is not a valid column name`);
    }
    let dataType: string | undefined;
    if (a.data_type !== undefined && a.data_type !== null) {
      try {
        dataType = JSON.stringify(normalizeDataType(a.data_type));
      } catch (err) {
        throw invalidInput(`alterations[${i}]: ${(err as Error).message}`);
      }
    }
    return { path: formatFieldPath(segments), rename: a.rename, nullable: a.nullable, dataType };
  });
  return catalog.commitTo(entry, () => engineCall("alter columns", () => table.alterColumns(native)));
}

export interface FieldMetadataUpdate {
  path: string;
  /** A null value deletes the key. */
  metadata: Record<string, string | null>;
  replace?: boolean;
}

/** Sets, deletes or replaces fields' metadata; answers each updated field's metadata as it now is. */
export async function updateFieldMetadata(catalog: Catalog, id: Id, updates: FieldMetadataUpdate[], branch?: string) {
  if (updates.length === 0) throw invalidInput("updates must list at least one field");
  const { entry, table } = await dataHandle(catalog, id, "have field metadata updated", branch);
  const schema = await catalog.schemaOf(table);
  const paths = updates.map((u, i) => {
    const segments = requestedFieldPath(u.path, `updates[${i}]`);
    if (!resolveField(schema.fields, segments)) throw new QuiverError("TableColumnNotFound", `column '${u.path}' does not exist in table '${entry.objectId}'`);
    return segments;
  });
  const native = updates.map((u, i) => ({ path: formatFieldPath(paths[i]), metadata: u.metadata, replace: u.replace ?? false }));
  const result = await catalog.commitTo(entry, () => engineCall("update field metadata", () => table.updateFieldMetadata(native)));
  const after = await catalog.schemaOf(table);
  const fields = Object.fromEntries(updates.map((u, i) => [u.path, Object.fromEntries(resolveField(after.fields, paths[i])?.metadata ?? [])]));
  return { version: result.version, fields };
}

export async function restoreVersion(catalog: Catalog, id: Id, version: number, branch?: string) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, "be restored");
  const table = await catalog.readHandle(entry, { version, branch });
  await catalog.commitTo(entry, () => engineCall("restore", () => table.restore()));
  return { version: await table.version() };
}

// ---------------------------------------------------------------- reads

export async function countRows(catalog: Catalog, id: Id, predicate: string | undefined, at: ReadAt) {
  const entry = await catalog.resolve(id);
  if (await catalog.isDeclaredOnly(entry)) {
    if (at.version !== undefined || at.tag !== undefined) throw new QuiverError("TableVersionNotFound", `Table '${entry.objectId}' has no versions yet`);
    return 0;
  }
  const table = await catalog.readHandle(entry, at);
  return engineCall("count rows", () => table.countRows(predicate || null));
}

export interface QueryOptions extends ReadAt {
  filter?: string;
  columns?: string[];
  /** Output name to SQL expression. */
  aliases?: Record<string, string>;
  limit: number;
  offset?: number;
  withRowId?: boolean;
  vector?: number[];
  vectorColumn?: string;
  distanceType?: string;
  nprobes?: number;
  minimumNprobes?: number;
  maximumNprobes?: number;
  distanceRange?: { lower?: number; upper?: number };
  refineFactor?: number;
  ef?: number;
  bypassVectorIndex?: boolean;
  postfilter?: boolean;
  fastSearch?: boolean;
  /** A query string over the given columns (all indexed ones when none), or a structured query. */
  fullText?: { query: string; columns?: string[] } | { structured: FullTextQuery };
  orderBy?: Array<{ columnName: string; ascending: boolean; nullsFirst: boolean }>;
}

/** The engine's query for the options; its setters check their arguments (a distance type, say) as it runs. */
function buildQuery(table: NativeTable, options: QueryOptions) {
  const base = table.query();
  const query = options.vector && options.vector.length ? base.nearestTo(Float32Array.from(options.vector)) : base;
  if (options.fullText && "structured" in options.fullText) query.fullTextSearch({ query: options.fullText.structured.inner });
  else if (options.fullText) query.fullTextSearch({ query: options.fullText.query, columns: options.fullText.columns ?? null });
  if (options.filter) query.onlyIf(options.filter);
  if (options.aliases) {
    // Named columns beside aliased expressions: each column is its own expression, quoted as a field path.
    const named = (options.columns ?? []).map((c): [string, string] => [c, `\`${c.replace(/`/g, "``")}\``]);
    query.select([...named, ...Object.entries(options.aliases)]);
  } else if (options.columns) query.selectColumns(options.columns);
  query.limit(options.limit);
  if (options.offset) query.offset(options.offset);
  if (options.withRowId) query.withRowId();
  if (options.fastSearch) query.fastSearch();
  if (options.orderBy?.length) query.orderBy(options.orderBy);
  if (query !== base) {
    const vq = query as NativeVectorQuery;
    if (options.vectorColumn) vq.column(options.vectorColumn);
    if (options.distanceType) vq.distanceType(options.distanceType);
    if (options.nprobes) vq.nprobes(options.nprobes);
    if (options.minimumNprobes) vq.minimumNprobes(options.minimumNprobes);
    if (options.maximumNprobes) vq.maximumNprobes(options.maximumNprobes);
    if (options.distanceRange) vq.distanceRange(options.distanceRange.lower ?? null, options.distanceRange.upper ?? null);
    if (options.refineFactor) vq.refineFactor(options.refineFactor);
    if (options.ef) vq.ef(options.ef);
    if (options.bypassVectorIndex) vq.bypassVectorIndex();
    if (options.postfilter) vq.postfilter();
  } else if (options.distanceRange || options.minimumNprobes || options.maximumNprobes || options.nprobes || options.refineFactor || options.ef) {
    throw invalidInput("nprobes, distance bounds, refine_factor and ef apply to a vector search; the query has no vector");
  }
  return query;
}

async function queryOn(catalog: Catalog, id: Id, options: QueryOptions) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, "be queried");
  const table = await catalog.readHandle(entry, options);
  return engineCall("query", async () => buildQuery(table, options));
}

/** Runs a query and answers an Arrow IPC file. */
export async function queryTable(catalog: Catalog, id: Id, options: QueryOptions): Promise<Buffer> {
  const query = await queryOn(catalog, id, options);
  return engineCall("query", async () => {
    const iterator = await query.execute();
    const batches: Buffer[] = [];
    for (let b = await iterator.next(); b; b = await iterator.next()) batches.push(b);
    return joinIpcFiles(await query.outputSchema(), batches);
  });
}

/** The engine's plan for a query, without running it (`verbose` adds each operator's details). */
export async function explainQuery(catalog: Catalog, id: Id, options: QueryOptions, verbose: boolean): Promise<string> {
  const query = await queryOn(catalog, id, options);
  return engineCall("explain the query", () => query.explainPlan(verbose));
}

/** Runs a query and answers its plan with what each operator did (rows, time), not its rows. */
export async function analyzeQuery(catalog: Catalog, id: Id, options: QueryOptions): Promise<string> {
  const query = await queryOn(catalog, id, options);
  return engineCall("analyze the query", () => query.analyzePlan());
}

// ---------------------------------------------------------------- tags

async function tagsOf(catalog: Catalog, id: Id, branch?: string) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, "have tags");
  const table: NativeTable = await catalog.writeHandle(entry, branch);
  return { entry, tags: await engineCall("read tags", () => table.tags()) };
}

export async function listTags(catalog: Catalog, id: Id, options: { pageToken?: string; limit: number }) {
  const entry = await catalog.resolve(id);
  if (await catalog.isDeclaredOnly(entry)) return { tags: {}, page_token: undefined };
  const { tags } = await tagsOf(catalog, id);
  const all = await engineCall("list tags", () => tags.list());
  const page = await pageOf(Object.keys(all).sort(), options.pageToken, options.limit);
  const refs = await readTagRefs(catalog.store, entry.location, page.items);
  const out: Record<string, { version: number; manifestSize: number; branch: string | null }> = {};
  for (const name of page.items) out[name] = { version: all[name].version, manifestSize: all[name].manifestSize, branch: refs.get(name)?.branch ?? null };
  return { tags: out, page_token: page.pageToken };
}

export async function tagVersion(catalog: Catalog, id: Id, tag: string, branch?: string) {
  const { entry, tags } = await tagsOf(catalog, id, branch);
  const version = await tags.getVersion(tag).catch(() => {
    throw new QuiverError("TableTagNotFound", `tag '${tag}' does not exist on table '${entry.objectId}'`);
  });
  const refs = await readTagRefs(catalog.store, entry.location, [tag]);
  return { version, branch: refs.get(tag)?.branch ?? null };
}

async function requireVersion(catalog: Catalog, entry: TableEntry, version: number, branch?: string) {
  await catalog.readHandle(entry, { version, branch });
}

export async function createTag(catalog: Catalog, id: Id, tag: string, version: number, branch?: string) {
  const { entry, tags } = await tagsOf(catalog, id, branch);
  await requireVersion(catalog, entry, version, branch);
  await catalog.commitTo(entry, () => engineCall(`create tag '${tag}'`, () => tags.create(tag, version)));
  return {};
}

export async function updateTag(catalog: Catalog, id: Id, tag: string, version: number, branch?: string) {
  const { entry, tags } = await tagsOf(catalog, id, branch);
  const all = await engineCall("list tags", () => tags.list());
  if (!(tag in all)) throw new QuiverError("TableTagNotFound", `tag '${tag}' does not exist on table '${entry.objectId}'`);
  await requireVersion(catalog, entry, version, branch);
  await catalog.commitTo(entry, () => engineCall(`update tag '${tag}'`, () => tags.update(tag, version)));
  return {};
}

export async function deleteTag(catalog: Catalog, id: Id, tag: string, branch?: string) {
  const { entry, tags } = await tagsOf(catalog, id, branch);
  const all = await engineCall("list tags", () => tags.list());
  if (!(tag in all)) throw new QuiverError("TableTagNotFound", `tag '${tag}' does not exist on table '${entry.objectId}'`);
  await catalog.commitTo(entry, () => engineCall(`delete tag '${tag}'`, () => tags.delete(tag)));
  return {};
}

// ---------------------------------------------------------------- branches

async function branchesOf(catalog: Catalog, id: Id) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, "have branches");
  const table = await catalog.writeHandle(entry);
  return { entry, branches: await engineCall("read branches", () => table.branches()) };
}

export async function listBranches(catalog: Catalog, id: Id, options: { pageToken?: string; limit: number }) {
  const { entry, branches } = await branchesOf(catalog, id);
  const all = await engineCall("list branches", () => branches.list());
  const page = await pageOf(Object.keys(all).sort(), options.pageToken, options.limit);
  const refs = await readBranchRefs(catalog.store, entry.location, page.items);
  return {
    branches: Object.fromEntries(
      page.items.map((name) => {
        const b = all[name];
        const ref = refs.get(name);
        return [
          name,
          {
            parentBranch: b.parentBranch ?? null,
            parentVersion: b.parentVersion,
            createAt: ref?.createAt ?? 0,
            manifestSize: b.manifestSize,
            metadata: ref?.metadata ?? {},
          },
        ];
      }),
    ),
    page_token: page.pageToken,
  };
}

/**
 * Lance's rule for branch names: `/`-separated segments of letters, digits, `.`, `-` and `_`, with no `..`. It is
 * checked here because the engine writes a new branch's files under `tree/<name>` before it checks the name.
 */
const BRANCH_SEGMENT = /^[\p{Alphabetic}\p{N}._-]+$/u;

function branchNameProblem(name: string): string | null {
  if (name.includes("..")) return "it contains '..'";
  const bad = name.split("/").find((segment) => segment === "." || !BRANCH_SEGMENT.test(segment));
  if (bad === undefined) return null;
  return bad === "" ? "it has an empty segment (a leading, trailing or doubled '/')" : `segment '${bad}' is not letters, digits, '.', '-' and '_'`;
}

export async function createBranch(catalog: Catalog, id: Id, name: string, fromBranch?: string, fromVersion?: number) {
  const problem = branchNameProblem(name);
  if (problem) throw invalidInput(`'${name}' is not a valid branch name: ${problem}`);
  const { entry, branches } = await branchesOf(catalog, id);
  const all = await engineCall("list branches", () => branches.list());
  if (name === "main" || name in all) throw new QuiverError("TableBranchAlreadyExists", `branch '${name}' already exists on table '${entry.objectId}'`);
  if (fromBranch && fromBranch !== "main" && !(fromBranch in all)) throw new QuiverError("TableBranchNotFound", `branch '${fromBranch}' does not exist`);
  if (fromVersion !== undefined) await requireVersion(catalog, entry, fromVersion, fromBranch);
  const created = await catalog.commitTo(entry, () =>
    engineCall(`create branch '${name}'`, () => branches.create(name, fromBranch && fromBranch !== "main" ? fromBranch : null, fromVersion ?? null)),
  );
  return { version: await created.version() };
}

export async function deleteBranch(catalog: Catalog, id: Id, name: string) {
  const { entry, branches } = await branchesOf(catalog, id);
  const all = await engineCall("list branches", () => branches.list());
  if (!(name in all)) throw new QuiverError("TableBranchNotFound", `branch '${name}' does not exist on table '${entry.objectId}'`);
  await catalog.commitTo(entry, () => engineCall(`delete branch '${name}'`, () => branches.delete(name)));
  return {};
}

// ---------------------------------------------------------------- schema and data maintenance (LanceDB's remote API)

async function dataHandle(catalog: Catalog, id: Id, what: string, branch?: string) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, what);
  return { entry, table: await catalog.writeHandle(entry, branch) };
}

export async function addColumns(catalog: Catalog, id: Id, columns: Array<{ name: string; expression: string }>, branch?: string) {
  if (columns.length === 0) throw invalidInput("new_columns must list at least one column");
  const { entry, table } = await dataHandle(catalog, id, "have columns added", branch);
  return catalog.commitTo(entry, () => engineCall("add columns", () => table.addColumns(columns.map((c) => ({ name: c.name, valueSql: c.expression })))));
}

export async function dropColumns(catalog: Catalog, id: Id, columns: string[], branch?: string) {
  if (columns.length === 0) throw invalidInput("columns must list at least one column");
  const { entry, table } = await dataHandle(catalog, id, "have columns dropped", branch);
  const schema = await catalog.schemaOf(table);
  for (const c of columns) {
    if (!resolveField(schema.fields, requestedFieldPath(c, "columns")))
      throw new QuiverError("TableColumnNotFound", `column '${c}' does not exist in table '${entry.objectId}'`);
  }
  return catalog.commitTo(entry, () => engineCall("drop columns", () => table.dropColumns(columns)));
}

export async function updateRows(catalog: Catalog, id: Id, predicate: string | undefined, updates: Array<[string, string]>, branch?: string) {
  if (updates.length === 0) throw invalidInput("updates must list at least one [column, expression] pair");
  const { entry, table } = await dataHandle(catalog, id, "be updated", branch);
  const result = await catalog.commitTo(entry, () => engineCall("update", () => table.update(predicate ?? null, updates)));
  return { version: result.version, updated_rows: result.rowsUpdated, rows_updated: result.rowsUpdated };
}

export async function deleteRows(catalog: Catalog, id: Id, predicate: string, branch?: string) {
  const { entry, table } = await dataHandle(catalog, id, "have rows deleted", branch);
  const result = await catalog.commitTo(entry, () => engineCall("delete", () => table.delete(predicate)));
  return { version: result.version, num_deleted_rows: result.numDeletedRows };
}

export async function tableStats(catalog: Catalog, id: Id, branch?: string) {
  const { table } = await dataHandle(catalog, id, "report statistics", branch);
  const s = await engineCall("read table statistics", () => table.stats());
  return {
    total_bytes: s.totalBytes,
    num_rows: s.numRows,
    num_indices: s.numIndices,
    fragment_stats: { num_fragments: s.fragmentStats.numFragments, num_small_fragments: s.fragmentStats.numSmallFragments, lengths: s.fragmentStats.lengths },
  };
}

export async function listIndices(catalog: Catalog, id: Id, at: ReadAt = {}) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, "have indices");
  const table = await catalog.readHandle(entry, at);
  const indices = await engineCall("list indices", () => table.listIndices());
  return indices
    .map((i) => ({
      index_name: i.name,
      index_uuid: i.indexUuid ?? "",
      index_type: i.indexType,
      columns: i.columns,
      status: "done",
      num_indexed_rows: i.numIndexedRows,
      num_unindexed_rows: i.numUnindexedRows,
      size_bytes: i.sizeBytes,
      created_at: i.createdAt?.toISOString(),
    }))
    .sort((a, b) => compare(a.index_name, b.index_name));
}

export async function indexStats(catalog: Catalog, id: Id, name: string, at: ReadAt = {}) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, "have indices");
  const table = await catalog.readHandle(entry, at);
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

export async function dropIndex(catalog: Catalog, id: Id, name: string, branch?: string) {
  const { entry, table } = await dataHandle(catalog, id, "have indices", branch);
  const known = await engineCall("list indices", () => table.listIndices());
  if (!known.some((i) => i.name === name)) throw new QuiverError("TableIndexNotFound", `table '${entry.objectId}' has no index named '${name}'`);
  await catalog.commitTo(entry, () => engineCall("drop index", () => table.dropIndex(name)));
  return {};
}

export async function createIndex(
  catalog: Catalog,
  id: Id,
  options: { column: string; indexType: string; name?: string; replace?: boolean; branch?: string; scalarOnly?: boolean; settings: IndexOptions },
) {
  const config = indexConfig(options.indexType, options.settings, options.scalarOnly);
  const { entry, table } = await dataHandle(catalog, id, "be indexed", options.branch);
  const schema = await catalog.schemaOf(table);
  if (!resolveField(schema.fields, requestedFieldPath(options.column, "column")))
    throw new QuiverError("TableColumnNotFound", `column '${options.column}' does not exist in table '${entry.objectId}'`);
  await catalog.commitTo(entry, () =>
    engineCall("create index", () => table.createIndex(config, options.column, options.replace ?? true, null, options.name ?? null)).catch((err) => {
      if (err instanceof QuiverError && err.codeName === "TableAlreadyExists") throw new QuiverError("TableIndexAlreadyExists", err.message);
      throw err;
    }),
  );
  return {};
}
