/**
 * One JSON file per record in a directory: safe for several processes, written atomically. The listing is cached
 * and re-read when the directory changes; this process's own writes update the cache in place.
 */
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { KeyedLock } from "../keyed-lock";

const READ_CONCURRENCY = 32;

export class RecordDirectory<T extends { id: string }> {
  private cache?: { stamp: number; records: Map<string, T> };
  /** Writes are serialized in this process, so each can tell whether anything else changed the directory. */
  private readonly writes = new KeyedLock();

  constructor(private readonly dir: string) {}

  private file(id: string) {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`bad record id ${id}`);
    return path.join(this.dir, `${id}.json`);
  }

  private async stamp(): Promise<number> {
    await fs.mkdir(this.dir, { recursive: true });
    return (await fs.stat(this.dir)).mtimeMs;
  }

  async list(): Promise<T[]> {
    const stamp = await this.stamp();
    if (!this.cache || this.cache.stamp !== stamp) {
      const names = (await fs.readdir(this.dir)).filter((n) => n.endsWith(".json"));
      const records = new Map<string, T>();
      for (let i = 0; i < names.length; i += READ_CONCURRENCY) {
        const batch = await Promise.all(names.slice(i, i + READ_CONCURRENCY).map((n) => this.read(n.slice(0, -5))));
        for (const r of batch) if (r) records.set(r.id, r);
      }
      this.cache = { stamp, records };
    }
    return [...this.cache.records.values()];
  }

  async read(id: string): Promise<T | null> {
    try {
      return JSON.parse(await fs.readFile(this.file(id), "utf8")) as T;
    } catch {
      return null;
    }
  }

  /** Writes a record; a new file name each time and a rename, so readers never see half a record. */
  write(record: T): Promise<void> {
    return this.writes.run("", () => this.writeNow(record));
  }

  private async writeNow(record: T): Promise<void> {
    const before = await this.stamp();
    const tmp = path.join(this.dir, `.${record.id}.${randomBytes(4).toString("hex")}.tmp`);
    await fs.writeFile(tmp, JSON.stringify(record, null, 2), { mode: 0o600 });
    await fs.rename(tmp, this.file(record.id));
    await this.afterChange(before, (records) => records.set(record.id, record));
  }

  remove(id: string): Promise<boolean> {
    return this.writes.run("", () => this.removeNow(id));
  }

  private async removeNow(id: string): Promise<boolean> {
    const before = await this.stamp();
    try {
      await fs.unlink(this.file(id));
    } catch {
      return false;
    }
    await this.afterChange(before, (records) => records.delete(id));
    return true;
  }

  /**
   * Keeps the cache when nothing else had changed the directory since it was read; otherwise drops it. (A change
   * by another process in the instant between this write and the stat below is picked up at its next change.)
   */
  private async afterChange(before: number, change: (records: Map<string, T>) => void) {
    if (this.cache && before === this.cache.stamp) {
      change(this.cache.records);
      this.cache.stamp = (await fs.stat(this.dir)).mtimeMs;
    } else this.cache = undefined;
  }
}
