/**
 * A table's versions as the namespace's version operations see them: manifest files under `_versions/` of the main
 * branch's directory or of a branch's (`tree/<branch>/`), listed, described, committed from a staged manifest, and
 * deleted, as Lance's directory namespace does without a version store of its own.
 */
import "server-only";
import { QuiverError, invalidInput, unsupported } from "@/server/errors";
import { log } from "@/server/log";
import { pausepoint } from "@/server/failpoints";
import { isManagedVersioning } from "@/lib/contract/catalog";
import type { Id } from "@/server/catalog/catalog";
import type { TableEntry } from "@/server/catalog/catalog-table";
import { decodePageToken, encodePageToken } from "@/server/catalog/paging";
import { engineCall } from "@/server/lance/native";
import { ManifestGone, inlineTransaction, manifestKey, parseManifest, type VersionSummary } from "@/server/lance/version-manifest";
import type { ManifestSource, TableFiles } from "@/server/lance/table-files";
import { authorsOf, forgetAuthors, pruneAuthors } from "./version-authors";
import type { BatchChanges, BatchMember } from "@/server/catalog/batch-holds";
import { branchNameProblem } from "./refs";
import { namedBranch, versionAt } from "./branch-name";
import type { Tables } from "./tables";
import { allLanded, currentWrite } from "./write-ledger";

/** The directory whose `_versions/` holds a branch's own manifests (main's: the table's directory); the branch must exist. */
async function branchDirectory(tables: Tables, entry: TableEntry, files: TableFiles, branch?: string): Promise<string> {
  if (namedBranch(branch) !== null) await tables.writeHandle(entry, branch);
  return files.directoryOf(branch);
}

/**
 * The versions of a branch and where their manifests are: its own directory's (main's, or a branch's, which holds a
 * copy of the version it was made from and those written on it), as the engine lists a branch's versions.
 */
async function versionSources(tables: Tables, entry: TableEntry, files: TableFiles, branch?: string): Promise<Map<number, ManifestSource>> {
  const { sources, holds } = await files.versions(await branchDirectory(tables, entry, files, branch));
  // A batch still committing other tables' versions with these holds them back, so that all appear at once.
  for (const version of await tables.heldBack(holds)) sources.delete(version);
  return sources;
}

export type TableVersionRecord = Awaited<ReturnType<typeof versionRecord>>;

/**
 * A version as the version operations answer it; `before` is where the previous version's manifest is, if it exists.
 * A managed table's manifest path is in the form Lance's clients read it (they commit and check out through these
 * answers): the object store's own path, without scheme and bucket.
 */
async function versionRecord(files: TableFiles, entry: TableEntry, version: number, source: ManifestSource, withOperation: boolean, before?: ManifestSource) {
  return recordOf(files, entry, version, source, await files.manifest(version, source), withOperation, before);
}

/** The record of a version whose manifest was read (`made`). */
async function recordOf(
  files: TableFiles,
  entry: TableEntry,
  version: number,
  source: ManifestSource,
  made: Awaited<ReturnType<TableFiles["manifest"]>>,
  withOperation: boolean,
  before?: ManifestSource,
) {
  const { file, summary } = made;
  const operation = withOperation ? await files.operation(version, source, made, before) : undefined;
  return {
    version,
    manifest_path: isManagedVersioning(entry.properties) ? files.storePath(file.path) : file.path,
    manifest_size: file.size,
    e_tag: file.eTag,
    timestamp_millis: summary.timestampMillis,
    timestamp: new Date(summary.timestampMillis).toISOString(),
    metadata: summary.metadata,
    ...(withOperation ? { operation: operation?.operation ?? null, action: operation?.action ?? null } : {}),
  };
}

export async function listVersions(
  tables: Tables,
  id: Id,
  options: { pageToken?: string; limit: number; descending: boolean; branch?: string; withOperations?: boolean },
) {
  const { value } = await tables.resolveWith(id, (entry) => versionPage(tables, entry, options));
  return value;
}

