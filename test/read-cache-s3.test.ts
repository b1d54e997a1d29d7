/**
 * The read cache in front of an S3 store: moto's S3 server behind the cache's endpoint, and the Lance engine writing
 * and reading a table through it as Quiver's engine does on an s3:// root (test/read-cache.test.ts runs whole servers
 * on it in the S3 run). moto does not check SigV4 signatures: the cache does, and the signing is checked against
 * AWS's published examples (server/storage/read-cache/aws-sigv4.test.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiskCache } from "@/server/storage/read-cache/disk-cache";
import { startCacheProxy, type CacheProxy } from "@/server/storage/read-cache/cache-proxy";
import { signForStore } from "@/server/storage/read-cache/aws-sigv4";
import { startMoto } from "./moto";
import type { StoreServer } from "./store-server";

const require = createRequire(import.meta.url);
const lancedb: typeof import("@lancedb/lancedb") = require("@lancedb/lancedb");

let credentials: { accessKeyId: string; secretAccessKey: string; region: string };
let dir: string;
let server: StoreServer;
let endpoint: string;
let bucket: string;
let cache: DiskCache;
let proxy: CacheProxy;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "quiver-s3-"));
  server = await startMoto();
  endpoint = server.endpoint;
  const root = await server.newRoot("root");
  bucket = new URL(root.uri).host;
  const options = server.storageOptions;
  credentials = { accessKeyId: options.aws_access_key_id, secretAccessKey: options.aws_secret_access_key, region: options.aws_region };
  cache = await DiskCache.open(path.join(dir, "cache"), 64 * 2 ** 20, () => {});
  proxy = await startCacheProxy({ kind: "s3", endpoint: new URL(endpoint), virtualHosted: false, credentials }, cache, () => {});
});
afterAll(async () => {
  await proxy?.close();
  cache?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const engineOptions = () => ({
  aws_access_key_id: credentials.accessKeyId,
  aws_secret_access_key: credentials.secretAccessKey,
  aws_region: credentials.region,
  aws_endpoint: proxy.endpoint,
  aws_virtual_hosted_style_request: "false",
  allow_http: "true",
});

describe("the read cache on S3", () => {
  it("passes the engine's writes to the store signed again, and answers warm reads of write-once files from disk", async () => {
    const db = await lancedb.connect(`s3://${bucket}/root`, { storageOptions: engineOptions(), readConsistencyInterval: 0 });
    const table = await db.createTable(
      "t",
      Array.from({ length: 2000 }, (_, i) => ({ id: i, v: [Math.sin(i), Math.cos(i)] })),
    );
    await table.add([{ id: 5000, v: [1, 1] }]);
    // written through the cache's endpoint, the table is in the store itself
    const direct = await lancedb.connect(`s3://${bucket}/root`, {
      storageOptions: { ...engineOptions(), aws_endpoint: endpoint },
      readConsistencyInterval: 0,
    });
    expect(await (await direct.openTable("t")).countRows()).toBe(2001);

    const read = async () => (await table.query().where("id >= 100 AND id < 103").toArray()).map((r) => Number(r.id)).sort((a, b) => a - b);
    expect(await read()).toEqual([100, 101, 102]);
    const before = { ...cache.stats };
    expect(await read()).toEqual([100, 101, 102]);
    expect(cache.stats.misses).toBe(before.misses);
    expect(cache.stats.hits).toBeGreaterThan(before.hits);

    // a row written past the cache is seen by the next read through it: manifests always go to the store
    await (await direct.openTable("t")).add([{ id: 101, v: [0, 0] }]);
    expect(await read()).toEqual([100, 101, 101, 102]);
  });

  it("refuses a request the root's key did not sign, before it reaches the store", async () => {
    const object = `/${bucket}/root/t.lance/_versions/`;
    const unsigned = await fetch(`${proxy.endpoint}${object}`);
    expect(unsigned.status).toBe(403);
    const url = new URL(proxy.endpoint);
    const otherKey = await signForStore(
      "GET",
      url.host,
      `/${bucket}`,
      "list-type=2&prefix=root%2F",
      { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" },
      {
        ...credentials,
        secretAccessKey: "not-the-root-key",
      },
    );
    const signedByAnother = await fetch(`${proxy.endpoint}/${bucket}?list-type=2&prefix=root%2F`, { headers: otherKey as Record<string, string> });
    expect(signedByAnother.status).toBe(403);
    const byRoot = await signForStore("GET", url.host, `/${bucket}`, "list-type=2&prefix=root%2F", { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" }, credentials);
    const listed = await fetch(`${proxy.endpoint}/${bucket}?list-type=2&prefix=root%2F`, { headers: byRoot as Record<string, string> });
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain("root/t.lance/_versions/");
  });
});
