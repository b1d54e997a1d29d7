/** Configuration from the environment; nothing but the defaults is needed to run. */
import "server-only";
import { parseDuration } from "@/lib/durations";
import { MAP_MAX_POINTS } from "@/lib/contract/maps";
import { ConfigError } from "./config-error";
import { parseRoot, parseStorageOptions } from "./storage/root";
import { parseByteSize } from "./storage/read-cache/read-cache";

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new ConfigError(`${name} must be a positive integer, got '${raw}'`);
  return value;
}

function durationFromEnv(name: string, fallbackMs: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallbackMs;
  const ms = parseDuration(raw);
  if (ms === null) throw new ConfigError(`${name} must be a duration such as 900s, 30m or 1h, got '${raw}'`);
  return ms;
}

/** A size such as 512MiB or 6GB; unset, the engine's own default. */
function bytesFromEnv(name: string): bigint | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  try {
    return BigInt(parseByteSize(raw, name));
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function portFromEnv(name: string): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return 0;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new ConfigError(`${name} must be a port number from 0 to 65535, got '${raw}'`);
  return value;
}

/** A setting that takes one of `choices`, any case: unset or empty is `fallback` ("off" unless given), "false" is "off" and "true" is "on". */
function choiceFromEnv<C extends string>(name: string, choices: readonly C[], fallback = "off"): C {
  const raw = (process.env[name] || fallback).trim().toLowerCase();
  const named = raw === "" || raw === "false" ? "off" : raw === "true" ? "on" : raw;
  const found = choices.find((choice) => choice === named);
  if (found !== undefined) return found;
  const listed = choices.map((choice) => `'${choice}'`);
  throw new ConfigError(`${name} must be ${listed.slice(0, -1).join(", ")} or ${listed[listed.length - 1]}, got '${raw}'`);
}

