/**
 * The catalog: which namespaces and tables a data root holds, and where each table's data lives. Making, finding,
 * listing, renaming and dropping them is here; what is done with one table's data is in server/tables/tables.ts.
 * No HTTP here; callers pass parsed identifiers and options and get plain values or a QuiverError.
 *
 * Longer than 400 lines on purpose: every change to which tables exist keeps the same invariants (one change per
 * name at a time, data before the catalog row, a location released when its row cannot be added, root-level
 * directories as tables), and they are checked here in one class rather than spread over several.
 */
import "server-only";
import { nameProblem, joinIdentifier, DELIMITER } from "@/lib/identifiers";
import { QuiverError, invalidInput, unsupported } from "@/server/errors";
import { CatalogTable, batchRowId, type BatchState, type CatalogIndex, type TableEntry } from "./catalog-table";
import type { BatchChanges } from "./batch-holds";
import { pageOf, type Page } from "./paging";
import { Datasets } from "@/server/lance/datasets";
import type { ArrowBody } from "@/server/lance/arrow-ipc";
import { engineCall } from "@/server/lance/native";
import { KeyedLock } from "./keyed-lock";
import type { TableTurns } from "./table-turns";
import type { ObjectStore } from "@/server/storage/object-store";
import { relativeTo } from "@/server/storage/root";
import { isPlainLocation } from "@/server/lance/dataset-locator";
import { MANAGED_VERSIONING, STABLE_ROW_IDS, wantsStableRowIds } from "@/lib/contract/catalog";
import { config } from "@/server/config";

export type Id = string[];

export interface ReadAt {
  version?: number;
  tag?: string;
  branch?: string;
}

/** Which namespaces or tables a listing may show to its caller. */
export type Visible = (id: Id) => boolean | Promise<boolean>;
const everything: Visible = () => true;

/**
 * A new table's properties with its versioning chosen: as the request asked (`quiver.managed_versioning`, "true" or
 * "false"), or else on when the service makes it the default (QUIVER_MANAGED_VERSIONING), recorded so that the
 * table keeps it when the default changes.
 */
function versioningChosen(properties: Record<string, string>): Record<string, string> {
  if (properties[MANAGED_VERSIONING] === undefined && config.managedVersioning) return { ...properties, [MANAGED_VERSIONING]: "true" };
  return checkedVersioning(properties);
}

function checkedVersioning(properties: Record<string, string>): Record<string, string> {
  for (const key of [MANAGED_VERSIONING, STABLE_ROW_IDS]) {
    const asked = properties[key];
    if (asked !== undefined && asked !== "true" && asked !== "false") throw invalidInput(`property ${key} must be 'true' or 'false', got '${asked}'`);
  }
  return properties;
}

export class Catalog {
  private readonly catalogTable: CatalogTable;
  private readonly locks = new KeyedLock();

  /**
   * `turns` is each table directory's write turn (this process's and its machine's), shared with the table operations: a
   * drop, move or deregister waits for the table's writes, and writes that wait behind it find the table gone.
   */
  constructor(
    private readonly datasets: Datasets,
    store: ObjectStore,
    private readonly turns: TableTurns,
  ) {
    this.catalogTable = new CatalogTable(datasets, store);
  }

  index(): Promise<CatalogIndex> {
    return this.catalogTable.index();
  }

  location(entry: TableEntry): string {
    return this.datasets.uri(entry.location);
  }

  /** The URI of a location in the root, as clients open it. */
  uriOf(location: string): string {
    return this.datasets.uri(location);
  }

  /**
   * Removes a table's directory (a drop, a claim let go, or a write's cleanup in server/tables after a drop elsewhere):
   * listings of the root no longer show it, even one that began before.
   */
  async removeDirectory(location: string) {
    await this.datasets.remove(location);
    this.catalogTable.rootDirectoryRemoved(location);
  }

  // ---------------------------------------------------------------- namespaces

  private async requireNamespace(id: Id, index?: CatalogIndex, listing = false): Promise<CatalogIndex> {
    const idx = index ?? (await this.catalogTable.index({ listing }));
    if (!idx.namespaceExists(id)) throw new QuiverError("NamespaceNotFound", `Namespace '${joinIdentifier(id)}' was not found`);
    return idx;
  }

