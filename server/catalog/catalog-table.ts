/**
 * The catalog index: the directory namespace's `__manifest` dataset (one row per namespace and table), read into
 * sorted in-memory indexes that are rebuilt only when the dataset's version changes, plus root-level `*.lance`
 * directories that other writers made without a manifest row (as Lance's own directory listing finds them).
 *
 * Longer than 400 lines on purpose: reading the rows, following other writers' commits fragment by fragment,
 * coalescing this process's inserts into one commit and compacting are four views of one dataset and one index, and
 * each relies on how the others leave it.
 */
import "server-only";
import { log } from "@/server/log";
import { QuiverError, fromEngineError } from "@/server/errors";
import { config } from "@/server/config";
import { failpoint } from "@/server/failpoints";
import { countLookup, metrics } from "@/server/metrics";
import { makeData, RecordBatch, Struct, Table, tableFromIPC, tableToIPC, vectorFromArray, type Schema } from "apache-arrow";
import type { Datasets } from "@/server/lance/datasets";
import { engineCall } from "@/server/lance/native";
import { FreshRead } from "@/server/storage/fresh-read";
import type { ObjectStore } from "@/server/storage/object-store";
import { KeyedLock } from "./keyed-lock";
import { CatalogCommitter, type HandedRow } from "./catalog-committer";
import type { NativeQuery, NativeTable } from "@/server/lance/native";
import { fragmentsAt, versionChange, type FragmentRows } from "@/server/lance/version-changes";
import { joinIdentifier, DELIMITER } from "@/lib/identifiers";

/**
 * The row type that hides a deregistered root-level `<name>.lance` directory, whose files stay where they are but which
 * a listing of the root would otherwise find again. Lance's own directory listing hides it by the directory's
 * `.lance-deregistered` marker, which Quiver writes too; the row saves every instance reading one marker per table.
 */
export const DEREGISTERED = "deregistered_table";
/**
 * The namespace whose rows record batches' decisions (CatalogTable.decideBatch): a batch's row is committed in the one
 * catalog commit that makes its catalog changes, or aborted in one of its own. They are table rows, the one kind
 * besides namespaces that Lance's own directory namespace reads without failing, below a namespace that has no row
 * and whose name no client of Quiver can take (`:` is in no name), so no listing shows them.
 */
const BATCHES = "quiver:batches";
export const batchRowId = (hold: string) => `${BATCHES}${DELIMITER}${hold}`;
export type BatchState = "committed" | "aborted";
const MANIFEST_DIR = "__manifest";
const COMPACT_EVERY_WRITES = 100;
/** How many times a batch's decision is tried on a catalog that other commits keep moving on. */
const DECISION_ATTEMPTS = 20;
/** How many of its recent group commits a process keeps in memory for the instances that follow it. */
const GROUP_COMMITS_KEPT = 1_000;
/** How long a removal of a root-level directory is remembered: longer than any listing of the root takes. */
const REMOVAL_MEMORY_MS = 60_000;
/** How often a request that lists no tables starts a listing of the root beside it, when the root's stamp moved. */
const ROOT_RELIST_MS = 2_000;
/**
 * How long superseded catalog versions are kept. Nothing reads the catalog's history but other instances following
 * it version by version, which they do at their next request (one that falls further behind reads the catalog
 * whole), and a load that began just before another commit. On a local root every check for the latest version lists
 * the whole history, so under a burst of writes a shorter one costs each request less.
 */
const CATALOG_HISTORY_MS = 3_000;

export interface TableEntry {
  objectId: string;
  id: string[];
  location: string;
  properties: Record<string, string>;
  /** False for root-level datasets found on disk without a manifest row. */
  registered: boolean;
}

export interface NamespaceEntry {
  objectId: string;
  id: string[];
  properties: Record<string, string>;
}

interface NewRow {
  objectId: string;
  objectType: "namespace" | "table" | typeof DEREGISTERED;
  location: string | null;
  properties: Record<string, string>;
}

/** What a batch's decision changes in the catalog (settleBatch in server/tables/batch-finish.ts). */
export interface CatalogBatchChange {
  declares: Array<{ objectId: string; location: string; properties: Record<string, string> }>;
  /** Root-level tables whose row becomes the one that hides their directory. */
  hides: string[];
  /** Rows removed (tables deregistered below the root, or catalogued elsewhere). */
  removes: string[];
}

interface ManifestRow {
  object_id: string;
  object_type: string;
  location: string | null;
  metadata: string | null;
  /** Where the row lies (fragment id in the high half), when asked for. */
  _rowaddr?: bigint;
}

