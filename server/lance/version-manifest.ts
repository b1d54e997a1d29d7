/**
 * Version facts read straight from Lance manifest files, so a page of a long history costs that page. A manifest
 * file ends with the position of its protobuf `Manifest` (lance's table.proto), which lists the version's
 * fragments; row counts and sizes are summed from them. Manifests never change, so summaries are cached.
 */
import "server-only";
import { fromBinary } from "@bufbuild/protobuf";
import { LRUCache } from "lru-cache";
import type { ObjectInfo, ObjectStore } from "@/server/storage/object-store";
import { IndexSectionSchema, ManifestSchema, type DataFragment, type Manifest } from "./proto/lance_format_pb";
import type { SchemaField } from "./version-operations";
import { transactionProperties } from "./transaction-properties";
import { countLookup } from "@/server/metrics";
import { QuiverError } from "@/server/errors";
import { versionAuthor, type VersionAuthor } from "@/lib/contract/catalog";

export interface VersionSummary {
  version: number;
  timestampMillis: number;
  transactionFile: string | null;
  metadata: Record<string, string>;
  /** The version's schema, each column by name, id and parent id. */
  fields: SchemaField[];
  /** The files the version is made of. */
  files: VersionFiles;
  /** Fragments with fewer live rows than Lance's compaction aims for. */
  smallFragments: number;
  /** Written with stable row ids (Lance's reader feature flag 2): rows keep their ids and the versions that made them. */
  stableRowIds: boolean;
  /** Lance's table metadata: key-value pairs about the table, apart from its configuration and its schema's metadata. */
  tableMetadata: Record<string, string>;
  /** The keys of the write requests the version applied, as Quiver published it (transaction property `quiver.requests`). */
  requests: string[];
  /** Who committed the version, through which operation, as Quiver published it (transaction property `quiver.committed_by`). */
  committedBy: CommittedBy | null;
}

/** Who committed a version and through which of the catalog's operations. */
export type CommittedBy = Pick<VersionAuthor, "principal" | "operation">;

/** The transaction property in which a version Quiver published names the write requests it applied, space-separated. */
export const REQUESTS_PROPERTY = "quiver.requests";

/** The transaction property in which a version Quiver published names who committed it (JSON of CommittedBy). */
export const COMMITTED_BY_PROPERTY = "quiver.committed_by";

const FLAG_STABLE_ROW_IDS = 2n;

/** Lance's compaction rewrites fragments with fewer rows than this (its default target rows per fragment). */
export const COMPACTION_TARGET_ROWS = 1024 * 1024;

/** A message of a manifest file at a position, its length first. */
function messageAt(buf: Buffer, position: number): Buffer {
  const length = buf.readUInt32LE(position);
  return buf.subarray(position + 4, position + 4 + length);
}

/**
 * Where a manifest file's protobuf `Manifest` is and its bytes: the file ends with the message's position (its length
 * first), the format version and the magic `LANC`.
 */
export function manifestMessage(buf: Buffer): { at: number; message: Buffer } {
  if (buf.length < 16 || buf.toString("latin1", buf.length - 4) !== "LANC") throw new Error("not a Lance manifest");
  const at = Number(buf.readBigInt64LE(buf.length - 16));
  return { at, message: messageAt(buf, at) };
}

function readManifest(buf: Buffer): Manifest {
  return fromBinary(ManifestSchema, manifestMessage(buf).message);
}

/**
 * The version's transaction as the manifest file holds it, byte for byte its `_transactions/` file: Lance's writers
 * put it in the manifest too (at `transaction_section`), so what a staged manifest's version did is read without
 * another request. Null for a manifest without one.
 */
export function inlineTransaction(buf: Buffer): Buffer | null {
  try {
    const section = readManifest(buf).transactionSection;
    return section === undefined ? null : messageAt(buf, Number(section));
  } catch {
    return null;
  }
}

