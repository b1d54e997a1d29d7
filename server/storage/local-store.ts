/**
 * The object store over a local directory. Whole-object writes go to a temporary file first and are moved into
 * place, so readers in any process see an object whole or not at all. Symbolic links are never followed out of
 * the root: a key whose path passes through one is refused.
 */
import "server-only";
import { log } from "@/server/log";
import { randomBytes } from "node:crypto";
import { lstatSync, statSync, promises as fs, type BigIntStats, type Dirent, type Stats } from "node:fs";
import path from "node:path";
import { bareEtag, checkKey, isPlainKey, OutsideRootError, type ObjectInfo, type ObjectStore } from "./object-store";
import type { DataRoot } from "./root";

const TEMPORARY = /^\..*\.tmp$/;

/** The same etag object_store gives a local file, so that etags read here and by the engine agree. */
export function localEtag(stat: BigIntStats): string {
  return `${stat.ino.toString(16)}-${(stat.mtimeNs / 1000n).toString(16)}-${stat.size.toString(16)}`;
}

const missing = (err: unknown) => {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
};

/**
 * An entry's own metadata (with `follow`, that of what a link points to), or null when there is none. Synchronous
 * on purpose: each key's way down is checked entry by entry, several times per request, and on a local file system
 * an lstat costs a microsecond in the kernel against some 30 µs of process time through the thread pool and its
 * promises.
 */
function statOrNull(file: string, options?: { follow: true }): Stats | null;
function statOrNull(file: string, options: { bigint: true }): BigIntStats | null;
function statOrNull(file: string, options: { bigint?: true; follow?: true } = {}): Stats | BigIntStats | null {
  try {
    if (options.follow) return statSync(file);
    return options.bigint ? lstatSync(file, { bigint: true }) : lstatSync(file);
  } catch (err) {
    if (missing(err)) return null;
    throw err;
  }
}

export class LocalStore implements ObjectStore {
  readonly listingHasInfo = false;
  /** Where deleted directories go to be deleted, on the root's own file system so that a rename can move them. */
  private readonly trash: string;

  constructor(readonly root: DataRoot & { kind: "local" }) {
    this.trash = path.join(root.uri, ".quiver", "trash");
  }

  /**
   * The file of a key, after checking that no directory on the way to it is a symbolic link. A prefix's own last
   * segment is checked too, unless `linkItself` says that the caller acts on the entry, never through it.
   */
  private async file(key: string, prefix = false, linkItself = false): Promise<string> {
    checkKey(key, prefix);
    const segments = key.split("/").filter(Boolean);
    let dir = this.root.uri;
    for (const segment of segments.slice(0, prefix && !linkItself ? segments.length : -1)) {
      dir = path.join(dir, segment);
      const stat = statOrNull(dir);
      if (!stat) break;
      if (stat.isSymbolicLink()) throw new OutsideRootError(`'${key}' passes through a symbolic link in the data root`);
    }
    return path.join(this.root.uri, ...segments);
  }

  get(key: string): Promise<Buffer | null> {
    return this.readFile(key, () => true) as Promise<Buffer | null>;
  }

  getIfMatch(key: string, etag: string): Promise<Buffer | "changed" | null> {
    return this.readFile(key, (stat) => localEtag(stat) === bareEtag(etag));
  }

