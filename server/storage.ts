/**
 * The storage adapter: Lance datasets under one data root, laid out as a Lance directory namespace.
 *
 * A table's dataset lives in a directory of the root named by its catalog `location` (`<name>.lance` at the root,
 * `<hash>_<ns$...$name>` below it, as Lance's own directory namespace names them). The engine's listing
 * connection opens datasets by a name that must end in `.lance`, so each dataset is reached through a symlink
 * in `.quiver/links/` whose name is a digest of its location.
 */
import { createHash, randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { connectNative, type NativeConnection, type NativeTable } from "./lance-native";
import { QuiverError, fromArrowWriteError, fromEngineError, invalidInput } from "./errors";
import type { ArrowBody } from "./arrow-ipc";
import type { ObjectStore } from "./storage/object-store";
import { childUri, type DataRoot } from "./storage/root";

export const RESERVED_MARKER = ".lance-reserved";
const MANIFEST_DIR = "__manifest";
const LOCATION_PATTERN = /^[A-Za-z0-9_.$-]+$/;

export class Storage {
  readonly root: string;
  private readonly linksDir: string;
  /** Where dropped tables' directories go to be deleted, on the root's own file system so a rename can move them. */
  private readonly trashDir: string;
  private readonly handles = new Map<string, Promise<NativeTable>>();
  private readonly commitHandles = new Map<string, Promise<NativeTable>>();
  private linkConnection?: Promise<NativeConnection>;
  private lazyLinkConnection?: Promise<NativeConnection>;
  private namespaceConnection?: Promise<NativeConnection>;

  constructor(
    private readonly dataRoot: DataRoot & { kind: "local" },
    private readonly store: ObjectStore,
  ) {
    this.root = dataRoot.uri;
    this.linksDir = path.join(this.root, ".quiver", "links");
    this.trashDir = path.join(this.root, ".quiver", "trash");
  }

  /** Creates the root and the directory namespace's `__manifest` dataset when they do not exist yet. */
  async init(): Promise<void> {
    await fs.mkdir(this.linksDir, { recursive: true });
    await fs.mkdir(this.trashDir, { recursive: true });
    void this.emptyTrash();
    if (!(await exists(path.join(this.root, MANIFEST_DIR, "_versions")))) {
      // The engine creates `__manifest` (with its indexes) on its first namespace write.
      const conn = await this.namespaces();
      const scratch = [`__quiver_init_${randomBytes(4).toString("hex")}`];
      await conn.createNamespace(scratch, "create", {});
      await conn.dropNamespace(scratch, "skip", "restrict");
    }
  }

  /** The engine's manifest-backed connection, used for namespace writes so their layout is the engine's own. */
  namespaces(): Promise<NativeConnection> {
    this.namespaceConnection ??= connectNative(this.root, { manifestEnabled: true, readConsistencyInterval: 0 });
    return this.namespaceConnection;
  }

  private links(): Promise<NativeConnection> {
    this.linkConnection ??= connectNative(this.linksDir, { readConsistencyInterval: 0 });
    return this.linkConnection;
  }

  /** Handles from this connection move to a newer version only when told to (or by their own commits). */
  private lazyLinks(): Promise<NativeConnection> {
    this.lazyLinkConnection ??= connectNative(this.linksDir, {});
    return this.lazyLinkConnection;
  }

  /** Absolute directory of a catalog location, refusing anything that is not one plain entry of the root. */
  directory(location: string): string {
    if (!LOCATION_PATTERN.test(location) || location === "." || location === "..") {
      throw new QuiverError("InvalidTableState", `table location '${location}' is not inside the data root`);
    }
    return path.join(this.root, location);
  }

  private linkName(location: string): string {
    return createHash("sha256").update(location).digest("hex").slice(0, 40);
  }

  private linkPath(location: string): string {
    return path.join(this.linksDir, `${this.linkName(location)}.lance`);
  }

  /**
   * The directory of a location that is not a symbolic link: the engine would follow one out of the data root, so a
   * link planted where a table's directory belongs is refused rather than read or written through.
   */
  private async unlinkedDirectory(location: string): Promise<string> {
    const dir = this.directory(location);
    if ((await fs.lstat(dir).catch(() => null))?.isSymbolicLink()) {
      throw new QuiverError("InvalidTableState", `table location '${location}' is a symbolic link; tables must be directories inside the data root`);
    }
    return dir;
  }

  private async ensureLink(location: string): Promise<string> {
    await this.unlinkedDirectory(location);
    const link = this.linkPath(location);
    const target = path.join("..", "..", location);
    try {
      await fs.symlink(target, link, "dir");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      if ((await fs.readlink(link).catch(() => null)) !== target) {
        throw new QuiverError("InvalidTableState", `the engine's link to table location '${location}' points somewhere else`);
      }
    }
    return this.linkName(location);
  }

  manifest(): Promise<NativeTable> {
    return this.open(MANIFEST_DIR);
  }

  /** A private handle on `__manifest` at one version. */
  async manifestAt(version: number): Promise<NativeTable> {
    const table = await this.openDetached(MANIFEST_DIR);
    await engineCall("read the catalog", () => table.checkout(version));
    return table;
  }

  /** An open handle on the latest version of a dataset; handles are shared and see other writers' commits. */
  open(location: string): Promise<NativeTable> {
    return this.cachedHandle(this.handles, () => this.links(), location);
  }

  /**
   * The handle to commit an append through, at the latest version. After an append the engine reports the version
   * its handle then holds; a handle that always follows the latest version may by then hold another process's
   * newer commit, while this one holds its own until the next refresh. Callers serialize their commits to it.
   */
  async openForCommit(location: string): Promise<NativeTable> {
    const table = await this.cachedHandle(this.commitHandles, () => this.lazyLinks(), location);
    await engineCall("open table", () => table.checkoutLatest());
    return table;
  }

  private cachedHandle(cache: Map<string, Promise<NativeTable>>, connection: () => Promise<NativeConnection>, location: string): Promise<NativeTable> {
    let handle = cache.get(location);
    if (!handle) {
      this.directory(location);
      handle = (async () => {
        const name = await this.ensureLink(location);
        return engineCall("open table", async () => (await connection()).openTable(name));
      })();
      cache.set(location, handle);
      handle.catch(() => cache.delete(location));
    }
    return handle;
  }

  /** A private handle, free to be checked out at an older version or tag without affecting other requests. */
  async openDetached(location: string): Promise<NativeTable> {
    this.directory(location);
    const name = await this.ensureLink(location);
    return engineCall("open table", async () => (await this.links()).openTable(name));
  }

  /**
   * Writes the first version of a dataset, or overwrites one, from an Arrow body; all of it or nothing. The engine's
   * create reads the body while it writes and, when the reader panics on malformed data, commits the rows it had
   * read: so an overwrite goes through add, which reads everything first, and a first write is checked for its rows.
   */
  async create(location: string, body: ArrowBody, mode: "create" | "overwrite"): Promise<NativeTable> {
    if (mode === "overwrite") {
      const table = await this.open(location);
      await engineCall("overwrite table", () => table.add(body.file, "overwrite"), fromArrowWriteError);
      return table;
    }
    const dir = await this.unlinkedDirectory(location);
    // The link must not dangle: the engine would try to create the directory at the link's own path.
    await fs.mkdir(dir, { recursive: true });
    const before = new Set(await fs.readdir(dir));
    const created = async () => (await fs.readdir(dir)).filter((entry) => !before.has(entry)).map((entry) => path.join(dir, entry));
    const name = await this.ensureLink(location);
    try {
      await (await this.links()).createTable(name, body.file, "create", [], {});
    } catch (err) {
      // The engine makes its directories before it checks the data. Only empty ones go, in case another writer has
      // begun to fill them.
      for (const entry of await created()) await fs.rmdir(entry).catch(() => undefined);
      throw fromArrowWriteError(err, "create table");
    }
    this.handles.delete(location);
    const table = await this.open(location);
    if ((await table.countRows(null)) !== body.rows) {
      // This write made the first version, so whatever it left is its own.
      this.forget(location);
      for (const entry of await created()) await fs.rm(entry, { recursive: true, force: true });
      throw invalidInput("create table: the engine could not read all of the Arrow data, which is malformed");
    }
    return table;
  }

  /** True when the location holds at least one committed version (never so for a link, which is not followed). */
  async hasData(location: string): Promise<boolean> {
    try {
      const entries = await fs.readdir(path.join(await this.unlinkedDirectory(location), "_versions"));
      return entries.some((e) => e.endsWith(".manifest"));
    } catch {
      return false;
    }
  }

  /** True when a declare reserved the location (its marker stays after the first write); a link is refused. */
  async isReserved(location: string): Promise<boolean> {
    return exists(path.join(await this.unlinkedDirectory(location), RESERVED_MARKER));
  }

  async directoryExists(location: string): Promise<boolean> {
    return exists(this.directory(location));
  }

  /**
   * Makes a new table's directory; false when it exists already. Making a directory is atomic, so of two requests
   * (in any process) for the same location exactly one gets it.
   */
  async claim(location: string): Promise<boolean> {
    try {
      await fs.mkdir(this.directory(location));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    }
  }

  /**
   * Claims a location for a declared table and writes the reserved marker in it; false when the location was taken.
   * The engine's link is made now too, so a first write that the engine refuses has nothing left to create.
   */
  async reserve(location: string): Promise<boolean> {
    if (!(await this.claim(location))) return false;
    const handle = await fs.open(path.join(this.directory(location), RESERVED_MARKER), "wx");
    await handle.close();
    await this.ensureLink(location);
    return true;
  }

  /** Forgets the cached handle of a dataset that moved or went away. */
  forget(location: string) {
    // Not closed: a request may still be reading through the handle, and closing it under that read would fail.
    this.handles.delete(location);
    this.commitHandles.delete(location);
  }

  /**
   * Deletes a table's directory. It is renamed away first, in one step, so that a reader in another process finds
   * the table whole or gone rather than half deleted, and so that the deletion cannot fail on files a writer
   * elsewhere adds to the directory while it runs. The table's link stays, dangling: a writer elsewhere that still
   * writes through it then fails, where without the link it would make a new dataset at the link's own path.
   */
  async remove(location: string): Promise<void> {
    this.forget(location);
    const doomed = path.join(this.trashDir, `${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`);
    try {
      await fs.rename(this.directory(location), doomed);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    await fs.rm(doomed, { recursive: true, force: true });
  }

  /**
   * Deletes what drops left in the trash, a server stopped in the middle of one for instance. Nothing reads the
   * trash; an entry younger than a minute may still be under deletion by the drop that put it there, and is left
   * to it.
   */
  private async emptyTrash(): Promise<void> {
    const settledBefore = Date.now() - 60_000;
    try {
      for (const name of await fs.readdir(this.trashDir)) {
        const doomedAt = parseInt(name.split("-")[0], 36);
        if (Number.isFinite(doomedAt) && doomedAt < settledBefore) await fs.rm(path.join(this.trashDir, name), { recursive: true, force: true });
      }
    } catch (err) {
      console.error("emptying the trash of dropped tables failed", err);
    }
  }

  /**
   * Undoes a location this request claimed and could not fill: nobody has used it, so its directory and the
   * engine's link both go, and the root is as it was.
   */
  async release(location: string): Promise<void> {
    this.forget(location);
    await fs.rm(this.directory(location), { recursive: true, force: true });
    await fs.rm(this.linkPath(location), { force: true });
  }

  /** A fresh directory name for a table below the root namespace, as Lance's directory namespace makes them. */
  static locationFor(objectId: string, nested: boolean): string {
    return nested ? `${randomBytes(4).toString("hex")}_${objectId}` : `${objectId}.lance`;
  }

  /** File facts for the version list: the engine's API does not expose manifest sizes or e-tags. */
  async manifestFile(location: string, version: number, v2Paths: boolean) {
    const file = v2Paths ? `${(18446744073709551615n - BigInt(version)).toString().padStart(20, "0")}.manifest` : `${version}.manifest`;
    const key = `${location}/_versions/${file}`;
    const info = await this.store.head(key).catch(() => null);
    return { key, path: childUri(this.dataRoot, key), size: info?.size ?? 0, eTag: info?.etag ?? "" };
  }
}

/** Whether anything is at the path: a file, a directory, or a symbolic link, dangling or not. */
async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}

export async function engineCall<T>(what: string, fn: () => Promise<T>, classify = fromEngineError): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw classify(err, what);
  }
}
