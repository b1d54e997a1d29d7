/** One JSON file per record in a directory: safe for several processes, written atomically. */
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";

export class RecordDirectory<T extends { id: string }> {
  private cache?: { stamp: number; records: T[] };

  constructor(private readonly dir: string) {}

  private file(id: string) {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`bad record id ${id}`);
    return path.join(this.dir, `${id}.json`);
  }

  async list(): Promise<T[]> {
    await fs.mkdir(this.dir, { recursive: true });
    const stamp = (await fs.stat(this.dir)).mtimeMs;
    if (this.cache && this.cache.stamp === stamp) return this.cache.records;
    const names = (await fs.readdir(this.dir)).filter((n) => n.endsWith(".json"));
    const read = await Promise.all(names.map((n) => this.read(n.slice(0, -5))));
    const records = read.filter((r) => r !== null) as T[];
    this.cache = { stamp, records };
    return records;
  }

  async read(id: string): Promise<T | null> {
    try {
      return JSON.parse(await fs.readFile(this.file(id), "utf8")) as T;
    } catch {
      return null;
    }
  }

  /** Writes a record; a new file name each time and a rename, so readers never see half a record. */
  async write(record: T): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    const tmp = path.join(this.dir, `.${record.id}.${randomBytes(4).toString("hex")}.tmp`);
    await fs.writeFile(tmp, JSON.stringify(record, null, 2), { mode: 0o600 });
    await fs.rename(tmp, this.file(record.id));
    this.cache = undefined;
  }

  async remove(id: string): Promise<boolean> {
    try {
      await fs.unlink(this.file(id));
      this.cache = undefined;
      return true;
    } catch {
      return false;
    }
  }
}
