/**
 * Version facts read straight from Lance manifest files, so a page of a long history costs that page. A manifest
 * file ends with the position of its protobuf `Manifest` (lance's table.proto), which lists the version's
 * fragments; row counts and sizes are summed from them. Manifests never change, so summaries are cached.
 */
import "server-only";
import type { ObjectInfo, ObjectStore } from "@/server/storage/object-store";

export interface VersionSummary {
  version: number;
  timestampMillis: number;
  transactionFile: string | null;
  metadata: Record<string, string>;
}

type Field = { field: number; wire: number; value: number; start: number; end: number };

function varint(buf: Buffer, pos: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (pos >= buf.length) throw new Error("truncated manifest");
    const byte = buf[pos++];
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, pos];
    scale *= 128;
  }
}

/** Top-level fields of one protobuf message within [start, end). */
export function* fields(buf: Buffer, start: number, end: number): Generator<Field> {
  let pos = start;
  while (pos < end) {
    const [key, afterKey] = varint(buf, pos);
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) {
      const [value, next] = varint(buf, afterKey);
      yield { field, wire, value, start: afterKey, end: next };
      pos = next;
    } else if (wire === 2) {
      const [length, next] = varint(buf, afterKey);
      yield { field, wire, value: length, start: next, end: next + length };
      pos = next + length;
    } else if (wire === 1) pos = afterKey + 8;
    else if (wire === 5) pos = afterKey + 4;
    else throw new Error(`unexpected wire type ${wire}`);
  }
}

export function parseManifest(buf: Buffer): VersionSummary {
  if (buf.length < 16 || buf.toString("latin1", buf.length - 4) !== "LANC") throw new Error("not a Lance manifest");
  const position = Number(buf.readBigInt64LE(buf.length - 16));
  const length = buf.readUInt32LE(position);
  const start = position + 4;
  const end = start + length;
  let version = 0;
  let timestampMillis = 0;
  let transactionFile: string | null = null;
  let fragments = 0;
  let physicalRows = 0;
  let deletedRows = 0;
  let dataFiles = 0;
  let deletionFiles = 0;
  let dataBytes = 0;
  for (const f of fields(buf, start, end)) {
    if (f.field === 3 && f.wire === 0) version = f.value;
    else if (f.field === 12 && f.wire === 2) transactionFile = buf.toString("utf8", f.start, f.end) || null;
    else if (f.field === 7 && f.wire === 2) {
      let seconds = 0;
      let nanos = 0;
      for (const t of fields(buf, f.start, f.end)) {
        if (t.field === 1) seconds = t.value;
        if (t.field === 2) nanos = t.value;
      }
      timestampMillis = seconds * 1000 + Math.floor(nanos / 1e6);
    } else if (f.field === 2 && f.wire === 2) {
      fragments++;
      for (const g of fields(buf, f.start, f.end)) {
        if (g.field === 4 && g.wire === 0) physicalRows += g.value;
        else if (g.field === 2 && g.wire === 2) {
          dataFiles++;
          for (const d of fields(buf, g.start, g.end)) if (d.field === 6 && d.wire === 0) dataBytes += d.value;
        } else if (g.field === 3 && g.wire === 2) {
          deletionFiles++;
          for (const d of fields(buf, g.start, g.end)) if (d.field === 4 && d.wire === 0) deletedRows += d.value;
        }
      }
    }
  }
  return {
    version,
    timestampMillis,
    transactionFile,
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

const cache = new Map<string, VersionSummary>();
const CACHE_LIMIT = 50_000;

/**
 * A manifest file never changes once written, but a table dropped and created again at the same place writes new
 * files under the same names: so summaries are cached by the file's identity (its etag).
 */
export async function versionSummary(store: ObjectStore, manifest: { key: string; eTag: string }): Promise<VersionSummary> {
  const cacheKey = `${store.root.uri}\0${manifest.key}\0${manifest.eTag}`;
  const cached = cache.get(cacheKey);
  if (cached) return cached;
  const file = await store.get(manifest.key);
  if (!file) throw new Error(`manifest ${manifest.key} is missing`);
  const summary = parseManifest(file);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  if (manifest.eTag) cache.set(cacheKey, summary);
  return summary;
}

/** Committed versions of a dataset's main branch, from the names of its manifest files. */
export async function listVersionNumbers(store: ObjectStore, location: string): Promise<{ versions: number[]; v2: boolean; files: Map<number, ObjectInfo> }> {
  const prefix = `${location}/_versions/`;
  const listed = [...(await store.listInfo(prefix))].map(([key, info]) => [key.slice(prefix.length), info] as const).filter(([n]) => /^\d+\.manifest$/.test(n));
  const v2 = listed.some(([n]) => n.length === "18446744073709551614.manifest".length);
  const files = new Map(
    listed.map(([n, info]) => {
      const digits = n.slice(0, -".manifest".length);
      return [v2 ? Number(18446744073709551615n - BigInt(digits)) : Number(digits), info] as const;
    }),
  );
  return { versions: [...files.keys()], v2, files };
}