export class CatalogIndex {
  readonly namespaces = new Map<string, NamespaceEntry>();
  readonly tables = new Map<string, TableEntry>();
  /** Every table's object id, sorted, for paging by position. */
  readonly sortedTables: string[] = [];
  /** Child namespace names and table names per parent namespace object id ("" = root), sorted. */
  readonly childNamespaces = new Map<string, string[]>();
  readonly childTables = new Map<string, string[]>();
  /** Root-level `<name>.lance` directories that were deregistered: not tables, though the root lists them. */
  readonly deregistered = new Set<string>();
  /** The object id of the catalogued table at each location. */
  readonly atLocation = new Map<string, string>();
  /** The decisions of batches that change the catalog, by their rows' object ids (under BATCHES), and when each was made. */
  readonly batches = new Map<string, { state: BatchState; time: number }>();
  /** Tables that a catalog row names (the others are root-level directories without one). */
  private registeredTables = 0;

  constructor(rows: ManifestRow[], rootDatasets: string[]) {
    for (const row of rows) this.addRow(row, false);
    for (const name of rootDatasets) if (!this.tables.has(name) && !this.deregistered.has(name)) this.addTable(rootDataset(name), false);
    this.sortedTables.sort(compare);
    for (const list of [...this.childNamespaces.values(), ...this.childTables.values()]) list.sort(compare);
  }

  /** Adds a row; `sorted` keeps the sorted lists in order as it goes (for changes after the first build). */
  addRow(row: ManifestRow, sorted = true) {
    const id = row.object_id.split(DELIMITER);
    const properties = parseProperties(row.metadata);
    if (id[0] === BATCHES) {
      this.batches.set(row.object_id, { state: properties.state === "aborted" ? "aborted" : "committed", time: Date.parse(properties.time ?? "") || 0 });
    } else if (row.object_type === "namespace") {
      this.namespaces.set(row.object_id, { objectId: row.object_id, id, properties });
      insert(this.childNamespaces, parentKey(id), id[id.length - 1], sorted);
    } else if (row.object_type === "table" && row.location) {
      this.addTable({ objectId: row.object_id, id, location: row.location, properties, registered: true }, sorted);
    } else if (row.object_type === DEREGISTERED) {
      this.deregistered.add(row.object_id);
      if (this.tables.get(row.object_id)?.registered === false) this.remove(row.object_id);
    }
  }

  private addTable(entry: TableEntry, sorted: boolean) {
    const known = this.tables.get(entry.objectId);
    if (known && this.atLocation.get(known.location) === known.objectId) this.atLocation.delete(known.location);
    this.registeredTables += (entry.registered ? 1 : 0) - (known?.registered ? 1 : 0);
    this.tables.set(entry.objectId, entry);
    if (entry.registered || !this.atLocation.has(entry.location)) this.atLocation.set(entry.location, entry.objectId);
    // A catalogued row for a root-level directory already listed replaces that entry; it is not a second table.
    if (known) return;
    insert(this.childTables, parentKey(entry.id), entry.id[entry.id.length - 1], sorted);
    if (sorted) this.sortedTables.splice(lowerBound(this.sortedTables, entry.objectId), 0, entry.objectId);
    else this.sortedTables.push(entry.objectId);
  }

  remove(objectId: string) {
    this.deregistered.delete(objectId);
    this.batches.delete(objectId);
    const table = this.tables.get(objectId);
    const namespace = this.namespaces.get(objectId);
    const entry = table ?? namespace;
    if (!entry) return;
    const lists = table ? this.childTables : this.childNamespaces;
    const siblings = lists.get(parentKey(entry.id));
    const name = entry.id[entry.id.length - 1];
    if (siblings) siblings.splice(lowerBound(siblings, name), siblings[lowerBound(siblings, name)] === name ? 1 : 0);
    if (table) {
      if (table.registered) this.registeredTables--;
      this.tables.delete(objectId);
      if (this.atLocation.get(table.location) === objectId) this.atLocation.delete(table.location);
      const i = lowerBound(this.sortedTables, objectId);
      if (this.sortedTables[i] === objectId) this.sortedTables.splice(i, 1);
    } else this.namespaces.delete(objectId);
  }

  setProperties(objectId: string, properties: Record<string, string>) {
    const entry = this.tables.get(objectId) ?? this.namespaces.get(objectId);
    if (entry) entry.properties = properties;
  }

  /** Swaps the unregistered root-level tables found as `before` for those found as `after`. */
  replaceRootDatasets(before: readonly string[], after: readonly string[]) {
    const kept = new Set(after);
    for (const name of before) if (!kept.has(name) && this.tables.get(name)?.registered === false) this.remove(name);
    for (const name of after) {
      if (!this.tables.has(name) && !this.deregistered.has(name)) this.addTable(rootDataset(name), true);
    }
  }

  /** Catalog rows the index holds: namespaces, tables a row names, the rows that hide deregistered directories, batches. */
  get rows(): number {
    return this.namespaces.size + this.registeredTables + this.deregistered.size + this.batches.size;
  }

  /** Puts a row read again in place of what the index holds under its object id (a row can move between fragments). */
  replaceRow(row: ManifestRow, foreign: readonly string[]) {
    this.remove(row.object_id);
    this.addRow(row);
    this.restoreRootDataset(row.object_id, foreign);
  }

