/**
 * The object store over S3, GCS or Azure Blob, through Apache OpenDAL: one well-kept library for the three clouds,
 * with the conditional writes (if-none-match, if-match) that instances sharing a root rely on. Settings come from
 * the same Lance storage options that the engine gets, translated to OpenDAL's names, with each cloud's usual
 * environment variables as fallbacks where Lance reads them too.
 */
import "server-only";
import * as opendal from "opendal";
import { Operator, type Entry } from "opendal";
import { ConfigError } from "../config-error";
import { unsupported } from "../errors";
import { ensureAzureContainer } from "./azure-container";
import { withDeadline } from "./deadline";
import { bareEtag, checkKey, isPlainKey, storeUnavailable, type ObjectInfo, type ObjectStore } from "./object-store";
import type { Cloud, ObjectRoot } from "./root";
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
  GCS_ENDPOINT,
  GCS_KEY,
  GCS_KEY_PATH,
  pickOption,
} from "./read-cache/option-names";

/** A listed object, not a "directory" entry or a name that is no plain key. */
const isObjectEntry = (entry: Entry) => !entry.path().endsWith("/") && isPlainKey(entry.path());

const pick = (options: Record<string, string>, names: string[], env: string[] = []) => pickOption(options, { names, env });

function defined(config: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(config).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ""));
}

/** OpenDAL's service and configuration for a root, from Lance's storage options. */
export function openDalConfig(root: ObjectRoot, options: Record<string, string>): { service: string; config: Record<string, string> } {
  const base = { root: `/${root.prefix}` };
  const byCloud: Record<Cloud, () => { service: string; config: Record<string, string> }> = {
    az: () => ({
      service: "azblob",
      config: defined({
        ...base,
        container: root.bucket,
        account_name: pickOption(options, AZURE_ACCOUNT),
        account_key: pickOption(options, AZURE_KEY),
        sas_token: pickOption(options, AZURE_SAS),
        endpoint: azureEndpoint(options),
      }),
    }),
    s3: () => ({
      service: "s3",
      config: defined({
        ...base,
        bucket: root.bucket,
        // As the engine (object_store) does without one: a bucket elsewhere then answers 301, said at start.
        region: pickOption(options, AWS_REGION) ?? "us-east-1",
        endpoint: pickOption(options, AWS_ENDPOINT),
        access_key_id: pickOption(options, AWS_ACCESS_KEY_ID),
        secret_access_key: pickOption(options, AWS_SECRET_ACCESS_KEY),
        session_token: pickOption(options, AWS_SESSION_TOKEN),
        enable_virtual_host_style: pick(options, AWS_VIRTUAL_HOSTED.names),
      }),
    }),
    gs: () => {
      const key = pickOption(options, GCS_KEY);
      return {
        service: "gcs",
        config: defined({
          ...base,
          bucket: root.bucket,
          // OpenDAL takes the key itself base64-encoded; Lance takes it as JSON text.
          credential: key ? Buffer.from(key).toString("base64") : undefined,
          credential_path: pickOption(options, GCS_KEY_PATH),
          endpoint: pickOption(options, GCS_ENDPOINT),
        }),
      };
    },
  };
  return byCloud[root.cloud]();
}

/** OpenDAL reports a failed condition and a missing object by kind, at the start of its message. */
const kindOf = (err: unknown) => (err instanceof Error ? (/^(\w+)/.exec(err.message)?.[1] ?? "") : "");
const isNotFound = (err: unknown) => kindOf(err) === "NotFound";
const isConditionFailed = (err: unknown) => kindOf(err) === "ConditionNotMatch" || kindOf(err) === "AlreadyExists";

const LISTING_INTERVAL_MS = 2_000;
/** How long one call to the store may take before it counts as unreachable. */
const CALL_TIMEOUT_MS = 30_000;

/** One call to the store, bounded in time; a failure that is not an answer about the object means it is unavailable. */
function answered<T>(call: Promise<T>, what: string, timeoutMs: number): Promise<T> {
  return withDeadline(call, timeoutMs, `Unexpected (timeout) the store did not answer ${what} within ${timeoutMs} ms`).catch((err) => {
    throw isNotFound(err) || isConditionFailed(err) ? err : storeUnavailable(what, err);
  });
}

