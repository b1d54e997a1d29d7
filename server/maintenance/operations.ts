/**
 * The housekeeping a Lance table needs when it takes many small writes: how healthy it is (fragments, small ones,
 * deleted rows, versions, rows no index covers), compaction (the engine rewrites small fragments, materialises
 * deletions and indexes the rows added since each index was built, all in one call), and the cleanup of old
 * versions with the files only they use.
 *
 * Cleanup is done here rather than by the engine: the engine's refuses to run at all when a tagged version is old
 * enough to go, and compacts as a side effect. Here tagged versions, the latest version and the versions branches
 * were made from are kept, and a file goes only when a removed version names it and no kept version, and no
 * branch's version, does. Files no version names (a write under way, one a crash left) are never touched.
 */
import "server-only";
import type { TableEntry } from "@/server/catalog/catalog-table";
import { QuiverError } from "@/server/errors";
import type { TableFiles } from "@/server/lance/table-files";
import { engineCall } from "@/server/lance/native";
import { pruneAuthors } from "@/server/tables/version-authors";
import type { Tables } from "@/server/tables/tables";

export interface TableHealth {
  version: number;
  rows: number;
  fragments: number;
  small_fragments: number;
  deleted_rows: number;
  data_bytes: number;
  versions: number;
  oldest_version_time: string | null;
}

/** What the latest manifest and the version listing say; no engine call, so the background policy can ask often. */
export async function manifestHealth(files: TableFiles): Promise<TableHealth> {
  const { sources } = await files.versions(files.location);
  const numbers = [...sources.keys()].sort((a, b) => a - b);
  if (numbers.length === 0) throw new QuiverError("TableNotFound", `the table at '${files.location}' has no versions`);
  const latest = numbers[numbers.length - 1];
  const { summary } = await files.manifest(latest, sources.get(latest)!);
  const oldest = numbers[0] === latest ? summary : (await files.manifest(numbers[0], sources.get(numbers[0])!)).summary;
  const m = summary.metadata;
  return {
    version: latest,
    rows: Number(m.total_rows),
    fragments: Number(m.total_fragments),
    small_fragments: summary.smallFragments,
    deleted_rows: Number(m.total_deletion_file_rows),
    data_bytes: Number(m.total_files_size),
    versions: numbers.length,
    oldest_version_time: oldest.timestampMillis ? new Date(oldest.timestampMillis).toISOString() : null,
  };
}

/** Rows added since each index was built, summed over the indices, and how many indices there are. */
export async function indexCoverage(tables: Tables, entry: TableEntry): Promise<{ indices: number; unindexed_rows: number }> {
  const table = await tables.writeHandle(entry);
  const indices = await engineCall("list indices", () => table.listIndices());
  return { indices: indices.length, unindexed_rows: indices.reduce((sum, i) => sum + (i.numUnindexedRows ?? 0), 0) };
}

export interface CompactionResult {
  version_before: number;
  version_after: number;
  fragments_before: number;
  fragments_after: number;
  small_fragments_before: number;
  small_fragments_after: number;
  deleted_rows_before: number;
  deleted_rows_after: number;
  files_removed: number;
  files_added: number;
  unindexed_rows_before: number;
  unindexed_rows_after: number;
  conflicts_retried: number;
}

const COMPACTION_ATTEMPTS = 5;

/**
 * Compacts the table's files and indexes its new rows. Writes go on meanwhile: the engine commits the rewrite
 * against whatever was committed since it began, and when a write it cannot reconcile with landed first (a delete
 * or update of rows being rewritten), the compaction is run again on the new latest version. The user's write
 * always stands.
 */
export async function compactTable(tables: Tables, entry: TableEntry, onConflict: () => void = () => {}): Promise<CompactionResult> {
  const files = tables.filesOf(entry);
  const before = await manifestHealth(files);
  const indexedBefore = await indexCoverage(tables, entry);
  let stats: { fragmentsRemoved: number; fragmentsAdded: number; filesRemoved: number; filesAdded: number } | undefined;
  let conflicts = 0;
  for (let attempt = 1; !stats; attempt++) {
    try {
      const table = await tables.openDetached(entry);
      // Versions made before the epoch: none. Old versions are removed by cleanupVersions, which keeps tagged ones.
      const done = await tables.unlessDropped(entry, () => engineCall("compact the table", () => table.optimize(0, false)));
      stats = done.compaction;
    } catch (err) {
      if (!(err instanceof QuiverError && err.codeName === "ConcurrentModification") || attempt >= COMPACTION_ATTEMPTS) throw err;
      conflicts++;
      onConflict();
    }
  }
  tables.forget(entry);
  const after = await manifestHealth(files);
  const indexedAfter = await indexCoverage(tables, entry);
  return {
    version_before: before.version,
    version_after: after.version,
    fragments_before: before.fragments,
    fragments_after: after.fragments,
    small_fragments_before: before.small_fragments,
    small_fragments_after: after.small_fragments,
    deleted_rows_before: before.deleted_rows,
    deleted_rows_after: after.deleted_rows,
    files_removed: stats.filesRemoved,
    files_added: stats.filesAdded,
    unindexed_rows_before: indexedBefore.unindexed_rows,
    unindexed_rows_after: indexedAfter.unindexed_rows,
    conflicts_retried: conflicts,
  };
}

export interface CleanupPlan {
  /** Versions made before this time go, unless kept for another reason. */
  older_than: string;
  versions: Array<{ version: number; timestamp: string }>;
  kept: {
    latest: number;
    tagged: Array<{ tag: string; version: number }>;
    branch_parents: Array<{ branch: string; version: number }>;
    newer: number;
  };
  files: number;
  bytes: number;
}