  /** After a row went: a root-level directory of that name, still listed at the root, is a table without a row again. */
  restoreRootDataset(objectId: string, foreign: readonly string[]) {
    const listed = foreign[lowerBound(foreign, objectId)] === objectId;
    if (listed && !this.tables.has(objectId) && !this.deregistered.has(objectId) && !this.namespaces.has(objectId)) {
      this.addTable(rootDataset(objectId), true);
    }
  }

  namespaceExists(id: string[]): boolean {
    return id.length === 0 || this.namespaces.has(joinIdentifier(id));
  }
}

/** A `*.lance` directory at the root that no manifest row names: a table of the root namespace by its directory name. */
function rootDataset(name: string): TableEntry {
  return { objectId: name, id: [name], location: `${name}.lance`, properties: {}, registered: false };
}

function lowerBound(list: readonly string[], key: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insert(map: Map<string, string[]>, key: string, value: string, sorted: boolean) {
  const list = map.get(key);
  if (!list) map.set(key, [value]);
  else if (!sorted) list.push(value);
  else if (list[lowerBound(list, value)] !== value) list.splice(lowerBound(list, value), 0, value);
}

export function parentKey(id: string[]): string {
  return joinIdentifier(id.slice(0, -1));
}

export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function parseProperties(metadata: string | null): Record<string, string> {
  if (!metadata) return {};
  try {
    const parsed = JSON.parse(metadata);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      return Object.fromEntries(Object.entries(parsed).filter(([, v]) => typeof v === "string")) as Record<string, string>;
    }
  } catch {
    // A row written by another tool with non-JSON metadata simply has no properties.
  }
  return {};
}

/**
 * Reads and writes `__manifest` rows. The parsed index follows the dataset's versions: this process's own commits
 * patch it in place, and other writers' commits are followed version by version through what each changed
 * (`versionChange`), reading only the fragments they added; a change that cannot be followed so (rows removed or
 * updated elsewhere) reads every row again. So a write costs its own row, not a re-read of the whole catalog, in the
 * process that made it and in every other instance on the root.
 */
export class CatalogTable {
  /** `foreign` is the very list `rootDatasets` answered, which stays the same object until the root changes. */
  private cached?: { version: number; foreign: string[]; index: CatalogIndex };
  /**
   * What the index is known to hold: at `version`, the rows of each fragment in `fragments`, with the deletion file
   * each had then (rows of later versions this process wrote are in the index too, patched). `extraRows` is how many
   * rows of the catalog the index does not count (duplicate object ids, rows of kinds it ignores), so that the row
   * count checks a catch-up.
   */
  private followed?: { version: number; fragments: Map<number, string>; extraRows: number };
  /** Versions this process committed and patched into the index. */
  private readonly ownVersions = new Set<number>();
  private catchingUp?: { version: number; foreign: string[]; index: Promise<CatalogIndex> };
  private schema?: Schema;
  private root?: { stamp: string; foreign: string[] };
  /** Root-level directories this process removed, by name, and when (performance.now()). */
  private readonly removedAtRoot = new Map<string, number>();
  private rootReading?: Promise<void>;
  private rootListedAt = -Infinity;
  private writes = 0;
  private compacting?: Promise<unknown>;
  /** This process commits to `__manifest` one write at a time, and catches up between them, so the index changes in order. */
  private readonly writing = new KeyedLock();
  private pending: Array<{ row: NewRow; resolve: (inserted: boolean) => void; reject: (err: unknown) => void }> = [];
  private flushing?: Promise<void>;
  private readonly committer: CatalogCommitter<ManifestRow>;
  /** The rows this process's recent group commits inserted, by version, for the instances that follow it (followCommitter). */
  private readonly groupCommits = new Map<number, ManifestRow[]>();

  constructor(
    private readonly datasets: Datasets,
    private readonly store: ObjectStore,
  ) {
    this.committer = new CatalogCommitter(store, {
      receive: (rows, seen) => this.receive(rows, seen),
      changes: (from, to) => this.committedSince(from, to),
    });
  }

  /** The catalog's latest version and the root's datasets, shared by the requests that ask while it is read. */
  private readonly state = new FreshRead(() => Promise.all([this.datasets.catalogVersion(), this.rootDatasets(false)]));
  /** A listing of the root for the requests that list tables, never one that began before they asked. */
  private readonly rootListing = new FreshRead(() => this.store.listingStamp("").then((stamp) => this.readRootDatasets(stamp)));

  /** The index as this process last read it, without a look at the store: it may lag other instances' changes. */
  lastIndex(): CatalogIndex | undefined {
    return this.cached?.index;
  }

  /**
   * The index, fresh as of this call. Root-level directories that no catalog row names (tables another tool made
   * with a plain connection) are as the last listing of the root found them, unless `listing` asks for a listing
   * that began after this call, as the calls that list tables do: a listing of a large root is every table's
   * directory, so the other calls do not wait for one (Catalog.resolve looks for such a directory by its name).
   */
  async index(options: { listing?: boolean } = {}): Promise<CatalogIndex> {
    const [version, listed] = await this.state.get();
    const foreign = options.listing ? await this.rootDatasets(true) : listed;
    const current = this.current(version, foreign);
    if (current) return current;
    // A catch-up under way is joined only when it reaches this version or a later one: one that started before
    // another process's commit would answer without a row the caller may already have been told exists.
    if (!this.catchingUp || this.catchingUp.version < version || this.catchingUp.foreign !== foreign) {
      const run = { version, foreign, index: this.writing.run("", () => this.catchUp(version, foreign)) };
      this.catchingUp = run;
      const done = () => {
        if (this.catchingUp === run) this.catchingUp = undefined;
      };
      run.index.then(done, done);
    }
    return this.catchingUp.index;
  }