  async createNamespace(id: Id, mode: "create" | "exist_ok" | "overwrite", properties: Record<string, string>) {
    if (id.length === 0) throw new QuiverError("NamespaceAlreadyExists", "the root namespace always exists");
    return this.locks.run(`ns:${joinIdentifier(id)}`, async () => {
      const index = await this.index();
      await this.requireNamespace(id.slice(0, -1), index);
      const objectId = joinIdentifier(id);
      if (index.tables.has(objectId)) throw new QuiverError("NamespaceAlreadyExists", `a table named '${objectId}' already exists`);
      const existing = index.namespaces.get(objectId);
      if (existing) {
        if (mode === "create") throw new QuiverError("NamespaceAlreadyExists", `Namespace '${objectId}' already exists`);
        if (mode === "exist_ok") return { properties: existing.properties };
        await this.catalogTable.setProperties(objectId, properties);
        return { properties };
      }
      // The row Lance's directory namespace writes for a namespace, inserted as a table's is.
      if (!(await this.catalogTable.insert({ objectId, objectType: "namespace", location: null, properties }))) {
        throw new QuiverError("NamespaceAlreadyExists", `Namespace '${objectId}' already exists`);
      }
      return { properties };
    });
  }

  async listNamespaces(id: Id, pageToken: string | undefined, limit: number, visible: Visible = everything): Promise<Page<string>> {
    const index = await this.requireNamespace(id);
    return pageOf(index.childNamespaces.get(joinIdentifier(id)) ?? [], pageToken, limit, (name) => visible([...id, name]));
  }

  async describeNamespace(id: Id) {
    const index = await this.requireNamespace(id);
    return { properties: id.length === 0 ? {} : index.namespaces.get(joinIdentifier(id))!.properties };
  }

  async namespaceExists(id: Id) {
    await this.requireNamespace(id);
  }

  async dropNamespace(id: Id, mode: "fail" | "skip", behavior: "restrict" | "cascade") {
    if (id.length === 0) throw invalidInput("the root namespace cannot be dropped");
    return this.locks.run(`ns:${joinIdentifier(id)}`, async () => {
      const index = await this.index();
      const objectId = joinIdentifier(id);
      const entry = index.namespaces.get(objectId);
      if (!entry) {
        if (mode === "skip") return { properties: null, dropped: false };
        throw new QuiverError("NamespaceNotFound", `Namespace '${objectId}' was not found`);
      }
      const prefix = objectId + DELIMITER;
      const childNamespaces = [...index.namespaces.keys()].filter((k) => k.startsWith(prefix));
      const childTables = [...index.tables.values()].filter((t) => t.objectId.startsWith(prefix));
      if ((childNamespaces.length || childTables.length) && behavior === "restrict") {
        throw new QuiverError(
          "NamespaceNotEmpty",
          `Namespace '${objectId}' is not empty: it holds ${childTables.length} table(s) and ${childNamespaces.length} namespace(s)`,
        );
      }
      await this.catalogTable.remove([...childTables.map((t) => t.objectId), ...childNamespaces, objectId]);
      for (const t of childTables) await this.turns.run(t.location, () => this.removeDirectory(t.location));
      // As Lance's directory namespace answers a drop: the namespace is gone, and so are its properties.
      return { properties: null, dropped: true };
    });
  }

  // ---------------------------------------------------------------- table listings

  async listTables(
    namespace: Id,
    pageToken: string | undefined,
    limit: number,
    includeDeclared: boolean,
    visible: Visible = everything,
  ): Promise<Page<string>> {
    const index = await this.requireNamespace(namespace, undefined, true);
    const prefix = namespace.length ? joinIdentifier(namespace) + DELIMITER : "";
    const names = index.childTables.get(joinIdentifier(namespace)) ?? [];
    return pageOf(names, pageToken, limit, async (name) => {
      const entry = index.tables.get(prefix + name)!;
      return (await visible(entry.id)) && (includeDeclared || this.datasets.hasData(entry.location));
    });
  }

