/**
 * A table's versions as the namespace's version operations see them: manifest files under `_versions/` of the main
 * branch's directory or of a branch's (`tree/<branch>/`), listed, described, committed from a staged manifest, and
 * deleted, as Lance's directory namespace does without a version store of its own.
 */
import "server-only";
import { QuiverError, invalidInput, unsupported } from "@/server/errors";
import type { Catalog, Id } from "@/server/catalog/catalog";
import type { TableEntry } from "@/server/catalog/catalog-table";
import { decodePageToken, encodePageToken } from "@/server/catalog/paging";
import { engineCall, manifestKey } from "@/server/storage/datasets";
import type { ObjectInfo } from "@/server/storage/object-store";
import { readTagRefs } from "@/server/lance/refs";
import { relativeTo } from "@/server/storage/root";
import { versionOperation } from "@/server/lance/version-operations";
import { listVersionNumbers, parseManifest, versionSummary } from "@/server/lance/version-manifest";

const isMain = (branch?: string) => !branch || branch === "main";

/** The directory whose `_versions/` holds a branch's own manifests (main's: the table's directory); the branch must exist. */
async function branchDirectory(catalog: Catalog, entry: TableEntry, branch?: string): Promise<string> {
  if (isMain(branch)) return entry.location;
  await catalog.writeHandle(entry, branch);
  return `${entry.location}/tree/${branch}`;
}

interface ManifestSource {
  directory: string;
  v2: boolean;
  info: ObjectInfo;
}

/**
 * The versions of a branch and where their manifests are: its own directory's (main's, or a branch's, which holds a
 * copy of the version it was made from and those written on it), as the engine lists a branch's versions.
 */
async function versionSources(catalog: Catalog, entry: TableEntry, branch?: string): Promise<Map<number, ManifestSource>> {
  const directory = await branchDirectory(catalog, entry, branch);
  const { v2, files } = await listVersionNumbers(catalog.store, directory);
  return new Map([...files].map(([version, info]) => [version, { directory, v2, info }]));
}

async function summaryOf(catalog: Catalog, version: number, { directory, v2, info }: ManifestSource) {
  const file = await catalog.datasets.manifestFile(directory, version, v2, info);
  return { file, summary: await versionSummary(catalog.store, file) };
}

/** A version as the version operations answer it; `before` is where the previous version's manifest is, if it exists. */
async function versionRecord(catalog: Catalog, version: number, source: ManifestSource, withOperation: boolean, before?: ManifestSource) {
  const { file, summary } = await summaryOf(catalog, version, source);
  const fieldsBefore = async () => (before ? (await summaryOf(catalog, version - 1, before)).summary.fields : null);
  const operation = withOperation
    ? await versionOperation(
        catalog.store,
        source.directory,
        { key: file.key, version, fields: summary.fields, transactionFile: summary.transactionFile },
        fieldsBefore,
      )
    : undefined;
  return {
    version,
    manifest_path: file.path,
    manifest_size: file.size,
    e_tag: file.eTag,
    timestamp_millis: summary.timestampMillis,
    timestamp: new Date(summary.timestampMillis).toISOString(),
    metadata: summary.metadata,
    ...(withOperation ? { operation: operation?.operation ?? null, action: operation?.action ?? null } : {}),
  };
}

export async function listVersions(
  catalog: Catalog,
  id: Id,
  options: { pageToken?: string; limit: number; descending: boolean; branch?: string; withOperations?: boolean },
) {
  const entry = await catalog.resolve(id);
  if (await catalog.isDeclaredOnly(entry)) return { versions: [], page_token: undefined };
  const sources = await versionSources(catalog, entry, options.branch);
  const numbers = [...sources.keys()];
  numbers.sort((a, b) => (options.descending ? b - a : a - b));
  const after = decodePageToken(options.pageToken);
  const afterVersion = after === undefined ? undefined : Number(after);
  if (afterVersion !== undefined && !Number.isInteger(afterVersion)) throw invalidInput("page_token is not a token this service issued");
  const start = afterVersion === undefined ? 0 : numbers.findIndex((v) => (options.descending ? v < afterVersion : v > afterVersion));
  const slice = start < 0 ? [] : numbers.slice(start, start + options.limit);
  const more = start >= 0 && start + options.limit < numbers.length;
  const versions = await Promise.all(
    slice.map((version) => versionRecord(catalog, version, sources.get(version)!, options.withOperations ?? false, sources.get(version - 1))),
  );
  return { versions, page_token: more ? encodePageToken(String(slice[slice.length - 1])) : undefined };
}

/** One version of a table (its latest when none is named). */
export async function describeTableVersion(catalog: Catalog, id: Id, options: { version?: number; branch?: string }) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, "have versions");
  const sources = await versionSources(catalog, entry, options.branch);
  const version = options.version ?? Math.max(...sources.keys());
  const source = sources.get(version);
  if (!source) throw new QuiverError("TableVersionNotFound", `version ${version} of table '${entry.objectId}' does not exist`);
  return { version: await versionRecord(catalog, version, source, false) };
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
 * Commits a version whose manifest a writer staged inside the table's directory: the staged file becomes the
 * version's manifest only where no manifest of that version exists (a concurrent commit of the same version loses
 * with ConcurrentModification), and the staged file is then removed.
 */
