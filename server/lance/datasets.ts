/**
 * The Lance datasets of one data root, laid out as a Lance directory namespace, on a local directory or an object
 * store. A table's dataset lives under its catalog `location` (`<name>.lance` at the root, `<hash>_<ns$...$name>`
 * below it, as Lance's own directory namespace names them); the engine opens it by that location through the
 * process's dataset locator, and everything else about it is read through the root's store.
 */
import "server-only";
import { LRUCache } from "lru-cache";
import { randomBytes } from "node:crypto";
import { connectNative, engineCall, type NativeConnection, type NativeTable } from "./native";
import { QuiverError, fromArrowWriteError, invalidInput } from "@/server/errors";
import type { ArrowBody } from "./arrow-ipc";
import { datasetLocator, isPlainLocation } from "./dataset-locator";
import { guardedManifest, publishedHere, withCommitGuard, type CommitGuard } from "./engine-versions";
import type { TableFiles } from "./table-files";
import { KeyedFreshRead } from "@/server/storage/fresh-read";
import { OutsideRootError, type ObjectStore } from "@/server/storage/object-store";
import { prepareStore } from "@/server/storage/stores";
import { childUri, type DataRoot } from "@/server/storage/root";
import { FIRST_VERSION_KEYS, latestManifestIn, type LatestManifest } from "./version-manifest";

const OPEN_HANDLES = 4096;
/** Handles fixed at one version are kept for the versions read most recently; each holds its manifest in memory. */
const VERSION_HANDLES = 256;

/** What a declare leaves in a table's directory until its first write: Lance's directory namespace's own marker. */
export const RESERVED_MARKER = ".lance-reserved";
/** What a deregister leaves in a table's directory, whose files it keeps: Lance's directory namespace's own marker. */
export const DEREGISTERED_MARKER = ".lance-deregistered";
/**
 * What a create leaves in a new table's directory while it writes the first version, so that no other request
 * takes the location meanwhile. It stays after the first version, where it means nothing.
 */
const CLAIM_MARKER = ".quiver-claim";
const MANIFEST_DIR = "__manifest";

export class Datasets {
  private readonly rootId: string;
  /** Open handles on the most recently used datasets: a root with many tables does not keep every one open. */
  private readonly handles = new LRUCache<string, Promise<NativeTable>>({ max: OPEN_HANDLES });
  /** Commit handles, each with the stamp of the directory it was opened on (`directoryStamp`). */
  private readonly commitHandles = new LRUCache<string, Promise<{ table: NativeTable; stamp: string | null }>>({ max: OPEN_HANDLES });
  /**
   * Handles fixed at one version, by the version's manifest (its key and etag, so that a table made again at the same
   * location is never read through the old one's): a version never changes, so one handle serves every read of it,
   * and a handle fixed at a version asks the store nothing at its calls.
   */
  private readonly versionHandles = new LRUCache<string, Promise<NativeTable>>({ max: VERSION_HANDLES });
  private latestConnection?: Promise<NativeConnection>;
  private lazyConnection?: Promise<NativeConnection>;
  private commitConnection?: Promise<NativeConnection>;
  private catalogCommits?: Promise<NativeTable>;
  private namespaceConnection?: Promise<NativeConnection>;
  private readonly latestManifests = new KeyedFreshRead<LatestManifest | null>();

  constructor(
    readonly root: DataRoot,
    private readonly store: ObjectStore,
    private readonly storageOptions: Record<string, string>,
  ) {
    this.rootId = datasetLocator.register(root, store, storageOptions);
  }

  /** Creates the directory namespace's `__manifest` dataset when it does not exist yet. */
  async init(): Promise<void> {
    await prepareStore(this.store);
    if ((await this.store.list(`${MANIFEST_DIR}/_versions/`, 1)).length === 0) {
      // The engine creates `__manifest` (with its indexes) on its first namespace write.
      const conn = await this.namespaces();
      const scratch = [`__quiver_init_${randomBytes(4).toString("hex")}`];
      await engineCall("create the catalog", () => conn.createNamespace(scratch, "create", {}));
      await engineCall("create the catalog", () => conn.dropNamespace(scratch, "skip", "restrict"));
    }
  }

