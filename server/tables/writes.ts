/**
 * Writes to one table: insert, merge-insert, update and delete rows, add, alter and drop columns, field metadata,
 * restore. Each commits one version (or none for an empty batch) and answers it.
 */
import "server-only";
import type { Schema } from "apache-arrow";
import { normalizeDataType } from "@/lib/arrow-schema";
import { formatFieldPath } from "@/lib/field-path";
import { QuiverError, fromArrowWriteError, invalidInput, unsupported } from "@/server/errors";
import { type ArrowBody } from "@/server/lance/arrow-ipc";
import { engineCall } from "@/server/lance/native";
import { checkWriteSchema } from "./schema-check";
import type { Id } from "@/server/catalog/catalog";
import type { TableEntry } from "@/server/catalog/catalog-table";
import type { NativeTable } from "@/server/lance/native";
import { existingColumn, requestedFieldPath, resolveField } from "./fields";
import { schemaMetadataCommit, schemaMetadataOf } from "@/server/lance/schema-metadata-commit";
import type { Tables } from "./tables";
import { allLanded, currentWrite } from "./write-ledger";
import { deletesBySource, mergeProblem, updatesMatched, type MergeChoices } from "@/lib/merge-insert";

/**
 * Where a write to the main branch goes: the table, the version that one look at the store (overlapping the tables's
 * check) found as the latest, and the handle to commit through. The handle may be behind that version (another worker
 * or instance committed since): it catches up in the write's turn (`Tables.turnHandle`), so that the write does not
 * wait for a turn twice. A declared table's first write creates it instead, and is answered as `created`; when a
 * concurrent first write won, this one writes to what that made.
 */
async function writeTarget(
  tables: Tables,
  id: Id,
  body: ArrowBody,
): Promise<{ entry: TableEntry } & ({ table: NativeTable; seen: number } | { created: number })> {
  const ticket = currentWrite.getStore();
  // A write known by its body leaves its marker among such writes beside this look, so that its turn holds its claim alone.
  const [{ entry, value: latest }] = await allLanded([
    tables.resolveWith(id, (e) => tables.latestManifest(e)),
    ticket && tables.ledger.lookForSameBody(ticket),
  ] as const);
  const seen = latest?.version ?? 0;
  // What the write commits lies above the version it found: its claim in the ledger says so, at no further look.
  if (ticket) {
    ticket.seen = seen;
    ticket.seenEtag = latest?.etag ?? null;
  }
  if (latest === null) {
    const created = await tables.writeFirstVersion(entry, body);
    if (created !== null) return { entry, created };
  }
  return { entry, table: await tables.commitHandle(entry), seen };
}

/**
 * Runs a write's checks of its body against the table's schema before its turn, on a handle that may be behind the
 * version the write found. Only when they fail on a handle that is behind is it caught up (in a turn of its own) and
 * are they run again: the schema may have changed since.
 */
async function checkedAtLatest<T>(tables: Tables, entry: TableEntry, table: NativeTable, seen: number, check: (schema: Schema) => T): Promise<T> {
  try {
    return check(await tables.schemaOf(table));
  } catch (err) {
    if ((await engineCall("read the version", () => table.version())) >= seen) throw err;
    return check(await tables.schemaOf(await tables.caughtUpHandle(entry, seen)));
  }
}

/** The version a write that commits nothing answers: the table's, as the handle or the write's look found it. */
export const versionNow = async (table: NativeTable, seen = 0) => Math.max(seen, await engineCall("read the version", () => table.version()));

export async function insertRecords(tables: Tables, id: Id, body: ArrowBody, mode: "append" | "overwrite", branch?: string) {
  if (branch) return insertIntoBranch(tables, id, body, mode, branch);
  const target = await writeTarget(tables, id, body);
  if ("created" in target) return { version: target.created, num_inserted_rows: body.rows };
  const { entry, table, seen } = target;
  if (mode === "append") await checkedAtLatest(tables, entry, table, seen, (schema) => checkWriteSchema(schema, body.schema, entry.objectId));
  // Appending no rows changes nothing, so it commits nothing: the answer is the version the table is at.
  if (mode === "append" && body.rows === 0) return { version: await versionNow(table, seen), num_inserted_rows: 0 };
  const commit = async (file: Buffer, stamp: string) => {
    const handle = await tables.turnHandle(entry, stamp, seen);
    return (await engineCall("insert", () => handle.add(file, mode), fromArrowWriteError)).version;
  };
  const version =
    mode === "append" ? await tables.append(entry, "main", body, commit) : await tables.commitTo(entry, (stamp) => commit(body.file, stamp), { guarded: true });
  return { version, num_inserted_rows: body.rows };
}

