/**
 * Each person's saved SQL queries, kept in the root (`.quiver/sql/saved/<owner>/<id>.json`, the owner a digest of
 * who they are), so that they follow the person from browser to browser and instance to instance.
 */
import "server-only";
import { createHash, randomUUID } from "node:crypto";
import { QuiverError } from "@/server/errors";
import type { ObjectStore } from "@/server/storage/object-store";

export interface SavedQuery {
  id: string;
  name: string;
  sql: string;
  updated_at: string;
}

/** The most queries one person keeps. */
const MAX_SAVED = 500;
const ID = /^[0-9a-f-]{36}$/;

const folderOf = (owner: string) => `.quiver/sql/saved/${createHash("sha256").update(owner).digest("hex").slice(0, 32)}/`;

export class SavedQueries {
  constructor(
    private readonly store: ObjectStore,
    /** Who they belong to: a principal's kind and id. */
    private readonly owner: string,
  ) {}

  async list(): Promise<SavedQuery[]> {
    const keys = await this.store.list(folderOf(this.owner));
    const found = await Promise.all(keys.map(async (key) => this.store.get(key)));
    return found
      .filter((b): b is Buffer => b !== null)
      .map((b) => JSON.parse(b.toString("utf8")) as SavedQuery)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Saves a new query, or replaces one of the caller's by its id. */
  async save(input: { id?: string | null; name: string; sql: string }): Promise<SavedQuery> {
    const id = input.id ?? randomUUID();
    if (!ID.test(id)) throw new QuiverError("InvalidInput", `'${id}' is not a saved query's id`);
    const key = `${folderOf(this.owner)}${id}.json`;
    if (input.id && !(await this.store.head(key))) throw new QuiverError("InvalidInput", `the caller has no saved query '${id}'`);
    if (!input.id && (await this.store.list(folderOf(this.owner), MAX_SAVED)).length >= MAX_SAVED)
      throw new QuiverError("InvalidInput", `a person keeps at most ${MAX_SAVED} saved queries: delete some first`);
    const query: SavedQuery = { id, name: input.name, sql: input.sql, updated_at: new Date().toISOString() };
    await this.store.put(key, JSON.stringify(query));
    return query;
  }

  async delete(id: string): Promise<void> {
    if (!ID.test(id)) throw new QuiverError("InvalidInput", `'${id}' is not a saved query's id`);
    const key = `${folderOf(this.owner)}${id}.json`;
    if (!(await this.store.head(key))) throw new QuiverError("InvalidInput", `the caller has no saved query '${id}'`);
    await this.store.delete(key);
  }
}
