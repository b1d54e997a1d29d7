/**
 * The read cache of a machine: its settings, its start, its metrics. `npm start`'s primary process starts it once for
 * all its workers (scripts/start.mjs) and hands them its endpoint; a server process started alone starts its own
 * (engine-store.ts). Erasable TypeScript (see disk-cache.ts).
 *
 * Settings: QUIVER_READ_CACHE (on for an az://, s3:// or gs:// root, off for a local one, where the OS caches files), and
 * QUIVER_READ_CACHE_DIR and QUIVER_READ_CACHE_SIZE.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, statfsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import promClient from "prom-client";
import { CacheInUse, DiskCache } from "./disk-cache.ts";
import { startCacheProxy, type AzureUpstream, type GcsUpstream, type S3Upstream, type StoreUpstream } from "./cache-proxy.ts";
import {
  AWS_ACCESS_KEY_ID,
  AWS_ENDPOINT,
  AWS_REGION,
  AWS_SECRET_ACCESS_KEY,
  AWS_SESSION_TOKEN,
  AWS_VIRTUAL_HOSTED,
  AZURE_ACCOUNT,
  AZURE_KEY,
  AZURE_SAS,
  azureEndpoint,
  GCS_KEY,
  GCS_KEY_PATH,
  pickOption,
} from "./option-names.ts";

/** A setting the server cannot start with, named as server/config-error.ts names its own (startup reports it alone). */
class ReadCacheSettingError extends Error {
  override name = "ConfigError";
}

export interface ReadCacheSettings {
  dir: string;
  /** The operator named the directory: one that cannot be used stops the start, where the default one is done without. */
  dirSetByOperator: boolean;
  budgetBytes: number;
  upstream: StoreUpstream;
}

/** At most this much by default, and at most half the disk's free space when the cache starts. */
const DEFAULT_BUDGET_BYTES = 10 * 2 ** 30;

const UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** `64MiB`, `10GB`, `1073741824`. */
export function parseByteSize(raw: string, setting: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw.trim());
  const unit = match ? UNITS[match[2].toLowerCase()] : undefined;
  const bytes = match && unit ? Math.floor(Number(match[1]) * unit) : NaN;
  if (!(bytes >= 2 ** 20)) throw new ReadCacheSettingError(`${setting} must be a size of at least 1MiB such as 512MiB or 10GiB, got '${raw}'`);
  return bytes;
}

/**
 * The read cache the environment asks for, or why there is none: a local root (where the engine's own reads go on as
 * they are), credentials the cache cannot check requests with, or QUIVER_READ_CACHE=off.
 */
export function readCacheSettings(env: NodeJS.ProcessEnv): { settings: ReadCacheSettings } | { off: string; worthSaying: boolean } {
  const choice = (env.QUIVER_READ_CACHE ?? "").trim().toLowerCase();
  if (!["", "on", "off", "true", "false"].includes(choice))
    throw new ReadCacheSettingError(`QUIVER_READ_CACHE must be 'on' or 'off', got '${env.QUIVER_READ_CACHE}'`);
  const root = (env.QUIVER_ROOT ?? "").trim();
  const scheme = /^([a-z0-9]+):\/\//i.exec(root)?.[1]?.toLowerCase();
  if (choice === "off" || choice === "false") return { off: "QUIVER_READ_CACHE is off", worthSaying: false };
  if (scheme !== "az" && scheme !== "s3" && scheme !== "gs") {
    if (choice === "on" || choice === "true")
      throw new ReadCacheSettingError(
        `QUIVER_READ_CACHE=on: the read cache serves az://, s3:// and gs:// roots (the root is ${scheme ? `${scheme}://` : "a local directory, which the OS caches"}); unset it`,
      );
    if (!scheme) return { off: "a local root: the OS caches its files", worthSaying: false };
    return { off: `the read cache serves az://, s3:// and gs:// roots; ${scheme}:// reads go to the store`, worthSaying: true };
  }
  let options: Record<string, string> = {};
  try {
    options = JSON.parse(env.QUIVER_STORAGE_OPTIONS || "{}");
  } catch {
    // the server's own settings report a bad QUIVER_STORAGE_OPTIONS
  }
  const upstream = scheme === "az" ? azureUpstream(options) : scheme === "s3" ? s3Upstream(options) : gcsUpstream(options, env);
  if ("off" in upstream) return { off: upstream.off, worthSaying: true };
  // as the options spell it: an Azure root keeps the directory earlier versions chose
  const endpoint = upstream.kind === "azure" ? azureEndpoint(options) : upstream.endpoint.href;
  const budgetBytes = env.QUIVER_READ_CACHE_SIZE ? parseByteSize(env.QUIVER_READ_CACHE_SIZE, "QUIVER_READ_CACHE_SIZE") : undefined;
  const dirSetByOperator = Boolean(env.QUIVER_READ_CACHE_DIR?.trim());
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  // One directory per root: two roots' entries never meet, and a machine's instances of one root share it.
  const rootId = createHash("sha256").update(`${endpoint} ${root}`).digest("hex").slice(0, 16);
  const dir = dirSetByOperator ? path.resolve(env.QUIVER_READ_CACHE_DIR!.trim()) : path.join(base, "quiver", "read-cache", rootId);
  return {
    settings: {
      dir,
      dirSetByOperator,
      budgetBytes: budgetBytes ?? Math.min(DEFAULT_BUDGET_BYTES, halfTheFreeSpace(dir)),
      upstream,
    },
  };
}