/**
 * The operator's calls, each bounded in time: a store that stops answering fails the call instead of holding the
 * request. (opendal 0.49.2, the newest whose binary loads on Debian 12's glibc, has no timeout layer of its own.)
 * A failure that is not an answer about the object (missing, or a failed condition) means the store is unavailable.
 */
function bounded(operator: Operator, timeoutMs: number): Operator {
  return new Proxy(operator, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = value.apply(target, args);
        return result instanceof Promise ? answered(result, String(property), timeoutMs) : result;
      };
    },
  });
}

/** What the store answered a call OpenDAL reports failed: the HTTP status, and the service's own code and message. */
export function storeAnswer(err: unknown): { status?: number; code?: string; message?: string } {
  // Our own requests (making an Azure container) say it as fields.
  const own = err as { status?: unknown; code?: string; storeMessage?: string };
  if (typeof own?.status === "number") return { status: own.status, code: own.code, message: own.storeMessage };
  const text = err instanceof Error ? err.message : String(err);
  const status = /\bstatus: (\d{3})\b/.exec(text)?.[1];
  const service = /Error \{ code: "([^"]*)", message: "([^"]*)"/.exec(text);
  return { ...(status ? { status: Number(status) } : {}), ...(service ? { code: service[1], message: service[2] } : {}) };
}

/** Why the root cannot be used, in one line naming the setting, from the store's answer to the start's first listing. */
function refusedAtStart(root: ObjectRoot, err: unknown): ConfigError {
  const { status, code, message } = storeAnswer(err);
  const answered = `the store answered ${[status, code].filter(Boolean).join(" ")}${message ? `: ${message}` : ""}`;
  const container = root.cloud === "az" ? "container" : "bucket";
  if (status === 404) return new ConfigError(`QUIVER_ROOT ${root.uri}: the ${container} '${root.bucket}' does not exist (${answered})`);
  if (status === 401 || status === 403) return new ConfigError(`QUIVER_STORAGE_OPTIONS: the store refused these credentials for ${root.uri} (${answered})`);
  if (status === 301)
    return new ConfigError(`QUIVER_ROOT ${root.uri}: the bucket is in another region; set aws_region in QUIVER_STORAGE_OPTIONS (${answered})`);
  if (status) return new ConfigError(`QUIVER_ROOT ${root.uri}: ${answered}`);
  // fetch's own failure says why in its cause (ECONNREFUSED, ENOTFOUND); OpenDAL's says it before its context.
  const cause = (err as { cause?: unknown })?.cause;
  const said = cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err);
  const reason = said
    .split("\n")[0]
    .replace(/, context: .*/, "")
    .slice(0, 200);
  return new ConfigError(`QUIVER_ROOT ${root.uri}: the store cannot be reached (${reason}); check its endpoint in QUIVER_STORAGE_OPTIONS`);
}

export class ObjectStoreClient implements ObjectStore {
  readonly listingHasInfo = true;
  private readonly operator: Operator;
  /** The operator with its retries and without the time bound's translation: the start reads the store's own answer. */
  private readonly unbounded: Operator;

  constructor(
    readonly root: ObjectRoot,
    private readonly storageOptions: Record<string, string>,
  ) {
    const { service, config } = openDalConfig(root, storageOptions);
    // The retry layer is exported under `layers` at run time, which the package's typings leave out.
    const { RetryLayer } = (opendal as unknown as { layers: { RetryLayer: typeof opendal.RetryLayer } }).layers;
    const retry = new RetryLayer();
    retry.maxTimes = 3;
    retry.jitter = true;
    const operator = new Operator(service, config);
    // A store that would ignore the condition would let two instances overwrite each other's records.
    if (!operator.capability().writeWithIfNotExists) {
      throw new ConfigError(`QUIVER_ROOT ${root.uri}: this store cannot write an object only where none exists, which instances sharing a root need`);
    }
    this.unbounded = operator.layer(retry.build());
    this.operator = bounded(this.unbounded, CALL_TIMEOUT_MS);
  }

