/**
 * The read cache of Lance's write-once files (server/storage/read-cache/) on Azurite (on moto's S3 in the S3 run),
 * behind a proxy that counts the store requests: a warm read fetches nothing but the check for a newer version, and the cache never answers what
 * the store no longer holds (another writer, a table made again), nor an entry damaged or cut short, nor fails a read
 * when it cannot keep what it fetched.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { sharedStoreServer, type StoreServer } from "./store-server";
import { startLatencyProxy, type LatencyProxy, type StoreRequest } from "./latency-proxy";
import { startLoadBalancer } from "./load-balancer";
import { startServer, type TestServer } from "./server";

const arrow = createRequire(import.meta.url)("apache-arrow") as typeof import("apache-arrow");
const DIM = 8;

let store: StoreServer;
let proxy: LatencyProxy;

beforeAll(async () => {
  store = await sharedStoreServer();
  proxy = await startLatencyProxy(store, 0);
});
afterAll(async () => {
  await proxy?.stop();
});

const rows = (from: number, n: number) =>
  new arrow.Table({
    id: arrow.vectorFromArray(
      Array.from({ length: n }, (_, i) => BigInt(from + i)),
      new arrow.Int64(),
    ),
    s: arrow.vectorFromArray(
      Array.from({ length: n }, (_, i) => `row ${from + i}`),
      new arrow.Utf8(),
    ),
    v: arrow.vectorFromArray(
      Array.from({ length: n }, (_, i) => Array.from({ length: DIM }, (_, d) => Math.sin((from + i) * 0.01 + d))),
      new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)),
    ),
  });

const probe = Array.from({ length: DIM }, (_, d) => Math.sin(4.2 + d));
const isDataRead = (r: StoreRequest) => r.kind === "read" && /\/(data|_indices|_deletions)\//.test(r.path);
const freshDir = () => mkdtempSync(path.join(os.tmpdir(), "quiver-read-cache-test-"));

/** A server on a new root behind the counting proxy, with its read cache in `dir`. */
async function serve(dir: string, env: Record<string, string> = {}, options: Parameters<typeof startServer>[1] = {}) {
  const root = await store.newRoot();
  const server = await startServer(
    { ...root.env, QUIVER_STORAGE_OPTIONS: JSON.stringify(store.storageOptionsVia(proxy.endpoint)), QUIVER_READ_CACHE_DIR: dir, ...env },
    { root: root.uri, ...options },
  );
  const db = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url });
  return { server, db, uri: root.uri };
}

/** Another server on a root made by `serve`, with its read cache in `dir` (as after a restart). */
async function reopen(uri: string, dir: string) {
  const server = await startServer(
    { QUIVER_ROOT: uri, QUIVER_STORAGE_OPTIONS: JSON.stringify(store.storageOptionsVia(proxy.endpoint)), QUIVER_READ_CACHE_DIR: dir },
    { root: uri },
  );
  return { server, db: await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url }) };
}

async function cacheMetrics(server: TestServer): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: server.auth })).text();
  return Object.fromEntries([...text.matchAll(/^quiver_read_cache_(\w+) (\S+)$/gm)].map((m) => [m[1], Number(m[2])]));
}

const ids = (table: Array<{ id: bigint }>) => table.map((r) => Number(r.id)).sort((a, b) => a - b);
const read = async (table: lancedb.Table) => ({
  filtered: ids(await table.query().where("id >= 100 AND id < 110").toArray()),
  nearest: (await table.search(probe).limit(5).toArray()).map((r) => Number(r.id)),
  count: await table.countRows(),
});

function entryFiles(dir: string): string[] {
  const top = path.join(dir, "entries");
  return readdirSync(top).flatMap((shard) => readdirSync(path.join(top, shard)).map((name) => path.join(top, shard, name)));
}