  /** The engine's manifest-backed connection, used for namespace writes so their layout is the engine's own. */
  namespaces(): Promise<NativeConnection> {
    this.namespaceConnection ??= connectNative(this.root.uri, { manifestEnabled: true, readConsistencyInterval: 0, storageOptions: this.storageOptions });
    return this.namespaceConnection;
  }

  /** Handles from this connection see other writers' commits at every call. */
  private latest(): Promise<NativeConnection> {
    this.latestConnection ??= datasetLocator.connect({ readConsistencyInterval: 0 });
    return this.latestConnection;
  }

  /** Handles from this connection move to a newer version only when told to (or by their own commits). */
  private lazy(): Promise<NativeConnection> {
    this.lazyConnection ??= datasetLocator.connect({});
    return this.lazyConnection;
  }

  /**
   * As lazy, and every commit through its handles is published by Quiver (engine-versions.ts), with what the guard of
   * the write under way carries (`guarded`).
   */
  private commits(): Promise<NativeConnection> {
    this.commitConnection ??= datasetLocator.connect({ commits: true });
    return this.commitConnection;
  }

  /** Runs a commit through the location's commit handle under `guard`: what it carries, and what it must pass. */
  guarded<T>(location: string, guard: CommitGuard, work: () => Promise<T>): Promise<T> {
    return withCommitGuard(this.root, location, guard, work);
  }

  /** A manifest Quiver writes itself, as the commit guarded at its location publishes it (engine-versions.ts). */
  guardedManifest(files: TableFiles, directory: string, version: number, content: Buffer): Promise<Buffer> {
    return guardedManifest(this.root, files, directory, version, content);
  }

  /** The URI of a location, as clients and Lance's own tools open it. */
  uri(location: string): string {
    return childUri(this.root, this.checkLocation(location));
  }

  /** Refuses anything that is not a plain path inside the root (a registered table may sit below its top level). */
  checkLocation(location: string): string {
    if (!isPlainLocation(location)) {
      throw new QuiverError("InvalidTableState", `table location '${location}' is not inside the data root`);
    }
    return location;
  }

  /**
   * Runs a look at the store for one table's location, refusing a location that leads out of the root: a symbolic
   * link planted where a table's directory belongs is refused rather than read or written through.
   */
  private async inside<T>(location: string, look: () => Promise<T>): Promise<T> {
    this.checkLocation(location);
    try {
      return await look();
    } catch (err) {
      if (err instanceof OutsideRootError) {
        throw new QuiverError("InvalidTableState", `table location '${location}' is a symbolic link; tables must be directories inside the data root`);
      }
      throw err;
    }
  }

  /** The catalog table: the root's `__manifest` dataset, one row per namespace and table. */
  catalogTable(): Promise<NativeTable> {
    return this.open(MANIFEST_DIR);
  }

  /**
   * The catalog's latest version. `__manifest` names its manifests in Lance's V2 scheme, newest first, so one listing
   * of one key answers it; the engine's own check lists every version the catalog has kept.
   */
  async catalogVersion(): Promise<number> {
    const latest = await this.latestManifest(MANIFEST_DIR);
    return latest ? latest.version : (await this.catalogTable()).version();
  }

  /**
   * A handle on `__manifest` whose commits Quiver publishes (engine-versions.ts), for a catalog commit that must be
   * admitted as one version exactly (a batch's decision, CatalogTable.decideBatch). The catalog's other
   * commits are the engine's own, through `commitHandle`.
   */
  catalogCommitHandle(): Promise<NativeTable> {
    if (!this.catalogCommits) {
      const opening = engineCall("open the catalog", async () => (await this.commits()).openTable(MANIFEST_DIR, [this.rootId]));
      this.catalogCommits = opening;
      opening.catch(() => {
        if (this.catalogCommits === opening) this.catalogCommits = undefined;
      });
    }
    return this.catalogCommits;
  }

  /** A private handle on `__manifest` at one version. */
  async catalogTableAt(version: number): Promise<NativeTable> {
    const table = await this.openDetached(MANIFEST_DIR);
    await engineCall("read the catalog", () => table.checkout(version));
    return table;
  }

  /** An open handle on the latest version of a dataset; handles are shared and see other writers' commits. */
  open(location: string): Promise<NativeTable> {
    return this.cachedHandle(this.handles, location, () => this.openWith(() => this.latest(), location));
  }

