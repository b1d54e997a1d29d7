/**
 * The next version of a table that changes only its schema's metadata, written as Lance writes a commit: the engine
 * (@lancedb/lancedb 0.39) can change a field's metadata but not the schema's, which UpdateTableSchemaMetadata needs.
 *
 * The new manifest file is the previous one's bytes up to its `Manifest` (so the index section keeps its position),
 * then the transaction (an `UpdateConfig` with `schema_metadata_updates`, which Lance reads when it rebases a
 * concurrent write over this version), then the `Manifest` with the version, time, transaction and schema metadata
 * replaced, and the footer. Every other manifest field is copied as it was, byte for byte, including those this
 * module does not know.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { manifestMessage } from "./version-manifest";

/** Lance's `Manifest` fields this commit writes anew (table.proto); the rest are copied. */
const MANIFEST = {
  version: 3,
  versionAuxData: 4,
  schemaMetadata: 5,
  timestamp: 7,
  tag: 8,
  writerFeatureFlags: 10,
  transactionFile: 12,
  transactionSection: 21,
};
const REPLACED: ReadonlySet<number> = new Set([
  MANIFEST.version,
  MANIFEST.versionAuxData,
  MANIFEST.schemaMetadata,
  MANIFEST.timestamp,
  MANIFEST.tag,
  MANIFEST.transactionFile,
  MANIFEST.transactionSection,
]);
/** Writer feature flag: the table's writers write no transaction files. */
const TRANSACTION_FILES_DISABLED = 1n << 5n;
/** transaction.proto: `Transaction.read_version`, `.uuid`, `.update_config`; `UpdateConfig.schema_metadata_updates`. */
const TRANSACTION = { readVersion: 1, uuid: 2, updateConfig: 110, schemaMetadataUpdates: 8 };

export interface SchemaMetadataCommit {
  version: number;
  /** The new manifest file. */
  manifest: Buffer;
  /** The transaction, also to be written as `_transactions/<transactionFile>` unless that is null. */
  transaction: Buffer;
  transactionFile: string | null;
  /** The schema metadata of the new version. */
  metadata: Record<string, string>;
}

/** What a manifest file's schema metadata is, and the version it is of. */
export function schemaMetadataOf(file: Buffer): { version: number; metadata: Record<string, string> } {
  const { fields } = manifestFields(file);
  return { version: versionOf(fields), metadata: metadataOf(fields) };
}