async function insertIntoBranch(tables: Tables, id: Id, body: ArrowBody, mode: "append" | "overwrite", branch: string) {
  const entry = await tables.resolve(id);
  const table = await tables.writeHandle(entry, branch);
  if (mode === "append") checkWriteSchema(await tables.schemaOf(table), body.schema, entry.objectId);
  if (mode === "append" && body.rows === 0) return { version: await engineCall("read the version", () => table.version()), num_inserted_rows: 0 };
  // Appended through a handle refreshed just before the commit, so that the version it reports is the append's own.
  const commit = async (file: Buffer) => {
    const target = await tables.branchAppendHandle(entry, branch);
    return (await engineCall("insert", () => target.add(file, mode), fromArrowWriteError)).version;
  };
  const version =
    mode === "append" ? await tables.append(entry, branch, body, commit) : await tables.commitTo(entry, () => commit(body.file), { guarded: true });
  return { version, num_inserted_rows: body.rows };
}

export interface MergeOptions extends MergeChoices {
  timeoutMs?: number;
  useIndex?: boolean;
  branch?: string;
}

export async function mergeInsert(tables: Tables, id: Id, body: ArrowBody, options: MergeOptions) {
  const problem = mergeProblem(options);
  if (problem) throw invalidInput(problem);
  const matched = updatesMatched(options);
  const bySource = deletesBySource(options);
  const keyPaths = options.on.map((p) => ({ text: p, segments: requestedFieldPath(p, "invalid 'on' field path") }));
  let entry: TableEntry;
  let table: NativeTable;
  let seen = 0;
  if (options.branch) {
    entry = await tables.resolve(id);
    table = await tables.writeHandle(entry, options.branch);
  } else {
    const target = await writeTarget(tables, id, body);
    if ("created" in target) return { version: target.created, num_inserted_rows: body.rows, num_updated_rows: 0, num_deleted_rows: 0 };
    ({ entry, table, seen } = target);
  }
  const keys = await checkedAtLatest(tables, entry, table, seen, (schema) => {
    checkWriteSchema(schema, body.schema, entry.objectId);
    return keyPaths.map(({ text, segments }) => {
      const field = resolveField(schema.fields, segments);
      if (!field) throw new QuiverError("TableColumnNotFound", `merge key '${text}' does not name a column of table '${entry.objectId}'`);
      if (segments.length > 1) {
        throw unsupported(`merge key '${text}' is a nested field; the engine matches rows only on top-level columns`);
      }
      return segments[0];
    });
  });
  // A source without rows can only delete (the target rows it does not match); otherwise nothing would change.
  if (body.rows === 0 && !bySource) {
    return {
      version: await versionNow(table, seen),
      num_inserted_rows: 0,
      num_updated_rows: 0,
      num_deleted_rows: 0,
      num_attempts: 0,
    };
  }
  const merge = (target: NativeTable) => {
    let builder = target.mergeInsert(keys);
    if (matched) builder = builder.whenMatchedUpdateAll(options.whenMatchedUpdateAllFilt ?? null);
    if (options.whenNotMatchedInsertAll) builder = builder.whenNotMatchedInsertAll();
    if (bySource) builder = builder.whenNotMatchedBySourceDelete(options.whenNotMatchedBySourceDeleteFilt ?? null);
    if (options.useIndex !== undefined) builder = builder.useIndex(options.useIndex);
    if (options.timeoutMs !== undefined) builder.setTimeout(options.timeoutMs);
    return builder.execute(body.file);
  };
  const result = await tables.guardedCommit(entry, options.branch, seen, (target) => engineCall("merge_insert", () => merge(target), fromArrowWriteError));
  return {
    version: result.version,
    num_inserted_rows: result.numInsertedRows,
    num_updated_rows: result.numUpdatedRows,
    num_deleted_rows: result.numDeletedRows,
    num_attempts: result.numAttempts,
  };
}

