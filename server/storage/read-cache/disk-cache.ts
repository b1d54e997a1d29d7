/**
 * The read cache's entries on local disk: byte ranges of objects that Lance writes once under a unique name, each in
 * a file of its own named by the object and the range, within a byte budget, the least recently used evicted first.
 * One process owns a cache directory at a time (its `owner` file); the entries outlive it, and the next owner finds
 * them by their names. An entry is written to a temporary name and renamed into place, and carries a checksum of
 * what it holds: one cut short by a crash or damaged on disk fails its check, is removed, and is fetched again.
 *
 * Written in erasable TypeScript with relative imports only: it runs in `npm start`'s primary process as Node loads
 * it (types stripped) as well as inside the server.
 */
import { createHash, randomBytes } from "node:crypto";
import { promises as fs, readFileSync, writeFileSync, unlinkSync } from "node:fs";
import path from "node:path";
import { crc32 } from "node:zlib";

const MAGIC = Buffer.from("QRC1");
/** magic, header length, body length, checksum of header and body */
const PREAMBLE = 16;

/** What an entry holds besides its bytes: the object's size and the store's answer headers to repeat. */
export interface EntryHeader {
  /** The object's path at the store, to tell two objects apart whose names hash alike. */
  object: string;
  size: number;
  headers: Record<string, string>;
}

interface Entry {
  file: string;
  objectId: string;
  start: number;
  /** exclusive */
  end: number;
  size: number;
  bytes: number;
  touchedAt: number;
  /** What an entry being written holds, answered from memory until it is on disk. */
  writing?: Found;
}

export interface CacheStats {
  hits: number;
  misses: number;
  bytesFromCache: number;
  bytesFromStore: number;
  evictions: number;
  /** Ranges fetched but not kept: the fills under way held the rest of the budget. */
  notKept: number;
  damaged: number;
  fillFailures: number;
}

/**
 * The entries read most recently are also kept in memory, checked once when they were read from disk: a warm read
 * then costs no file read and no checksum.
 */
const HOT_BYTES = 256 * 2 ** 20;

/** How often an entry's time of use is written to its file, for the order of eviction after a restart. */
const TOUCH_INTERVAL_MS = 60_000;

/** A range of an object, found in the cache. */
export interface Found {
  header: EntryHeader;
  body: Buffer;
}

export class DiskCache {
  readonly stats: CacheStats = { hits: 0, misses: 0, bytesFromCache: 0, bytesFromStore: 0, evictions: 0, notKept: 0, damaged: 0, fillFailures: 0 };
  /** Entries by recency: the first is the least recently used. */
  private readonly entries = new Map<string, Entry>();
  private readonly byObject = new Map<string, Entry[]>();
  private bytes = 0;
  /** Removals of entries' files under way. */
  private readonly removals = new Set<Promise<unknown>>();
  /** Bodies of entries read lately, by entry file, least recently used first. */
  private readonly hot = new Map<string, Found>();
  private hotBytes = 0;

  readonly dir: string;
  readonly budgetBytes: number;
  private readonly onFailure: (what: string, err: unknown) => void;

  private constructor(dir: string, budgetBytes: number, onFailure: (what: string, err: unknown) => void) {
    this.dir = dir;
    this.budgetBytes = budgetBytes;
    this.onFailure = onFailure;
  }

  /**
   * Opens the cache at `dir`, owned by this process from now on, or answers why it cannot: the directory cannot be
   * written, or another live process owns it.
   */
  static async open(dir: string, budgetBytes: number, onFailure: (what: string, err: unknown) => void): Promise<DiskCache> {
    await fs.mkdir(path.join(dir, "entries"), { recursive: true });
    takeOwnership(dir);
    const cache = new DiskCache(dir, budgetBytes, onFailure);
    await cache.load();
    return cache;
  }

  get sizeBytes(): number {
    return this.bytes;
  }

  get entryCount(): number {
    return this.entries.size;
  }

  /** Gives up the directory (on exit): the next process to open it need not wait for this one's pid to be gone. */
  close(): void {
    try {
      if (ownerPid(this.dir) === process.pid) unlinkSync(ownerFile(this.dir));
    } catch {
      // already gone
    }
  }

