/**
 * What the benchmark cases share: the admin key and run count, statistics, Arrow bodies, API calls, and starting
 * Quiver (as `npm start` runs it unless told otherwise), Azurite and load.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import net from "node:net";
import { performance } from "node:perf_hooks";
import { Float64, Int64, Table, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";

const require = createRequire(import.meta.url);
export const lancedb = require("@lancedb/lancedb");
export const arrowCjs = require("apache-arrow");
export const KEY = "bench-admin-key-0123456789";
export const RUNS = Number(process.env.BENCH_RUNS || 3);

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
export const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
/** A column of `dim`-wide float vectors over `values` (row after row), without copying them. */
export const vectorColumn = (arrow, dim, values) =>
  arrow.makeVector({
    type: new arrow.FixedSizeList(dim, new arrow.Field("item", new arrow.Float32(), true)),
    length: values.length / dim,
    nullCount: 0,
    child: arrow.makeData({ type: new arrow.Float32(), length: values.length, data: values }),
  });
export const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

export function rowsTable(from, count, arrow = { Table, vectorFromArray, Int64, Float64, Utf8 }) {
  const ids = Array.from({ length: count }, (_, i) => BigInt(from + i));
  return new arrow.Table({
    id: arrow.vectorFromArray(ids, new arrow.Int64()),
    x: arrow.vectorFromArray(
      Float64Array.from({ length: count }, (_, i) => (from + i) * 0.5),
      new arrow.Float64(),
    ),
    s: arrow.vectorFromArray(
      Array.from({ length: count }, (_, i) => `s${String(from + i).padStart(15, "0")}`),
      new arrow.Utf8(),
    ),
  });
}

/** The same rows as one IPC stream of 100k-row batches. */
export function streamOf(from, count, batch = 100_000) {
  const batches = [];
  for (let i = 0; i < count; i += batch) batches.push(...rowsTable(from + i, Math.min(batch, count - i)).batches);
  return Buffer.from(tableToIPC(new Table(batches), "stream"));
}

/**
 * One API call. Node's http client rather than fetch: fetch streams a large body in small writes and costs the
 * client more than the server spends (a 36 MB insert took twice as long through fetch as through curl).
 */
export function api(base, p, init = {}) {
  const headers = { "x-api-key": KEY, ...(init.headers ?? {}) };
  let body = init.body;
  if (init.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(init.json);
  }
  if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
  const send = () =>
    new Promise((resolve, reject) => {
      // A large body goes on a connection of its own: written into a kept-alive socket the server has just closed after
      // an idle pause, it failed the run with EPIPE, and a new connection costs nothing beside a large write.
      const agent = body !== undefined && Buffer.byteLength(body) > 2 ** 20 ? false : keepAlive;
      const req = http.request(base + p, { method: init.method ?? (body !== undefined ? "POST" : "GET"), headers, agent }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          init.phases?.(serverTiming(res.headers["server-timing"]));
          const text = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode >= 300) reject(new Error(`${p}: ${res.statusCode} ${text}`));
          else resolve(text ? JSON.parse(text) : undefined);
        });
        res.on("error", reject);
      });
      req.on("error", (err) => {
        // A kept-alive socket the server closed after an idle pause, as this request went out on it: the server read
        // nothing of it, so it goes again (as Node's documentation advises).
        if (req.reusedSocket && err.code === "ECONNRESET") send().then(resolve, reject);
        else reject(err);
      });
      req.end(body);
    });
  return send();
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** A QueryTable call through fetch, its Arrow answer read whole: what a reader of the rows waits for. */
export const queryArrow = (base, table, body) =>
  fetch(`${base}/v1/table/${table}/query`, {
    method: "POST",
    headers: { "x-api-key": KEY, "content-type": "application/json" },
    body: JSON.stringify(body),
  }).then((r) => r.arrayBuffer());

/** `Server-Timing: body;dur=1.2, work;dur=3.4` as `{ body: 1.2, work: 3.4 }`. */
function serverTiming(header = "") {
  return Object.fromEntries(
    header
      .split(",")
      .map((part) => /^\s*([\w-]+);dur=([\d.]+)/.exec(part))
      .filter(Boolean)
      .map((m) => [m[1], Number(m[2])]),
  );
}

/**
 * Flushes written data to disk, so that each timed write starts on a quiet machine instead of behind the writeback
 * of whatever ran before it (which had made the measured order decide the ratio).
 */
export function settle() {
  spawnSync("sync");
}

/**
 * The body LanceDB's remote client sends for `add`: an Arrow stream with LZ4-compressed buffers, caught by a proxy
 * on its way to Quiver, so that the LZ4 case times the server and not the client's encoding.
 */
export async function remoteClientInsertBody(base, table) {
  let captured;
  const proxy = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (/\/insert\/?(\?|$)/.test(req.url)) captured = { body, type: req.headers["content-type"] };
      const headers = { ...req.headers, "content-length": String(body.length) };
      delete headers["transfer-encoding"];
      const forward = http.request(base + req.url, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      });
      forward.end(body);
    });
  });
  await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  try {
    const remote = await lancedb.connect("db://default", { apiKey: KEY, hostOverride: `http://127.0.0.1:${proxy.address().port}` });
    await (await remote.createTable("lz4capture", rowsTable(0, 1, arrowCjs))).add(table);
  } finally {
    proxy.close();
  }
  if (!captured) throw new Error("the remote client's insert body was not captured");
  return captured;
}

