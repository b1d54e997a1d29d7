/**
 * The version operations the engine's commit connection asks the dataset locator for. That connection is told that
 * every table's versions are managed (Lance's managed versioning), so the engine stages each commit's manifest beside
 * the table's versions and asks here to publish it: Quiver then makes the version itself, in the one create-only
 * write of its manifest, with what the commit carries (the requests it applies) in the version's transaction
 * properties, and only after the commit's guard has let it through. A commit that loses the version to another
 * writer is answered as a conflict, which the engine rebases and commits again (as it does against the store
 * directly); one its guard refuses is not published at all, and the engine, finding no version there, fails the
 * write with its outcome unknown, which the caller, knowing why, answers for.
 */
import "server-only";
import { log } from "@/server/log";
import { ErrorCode, type ErrorCodeValue } from "@/lib/contract/errors";
import type { ObjectStore } from "@/server/storage/object-store";
import { childUri, type DataRoot } from "@/server/storage/root";
import { TableFiles, type ManifestSource } from "./table-files";
import { withTransactionProperties } from "./transaction-properties";
import { stagedManifestsAt } from "@/server/storage/read-cache/engine-store";
import { askPrimary } from "@/server/peers/primary-call";

/**
 * A manifest the engine staged, where the read cache kept it (never reaching the store: see staged-manifests.ts), or
 * null when the store has it.
 */
async function stagedInCache(key: string): Promise<Buffer | null> {
  const name = key.slice(key.lastIndexOf("/") + 1);
  const at = stagedManifestsAt();
  if (at.at === "here") return at.take(name);
  if (at.at === "none") return null;
  const kept = await askPrimary<string | null>("quiver:staged-manifest", { name }, 10_000);
  return kept === null ? null : Buffer.from(kept, "base64");
}

/** What a commit made through the commit connection to one location carries, and what it must pass to be made. */
export interface CommitGuard {
  /** Added to the version's transaction properties. */
  properties: Record<string, string>;
  /** Throws to refuse the commit of `version` in `directory` (nothing is published then). */
  admit(files: TableFiles, directory: string, version: number): Promise<void>;
}

/**
 * The guards of the commits under way in this process, by root and location (one write turn per location at a time),
 * with why the guard refused the commit, once it has: the commit is then over, and the engine is answered nothing
 * more about the location (EngineVersions.answer), so that it fails the write at once instead of rebasing it and,
 * for an update or a delete, running it again after a backoff as long as the wait it has already had.
 */
const guards = new Map<string, { guard: CommitGuard; refused: string | null }>();
const guardKey = (root: DataRoot, location: string) => `${root.uri}\0${location}`;

/**
 * Runs `work` (a commit through the commit connection) with `guard` on the commits it makes to the location. `within`
 * another guarded commit there (a first write's own guard inside its requests' guard), a version passes both guards,
 * the outer first, and carries both's properties.
 */
export async function withCommitGuard<T>(root: DataRoot, location: string, guard: CommitGuard, work: () => Promise<T>, within = false): Promise<T> {
  const key = guardKey(root, location);
  const outer = guards.get(key);
  if (outer && !within) throw new Error(`a commit to '${location}' is already guarded in this process`);
  const held = { guard: outer ? bothOf(outer.guard, guard) : guard, refused: null as string | null };
  guards.set(key, held);
  try {
    return await work();
  } finally {
    if (outer) {
      outer.refused ??= held.refused;
      guards.set(key, outer);
    } else guards.delete(key);
  }
}

/**
 * A guard that admits what both admit. Each is asked even when the other refuses: the requests' guard notes there
 * which request it found applied, which decides how the write is answered.
 */
function bothOf(first: CommitGuard, second: CommitGuard): CommitGuard {
  return {
    properties: { ...first.properties, ...second.properties },
    admit: async (files, directory, version) => {
      const answers = await Promise.allSettled([first.admit(files, directory, version), second.admit(files, directory, version)]);
      const refusal = answers.find((a): a is PromiseRejectedResult => a.status === "rejected");
      if (refusal) throw refusal.reason;
    },
  };
}

/**
 * The latest manifest of main this process published at each location (by root and location): a look at the table
 * that finds it still the latest finds the directory this process's commit handle committed to (Datasets.stampFollowed).
 */