  async listAllTables(pageToken: string | undefined, limit: number, includeDeclared: boolean, visible: Visible = everything): Promise<Page<Id>> {
    const index = await this.catalogTable.index({ listing: true });
    const page = await pageOf(index.sortedTables, pageToken, limit, async (key) => {
      const entry = index.tables.get(key)!;
      return (await visible(entry.id)) && (includeDeclared || this.datasets.hasData(entry.location));
    });
    return { items: page.items.map((k) => index.tables.get(k)!.id), pageToken: page.pageToken };
  }

  /**
   * One page of a namespace's children of one kind, optionally filtered by a case-insensitive substring, with each
   * table's state, for the console's namespace page; a namespace says whether it holds anything the caller can see,
   * so that the console's tree offers to open only the ones that do.
   */
  async entries(
    namespace: Id,
    kind: "namespace" | "table",
    filter: string,
    pageToken: string | undefined,
    limit: number,
    visible: { namespaces: Visible; tables: Visible } = { namespaces: everything, tables: everything },
  ) {
    const index = await this.requireNamespace(namespace, undefined, true);
    const childrenOf = (kind: "namespace" | "table", parent: Id) =>
      (kind === "namespace" ? index.childNamespaces : index.childTables).get(joinIdentifier(parent)) ?? [];
    const someVisible = async (names: string[], parent: Id, isVisible: Visible) => {
      for (const name of names) if (await isVisible([...parent, name])) return true;
      return false;
    };
    const needle = filter.toLowerCase();
    const visibleHere = kind === "namespace" ? visible.namespaces : visible.tables;
    const page = await pageOf(
      childrenOf(kind, namespace),
      pageToken,
      limit,
      (name) => (!needle || name.toLowerCase().includes(needle)) && visibleHere([...namespace, name]),
    );
    const items = await Promise.all(
      page.items.map(async (name) => {
        const id = [...namespace, name];
        if (kind === "namespace")
          return {
            name,
            kind,
            has_children:
              (await someVisible(childrenOf("namespace", id), id, visible.namespaces)) || (await someVisible(childrenOf("table", id), id, visible.tables)),
          };
        const entry = index.tables.get(joinIdentifier(id))!;
        return { name, kind, declared_only: await this.isDeclaredOnly(entry) };
      }),
    );
    return { items, pageToken: page.pageToken };
  }

  /** Namespaces and tables whose full identifier contains the query, for the console's global search. */
  async search(query: string, limit: number, visibleNamespace: Visible, visibleTable: Visible) {
    const index = await this.catalogTable.index({ listing: true });
    const needle = query.toLowerCase();
    const namespaces: Id[] = [];
    for (const ns of [...index.namespaces.values()].sort((a, b) => (a.objectId < b.objectId ? -1 : 1))) {
      if (namespaces.length >= limit) break;
      if (ns.objectId.toLowerCase().includes(needle) && (await visibleNamespace(ns.id))) namespaces.push(ns.id);
    }
    const tables: Id[] = [];
    for (const key of index.sortedTables) {
      if (tables.length >= limit) break;
      if (key.toLowerCase().includes(needle) && (await visibleTable(index.tables.get(key)!.id))) tables.push(index.tables.get(key)!.id);
    }
    return { namespaces, tables };
  }

  // ---------------------------------------------------------------- table metadata

  async resolve(id: Id, index?: CatalogIndex): Promise<TableEntry> {
    if (id.length === 0) throw invalidInput("a table identifier needs at least a table name");
    const idx = index ?? (await this.index());
    const entry = idx.tables.get(joinIdentifier(id)) ?? (await this.unlistedRootTable(id, idx));
    if (entry && (await this.stillThere(entry))) return entry;
    if (!idx.namespaceExists(id.slice(0, -1))) throw new QuiverError("NamespaceNotFound", `Namespace '${joinIdentifier(id.slice(0, -1))}' was not found`);
    throw new QuiverError("TableNotFound", `Table '${joinIdentifier(id)}' was not found`);
  }

  /** The table as this process's last look at the catalog named it, or, if that look did not, as the catalog does now. */
  async knownEntry(id: Id): Promise<TableEntry> {
    return this.catalogTable.lastIndex()?.tables.get(joinIdentifier(id)) ?? (await this.resolve(id));
  }

