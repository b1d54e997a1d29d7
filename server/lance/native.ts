/**
 * The part of `@lancedb/lancedb`'s native layer that Quiver uses. The native layer takes and returns Arrow IPC
 * buffers, so request bodies reach the engine without a JavaScript decode, and Quiver never mixes its own
 * apache-arrow classes with the engine's CommonJS copy.
 */
import "server-only";
import { traced } from "@/server/tracing";
import * as lancedb from "@lancedb/lancedb";
import { fromEngineError } from "@/server/errors";

export interface NativeVersion {
  version: number;
  /** Microseconds since the epoch. */
  timestamp: number;
  metadata: Record<string, string>;
}

export interface NativeTags {
  list(): Promise<Record<string, { version: number; manifestSize: number }>>;
  getVersion(tag: string): Promise<number>;
  create(tag: string, version: number): Promise<void>;
  delete(tag: string): Promise<void>;
  update(tag: string, version: number): Promise<void>;
}

export interface NativeBranches {
  list(): Promise<Record<string, { parentBranch?: string; parentVersion: number; manifestSize: number }>>;
  create(name: string, fromRef?: string | null, fromVersion?: number | null): Promise<NativeTable>;
  checkout(name: string, version?: number | null): Promise<NativeTable>;
  delete(name: string): Promise<void>;
}

export interface NativeMergeBuilder {
  whenMatchedUpdateAll(condition?: string | null): NativeMergeBuilder;
  whenNotMatchedInsertAll(): NativeMergeBuilder;
  whenNotMatchedBySourceDelete(filter?: string | null): NativeMergeBuilder;
  setTimeout(timeoutMs: number): void;
  useIndex(useIndex: boolean): NativeMergeBuilder;
  execute(file: Buffer): Promise<{
    version: number;
    numInsertedRows: number;
    numUpdatedRows: number;
    numDeletedRows: number;
    numAttempts: number;
  }>;
}

export interface NativeQuery {
  onlyIf(predicate: string): void;
  fullTextSearch(query: { query: string; columns: string[] | null } | { query: unknown }): void;
  fastSearch(): void;
  orderBy(ordering: Array<{ columnName: string; ascending: boolean; nullsFirst: boolean }>): void;
  explainPlan(verbose: boolean): Promise<string>;
  analyzePlan(): Promise<string>;
  selectColumns(columns: string[]): void;
  select(columns: Array<[string, string]>): void;
  limit(limit: number): void;
  offset(offset: number): void;
  withRowId(): void;
  nearestTo(vector: Float32Array): NativeVectorQuery;
  outputSchema(): Promise<Buffer>;
  execute(maxBatchLength?: number | null, timeoutMs?: number | null): Promise<{ next(): Promise<Buffer | null> }>;
}

export interface NativeVectorQuery extends Omit<NativeQuery, "nearestTo"> {
  column(column: string): void;
  distanceType(distanceType: string): void;
  nprobes(n: number): void;
  minimumNprobes(n: number): void;
  maximumNprobes(n: number): void;
  refineFactor(n: number): void;
  ef(n: number): void;
  bypassVectorIndex(): void;
  postfilter(): void;
  distanceRange(lower?: number | null, upper?: number | null): void;
}

export interface NativeTakeQuery {
  selectColumns(columns: string[]): void;
  withRowId(): void;
  outputSchema(): Promise<Buffer>;
  execute(maxBatchLength?: number | null, timeoutMs?: number | null): Promise<{ next(): Promise<Buffer | null> }>;
}

/** A Lance blob value, read on demand. */
export interface NativeBlobFile {
  size(): bigint;
  readRange(start: bigint, end: bigint): Promise<Buffer>;
}

export interface NativeStats {
  totalBytes: number;
  numRows: number;
  numIndices: number;
  fragmentStats: {
    numFragments: number;
    numSmallFragments: number;
    lengths: { min: number; max: number; mean: number; p25: number; p50: number; p75: number; p99: number };
  };
}