  /** A shared handle fixed at the version whose manifest a listing found (see versionHandles). */
  atManifest(location: string, manifest: LatestManifest): Promise<NativeTable> {
    return this.cachedHandle(this.versionHandles, `${location}\0${manifest.key}\0${manifest.etag}`, async () => {
      const table = await this.openDetached(location);
      await engineCall("open table", () => table.checkout(manifest.version));
      return table;
    });
  }

  /**
   * The handle to commit through: one that follows only this process's own commits, so that its calls ask the store
   * nothing, where a handle that follows every writer looks at the store at each call. After a commit the engine
   * reports the version its handle then holds, which for this handle is the commit's own. Callers serialize their
   * commits to it, and a commit it makes on a version another writer has since passed is rebased by the engine.
   */
  async commitHandle(location: string, stamp?: string): Promise<NativeTable> {
    let held = this.commitHandles.get(location);
    // Opened on a directory that has since been replaced (the table dropped and made again at this location, by
    // another process): it holds the old table's versions, and a commit through it would write them into the new one.
    if (held && stamp !== undefined && (await held.catch(() => null))?.stamp !== stamp) {
      if (this.commitHandles.get(location) === held) this.commitHandles.delete(location);
      held = undefined;
    }
    if (!held) {
      held = (async () => {
        const opened = stamp ?? (await this.directoryStamp(location));
        // The catalog's own commits are the engine's: no request's write lands in them.
        const connection = location === MANIFEST_DIR ? this.lazy() : this.commits();
        const table = await engineCall("open table", async () => (await connection).openTable(location, [this.rootId]));
        return { table, stamp: opened };
      })();
      this.commitHandles.set(location, held);
      const opening = held;
      opening.catch(() => {
        if (this.commitHandles.get(location) === opening) this.commitHandles.delete(location);
      });
    }
    return (await held).table;
  }

  /**
   * The stamp of the directory the commit handle at the location was opened on, with no look at the store, where one
   * of the write's looks at the table (`seen`, its newest manifest of main) found as the latest the very manifest
   * this process last published there and the handle holds: the handle committed into the directory that is there
   * (a manifest's etag is the store's name of one write). Null otherwise: the caller looks (directoryStamp).
   */
  async stampFollowed(location: string, seen: Array<{ version: number; etag: string }>): Promise<string | null> {
    const mine = publishedHere(this.root, location);
    const held = this.commitHandles.get(location);
    if (!mine || !held || !seen.some((s) => s.version === mine.version && s.etag === mine.etag)) return null;
    const opened = await held.catch(() => null);
    if (!opened || (await engineCall("read the version", () => opened.table.version())) !== mine.version) return null;
    return opened.stamp;
  }

  /** See ObjectStore.directoryStamp: what tells this table's directory from a later one at the same location; a link is refused. */
  directoryStamp(location: string): Promise<string | null> {
    return this.inside(location, () => this.store.directoryStamp(`${location}/`));
  }

  private cachedHandle(cache: LRUCache<string, Promise<NativeTable>>, key: string, open: () => Promise<NativeTable>): Promise<NativeTable> {
    let handle = cache.get(key);
    if (!handle) {
      handle = open();
      cache.set(key, handle);
      const opening = handle;
      opening.catch(() => {
        if (cache.get(key) === opening) cache.delete(key);
      });
    }
    return handle;
  }

  private async openWith(connection: () => Promise<NativeConnection>, location: string): Promise<NativeTable> {
    // A look that refuses a symbolic link in the table's place; an object store has none, and the look would cost
    // the open a round trip.
    if (this.root.kind === "local") await this.inside(location, () => this.store.exists(`${location}/`));
    else this.checkLocation(location);
    return engineCall("open table", async () => (await connection()).openTable(location, [this.rootId]));
  }

  /** A private handle, free to be checked out at an older version or tag without affecting other requests. */
  openDetached(location: string): Promise<NativeTable> {
    return this.openWith(() => this.latest(), location);
  }