async function versionPage(
  tables: Tables,
  entry: TableEntry,
  options: { pageToken?: string; limit: number; descending: boolean; branch?: string; withOperations?: boolean },
) {
  const none = { versions: [], page_token: undefined };
  const files = tables.filesOf(entry);
  let sources: Map<number, ManifestSource>;
  try {
    sources = await versionSources(tables, entry, files, options.branch);
  } catch (err) {
    if (await tables.isDeclaredOnly(entry)) return none;
    throw err;
  }
  // A declared table has no versions yet; a written one always has one.
  if (sources.size === 0) return none;
  const numbers = [...sources.keys()];
  numbers.sort((a, b) => (options.descending ? b - a : a - b));
  const after = decodePageToken(options.pageToken);
  const afterVersion = after === undefined ? undefined : Number(after);
  if (afterVersion !== undefined && !Number.isInteger(afterVersion)) throw invalidInput("page_token is not a token this service issued");
  const start = afterVersion === undefined ? 0 : numbers.findIndex((v) => (options.descending ? v < afterVersion : v > afterVersion));
  const slice = start < 0 ? [] : numbers.slice(start, start + options.limit);
  const more = start >= 0 && start + options.limit < numbers.length;
  pausepoint("pause-after-version-list", entry.objectId);
  // A version listed and then cleaned up before its manifest was read is no longer there: the page leaves it out.
  const read = await Promise.all(
    slice.map((version) =>
      files.manifest(version, sources.get(version)!).then(
        (made) => ({ version, made }),
        (err: unknown) => (err instanceof ManifestGone ? null : Promise.reject(err)),
      ),
    ),
  );
  const found = read.filter((r) => r !== null);
  const made = found.map((r) => r.made);
  const versions = await Promise.all(
    found.map(({ version, made }) => recordOf(files, entry, version, sources.get(version)!, made, options.withOperations ?? false, sources.get(version - 1))),
  );
  const page = { versions, page_token: more ? encodePageToken(String(slice[slice.length - 1])) : undefined };
  if (!options.withOperations || !isManagedVersioning(entry.properties)) return page;
  // Who committed a guarded version is in its own manifest, read above.
  const authors = await authorsOf(
    tables.records,
    entry,
    options.branch,
    versions.map((v, i) => ({ ...v, committedBy: made[i].summary.committedBy })),
  );
  return { ...page, versions: versions.map((v) => ({ ...v, committed_by: authors.get(v.version) ?? null })) };
}

/** One version of a table (its latest when none is named). */
export async function describeTableVersion(tables: Tables, id: Id, options: { version?: number; branch?: string }) {
  const entry = await tables.resolve(id);
  await tables.requireData(entry, "have versions");
  const files = tables.filesOf(entry);
  const sources = await versionSources(tables, entry, files, options.branch);
  const version = options.version ?? Math.max(...sources.keys());
  const source = sources.get(version);
  if (!source) throw new QuiverError("TableVersionNotFound", `version ${version} of table '${entry.objectId}' does not exist`);
  return { version: await versionRecord(files, entry, version, source, false) };
}

export interface NewTableVersion {
  version: number;
  manifestPath: string;
  manifestSize?: number;
  eTag?: string;
  metadata?: Record<string, string>;
  namingScheme?: "V1" | "V2";
  branch?: string;
}

/**
 * One table's part of a change that may span tables: checked when made (nothing changed yet), then applied, and
 * undone if a later part fails. `finish` tidies what is no longer needed once every part is applied.
 */
export interface Step<R> {
  apply(): Promise<R>;
  undo(): Promise<void>;
  finish(): Promise<void>;
  /** The version the step publishes, which a batch holds back until all its parts are applied, and its staged manifest. */
  publishes?: BatchMember;
  /** Set when an interrupted attempt of the same request already published the version (see BatchOfVersions). */
  published?: boolean;
}

/**
 * Commits a version whose manifest a writer staged inside the table's directory: the staged file becomes the
 * version's manifest only where no manifest of that version exists (a concurrent commit of the same version loses
 * with ConcurrentModification). What is left to do once the version is published (removing the staged file, and
 * the catalog's look at whether the table was dropped under the commit) is `tidy`, which the caller runs beside
 * writing the audit entry and the version's record, a round trip fewer before the answer.
 */
