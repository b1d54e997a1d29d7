/**
 * What changed between two versions of a table: its schema, and its rows. Every table says how many rows each
 * version held and how many were written into new fragments or taken out (from the two manifests); a table written
 * with stable row ids also says which rows were inserted, updated and deleted, and gives them, since the engine
 * records on each row the version that made it and the one that last changed it.
 */
import "server-only";
import { diffSchemas } from "@/lib/schema-diff";
import { STABLE_ROW_IDS } from "@/lib/contract/catalog";
import { QuiverError, invalidInput } from "@/server/errors";
import { fragmentsIn } from "@/server/lance/version-changes";
import { COMPACTION_OPERATIONS } from "@/server/lance/version-operations";
import type { Id, ReadAt } from "@/server/catalog/catalog";
import { countRows, queryTable } from "./queries";
import { joinIdentifier } from "@/lib/identifiers";
import type { Tables } from "./tables";

export interface ChangeEnds {
  /** The earlier end; the version before `to` when absent. */
  from?: ReadAt;
  /** The later end; the latest version when absent. */
  to: ReadAt;
}

/** The rows a version range inserted, and those it changed that were there before it. */
export const insertedFilter = (from: number) => `_row_created_at_version > ${from}`;
export const updatedFilter = (from: number) => `_row_created_at_version <= ${from} AND _row_last_updated_at_version > ${from}`;

async function resolved(tables: Tables, id: Id, ends: ChangeEnds) {
  const to = await tables.describe(id, ends.to);
  if (to.declaredOnly || to.version === undefined || !to.schema)
    throw new QuiverError("TableVersionNotFound", `Table '${joinIdentifier(id)}' has no versions yet`);
  const fromAt = ends.from ?? { version: to.version - 1 };
  if (fromAt.version === 0) return { to, from: null };
  const from = await tables.describe(id, fromAt);
  if (from.version === undefined || !from.schema)
    throw new QuiverError("TableVersionNotFound", `the earlier version of table '${joinIdentifier(id)}' does not exist`);
  if (from.version > to.version) throw invalidInput(`from (version ${from.version}) comes after to (version ${to.version}): name the earlier version first`);
  return { to, from };
}

/** The versions of a range whose steps are read one by one; a longer range is told from its two ends. */
const STEPS_READ = 200;

/** Reads the manifests of a table's versions (of main): what each says, its fragments' live rows, and what made it. */
async function manifestsOf(tables: Tables, id: Id) {
  const entry = await tables.resolve(id);
  const files = tables.filesOf(entry);
  const { sources } = await files.versions(files.directoryOf());
  const sourceOf = (version: number) => {
    const source = sources.get(version);
    if (!source) throw new QuiverError("TableVersionNotFound", `version ${version} of table '${entry.objectId}' does not exist (cleaned up?)`);
    return source;
  };
  const read = async (version: number) => {
    const made = await files.manifest(version, sourceOf(version));
    const content = await files.read(made.file.key);
    if (!content) throw new QuiverError("ServiceUnavailable", `version ${version} of table '${entry.objectId}' went away while it was read; try again`);
    return { made, summary: made.summary, fragments: new Map(fragmentsIn(content).map((f) => [f.id, f.liveRows])) };
  };
  const operation = async (version: number, manifest: Awaited<ReturnType<typeof read>>) =>
    files.operation(version, sourceOf(version), manifest.made, sources.get(version - 1));
  return { read, operation };
}

type Manifest = Awaited<ReturnType<Awaited<ReturnType<typeof manifestsOf>>["read"]>>;
const rowsOf = (m: Manifest) => Number(m.summary.metadata.total_rows ?? 0);

/** Rows in the later manifest's fragments that the earlier one lacks (written), and rows of the earlier one's gone (removed). */
function fragmentDiff(before: Manifest | null, after: Manifest) {
  let written = 0;
  let removed = 0;
  for (const [fragment, rows] of after.fragments) if (!before?.fragments.has(fragment)) written += rows;
  for (const [fragment, rows] of before?.fragments ?? []) removed += Math.max(0, rows - (after.fragments.get(fragment) ?? 0));
  return { written, removed };
}

/**
 * What the range's versions did, one by one: each version's operation and row count, and the rows written into new
 * fragments or taken out by the versions that changed data. A compaction moves rows into new files without changing
 * any, so it counts for neither. A range longer than STEPS_READ versions is told from its two ends only.
 */