/** The commit that follows the manifest `previous`, with `changes` set in its schema metadata (other keys kept). */
export function schemaMetadataCommit(previous: Buffer, changes: Record<string, string>, now = Date.now()): SchemaMetadataCommit {
  const { fields, manifestAt, footerEnd } = manifestFields(previous);
  const readVersion = versionOf(fields);
  const version = readVersion + 1;
  const metadata = { ...metadataOf(fields), ...changes };
  const uuid = randomUUID();

  const transaction = message((w) => {
    w.tag(TRANSACTION.readVersion, WireType.Varint).uint64(readVersion);
    w.tag(TRANSACTION.uuid, WireType.LengthDelimited).string(uuid);
    w.tag(TRANSACTION.updateConfig, WireType.LengthDelimited).fork();
    w.tag(TRANSACTION.schemaMetadataUpdates, WireType.LengthDelimited).fork();
    for (const [key, value] of Object.entries(changes)) {
      w.tag(1, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(key).tag(2, WireType.LengthDelimited).string(value).join();
    }
    w.join().join();
  });
  const flags = fields.find((f) => f.no === MANIFEST.writerFeatureFlags);
  const writesTransactionFiles = !flags || (BigInt(new BinaryReader(flags.value).uint64()) & TRANSACTION_FILES_DISABLED) === 0n;
  const transactionFile = writesTransactionFiles ? `${readVersion}-${uuid}.txn` : null;

  const transactionAt = manifestAt;
  const newManifestAt = transactionAt + 4 + transaction.length;
  const manifest = message((w) => {
    for (const field of fields) if (!REPLACED.has(field.no)) w.raw(field.raw);
    w.tag(MANIFEST.version, WireType.Varint).uint64(version);
    for (const key of Object.keys(metadata).sort()) {
      w.tag(MANIFEST.schemaMetadata, WireType.LengthDelimited)
        .fork()
        .tag(1, WireType.LengthDelimited)
        .string(key)
        .tag(2, WireType.LengthDelimited)
        .bytes(Buffer.from(metadata[key], "utf8"))
        .join();
    }
    w.tag(MANIFEST.timestamp, WireType.LengthDelimited)
      .fork()
      .tag(1, WireType.Varint)
      .int64(Math.floor(now / 1000))
      .tag(2, WireType.Varint)
      .int32((now % 1000) * 1_000_000)
      .join();
    if (transactionFile) w.tag(MANIFEST.transactionFile, WireType.LengthDelimited).string(transactionFile);
    w.tag(MANIFEST.transactionSection, WireType.Varint).uint64(transactionAt);
  });

  const footer = Buffer.alloc(16);
  footer.writeBigInt64LE(BigInt(newManifestAt), 0);
  footerEnd.copy(footer, 8);
  const file = Buffer.concat([previous.subarray(0, manifestAt), lengthPrefixed(transaction), lengthPrefixed(manifest), footer]);
  return { version, manifest: file, transaction, transactionFile, metadata };
}

interface RawField {
  no: number;
  /** The field's value: a varint's bytes, or a length-delimited field's content. */
  value: Uint8Array;
  /** The whole field as it was encoded, tag included. */
  raw: Uint8Array;
}

/** The top-level fields of a manifest file's `Manifest`, where it starts, and the footer's end (format version, magic). */
function manifestFields(file: Buffer): { fields: RawField[]; manifestAt: number; footerEnd: Buffer } {
  const { at: manifestAt, message: bytes } = manifestMessage(file);
  // The new file puts its own Manifest where this one starts, so nothing may lie between it and the footer.
  if (manifestAt + 4 + bytes.length !== file.length - 16) throw new Error("a Lance manifest whose Manifest does not end at its footer");
  const reader = new BinaryReader(bytes);
  const fields: RawField[] = [];
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const [no, wireType] = reader.tag();
    const valueAt = reader.pos;
    let value: Uint8Array;
    if (wireType === WireType.LengthDelimited) value = reader.bytes();
    else {
      reader.skip(wireType, no);
      value = bytes.subarray(valueAt, reader.pos);
    }
    fields.push({ no, value, raw: bytes.subarray(start, reader.pos) });
  }
  return { fields, manifestAt, footerEnd: Buffer.from(file.subarray(file.length - 8)) };
}

function versionOf(fields: RawField[]): number {
  const field = fields.find((f) => f.no === MANIFEST.version);
  return field ? Number(new BinaryReader(field.value).uint64()) : 0;
}

function metadataOf(fields: RawField[]): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const field of fields) {
    if (field.no !== MANIFEST.schemaMetadata) continue;
    const entry = new BinaryReader(field.value);
    let key = "";
    let value: Uint8Array = new Uint8Array();
    while (entry.pos < entry.len) {
      const [no, wireType] = entry.tag();
      if (no === 1 && wireType === WireType.LengthDelimited) key = entry.string();
      else if (no === 2 && wireType === WireType.LengthDelimited) value = entry.bytes();
      else entry.skip(wireType, no);
    }
    metadata[key] = Buffer.from(value).toString("utf8");
  }
  return metadata;
}

function message(write: (w: BinaryWriter) => void): Buffer {
  const writer = new BinaryWriter();
  write(writer);
  return Buffer.from(writer.finish());
}

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32LE(bytes.length);
  return Buffer.concat([length, bytes]);
}