export async function createTableVersion(tables: Tables, id: Id, request: NewTableVersion) {
  const step = await tableVersionStep(tables, id, request, { alone: true });
  const { created, tidy } = await step.applyBeforeDrops();
  return { created, what: await step.committed(), tidy };
}

/**
 * Checks a staged manifest as CreateTableVersion takes it. Applying publishes it as its version; undoing takes that
 * version back while it is still the latest (nothing committed on it), and finishing removes the staged file.
 * `committed` says what the version did, for the audit log. A lone commit applies before drops (Tables.
 * commitBeforeDrops): answered once published, and tidied beside what follows.
 *
 * On a store 10-50 ms away each round trip in a row counts: the catalog's check and the reads of the staged manifest
 * and the versions overlap, and the transaction is read while the version is published.
 */
export async function tableVersionStep(
  tables: Tables,
  id: Id,
  request: NewTableVersion,
  { alone = false }: { alone?: boolean } = {},
): Promise<
  Step<{ version: TableVersionRecord }> & {
    committed: () => Promise<string>;
    applyBeforeDrops: () => Promise<{ created: { version: TableVersionRecord }; tidy: (recorded: Promise<unknown>) => Promise<void> }>;
  }
> {
  if (request.metadata && Object.keys(request.metadata).length) {
    throw unsupported("metadata: a version's metadata is written in its manifest; it cannot be attached when committing one");
  }
  const named = namedBranch(request.branch);
  const problem = named === null ? null : branchNameProblem(named);
  if (problem) throw invalidInput(`'${request.branch}' is not a valid branch name: ${problem}`);
  // Every claim made is settled before this returns or throws, even when the catalog's fresh look refuses the table
  // first: the request's end then finds it made, and lets it go.
  const claims: Array<Promise<unknown>> = [];
  const looked = tables.resolveWith(id, async (entry) => {
    const files = tables.filesOf(entry);
    // Not opened through the engine: Lance's client creating a branch commits the branch's first version before the
    // branch is one the engine can open.
    const directory = files.directoryOf(request.branch);
    const staged = files.keyInside(directory, request.manifestPath);
    if (staged === null) {
      throw invalidInput(`manifest_path '${request.manifestPath}' is not a staged manifest inside the table's directory`);
    }
    // The request says the version it makes, so its claim in the write ledger (what a retry of it is told by) is
    // written beside the reads that check it; with an e-tag, the staged manifest is read only if it is still the
    // one the writer staged. An earlier attempt found by the claim decides before whatever the reads found.
    // A batch's parts are claimed together, as the batch, when it applies them.
    const claiming = alone ? tables.claimAhead(entry, { after: request.version - 1, version: { number: request.version, staged } }) : Promise.resolve([]);
    claims.push(claiming);
    const [claimed, [{ sources, v2 }, content]] = await allLanded([
      claiming,
      Promise.all([files.versions(directory), request.eTag === undefined ? files.read(staged) : files.readIfMatch(staged, request.eTag)]),
    ] as const);
    return { files, directory, staged, sources, v2, content, claimed };
  });
  const { entry, value: look } = await looked.finally(() => Promise.allSettled(claims));
  const { files, directory, staged, sources, v2, content, claimed } = look;
  const scheme = request.namingScheme ?? (sources.size === 0 || v2 ? "V2" : "V1");
  if (sources.size > 0 && (scheme === "V2") !== v2) {
    throw invalidInput(`naming_scheme ${scheme} differs from the ${v2 ? "V2" : "V1"} manifest names this table already uses`);
  }
  if (!content) throw invalidInput(`manifest_path '${request.manifestPath}' does not exist`);
  if (content === "changed") throw invalidInput(`e_tag '${request.eTag}' is not the staged manifest's: it was replaced after it was staged`);
  if (request.manifestSize !== undefined && request.manifestSize !== content.length) {
    throw invalidInput(`manifest_size ${request.manifestSize} differs from the staged manifest's ${content.length} bytes`);
  }
  let summary: VersionSummary;
  try {
    summary = parseManifest(content);
  } catch {
    throw invalidInput(`manifest_path '${request.manifestPath}' is not a Lance manifest`);
  }
  if (summary.version !== request.version) throw invalidInput(`the staged manifest is of version ${summary.version}, not ${request.version}`);
  const taken = () => new QuiverError("ConcurrentModification", `version ${request.version} of table '${entry.objectId}' already exists`);
  const isV2 = scheme === "V2";
  const finalKey = manifestKey(directory, request.version, isV2);
  // A batch's earlier attempt that stopped part-way may have published this version: it is this request's when it is
  // the very manifest staged for it, and the retry finishing the batch does not publish it again (BatchOfVersions).
  const resumes = currentWrite.getStore()?.resumes;
  const published =
    sources.has(request.version) &&
    !!resumes?.members.some((m) => m.directory === directory && m.version === request.version && m.staged === staged) &&
    !!(await files.read(finalKey))?.equals(content);
  if (sources.has(request.version) && !published) throw taken();
  // What the version did, read from its transaction (which the writer wrote before staging) while it is published.
  const at = versionAt(request.version, request.branch);
  const what = files
    .operation(
      request.version,
      { directory, v2: isV2 },
      { file: { key: finalKey, path: finalKey, size: content.length, eTag: "" }, summary, inlineTransaction: inlineTransaction(content) },
      sources.get(request.version - 1),
    )
    .then((done) => (done ? `${at}: ${done.operation}, ${done.action}` : at))
    .catch(() => at);
  let removal: Promise<void> | undefined;
  const removeStaged = () => (removal ??= files.remove(staged));
  const publish = async () => {
    // The store may have written it on a first try whose answer was lost, and refused the client's second try: then
    // the manifest there is this one, and the version this commit's.
    const commit = await files.publishManifest(directory, request.version, isV2, content);
    if (!commit) throw taken();
    return commit.made ? commit : { ...commit, written: (await files.head(commit.key)) ?? { etag: "", size: content.length } };
  };
  const answer = async ({ key, written }: Awaited<ReturnType<typeof publish>>) => {
    const info = written!.etag ? written! : await files.head(key);
    if (!info) throw new QuiverError("ConcurrentModification", `version ${request.version} of table '${entry.objectId}' was deleted as it was committed`);
    // The version's manifest is the staged one, already read: its record needs no second read of it.
    files.knownManifest(key, info.etag, content);
    return { version: await versionRecord(files, entry, request.version, { directory, v2: isV2, info }, false) };
  };
  return {
    // Reading the staged manifest showed the table's directory there: the write needs no other look at it.
    apply: async () => answer(await tables.commitTo(entry, publish, { directorySeen: true })),
    applyBeforeDrops: async () => {
      const { result, settle } = await tables.commitBeforeDrops(entry, publish, {}, async () => claimed);
      const created = await answer(result);
      const tidy = async (recorded: Promise<unknown>) => {
        // The version is committed: a staged file left behind costs space, not a wrong answer. It goes once the
        // version's record names the commit (until then it is what tells a retry that the version is this commit's),
        // after the answer rather than before it.
        void recorded.then(removeStaged).catch((err: unknown) => log.warn({ err, table: id }, "removing a committed version's staged manifest failed"));
        const outcome = await settle();
        // A dropped table's records went with it; the one written about this version meanwhile goes too.
        if (outcome === "dropped") await recorded.then(() => forgetAuthors(tables.records, entry));
      };
      return { created, tidy };
    },
    undo: () =>
      tables.commitTo(entry, async () => {
        const keptBy = await files.takeBackVersion(directory, request.version, isV2);
        if (keptBy !== null) {
          throw new QuiverError(
            "ConcurrentModification",
            `version ${request.version} of table '${entry.objectId}' cannot be taken back: version ${keptBy} was committed on it`,
          );
        }
      }),
    finish: removeStaged,
    committed: () => what,
    publishes: { table: id, branch: request.branch, directory, version: request.version, staged, v2: isV2 },
    published,
  };
}