describe("the read cache", () => {
  it("answers a warm read from local disk: only the checks for a newer version reach the store", async () => {
    const dir = freshDir();
    const { server, db } = await serve(dir);
    try {
      const table = await db.createTable("warm", rows(0, 3000));
      const cold = await read(table);
      proxy.reset();
      const warm = await read(table);
      expect(warm).toEqual(cold);
      expect(warm.filtered).toEqual([100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
      expect(warm.count).toBe(3000);
      expect(proxy.requests().filter(isDataRead)).toEqual([]);
      expect(proxy.requests().every((r) => r.kind === "list" || r.kind === "head" || /_versions\//.test(r.path))).toBe(true);
      const metrics = await cacheMetrics(server);
      expect(metrics.hits_total).toBeGreaterThan(0);
      expect(metrics.size_bytes).toBeGreaterThan(0);
      expect(entryFiles(dir).length).toBe(metrics.entries);
    } finally {
      await server.stop();
    }
  });

  it("sees exactly what the store holds after another writer appends, deletes and compacts through the engine", async () => {
    const { server, db, uri } = await serve(freshDir());
    try {
      const table = await db.createTable("shared", rows(0, 2000));
      await read(table);
      const engine = await lancedb.connect(uri, { storageOptions: store.storageOptions });
      const direct = await engine.openTable("shared");
      await direct.add(rows(2000, 500));
      await direct.delete("id >= 100 AND id < 105");
      await direct.optimize({ cleanupOlderThan: new Date() });
      const after = await read(table);
      expect(after.count).toBe(2495);
      expect(after.filtered).toEqual([105, 106, 107, 108, 109]);
      expect(ids(await table.query().where("id >= 2495").toArray())).toEqual([2495, 2496, 2497, 2498, 2499]);
    } finally {
      await server.stop();
    }
  });

  it("answers a table dropped and made again at the same location with its new rows", async () => {
    const { server, db } = await serve(freshDir());
    try {
      const first = await db.createTable("again", rows(0, 1000));
      expect((await read(first)).filtered).toHaveLength(10);
      await db.dropTable("again");
      const second = await db.createTable("again", rows(50_000, 1000));
      const after = await read(second);
      expect(after.filtered).toEqual([]);
      expect(after.count).toBe(1000);
      expect(ids(await second.query().limit(3).toArray())).toEqual([50_000, 50_001, 50_002]);
    } finally {
      await server.stop();
    }
  });

  it("detects an entry damaged on disk and fetches its bytes again", async () => {
    const dir = freshDir();
    const { server, db, uri } = await serve(dir);
    const before = await read(await db.createTable("flipped", rows(0, 3000)));
    await server.stop();
    for (const file of entryFiles(dir)) {
      const content = readFileSync(file);
      content[content.length - 1] ^= 0x40;
      writeFileSync(file, content);
    }
    const { server: again, db: db2 } = await reopen(uri, dir);
    try {
      const table = await db2.openTable("flipped");
      proxy.reset();
      expect(await read(table)).toEqual(before);
      expect(proxy.requests().filter(isDataRead).length).toBeGreaterThan(0);
      expect((await cacheMetrics(again)).damaged_total).toBeGreaterThan(0);
      proxy.reset();
      expect(await read(table)).toEqual(before);
      expect(proxy.requests().filter(isDataRead)).toEqual([]);
    } finally {
      await again.stop();
    }
  });

  it("serves nothing partial after a SIGKILL while filling", async () => {
    const dir = freshDir();
    const { server, db, uri } = await serve(dir);
    const table = await db.createTable("killed", rows(0, 3000));
    const expected = await read(table);
    const [someEntry] = entryFiles(dir);
    // The store's answer to the next data read is held: the server is killed while it waits to keep it.
    for (const file of entryFiles(dir)) writeFileSync(file, readFileSync(file).subarray(0, 40));
    writeFileSync(`${someEntry}.4242.dead.tmp`, "a fill a crash cut short");
    const release = proxy.holdAnswers(isDataRead);
    const pending = table
      .query()
      .toArray()
      .catch(() => "cut");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await server.kill();
    release();
    await pending;
    const { server: again, db: db2 } = await reopen(uri, dir);
    try {
      expect(await read(await db2.openTable("killed"))).toEqual(expected);
      expect(entryFiles(dir).some((file) => file.endsWith(".tmp"))).toBe(false);
      expect((await cacheMetrics(again)).damaged_total).toBeGreaterThan(0);
    } finally {
      await again.stop();
    }
  });

  it("reads a table many times its budget right, never holding more than the budget and the entry being added", async () => {
    const dir = freshDir();
    const budget = 2 * 2 ** 20;
    const { server, db } = await serve(dir, { QUIVER_READ_CACHE_SIZE: "2MiB" });
    try {
      // About 6 MiB in 12 data files, three times the budget, read in ranges and whole, twice over.
      const table = await db.createTable("big", rows(0, 10_000));
      for (let from = 10_000; from < 120_000; from += 10_000) await table.add(rows(from, 10_000));
      let largestEntry = 0;
      const onDisk = () => {
        // A fill's temporary file listed here may be gone by its look (kept or let go meanwhile): it holds nothing then.
        const sizes = entryFiles(dir).map((file) => statSync(file, { throwIfNoEntry: false })?.size ?? 0);
        largestEntry = Math.max(largestEntry, ...sizes);
        return sizes.reduce((sum, size) => sum + size, 0);
      };
      for (let pass = 0; pass < 2; pass++) {
        expect(await table.countRows()).toBe(120_000);
        for (const from of [0, 35_000, 70_000, 115_000]) {
          expect(
            ids(
              await table
                .query()
                .where(`id >= ${from} AND id < ${from + 5}`)
                .toArray(),
            ),
          ).toEqual([0, 1, 2, 3, 4].map((i) => from + i));
          expect(onDisk()).toBeLessThanOrEqual(budget + largestEntry);
        }
        const all = await table.query().select(["id", "v"]).toArray();
        expect(all).toHaveLength(120_000);
        expect(onDisk()).toBeLessThanOrEqual(budget + largestEntry);
      }
      const metrics = await cacheMetrics(server);
      expect(metrics.budget_bytes).toBe(budget);
      expect(metrics.size_bytes).toBeLessThanOrEqual(budget);
      expect(metrics.evictions_total).toBeGreaterThan(0);
      expect(metrics.hits_total + metrics.misses_total).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  });

  for (const how of ["503", "cut"] as const) {
    it(`answers right when the store ${how === "503" ? "answers 503" : "cuts answers short"}, and keeps nothing spoiled`, async () => {
      const { server, db } = await serve(freshDir());
      try {
        const table = await db.createTable(`spoiled_${how}`, rows(0, 3000));
        const spoiling = proxy.spoilAnswers(isDataRead, how, 3);
        const first = await read(table);
        expect(spoiling.spoiled()).toBe(3);
        expect(first.filtered).toEqual([100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
        expect(first.count).toBe(3000);
        proxy.reset();
        // Everything kept was whole: the next read is answered from the cache, and right.
        expect(await read(table)).toEqual(first);
        expect(proxy.requests().filter(isDataRead)).toEqual([]);
        expect((await cacheMetrics(server)).damaged_total).toBe(0);
      } finally {
        await server.stop();
      }
    });
  }

  it("answers reads from the store when the disk is full, with no client error", async () => {
    const dir = freshDir();
    const { server, db } = await serve(dir, {}, { fileSizeLimitKiB: 4 });
    try {
      const table = await db.createTable("full", rows(0, 3000));
      const first = await read(table);
      expect(first.filtered).toEqual([100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
      proxy.reset();
      expect(await read(table)).toEqual(first);
      expect(proxy.requests().filter(isDataRead).length).toBeGreaterThan(0);
      expect((await cacheMetrics(server)).fill_failures_total).toBeGreaterThan(0);
      expect(server.output()).toMatch(/filling the cache/);
    } finally {
      await server.stop();
    }
  });

  it("adds up across machines behind a balancer that hashes on the table: a second read is warm whichever client sends it", async () => {
    const root = await store.newRoot();
    const env = { ...root.env, QUIVER_STORAGE_OPTIONS: JSON.stringify(store.storageOptionsVia(proxy.endpoint)) };
    // Two machines: two instances of the root, each with a cache of its own.
    const machines = [
      await startServer({ ...env, QUIVER_READ_CACHE_DIR: freshDir() }, { root: root.uri }),
      await startServer({ ...env, QUIVER_READ_CACHE_DIR: freshDir() }, { root: root.uri }),
    ];
    const balancer = await startLoadBalancer(
      machines.map((m) => m.url),
      { hashOn: (path) => /^\/v1\/table\/([^/]+)/.exec(path)?.[1] ?? path },
    );
    try {
      const client = () => lancedb.connect("db://default", { apiKey: machines[0].adminKey, hostOverride: balancer.url });
      const names = ["hashed_a", "hashed_b", "hashed_c", "hashed_d"];
      const writer = await client();
      for (const name of names) await read(await writer.createTable(name, rows(0, 2000)));
      for (const name of names) {
        proxy.reset();
        const reader = await client();
        expect((await read(await reader.openTable(name))).count).toBe(2000);
        expect(proxy.requests().filter(isDataRead)).toEqual([]);
      }
      // Both machines served tables: the hash spreads them, and each table stays where it was read first.
      const upstreams = new Set(
        balancer
          .passed()
          .filter((p) => p.path.startsWith("/v1/table/hashed_"))
          .map((p) => p.upstream),
      );
      expect(upstreams.size).toBe(2);
    } finally {
      await balancer.stop();
      for (const machine of machines) await machine.stop();
    }
  });

  it("refuses to start on a cache directory the operator named that cannot be written, and does without one by default", async () => {
    // A file where the directory would be: no directory can be made there, whoever the tests run as.
    const notADirectory = path.join(freshDir(), "file");
    writeFileSync(notADirectory, "");
    const root = await store.newRoot();
    await expect(startServer({ ...root.env, QUIVER_READ_CACHE_DIR: path.join(notADirectory, "cache") }, { root: root.uri })).rejects.toThrow(
      /quiver: QUIVER_READ_CACHE_DIR: the read cache directory .* cannot be used: ENOTDIR/,
    );
    const server = await startServer({ ...root.env, XDG_CACHE_HOME: notADirectory }, { root: root.uri });
    try {
      const db = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url });
      const table = await db.createTable("nocache", rows(0, 500));
      expect(await table.countRows()).toBe(500);
      expect(server.output().match(/read cache off: the read cache directory .* cannot be used/g)).toHaveLength(1);
      expect((await cacheMetrics(server)).hits_total).toBeUndefined();
    } finally {
      await server.stop();
    }
  });
});
