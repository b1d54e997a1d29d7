/**
 * The read cache on a gs:// root, as far as this machine allows: no GCS server or emulator can be had here, so the
 * store behind the cache is moto's S3 server, which answers the requests of Google's XML API that the engine sends as
 * GCS answers them (objects at `/<bucket>/<object>` with ranges, ListObjectsV2 listings, multipart uploads). The engine
 * is given what Quiver gives it on a gs:// root (engineStorageOptions); a proxy between the cache and the store records
 * what reaches the store: every request with the root's OAuth token, none with the cache's secret or without a token.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiskCache } from "@/server/storage/read-cache/disk-cache";
import { engineStorageOptions } from "@/server/storage/read-cache/engine-store";
import { parseRoot } from "@/server/storage/root";
import { engineKeyForGcs, startCacheProxy, type CacheProxy } from "@/server/storage/read-cache/cache-proxy";
import { startLatencyProxy, type LatencyProxy } from "./latency-proxy";
import { startMoto } from "./moto";
import type { StoreServer } from "./store-server";

const lancedb: typeof import("@lancedb/lancedb") = createRequire(import.meta.url)("@lancedb/lancedb");

const TOKEN = "ya29.test-token-of-the-root";
const SECRET = "the-cache-secret-of-this-process";
let dir: string;
let store: StoreServer;
let recorder: LatencyProxy;
let cache: DiskCache;
let proxy: CacheProxy;
let bucket: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "quiver-gcs-"));
  store = await startMoto();
  bucket = new URL((await store.newRoot()).uri).host;
  recorder = await startLatencyProxy(store, 0);
  cache = await DiskCache.open(path.join(dir, "cache"), 64 * 2 ** 20, () => {});
  proxy = await startCacheProxy({ kind: "gcs", endpoint: new URL(recorder.endpoint), secret: SECRET, accessToken: async () => TOKEN }, cache, () => {});
});
afterAll(async () => {
  delete process.env.QUIVER_READ_CACHE_ENDPOINT;
  await proxy?.close();
  cache?.close();
  await recorder?.stop();
  await store?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The engine as a server on this gs:// root opens it: its own key for the store taken out, the cache's put in. */
function engine() {
  process.env.QUIVER_READ_CACHE_ENDPOINT = proxy.endpoint;
  const options = engineStorageOptions(parseRoot(`gs://${bucket}/root`), { google_service_account: "/etc/quiver/root-key.json", google_project_id: "acme" });
  expect(options).toEqual({
    google_project_id: "acme",
    google_service_account_key: engineKeyForGcs(proxy.endpoint),
    google_base_url: proxy.endpoint,
    allow_http: "true",
  });
  return lancedb.connect(`gs://${bucket}/root`, { storageOptions: options, readConsistencyInterval: 0 });
}

describe("the read cache on GCS", () => {
  it("passes the engine's requests on with the root's token, and answers warm reads of write-once files from disk", async () => {
    expect(proxy.endpoint).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/${SECRET}$`));
    const db = await engine();
    const table = await db.createTable(
      "t",
      Array.from({ length: 2000 }, (_, i) => ({ id: i, v: [Math.sin(i), Math.cos(i)] })),
    );
    await table.add([{ id: 5000, v: [1, 1] }]);
    expect(await table.countRows()).toBe(2001);

    const reached = recorder.requests();
    expect(reached.length).toBeGreaterThan(5);
    expect(reached.filter((r) => r.path.includes(SECRET))).toEqual([]);
    expect(reached.every((r) => r.path === `/${bucket}` || r.path.startsWith(`/${bucket}/`))).toBe(true);
    expect(new Set(reached.map((r) => r.authorization))).toEqual(new Set([`Bearer ${TOKEN}`]));
    expect(reached.some((r) => r.kind === "write" && /\/t\.lance\/data\/[^/]+\.lance$/.test(r.path))).toBe(true);

    const read = async () => (await table.query().where("id >= 100 AND id < 103").toArray()).map((r) => Number(r.id)).sort((a, b) => a - b);
    expect(await read()).toEqual([100, 101, 102]);
    const before = { ...cache.stats };
    recorder.reset();
    expect(await read()).toEqual([100, 101, 102]);
    expect(cache.stats.misses).toBe(before.misses);
    expect(cache.stats.hits).toBeGreaterThan(before.hits);
    // only the checks for a newer version reach the store
    expect(recorder.requests().filter((r) => r.kind === "read" && /\/(data|_indices|_deletions)\//.test(r.path))).toEqual([]);

    // a row another machine's server writes (through a cache of its own) is seen through this one: manifests always
    // go to the store
    const elsewhere = await DiskCache.open(path.join(dir, "elsewhere"), 64 * 2 ** 20, () => {});
    const other = await startCacheProxy(
      { kind: "gcs", endpoint: new URL(recorder.endpoint), secret: "another", accessToken: async () => TOKEN },
      elsewhere,
      () => {},
    );
    try {
      const writer = await lancedb.connect(`gs://${bucket}/root`, {
        storageOptions: { google_service_account_key: engineKeyForGcs(other.endpoint), google_base_url: other.endpoint, allow_http: "true" },
      });
      await (await writer.openTable("t")).add([{ id: 101, v: [0, 0] }]);
    } finally {
      await other.close();
      elsewhere.close();
    }
    expect(await read()).toEqual([100, 101, 101, 102]);
  });

  it("refuses a request without the secret before it reaches the store", async () => {
    recorder.reset();
    const port = new URL(proxy.endpoint).port;
    for (const url of [
      `http://127.0.0.1:${port}/${bucket}?list-type=2&prefix=root%2F`,
      `http://127.0.0.1:${port}/${bucket}/root/t.lance/_versions/`,
      `http://127.0.0.1:${port}/not-the-secret/${bucket}?list-type=2`,
      `http://127.0.0.1:${port}/${SECRET.slice(0, -1)}/${bucket}?list-type=2`,
    ]) {
      const refused = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(refused.status, url).toBe(403);
      expect(await refused.text()).toContain("AccessDenied");
    }
    expect(recorder.requests()).toEqual([]);
    const listed = await fetch(`${proxy.endpoint}/${bucket}?list-type=2&prefix=root%2F`);
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain("root/t.lance/_versions/");
  });
});
