/**
 * Where the engine reaches the store: through the machine's read cache when there is one (started by `npm start`'s
 * primary for all its workers, or here for a server process started alone), else the store itself.
 */
import "server-only";
import { register } from "prom-client";
import { log } from "@/server/log";
import type { DataRoot } from "@/server/storage/root";
import { AWS_ENDPOINT, AWS_VIRTUAL_HOSTED, AZURE_ENDPOINT, GCS_APPLICATION_CREDENTIALS, GCS_KEY, GCS_KEY_PATH } from "./option-names";
import { engineKeyForGcs } from "./cache-proxy";
import { registerReadCacheMetrics, startReadCache } from "./read-cache";

/**
 * The endpoint of the read cache the engine reaches the store through, or "none": set by scripts/start.mjs for its
 * workers, else here. In the environment, so that every copy of this module Next loads (one per route bundle) sees it.
 */
const ENDPOINT = "QUIVER_READ_CACHE_ENDPOINT";

/** Once per process, before the first database opens. */
export async function startEngineReadCache(): Promise<void> {
  if (process.env[ENDPOINT]) return;
  const running = await startReadCache(
    process.env,
    (line) => log.info({ event: "read-cache" }, line),
    (what, err) => log.warn({ event: "read-cache", err: (err as Error).message }, what),
  );
  process.env[ENDPOINT] = running?.endpoint ?? "none";
  if (running) registerReadCacheMetrics(register, running.cache);
  // On the global object: every copy of this module Next loads takes staged manifests from the one cache.
  if (running) (globalThis as InProcessCache).quiverTakeStaged = running.takeStaged;
}

type InProcessCache = typeof globalThis & { quiverTakeStaged?: (name: string) => Buffer | null };

/**
 * Where a manifest the engine staged through the read cache is taken from: this process's cache ("here"), the
 * primary's of `npm start` ("primary", asked over IPC), or none: the staged file is then in the store.
 */
export function stagedManifestsAt(): { at: "here"; take: (name: string) => Buffer | null } | { at: "primary" | "none" } {
  const take = (globalThis as InProcessCache).quiverTakeStaged;
  if (take) return { at: "here", take };
  const endpoint = process.env[ENDPOINT];
  return { at: endpoint && endpoint !== "none" ? "primary" : "none" };
}

/** The storage options the engine opens datasets with: the store's, pointed at the read cache when there is one. */
export function engineStorageOptions(root: DataRoot, options: Record<string, string>): Record<string, string> {
  const endpoint = process.env[ENDPOINT];
  if (!endpoint || endpoint === "none") return options;
  const cloud = root.kind === "object" ? root.cloud : undefined;
  const replaced = {
    s3: [...AWS_ENDPOINT.names, ...AWS_VIRTUAL_HOSTED.names],
    gs: [...GCS_KEY.names, ...GCS_KEY_PATH.names, ...GCS_APPLICATION_CREDENTIALS.names],
    az: AZURE_ENDPOINT.names,
  }[cloud ?? "az"];
  const pointed = Object.fromEntries(Object.entries(options).filter(([name]) => !replaced.includes(name)));
  // S3 through the cache: the bucket as the path's first part, which the cache turns back into the store's form.
  if (cloud === "s3") return { ...pointed, aws_endpoint: endpoint, aws_virtual_hosted_style_request: "false", allow_http: "true" };
  // GCS through the cache: a key that names the cache as the store and asks for no token (the cache adds the root's),
  // and the cache as the base URL outright, which a BASE_URL in the environment would otherwise set (Lance reads it).
  if (cloud === "gs") return { ...pointed, google_service_account_key: engineKeyForGcs(endpoint), google_base_url: endpoint, allow_http: "true" };
  return { ...pointed, azure_storage_endpoint: endpoint, allow_http: "true" };
}