export interface Alteration {
  path: string;
  rename?: string;
  nullable?: boolean;
  data_type?: unknown;
}

export async function alterColumns(tables: Tables, id: Id, alterations: Alteration[], branch?: string) {
  if (alterations.length === 0) throw invalidInput("alterations must list at least one change");
  const { entry, table } = await tables.dataHandle(id, "have its columns altered", branch);
  const schema = await tables.schemaOf(table);
  const native = alterations.map((a, i) => {
    if (a.rename === undefined && a.nullable === undefined && a.data_type === undefined) {
      throw invalidInput(`alterations[${i}] for '${a.path}' needs a rename, nullable or data_type`);
    }
    const segments = existingColumn(schema.fields, a.path, `alterations[${i}]`, entry.objectId);
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
  return tables.guardedCommit(entry, branch, await versionNow(table), (target) => engineCall("alter columns", () => target.alterColumns(native)));
}

export interface FieldMetadataUpdate {
  path: string;
  /** A null value deletes the key. */
  metadata: Record<string, string | null>;
  replace?: boolean;
}

/** Sets, deletes or replaces fields' metadata; answers each updated field's metadata as it now is. */
export async function updateFieldMetadata(tables: Tables, id: Id, updates: FieldMetadataUpdate[], branch?: string) {
  if (updates.length === 0) throw invalidInput("updates must list at least one field");
  const { entry, table } = await tables.dataHandle(id, "have field metadata updated", branch);
  const schema = await tables.schemaOf(table);
  const paths = updates.map((u, i) => existingColumn(schema.fields, u.path, `updates[${i}]`, entry.objectId));
  const native = updates.map((u, i) => ({ path: formatFieldPath(paths[i]), metadata: u.metadata, replace: u.replace ?? false }));
  const result = await tables.guardedCommit(entry, branch, await versionNow(table), (target) =>
    engineCall("update field metadata", () => target.updateFieldMetadata(native)),
  );
  return { version: result.version, fields: metadataOf(await tables.schemaOf(table), updates, paths) };
}

/** Each updated field's metadata in a schema. */
const metadataOf = (schema: Schema, updates: Array<{ path: string }>, paths: string[][]) =>
  Object.fromEntries(updates.map((u, i) => [u.path, Object.fromEntries(resolveField(schema.fields, paths[i])?.metadata ?? [])]));

/** What UpdateFieldMetadata answered for a version it made: each field's metadata at that version. */
export async function fieldMetadataAt(tables: Tables, id: Id, updates: Array<{ path: string }>, version: number, branch?: string) {
  const { entry, table } = await tables.dataAt(id, "have field metadata read", { version, branch });
  const schema = await tables.schemaOf(table);
  const paths = updates.map((u, i) => existingColumn(schema.fields, u.path, `updates[${i}]`, entry.objectId));
  return { version, fields: metadataOf(schema, updates, paths) };
}

/** Tries before a schema metadata change gives up on writers that keep committing first. */
const SCHEMA_METADATA_ATTEMPTS = 10;

/**
 * Sets keys of the schema's metadata (UpdateTableSchemaMetadata) in a new version, and answers the whole metadata.
 * The engine cannot write schema metadata, so the version is committed as Lance commits one: its manifest is written
 * only where none of that version exists, and when another writer committed first, the change is made again on top
 * of the newest version. No keys, no version (`version` null).
 */
export async function updateSchemaMetadata(tables: Tables, id: Id, changes: Record<string, string>, branch?: string) {
  const { entry } = await tables.dataHandle(id, "have its schema metadata updated", branch);
  const files = tables.filesOf(entry);
  const directory = files.directoryOf(branch);
  /** The newest manifest's bytes, or null when a cleanup removed it between the listing and the read. */
  const latest = async () => {
    const found = await files.latestManifest(directory);
    if (found && !found.v2)
      throw unsupported(`table '${entry.objectId}' names its versions in Lance's V1 scheme, to which this service commits nothing itself`);
    return found && files.read(found.key);
  };
  const changing = () => new QuiverError("ConcurrentModification", `table '${entry.objectId}' kept changing while its schema metadata was updated; try again`);
  /** What the latest manifest says; one this service cannot read is the table's state, not a fault of the request. */
  const parsed = <T>(read: () => T): T => {
    try {
      return read();
    } catch (err) {
      throw new QuiverError(
        "InvalidTableState",
        `the latest manifest of table '${entry.objectId}' cannot be read: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  };
  if (Object.keys(changes).length === 0) {
    const manifest = await latest();
    if (!manifest) throw changing();
    return { metadata: parsed(() => schemaMetadataOf(manifest).metadata), version: null };
  }
  // Written by this service, not the engine: its manifest names the request and passes its guard all the same.
  const write = async () => {
    for (let attempt = 0; attempt < SCHEMA_METADATA_ATTEMPTS; attempt++) {
      const manifest = await latest();
      if (!manifest) continue;
      const next = parsed(() => schemaMetadataCommit(manifest, changes));
      if (next.transactionFile) await files.create(`${directory}/_transactions/${next.transactionFile}`, next.transaction);
      const published = await tables.guardedManifest(files, directory, next.version, next.manifest);
      if (await files.publishManifest(directory, next.version, true, published)) {
        await files.hintLatest(directory, next.version);
        return { metadata: next.metadata, version: next.version };
      }
    }
    throw changing();
  };
  return tables.commitTo(entry, write, { guarded: true });
}

export async function restoreVersion(tables: Tables, id: Id, version: number, branch?: string) {
  // The version is checked first, on a handle of its own; the restore commits through the commit handle.
  const { entry } = await tables.dataAt(id, "be restored", { version, branch });
  const restored = await tables.guardedCommit(entry, branch, 0, async (target) => {
    try {
      await engineCall("restore", () => target.checkout(version));
      await engineCall("restore", () => target.restore());
    } catch (err) {
      // The commit handle goes back to the latest version, for the commits after this one.
      await target.checkoutLatest().catch(() => undefined);
      throw err;
    }
    return engineCall("read the version", () => target.version());
  });
  return { version: restored };
}

export async function addColumns(tables: Tables, id: Id, columns: Array<{ name: string; expression: string }>, branch?: string) {
  if (columns.length === 0) throw invalidInput("new_columns must list at least one column");
  const { entry, table } = await tables.dataHandle(id, "have columns added", branch);
  return tables.guardedCommit(entry, branch, await versionNow(table), (target) =>
    engineCall("add columns", () => target.addColumns(columns.map((c) => ({ name: c.name, valueSql: c.expression })))),
  );
}

export async function dropColumns(tables: Tables, id: Id, columns: string[], branch?: string) {
  if (columns.length === 0) throw invalidInput("columns must list at least one column");
  const { entry, table } = await tables.dataHandle(id, "have columns dropped", branch);
  const schema = await tables.schemaOf(table);
  for (const c of columns) existingColumn(schema.fields, c, "columns", entry.objectId);
  return tables.guardedCommit(entry, branch, await versionNow(table), (target) => engineCall("drop columns", () => target.dropColumns(columns)));
}

export async function updateRows(tables: Tables, id: Id, predicate: string | undefined, updates: Array<[string, string]>, branch?: string) {
  if (updates.length === 0) throw invalidInput("updates must list at least one [column, expression] pair");
  const { entry, table } = await tables.dataHandle(id, "be updated", branch);
  const result = await tables.guardedCommit(entry, branch, await versionNow(table), (target) =>
    engineCall("update", () => target.update(predicate ?? null, updates)),
  );
  return { version: result.version, updated_rows: result.rowsUpdated, rows_updated: result.rowsUpdated, properties: entry.properties };
}

export async function deleteRows(tables: Tables, id: Id, predicate: string, branch?: string) {
  const { entry, table } = await tables.dataHandle(id, "have rows deleted", branch);
  const result = await tables.guardedCommit(entry, branch, await versionNow(table), (target) => engineCall("delete", () => target.delete(predicate)));
  return { version: result.version, num_deleted_rows: result.numDeletedRows };
}