export async function createTableVersion(catalog: Catalog, id: Id, request: NewTableVersion) {
  const entry = await catalog.resolve(id);
  const directory = await branchDirectory(catalog, entry, request.branch);
  if (request.metadata && Object.keys(request.metadata).length) {
    throw unsupported("metadata: a version's metadata is written in its manifest; it cannot be attached when committing one");
  }
  const staged = relativeTo(catalog.datasets.root, request.manifestPath);
  if (staged === null || !staged.startsWith(`${directory}/`) || staged.split("/").some((s) => s === ".." || s === ".")) {
    throw invalidInput(`manifest_path '${request.manifestPath}' is not a staged manifest inside the table's directory`);
  }
  const { versions, v2 } = await listVersionNumbers(catalog.store, directory);
  const scheme = request.namingScheme ?? (versions.length === 0 || v2 ? "V2" : "V1");
  if (versions.length > 0 && (scheme === "V2") !== v2) {
    throw invalidInput(`naming_scheme ${scheme} differs from the ${v2 ? "V2" : "V1"} manifest names this table already uses`);
  }
  const content = await catalog.store.get(staged);
  if (!content) throw invalidInput(`manifest_path '${request.manifestPath}' does not exist`);
  if (request.manifestSize !== undefined && request.manifestSize !== content.length) {
    throw invalidInput(`manifest_size ${request.manifestSize} differs from the staged manifest's ${content.length} bytes`);
  }
  let manifestVersion: number;
  try {
    manifestVersion = parseManifest(content).version;
  } catch {
    throw invalidInput(`manifest_path '${request.manifestPath}' is not a Lance manifest`);
  }
  if (manifestVersion !== request.version) throw invalidInput(`the staged manifest is of version ${manifestVersion}, not ${request.version}`);
  if (request.eTag !== undefined) {
    const info = await catalog.store.head(staged);
    if (info && info.etag !== request.eTag) throw invalidInput(`e_tag '${request.eTag}' differs from the staged manifest's '${info.etag}'`);
  }
  const key = manifestKey(directory, request.version, scheme === "V2");
  await catalog.commitTo(entry, async () => {
    if (!(await catalog.store.putIfAbsent(key, content))) {
      throw new QuiverError("ConcurrentModification", `version ${request.version} of table '${entry.objectId}' already exists`);
    }
  });
  await catalog.store.delete(staged);
  catalog.datasets.forget(entry.location);
  const listed = await catalog.store.head(key);
  if (!listed) throw new QuiverError("ConcurrentModification", `version ${request.version} of table '${entry.objectId}' was deleted as it was committed`);
  return { version: await versionRecord(catalog, request.version, { directory, v2: scheme === "V2", info: listed }, false) };
}

/**
 * Deletes the manifests of versions in the ranges (start inclusive, end exclusive, -1 = through the latest), as
 * Lance's directory namespace does. The latest version and tagged versions are kept and the request refused: deleting
 * the first would roll the table back, the second would leave a tag pointing nowhere.
 */
export async function deleteTableVersions(catalog: Catalog, id: Id, ranges: Array<{ start: number; end: number }>, branch?: string) {
  if (ranges.length === 0) throw invalidInput("ranges must list at least one range");
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, "have versions deleted");
  const directory = await branchDirectory(catalog, entry, branch);
  return catalog.commitTo(entry, async () => {
    const { versions, v2 } = await listVersionNumbers(catalog.store, directory);
    const latest = Math.max(...versions);
    const doomed = versions.filter((v) => ranges.some((r) => v >= r.start && (r.end === -1 || v < r.end))).sort((a, b) => a - b);
    if (doomed.includes(latest))
      throw invalidInput(`version ${latest} is the latest of table '${entry.objectId}': restore an earlier version or drop the table instead`);
    const table = await catalog.writeHandle(entry, branch);
    const tags = await engineCall("list tags", async () => (await table.tags()).list());
    const refs = await readTagRefs(catalog.store, entry.location, Object.keys(tags));
    const onBranch = isMain(branch) ? null : branch;
    const tagged = Object.entries(tags).filter(([name, t]) => doomed.includes(t.version) && (refs.get(name)?.branch ?? null) === onBranch);
    if (tagged.length) {
      throw new QuiverError(
        "InvalidTableState",
        `tagged versions are kept: ${tagged.map(([name, t]) => `${t.version} (tag '${name}')`).join(", ")}; delete those tags first`,
      );
    }
    for (const version of doomed) await catalog.store.delete(manifestKey(directory, version, v2));
    catalog.datasets.forget(entry.location);
    return { deleted_count: doomed.length };
  });
}