const published = new Map<string, { version: number; etag: string }>();

/** The manifest of main this process last published at the location, if any. */
export function publishedHere(root: DataRoot, location: string): { version: number; etag: string } | undefined {
  return published.get(guardKey(root, location));
}

/** Asks the guard at the location, if any, to admit `version`; a refusal ends the commit (see `guards`) and is thrown. */
async function admitted(root: DataRoot, files: TableFiles, directory: string, version: number) {
  const held = guards.get(guardKey(root, files.location));
  if (!held) return null;
  try {
    await held.guard.admit(files, directory, version);
  } catch (err) {
    held.refused = err instanceof Error ? err.message : String(err);
    throw err;
  }
  return held.guard;
}

/**
 * The manifest of `version` as the commit under way at the location publishes it: let through by its guard (which
 * throws to refuse it) and with the guard's properties; as it is when no commit is guarded there.
 */
export async function guardedManifest(root: DataRoot, files: TableFiles, directory: string, version: number, content: Buffer): Promise<Buffer> {
  const guard = await admitted(root, files, directory, version);
  return guard && Object.keys(guard.properties).length ? withTransactionProperties(content, guard.properties) : content;
}

/** An answer to the engine: a status and its JSON body. */
export interface LocatorAnswer {
  status: number;
  body: unknown;
}

const refusal = (status: number, code: ErrorCodeValue, error: string): LocatorAnswer => ({ status, body: { error, code } });

interface VersionRequest {
  version?: number;
  branch?: string | null;
  manifest_path?: string;
  naming_scheme?: string;
  descending?: boolean;
  limit?: number;
}

/** A version listed, then gone before its manifest was read. */
class VersionGone extends Error {}

/** The version operations of one table location for the engine's commit connection. */
export class EngineVersions {
  private readonly files: TableFiles;

  constructor(
    private readonly root: DataRoot,
    store: ObjectStore,
    private readonly location: string,
  ) {
    // The engine's own commits move its handles; nothing else here needs telling.
    this.files = new TableFiles(store, root, location, () => {});
  }

  async answer(operation: "list" | "describe" | "create", request: VersionRequest): Promise<LocatorAnswer> {
    try {
      return await this.answered(operation, request);
    } catch (err) {
      // The latest version gone while it was described, or every version listed: the table was dropped meanwhile.
      if (err instanceof VersionGone)
        return refusal(404, request.version === undefined ? ErrorCode.TableNotFound : ErrorCode.TableVersionNotFound, err.message);
      throw err;
    }
  }

  private async answered(operation: "list" | "describe" | "create", request: VersionRequest): Promise<LocatorAnswer> {
    const refused = guards.get(guardKey(this.root, this.location))?.refused;
    if (refused) return refusal(409, ErrorCode.ConcurrentModification, `the commit under way was refused: ${refused}`);
    const directory = this.files.directoryOf(request.branch ?? undefined);
    if (operation === "create") return this.publish(directory, request);
    const { sources } = await this.files.versions(directory);
    if (operation === "describe") {
      const version = request.version ?? Math.max(0, ...sources.keys());
      const source = sources.get(version);
      if (!source && request.version === undefined) return refusal(404, ErrorCode.TableNotFound, `'${this.location}' has no version`);
      if (!source) return refusal(404, ErrorCode.TableVersionNotFound, `version ${version} of '${this.location}' does not exist`);
      return { status: 200, body: { version: await this.record(directory, version, source) } };
    }
    return { status: 200, body: { versions: await this.listed(directory, sources, request) } };
  }

