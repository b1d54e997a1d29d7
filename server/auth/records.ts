/**
 * One JSON object per record under a prefix of the data root's store, safe for several instances: a record is
 * created only where none exists and never edited (what changes about it is kept beside it). Every change also
 * rewrites a `_changed` object, so a listing is cached until that object's etag moves: one cheap look per request,
 * not a listing.
 */
import "server-only";
import { randomBytes } from "node:crypto";
import { FreshRead } from "../storage/fresh-read";
import type { ObjectStore } from "../storage/object-store";

const READ_CONCURRENCY = 32;
const RECORD = /^[A-Za-z0-9_-]+\.json$/;

export class RecordStore<T extends { id: string }> {
  /** Records by their key. */
  private cache?: { stamp: string | null; records: Map<string, T> };

  /** `prefix` ends with `/`. */
  constructor(
    private readonly store: ObjectStore,
    private readonly prefix: string,
  ) {}

  private key(id: string) {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`bad record id ${id}`);
    return `${this.prefix}${id}.json`;
  }

  private get changedKey() {
    return `${this.prefix}_changed`;
  }

  /** Tells other instances (and this one) that the listing changed; written after the change itself. */
  async touch() {
    await this.store.put(this.changedKey, randomBytes(8).toString("hex"));
  }

  /** The `_changed` object's etag, shared by the requests that ask while it is read. */
  private readonly stamp = new FreshRead(async () => (await this.store.head(this.changedKey))?.etag ?? null);

  async list(): Promise<T[]> {
    const stamp = await this.stamp.get();
    if (!this.cache || this.cache.stamp !== stamp) {
      // Records never change once written: only those new since the last look are read.
      const keys = (await this.store.list(this.prefix)).filter((k) => RECORD.test(k.slice(this.prefix.length)));
      const known = this.cache?.records ?? new Map<string, T>();
      const records = new Map<string, T>();
      const unread: string[] = [];
      for (const key of keys) {
        const cached = known.get(key);
        if (cached) records.set(key, cached);
        else unread.push(key);
      }
      for (let i = 0; i < unread.length; i += READ_CONCURRENCY) {
        const batch = await Promise.all(unread.slice(i, i + READ_CONCURRENCY).map(async (k) => [k, await this.readKey(k)] as const));
        for (const [k, r] of batch) if (r) records.set(k, r);
      }
      this.cache = { stamp, records };
    }
    return [...this.cache.records.values()];
  }

  private async readKey(key: string): Promise<T | null> {
    const data = await this.store.get(key);
    if (!data) return null;
    try {
      return JSON.parse(data.toString("utf8")) as T;
    } catch {
      // A record another tool left unreadable is no record.
      return null;
    }
  }

  async read(id: string): Promise<T | null> {
    return this.readKey(this.key(id));
  }

  /** Writes a new record; false when one with its id exists already (another instance made it first). */
  async create(record: T): Promise<boolean> {
    if (!(await this.store.putIfAbsent(this.key(record.id), JSON.stringify(record, null, 2)))) return false;
    await this.touch();
    return true;
  }

  async remove(id: string): Promise<boolean> {
    if (!(await this.store.head(this.key(id)))) return false;
    await this.store.delete(this.key(id));
    await this.touch();
    return true;
  }
}