export interface NativeTable {
  schema(): Promise<Buffer>;
  add(file: Buffer, mode: string): Promise<{ version: number }>;
  countRows(filter?: string | null): Promise<number>;
  delete(predicate: string): Promise<{ numDeletedRows: number; version: number }>;
  update(onlyIf: string | null, columns: Array<[string, string]>): Promise<{ rowsUpdated: number; version: number }>;
  stats(): Promise<NativeStats>;
  query(): NativeQuery;
  takeRowIds(rowIds: bigint[]): NativeTakeQuery;
  takeOffsets(offsets: number[]): NativeTakeQuery;
  /** The table's blob columns (Lance's `lance.blob.v2` extension type), whose values are read apart from the rows. */
  blobColumns(): Promise<string[]>;
  fetchBlobFiles(column: string, rowIds: bigint[]): Promise<Array<NativeBlobFile | undefined | null>>;
  alterColumns(alterations: Array<{ path: string; rename?: string; dataType?: string; nullable?: boolean }>): Promise<{ version: number }>;
  addColumns(transforms: Array<{ name: string; valueSql: string }>): Promise<{ version: number }>;
  dropColumns(columns: string[]): Promise<{ version: number }>;
  updateFieldMetadata(updates: Array<{ path: string; metadata: Record<string, string | null>; replace?: boolean }>): Promise<{ version: number }>;
  version(): Promise<number>;
  checkout(version: number): Promise<void>;
  checkoutTag(tag: string): Promise<void>;
  checkoutLatest(): Promise<void>;
  listVersions(): Promise<NativeVersion[]>;
  restore(): Promise<void>;
  tags(): Promise<NativeTags>;
  branches(): Promise<NativeBranches>;
  mergeInsert(on: string[]): NativeMergeBuilder;
  usesV2ManifestPaths(): Promise<boolean>;
  listIndices(): Promise<
    Array<{
      name: string;
      indexType: string;
      columns: string[];
      indexUuid?: string;
      /** The protobuf type URL of the index's details: its precise kind. */
      typeUrl?: string;
      numSegments?: number;
      /** The on-disk format version of the index. */
      indexVersion?: number;
      numIndexedRows?: number;
      numUnindexedRows?: number;
      sizeBytes?: number;
      createdAt?: Date;
      /** Parsed from the index's details; a string when the engine could not parse them. */
      indexDetails?: unknown;
    }>
  >;
  indexStats(name: string): Promise<{ numIndexedRows: number; numUnindexedRows: number; indexType: string; distanceType?: string; numIndices?: number } | null>;
  /** Compacts, removes versions made before the time (ms since the epoch) and indexes new rows, in one call. */
  optimize(
    beforeTimestampMs?: number | null,
    deleteUnverified?: boolean | null,
  ): Promise<{
    compaction: { fragmentsRemoved: number; fragmentsAdded: number; filesRemoved: number; filesAdded: number };
    prune: { bytesRemoved: number; oldVersionsRemoved: number };
  }>;
  createIndex(index: unknown, column: string, replace?: boolean | null, waitTimeoutS?: number | null, name?: string | null): Promise<void>;
  dropIndex(name: string): Promise<void>;
  close(): void;
}

export interface NativeConnection {
  openTable(name: string, namespacePath?: string[] | null): Promise<NativeTable>;
  createTable(name: string, file: Buffer, mode: string, namespacePath?: string[] | null, storageOptions?: Record<string, string> | null): Promise<NativeTable>;
  createNamespace(path: string[], mode?: string | null, properties?: Record<string, string> | null): Promise<unknown>;
  dropNamespace(path: string[], mode?: string | null, behavior?: string | null): Promise<unknown>;
  dropTable(name: string, namespacePath?: string[] | null): Promise<void>;
}

export async function connectNative(uri: string, options: lancedb.ConnectionOptions): Promise<NativeConnection> {
  const connection = await lancedb.connect(uri, options);
  return (connection as unknown as { inner: NativeConnection }).inner;
}

/** Runs one call into the engine, its failure turned into a QuiverError that names `what` was being done. */
export async function engineCall<T>(what: string, fn: () => Promise<T>, classify = fromEngineError): Promise<T> {
  try {
    return await traced(`engine: ${what}`, {}, fn);
  } catch (err) {
    throw classify(err, what);
  }
}