  /** The bytes `[start, end)` of an object, if one entry holds them and its check passes. */
  async read(object: string, start: number, end: number): Promise<Found | undefined> {
    const objectId = idOf(object);
    const entry = this.byObject.get(objectId)?.find((e) => e.start <= start && e.end >= end);
    if (!entry) return undefined;
    const held = entry.writing ?? this.hot.get(entry.file);
    if (held) {
      this.use(entry);
      return { header: held.header, body: held.body.subarray(start - entry.start, end - entry.start) };
    }
    let content: Buffer;
    try {
      content = await fs.readFile(this.pathOf(entry.file));
    } catch (err) {
      this.forget(entry);
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") this.onFailure("reading a cache entry", err);
      return undefined;
    }
    const parsed = parseEntry(content);
    if (!parsed || parsed.header.object !== object || parsed.body.length !== entry.end - entry.start) {
      this.stats.damaged++;
      this.remove(entry);
      return undefined;
    }
    this.use(entry);
    this.heat(entry.file, parsed);
    return { header: parsed.header, body: parsed.body.subarray(start - entry.start, end - entry.start) };
  }

  /** The object's size, if an entry of it is known. */
  sizeOf(object: string): number | undefined {
    return this.byObject.get(idOf(object))?.[0]?.size;
  }