  /**
   * The cached index when it holds `version` (a check that began before this process's own latest commit finds the
   * version before it, which the patched cache holds too), with the root's datasets brought up to `foreign`.
   */
  private current(version: number, foreign: string[]): CatalogIndex | undefined {
    if (!this.cached || this.cached.version < version) return undefined;
    // Only root-level datasets came or went (a root-level create or drop): no need to read the rows again.
    if (this.cached.foreign !== foreign) {
      this.cached.index.replaceRootDatasets(this.cached.foreign, foreign);
      this.cached.foreign = foreign;
    }
    return this.cached.index;
  }

  /** Brings the index to `version`, in the writing turn: by following the versions since, or by reading every row. */
  private async catchUp(version: number, foreign: string[]): Promise<CatalogIndex> {
    const current = this.current(version, foreign);
    if (current) return current;
    if (this.cached && (await this.followCommitter(version))) return this.current(version, foreign)!;
    if (this.cached && this.followed) {
      const followed = await this.follow(version).catch((err: unknown) => {
        log.warn({ err }, "following the catalog's versions failed; reading it whole");
        return false;
      });
      countLookup("catalog_changes", followed);
      if (followed) return this.current(version, foreign)!;
    }
    return this.load(version, foreign);
  }

  /**
   * Follows the catalog to `target` through the root's committer, when every version since the index's was one of its
   * group commits: it answers the rows each inserted, from memory, in one call on loopback instead of the store's
   * round trips. What the index is known to hold in the store's terms (`followed`) stays where it was: the next
   * follow through the store reads those fragments again, which a row already held costs nothing but the reading.
   */
  private async followCommitter(target: number): Promise<boolean> {
    const cached = this.cached!;
    const versions = await this.committer.changes(cached.version, target);
    const rows = versions?.flat() ?? [];
    const wellFormed = rows.every((row) => typeof row?.object_id === "string" && typeof row.object_type === "string");
    if (!versions || !wellFormed || this.cached !== cached || cached.version >= target) return false;
    for (const row of rows) cached.index.replaceRow(row, cached.foreign);
    cached.version = target;
    countLookup("catalog_committer_changes", true);
    return true;
  }

  /** The rows each of versions (from, to] inserted, when every one of them was a group commit of this process. */
  private committedSince(from: number, to: number): ManifestRow[][] | null {
    const versions: ManifestRow[][] = [];
    for (let version = from + 1; version <= to; version++) {
      const rows = this.groupCommits.get(version);
      if (!rows) return null;
      versions.push(rows);
    }
    return versions;
  }

  /**
   * Follows the catalog from the version the index is known at to `target`: fragments another writer inserted are
   * read, those a compaction made from fragments the index holds hold nothing new, this process's own commits are
   * in the index already, and anything else gives up (false). The rows read are checked against the fragments' live
   * row counts, and the index's rows against the catalog's.
   */
  private async follow(target: number): Promise<boolean> {
    const { cached, followed } = this;
    if (!cached || !followed) return false;
    const fragments = await fragmentsAt(this.store, MANIFEST_DIR, target);
    const latest = new Map(fragments.map((f) => [f.id, f.deletions]));
    let unread: Set<number>;
    // Every fragment the index holds is there still, with no row deleted since: the versions between only added
    // fragments (inserts), whose rows are read, this process's own among them.
    if ([...followed.fragments].every(([id, deletions]) => latest.get(id) === deletions)) {
      unread = new Set([...latest.keys()].filter((id) => !followed.fragments.has(id)));
    } else {
      const stepped = await this.stepThrough(followed.version, target, followed.fragments);
      if (!stepped) return false;
      unread = stepped;
    }
    const live = new Map(fragments.map((f) => [f.id, f.liveRows]));
    const toRead = [...unread].filter((id) => live.has(id));
    const rows = toRead.length ? await this.readFragments(toRead, live) : [];
    if (rows === null) return false;
    for (const row of rows) cached.index.replaceRow(row, cached.foreign);
    const total = fragments.reduce((sum, f) => sum + f.liveRows, 0);
    if (cached.index.rows + followed.extraRows !== total) return false;
    cached.version = target;
    this.followed = { version: target, fragments: latest, extraRows: followed.extraRows };
    for (const version of this.ownVersions) if (version <= target) this.ownVersions.delete(version);
    return true;
  }

