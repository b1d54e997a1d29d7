/**
 * The engine's store endpoint on loopback: it passes every request to the store as it came and the answer back as it
 * came, except reads of Lance's write-once files, which it answers from the disk cache when it holds their bytes and
 * keeps when it does not. Version manifests, `_latest.manifest`, refs, listings and Quiver's own records are never
 * kept, so the engine's check for a newer version (and with it strong consistency) still goes to the store.
 * Only a request signed with the root's own credentials is answered from the cache: the store would refuse the rest.
 * Erasable TypeScript (see disk-cache.ts).
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { timingSafeEqual } from "node:crypto";
import type { DiskCache, EntryHeader } from "./disk-cache.ts";
import { signedWithKey, signedWithSas } from "./azure-shared-key.ts";
import { signedWithAwsKey, signForStore, type AwsCredentials } from "./aws-sigv4.ts";
import { StagedManifests, stagedManifestName } from "./staged-manifests.ts";

/** Azure Blob Storage, with the credentials the engine signs its requests with: requests pass to it as they came. */
export interface AzureUpstream {
  kind: "azure";
  /** The account's blob endpoint, with Azurite's account path where there is one. */
  endpoint: URL;
  account: string;
  key?: Buffer;
  sasToken?: string;
}

/**
 * S3 (or a store that speaks it): the engine signs for the loopback endpoint, so each request is checked against the
 * root's key and signed again for the store. A request the root's key did not sign is refused here.
 */
export interface S3Upstream {
  kind: "s3";
  /** The store's endpoint: the one the options name, or the region's. */
  endpoint: URL;
  /** Buckets as hosts (`<bucket>.s3.<region>.amazonaws.com`) rather than as the path's first part. */
  virtualHosted: boolean;
  credentials: AwsCredentials;
}

/**
 * Google Cloud Storage through its XML API, which the engine speaks (`<base>/<bucket>/<object>`, ListObjectsV2-style
 * listings): the engine is given no credentials, only an endpoint whose path begins with a secret of this process
 * (a request without it is refused here), and each request goes to the store with the root's own OAuth token.
 */
export interface GcsUpstream {
  kind: "gcs";
  /** The store's XML API endpoint: `https://storage.googleapis.com`, or an emulator's. */
  endpoint: URL;
  /** The first path segment of every request the engine sends here. */
  secret: string;
  /** The root's access token, as Google's auth library keeps it fresh ("" for an emulator that takes none). */
  accessToken: () => Promise<string>;
}

export type StoreUpstream = AzureUpstream | S3Upstream | GcsUpstream;

/**
 * The service account key the engine reaches the cache with on GCS: the cache's endpoint as the store's base URL and
 * no OAuth, as object_store reads such a key for an emulator; the key fields it requires are placeholders.
 */
export function engineKeyForGcs(endpoint: string): string {
  return JSON.stringify({ gcs_base_url: endpoint, disable_oauth: true, client_email: "quiver-read-cache", private_key: "", private_key_id: "" });
}

/**
 * Names Lance writes once and never again: data files, index files, deletion files and transaction files, each
 * under a name made unique when it was written (a table made again at the same location writes other names).
 */
const WRITE_ONCE = /\/(data\/[^/]+\.lance|_indices\/[^/]+\/[^/]+|_deletions\/[^/]+\.(arrow|bin)|_transactions\/[^/]+\.txn)$/;

/** One range read kept as one entry at most this long; longer reads pass. */
const MAX_ENTRY_BYTES = 256 * 2 ** 20;

/** Answer headers that describe one answer, not the object: never repeated from an entry. */
const PER_ANSWER = new Set([
  "date",
  "content-length",
  "content-range",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "x-ms-request-id",
  "x-ms-client-request-id",
  "x-amz-request-id",
  "x-amz-id-2",
  "x-guploader-uploadid",
  "server",
]);