function azureUpstream(options: Record<string, string>): AzureUpstream | { off: string } {
  const endpoint = azureEndpoint(options);
  const account = pickOption(options, AZURE_ACCOUNT);
  const key = pickOption(options, AZURE_KEY);
  const sasToken = pickOption(options, AZURE_SAS);
  if (!endpoint || !account || (!key && !sasToken))
    return { off: "the read cache needs the account's key or a SAS token in QUIVER_STORAGE_OPTIONS, to check who asks for cached bytes" };
  return { kind: "azure", endpoint: new URL(endpoint), account, key: key ? Buffer.from(key, "base64") : undefined, sasToken };
}

function s3Upstream(options: Record<string, string>): S3Upstream | { off: string } {
  const accessKeyId = pickOption(options, AWS_ACCESS_KEY_ID);
  const secretAccessKey = pickOption(options, AWS_SECRET_ACCESS_KEY);
  // Without a key of its own (an instance role, web identity), the cache could neither check nor sign a request.
  if (!accessKeyId || !secretAccessKey)
    return { off: "the read cache needs an access key id and secret in QUIVER_STORAGE_OPTIONS or AWS_ACCESS_KEY_ID, to check and sign requests" };
  const region = pickOption(options, AWS_REGION) ?? "us-east-1";
  const endpoint = pickOption(options, AWS_ENDPOINT) ?? `https://s3.${region}.amazonaws.com`;
  return {
    kind: "s3",
    endpoint: new URL(endpoint),
    virtualHosted: pickOption(options, AWS_VIRTUAL_HOSTED)?.toLowerCase() === "true",
    credentials: { accessKeyId, secretAccessKey, sessionToken: pickOption(options, AWS_SESSION_TOKEN), region },
  };
}

/** Google's XML API, where the engine reads and writes objects. */
const GCS_XML_API = "https://storage.googleapis.com";
/** The environment variables in which a key's path would reach the engine beside the key the cache gives it. */
const GCS_PATH_IN_ENV = ["GOOGLE_SERVICE_ACCOUNT", "GOOGLE_SERVICE_ACCOUNT_PATH", "SERVICE_ACCOUNT", "SERVICE_ACCOUNT_PATH"];

/**
 * GCS: the root's service account key (in the options, or a key file they name) or Google's application default
 * credentials (GOOGLE_APPLICATION_CREDENTIALS, or the metadata server of a VM or pod) give the token every request
 * goes on with. A key naming `gcs_base_url` (an emulator's) sends them there, with no token where it disables OAuth.
 */
function gcsUpstream(options: Record<string, string>, env: NodeJS.ProcessEnv): GcsUpstream | { off: string } {
  const inEnv = GCS_PATH_IN_ENV.find((name) => env[name]);
  // The engine would be given this key's path beside the cache's own key (Lance reads those variables) and refuse both.
  if (inEnv) return { off: `${inEnv} is set: name the key's path as google_service_account in QUIVER_STORAGE_OPTIONS instead` };
  const keyText = pickOption(options, GCS_KEY);
  const keyFile = pickOption(options, { names: GCS_KEY_PATH.names });
  let key: { gcs_base_url?: string; disable_oauth?: boolean } | undefined;
  try {
    key = keyText ? JSON.parse(keyText) : keyFile ? JSON.parse(readFileSync(keyFile, "utf8")) : undefined;
  } catch (err) {
    return { off: `the service account key cannot be read (${(err as Error).message.split("\n")[0]})` };
  }
  const withoutToken = key?.disable_oauth === true;
  let auth: Promise<{ getAccessToken: () => Promise<string | null | undefined> }> | undefined;
  const accessToken = async () => {
    if (withoutToken) return "";
    auth ??= import("google-auth-library").then(
      ({ GoogleAuth }) =>
        new GoogleAuth({
          scopes: ["https://www.googleapis.com/auth/devstorage.read_write"],
          ...(keyText ? { credentials: JSON.parse(keyText) } : keyFile ? { keyFile } : {}),
        }),
    );
    // The library keeps the token and fetches a new one shortly before it expires.
    const token = await (await auth).getAccessToken();
    if (!token) throw new Error("Google's auth library gave no access token for the root's credentials");
    return token;
  };
  return { kind: "gcs", endpoint: new URL(key?.gcs_base_url ?? GCS_XML_API), secret: randomBytes(24).toString("base64url"), accessToken };
}