/**
 * Deletes the manifests of versions in the ranges (start inclusive, end exclusive, -1 = through the latest), as
 * Lance's directory namespace does. The latest version and tagged versions are kept and the request refused: deleting
 * the first would roll the table back, the second would leave a tag pointing nowhere.
 */
export async function deleteTableVersions(tables: Tables, id: Id, ranges: Array<{ start: number; end: number }>, branch?: string) {
  const { entry, files, directory, doomedVersions } = await versionDeletion(tables, id, ranges, branch);
  // Checked again in the table's write turn, where nothing else commits to it.
  const remaining = await tables.commitTo(entry, async () => {
    const { doomed, kept, v2 } = await doomedVersions();
    await files.deleteManifests(directory, doomed, v2);
    return { deleted_count: doomed.length, kept };
  });
  // The records of who made the deleted versions go once the versions have.
  await pruneAuthors(tables.records, entry, branch, remaining.kept);
  return { deleted_count: remaining.deleted_count };
}

/** A deletion of versions: the table, and the versions in the ranges as the table has them now, checked. */
async function versionDeletion(tables: Tables, id: Id, ranges: Array<{ start: number; end: number }>, branch: string | undefined) {
  if (ranges.length === 0) throw invalidInput("ranges must list at least one range");
  const entry = await tables.resolve(id);
  await tables.requireData(entry, "have versions deleted");
  const files = tables.filesOf(entry);
  const directory = await branchDirectory(tables, entry, files, branch);
  const doomedVersions = async () => {
    const { sources, v2 } = await files.versions(directory);
    const versions = [...sources.keys()];
    const latest = Math.max(...versions);
    const doomed = versions.filter((v) => ranges.some((r) => v >= r.start && (r.end === -1 || v < r.end))).sort((a, b) => a - b);
    if (doomed.includes(latest))
      throw invalidInput(`version ${latest} is the latest of table '${entry.objectId}': restore an earlier version or drop the table instead`);
    const table = await tables.writeHandle(entry, branch);
    const tags = await engineCall("list tags", async () => (await table.tags()).list());
    const refs = await files.tagRefs(Object.keys(tags));
    const onBranch = namedBranch(branch);
    const tagged = Object.entries(tags).filter(([name, t]) => doomed.includes(t.version) && (refs.get(name)?.branch ?? null) === onBranch);
    if (tagged.length) {
      throw new QuiverError(
        "InvalidTableState",
        `tagged versions are kept: ${tagged.map(([name, t]) => `${t.version} (tag '${name}')`).join(", ")}; delete those tags first`,
      );
    }
    return { doomed, kept: new Set(versions.filter((v) => !doomed.includes(v))), v2 };
  };
  return { entry, files, directory, doomedVersions };
}

/** A batch's deletion of versions (batch-finish.ts deletes them once the batch is decided), checked; nothing changed. */
export async function plannedDeletion(
  tables: Tables,
  id: Id,
  ranges: Array<{ start: number; end: number }>,
  branch: string | undefined,
): Promise<BatchChanges["deletions"][number]> {
  const { directory, doomedVersions } = await versionDeletion(tables, id, ranges, branch);
  const { doomed, v2 } = await doomedVersions();
  return { table: id, ...(branch ? { branch } : {}), directory, versions: doomed, v2 };
}

/** The record of a version a batch published, as its answer gives it. */
export async function publishedVersion(tables: Tables, member: BatchMember): Promise<TableVersionRecord> {
  const entry = await tables.resolve(member.table);
  const files = tables.filesOf(entry);
  const info = await files.head(manifestKey(member.directory, member.version, member.v2));
  if (!info) throw new QuiverError("ConcurrentModification", `version ${member.version} of table '${entry.objectId}' was deleted as it was committed`);
  return versionRecord(files, entry, member.version, { directory: member.directory, v2: member.v2, info }, false);
}
