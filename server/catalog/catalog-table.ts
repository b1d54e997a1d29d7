/**
 * The catalog index: the directory namespace's `__manifest` dataset (one row per namespace and table), read into
 * sorted in-memory indexes that are rebuilt only when the dataset's version changes, plus root-level `*.lance`
 * directories that other writers made without a manifest row (as Lance's own directory listing finds them).
 */
import "server-only";
import { log } from "@/server/log";
import { makeData, RecordBatch, Struct, Table, tableFromIPC, tableToIPC, vectorFromArray, type Schema } from "apache-arrow";
import { engineCall, type Datasets } from "@/server/storage/datasets";
import { FreshRead } from "@/server/storage/fresh-read";
import type { ObjectStore } from "@/server/storage/object-store";
import { KeyedLock } from "./keyed-lock";
import type { NativeTable } from "@/server/lance/native";

export const ID_SEPARATOR = "$";
/**
 * The row type that hides a deregistered root-level `<name>.lance` directory, whose files stay where they are but which
 * a listing of the root would otherwise find again. Lance's own directory listing hides it by the directory's
 * `.lance-deregistered` marker, which Quiver writes too; the row saves every instance reading one marker per table.
 */
export const DEREGISTERED = "deregistered_table";
const COMPACT_EVERY_WRITES = 100;
/**
 * How long superseded catalog versions are kept. Nothing reads the catalog's history; only a load that began just
 * before another commit reads a version that is no longer the latest, and it takes milliseconds.
 */
const CATALOG_HISTORY_MS = 10_000;

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

interface ManifestRow {
  object_id: string;
  object_type: string;
  location: string | null;
  metadata: string | null;
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

  constructor(rows: ManifestRow[], rootDatasets: string[]) {
    for (const row of rows) this.addRow(row, false);
    for (const name of rootDatasets) if (!this.tables.has(name) && !this.deregistered.has(name)) this.addTable(rootDataset(name), false);
    this.sortedTables.sort(compare);
    for (const list of [...this.childNamespaces.values(), ...this.childTables.values()]) list.sort(compare);
  }