async function versionSteps(tables: Tables, id: Id, fromVersion: number | null, toVersion: number) {
  const { read, operation } = await manifestsOf(tables, id);
  const first = (fromVersion ?? 0) + 1;
  const [start, end] = await Promise.all([fromVersion === null ? null : read(fromVersion), read(toVersion)]);
  const ends = { rowsBefore: start ? rowsOf(start) : 0, rowsAfter: rowsOf(end), stableRowIds: end.summary.stableRowIds };
  if (toVersion - first + 1 > STEPS_READ) return { ...ends, ...fragmentDiff(start, end), steps: null };
  const manifests = await Promise.all(Array.from({ length: toVersion - first }, (_, k) => read(first + k)));
  manifests.push(end);
  let written = 0;
  let removed = 0;
  const steps = await Promise.all(
    manifests.map(async (after, k) => {
      const before = k === 0 ? start : manifests[k - 1];
      const version = first + k;
      const done = await operation(version, after);
      const compaction = done !== null && COMPACTION_OPERATIONS.has(done.operation);
      if (!compaction) {
        const diff = fragmentDiff(before, after);
        written += diff.written;
        removed += diff.removed;
      }
      return {
        version,
        operation: done?.operation ?? null,
        action: done?.action ?? null,
        rows_before: before ? rowsOf(before) : 0,
        rows_after: rowsOf(after),
        compaction,
      };
    }),
  );
  return { ...ends, written, removed, steps };
}

export async function tableChanges(tables: Tables, id: Id, ends: ChangeEnds) {
  const { to, from } = await resolved(tables, id, ends);
  const fromVersion = from?.version ?? null;
  const physical = await versionSteps(tables, id, fromVersion, to.version!);
  const schema = diffSchemas(from?.schema ?? { fields: [] }, to.schema!)
    .filter((c) => c.kind !== "same")
    .map((c) => ({
      kind: c.kind,
      path: c.path,
      type: c.field.type.type,
      ...(c.kind === "renamed" ? { from: c.from } : {}),
      ...(c.kind === "changed" ? { what: c.what } : {}),
    }));
  let rows: { inserted: number; updated: number; deleted: number } | null = null;
  if (physical.stableRowIds) {
    const since = fromVersion ?? 0;
    const [inserted, updated] = await Promise.all([
      countRows(tables, id, insertedFilter(since), { version: to.version }),
      countRows(tables, id, updatedFilter(since), { version: to.version }),
    ]);
    rows = { inserted, updated, deleted: Math.max(0, physical.rowsBefore - (physical.rowsAfter - inserted)) };
  }
  return {
    from_version: fromVersion,
    to_version: to.version!,
    stable_row_ids: physical.stableRowIds,
    rows_before: physical.rowsBefore,
    rows_after: physical.rowsAfter,
    rows_written: physical.written,
    rows_removed: physical.removed,
    versions: physical.steps,
    ...(rows ? { rows_inserted: rows.inserted, rows_updated: rows.updated, rows_deleted: rows.deleted } : {}),
    schema_changes: schema,
    ...(physical.stableRowIds
      ? { inserted_filter: insertedFilter(fromVersion ?? 0), updated_filter: updatedFilter(fromVersion ?? 0) }
      : {
          why_no_rows: `this table was not written with stable row ids, so its rows do not record the versions that made and changed them: what it can say is how many rows each version of the range held and what made it. A table whose first version Quiver writes gets stable row ids unless its property ${STABLE_ROW_IDS} is false (or QUIVER_STABLE_ROW_IDS is off); an existing table cannot be given them: copy its rows into a new table`,
        }),
  };
}

export type ChangedRows = "inserted" | "updated" | "previous";

/**
 * A page of the rows a version range inserted or updated (as they are at `to`, with their `_rowid`), or the rows
 * named by `rowIds` as they were at `from` (what an update changed them from): an Arrow IPC file.
 */
export async function changedRows(
  tables: Tables,
  id: Id,
  ends: ChangeEnds,
  kind: ChangedRows,
  page: { limit: number; offset: number; rowIds?: string[] },
): Promise<Buffer> {
  const { to, from } = await resolved(tables, id, ends);
  const fromVersion = from?.version ?? 0;
  const { stableRowIds } = (await (await manifestsOf(tables, id)).read(to.version!)).summary;
  if (!stableRowIds)
    throw invalidInput(`table '${joinIdentifier(id)}' was not written with stable row ids, so its rows do not say which version made or changed them`);
  if (kind === "previous") {
    if (!page.rowIds?.length) throw invalidInput("row_ids names the rows whose earlier values to read");
    if (fromVersion === 0) throw invalidInput("the range starts at the table's first version: no row had earlier values");
    return queryTable(tables, id, { version: fromVersion, filter: `_rowid IN (${page.rowIds.join(", ")})`, withRowId: true, limit: page.rowIds.length });
  }
  return queryTable(tables, id, {
    version: to.version,
    filter: kind === "inserted" ? insertedFilter(fromVersion) : updatedFilter(fromVersion),
    withRowId: true,
    limit: page.limit,
    offset: page.offset,
  });
}