  /**
   * Goes through the versions after `from` one by one, for changes that removed fragments or rows: a compaction's
   * new fragments hold what its old ones held, an update or merge-insert that deleted no row only inserted, this
   * process's own commits are in the index already, and anything else gives up (null). Answers the fragments whose
   * rows the index lacks.
   */
  private async stepThrough(from: number, target: number, held: Map<number, string>): Promise<Set<number> | null> {
    let before = held;
    const known = new Set(held.keys());
    const unread = new Set<number>();
    for (let version = from + 1; version <= target; version++) {
      const read = await versionChange(this.store, MANIFEST_DIR, version);
      if (!read) return null;
      const now = new Map(read.fragments.map((f) => [f.id, f.deletions]));
      const added = [...now.keys()].filter((id) => !before.has(id));
      const removed = [...before.keys()].filter((id) => !now.has(id));
      const deletedRows = [...before].some(([id, deletions]) => now.has(id) && now.get(id) !== deletions);
      const inserted = (read.kind === "added" || read.kind === "updated") && removed.length === 0 && !deletedRows;
      if (this.ownVersions.has(version)) added.forEach((id) => known.add(id));
      else if (inserted) added.forEach((id) => unread.add(id));
      else if (read.kind === "rewritten") {
        const whole = removed.every((id) => known.has(id));
        added.forEach((id) => (whole ? known : unread).add(id));
      } else if (read.kind !== "none" || added.length || removed.length || deletedRows) return null;
      before = now;
    }
    return unread;
  }

  /**
   * The rows of some fragments of the latest catalog, by their row addresses (a fragment's id is the address's high
   * half); null when a fragment does not hold the rows expected of it (it changed since, and the caller gives up).
   */
  private async readFragments(ids: number[], live: Map<number, number>): Promise<ManifestRow[] | null> {
    const table = await this.datasets.catalogTable();
    const query = table.query();
    query.selectColumns(["object_id", "object_type", "location", "metadata", "_rowaddr"]);
    query.onlyIf(ids.map((id) => `(_rowaddr >= ${BigInt(id) << 32n} AND _rowaddr < ${BigInt(id + 1) << 32n})`).join(" OR "));
    const rows = await this.rowsOf(query);
    const counts = new Map<number, number>();
    for (const row of rows) {
      const fragment = Number(BigInt(row._rowaddr!) >> 32n);
      counts.set(fragment, (counts.get(fragment) ?? 0) + 1);
    }
    return ids.every((id) => (counts.get(id) ?? 0) === live.get(id)) ? rows : null;
  }

  /** Reads every row at `version` and starts following the catalog from there. */
  private async load(version: number, foreign: string[]): Promise<CatalogIndex> {
    let rows: ManifestRow[] = [];
    let fragments: FragmentRows[] = [];
    for (let attempt = 1; ; attempt++) {
      try {
        [rows, fragments] = await Promise.all([this.readRows(version), fragmentsAt(this.store, MANIFEST_DIR, version)]);
        break;
      } catch (err) {
        // A compaction pruned this version while it was read, since commits have followed it: read the latest instead.
        const latest = await this.datasets.catalogVersion();
        if (latest === version || attempt === 3) throw err;
        version = latest;
      }
    }
    const index = new CatalogIndex(rows, foreign);
    this.cached = { version, foreign, index };
    this.followed = { version, fragments: new Map(fragments.map((f) => [f.id, f.deletions])), extraRows: rows.length - index.rows };
    this.ownVersions.clear();
    return index;
  }

  /** Applies this process's own commit to the cached index when it directly follows the cached version. */
  private patch(newVersion: number, change: (index: CatalogIndex) => void) {
    if (this.cached && this.cached.version === newVersion - 1) {
      change(this.cached.index);
      this.cached.version = newVersion;
      this.ownVersions.add(newVersion);
    }
    if (++this.writes % COMPACT_EVERY_WRITES === 0) this.compact();
  }

  /**
   * Every catalog write adds a small fragment and a version to `__manifest`. Compacting the fragments keeps a full
   * read of the catalog to a few files; pruning superseded versions keeps every request's check for the latest
   * version from listing the whole history (10,000 versions cost about 2 ms of CPU per request). It runs beside
   * requests: Lance rebases either side, and instances follow it without reading a row.
   */
  private compact() {
    this.compacting ??= this.datasets
      .catalogTable()
      .then(async (table) => {
        await this.forgetBatchesDecidedBefore(Date.now() - config.idempotencyWindowMs);
        return table.optimize(Date.now() - CATALOG_HISTORY_MS);
      })
      .catch((err: unknown) => log.error({ err }, "catalog compaction failed"))
      .finally(() => (this.compacting = undefined));
  }

  /**
   * Removes the rows of batches decided before `before` (compaction passes the idempotency window's start: no attempt
   * of theirs can still be answered or woken into deciding, a claim older than the window being answered from no more).
   */
  async forgetBatchesDecidedBefore(before: number) {
    const index = this.cached?.index;
    if (!index) return;
    const old = [...index.batches].filter(([, { time }]) => time < before).map(([id]) => id);
    if (old.length) await this.remove(old);
  }