export interface RunningReadCache {
  /** The store endpoint the engine is given in place of the store's own. */
  endpoint: string;
  cache: DiskCache;
  /** A manifest the engine staged through this cache, taken by the commit that publishes it (null: not kept here). */
  takeStaged: (name: string) => Buffer | null;
  close: () => Promise<void>;
}

/**
 * Starts the read cache the environment asks for. Without one, or when the default directory cannot be used, it
 * says why once (`say`) and answers nothing; a directory the operator named that cannot be used throws one line.
 */
export async function startReadCache(
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
  report: (what: string, err: unknown) => void,
): Promise<RunningReadCache | undefined> {
  const onFailure = oncePerMinute(report);
  const chosen = readCacheSettings(env);
  if ("off" in chosen) {
    if (chosen.worthSaying) say(`read cache off: ${chosen.off}`);
    return undefined;
  }
  const { dir, dirSetByOperator, budgetBytes, upstream } = chosen.settings;
  let cache: DiskCache;
  try {
    cache = await DiskCache.open(dir, budgetBytes, onFailure);
  } catch (err) {
    const why = err instanceof CacheInUse ? err.message : `the read cache directory ${dir} cannot be used: ${(err as Error).message}`;
    // Another instance of this machine owns it: that one's reads are cached, and this one's go to the store.
    if (dirSetByOperator && !(err instanceof CacheInUse)) throw new ReadCacheSettingError(`QUIVER_READ_CACHE_DIR: ${why}`);
    say(`read cache off: ${why}`);
    return undefined;
  }
  const proxy = await startCacheProxy(upstream, cache, onFailure);
  const stop = () => cache.close();
  process.once("exit", stop);
  say(`read cache: ${formatBytes(cache.budgetBytes)} at ${dir} (${cache.entryCount} entries, ${formatBytes(cache.sizeBytes)} kept from before)`);
  return {
    endpoint: proxy.endpoint,
    cache,
    takeStaged: (name: string) => proxy.staged.take(name),
    close: async () => {
      process.off("exit", stop);
      await proxy.close();
      cache.close();
    },
  };
}

/** A failure that repeats (a full disk fails every fill) is reported once a minute. */
function oncePerMinute(report: (what: string, err: unknown) => void): (what: string, err: unknown) => void {
  const last = new Map<string, number>();
  return (what, err) => {
    const now = Date.now();
    if (now - (last.get(what) ?? -Infinity) < 60_000) return;
    last.set(what, now);
    report(what, err);
  };
}

function halfTheFreeSpace(dir: string): number {
  let at = dir;
  for (;;) {
    try {
      const stat = statfsSync(at);
      return Math.max(2 ** 20, Math.floor((stat.bavail * stat.bsize) / 2));
    } catch {
      const up = path.dirname(at);
      if (up === at) return DEFAULT_BUDGET_BYTES;
      at = up;
    }
  }
}

function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value >= 10 || unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** The cache's figures as Prometheus metrics, on `registry`, read when scraped. */
export function registerReadCacheMetrics(registry: promClient.Registry, cache: DiskCache): void {
  const counter = (name: string, help: string, value: () => number) =>
    new promClient.Counter({
      name: `quiver_read_cache_${name}`,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(value());
      },
    });
  const gauge = (name: string, help: string, value: () => number) =>
    new promClient.Gauge({
      name: `quiver_read_cache_${name}`,
      help,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  const { stats } = cache;
  counter("hits_total", "Reads of write-once files the read cache answered from local disk", () => stats.hits);
  counter("misses_total", "Reads of write-once files the read cache fetched from the store (and kept)", () => stats.misses);
  counter("cache_bytes_total", "Bytes the read cache answered from local disk", () => stats.bytesFromCache);
  counter("store_bytes_total", "Bytes of write-once files the read cache fetched from the store", () => stats.bytesFromStore);
  counter("evictions_total", "Entries the read cache removed to stay within its budget, least recently used first", () => stats.evictions);
  counter("damaged_total", "Entries that failed their checksum (cut short or damaged on disk), removed and fetched again", () => stats.damaged);
  counter("not_kept_total", "Ranges read from the store and not kept: the fills under way held the rest of the budget", () => stats.notKept);
  counter("fill_failures_total", "Entries that could not be written (a full disk): their reads were answered from the store", () => stats.fillFailures);
  gauge("size_bytes", "Bytes the read cache holds on disk now", () => cache.sizeBytes);
  gauge("entries", "Entries the read cache holds now", () => cache.entryCount);
  gauge("budget_bytes", "The most bytes the read cache holds (QUIVER_READ_CACHE_SIZE)", () => cache.budgetBytes);
}