  /**
   * Writes the first version of a dataset, or overwrites one, from an Arrow body; all of it or nothing. The engine's
   * create reads the body while it writes and, when the reader panics on malformed data, commits the rows it had
   * read: so an overwrite goes through add, which reads everything first, and a first write is checked for its rows.
   */
  async create(location: string, body: ArrowBody, mode: "create" | "overwrite", options: { stableRowIds?: boolean } = {}): Promise<NativeTable> {
    if (mode === "overwrite") {
      const table = await this.open(location);
      await engineCall("overwrite table", () => table.add(body.file, "overwrite"), fromArrowWriteError);
      return table;
    }
    await this.inside(location, () => this.store.exists(`${location}/`));
    // Through the commit connection, under the guard of the requests the write applies (if any, around this) and
    // its own: the engine would take another writer's version 1 for a conflict and commit this as version 2 over it.
    let lost = false;
    const firstOnly: CommitGuard = {
      properties: {},
      admit: async (_files, _directory, version) => {
        if (version === 1) return;
        lost = true;
        throw new Error(`another writer made the first version of '${location}'`);
      },
    };
    try {
      const storageOptions = options.stableRowIds ? { ...this.storageOptions, new_table_enable_stable_row_ids: "true" } : this.storageOptions;
      const connection = await this.commits();
      await withCommitGuard(this.root, location, firstOnly, () => connection.createTable(location, body.file, "create", [this.rootId], storageOptions), true);
    } catch (err) {
      await this.removeEmptyDirectories(location);
      if (lost) throw new QuiverError("TableAlreadyExists", `table '${location}' already exists: another writer made its first version`);
      throw fromArrowWriteError(err, "create table");
    }
    this.forget(location);
    const table = await this.open(location);
    if ((await table.countRows(null)) !== body.rows) {
      // This write made the first version, so whatever it left is its own; the location's markers stay.
      this.forget(location);
      await this.removeData(location);
      throw invalidInput("create table: the engine could not read all of the Arrow data, which is malformed");
    }
    return table;
  }

  /** Deletes a location's dataset files, keeping what claimed or reserved it. */
  private async removeData(location: string): Promise<void> {
    for (const dir of await this.store.listDirectories(`${location}/`)) await this.store.deletePrefix(`${location}/${dir}/`);
  }

  /**
   * Removes the directories a failed first write made and left empty (a local root's `data/`, say). Files are
   * another matter: a write into the same location from another process may be under way.
   */
  private async removeEmptyDirectories(location: string): Promise<void> {
    for (const dir of await this.store.listDirectories(`${location}/`)) {
      if ((await this.store.list(`${location}/${dir}/`, 1)).length === 0) await this.store.deletePrefix(`${location}/${dir}/`);
    }
  }

  /** True when the location holds at least one committed version (never so for a link, which is not followed). */
  async hasData(location: string): Promise<boolean> {
    // The first keys may be other files than manifests: the engine's temporary file on a local root, and manifests
    // that writers of a managed table staged (`<version>.manifest-<uuid>`, which sort before the versions they follow).
    const list = (limit?: number) =>
      this.inside(location, () => this.store.list(`${location}/_versions/`, limit)).catch((err) => {
        // A link is no dataset; a store that does not answer is not an answer that there is none.
        if (err instanceof QuiverError && err.codeName === "InvalidTableState") return [];
        throw err;
      });
    const isManifest = (key: string) => key.endsWith(".manifest");
    if (this.store.root.kind === "local") return (await list()).some(isManifest);
    const first = await list(FIRST_VERSION_KEYS);
    if (first.some(isManifest)) return true;
    return first.length === FIRST_VERSION_KEYS && (await list()).some(isManifest);
  }

  /**
   * The newest manifest of a dataset's main branch, with its etag, or null when it has none. Lance's V2 names sort
   * the newest first, so the first key listed is it; V1 names (`<n>.manifest`) need the whole listing.
   */
  latestManifest(location: string): Promise<LatestManifest | null> {
    return this.latestManifests.get(location, () => this.readLatestManifest(location));
  }

  private async readLatestManifest(location: string): Promise<LatestManifest | null> {
    return this.inside(location, () => latestManifestIn(this.store, location)).catch((err) => {
      // A link is no dataset, as hasData says.
      if (err instanceof QuiverError && err.codeName === "InvalidTableState") return null;
      throw err;
    });
  }

  /** True when a declare reserved the location (its marker stays after the first write); a link is refused. */
  async isReserved(location: string): Promise<boolean> {
    return (await this.inside(location, () => this.store.head(`${location}/${RESERVED_MARKER}`))) !== null;
  }