export const config = {
  /** The data root: a local directory or an object store prefix. */
  root: parseRoot(process.env.QUIVER_ROOT || "./data"),
  /** Lance storage options for the root and every table under it. */
  storageOptions: parseStorageOptions(process.env.QUIVER_STORAGE_OPTIONS),
  /**
   * Whether declare, create and describe vend store credentials to clients that write data themselves, and how
   * narrow they are (server/storage/credentials): off by default.
   */
  vending: {
    mode: choiceFromEnv("QUIVER_VEND_CREDENTIALS", ["off", "table", "container"] as const),
    /** How long vended credentials stay valid. */
    ttlMs: durationFromEnv("QUIVER_VENDED_CREDENTIALS_TTL", 3_600_000),
    /** The IAM role whose sessions are vended on an S3 root. */
    aws: { roleArn: process.env.QUIVER_VEND_AWS_ROLE_ARN || undefined, externalId: process.env.QUIVER_VEND_AWS_EXTERNAL_ID || undefined },
  },
  /**
   * Whether a table declared or created without saying (its `quiver.managed_versioning` property) has its versions
   * managed by the catalog: off by default.
   */
  managedVersioning: choiceFromEnv("QUIVER_MANAGED_VERSIONING", ["on", "off"] as const) === "on",
  /**
   * Whether a table whose first version Quiver writes, and whose `quiver.stable_row_ids` property does not say, is
   * written with the engine's stable row ids (on by default: its rows then record the versions that made and changed
   * them, which is what lets Changes name the rows a version inserted, updated and deleted).
   */
  stableRowIds: choiceFromEnv("QUIVER_STABLE_ROW_IDS", ["on", "off"] as const, "on") === "on",
  /**
   * The engine's caches in memory, per server process: opened indexes (the engine's default 6 GB) and file metadata
   * and manifests (1 GB). The bytes of data files are the read cache's (server/storage/read-cache/), on disk.
   */
  engineIndexCacheBytes: bytesFromEnv("QUIVER_ENGINE_INDEX_CACHE_SIZE"),
  engineMetadataCacheBytes: bytesFromEnv("QUIVER_ENGINE_METADATA_CACHE_SIZE"),
  /** The database a request without a database header uses. */
  defaultDatabase: process.env.QUIVER_DEFAULT_DATABASE || "default",
  /** Largest Arrow request body, in bytes (413 beyond). */
  maxArrowBodyBytes: intFromEnv("QUIVER_MAX_ARROW_BODY_BYTES", 2 * 1024 * 1024 * 1024 - 1),
  /** Largest JSON request body, in bytes. */
  maxJsonBodyBytes: intFromEnv("QUIVER_MAX_JSON_BODY_BYTES", 1024 * 1024),
  /**
   * The most rows a table's map lays out (server/maps); a table with more rows with a vector is mapped by an even
   * sample of this many, which rows are placed onto afterwards (a search's hits, a column's rarer values).
   */
  mapMaxPoints: intFromEnv("QUIVER_MAP_MAX_POINTS", MAP_MAX_POINTS),
  /** How long a table's map that nobody opens stays in the root before the maintainer deletes it (server/maps/map-retention.ts). */
  mapRetentionMs: durationFromEnv("QUIVER_MAP_RETENTION", 30 * 24 * 3_600_000),
  /** Largest `limit` of a list page; also the page size when a request gives none. */
  maxPageSize: intFromEnv("QUIVER_MAX_PAGE_SIZE", 1000),
  /** Largest number of rows one query may return. */
  maxQueryRows: intFromEnv("QUIVER_MAX_QUERY_ROWS", 1_000_000),
  /** Rows a SQL query may answer; past it the query fails, or answers the first ones marked truncated when it asks. */
  sqlMaxRows: intFromEnv("QUIVER_SQL_MAX_ROWS", 100_000),
  /** How long a SQL query may run, reading its tables included, in milliseconds. */
  sqlTimeoutMs: intFromEnv("QUIVER_SQL_TIMEOUT_MS", 60_000),
  /** Memory DuckDB may use for one SQL query (its joins, groups and sorts), in bytes. */
  sqlMemoryBytes: intFromEnv("QUIVER_SQL_MEMORY_BYTES", 1024 * 1024 * 1024),
  /** Table data one SQL query may read from Lance (the columns it needs, after the filters Lance applies), in bytes. */
  sqlMaxScanBytes: intFromEnv("QUIVER_SQL_MAX_SCAN_BYTES", 2 * 1024 * 1024 * 1024),
  /** Threads DuckDB runs one SQL query on. */
  sqlThreads: intFromEnv("QUIVER_SQL_THREADS", 2),
  /** Heavy requests (Arrow writes, queries, column rewrites, index builds) that run at once. */
  maxHeavyRequests: intFromEnv("QUIVER_MAX_HEAVY_REQUESTS", 8),
  /** Heavy requests that may wait for a turn; past this, 503 "Slow down". */
  maxQueuedRequests: intFromEnv("QUIVER_MAX_QUEUED_REQUESTS", 64),
  /** How long a heavy request may wait for a turn before 503 "Slow down", in milliseconds. */
  queueWaitMs: intFromEnv("QUIVER_QUEUE_WAIT_MS", 30_000),
  /** Request bodies held in memory at once across all requests, in bytes (one body is always admitted). */
  maxBufferedBodyBytes: intFromEnv("QUIVER_MAX_BUFFERED_BODY_BYTES", 2 * 1024 * 1024 * 1024),
  /**
   * Time allowed to receive a request body, and to answer a request that changes nothing, in milliseconds. A write
   * whose body has arrived is never abandoned midway: its answer could not say whether it happened.
   */
  requestTimeoutMs: intFromEnv("QUIVER_REQUEST_TIMEOUT_MS", 120_000),
  /**
   * How long a write's request id is remembered: a repeat of it within this window answers what the first answered
   * instead of writing again (server/tables/write-ledger.ts).
   */
  idempotencyWindowMs: durationFromEnv("QUIVER_IDEMPOTENCY_WINDOW", 24 * 3_600_000),
  /**
   * How long an instance's write may go without a sign of life before a repeat of it, on another instance, takes that
   * instance for stopped and reads the outcome from the table's history.
   */
  writeLeaseMs: durationFromEnv("QUIVER_WRITE_LEASE", 10_000),
  /**
   * Where this process listens for other instances of the root, and the address it gives them (server/peers): loopback
   * reaches the instances of one machine only; instances on several machines need an address the others reach.
   */
  peerHost: process.env.QUIVER_PEER_HOST || "127.0.0.1",
  /** The port for other instances; 0, the default, takes a free one (each worker of `npm start` needs its own). */
  peerPort: portFromEnv("QUIVER_PEER_PORT"),
  /** `off`: every instance commits its own catalog changes, as before instances handed them to one committer. */
  catalogHandoff: choiceFromEnv("QUIVER_CATALOG_HANDOFF", ["on", "off"] as const, "on") === "on",
};