export interface CacheProxy {
  /** The endpoint to give the engine in place of the store's. */
  endpoint: string;
  /** The manifests the engine staged for Quiver to publish, which never reached the store. */
  staged: StagedManifests;
  close: () => Promise<void>;
}

export function isWriteOnceName(path: string): boolean {
  return WRITE_ONCE.test(path) && !path.includes("/.quiver/");
}

/** A path's percent-encoding undone; one that is not valid encoding stays as sent (and names no write-once file). */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** `bytes=a-b` as `[a, b + 1)`; any other form (open, suffix, several ranges) is not served from the cache. */
function boundedRange(value: string | undefined): [number, number] | undefined {
  const match = /^bytes=(\d+)-(\d+)$/.exec(value?.trim() ?? "");
  if (!match) return undefined;
  const [start, last] = [Number(match[1]), Number(match[2])];
  return last >= start ? [start, last + 1] : undefined;
}

const CONDITIONAL = ["if-match", "if-none-match", "if-modified-since", "if-unmodified-since", "x-ms-if-tags"];

/** Where a request goes, and the headers it goes with. */
interface Routed {
  url: string;
  headers: http.OutgoingHttpHeaders;
}

export async function startCacheProxy(upstream: StoreUpstream, cache: DiskCache, onFailure: (what: string, err: unknown) => void): Promise<CacheProxy> {
  const client = upstream.endpoint.protocol === "https:" ? https : http;
  const agent = new client.Agent({ keepAlive: true, maxSockets: 256 });
  const origin = upstream.endpoint.origin;
  /** Reads of one range running now: a second reader of it waits for the first and then reads the cache. */
  const filling = new Map<string, Promise<void>>();
  const staged = new StagedManifests();

  const secretPrefix = upstream.kind === "gcs" ? Buffer.from(`/${upstream.secret}/`) : undefined;
  /** On GCS, whether the request's path begins with this process's secret. */
  const carriesSecret = (raw: string) => {
    const given = Buffer.from(raw.slice(0, secretPrefix!.length));
    return given.length === secretPrefix!.length && timingSafeEqual(given, secretPrefix!);
  };

  /** The request's path (on GCS without the secret, as the store knows it) and query. */
  const split = (req: IncomingMessage) => {
    const sent = req.url ?? "/";
    const raw = secretPrefix && carriesSecret(sent) ? sent.slice(secretPrefix.length - 1) : sent;
    const at = raw.indexOf("?");
    return at < 0 ? { path: raw, query: "" } : { path: raw.slice(0, at), query: raw.slice(at + 1) };
  };

  const signedByRoot = async (req: IncomingMessage, url: URL): Promise<boolean> => {
    if (upstream.kind === "gcs") return carriesSecret(req.url ?? "/");
    if (upstream.kind === "s3") {
      const { path, query } = split(req);
      return signedWithAwsKey(req.method ?? "GET", path, query, req.headers, upstream.credentials);
    }
    return (
      (upstream.key !== undefined && signedWithKey(req.method ?? "GET", url, req.headers, upstream.account, upstream.key)) ||
      (upstream.sasToken !== undefined && signedWithSas(url, upstream.sasToken))
    );
  };

  const route = async (req: IncomingMessage): Promise<Routed> => {
    if (upstream.kind === "azure") return { url: `${origin}${req.url}`, headers: { ...req.headers, host: upstream.endpoint.host } };
    const { path, query } = split(req);
    if (upstream.kind === "gcs") {
      const { authorization: _none, ...headers } = req.headers;
      const token = await upstream.accessToken();
      const storePath = `${upstream.endpoint.pathname.replace(/\/+$/, "")}${path}`;
      return {
        url: `${origin}${storePath}${query ? `?${query}` : ""}`,
        headers: { ...headers, host: upstream.endpoint.host, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      };
    }
    const [, bucket = "", rest = ""] = /^\/([^/]*)(.*)$/.exec(path) ?? [];
    const host = upstream.virtualHosted ? `${bucket}.${upstream.endpoint.host}` : upstream.endpoint.host;
    const storePath = upstream.virtualHosted ? rest || "/" : `${upstream.endpoint.pathname.replace(/\/+$/, "")}${path}`;
    const headers = await signForStore(req.method ?? "GET", host, storePath, query, req.headers, upstream.credentials);
    return { url: `${upstream.endpoint.protocol}//${host}${storePath}${query ? `?${query}` : ""}`, headers };
  };

  /** The request as it came, to the store; its answer as it came, back, and to `keep` when given. */
  const pass = async (req: IncomingMessage, res: ServerResponse, keep?: (status: number, headers: http.IncomingHttpHeaders, body: Buffer) => void) => {
    const { url, headers } = await route(req);
    return new Promise<void>((settled) => {
      const out = client.request(url, { method: req.method, headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        const chunks: Buffer[] = [];
        let length = 0;
        const keeping = keep !== undefined && (answer.statusCode === 200 || answer.statusCode === 206);
        answer.on("data", (chunk: Buffer) => {
          if (keeping && length <= MAX_ENTRY_BYTES) chunks.push(chunk);
          length += chunk.length;
          res.write(chunk);
        });
        answer.on("end", () => {
          res.end();
          if (keeping && length <= MAX_ENTRY_BYTES) keep(answer.statusCode!, answer.headers, Buffer.concat(chunks));
          settled();
        });
        answer.on("error", () => {
          res.destroy();
          settled();
        });
      });
      // The store cut the connection or could not be reached: so is the engine's, which retries as it would.
      out.on("error", () => {
        res.destroy();
        settled();
      });
      res.on("close", () => {
        if (!res.writableFinished) out.destroy();
      });
      req.pipe(out);
    });
  };

  const answerFromCache = (res: ServerResponse, header: EntryHeader, body: Buffer, range: [number, number] | undefined) => {
    const headers: Record<string, string | number> = { ...header.headers, "content-length": body.length, date: new Date().toUTCString() };
    if (range) headers["content-range"] = `bytes ${range[0]}-${range[1] - 1}/${header.size}`;
    res.writeHead(range ? 206 : 200, headers);
    res.end(body);
  };

  const refusal =
    upstream.kind === "gcs"
      ? "<Code>AccessDenied</Code><Message>not sent by this server's engine</Message>"
      : "<Code>SignatureDoesNotMatch</Code><Message>not signed with the root's key</Message>";
  const refuse = (res: ServerResponse) => {
    res.writeHead(403, { "content-type": "application/xml" });
    res.end(`<?xml version="1.0" encoding="UTF-8"?><Error>${refusal}</Error>`);
  };

  /**
   * A staged manifest's write kept in memory, and its reads and removal answered from there, as the store would
   * answer them; false when the request is the store's to answer (one that does not fit, or a name not kept here).
   */
  const answerStaged = async (req: IncomingMessage, res: ServerResponse, name: string): Promise<boolean> => {
    const lastModified = new Date().toUTCString();
    if (req.method === "PUT") {
      const length = Number(req.headers["content-length"]);
      if (!Number.isInteger(length) || !staged.fits(length)) return false;
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const etag = body.length === length ? staged.keep(name, body) : null;
      if (!etag) {
        res.writeHead(400, { "content-type": "application/xml" }).end();
        return true;
      }
      res.writeHead(upstream.kind === "azure" ? 201 : 200, { etag, "last-modified": lastModified, "content-length": 0 }).end();
      return true;
    }
    const found = staged.get(name);
    if (!found) return false;
    if (req.method === "DELETE") {
      staged.drop(name);
      res.writeHead(upstream.kind === "azure" ? 202 : 204, { "content-length": 0 }).end();
      return true;
    }
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const range = boundedRange(req.headers["x-ms-range"]?.toString() ?? req.headers.range);
    const body = range ? found.body.subarray(range[0], Math.min(range[1], found.body.length)) : found.body;
    const headers: Record<string, string | number> = { etag: found.etag, "last-modified": lastModified, "content-length": body.length };
    if (range) headers["content-range"] = `bytes ${range[0]}-${range[0] + body.length - 1}/${found.body.length}`;
    res.writeHead(range ? 206 : 200, headers);
    res.end(req.method === "HEAD" ? undefined : body);
    return true;
  };

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", origin);
    // The object as the store names it (on GCS without this process's secret, and decoded: the engine sends a GCS
    // object's name as one encoded segment), what the cache keeps it under.
    const object = decodedPath(split(req).path);
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const cacheable = req.method === "GET" && isWriteOnceName(object) && !CONDITIONAL.some((name) => req.headers[name] !== undefined);
    // Checked where it decides something: on S3 and GCS every request (sent on with the root's own credentials, one
    // the engine did not send would reach the store as the root's); on Azure, which checks what it is sent, only a
    // read of the cache.
    const signed = (upstream.kind !== "azure" || cacheable) && (await signedByRoot(req, url));
    if (upstream.kind !== "azure" && !signed) return refuse(res);
    const stagedName = stagedManifestName(object);
    if (stagedName && (upstream.kind !== "azure" || (await signedByRoot(req, url))) && (await answerStaged(req, res, stagedName))) return;
    const rangeHeader = header("x-ms-range") ?? header("range");
    const requested = rangeHeader === undefined ? undefined : boundedRange(rangeHeader);
    // A request the store would refuse is its to refuse: it neither reads nor fills the cache.
    if (!cacheable || (rangeHeader !== undefined && requested === undefined) || !signed) return pass(req, res);
    const wanted = (): [number, number] | undefined => {
      if (requested) return requested;
      const size = cache.sizeOf(object);
      return size === undefined ? undefined : [0, size];
    };
    const fromCache = async () => {
      const range = wanted();
      if (!range) return false;
      const found = await cache.read(object, range[0], range[1]);
      if (!found) return false;
      cache.stats.hits++;
      cache.stats.bytesFromCache += found.body.length;
      answerFromCache(res, found.header, found.body, requested);
      return true;
    };
    if (await fromCache()) return;
    const key = `${object} ${rangeHeader ?? "whole"}`;
    const running = filling.get(key);
    if (running) {
      await running;
      if (await fromCache()) return;
    }
    cache.stats.misses++;
    let kept: Promise<void> = Promise.resolve();
    const fill = pass(req, res, (status, headers, body) => {
      cache.stats.bytesFromStore += body.length;
      // Kept only when the body is all the answer said it is: a cut answer may still end without an error.
      const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(headers["content-range"] ?? ""));
      const [start, last, total] = status === 206 && range ? range.slice(1).map(Number) : [0, body.length - 1, body.length];
      if (status === 206 && !range) return;
      if (body.length !== last - start + 1 || body.length !== Number(headers["content-length"])) return;
      const repeated: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) if (!PER_ANSWER.has(name) && typeof value === "string") repeated[name] = value;
      kept = cache.keep(object, start, { object, size: total, headers: repeated }, body);
    }).then(() => kept);
    filling.set(key, fill);
    try {
      await fill;
    } finally {
      if (filling.get(key) === fill) filling.delete(key);
    }
  };

  const server = http.createServer((req, res) => {
    serve(req, res).catch((err) => {
      onFailure("answering the engine's store request", err);
      res.destroy();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: 0, host: "127.0.0.1", exclusive: true }, () => resolve());
  });
  server.unref();
  const port = (server.address() as AddressInfo).port;
  // Azurite's account path stays in the engine's endpoint; an S3 or GCS endpoint's path is added on the way to the
  // store, and the engine's GCS endpoint carries the secret.
  const path = upstream.kind === "azure" ? upstream.endpoint.pathname.replace(/\/+$/, "") : upstream.kind === "gcs" ? `/${upstream.secret}` : "";
  return {
    endpoint: `http://127.0.0.1:${port}${path}`,
    staged,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