  /** Adds a row; `sorted` keeps the sorted lists in order as it goes (for changes after the first build). */
  addRow(row: ManifestRow, sorted = true) {
    const id = row.object_id.split(ID_SEPARATOR);
    const properties = parseProperties(row.metadata);
    if (row.object_type === "namespace") {
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
    const table = this.tables.get(objectId);
    const namespace = this.namespaces.get(objectId);
    const entry = table ?? namespace;
    if (!entry) return;
    const lists = table ? this.childTables : this.childNamespaces;
    const siblings = lists.get(parentKey(entry.id));
    const name = entry.id[entry.id.length - 1];
    if (siblings) siblings.splice(lowerBound(siblings, name), siblings[lowerBound(siblings, name)] === name ? 1 : 0);
    if (table) {
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

  namespaceExists(id: string[]): boolean {
    return id.length === 0 || this.namespaces.has(id.join(ID_SEPARATOR));
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
  return id.slice(0, -1).join(ID_SEPARATOR);
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
 * Reads and writes `__manifest` rows. The parsed index is cached per dataset version; this process's own commits
 * patch it in place, so a write costs its own row rather than a re-read of the whole catalog.
 */
export class CatalogTable {
  /** `foreign` is the very list `rootDatasets` answered, which stays the same object until the root changes. */
  private cached?: { version: number; foreign: string[]; index: CatalogIndex };
  private loading?: { version: number; foreign: string[]; index: Promise<CatalogIndex> };
  private schema?: Schema;
  private root?: { stamp: string; foreign: string[] };
  private rootReading?: Promise<void>;
  private writes = 0;
  private compacting?: Promise<unknown>;
  /** This process commits to `__manifest` one write at a time, so its own commits patch the cache in order. */
  private readonly writing = new KeyedLock();
  private pending: Array<{ row: NewRow; resolve: (inserted: boolean) => void; reject: (err: unknown) => void }> = [];
  private flushing?: Promise<void>;

  constructor(
    private readonly datasets: Datasets,
    private readonly store: ObjectStore,
  ) {}

  /** The catalog's latest version and the root's datasets, shared by the requests that ask while it is read. */
  private readonly state = new FreshRead(() => Promise.all([this.datasets.catalogVersion(), this.rootDatasets()]));

  /** The index as this process last read it, without a look at the store: it may lag other instances' changes. */
  lastIndex(): CatalogIndex | undefined {
    return this.cached?.index;
  }

  async index(): Promise<CatalogIndex> {
    const [version, foreign] = await this.state.get();
    if (this.cached && this.cached.version === version) {
      // Only root-level datasets came or went (a root-level create or drop): no need to read the rows again.
      if (this.cached.foreign !== foreign) {
        this.cached.index.replaceRootDatasets(this.cached.foreign, foreign);
        this.cached.foreign = foreign;
      }
      return this.cached.index;
    }
    // A load under way is joined only when it reads this version or a later one: one that started before another
    // process's commit would answer without a row the caller may already have been told exists.
    if (!this.loading || this.loading.version < version || this.loading.foreign !== foreign) {
      const load = { version, foreign, index: this.load(version, foreign) };
      this.loading = load;
      const done = () => {
        if (this.loading === load) this.loading = undefined;
      };
      load.index.then(done, done);
    }
    return this.loading.index;
  }

  private async load(version: number, foreign: string[]): Promise<CatalogIndex> {
    let rows: ManifestRow[];
    try {
      rows = await this.readRows(version);
    } catch (err) {
      // A compaction pruned this version while it was read, since commits have followed it: read the latest instead.
      const latest = await this.datasets.catalogVersion();
      if (latest === version) throw err;
      version = latest;
      rows = await this.readRows(version);
    }
    const index = new CatalogIndex(rows, foreign);
    // Own commits may have patched the cache past this version meanwhile.
    if (!this.cached || this.cached.version <= version) this.cached = { version, foreign, index };
    return index;
  }

  /** Applies this process's own commit to the cached index when it directly follows the cached version. */
  private patch(newVersion: number, change: (index: CatalogIndex) => void) {
    if (this.cached && this.cached.version === newVersion - 1) {
      change(this.cached.index);
      this.cached.version = newVersion;
    }
    if (++this.writes % COMPACT_EVERY_WRITES === 0) this.compact();
  }

  /**
   * Every catalog write adds a small fragment and a version to `__manifest`. Compacting the fragments keeps lookups and
   * merge-inserts from slowing down as the catalog grows; pruning superseded versions keeps every request's check for
   * the latest version from listing the whole history (10,000 versions cost about 2 ms of CPU per request). It runs
   * beside requests: Lance rebases either side.
   */
  private compact() {
    this.compacting ??= this.datasets
      .catalogTable()
      .then((table) => table.optimize(Date.now() - CATALOG_HISTORY_MS))
      .catch((err: unknown) => log.error({ err }, "catalog compaction failed"))
      .finally(() => (this.compacting = undefined));
  }

  /**
   * Root-level `*.lance` directories, re-read only when the root's listing changes; the same list while they do not.
   * On an object store the stamp is a clock (asking the store would cost a round trip per request) and a large
   * root's listing takes a request per few thousand entries: so there it is re-read beside the requests, which use
   * the last listing meanwhile. What other tools add at the root is seen within the stamp's few seconds either way.
   */
  private async rootDatasets(): Promise<string[]> {
    const stamp = await this.store.listingStamp("");
    if (this.root?.stamp === stamp) return this.root.foreign;
    this.rootReading ??= this.readRootDatasets(stamp).finally(() => (this.rootReading = undefined));
    if (this.root && this.store.root.kind !== "local") {
      this.rootReading.catch((err: unknown) => log.error({ err }, "listing the data root failed"));
      return this.root.foreign;
    }
    await this.rootReading;
    return this.root!.foreign;
  }

  private async readRootDatasets(stamp: string): Promise<void> {
    const entries = await this.store.listDirectories("");
    const names = entries
      .filter((name) => name.endsWith(".lance"))
      .map((name) => name.slice(0, -".lance".length))
      .sort(compare);
    const previous = this.root?.foreign;
    const same = previous !== undefined && previous.length === names.length && previous.every((name, i) => name === names[i]);
    this.root = { stamp, foreign: same ? previous : names };
  }

  /** The rows at exactly one version, so the index built from them can be patched by the commits that follow it. */
  private async readRows(version: number): Promise<ManifestRow[]> {
    const table = await this.datasets.catalogTableAt(version);
    const query = table.query();
    query.selectColumns(["object_id", "object_type", "location", "metadata"]);
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
    this.schema ??= tableFromIPC(await (await this.datasets.catalogTable()).schema()).schema;
    return this.schema;
  }

  /**
   * Inserts a row unless one with the same object id exists; returns false when it did. Rows that arrive while a
   * commit is under way are committed together in the next one (group commit), so concurrent declares and creates
   * cost one catalog commit between them.
   */
  insert(row: NewRow): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ row, resolve, reject });
      this.flush();
    });
  }

  private flush() {
    if (this.flushing || this.pending.length === 0) return;
    const group = this.pending.splice(0, this.pending.length);
    this.flushing = this.insertGroup(group.map((g) => g.row))
      .then(
        (inserted) => group.forEach((g, i) => g.resolve(inserted[i])),
        (err) => group.forEach((g) => g.reject(err)),
      )
      .finally(() => {
        this.flushing = undefined;
        this.flush();
      });
  }

  private async insertGroup(rows: NewRow[]): Promise<boolean[]> {
    const manifestRows: ManifestRow[] = rows.map((r) => ({
      object_id: r.objectId,
      object_type: r.objectType,
      location: r.location,
      metadata: Object.keys(r.properties).length ? JSON.stringify(r.properties) : null,
    }));
    const file = this.rowsFile(manifestRows, await this.manifestSchema());
    const result = await this.commit(
      (table) => table.mergeInsert(["object_id"]).whenNotMatchedInsertAll().execute(file),
      (r) => (r.numInsertedRows === rows.length ? (index) => manifestRows.forEach((row) => index.addRow(row)) : () => undefined),
    );
    if (result.numInsertedRows === rows.length) return rows.map(() => true);
    // Some ids existed already (another process got there first): the catalog says which rows are ours, since a
    // table row is ours when it names our location and each location is claimed by one request only.
    const index = await this.index();
    return rows.map((r) => {
      const entry = r.objectType === "table" ? index.tables.get(r.objectId) : index.namespaces.get(r.objectId);
      return entry !== undefined && (r.objectType === "namespace" || (entry as TableEntry).location === r.location);
    });
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
    return this.replaceRow({ object_id: name, object_type: "table", location, metadata: Object.keys(properties).length ? JSON.stringify(properties) : null });
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

export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