  /**
   * Makes the root's container when it is missing and the account key to make it is configured (Azure only), then
   * lists the root once: a missing bucket, refused credentials or an unreachable store stop the start with one line.
   */
  async prepare(): Promise<void> {
    const { config } = openDalConfig(this.root, this.storageOptions);
    if (this.root.cloud === "az" && config.account_name && config.account_key && config.endpoint) {
      await ensureAzureContainer(config.endpoint, config.account_name, config.account_key, this.root.bucket).catch((err: unknown) => {
        throw refusedAtStart(this.root, err);
      });
    }
    try {
      await withDeadline(
        this.unbounded.lister("", { limit: 1 }).then((lister) => lister.next()),
        CALL_TIMEOUT_MS,
        `Unexpected (timeout) no answer within ${CALL_TIMEOUT_MS} ms`,
      );
    } catch (err) {
      throw refusedAtStart(this.root, err);
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await this.operator.read(checkKey(key));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async getIfMatch(key: string, etag: string): Promise<Buffer | "changed" | null> {
    try {
      return await this.operator.read(checkKey(key), { ifMatch: `"${bareEtag(etag)}"` });
    } catch (err) {
      if (isNotFound(err)) return null;
      if (isConditionFailed(err)) return "changed";
      throw err;
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    checkKey(key);
    try {
      const meta = await this.operator.stat(key);
      return { etag: meta.etag ?? "", size: Number(meta.contentLength ?? 0n) };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async put(key: string, data: Buffer | string): Promise<void> {
    await this.operator.write(checkKey(key), data);
  }

  async putIfAbsent(key: string, data: Buffer | string): Promise<ObjectInfo | null> {
    try {
      const written = await this.operator.write(checkKey(key), data, { ifNotExists: true });
      return { etag: written.etag ?? "", size: Buffer.byteLength(data) };
    } catch (err) {
      if (isConditionFailed(err)) return null;
      throw err;
    }
  }

  async list(prefix: string, limit?: number): Promise<string[]> {
    return [...(await this.listInfo(prefix, limit)).keys()];
  }

  async listInfo(prefix: string, limit?: number): Promise<Map<string, ObjectInfo>> {
    checkKey(prefix, true);
    let entries: Entry[];
    if (limit === undefined) {
      entries = await this.operator.list(prefix, { recursive: true });
    } else {
      // A lister asks the store for one page of `limit` keys, where list() would read every page first.
      const lister = await this.operator.lister(prefix, { recursive: true, limit });
      entries = [];
      while (entries.length < limit) {
        const entry = await answered(lister.next(), "list", CALL_TIMEOUT_MS);
        if (entry === null) break;
        if (isObjectEntry(entry)) entries.push(entry);
      }
    }
    const infos = entries.filter(isObjectEntry).map((e) => {
      const meta = e.metadata();
      const modified = meta.lastModified ? Date.parse(meta.lastModified) : NaN;
      return [e.path(), { etag: meta.etag ?? "", size: Number(meta.contentLength ?? 0n), ...(Number.isNaN(modified) ? {} : { modified }) }] as const;
    });
    return new Map(infos.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  async listDirectories(prefix: string): Promise<string[]> {
    checkKey(prefix, true);
    const entries = await this.operator.list(prefix);
    return entries
      .map((e) => e.path())
      .filter((p) => p.endsWith("/") && p !== prefix)
      .map((p) => p.slice(prefix.length, -1))
      .filter((name) => isPlainKey(name));
  }

  async exists(prefix: string): Promise<boolean> {
    checkKey(prefix, true);
    return (await this.list(prefix.endsWith("/") ? prefix : `${prefix}/`, 1)).length > 0;
  }

  async directoryStamp(prefix: string): Promise<string | null> {
    const [first] = await this.listInfo(prefix.endsWith("/") ? prefix : `${prefix}/`, 1);
    return first ? `${first[0]}:${first[1].etag}` : null;
  }

  async delete(key: string): Promise<void> {
    await this.operator.delete(checkKey(key));
  }

  async deletePrefix(prefix: string): Promise<void> {
    if (!prefix.endsWith("/")) throw new Error(`'${prefix}' is not a prefix`);
    await this.operator.removeAll(checkKey(prefix, true));
  }

  async movePrefix(): Promise<void> {
    throw unsupported("object stores cannot rename: a table directory on an object store root cannot be moved");
  }

  /**
   * Object stores have no directory times, and a listing per request costs a round trip: so the stamp moves every
   * few seconds, and what other tools add directly below a prefix is seen within that time. (Quiver's own tables are
   * in its catalog, which is checked on every request.)
   */
  async listingStamp(): Promise<string> {
    return String(Math.floor(Date.now() / LISTING_INTERVAL_MS));
  }
}