  /** A file's content, read only if `wanted` says so of what the open file is ("changed" if not). */
  private async readFile(key: string, wanted: (stat: BigIntStats) => boolean): Promise<Buffer | "changed" | null> {
    const file = await this.file(key);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch (err) {
      if (missing(err) || (err as NodeJS.ErrnoException).code === "ELOOP" || (err as NodeJS.ErrnoException).code === "EISDIR") return null;
      throw err;
    }
    try {
      const stat = await handle.stat({ bigint: true });
      if (!stat.isFile()) return null;
      return wanted(stat) ? await handle.readFile() : "changed";
    } finally {
      await handle.close();
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    return this.info(await this.file(key));
  }

  private async info(file: string): Promise<ObjectInfo | null> {
    const stat = statOrNull(file, { bigint: true });
    return stat?.isFile() ? { etag: localEtag(stat), size: Number(stat.size), modified: Number(stat.mtimeMs) } : null;
  }

  /** A temporary file beside the target holding the content on disk, ready to be moved or linked into place. */
  private async staged(file: string, data: Buffer | string): Promise<string> {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
    const handle = await fs.open(tmp, "wx", 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return tmp;
  }

  async put(key: string, data: Buffer | string): Promise<void> {
    const file = await this.file(key);
    await fs.rename(await this.staged(file, data), file);
  }

  async putIfAbsent(key: string, data: Buffer | string): Promise<ObjectInfo | null> {
    const file = await this.file(key);
    const tmp = await this.staged(file, data);
    try {
      // A hard link is made only where nothing exists, atomically, with the content already complete.
      await fs.link(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return null;
      throw err;
    } finally {
      await fs.unlink(tmp).catch(() => undefined);
    }
    return (await this.info(file)) ?? { etag: "", size: Buffer.byteLength(data) };
  }

  async list(prefix: string, limit?: number): Promise<string[]> {
    const dir = await this.file(prefix, true);
    let entries: Dirent[];
    try {
      entries = await fs.readdir(dir, { withFileTypes: true, recursive: true });
    } catch (err) {
      if (missing(err)) return [];
      throw err;
    }
    const base = prefix.endsWith("/") || prefix === "" ? prefix : `${prefix}/`;
    return (
      entries
        .filter((e) => e.isFile() && !TEMPORARY.test(e.name))
        // Most entries lie in the directory itself; working out a path relative to it cost a microsecond or two each,
        // most of a listing of hundreds of manifests.
        .map((e) => base + (e.parentPath === dir ? e.name : path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join("/")))
        .filter((key) => isPlainKey(key))
        .sort()
        .slice(0, limit)
    );
  }

  async listInfo(prefix: string, limit?: number): Promise<Map<string, ObjectInfo>> {
    // The listing checked the directories down to the prefix and recursed only into real directories below it, so
    // each listed file's own entry is all that is left to read (2,000 versions: one lstat each, not one per level).
    const infos = await Promise.all(
      (await this.list(prefix, limit)).map(async (key) => [key, await this.info(path.join(this.root.uri, ...key.split("/")))] as const),
    );
    return new Map(infos.filter((entry): entry is [string, ObjectInfo] => entry[1] !== null));
  }

  async listDirectories(prefix: string): Promise<string[]> {
    try {
      const entries = await fs.readdir(await this.file(prefix, true), { withFileTypes: true });
      return entries.filter((e) => e.isDirectory() && isPlainKey(e.name)).map((e) => e.name);
    } catch (err) {
      if (missing(err)) return [];
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.unlink(await this.file(key)).catch((err) => (missing(err) ? undefined : Promise.reject(err)));
  }

  async exists(prefix: string): Promise<boolean> {
    return statOrNull(await this.file(prefix, true)) !== null;
  }

  /**
   * Moves the directory into the trash first, in one step, so that a reader in another process finds it whole or
   * gone rather than half deleted, and so that the deletion cannot fail on files a writer elsewhere adds meanwhile.
   */
  async deletePrefix(prefix: string): Promise<void> {
    if (!prefix.endsWith("/")) throw new Error(`'${prefix}' is not a prefix`);
    // A symbolic link planted there is itself moved and removed; what it points to is never touched.
    const dir = await this.file(prefix, true, true);
    await fs.mkdir(this.trash, { recursive: true });
    const doomed = path.join(this.trash, `${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`);
    try {
      await fs.rename(dir, doomed);
    } catch (err) {
      if (missing(err)) return;
      throw err;
    }
    await fs.rm(doomed, { recursive: true, force: true });
  }

  async movePrefix(from: string, to: string): Promise<void> {
    const target = await this.file(to, true);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.rename(await this.file(from, true), target);
  }

  /**
   * Deletes what deletions stopped part-way (a killed server) left in the trash. An entry younger than a minute may
   * still be under deletion by the process that put it there, and is left to it.
   */
  async prepare(): Promise<void> {
    await fs.mkdir(this.trash, { recursive: true });
    const settledBefore = Date.now() - 60_000;
    try {
      for (const name of await fs.readdir(this.trash)) {
        const doomedAt = parseInt(name.split("-")[0], 36);
        if (Number.isFinite(doomedAt) && doomedAt < settledBefore) await fs.rm(path.join(this.trash, name), { recursive: true, force: true });
      }
    } catch (err) {
      if (!missing(err)) log.error({ err }, "emptying the trash of deleted directories failed");
    }
  }

  async directoryStamp(prefix: string): Promise<string | null> {
    // A freed inode number is soon given out again; the birth time (where the file system keeps one, else the last
    // change of the directory's own entries) tells the two directories apart.
    const stat = statOrNull(await this.file(prefix, true), { bigint: true });
    return stat ? `${stat.ino}:${stat.birthtimeNs || stat.ctimeNs}` : null;
  }

  async listingStamp(prefix: string): Promise<string> {
    // The root itself may be a link an operator made; below it, file() has refused links.
    const stat = statOrNull(await this.file(prefix, true), { follow: true });
    return stat ? String(stat.mtimeMs) : "";
  }
}
