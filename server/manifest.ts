/**
 * The catalog index: the directory namespace's `__manifest` dataset (one row per namespace and table), read into
 * sorted in-memory indexes that are rebuilt only when the dataset's version changes, plus root-level `*.lance`
 * directories that other writers made without a manifest row (as Lance's own directory listing finds them).
 */
import { promises as fs } from "node:fs";
import { makeData, RecordBatch, Struct, Table, tableFromIPC, tableToIPC, vectorFromArray, type Schema } from "apache-arrow";
import { engineCall, Storage } from "./storage";

export const ID_SEPARATOR = "$";

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

  constructor(rows: ManifestRow[], rootDatasets: string[]) {
    for (const row of rows) {
      const id = row.object_id.split(ID_SEPARATOR);
      const properties = parseProperties(row.metadata);
      if (row.object_type === "namespace") {
        this.namespaces.set(row.object_id, { objectId: row.object_id, id, properties });
      } else if (row.object_type === "table" && row.location) {
        this.tables.set(row.object_id, { objectId: row.object_id, id, location: row.location, properties, registered: true });
      }
    }
    for (const name of rootDatasets) {
      if (!this.tables.has(name)) {
        this.tables.set(name, { objectId: name, id: [name], location: `${name}.lance`, properties: {}, registered: false });
      }
    }
    for (const ns of this.namespaces.values()) push(this.childNamespaces, parentKey(ns.id), ns.id[ns.id.length - 1]);
    for (const t of this.tables.values()) {
      push(this.childTables, parentKey(t.id), t.id[t.id.length - 1]);
      this.sortedTables.push(t.objectId);
    }
    this.sortedTables.sort(compare);
    for (const list of [...this.childNamespaces.values(), ...this.childTables.values()]) list.sort(compare);
  }

  namespaceExists(id: string[]): boolean {
    return id.length === 0 || this.namespaces.has(id.join(ID_SEPARATOR));
  }
}

function push(map: Map<string, string[]>, key: string, value: string) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
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

/** Reads and writes `__manifest` rows; caches the parsed index per dataset version. */
export class Manifest {
  private cached?: { version: number; rootStamp: number; index: CatalogIndex };
  private loading?: Promise<CatalogIndex>;
  private schema?: Schema;

  constructor(private readonly storage: Storage) {}

  async index(): Promise<CatalogIndex> {
    const table = await this.storage.manifest();
    const [version, rootStamp] = await Promise.all([table.version(), this.rootStamp()]);
    if (this.cached && this.cached.version === version && this.cached.rootStamp === rootStamp) return this.cached.index;
    this.loading ??= (async () => {
      try {
        const [rows, rootDatasets] = await Promise.all([this.readRows(), this.rootDatasets()]);
        const index = new CatalogIndex(rows, rootDatasets);
        this.cached = { version, rootStamp, index };
        return index;
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  private async rootStamp(): Promise<number> {
    return (await fs.stat(this.storage.root)).mtimeMs;
  }

  private async rootDatasets(): Promise<string[]> {
    const entries = await fs.readdir(this.storage.root, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && e.name.endsWith(".lance")).map((e) => e.name.slice(0, -".lance".length));
  }

  private async readRows(): Promise<ManifestRow[]> {
    const table = await this.storage.manifest();
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
      for (const row of tableFromIPC(buffer)) rows.push(row.toJSON() as unknown as ManifestRow);
    }
    return rows;
  }

  private async manifestSchema(): Promise<Schema> {
    this.schema ??= tableFromIPC(await (await this.storage.manifest()).schema()).schema;
    return this.schema;
  }

  /** Inserts a row unless one with the same object id exists; returns false when it did. */
  async insert(row: { objectId: string; objectType: "namespace" | "table"; location: string | null; properties: Record<string, string> }): Promise<boolean> {
    const schema = await this.manifestSchema();
    const values: Record<string, unknown> = {
      object_id: row.objectId,
      object_type: row.objectType,
      location: row.location,
      metadata: Object.keys(row.properties).length ? JSON.stringify(row.properties) : null,
      base_objects: null,
    };
    const children = schema.fields.map((f) => vectorFromArray([values[f.name] ?? null], f.type).data[0]);
    const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: 1, nullCount: 0, children }));
    const file = Buffer.from(tableToIPC(new Table([batch]), "file"));
    const table = await this.storage.manifest();
    const result = await engineCall("update the catalog", () => table.mergeInsert(["object_id"]).whenNotMatchedInsertAll().execute(file));
    return result.numInsertedRows === 1;
  }

  async setProperties(objectId: string, properties: Record<string, string>): Promise<void> {
    const table = await this.storage.manifest();
    const json = Object.keys(properties).length ? sqlString(JSON.stringify(properties)) : "NULL";
    await engineCall("update the catalog", () => table.update(`object_id = ${sqlString(objectId)}`, [["metadata", json]]));
  }

  async remove(objectIds: string[]): Promise<void> {
    if (objectIds.length === 0) return;
    const table = await this.storage.manifest();
    const list = objectIds.map(sqlString).join(", ");
    await engineCall("update the catalog", () => table.delete(`object_id IN (${list})`));
  }
}

export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