  /**
   * Keeps the bytes `[start, start + body.length)` of an object. A range that an entry already holds is not kept
   * twice, and entries the new one holds whole are removed. Failures (a full disk) are counted, never thrown: the
   * read that fetched the bytes has them already.
   */
  async keep(object: string, start: number, header: EntryHeader, body: Buffer): Promise<void> {
    const end = start + body.length;
    const objectId = idOf(object);
    const known = this.byObject.get(objectId) ?? [];
    if (known.some((e) => e.start <= start && e.end >= end)) return;
    const content = encodeEntry(header, body);
    // Room is made before the bytes are written, from entries not being written: when fills under way hold the rest
    // of the budget, this range is not kept (the reader has it already).
    const room = this.makeRoom(content.length);
    if (this.bytes + content.length > this.budgetBytes) {
      this.stats.notKept++;
      return;
    }
    const file = path.join(objectId.slice(0, 2), `${objectId}-${start}-${end}-${header.size}`);
    const entry: Entry = { file, objectId, start, end, size: header.size, bytes: content.length, touchedAt: Date.now(), writing: { header, body } };
    this.add(entry);
    const target = this.pathOf(file);
    const temporary = `${target}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      // The files of entries given up to make room, here or by another fill, are gone before this one is written.
      await room;
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.writeFile(temporary, content);
      await fs.rename(temporary, target);
    } catch (err) {
      this.forget(entry);
      this.stats.fillFailures++;
      this.onFailure("filling the cache", err);
      await fs.rm(temporary, { force: true });
      return;
    }
    delete entry.writing;
    // removed while it was being written (a wider range of the same object replaced it)
    if (!this.entries.has(file)) await fs.rm(target, { force: true });
    else this.heat(file, { header, body });
    for (const covered of known.filter((e) => e !== entry && e.start >= start && e.end <= end)) this.remove(covered);
  }

  private pathOf(file: string): string {
    return path.join(this.dir, "entries", file);
  }

  private add(entry: Entry): void {
    this.entries.set(entry.file, entry);
    const list = this.byObject.get(entry.objectId) ?? [];
    list.push(entry);
    this.byObject.set(entry.objectId, list);
    this.bytes += entry.bytes;
  }

  private heat(file: string, found: Found): void {
    if (found.body.length > HOT_BYTES / 4) return;
    this.hot.set(file, found);
    this.hotBytes += found.body.length;
    for (const [coldest, held] of this.hot) {
      if (this.hotBytes <= HOT_BYTES) break;
      this.hot.delete(coldest);
      this.hotBytes -= held.body.length;
    }
  }

  private forget(entry: Entry): void {
    const held = this.hot.get(entry.file);
    if (held) {
      this.hot.delete(entry.file);
      this.hotBytes -= held.body.length;
    }
    if (!this.entries.delete(entry.file)) return;
    const list = (this.byObject.get(entry.objectId) ?? []).filter((e) => e !== entry);
    if (list.length) this.byObject.set(entry.objectId, list);
    else this.byObject.delete(entry.objectId);
    this.bytes -= entry.bytes;
  }

  private remove(entry: Entry): void {
    this.forget(entry);
    const removal = fs
      .rm(this.pathOf(entry.file), { force: true })
      .catch((err) => this.onFailure("removing a cache entry", err))
      .finally(() => this.removals.delete(removal));
    this.removals.add(removal);
  }

  private use(entry: Entry): void {
    this.entries.delete(entry.file);
    this.entries.set(entry.file, entry);
    const held = this.hot.get(entry.file);
    if (held) {
      this.hot.delete(entry.file);
      this.hot.set(entry.file, held);
    }
    const now = Date.now();
    if (now - entry.touchedAt < TOUCH_INTERVAL_MS) return;
    entry.touchedAt = now;
    const at = new Date(now);
    fs.utimes(this.pathOf(entry.file), at, at).catch(() => undefined);
  }

  /**
   * Removes the least recently used entries that are not being written until `extra` more bytes fit in the budget;
   * settles once every removal under way, these and earlier ones, has left the disk.
   */
  private makeRoom(extra: number): Promise<unknown> {
    for (const entry of this.entries.values()) {
      if (this.bytes + extra <= this.budgetBytes) break;
      if (entry.writing) continue;
      this.stats.evictions++;
      this.remove(entry);
    }
    return Promise.all(this.removals);
  }

  /** The entries a previous owner left, oldest use first; temporary files of fills that never finished removed. */
  private async load(): Promise<void> {
    const found: Entry[] = [];
    const top = path.join(this.dir, "entries");
    for (const shard of await fs.readdir(top)) {
      for (const name of await fs.readdir(path.join(top, shard)).catch(() => [] as string[])) {
        const file = path.join(shard, name);
        const match = /^([0-9a-f]{40})-(\d+)-(\d+)-(\d+)$/.exec(name);
        if (!match) {
          await fs.rm(this.pathOf(file), { force: true });
          continue;
        }
        const stat = await fs.stat(this.pathOf(file)).catch(() => undefined);
        if (!stat) continue;
        const [, objectId, start, end, size] = match;
        found.push({ file, objectId, start: Number(start), end: Number(end), size: Number(size), bytes: stat.size, touchedAt: stat.mtimeMs });
      }
    }
    found.sort((a, b) => a.touchedAt - b.touchedAt);
    for (const entry of found) this.add(entry);
    await this.makeRoom(0);
  }
}

function idOf(object: string): string {
  return createHash("sha1").update(object).digest("hex");
}

function encodeEntry(header: EntryHeader, body: Buffer): Buffer {
  const head = Buffer.from(JSON.stringify(header));
  const preamble = Buffer.alloc(PREAMBLE);
  MAGIC.copy(preamble, 0);
  preamble.writeUInt32BE(head.length, 4);
  preamble.writeUInt32BE(body.length, 8);
  preamble.writeUInt32BE(crc32(body, crc32(head)), 12);
  return Buffer.concat([preamble, head, body]);
}

function parseEntry(content: Buffer): Found | undefined {
  if (content.length < PREAMBLE || !content.subarray(0, 4).equals(MAGIC)) return undefined;
  const headLength = content.readUInt32BE(4);
  const bodyLength = content.readUInt32BE(8);
  if (content.length !== PREAMBLE + headLength + bodyLength) return undefined;
  const head = content.subarray(PREAMBLE, PREAMBLE + headLength);
  const body = content.subarray(PREAMBLE + headLength);
  if (crc32(body, crc32(head)) !== content.readUInt32BE(12)) return undefined;
  try {
    return { header: JSON.parse(head.toString()) as EntryHeader, body };
  } catch {
    return undefined;
  }
}

const ownerFile = (dir: string) => path.join(dir, "owner");

function ownerPid(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(ownerFile(dir), "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** This process becomes the directory's owner, unless a live other process is. */
function takeOwnership(dir: string): void {
  const file = ownerFile(dir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const pid = ownerPid(dir);
    if (pid !== undefined && pid !== process.pid && alive(pid)) throw new CacheInUse(dir, pid);
    try {
      unlinkSync(file);
    } catch {
      // another process removed it first; the next attempt tells who owns it
    }
  }
  throw new CacheInUse(dir, ownerPid(dir) ?? 0);
}

export class CacheInUse extends Error {
  constructor(dir: string, pid: number) {
    super(`the read cache directory ${dir} is in use by process ${pid}`);
  }
}
