/**
 * The few operations Quiver needs on its data root, the same over a local directory and an object store. Keys are
 * `/`-separated paths below the root. Object stores have no rename, append or symbolic link, so nothing here offers
 * them; and not every store can replace an object on the condition that it is unchanged. So what two instances
 * may write at once is either written only where nothing exists yet, or is a fact of its own that the last writer
 * may set (a record's revocation is an object beside the record, never an edit of it).
 */
import "server-only";
import { QuiverError } from "../errors";
import type { DataRoot } from "./root";

export interface ObjectInfo {
  /** Changes whenever the object's content is replaced. */
  etag: string;
  size: number;
  /** When it was last written, in milliseconds since the epoch, where the store or listing says. */
  modified?: number;
}

/** An etag without the quotes (and weak mark) HTTP puts around it: clients send it quoted, stores differ. */
export const bareEtag = (etag: string) => etag.replace(/^W\//, "").replace(/^"(.*)"$/, "$1");

export interface ObjectStore {
  readonly root: DataRoot;
  /**
   * Whether a listing gives each object's etag and size at no extra cost: an object store's listing carries them,
   * where a local directory needs one stat per file, so that reading only the few a caller needs is cheaper there.
   */
  readonly listingHasInfo: boolean;
  get(key: string): Promise<Buffer | null>;
  /**
   * The object's content if its etag is `etag` (HTTP's quotes aside), in one request: "changed" when the object holds
   * something else, null when there is none.
   */
  getIfMatch(key: string, etag: string): Promise<Buffer | "changed" | null>;
  head(key: string): Promise<ObjectInfo | null>;
  /** Replaces the object whole: a reader sees the old content or the new, never a part. */
  put(key: string, data: Buffer | string): Promise<void>;
  /**
   * Writes the object unless one exists, and answers what was written (its etag "" where the store does not say);
   * null when one existed. Of racing writers, exactly one gets an answer.
   */
  putIfAbsent(key: string, data: Buffer | string): Promise<ObjectInfo | null>;
  /**
   * The keys of every object below a prefix (a key ending in `/`, or "" for all), at any depth, in key order; with
   * `limit`, only the first ones, in as few requests to the store as it allows. Objects whose names are no plain
   * key are left out: they are not the engine's (its local writes stage a file as `name#N` before renaming it, and
   * a killed write leaves that behind), and no operation could use their keys.
   */
  list(prefix: string, limit?: number): Promise<string[]>;
  /**
   * What `list` gives, with each object's etag and size, read from the listing itself where the store has them (an
   * etag the listing lacks is ""); with `limit`, only the first ones.
   */
  listInfo(prefix: string, limit?: number): Promise<Map<string, ObjectInfo>>;
  /** The names of the "directories" directly below a prefix: the next path segment of the keys below it. */
  listDirectories(prefix: string): Promise<string[]>;
  /** Whether any object lies below the prefix. */
  exists(prefix: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Deletes every object below a prefix. On an object store not atomic: a reader may see some go before others. */
  deletePrefix(prefix: string): Promise<void>;
  /** Moves every object below a prefix to another; refused (Unsupported) where the store cannot rename. */
  movePrefix(from: string, to: string): Promise<void>;
  /** Readies the store when a server starts: finishes what a server stopped part-way left behind. */
  prepare(): Promise<void>;
  /** Something that changes when an entry directly below the prefix comes or goes; cheap to ask for. */
  listingStamp(prefix: string): Promise<string>;
  /**
   * What tells the "directory" below a prefix from another one later made at the same prefix, or null when nothing
   * is there: a local directory's inode and birth time; on an object store, the first object's key and etag (for a
   * table, the marker its create or declare left). One look at the store, as `exists` is.
   */
  directoryStamp(prefix: string): Promise<string | null>;
}

// `%` appears in names Lance percent-encodes itself (a branch `a/b` is the ref file `a%2Fb.json`); it is literal here.
const SEGMENT = /^[A-Za-z0-9_.$=+@%-]+$/;

/** A key, or the path to it, would leave the data root. */
export class OutsideRootError extends Error {
  override name = "OutsideRootError";
}

/** A key that cannot reach outside the root: every segment a plain name, never `.` or `..`. */
export function isPlainKey(key: string, prefix = false): boolean {
  const body = prefix && key.endsWith("/") ? key.slice(0, -1) : key;
  if (prefix && body === "") return true;
  return body.split("/").every((segment) => segment !== "." && segment !== ".." && SEGMENT.test(segment));
}

/** Refuses a key that could reach outside the root. */
export function checkKey(key: string, prefix = false): string {
  if (!isPlainKey(key, prefix)) throw new OutsideRootError(`'${key}' is not a key inside the data root`);
  return key;
}

/** The store could not be reached or failed: the caller should retry later, and nothing was half done by us. */
export function storeUnavailable(what: string, err: unknown): QuiverError {
  const reason = err instanceof Error ? err.message.split("\n")[0].slice(0, 300) : String(err);
  return new QuiverError("ServiceUnavailable", `the data root's store is unavailable (${what}): ${reason}`);
}