  async directoryExists(location: string): Promise<boolean> {
    return this.inside(location, () => this.store.exists(`${location}/`));
  }

  /**
   * Takes a location for a new table with a marker written only where none exists; false when it was taken. Of two
   * requests (in any process) for the same location exactly one writes the marker, and a location that holds
   * anything else (a dataset another tool made) is not taken. A location `generated` by `locationFor` for a nested
   * table is new (its name has a random part that no other writer chose), so it is not listed: one store round trip
   * less on every declare and create of a nested table.
   */
  private async take(location: string, marker: string, generated: boolean, content = new Date().toISOString()): Promise<boolean> {
    this.checkLocation(location);
    let taken: boolean;
    try {
      taken = null !== (await this.store.putIfAbsent(`${location}/${marker}`, content));
    } catch (err) {
      // Something that is not a directory of the root is there already (a symbolic link, planted or dangling).
      if (err instanceof OutsideRootError || ["ENOTDIR", "EEXIST"].includes((err as NodeJS.ErrnoException).code ?? "")) return false;
      throw err;
    }
    if (!taken) return false;
    if (generated) return true;
    const present = await this.store.list(`${location}/`, 2);
    if (present.length === 1) return true;
    await this.store.delete(`${location}/${marker}`);
    return false;
  }

  /** Claims a location for a table that a create writes now; false when the location was taken. */
  claim(location: string, generated: boolean): Promise<boolean> {
    return this.take(location, CLAIM_MARKER, generated);
  }

  /** Claims a location for a declared table, with the reserved marker its first write looks for. */
  reserve(location: string, generated: boolean): Promise<boolean> {
    return this.take(location, RESERVED_MARKER, generated);
  }

  /**
   * Reserves a location for a table a batch declares, its marker naming the batch: true where it is reserved now, or
   * was by another attempt of the same batch and holds nothing else.
   */
  async reserveFor(location: string, generated: boolean, batch: string): Promise<boolean> {
    if (await this.take(location, RESERVED_MARKER, generated, `batch ${batch}`)) return true;
    return (await this.reservedBy(location, batch)) && (await this.store.list(`${location}/`, 2)).length === 1;
  }

  /** Whether the location's reserved marker is the batch's. */
  async reservedBy(location: string, batch: string): Promise<boolean> {
    return (await this.inside(location, () => this.store.get(`${location}/${RESERVED_MARKER}`)))?.toString("utf8") === `batch ${batch}`;
  }

  /** Marks a table's directory deregistered: the files stay, and Lance's directory listing no longer shows it. */
  async markDeregistered(location: string): Promise<void> {
    await this.inside(location, () => this.store.put(`${location}/${DEREGISTERED_MARKER}`, new Date().toISOString()));
    this.forget(location);
  }

  async isDeregistered(location: string): Promise<boolean> {
    return (await this.inside(location, () => this.store.head(`${location}/${DEREGISTERED_MARKER}`))) !== null;
  }

  async unmarkDeregistered(location: string): Promise<void> {
    await this.inside(location, () => this.store.delete(`${location}/${DEREGISTERED_MARKER}`));
  }

  /** Forgets the cached handle of a dataset that moved or went away. */
  forget(location: string) {
    // Not closed: a request may still be reading through the handle, and closing it under that read would fail.
    this.handles.delete(location);
    this.commitHandles.delete(location);
    for (const key of [...this.versionHandles.keys()]) if (key.startsWith(`${location}\0`)) this.versionHandles.delete(key);
  }

  /** Deletes a table's directory and everything in it. */
  async remove(location: string): Promise<void> {
    this.forget(location);
    await this.inside(location, () => this.store.deletePrefix(`${location}/`));
  }

  /** Moves a table's directory (local roots only: object stores cannot rename). */
  async move(from: string, to: string): Promise<void> {
    this.forget(from);
    await this.inside(from, () => this.store.movePrefix(`${this.checkLocation(from)}/`, `${this.checkLocation(to)}/`));
  }

  /** A fresh directory name for a table below the root namespace, as Lance's directory namespace makes them. */
  static locationFor(objectId: string, nested: boolean): string {
    return nested ? `${randomBytes(4).toString("hex")}_${objectId}` : `${objectId}.lance`;
  }
}