  /**
   * Resolves a table by a fresh look at the catalog while `early` already works on the table that this process's last
   * look named, so that the two reads from the store overlap instead of following each other. What `early` answers
   * (or throws) stands when the fresh look names the same table at the same location; otherwise `early` runs again
   * on what the fresh look names. `early` must change nothing: it may run on a table that was meanwhile dropped.
   */
  async resolveWith<T>(id: Id, early: (entry: TableEntry) => Promise<T>): Promise<{ entry: TableEntry; value: T; index: CatalogIndex }> {
    const guess = id.length ? this.catalogTable.lastIndex()?.tables.get(joinIdentifier(id)) : undefined;
    const settled = guess?.registered
      ? early(guess).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        )
      : null;
    const index = await this.index();
    const entry = await this.resolve(id, index);
    if (settled === null || entry.location !== guess!.location || !entry.registered) return { entry, index, value: await early(entry) };
    const outcome = await settled;
    if ("error" in outcome) throw outcome.error;
    return { entry, index, value: outcome.value };
  }

  /**
   * A root-level table another tool made with a plain connection since the root was last listed: its `<name>.lance`
   * directory holds a dataset and no catalog row hides it.
   */
  private async unlistedRootTable(id: Id, index: CatalogIndex): Promise<TableEntry | undefined> {
    if (id.length !== 1 || index.deregistered.has(id[0]) || index.namespaces.has(id[0]) || nameProblem(id[0])) return undefined;
    const location = `${id[0]}.lance`;
    if (!(await this.datasets.hasData(location))) return undefined;
    return { objectId: id[0], id, location, properties: {}, registered: false };
  }

  async isDeclaredOnly(entry: TableEntry): Promise<boolean> {
    return !(await this.datasets.hasData(entry.location));
  }

  /**
   * True when the table is declared and its first write is still to come. A first write goes only into a location a
   * declare reserved: a root-level directory with neither data nor the declare's marker is another request's create
   * under way (its directory is made before its data), and writing a first version there too would race it.
   */
  async awaitsFirstWrite(entry: TableEntry, conflict: () => QuiverError): Promise<boolean> {
    if (!(await this.isDeclaredOnly(entry))) return false;
    if (!(await this.datasets.isReserved(entry.location))) throw conflict();
    return true;
  }

  /**
   * Whether a table the index lists is there. A root-level dataset that no catalog row names is known from a
   * listing of the root, which on an object store is a few seconds old: one dropped meanwhile is not in the way.
   */
  private async stillThere(entry: TableEntry): Promise<boolean> {
    return entry.registered || (await this.datasets.directoryExists(entry.location));
  }

  async declareTable(id: Id, requestedLocation: string | undefined, properties: Record<string, string>) {
    const chosen = versioningChosen(properties);
    return this.locks.run(`t:${joinIdentifier(id)}`, async () => {
      const fresh = id.length > 1 && !requestedLocation ? this.chooseLocation(id, undefined) : undefined;
      // A generated location is new, so it is reserved while the catalog is checked (one store round trip less on
      // the way), and let go if the check refuses the declare.
      const reserving = fresh && this.datasets.reserve(fresh.location, true);
      reserving?.catch(() => undefined);
      const { objectId, location, generated } = await this.declarable(id, requestedLocation, fresh).catch(async (err: unknown) => {
        if (reserving && (await reserving.catch(() => false))) await this.removeDirectory(fresh.location);
        throw err;
      });
      if (!(await (reserving ?? this.datasets.reserve(location, generated)))) {
        throw new QuiverError("TableAlreadyExists", `the location of table '${objectId}' is already in use`);
      }
      await this.catalogueClaimed(objectId, location, chosen);
      return { location: this.datasets.uri(location), properties: chosen };
    });
  }

  /**
   * Where a table may be declared: its namespace exists, nothing has its name, and the location is allowed (or is
   * the `chosen` one, generated already). Changes nothing.
   */
  async declarable(
    id: Id,
    requestedLocation: string | undefined,
    chosen?: { location: string; generated: boolean },
  ): Promise<{ objectId: string; location: string; generated: boolean }> {
    if (id.length === 0) throw invalidInput("a table identifier needs at least a table name");
    const index = await this.index();
    await this.requireNamespace(id.slice(0, -1), index);
    const objectId = joinIdentifier(id);
    const listed = index.tables.get(objectId);
    if (listed && (await this.stillThere(listed))) throw new QuiverError("TableAlreadyExists", `Table '${objectId}' already exists`);
    if (index.namespaces.has(objectId)) throw new QuiverError("TableAlreadyExists", `a namespace named '${objectId}' already exists`);
    return { objectId, ...(chosen ?? this.chooseLocation(id, requestedLocation)) };
  }

  /** A declare of a batch that changes the catalog, checked as declareTable checks it and with its location chosen; nothing changed. */
  async batchDeclare(id: Id, requestedLocation: string | undefined, properties: Record<string, string>): Promise<BatchChanges["declares"][number]> {
    const { objectId, location, generated } = await this.declarable(id, requestedLocation);
    return { id, objectId, location, generated, properties: versioningChosen(properties) };
  }

  /** A deregister of a batch that changes the catalog: the table as it is now; nothing changed. */
  async batchDeregister(id: Id): Promise<BatchChanges["deregisters"][number]> {
    const entry = await this.resolve(id);
    const hides = entry.id.length === 1 && entry.location === `${entry.objectId}.lance`;
    return { id, objectId: entry.objectId, location: entry.location, hides, properties: entry.properties };
  }

  /** A batch's decision as a fresh look at the catalog finds it (batch-finish.ts). */
  async batchDecision(hold: string): Promise<BatchState | undefined> {
    return (await this.index()).batches.get(batchRowId(hold))?.state;
  }

  reserveForBatch(declare: BatchChanges["declares"][number], hold: string): Promise<boolean> {
    return this.datasets.reserveFor(declare.location, declare.generated, hold);
  }

  async releaseBatchReservation(declare: BatchChanges["declares"][number], hold: string): Promise<void> {
    if (await this.datasets.reservedBy(declare.location, hold)) await this.removeDirectory(declare.location);
  }

  /**
   * Decides a batch in one catalog commit (CatalogTable.decideBatch): committed, its declared tables' rows go in and
   * its deregistered tables' rows go (or become the rows that hide their directories), where the catalog is still as
   * the batch found it when it was checked.
   */
  decideBatch(hold: string, state: BatchState, changes: BatchChanges): Promise<{ state: BatchState } | { conflict: string }> {
    const change = {
      declares: changes.declares,
      hides: changes.deregisters.filter((d) => d.hides).map((d) => d.objectId),
      removes: changes.deregisters.filter((d) => !d.hides).map((d) => d.objectId),
    };
    return this.catalogTable.decideBatch(hold, state, change, (index) => this.batchConflict(index, changes));
  }

  /** What in the catalog now stands in the way of a batch's catalog changes, as checked when the batch was. */
  private async batchConflict(index: CatalogIndex, changes: BatchChanges): Promise<string | null> {
    for (const declare of changes.declares) {
      if (!index.namespaceExists(declare.id.slice(0, -1))) return `the namespace of table '${declare.objectId}' no longer exists`;
      const listed = index.tables.get(declare.objectId);
      // The root's listing shows the batch's own reserved directory as a table without a row: it is in the way only with data in it.
      const own = listed && !listed.registered && listed.location === declare.location;
      const inWay = listed && (own ? await this.datasets.hasData(listed.location) : await this.stillThere(listed));
      if (inWay || index.namespaces.has(declare.objectId)) return `table '${declare.objectId}' was made by another request`;
      const holder = index.atLocation.get(declare.location);
      if (holder && holder !== declare.objectId) return `the location of table '${declare.objectId}' is in use by table '${holder}'`;
    }
    for (const deregister of changes.deregisters) {
      const entry = index.tables.get(deregister.objectId);
      if (!entry || entry.location !== deregister.location) return `table '${deregister.objectId}' was changed by another request`;
    }
    return null;
  }

  /** Marks each directory a committed batch deregistered, as deregisterTable does, in its table's turn. */
  async afterBatchDecided(changes: BatchChanges): Promise<void> {
    for (const { location } of changes.deregisters) await this.turns.run(location, () => this.datasets.markDeregistered(location));
  }

  /** Takes back a declare whose table has had no write since: its row and reserved location go. */
  async undeclareTable(id: Id) {
    return this.locks.run(`t:${joinIdentifier(id)}`, async () => {
      const entry = await this.resolve(id);
      await this.turns.run(entry.location, async () => {
        if (!(await this.isDeclaredOnly(entry))) {
          throw new QuiverError("ConcurrentModification", `table '${entry.objectId}' was written after it was declared, so it is kept`);
        }
        if (entry.registered) await this.catalogTable.remove([entry.objectId]);
        await this.removeDirectory(entry.location);
      });
    });
  }

  /**
   * Adds the catalog row of a table whose location this request claimed. When the row cannot be added, or another
   * request catalogued the name first, the location is released so that nothing of this request is left.
   */
  private async catalogueClaimed(objectId: string, location: string, properties: Record<string, string>) {
    const inserted = await this.catalogTable.insert({ objectId, objectType: "table", location, properties }).catch(async (err) => {
      await this.removeDirectory(location);
      throw err;
    });
    if (!inserted) {
      await this.removeDirectory(location);
      throw new QuiverError("TableAlreadyExists", `Table '${objectId}' already exists`);
    }
  }

  /**
   * The directory for a new table, `generated` when the catalog chose a nested table's at random; a client may name
   * one only as a plain, unused entry of the data root.
   */
  private chooseLocation(id: Id, requested: string | undefined): { location: string; generated: boolean } {
    const computed = Datasets.locationFor(joinIdentifier(id), id.length > 1);
    if (requested === undefined || requested === "") return { location: computed, generated: id.length > 1 };
    const relative = relativeTo(this.datasets.root, requested);
    if (relative === null) throw invalidInput(`location '${requested}' is not allowed: it is outside the data root`);
    if (relative === computed || (id.length === 1 && relative === `${id[0]}.lance`)) return { location: relative, generated: false };
    if (id.length > 1 && /^[0-9a-f]{8}_/.test(relative) && relative.slice(9) === joinIdentifier(id)) {
      this.datasets.checkLocation(relative);
      return { location: relative, generated: false };
    }
    throw invalidInput(`location '${requested}' is not allowed: tables live at locations the catalog chooses inside the data root`);
  }

  async createTable(id: Id, body: ArrowBody, mode: "create" | "exist_ok" | "overwrite", properties: Record<string, string>) {
    if (id.length === 0) throw invalidInput("a table identifier needs at least a table name");
    const chosen = versioningChosen(properties);
    return this.locks.run(`t:${joinIdentifier(id)}`, async () => {
      const index = await this.index();
      await this.requireNamespace(id.slice(0, -1), index);
      const objectId = joinIdentifier(id);
      if (index.namespaces.has(objectId)) throw new QuiverError("TableAlreadyExists", `a namespace named '${objectId}' already exists`);
      const existing = index.tables.get(objectId);
      if (existing && (await this.stillThere(existing))) {
        const declaredOnly = await this.awaitsFirstWrite(
          existing,
          () => new QuiverError("TableAlreadyExists", `Table '${objectId}' is being created by another request`),
        );
        if (!declaredOnly && mode === "create") throw new QuiverError("TableAlreadyExists", `Table '${objectId}' already exists`);
        if (!declaredOnly && mode === "exist_ok") {
          const table = await this.datasets.open(existing.location);
          return { entry: existing, version: await engineCall("read the version", () => table.version()), made: false };
        }
        const table = await this.datasets.create(existing.location, body, declaredOnly ? "create" : "overwrite", {
          stableRowIds: wantsStableRowIds({ ...existing.properties, ...chosen }, config.stableRowIds),
        });
        if (Object.keys(properties).length && existing.registered) await this.catalogTable.setProperties(objectId, properties);
        return {
          entry: { ...existing, properties: Object.keys(properties).length ? properties : existing.properties },
          version: await table.version(),
          made: false,
        };
      }
      const location = Datasets.locationFor(objectId, id.length > 1);
      if (!(await this.datasets.claim(location, id.length > 1)))
        throw new QuiverError("TableAlreadyExists", `the location of table '${objectId}' is already in use`);
      // The data is written before the catalog row, so a crash in between leaves no catalogued table without its data.
      const table = await this.datasets
        .create(location, body, "create", { stableRowIds: wantsStableRowIds(chosen, config.stableRowIds) })
        .catch(async (err) => {
          // A root-level location is listed as a table as soon as it exists, so a create in another process may have
          // written its first version here as into a declared table: the table then exists, and is not ours to undo.
          if (!(err instanceof QuiverError && err.codeName === "TableAlreadyExists")) await this.removeDirectory(location);
          throw err;
        });
      await this.catalogueClaimed(objectId, location, chosen);
      const entry: TableEntry = { objectId, id, location, properties: chosen, registered: true };
      return { entry, version: await table.version(), made: true };
    });
  }

  async dropTable(id: Id) {
    return this.locks.run(`t:${joinIdentifier(id)}`, async () => {
      const index = await this.index();
      // As in Lance's directory namespace, a deregistered root-level directory can still be dropped, files and all.
      const entry: TableEntry =
        id.length === 1 && index.deregistered.has(id[0]) && !index.tables.has(id[0])
          ? { objectId: id[0], id, location: `${id[0]}.lance`, properties: {}, registered: true }
          : await this.resolve(id, index);
      return this.turns.run(entry.location, async () => {
        if (entry.registered) await this.catalogTable.remove([entry.objectId]);
        await this.removeDirectory(entry.location);
        return { entry };
      });
    });
  }

  /**
   * Catalogs an existing Lance dataset under the root as a table, as Lance's directory namespace does: the location
   * is relative to the root, holds a dataset, and is no other table's. Overwrite first deregisters a table already of
   * that name (keeping its files).
   */
  async registerTable(id: Id, requestedLocation: string, mode: "create" | "overwrite", properties: Record<string, string>) {
    if (id.length === 0) throw invalidInput("a table identifier needs at least a table name");
    const location = registrableLocation(requestedLocation);
    const objectId = joinIdentifier(id);
    return this.locks.run(`t:${objectId}`, async () => {
      let index = await this.index();
      await this.requireNamespace(id.slice(0, -1), index);
      if (index.namespaces.has(objectId)) throw new QuiverError("TableAlreadyExists", `a namespace named '${objectId}' already exists`);
      const existing = index.tables.get(objectId);
      if (existing && (await this.stillThere(existing))) {
        if (mode === "create") throw new QuiverError("TableAlreadyExists", `Table '${objectId}' already exists`);
        await this.deregisterEntry(existing);
        index = await this.index();
      }
      // A root-level `<name>.lance` directory with data is the root's table `<name>` unless it was deregistered, whether
      // or not this instance's listing of the root (a few seconds old on an object store) shows it yet.
      const rootName = /^([^/]+)\.lance$/.exec(location)?.[1];
      if (rootName !== undefined && !index.deregistered.has(rootName) && (await this.datasets.hasData(location))) {
        throw new QuiverError(
          "TableAlreadyExists",
          rootName === objectId ? `Table '${objectId}' already exists` : `location '${location}' is in use by table '${rootName}'`,
        );
      }
      const holder = [...index.tables.values()].find(
        (t) => t.location === location || location.startsWith(`${t.location}/`) || t.location.startsWith(`${location}/`),
      );
      if (holder) throw new QuiverError("TableAlreadyExists", `location '${location}' is in use by table '${holder.objectId}'`);
      if (!(await this.datasets.hasData(location))) throw invalidInput(`location '${location}' holds no Lance dataset (no committed version under it)`);
      const ownDirectory = id.length === 1 && location === `${id[0]}.lance`;
      if (ownDirectory && index.deregistered.has(objectId)) {
        await this.catalogTable.unhideRootTable(objectId, location, properties);
      } else if (!(await this.catalogTable.insert({ objectId, objectType: "table", location, properties }))) {
        throw new QuiverError("TableAlreadyExists", `Table '${objectId}' already exists`);
      }
      // Another name for a deregistered root-level directory leaves that directory hidden from Lance's own listing.
      const hidesRootDirectory = !ownDirectory && /^[^/]+\.lance$/.test(location);
      if (!hidesRootDirectory) await this.datasets.unmarkDeregistered(location);
      return { location: this.datasets.uri(location), properties };
    });
  }

  /**
   * Sets and removes a table's properties in its catalog row; `quiver.managed_versioning` takes "true" or "false",
   * and removing it leaves the table unmanaged. A root-level table another tool made has no row to hold them.
   */
  async updateTableProperties(id: Id, set: Record<string, string>, remove: string[]) {
    const both = remove.filter((key) => key in set);
    if (both.length) throw invalidInput(`a property cannot be both set and removed: ${both.join(", ")}`);
    return this.locks.run(`t:${joinIdentifier(id)}`, async () => {
      const entry = await this.resolve(id);
      if (!entry.registered) {
        throw new QuiverError(
          "InvalidTableState",
          `table '${entry.objectId}' is a directory another tool made at the root, with no catalog row to hold properties: register it first`,
        );
      }
      const properties = checkedVersioning({ ...Object.fromEntries(Object.entries(entry.properties).filter(([key]) => !remove.includes(key))), ...set });
      if (properties[STABLE_ROW_IDS] !== entry.properties[STABLE_ROW_IDS] && !(await this.isDeclaredOnly(entry)))
        throw invalidInput(`${STABLE_ROW_IDS} is fixed when a table is first written: Lance cannot give an existing table stable row ids`);
      await this.catalogTable.setProperties(entry.objectId, properties);
      return { entry: { ...entry, properties } };
    });
  }

  /** Takes a table out of the catalog and keeps its files, which RegisterTable can catalog again. */
  async deregisterTable(id: Id) {
    return this.locks.run(`t:${joinIdentifier(id)}`, async () => {
      const entry = await this.resolve(id);
      await this.deregisterEntry(entry);
      return { entry };
    });
  }

  private async deregisterEntry(entry: TableEntry) {
    await this.turns.run(entry.location, async () => {
      await this.datasets.markDeregistered(entry.location);
      // A root-level directory of its own would be listed again as a table: its row becomes the one that hides it.
      if (entry.id.length === 1 && entry.location === `${entry.objectId}.lance`) await this.catalogTable.hideRootTable(entry.objectId);
      else if (entry.registered) await this.catalogTable.remove([entry.objectId]);
    });
  }

  /** Renames a table, or moves it to another namespace; a root-level table keeps `<name>.lance` as its directory. */
  async renameTable(id: Id, newName: string, newNamespace?: Id) {
    const problem = nameProblem(newName);
    if (problem) throw invalidInput(`new_table_name: ${problem}`);
    const target = [...(newNamespace ?? id.slice(0, -1)), newName];
    return this.locks.run(`t:${joinIdentifier(id)}`, async () => {
      const index = await this.index();
      const entry = await this.resolve(id, index);
      await this.requireNamespace(target.slice(0, -1), index);
      if (index.tables.has(joinIdentifier(target)) || index.namespaces.has(joinIdentifier(target)))
        throw new QuiverError("TableAlreadyExists", `Table '${joinIdentifier(target)}' already exists`);
      if ((id.length === 1) !== (target.length === 1)) throw unsupported("moving a table between the root namespace and a child namespace is not supported");
      let location = entry.location;
      if (target.length === 1) {
        location = `${newName}.lance`;
        if (await this.datasets.directoryExists(location))
          throw new QuiverError("TableAlreadyExists", `the location of table '${newName}' holds the files of a deregistered table`);
        await this.turns.run(entry.location, () => this.datasets.move(entry.location, location));
        this.catalogTable.rootDirectoryRemoved(entry.location);
      }
      if (entry.registered || target.length > 1) {
        await this.catalogTable.insert({ objectId: joinIdentifier(target), objectType: "table", location, properties: entry.properties });
        if (entry.registered) await this.catalogTable.remove([entry.objectId]);
      }
      this.datasets.forget(entry.location);
      return { id: target };
    });
  }
}

/** A RegisterTable location: a path relative to the data root, as Lance's directory namespace requires. */
function registrableLocation(location: string): string {
  const trimmed = location.replace(/\/+$/, "");
  if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed)) throw invalidInput(`location '${location}' is not allowed: give it relative to the data root, not as a URI`);
  if (trimmed.startsWith("/")) throw invalidInput(`location '${location}' is not allowed: give it relative to the data root, not as an absolute path`);
  if (!isPlainLocation(trimmed)) {
    throw invalidInput(`location '${location}' is not allowed: each part must be letters, digits, '_', '.', '$' or '-', and not '.', '..' or empty`);
  }
  const first = trimmed.split("/")[0];
  if (first === "__manifest" || first.startsWith(".")) throw invalidInput(`location '${location}' is not allowed: it is the service's own data`);
  return trimmed;
}
