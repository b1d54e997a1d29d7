/**
 * One table's own Lance files, for the operations that read or write them beside the engine: the version manifests
 * of its main branch (in its directory) and of each branch (in `tree/<branch>/`), the transaction a manifest names,
 * and the tag and branch refs. The catalog hands one out per table, so table operations reach no further into the
 * store than the table's directory; a change to the manifests drops the engine's open handles on the table.
 */
import "server-only";
import { LRUCache } from "lru-cache";
import type { ObjectInfo, ObjectStore } from "@/server/storage/object-store";
import { childUri, relativeTo, storePathOf, storePathUri, type DataRoot } from "@/server/storage/root";
import {
  latestManifestIn,
  listVersionNumbers,
  manifestKey,
  rememberSummary,
  versionSummary,
  ManifestGone,
  type BatchHold,
  type LatestManifest,
  type VersionSummary,
} from "./version-manifest";
import { versionOperation, type SchemaField, type VersionOperation } from "./version-operations";
import { readBranchRefs, readTagRefs } from "./refs";

const VERSION_HINT = "latest_version_hint.json";
const operations = new LRUCache<string, VersionOperation>({ max: 50_000 });

/** Where a version's manifest is, as a listing of its directory found it. */
export interface ManifestSource {
  directory: string;
  v2: boolean;
  info?: ObjectInfo;
}

export interface ManifestFile {
  key: string;
  /** Its URI (or, on a local root, its path). */
  path: string;
  size: number;
  eTag: string;
}

export class TableFiles {
  constructor(
    private readonly store: ObjectStore,
    private readonly root: DataRoot,
    readonly location: string,
    /** Called after this table's manifests changed, so that no open handle answers from before. */
    private readonly changed: () => void,
  ) {}

  /** The directory whose `_versions/` holds a branch's own manifests (main's: the table's directory). */
  directoryOf(branch?: string): string {
    return !branch || branch === "main" ? this.location : `${this.location}/tree/${branch}`;
  }

  private own(key: string): string {
    if (!key.startsWith(`${this.location}/`)) throw new Error(`'${key}' is not a file of the table at '${this.location}'`);
    return key;
  }

  /**
   * The versions whose manifests lie in a directory, with each manifest's listing (its etag and size where the listing
   * has them, or `everyManifest` says all will be read), and which naming they use.
   */
  async versions(directory: string, { everyManifest = false } = {}): Promise<{ v2: boolean; sources: Map<number, ManifestSource>; holds: BatchHold[] }> {
    this.own(`${directory}/`);
    const { v2, files, holds } = await listVersionNumbers(this.store, directory, everyManifest);
    return { v2, sources: new Map([...files].map(([version, info]) => [version, { directory, v2, info }])), holds };
  }

  /** The newest manifest in a directory (main's or a branch's), or null when it has none. */
  latestManifest(directory: string): Promise<LatestManifest | null> {
    this.own(`${directory}/`);
    return latestManifestIn(this.store, directory);
  }

  /** A version's manifest file (its size and etag from the listing when given) and what it says. */
  async manifest(version: number, { directory, v2, info }: ManifestSource): Promise<{ file: ManifestFile; summary: VersionSummary }> {
    const key = this.own(manifestKey(directory, version, v2));
    const listed = info ?? (await this.store.head(key).catch(() => null));
    const file = { key, path: childUri(this.root, key), size: listed?.size ?? 0, eTag: listed?.etag ?? "" };
    const summary = await versionSummary(this.store, file).catch((err: unknown) => {
      throw err instanceof ManifestGone ? new ManifestGone(`version ${version}`) : err;
    });
    return { file, summary };
  }

  /**
   * What made a version; `before` is where the previous version's manifest is, when it exists. Fixed by the two
   * manifests, so cached by their etags: a page of versions with their operations is read from the store once.
   */
  async operation(
    version: number,
    source: ManifestSource,
    made: { file: ManifestFile; summary: VersionSummary; inlineTransaction?: Buffer | null },
    before?: ManifestSource,
  ): Promise<VersionOperation | null> {
    const { file, summary, inlineTransaction } = made;
    const cacheKey = file.eTag ? `${this.store.root.uri}\0${file.key}\0${file.eTag}\0${before?.info?.etag ?? ""}` : null;
    const cached = cacheKey === null ? undefined : operations.get(cacheKey);
    if (cached) return cached;
    // The previous version cleaned up since it was listed: the change is told without its schema.
    const fieldsBefore = async (): Promise<SchemaField[] | null> =>
      before
        ? this.manifest(version - 1, before).then(
            ({ summary }) => summary.fields,
            (err: unknown) => (err instanceof ManifestGone ? null : Promise.reject(err)),
          )
        : null;
    const operation = await versionOperation(
      this.store,
      source.directory,
      { key: file.key, version, fields: summary.fields, transactionFile: summary.transactionFile, inlineTransaction },
      fieldsBefore,
    );
    // None is remembered: it may be a store that failed to answer rather than a version without a transaction.
    if (cacheKey !== null && operation) operations.set(cacheKey, operation);
    return operation;
  }

  /**
   * The first version above `since` (and below `below`) in a directory whose transaction names the write request
   * `key` (VersionSummary.requests): every version Quiver publishes under a commit guard names the requests it
   * applies, so this is the one version the request made, or none. Manifests never change, so each is read once.
   */
  async versionNaming(directory: string, key: string, since: number, below = Infinity, listed?: Map<number, ManifestSource>): Promise<number | null> {
    const sources = listed ?? (await this.versions(directory)).sources;
    const candidates = [...sources.keys()].filter((v) => v > since && v < below).sort((a, b) => a - b);
    for (const version of candidates) {
      if ((await this.manifest(version, sources.get(version)!)).summary.requests.includes(key)) return version;
    }
    return null;
  }