interface Doomed {
  plan: CleanupPlan;
  manifests: number[];
  v2: boolean;
  /** Files and index directories to remove, with how many files and bytes each is. */
  names: Map<string, { files: number; bytes: number }>;
}

/** Every name a version's files take in the table's directory (index directories end in `/`). */
const namesOf = (v: { files: string[]; indexDirectories: string[]; borrowed: string[] }) => [...v.files, ...v.indexDirectories, ...v.borrowed];

async function planFor(files: TableFiles, olderThan: Date): Promise<Doomed> {
  const { sources, v2 } = await files.versions(files.location, { everyManifest: true });
  const numbers = [...sources.keys()].sort((a, b) => a - b);
  if (numbers.length === 0) throw new QuiverError("TableNotFound", `the table at '${files.location}' has no versions`);
  const latest = numbers[numbers.length - 1];
  const tags = [...(await files.tagRefs())].filter(([, ref]) => ref.branch === null).map(([tag, ref]) => ({ tag, version: ref.version }));
  const branches = [...(await files.branchRefs())]
    .filter(([, ref]) => ref.parentBranch === null)
    .map(([branch, ref]) => ({ branch, version: ref.parentVersion }));
  const pinned = new Set([latest, ...tags.map((t) => t.version), ...branches.map((b) => b.version)]);
  const summaries = new Map(await Promise.all(numbers.map(async (n) => [n, (await files.manifest(n, sources.get(n)!)).summary] as const)));
  const goes = numbers.filter((n) => !pinned.has(n) && summaries.get(n)!.timestampMillis < olderThan.getTime());
  const kept = new Set<string>();
  for (const n of numbers) if (!goes.includes(n)) namesOf(summaries.get(n)!.files).forEach((name) => kept.add(name));
  // A branch's versions may use the table's own files (those it was made from): every name they use is kept.
  for (const summary of await files.branchManifests()) namesOf(summary.files).forEach((name) => kept.add(name));
  const names = new Set<string>();
  for (const n of goes)
    for (const name of [...summaries.get(n)!.files.files, ...summaries.get(n)!.files.indexDirectories]) if (!kept.has(name)) names.add(name);
  const sizes = await files.sizes();
  const present = new Map<string, { files: number; bytes: number }>();
  for (const name of names) {
    const matching = name.endsWith("/")
      ? [...sizes].filter(([key]) => key.startsWith(name)).map(([, size]) => size)
      : sizes.has(name)
        ? [sizes.get(name)!]
        : [];
    if (matching.length) present.set(name, { files: matching.length, bytes: matching.reduce((a, b) => a + b, 0) });
  }
  let bytes = [...present.values()].reduce((sum, n) => sum + n.bytes, 0);
  for (const n of goes) bytes += (await files.manifest(n, sources.get(n)!)).file.size;
  return {
    plan: {
      older_than: olderThan.toISOString(),
      versions: goes.map((n) => ({ version: n, timestamp: new Date(summaries.get(n)!.timestampMillis).toISOString() })),
      kept: {
        latest,
        tagged: tags.filter((t) => summaries.has(t.version) && summaries.get(t.version)!.timestampMillis < olderThan.getTime()),
        branch_parents: branches.filter((b) => summaries.has(b.version) && summaries.get(b.version)!.timestampMillis < olderThan.getTime()),
        newer: numbers.filter((n) => summaries.get(n)!.timestampMillis >= olderThan.getTime()).length,
      },
      files: goes.length + [...present.values()].reduce((sum, n) => sum + n.files, 0),
      bytes,
    },
    manifests: goes,
    v2,
    names: present,
  };
}

/** What a cleanup would remove now: versions, the tags and branches that keep theirs, files and bytes. */
export async function planCleanup(tables: Tables, entry: TableEntry, olderThan: Date): Promise<CleanupPlan> {
  return (await planFor(tables.filesOf(entry), olderThan)).plan;
}

export interface CleanupResult extends CleanupPlan {
  versions_removed: number;
  bytes_removed: number;
}

/**
 * Removes what the plan names: the versions' manifests first, oldest first, so that no listed version ever lacks
 * its files; then the files. Before the files go the versions are listed again: a version committed meanwhile (a
 * restore of an old version, say) keeps whatever it names.
 */
export async function cleanupVersions(tables: Tables, entry: TableEntry, olderThan: Date, progress: (done: number, total: number) => void = () => {}) {
  const files = tables.filesOf(entry);
  const doomed = await planFor(files, olderThan);
  const total = doomed.manifests.length + doomed.names.size;
  await tables.unlessDropped(entry, () => files.deleteManifests(files.location, doomed.manifests, doomed.v2));
  progress(doomed.manifests.length, total);
  const { sources } = await files.versions(files.location, { everyManifest: true });
  await pruneAuthors(tables.records, entry, undefined, new Set(sources.keys()));
  const stillNamed = new Set<string>();
  for (const [n, source] of sources)
    if (!doomed.manifests.includes(n)) namesOf((await files.manifest(n, source)).summary.files).forEach((name) => stillNamed.add(name));
  let done = doomed.manifests.length;
  let bytesKept = 0;
  for (const [name, size] of doomed.names) {
    if (stillNamed.has(name)) bytesKept += size.bytes;
    else await files.removeNamed([name]);
    progress(++done, total);
  }
  const result: CleanupResult = { ...doomed.plan, versions_removed: doomed.manifests.length, bytes_removed: doomed.plan.bytes - bytesKept };
  return result;
}