  /**
   * The records of the versions listed, in the order and up to the number asked: a version gone before its manifest
   * was read (versions deleted by a cleanup meanwhile) is left out, as a listing made a moment later would, and the
   * next one listed takes its place.
   */
  private async listed(directory: string, sources: Map<number, ManifestSource>, request: VersionRequest) {
    const ordered = [...sources.keys()].sort((a, b) => (request.descending === false ? a - b : b - a));
    const wanted = Math.min(request.limit ?? ordered.length, ordered.length);
    const records: Array<Awaited<ReturnType<EngineVersions["record"]>>> = [];
    for (let next = 0; records.length < wanted && next < ordered.length;) {
      const batch = ordered.slice(next, next + wanted - records.length);
      next += batch.length;
      const read = await Promise.all(
        batch.map((v) =>
          this.record(directory, v, sources.get(v)!).catch((err: unknown) => {
            if (err instanceof VersionGone) return null;
            throw err;
          }),
        ),
      );
      records.push(...read.filter((r) => r !== null));
    }
    // Every one listed gone: the table was dropped meanwhile.
    if (wanted > 0 && records.length === 0) throw new VersionGone(`'${this.location}' has no version left`);
    return records;
  }

  private async record(directory: string, version: number, source: ManifestSource) {
    const { file, summary } = await this.files.manifest(version, source).catch(async (err: unknown) => {
      // Listed, then gone before it was read (a drop, or versions deleted meanwhile): no such version now.
      if ((await this.files.versions(directory)).sources.has(version)) throw err;
      throw new VersionGone(`version ${version} of '${this.location}' does not exist`);
    });
    return {
      version,
      manifest_path: this.files.storePath(file.path),
      manifest_size: file.size,
      e_tag: file.eTag,
      timestamp_millis: summary.timestampMillis,
      metadata: {},
    };
  }

  /** Publishes the staged manifest as its version, with the guard's properties, where no manifest of it exists. */
  private async publish(directory: string, request: VersionRequest): Promise<LocatorAnswer> {
    const { version, manifest_path: manifestPath } = request;
    if (typeof version !== "number" || typeof manifestPath !== "string") return refusal(400, ErrorCode.InvalidInput, "version and manifest_path are required");
    const staged = this.files.keyInside(directory, manifestPath);
    if (staged === null) return refusal(400, ErrorCode.InvalidInput, `'${manifestPath}' is not a staged manifest of '${this.location}'`);
    const cached = this.root.kind === "object" ? await stagedInCache(staged) : null;
    const content = cached ?? (await this.files.read(staged));
    if (!content) return refusal(400, ErrorCode.InvalidInput, `the staged manifest '${manifestPath}' does not exist`);
    let manifest: Buffer;
    try {
      manifest = await guardedManifest(this.root, this.files, directory, version, content);
    } catch (err) {
      return refusal(409, ErrorCode.ConcurrentModification, err instanceof Error ? err.message : String(err));
    }
    const v2 = request.naming_scheme !== "V1";
    // The store may have written it on a first try whose answer was lost: then the manifest there is this one.
    const commit = await this.files.publishManifest(directory, version, v2, manifest);
    const info = commit && (commit.written ?? (await this.files.head(commit.key)));
    if (!commit || !info) {
      // Another writer made the version. If that was another attempt of this commit's requests, the guard, asked as
      // of the next version, refuses: the engine is then not to rebase the commit onto it.
      const taken = `version ${version} of '${this.location}' already exists`;
      return admitted(this.root, this.files, directory, version + 1).then(
        () => refusal(409, ErrorCode.ConcurrentModification, taken),
        (err: unknown) => refusal(409, ErrorCode.ConcurrentModification, `${taken}; ${err instanceof Error ? err.message : String(err)}`),
      );
    }
    this.files.knownManifest(commit.key, info.etag, manifest);
    if (directory === this.location) published.set(guardKey(this.root, this.location), { version, etag: info.etag });
    // Neither is needed for the answer: a staged file left behind costs space, and a hint behind the latest costs a
    // reader a look past it (the engine writes one only on a local root).
    if (!cached)
      void this.files
        .remove(staged)
        .catch((err: unknown) => log.warn({ err, location: this.location }, "removing a committed version's staged manifest failed"));
    if (this.root.kind === "local") {
      void this.files
        .hintLatest(directory, version)
        .catch((err: unknown) => log.warn({ err, location: this.location }, "moving the latest version's hint failed"));
    }
    return {
      status: 200,
      body: {
        version: {
          version,
          manifest_path: this.files.storePath(childUri(this.root, commit.key)),
          manifest_size: manifest.length,
          e_tag: info.etag,
          timestamp_millis: Date.now(),
          metadata: {},
        },
      },
    };
  }
}