  /** What every version of every branch says (a branch's manifests lie in `tree/<branch>/_versions/`). */
  async branchManifests(): Promise<VersionSummary[]> {
    const listed = await this.store.listInfo(`${this.location}/tree/`);
    const manifests = [...listed].filter(([key]) => /\/_versions\/\d+\.manifest$/.test(key));
    return Promise.all(manifests.map(([key, info]) => versionSummary(this.store, { key, eTag: info.etag })));
  }

  tagRefs(names?: readonly string[]) {
    return readTagRefs(this.store, this.location, names);
  }

  branchRefs(names?: readonly string[]) {
    return readBranchRefs(this.store, this.location, names);
  }

  /**
   * The key of a file named by its URI, its path below the root, or its path as Lance's object store names it (what
   * Lance's clients send as a staged manifest's path), when it lies inside `directory`; otherwise null.
   */
  keyInside(directory: string, uri: string): string | null {
    for (const named of [uri, storePathUri(this.root, uri)]) {
      const key = relativeTo(this.root, named);
      if (key !== null && key.startsWith(`${this.own(`${directory}/`)}`) && !key.split("/").some((s) => s === ".." || s === ".")) return key;
    }
    return null;
  }

  /** What a manifest just written from `content` says, known without reading it back. */
  knownManifest(key: string, eTag: string, content: Buffer) {
    if (eTag) rememberSummary(this.store, { key: this.own(key), eTag }, content);
  }

  /** A file's path as Lance's object store names it: a local path as it is, an object store's key without scheme and bucket. */
  storePath(uri: string): string {
    return storePathOf(this.root, uri);
  }

  /** A file of the table (a manifest a writer staged, say), or null when there is none. */
  read(key: string): Promise<Buffer | null> {
    return this.store.get(this.own(key));
  }

  /** A file's content if its etag is `etag`: "changed" when it holds something else. */
  readIfMatch(key: string, etag: string): Promise<Buffer | "changed" | null> {
    return this.store.getIfMatch(this.own(key), etag);
  }

  head(key: string): Promise<ObjectInfo | null> {
    return this.store.head(this.own(key));
  }

  async remove(key: string): Promise<void> {
    await this.store.delete(this.own(key));
  }

  /**
   * Writes a version's manifest where none exists, answering what was written; `written` is null when one exists (a
   * concurrent commit of that version).
   */
  async commitManifest(directory: string, version: number, v2: boolean, content: Buffer): Promise<{ written: ObjectInfo | null; key: string }> {
    const key = this.own(manifestKey(directory, version, v2));
    const written = await this.store.putIfAbsent(key, content);
    if (written) this.changed();
    return { written, key };
  }

  /**
   * Publishes a manifest as its version where none exists. `made` says this write made it; false where the version
   * is already these very bytes (a first try whose answer the store client lost, or another attempt of the same
   * commit). Null where another manifest holds the version.
   */
  async publishManifest(
    directory: string,
    version: number,
    v2: boolean,
    content: Buffer,
  ): Promise<{ key: string; written: ObjectInfo | null; made: boolean } | null> {
    const commit = await this.commitManifest(directory, version, v2, content);
    if (commit.written) return { ...commit, made: true };
    return (await this.read(commit.key))?.equals(content) ? { ...commit, made: false } : null;
  }

  /**
   * Deletes a version's manifest while it is still the directory's latest (nothing committed on it): the later
   * version that keeps it, or null once it is gone.
   */
  async takeBackVersion(directory: string, version: number, v2: boolean): Promise<number | null> {
    const latest = await this.latestManifest(directory);
    if (latest && latest.version > version) return latest.version;
    await this.deleteManifests(directory, [version], v2);
    return null;
  }

  /**
   * Writes a file of the table that must not exist yet (a transaction, named by its uuid); one there with this
   * content is this write's own, made by a first try whose answer the store client lost.
   */
  async create(key: string, content: Buffer): Promise<void> {
    if (await this.store.putIfAbsent(this.own(key), content)) return;
    if (!(await this.store.get(key))?.equals(content)) throw new Error(`'${key}' already exists`);
  }

  /**
   * Moves the engine's hint at a directory's latest version (`_versions/latest_version_hint.json`) to a version this
   * service committed, as the engine does after its own commits; where the engine keeps no hint, none is made. The
   * engine looks past a hint for newer versions (schema-metadata-commit.test.ts opens such a version through a hint
   * left behind), so a hint that a concurrent commit moves back costs a reader time, not a wrong answer.
   */
  async hintLatest(directory: string, version: number): Promise<void> {
    const key = this.own(`${directory}/_versions/${VERSION_HINT}`);
    if (await this.store.head(key)) await this.store.put(key, JSON.stringify({ version }));
  }

  /** The size of every file in the table's directory, by its name relative to the directory. */
  async sizes(): Promise<Map<string, number>> {
    const prefix = `${this.location}/`;
    return new Map([...(await this.store.listInfo(prefix))].map(([key, info]) => [key.slice(prefix.length), info.size]));
  }

  /** Removes files of the table by their names relative to its directory; a name ending in `/` is a directory. */
  async removeNamed(names: Iterable<string>): Promise<void> {
    for (const name of names) {
      const key = `${this.location}/${name}`;
      if (name.endsWith("/")) await this.store.deletePrefix(this.own(key));
      else await this.store.delete(this.own(key));
    }
  }

  async deleteManifests(directory: string, versions: number[], v2: boolean): Promise<void> {
    for (const version of versions) await this.store.delete(this.own(manifestKey(directory, version, v2)));
    this.changed();
  }
}