/** The requests and the author a version Quiver published names in its transaction properties. */
function namedBy(buf: Buffer): { requests: string[]; committedBy: CommittedBy | null } {
  let properties: Record<string, string>;
  try {
    properties = transactionProperties(buf);
  } catch {
    // A transaction Quiver cannot read names no request of Quiver's.
    return { requests: [], committedBy: null };
  }
  return { requests: (properties[REQUESTS_PROPERTY] ?? "").split(" ").filter(Boolean), committedBy: committedByOf(properties[COMMITTED_BY_PROPERTY]) };
}

/** The author of a version as its transaction property says it: the contract's author, less what the catalog adds. */
const committedByProperty = versionAuthor.pick({ principal: true, operation: true });

function committedByOf(text: string | undefined): CommittedBy | null {
  if (!text) return null;
  try {
    const parsed = committedByProperty.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function parseManifest(buf: Buffer): VersionSummary {
  const manifest = readManifest(buf);
  let physicalRows = 0;
  let deletedRows = 0;
  let dataFiles = 0;
  let deletionFiles = 0;
  let dataBytes = 0;
  for (const fragment of manifest.fragments) {
    physicalRows += Number(fragment.physicalRows);
    dataFiles += fragment.files.length;
    for (const file of fragment.files) dataBytes += Number(file.fileSizeBytes);
    if (fragment.deletionFile) {
      deletionFiles++;
      deletedRows += Number(fragment.deletionFile.numDeletedRows);
    }
  }
  const fragments = manifest.fragments.length;
  const version = Number(manifest.version);
  const transactionFile = manifest.transactionFile || null;
  const timestampMillis = manifest.timestamp ? Number(manifest.timestamp.seconds) * 1000 + Math.floor(manifest.timestamp.nanos / 1e6) : 0;
  return {
    version,
    timestampMillis,
    transactionFile,
    fields: manifest.fields.map(({ name, id, parentId }) => ({ name, id, parentId })),
    files: filesNamed(manifest, buf),
    smallFragments: manifest.fragments.filter((f) => Number(f.physicalRows) - Number(f.deletionFile?.numDeletedRows ?? 0) < COMPACTION_TARGET_ROWS).length,
    stableRowIds: (manifest.readerFeatureFlags & FLAG_STABLE_ROW_IDS) !== 0n,
    tableMetadata: { ...manifest.tableMetadata },
    ...namedBy(buf),
    metadata: {
      total_rows: String(physicalRows - deletedRows),
      total_fragments: String(fragments),
      total_data_files: String(dataFiles),
      total_data_file_rows: String(physicalRows),
      total_deletion_files: String(deletionFiles),
      total_deletion_file_rows: String(deletedRows),
      total_files_size: String(dataBytes),
    },
  };
}

const cache = new LRUCache<string, VersionSummary>({ max: 50_000 });

/**
 * A manifest that was listed and then deleted before it was read (versions cleaned up, or the table dropped, in
 * between): that version no longer exists. A list leaves it out; a read of that one version answers it as not found.
 */
export class ManifestGone extends QuiverError {
  constructor(what = "a version of the table") {
    super("TableVersionNotFound", `${what} was deleted while it was being read`);
  }
}

/**
 * Keys of a `_versions/` directory read at first where only the newest manifest, or any manifest, is wanted: one page
 * of a listing, large enough to pass the few manifests writers of a managed table have staged and not yet committed.
 */
export const FIRST_VERSION_KEYS = 8;

const summaryKey = (store: ObjectStore, manifest: { key: string; eTag: string }) => `${store.root.uri}\0${manifest.key}\0${manifest.eTag}`;

/** Remembers what a manifest whose bytes the caller holds says, so that `versionSummary` need not read it. */
export function rememberSummary(store: ObjectStore, manifest: { key: string; eTag: string }, file: Buffer) {
  cache.set(summaryKey(store, manifest), parseManifest(file));
}

/**
 * A manifest file never changes once written, but a table dropped and created again at the same place writes new
 * files under the same names: so summaries are cached by the file's identity (its etag).
 */
export async function versionSummary(store: ObjectStore, manifest: { key: string; eTag: string }): Promise<VersionSummary> {
  const cacheKey = summaryKey(store, manifest);
  const cached = cache.get(cacheKey);
  countLookup("version_summary", cached !== undefined);
  if (cached) return cached;
  const file = await store.get(manifest.key);
  if (!file) throw new ManifestGone();
  const summary = parseManifest(file);
  if (manifest.eTag) cache.set(cacheKey, summary);
  return summary;
}

/**
 * A batch's hold on a version it is committing with versions of other tables: a file beside the manifests
 * (`_versions/.quiver-batch-<batch>-<version>`, which sorts before every manifest and which Lance's listing passes
 * over), so that the listing a reader makes anyway shows it. Readers through the catalog hide the version while
 * the batch is pending (server/catalog/batch-holds.ts).
 */
export interface BatchHold {
  batch: string;
  version: number;
}

const HOLD = /^\.quiver-batch-([0-9a-f]{16})-(\d+)$/;
export const holdKey = (directory: string, hold: BatchHold) => `${directory}/_versions/.quiver-batch-${hold.batch}-${hold.version}`;

function holdsIn(names: Iterable<string>): BatchHold[] {
  const holds: BatchHold[] = [];
  for (const name of names) {
    const match = HOLD.exec(name);
    if (match) holds.push({ batch: match[1], version: Number(match[2]) });
  }
  return holds;
}

/**
 * Committed versions of a dataset's main branch, from the names of its manifest files, each with its etag and size
 * where the store's listing carries them or `withInfo` asks for them (a caller that reads every manifest); otherwise
 * a caller heads the few manifests it reads.
 */
export async function listVersionNumbers(
  store: ObjectStore,
  location: string,
  withInfo = false,
): Promise<{ versions: number[]; v2: boolean; files: Map<number, ObjectInfo | undefined>; holds: BatchHold[] }> {
  const prefix = `${location}/_versions/`;
  const entries: Array<[string, ObjectInfo | undefined]> =
    store.listingHasInfo || withInfo ? [...(await store.listInfo(prefix))] : (await store.list(prefix)).map((key) => [key, undefined]);
  const named = entries.map(([key, info]) => [key.slice(prefix.length), info] as const);
  const listed = named.filter(([n]) => /^\d+\.manifest$/.test(n));
  const v2 = listed.some(([n]) => n.length === "18446744073709551614.manifest".length);
  const files = new Map(
    listed.map(([n, info]) => {
      const digits = n.slice(0, -".manifest".length);
      return [v2 ? Number(18446744073709551615n - BigInt(digits)) : Number(digits), info] as const;
    }),
  );
  return { versions: [...files.keys()], v2, files, holds: holdsIn(named.map(([n]) => n)) };
}

/** A directory's newest manifest: its key, version, naming and etag. */
export interface LatestManifest {
  key: string;
  version: number;
  v2: boolean;
  etag: string;
  /** What the listing said of it (its size, where the listing gives it): a read of it needs no look first. */
  info?: ObjectInfo;
  /** Batches' holds on versions, listed before the manifests. */
  holds: BatchHold[];
}

/**
 * The newest manifest in a dataset's (or branch's) directory, or null when it has none. Lance's V2 names sort the
 * newest first, so one listing of one key answers it; V1 names (`<n>.manifest`) need the whole listing.
 */
export async function latestManifestIn(store: ObjectStore, location: string): Promise<LatestManifest | null> {
  const prefix = `${location}/_versions/`;
  const [first] = await store.listInfo(prefix, 1);
  if (!first) return null;
  const isV2Manifest = ([key]: [string, ObjectInfo]) => /^\d{20}\.manifest$/.test(key.slice(prefix.length));
  // A writer's staged manifest (`<version>.manifest-<uuid>`) and a batch's hold sort before the versions they
  // follow: a page of the listing finds the newest V2 manifest past them, without listing every version.
  const page = isV2Manifest(first) ? [first] : [...(await store.listInfo(prefix, FIRST_VERSION_KEYS))];
  const holds = holdsIn(page.map(([key]) => key.slice(prefix.length)));
  const newest = page.find(isV2Manifest);
  if (newest) {
    const [firstKey, firstInfo] = newest;
    const version = Number(18446744073709551615n - BigInt(firstKey.slice(prefix.length, -".manifest".length)));
    // The listing carries the etag on every store here; one that leaves it out is asked for it.
    const etag = firstInfo.etag || (await store.head(firstKey))?.etag;
    return etag === undefined ? null : { key: firstKey, version, v2: true, etag, info: { ...firstInfo, etag }, holds };
  }
  const { versions } = await listVersionNumbers(store, location);
  if (!versions.length) return null;
  const version = Math.max(...versions);
  const key = manifestKey(location, version, false);
  const info = await store.head(key);
  return info && { key, version, v2: false, etag: info.etag, info, holds };
}

/** The key of a version's manifest under a dataset (or branch) directory, in the V2 (u64::MAX - version) or V1 naming. */
export function manifestKey(location: string, version: number, v2Paths: boolean): string {
  const file = v2Paths ? `${(18446744073709551615n - BigInt(version)).toString().padStart(20, "0")}.manifest` : `${version}.manifest`;
  return `${location}/_versions/${file}`;
}

/** The files of a version, as keys relative to its dataset's directory; those below `_indices/<uuid>/` by directory. */
export interface VersionFiles {
  /** Files of this dataset: data, deletion, row-id sequence and transaction files. */
  files: string[];
  /** Index directories of this dataset (`_indices/<uuid>/`). */
  indexDirectories: string[];
  /** Names of files the version takes from another dataset (`base_paths`: a shallow clone's source, a branch's parent). */
  borrowed: string[];
}

const DELETION_EXTENSION = ["arrow", "bin"];

const uuidText = (bytes: Uint8Array) => {
  const hex = Buffer.from(bytes).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/**
 * Every file a version's manifest names, as Lance lays them out: data files in `data/`, deletion files in
 * `_deletions/<fragment>-<read version>-<id>.<arrow|bin>`, row-id sequences at their path, overlays' data files, the
 * transaction in `_transactions/`, and each index's directory `_indices/<uuid>/`.
 */
function filesNamed(manifest: Manifest, buf: Buffer): VersionFiles {
  const files: string[] = [];
  const borrowed: string[] = [];
  const indexDirectories: string[] = [];
  const add = (name: string, baseId: number | undefined) => (baseId === undefined ? files : borrowed).push(name);
  const fragmentFiles = (fragment: DataFragment) => {
    for (const file of fragment.files) add(`data/${file.path}`, file.baseId);
    for (const overlay of fragment.overlays) if (overlay.dataFile) add(`data/${overlay.dataFile.path}`, overlay.dataFile.baseId);
    const deletion = fragment.deletionFile;
    if (deletion) add(`_deletions/${fragment.id}-${deletion.readVersion}-${deletion.id}.${DELETION_EXTENSION[deletion.fileType] ?? "bin"}`, deletion.baseId);
    for (const external of [fragment.externalRowIds, fragment.externalLastUpdatedAtVersions, fragment.externalCreatedAtVersions])
      if (external?.path) files.push(external.path);
  };
  manifest.fragments.forEach(fragmentFiles);
  if (manifest.transactionFile) files.push(`_transactions/${manifest.transactionFile}`);
  if (manifest.indexSection !== undefined) {
    for (const index of fromBinary(IndexSectionSchema, messageAt(buf, Number(manifest.indexSection))).indices) {
      if (!index.uuid) continue;
      const directory = `_indices/${uuidText(index.uuid.uuid)}/`;
      (index.baseId === undefined ? indexDirectories : borrowed).push(directory);
    }
  }
  return { files, indexDirectories, borrowed };
}