  /**
   * Root-level `*.lance` directories, re-read only when the root's listing stamp changes; the same list while it
   * does not. Unless `fresh` asks to wait, a changed stamp starts a listing beside the request, which uses the last
   * one meanwhile: every table made adds a directory at the root, so on a local root the stamp moves with every
   * create, and on an object store it is a clock (asking the store would cost a round trip per request). What other
   * tools add at the root is seen by the next listing of tables, and within the stamp's few seconds by the rest.
   */
  private async rootDatasets(fresh: boolean): Promise<string[]> {
    const stamp = await this.store.listingStamp("");
    if (this.root?.stamp === stamp) return this.root.foreign;
    // An object store's stamp is a clock: nothing to wait for there.
    if (this.root && (!fresh || this.store.root.kind !== "local")) {
      // Each listing reads every table's directory: under a burst of creates on a local root, one every so often.
      if (!fresh && performance.now() - this.rootListedAt < ROOT_RELIST_MS) return this.root.foreign;
      this.rootListedAt = performance.now();
      this.rootReading ??= this.readRootDatasets(stamp)
        .catch((err: unknown) => log.error({ err }, "listing the data root failed"))
        .finally(() => (this.rootReading = undefined));
      return this.root.foreign;
    }
    await this.rootListing.get();
    return this.root!.foreign;
  }

  /**
   * A root-level `<name>.lance` directory this process removed (a drop, a move, a claim let go): neither the last
   * listing of the root nor one that began before now shows it again. Without this, a table dropped right after a
   * listing saw its directory would be listed again as a table another tool made, until the root was listed anew.
   */
  rootDirectoryRemoved(location: string) {
    const name = /^([^/]+)\.lance$/.exec(location)?.[1];
    if (name === undefined) return;
    this.removedAtRoot.set(name, performance.now());
    if (this.root?.foreign.includes(name)) this.root = { ...this.root, foreign: this.root.foreign.filter((n) => n !== name) };
  }

  private async readRootDatasets(stamp: string): Promise<void> {
    const began = performance.now();
    const entries = await this.store.listDirectories("");
    for (const [name, at] of this.removedAtRoot) if (at < began - REMOVAL_MEMORY_MS) this.removedAtRoot.delete(name);
    // A directory removed while this listing ran may be in it or not: it is gone.
    const removedSince = (name: string) => (this.removedAtRoot.get(name) ?? -Infinity) >= began;
    const names = entries
      .filter((name) => name.endsWith(".lance"))
      .map((name) => name.slice(0, -".lance".length))
      .filter((name) => !removedSince(name))
      .sort(compare);
    const previous = this.root?.foreign;
    const same = previous !== undefined && previous.length === names.length && previous.every((name, i) => name === names[i]);
    this.root = { stamp, foreign: same ? previous : names };
  }

  /** The rows at exactly one version, so the index built from them can be patched by the commits that follow it. */
  private async readRows(version: number): Promise<ManifestRow[]> {
    const query = (await this.datasets.catalogTableAt(version)).query();
    query.selectColumns(["object_id", "object_type", "location", "metadata"]);
    return this.rowsOf(query);
  }

  private async rowsOf(query: NativeQuery): Promise<ManifestRow[]> {
    const batches = await engineCall("read the catalog", async () => {
      const iterator = await query.execute();
      const out: Buffer[] = [];
      for (let b = await iterator.next(); b; b = await iterator.next()) out.push(b);
      return out;
    });
    const rows: ManifestRow[] = [];
    for (const buffer of batches) {
      for (const row of tableFromIPC(buffer)) rows.push(row.toJSON());
    }
    return rows;
  }

  private async manifestSchema(): Promise<Schema> {
    if (!this.schema) {
      const table = await this.datasets.catalogTable();
      this.schema = tableFromIPC(await engineCall("read the catalog's schema", () => table.schema())).schema;
    }
    return this.schema;
  }

  /**
   * Inserts a row unless the catalog holds one with the same object id; returns false when it does. Rows that arrive
   * while a commit is under way are committed together in the next one (group commit), so concurrent declares and
   * creates cost one catalog commit between them. A namespace's row goes alone: of two rows for one namespace, only
   * one commit's count of inserted rows can tell whose it is.
   */
  insert(row: NewRow): Promise<boolean> {
    if (row.objectType === "namespace") return this.insertGroup([row]).then(([inserted]) => inserted);
    return this.queue(row);
  }

