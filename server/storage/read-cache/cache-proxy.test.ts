import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AZURITE_ACCOUNT, AZURITE_KEY, createContainer, startAzurite, type Azurite } from "@/test/azurite";
import { sharedKeySignature } from "./azure-shared-key.ts";
import { startCacheProxy, type CacheProxy } from "./cache-proxy.ts";
import { DiskCache } from "./disk-cache.ts";
import { startLatencyProxy, type LatencyProxy } from "@/test/latency-proxy";

let azurite: Azurite;
let cache: DiskCache;
let proxy: CacheProxy;
/** The store as the cache proxy sees it: Azurite behind a proxy that can spoil its answers. */
let store: LatencyProxy;
const CONTAINER = "proxied";
const blob = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7) % 256));

/** A request to the proxy, signed as the engine signs it (with `key`), or not at all. */
async function send(method: string, key: string, headers: Record<string, string> = {}, body?: Buffer, signWith: string | null = AZURITE_KEY) {
  const url = new URL(`${proxy.endpoint}/${CONTAINER}/${key}`);
  const all: Record<string, string> = { "x-ms-date": new Date().toUTCString(), "x-ms-version": "2021-08-06", ...headers };
  if (body) all["content-length"] = String(body.length);
  if (signWith !== null) {
    const signature = sharedKeySignature(method, url, all, AZURITE_ACCOUNT, Buffer.from(signWith, "base64")).toString("base64");
    all.authorization = `SharedKey ${AZURITE_ACCOUNT}:${signature}`;
  }
  const res = await fetch(url, { method, headers: all, body: body ? new Uint8Array(body) : undefined });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

const put = (key: string, body: Buffer) => send("PUT", key, { "x-ms-blob-type": "BlockBlob" }, body);

beforeAll(async () => {
  azurite = await startAzurite();
  await createContainer(azurite.endpoint, CONTAINER);
  cache = await DiskCache.open(mkdtempSync(path.join(os.tmpdir(), "quiver-cache-proxy-")), 64 * 2 ** 20, () => {});
  store = await startLatencyProxy(azurite, 0);
  proxy = await startCacheProxy(
    { kind: "azure", endpoint: new URL(store.endpoint), account: AZURITE_ACCOUNT, key: Buffer.from(AZURITE_KEY, "base64") },
    cache,
    () => {},
  );
  expect((await put("t.lance/data/a.lance", blob)).status).toBe(201);
  expect((await put("t.lance/_versions/1.manifest", blob.subarray(0, 100))).status).toBe(201);
});
afterAll(async () => {
  await proxy?.close();
  await store?.stop();
  cache?.close();
  await azurite?.stop();
});

describe("the read cache's store endpoint", () => {
  it("keeps a range of a write-once file at its first read and answers it from disk after", async () => {
    const first = await send("GET", "t.lance/data/a.lance", { range: "bytes=1000-1999" });
    expect(first.status).toBe(206);
    expect(first.body).toEqual(blob.subarray(1000, 2000));
    const misses = cache.stats.misses;
    const hits = cache.stats.hits;
    const again = await send("GET", "t.lance/data/a.lance", { range: "bytes=1500-1599" });
    expect(again.status).toBe(206);
    expect(again.body).toEqual(blob.subarray(1500, 1600));
    expect(again.headers.get("content-range")).toBe(`bytes 1500-1599/${blob.length}`);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    expect([cache.stats.hits - hits, cache.stats.misses - misses]).toEqual([1, 0]);
  });

  it("answers cached bytes only to a request signed with the root's key: the store answers the rest", async () => {
    await send("GET", "t.lance/data/a.lance", { range: "bytes=0-99" });
    const hits = cache.stats.hits;
    const unsigned = await send("GET", "t.lance/data/a.lance", { range: "bytes=0-99" }, undefined, null);
    const otherKey = await send("GET", "t.lance/data/a.lance", { range: "bytes=0-99" }, undefined, Buffer.alloc(64, 1).toString("base64"));
    expect([unsigned.status, otherKey.status]).toEqual([403, 403]);
    expect(unsigned.body.includes(blob.subarray(0, 100))).toBe(false);
    expect(cache.stats.hits).toBe(hits);
  });

  it("never keeps a version manifest: each read goes to the store", async () => {
    const misses = cache.stats.misses;
    const hits = cache.stats.hits;
    for (let i = 0; i < 2; i++) expect((await send("GET", "t.lance/_versions/1.manifest")).body).toEqual(blob.subarray(0, 100));
    expect([cache.stats.hits - hits, cache.stats.misses - misses]).toEqual([0, 0]);
  });

  it("fetches a range several readers want at once from the store once", async () => {
    const misses = cache.stats.misses;
    const answers = await Promise.all(Array.from({ length: 5 }, () => send("GET", "t.lance/data/a.lance", { range: "bytes=50000-59999" })));
    for (const answer of answers) expect(answer.body).toEqual(blob.subarray(50_000, 60_000));
    expect(cache.stats.misses - misses).toBe(1);
  });

  it("keeps nothing of an answer the store cut short", async () => {
    expect((await put("t.lance/data/cut.lance", blob)).status).toBe(201);
    store.reset();
    const spoiling = store.spoilAnswers((r) => r.path.endsWith("/cut.lance") && r.kind === "read", "cut", 1);
    const cut = await send("GET", "t.lance/data/cut.lance").catch(() => null);
    expect(spoiling.spoiled()).toBe(1);
    expect(cut === null || cut.body.length < blob.length).toBe(true);
    const misses = cache.stats.misses;
    const whole = await send("GET", "t.lance/data/cut.lance");
    expect(whole.body).toEqual(blob);
    expect(cache.stats.misses - misses).toBe(1);
    const hits = cache.stats.hits;
    expect((await send("GET", "t.lance/data/cut.lance")).body).toEqual(blob);
    expect(cache.stats.hits - hits).toBe(1);
  });

  it("keeps a manifest the engine staged in memory: written, read and removed without a request to the store, and taken once", async () => {
    const name = "t.lance/_versions/18446744073709551613.manifest-0f8c2a4e-1b2c-4d5e-8f90-a1b2c3d4e5f6";
    const manifest = blob.subarray(0, 500);
    store.reset();
    const written = await put(name, manifest);
    expect(written.status).toBe(201);
    expect(written.headers.get("etag")).toBeTruthy();
    const read = await send("GET", name);
    expect([read.status, read.body.equals(manifest)]).toEqual([200, true]);
    const ranged = await send("GET", name, { range: "bytes=10-19" });
    expect([ranged.status, ranged.body.equals(manifest.subarray(10, 20))]).toEqual([206, true]);
    expect(store.requests()).toEqual([]);
    expect(proxy.staged.take("18446744073709551613.manifest-0f8c2a4e-1b2c-4d5e-8f90-a1b2c3d4e5f6")?.equals(manifest)).toBe(true);
    expect(proxy.staged.take("18446744073709551613.manifest-0f8c2a4e-1b2c-4d5e-8f90-a1b2c3d4e5f6")).toBeNull();
    // Taken, it is the store's again: there, it never was.
    expect((await send("GET", name)).status).toBe(404);
    // Removed before anyone took it, it is gone without a request to the store either.
    expect((await put(name, manifest)).status).toBe(201);
    store.reset();
    expect((await send("DELETE", name)).status).toBe(202);
    expect(store.requests()).toEqual([]);
    expect(proxy.staged.take("18446744073709551613.manifest-0f8c2a4e-1b2c-4d5e-8f90-a1b2c3d4e5f6")).toBeNull();
  });

  it("keeps no staged manifest a request not signed with the root's key wrote: the store refuses it", async () => {
    const name = "t.lance/_versions/5.manifest-0f8c2a4e-1b2c-4d5e-8f90-a1b2c3d4e5f7";
    const unsigned = await send("PUT", name, { "x-ms-blob-type": "BlockBlob" }, blob.subarray(0, 10), null);
    expect(unsigned.status).toBe(403);
    expect(proxy.staged.take("5.manifest-0f8c2a4e-1b2c-4d5e-8f90-a1b2c3d4e5f7")).toBeNull();
  });
});