/** Azurite, in memory, with the development account; its storage options for Quiver and the engine alike. */
export async function startAzurite(port) {
  const child = spawn(
    "node_modules/.bin/azurite-blob",
    ["--blobHost", "127.0.0.1", "--blobPort", String(port), "--inMemoryPersistence", "--disableTelemetry", "--silent", "--skipApiVersionCheck", "--loose"],
    { stdio: "ignore" },
  );
  const endpoint = `http://127.0.0.1:${port}/devstoreaccount1`;
  for (
    let i = 0;
    i < 300 &&
    !(await fetch(`${endpoint}?comp=list`).then(
      () => true,
      () => false,
    ));
    i++
  )
    await new Promise((r) => setTimeout(r, 100));
  const storageOptions = {
    azure_storage_account_name: "devstoreaccount1",
    azure_storage_account_key: "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    azure_storage_endpoint: endpoint,
    allow_http: "true",
  };
  return { child, endpoint, storageOptions };
}

/** Throws when something listens on the port already: its answers would be taken for the new server's. */
async function ensurePortFree(port) {
  await new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", (err) => reject(err.code === "EADDRINUSE" ? new Error(`port ${port} is in use (a server left from an earlier run?)`) : err));
    probe.listen({ port, host: "127.0.0.1", exclusive: true }, () => probe.close(resolve));
  });
}

/** How `npm start` runs Quiver when nothing is configured: a worker per core, the automatic maintenance policy on. */
export const NPM_START = { name: "npm start defaults", workers: os.availableParallelism(), env: { QUIVER_MAINTENANCE: "on" } };

/**
 * Quiver with `workers` as `npm start` runs it (pass NPM_START's workers and env for what a user gets), or without as
 * one `next start` process. The automatic maintenance policy is off unless `env` turns it on.
 */
export async function startQuiver(root, port, storageOptions, workers, env = {}) {
  await ensurePortFree(port);
  const args = workers ? ["scripts/start.mjs", "-H", "127.0.0.1"] : ["node_modules/next/dist/bin/next", "start", "-p", String(port), "-H", "127.0.0.1"];
  const child = spawn("node", args, {
    env: {
      ...process.env,
      PORT: String(port),
      ...(workers ? { QUIVER_WORKERS: String(workers) } : {}),
      QUIVER_ROOT: root,
      ...(storageOptions ? { QUIVER_STORAGE_OPTIONS: JSON.stringify(storageOptions) } : {}),
      QUIVER_ADMIN_API_KEY: KEY,
      NODE_ENV: "production",
      QUIVER_MAX_PAGE_SIZE: "1000",
      QUIVER_MAINTENANCE: "off",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${log}`);
    if (
      (await fetch(`${base}/v1/table`).then(
        (r) => r.status,
        () => 0,
      )) === 401
    )
      return { child, base, log: () => log };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not start:\n${log}`);
}

/**
 * Sums a number read from /proc over the process and its children (npm start's workers), leaving out processes that
 * are gone. Read from /proc rather than by running ps: spawning a process every few milliseconds would slow what is
 * measured.
 */
function overProcessTree(pid, read) {
  let children = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // gone
  }
  let sum = 0;
  for (const p of [pid, ...children]) {
    try {
      sum += read(p);
    } catch {
      // gone
    }
  }
  return sum;
}

/** Resident memory of the process and its children, in bytes. */
export const processTreeRss = (pid) => overProcessTree(pid, (p) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0) * 1024);

/** CPU time (user + system) the process and its children have used, in milliseconds. */
export const processTreeCpuMs = (pid) =>
  overProcessTree(pid, (p) => {
    const fields = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  });

/** Runs `work` while sampling resident memory (`rss()`); answers the wall time and the peak growth. */
export async function withRss(rss, work) {
  const before = rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rss())), 5);
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  clearInterval(timer);
  peak = Math.max(peak, rss());
  return { ms, growth: peak - before };
}

export async function pool(count, clients, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < count; i = next++) await work(i);
    }),
  );
}

/**
 * 32 connections sending requests for `seconds`: requests per second, latencies and, with `pid`, the server's CPU per
 * request, which does not depend on how much of the machine the load generator takes.
 */
export async function load(url, init, seconds = 5, pid) {
  const cpu0 = pid ? processTreeCpuMs(pid) : 0;
  const latencies = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        const res = await fetch(url, init);
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`${url}: ${res.status}`);
        latencies.push(performance.now() - s);
      }
    }),
  );
  return {
    rps: latencies.length / seconds,
    p50: pct(latencies, 0.5),
    p99: pct(latencies, 0.99),
    cpuMs: pid ? (processTreeCpuMs(pid) - cpu0) / latencies.length : 0,
  };
}

/** With BENCH_TRACE set, the store requests of one operation, in the order they arrived: which round trips are in a row. */
export function traceStoreRequests(what, ms, requests) {
  console.log(`  one ${what}, ${ms.toFixed(1)} ms:`);
  for (const r of requests)
    console.log(
      `    ${r.at.toFixed(1).padStart(6)} ms  ${r.kind.padEnd(6)} ${r.status ?? "-"}  ${r.path.replace(/^\/[^/]+\/[^/]+\//, "")}${r.prefix ? ` (prefix ${r.prefix})` : ""}`,
    );
}