  private queue(row: NewRow): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ row, resolve, reject });
      this.flush();
    });
  }

  /**
   * Table rows another instance handed to this one, the root's committer (catalog-committer.ts): they join this
   * process's group commits, on an index at least as fresh as the one their instance looked at.
   */
  private async receive(rows: HandedRow[], seenVersion: number): Promise<boolean[]> {
    if (!this.cached || this.cached.version < seenVersion) await this.index();
    return Promise.all(rows.map((row) => this.queue(row)));
  }

  private flush() {
    if (this.flushing || this.pending.length === 0) return;
    const group = this.pending.splice(0, this.pending.length);
    const rows = group.map((g) => g.row);
    this.flushing = this.committer
      .handOff(rows as HandedRow[], this.cached?.version ?? 0)
      .then((handed) => handed ?? this.insertGroup(rows))
      .then(
        (inserted) => group.forEach((g, i) => g.resolve(inserted[i])),
        (err) => group.forEach((g) => g.reject(err)),
      )
      .finally(() => {
        this.flushing = undefined;
        this.flush();
      });
  }

  /**
   * Inserts the rows whose object ids the index does not hold (callers looked at a fresh index before they asked, and
   * it is at least that fresh now) with a merge-insert on the object id: the engine finds a row that another writer
   * committed since, and two writers' merge-inserts of one id at once conflict, so that one of them inserts it.
   * Through the commit handle, which follows this process's commits, moved on to the latest version when the index
   * is past it: a merge-insert reads the catalog at the handle's version, and the engine checks the commits made
   * after that for rows with the same ids.
   */
  private async insertGroup(rows: NewRow[]): Promise<boolean[]> {
    const schema = await this.manifestSchema();
    const table = await this.datasets.commitHandle(MANIFEST_DIR);
    const outcome = await this.writing.run("", async () => {
      const index = this.cached!.index;
      const claimed = new Set<string>();
      const fresh = rows.map((r) => {
        const held = index.tables.get(r.objectId)?.registered || index.namespaces.has(r.objectId) || index.deregistered.has(r.objectId);
        if (held || claimed.has(r.objectId)) return false;
        claimed.add(r.objectId);
        return true;
      });
      // The row is in already, at the location this request claimed: the root's committer inserted it and could not answer.
      const ours = rows.map((r) => holdsRowOf(index, r));
      const added: ManifestRow[] = rows
        .filter((_, i) => fresh[i])
        .map((r) => ({
          object_id: r.objectId,
          object_type: r.objectType,
          location: r.location,
          metadata: metadataOf(r.properties),
        }));
      if (added.length === 0) return { fresh: fresh.map((f, i) => f || ours[i]), settled: true };
      const file = this.rowsFile(added, schema);
      // A handle behind the index would find rows that the index knows were removed since (a table dropped elsewhere).
      if ((await engineCall("open the catalog", () => table.version())) < this.cached!.version) {
        await engineCall("open the catalog", () => table.checkoutLatest());
      }
      const merge = () => engineCall("update the catalog", () => table.mergeInsert(["object_id"]).whenNotMatchedInsertAll().execute(file));
      // The handle follows only this process's commits; one far behind may rest on versions a compaction pruned.
      const result = await merge().catch(async () => {
        await engineCall("open the catalog", () => table.checkoutLatest());
        return merge();
      });
      for (const row of added) failpoint("kill-after-catalog-commit", row.object_id);
      if (result.numInsertedRows === added.length) {
        this.patch(result.version, (patched) => added.forEach((row) => patched.addRow(row)));
        this.groupCommits.set(result.version, added);
        for (const version of this.groupCommits.keys()) {
          if (this.groupCommits.size <= GROUP_COMMITS_KEPT) break;
          this.groupCommits.delete(version);
        }
        return { fresh: fresh.map((f, i) => f || ours[i]), settled: true };
      }
      return { fresh, settled: false };
    });
    metrics.catalogRows.inc({ route: "committed" }, rows.length);
    if (outcome.settled) return outcome.fresh;
    // Another writer catalogued some of the names first (or the root's committer did, and could not answer): a
    // table's row is this request's when it names the location this request claimed (namespaces go alone, and their
    // row is another's when this commit inserted none).
    const index = await this.index();
    return rows.map((r) => holdsRowOf(index, r));
  }

  /**
   * Decides a batch that changes the catalog (settleBatch in server/tables/batch-finish.ts): commits its row in `state`, and when committed the
   * batch's catalog changes with it, all in one commit, made only as the version right after the one the index was
   * checked at (nothing changed between the check and the commit, on any instance). Answers the batch's state when
   * another attempt of it decided first (its row is there), or the reason `conflict` found in the index.
   */
  async decideBatch(
    hold: string,
    state: BatchState,
    change: CatalogBatchChange,
    conflict: (index: CatalogIndex) => Promise<string | null>,
  ): Promise<{ state: BatchState } | { conflict: string }> {
    const schema = await this.manifestSchema();
    const table = await this.datasets.catalogCommitHandle();
    const id = batchRowId(hold);
    const metadata = JSON.stringify({ state, time: new Date().toISOString() });
    const batchRow: ManifestRow = { object_id: id, object_type: "table", location: `.quiver/batches/${hold}`, metadata };
    const rows: ManifestRow[] = [batchRow];
    if (state === "committed") {
      for (const d of change.declares) {
        rows.push({ object_id: d.objectId, object_type: "table", location: d.location, metadata: metadataOf(d.properties) });
      }
      for (const objectId of change.hides) rows.push({ object_id: objectId, object_type: DEREGISTERED, location: null, metadata: null });
    }
    const removes = state === "committed" ? change.removes : [];
    const file = this.rowsFile(rows, schema);
    for (let attempt = 1; attempt <= DECISION_ATTEMPTS; attempt++) {
      await this.index();
      const outcome = await this.writing.run("", async () => {
        const { version: at, index } = this.cached!;
        const decided = index.batches.get(id)?.state;
        if (decided) return { state: decided };
        const why = state === "committed" ? await conflict(index) : null;
        if (why) return { conflict: why };
        let moved = false;
        const guard = {
          properties: {},
          admit: async (_files: unknown, _directory: string, version: number) => {
            moved = version !== at + 1;
            if (moved) throw new Error(`the catalog moved on from version ${at}`);
          },
        };
        await engineCall("open the catalog", () => table.checkoutLatest());
        let builder = table.mergeInsert(["object_id"]).whenMatchedUpdateAll().whenNotMatchedInsertAll();
        if (removes.length) builder = builder.whenNotMatchedBySourceDelete(`object_id IN (${removes.map(sqlString).join(", ")})`);
        try {
          // Refused for a commit that came between: no failure, and the catalog is checked again.
          const failure = (err: unknown, what: string) =>
            moved ? new QuiverError("ConcurrentModification", `the catalog moved on from version ${at}`) : fromEngineError(err, what);
          const result = await this.datasets.guarded(MANIFEST_DIR, guard, () => engineCall("update the catalog", () => builder.execute(file), failure));
          this.patch(result.version, (patched) => {
            for (const objectId of [...removes, ...rows.map((r) => r.object_id)]) patched.remove(objectId);
            for (const row of rows) patched.addRow(row);
          });
          return { state };
        } catch (err) {
          if (moved) return null;
          throw err;
        }
      });
      if (outcome) return outcome;
    }
    throw new QuiverError("ServiceUnavailable", `the catalog kept changing while a batch was decided (${DECISION_ATTEMPTS} tries); send the batch again`);
  }

  /** Rows as an Arrow IPC file in the manifest's schema, for a merge-insert. */
  private rowsFile(rows: ManifestRow[], schema: Schema): Buffer {
    const children = schema.fields.map(
      (f) =>
        vectorFromArray(
          rows.map((r) => (r as unknown as Record<string, unknown>)[f.name] ?? null),
          f.type,
        ).data[0],
    );
    const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children }));
    return Buffer.from(tableToIPC(new Table([batch]), "file"));
  }

  /** Commits one change to `__manifest`, then patches the cache with it, in this process's commit order. */
  private async commit<R extends { version: number }>(
    write: (table: NativeTable) => Promise<R>,
    change: (result: R) => (index: CatalogIndex) => void,
  ): Promise<R> {
    const table = await this.datasets.catalogTable();
    return this.writing.run("", async () => {
      const result = await engineCall("update the catalog", () => write(table));
      this.patch(result.version, change(result));
      return result;
    });
  }

  async setProperties(objectId: string, properties: Record<string, string>): Promise<void> {
    const json = Object.keys(properties).length ? sqlString(JSON.stringify(properties)) : "NULL";
    await this.commit(
      (table) => table.update(`object_id = ${sqlString(objectId)}`, [["metadata", json]]),
      () => (index) => index.setProperties(objectId, properties),
    );
  }

  async remove(objectIds: string[]): Promise<void> {
    if (objectIds.length === 0) return;
    const list = objectIds.map(sqlString).join(", ");
    await this.commit(
      (table) => table.delete(`object_id IN (${list})`),
      () => (index) => objectIds.forEach((id) => index.remove(id)),
    );
  }

  /**
   * Replaces a root-level table's row (or, for a directory the root lists without a row, adds one) with the row that
   * hides its directory, in one commit.
   */
  hideRootTable(name: string): Promise<void> {
    return this.replaceRow({ object_id: name, object_type: DEREGISTERED, location: null, metadata: null });
  }

  /** Turns the row that hides a root-level directory back into the table row that names it, in one commit. */
  unhideRootTable(name: string, location: string, properties: Record<string, string>): Promise<void> {
    return this.replaceRow({ object_id: name, object_type: "table", location, metadata: metadataOf(properties) });
  }

  /** Writes a row in place of the one with its object id, or adds it, in one commit. */
  private async replaceRow(row: ManifestRow): Promise<void> {
    const file = this.rowsFile([row], await this.manifestSchema());
    await this.commit(
      (table) => table.mergeInsert(["object_id"]).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(file),
      () => (index) => {
        index.remove(row.object_id);
        index.addRow(row);
      },
    );
  }
}

/** Whether the index holds the table row `row` asks for: each location is claimed by one request only, so it is that request's. */
function holdsRowOf(index: CatalogIndex, row: NewRow): boolean {
  const entry = index.tables.get(row.objectId);
  return row.objectType === "table" && entry?.registered === true && entry.location === row.location;
}

/** A row's `metadata`: its properties as JSON, or null when it has none. */
function metadataOf(properties: Record<string, string>): string | null {
  return Object.keys(properties).length ? JSON.stringify(properties) : null;
}

export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
