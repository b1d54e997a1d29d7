#!/usr/bin/env node
/**
 * Quiver benchmarks: each case measured through the real server (auth on, an API key) and, in the same run,
 * against its baseline (the engine called in-process, or a bare http server for metadata under load).
 * Usage: npm run bench [-- [--azurite | --latency <ms>] case ...]   Cases: insert, merge, parallel, list, versions,
 * load, workers, maintenance, query, catalog (BENCH_CATALOG_TABLES tables, 10,000 by default, 400 on Azurite), managed
 * (the REST namespace client's adds to a managed table against an unmanaged one), idle (store requests at rest, with
 * --latency 0: 1, 2 and 4 instances over BENCH_IDLE_TABLES tables, 300 and 3,000 by default);
 * latency, the operations table, is the one case run with --latency alone.
 * With --azurite, Quiver's root and the engine's both live on one Azurite (a real Azure Blob server, in memory); with
 * --latency, also behind a proxy that answers each store request that many milliseconds late and counts them.
 * Prints a table of medians (min-max) and ratios, and writes bench/results/latest[-azurite|-latency].{json,md}, or
 * bench/results/$BENCH_RESULTS.{json,md}. BENCH_TRACE prints the store requests of one add on each side of the managed case.
 * BENCH_CATALOG_DIR_TABLES caps the dir namespace's run of the catalog case
 * (its rate falls as its catalog grows: a 50,000-table run of it alone takes most of an hour).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { performance } from "node:perf_hooks";
import { Float64, Int64, Table, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";
import { startLatencyProxy } from "../test/latency-proxy.ts";
import { latencyCase, latencyTable } from "./latency.mjs";
import { catalogCase } from "./catalog.mjs";
import { managedCase } from "./managed.mjs";
import { idleCase } from "./idle.mjs";

const require = createRequire(import.meta.url);
const lancedb = require("@lancedb/lancedb");
const arrowCjs = require("apache-arrow");
const KEY = "bench-admin-key-0123456789";
const RUNS = Number(process.env.BENCH_RUNS || 3);
const args = process.argv.slice(2);
const latencyAt = args.indexOf("--latency");
/** With `--latency <ms>`, both roots are on Azurite behind a proxy that answers each store request that late. */
const latency = latencyAt < 0 ? null : Number(args[latencyAt + 1]);
if (latency !== null && !(latency >= 0)) throw new Error("--latency takes the milliseconds each store request is held back, e.g. --latency 15");
const onAzurite = args.includes("--azurite") || latency !== null;
const selected = args.filter((a, i) => a !== "--azurite" && a !== "--latency" && (latencyAt < 0 || i !== latencyAt + 1));
// With --latency alone, the operations table; the other cases run where asked for by name.
const want = (name) => (selected.length === 0 ? (latency === null ? name !== "latency" : name === "latency") : selected.includes(name));
const results = [];
/** Tables of their own that a case adds to the results' Markdown. */
const extraTables = [];
const BENCH_LATENCY_RUNS = Number(process.env.BENCH_RUNS || 15);

// ---------------------------------------------------------------- helpers

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** One measured row; `met`, when given, says whether the target holds (shown as ✓ or ✗). */
function record(caseName, metric, unit, quiver, baseline, target, met) {
  const row = { case: caseName, metric, unit, quiver: { median: median(quiver), min: Math.min(...quiver), max: Math.max(...quiver) } };
  if (baseline) row.baseline = { median: median(baseline), min: Math.min(...baseline), max: Math.max(...baseline) };
  // Against a baseline of nothing (a count that was zero) there is no ratio to give.
  if (row.baseline && row.baseline.median !== 0) row.ratio = row.quiver.median / row.baseline.median;
  if (target) row.target = target;
  if (met !== undefined) row.met = met;
  results.push(row);
  const b = row.baseline ? `  baseline ${fmt(row.baseline.median)} ${unit}  ratio ${row.ratio?.toFixed(2) ?? "—"}` : "";
  console.log(
    `  ${caseName} / ${metric}: ${fmt(row.quiver.median)} ${unit} (${fmt(row.quiver.min)}-${fmt(row.quiver.max)})${b}${target ? `  target ${target}${verdict(row)}` : ""}`,
  );
}

const verdict = (row) => (row.met === undefined ? "" : row.met ? " ✓" : " ✗");

function rowsTable(from, count, arrow = { Table, vectorFromArray, Int64, Float64, Utf8 }) {
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
function streamOf(from, count, batch = 100_000) {
  const batches = [];
  for (let i = 0; i < count; i += batch) batches.push(...rowsTable(from + i, Math.min(batch, count - i)).batches);
  return Buffer.from(tableToIPC(new Table(batches), "stream"));
}

/**
 * One API call. Node's http client rather than fetch: fetch streams a large body in small writes and costs the
 * client more than the server spends (a 36 MB insert took twice as long through fetch as through curl).
 */
function api(base, p, init = {}) {
  const headers = { "x-api-key": KEY, ...(init.headers ?? {}) };
  let body = init.body;
  if (init.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(init.json);
  }
  if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
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
    req.on("error", reject);
    req.end(body);
  });
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 64 });

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
function settle() {
  spawnSync("sync");
}

/**
 * The body LanceDB's remote client sends for `add`: an Arrow stream with LZ4-compressed buffers, caught by a proxy
 * on its way to Quiver, so that the LZ4 case times the server and not the client's encoding.
 */
async function remoteClientInsertBody(base, table) {
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
async function startAzurite(port) {
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

/**
 * Quiver as the tests run it (`next start`), or with `workers` as `npm start` runs it, with that many workers. The
 * automatic maintenance policy is off unless `env` turns it on: it would change what the other cases measure.
 */
/** Throws when something listens on the port already: its answers would be taken for the new server's. */
async function ensurePortFree(port) {
  await new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", (err) => reject(err.code === "EADDRINUSE" ? new Error(`port ${port} is in use (a server left from an earlier run?)`) : err));
    probe.listen({ port, host: "127.0.0.1", exclusive: true }, () => probe.close(resolve));
  });
}

async function startQuiver(root, port, storageOptions, workers, env = {}) {
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

function processTreeRss(pid) {
  const pids = [pid];
  // Read from /proc rather than by running ps: spawning a process every few milliseconds would slow what is measured.
  let children = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // gone
  }
  pids.push(...children);
  let rss = 0;
  for (const p of pids) {
    try {
      rss += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0) * 1024;
    } catch {
      // gone
    }
  }
  return rss;
}

/** CPU time (user + system) the process has used, in milliseconds. */
function processCpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Runs `work` while sampling resident memory (`rss()`); answers the wall time and the peak growth. */
async function withRss(rss, work) {
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

async function pool(count, clients, work) {
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
async function load(url, init, seconds = 5, pid) {
  const cpu0 = pid ? processCpuMs(pid) : 0;
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
    cpuMs: pid ? (processCpuMs(pid) - cpu0) / latencies.length : 0,
  };
}

// ---------------------------------------------------------------- main

const scratch = mkdtempSync(path.join(os.tmpdir(), "quiver-bench-"));
const azurite = onAzurite ? await startAzurite(10100 + Math.floor(Math.random() * 800)) : null;
// With --latency, everything reaches Azurite through the proxy, whose delay starts once the setup is done.
const proxy = latency === null ? null : await startLatencyProxy(azurite.endpoint, 0);
if (proxy) azurite.storageOptions = { ...azurite.storageOptions, azure_storage_endpoint: proxy.endpoint };
const root = azurite ? "az://bench/quiver" : path.join(scratch, "quiver");
const engineRoot = azurite ? "az://bench/engine" : path.join(scratch, "engine");
if (!azurite) {
  mkdirSync(root);
  mkdirSync(engineRoot);
}
if (!existsSync(".next/BUILD_ID")) spawnSync("node_modules/.bin/next", ["build"], { stdio: "inherit" });
// Quiver makes the container on start; the engine's connection then finds it.
const quiver = await startQuiver(root, 3900 + Math.floor(Math.random() * 90), azurite?.storageOptions);
// A run that fails shows what the server said last.
process.on("exit", (code) => {
  if (code !== 0) console.error(`Quiver's log ends:\n${quiver.log().slice(-4000)}`);
});
const engine = await lancedb.connect(engineRoot, { readConsistencyInterval: 0, ...(azurite ? { storageOptions: azurite.storageOptions } : {}) });
const base = quiver.base;
console.log(`Quiver at ${base}, data in ${scratch}; ${RUNS} runs per case after a warm-up\n`);

try {
  if (want("insert")) {
    console.log("insert 1M rows as one Arrow stream");
    const body = streamOf(0, 1_000_000);
    const engineTable = rowsTable(0, 1_000_000, arrowCjs);
    const lz4 = await remoteClientInsertBody(base, engineTable);
    console.log(
      `  (the LanceDB client's LZ4 body: ${(lz4.body.length / 2 ** 20).toFixed(1)} MiB, against ${(body.length / 2 ** 20).toFixed(1)} MiB uncompressed)`,
    );
    const engineFile = Buffer.from(arrowCjs.tableToIPC(engineTable, "file"));
    const quiverMs = [],
      lz4Ms = [],
      remoteMs = [],
      engineMs = [],
      rss = [],
      engineRss = [],
      bodyMs = [],
      workMs = [];
    for (let run = 0; run <= RUNS; run++) {
      await api(base, `/v1/table/ins${run}/create`, { body: streamOf(0, 1) });
      await api(base, `/v1/table/lzb${run}/create`, { body: streamOf(0, 1) });
      const remote = await lancedb.connect("db://default", { apiKey: KEY, hostOverride: base });
      const remoteTable = await remote.createTable(`lz${run}`, rowsTable(0, 1, arrowCjs));
      const e = await engine.createTable(`ins${run}`, rowsTable(0, 1, arrowCjs));
      settle();
      let phases;
      const q = await withRss(
        () => processTreeRss(quiver.child.pid),
        () =>
          api(base, `/v1/table/ins${run}/insert`, { body, headers: { "content-type": "application/vnd.apache.arrow.stream" }, phases: (p) => (phases = p) }),
      );
      settle();
      const b0 = performance.now();
      await api(base, `/v1/table/lzb${run}/insert`, { body: lz4.body, headers: { "content-type": lz4.type } });
      const lzb = performance.now() - b0;
      settle();
      const l0 = performance.now();
      await remoteTable.add(engineTable);
      const lz = performance.now() - l0;
      settle();
      const e0 = performance.now();
      await e.add(engineTable);
      const em = performance.now() - e0;
      // The engine's own memory for the same write: its native add of the IPC bytes, in this process.
      const native = (await engine.createTable(`rss${run}`, rowsTable(0, 1, arrowCjs))).inner;
      settle();
      const own = await withRss(
        () => process.memoryUsage.rss(),
        () => native.add(engineFile, "append"),
      );
      if (run === 0) continue;
      quiverMs.push(q.ms);
      rss.push(q.growth / body.length);
      engineRss.push(own.growth / engineFile.length);
      bodyMs.push(phases.body);
      workMs.push(phases.work);
      lz4Ms.push(lzb);
      remoteMs.push(lz);
      engineMs.push(em);
    }
    record("insert 1M", "wall time, uncompressed stream", "ms", quiverMs, engineMs, onAzurite ? "≤ 1.25× engine" : "≤ 1.15× engine");
    record("insert 1M", "wall time, LZ4 stream (the LanceDB client's bytes)", "ms", lz4Ms, engineMs, "≤ 1.25× engine");
    record("insert 1M", "wall time, LanceDB remote client end to end (its LZ4 encoding included)", "ms", remoteMs, engineMs);
    record(
      "insert 1M",
      "rows/s, uncompressed",
      "rows/s",
      quiverMs.map((m) => 1e9 / m),
      engineMs.map((m) => 1e9 / m),
    );
    record("insert 1M", "server: reading the body (Server-Timing)", "ms", bodyMs, null);
    record("insert 1M", "server: catalog and engine work (Server-Timing)", "ms", workMs, null);
    record("insert 1M", "server peak RSS growth / body size (baseline: the engine's native add in-process)", "×", rss, engineRss, "≤ 2×");
  }

  if (want("merge")) {
    console.log("merge-insert 100k rows (half match) into 1M rows");
    const big = streamOf(0, 1_000_000);
    const source = streamOf(950_000, 100_000);
    const sourceTable = rowsTable(950_000, 100_000, arrowCjs);
    const quiverMs = [],
      engineMs = [],
      workMs = [];
    let counts;
    for (let run = 0; run <= RUNS; run++) {
      await api(base, `/v1/table/m${run}/create`, { body: big });
      const e = await engine.createTable(`m${run}`, rowsTable(0, 1_000_000, arrowCjs));
      settle();
      let phases;
      const q0 = performance.now();
      counts = await api(base, `/v1/table/m${run}/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true`, {
        body: source,
        phases: (p) => (phases = p),
      });
      const qm = performance.now() - q0;
      settle();
      const e0 = performance.now();
      await e.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(sourceTable);
      const em = performance.now() - e0;
      if (run === 0) continue;
      quiverMs.push(qm);
      engineMs.push(em);
      workMs.push(phases.work);
    }
    console.log(`  counts: ${counts.num_updated_rows} updated, ${counts.num_inserted_rows} inserted`);
    record("merge 100k into 1M", "wall time", "ms", quiverMs, engineMs, "≤ 1.25× engine");
    record("merge 100k into 1M", "server: catalog and engine work (Server-Timing)", "ms", workMs, null);
  }

  if (want("parallel")) {
    console.log("1,000 inserts of 100 rows, 8 clients, one table");
    const bodies = Array.from({ length: 1000 }, (_, i) => streamOf(i * 100, 100));
    const tables = Array.from({ length: 1000 }, (_, i) => rowsTable(i * 100, 100, arrowCjs));
    const quiverRate = [],
      engineRate = [];
    for (let run = 0; run <= Math.min(RUNS, 2); run++) {
      await api(base, `/v1/table/par${run}/create`, { body: streamOf(10_000_000, 1) });
      const q0 = performance.now();
      await pool(1000, 8, (i) => api(base, `/v1/table/par${run}/insert`, { body: bodies[i] }));
      const qs = (performance.now() - q0) / 1000;
      const count = await api(base, `/v1/table/par${run}/count_rows`, { json: {} });
      if (count !== 100_001) throw new Error(`lost rows: ${count - 1} of 100000 acknowledged`);
      const e = await engine.createTable(`par${run}`, rowsTable(0, 1, arrowCjs));
      const e0 = performance.now();
      await pool(1000, 8, (i) => e.add(tables[i]));
      const es = (performance.now() - e0) / 1000;
      if (run === 0) continue;
      quiverRate.push(1000 / qs);
      engineRate.push(1000 / es);
    }
    record("parallel small inserts", "acknowledged inserts/s (0 rows lost)", "inserts/s", quiverRate, engineRate, "≥ 0.8× engine");
  }

  if (want("list")) {
    // An in-memory Azurite is CPU-bound on this machine's two cores: a tenth of the tables keeps the setup in minutes.
    const TABLES = onAzurite ? 1_000 : 10_000;
    const pages = TABLES / 100;
    console.log(`GET /v1/table with ${TABLES.toLocaleString("en")} tables across 100 namespaces; the engine's tableNames over as many tables`);
    await pool(100, 8, (n) => api(base, `/v1/namespace/n${String(n).padStart(3, "0")}/create`, { json: {} }));
    const t0 = performance.now();
    await pool(TABLES, 16, (i) => api(base, `/v1/table/n${String(i % 100).padStart(3, "0")}$t${String(i).padStart(5, "0")}/declare`, { json: {} }));
    console.log(`  (declared ${TABLES} tables in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    const listed = await lancedb.connect(`${engineRoot}-list`, { readConsistencyInterval: 0, ...(azurite ? { storageOptions: azurite.storageOptions } : {}) });
    const schema = rowsTable(0, 1, arrowCjs).schema;
    const e0 = performance.now();
    await pool(TABLES, 16, (i) => listed.createEmptyTable(`t${String(i).padStart(5, "0")}`, schema));
    console.log(`  (the engine created ${TABLES} empty tables in ${((performance.now() - e0) / 1000).toFixed(1)} s)`);
    settle();
    const first = [],
      engineFirst = [];
    for (let i = 0; i < 30; i++) {
      const s = performance.now();
      await api(base, "/v1/table?limit=100");
      first.push(performance.now() - s);
      const s2 = performance.now();
      await listed.tableNames({ limit: 100 });
      engineFirst.push(performance.now() - s2);
    }
    const all = [],
      engineAll = [];
    const firstPages = [],
      lastPages = [];
    for (let run = 0; run < RUNS; run++) {
      const pageTimes = [];
      const s = performance.now();
      let token;
      let n = 0;
      do {
        const p0 = performance.now();
        const page = await api(base, `/v1/table?limit=100${token ? `&page_token=${encodeURIComponent(token)}` : ""}`);
        pageTimes.push(performance.now() - p0);
        n += page.tables.length;
        token = page.page_token;
      } while (token);
      if (n < TABLES) throw new Error(`listed ${n} tables, expected at least ${TABLES}`);
      all.push(performance.now() - s);
      firstPages.push(...pageTimes.slice(0, 10));
      lastPages.push(...pageTimes.slice(-10));
      const s2 = performance.now();
      let names = [];
      let m = 0;
      do {
        names = await listed.tableNames({ limit: 100, ...(names.length ? { startAfter: names[names.length - 1] } : {}) });
        m += names.length;
      } while (names.length === 100);
      if (m !== TABLES) throw new Error(`the engine listed ${m} tables, expected ${TABLES}`);
      engineAll.push(performance.now() - s2);
    }
    const name = `list ${TABLES.toLocaleString("en")} tables`;
    record(name, "first page of 100, p50", "ms", first, engineFirst, onAzurite ? "≤ 1.25× engine" : "≤ 20 ms");
    record(name, "first page of 100, p99", "ms", [pct(first, 0.99)], [pct(engineFirst, 0.99)]);
    record(name, `all ${pages} pages`, "ms", all, engineAll, onAzurite ? "≤ 1.25× engine" : "≤ 2000 ms");
    record(
      name,
      `page time, last ${Math.min(10, pages)} pages / first ${Math.min(10, pages)} pages of each listing`,
      "×",
      [median(lastPages) / median(firstPages)],
      null,
      "independent of position",
    );
  }

  if (want("versions")) {
    const VERSIONS = onAzurite ? 500 : 2_000;
    console.log(`version/list on a table with ${VERSIONS.toLocaleString("en")} versions; the engine's listVersions on as many`);
    await api(base, "/v1/table/hist/create", { body: streamOf(0, 1) });
    // One insert at a time: inserts that wait together are committed as one version.
    await pool(VERSIONS - 1, 1, (i) => api(base, "/v1/table/hist/insert", { body: streamOf(i + 1, 1) }));
    const { version } = await api(base, "/v1/table/hist/describe", { json: {} });
    if (version !== VERSIONS) throw new Error(`the history table has ${version} versions, not ${VERSIONS}`);
    const e = await engine.createTable("hist", rowsTable(0, 1, arrowCjs));
    for (let i = 1; i < VERSIONS; i++) await e.add(rowsTable(i, 1, arrowCjs));
    const first = [],
      engineAll = [];
    for (let i = 0; i < 30; i++) {
      const s = performance.now();
      await api(base, "/v1/table/hist/version/list?descending=true&limit=100", { method: "POST" });
      first.push(performance.now() - s);
    }
    for (let i = 0; i < 5; i++) {
      const s = performance.now();
      await e.listVersions();
      engineAll.push(performance.now() - s);
    }
    const all = [];
    for (let run = 0; run < RUNS; run++) {
      const s = performance.now();
      let token;
      do {
        const page = await api(base, `/v1/table/hist/version/list?limit=100${token ? `&page_token=${token}` : ""}`, { method: "POST" });
        token = page.page_token;
      } while (token);
      all.push(performance.now() - s);
    }
    // The engine has no page of versions: its baseline is always the whole history.
    const name = `${VERSIONS.toLocaleString("en")} versions`;
    record(name, "first page of 100 (baseline: the engine's whole list), p50", "ms", first, engineAll, onAzurite ? "≤ 1.25× engine" : "≤ 50 ms");
    record(name, "first page of 100, p99", "ms", [pct(first, 0.99)]);
    record(name, `all ${VERSIONS / 100} pages`, "ms", all, engineAll, onAzurite ? "≤ 1.25× engine" : undefined);
  }

  if (want("load")) {
    console.log("describe and namespace list under 32 concurrent connections");
    spawnSync(
      "node_modules/.bin/esbuild",
      [
        "bench/bare-server.ts",
        "--bundle",
        "--platform=node",
        "--format=esm",
        "--outfile=bench/.build/bare-server.mjs",
        // Packages stay in node_modules (native modules cannot be bundled); Node loads them as the server does, with
        // React's server condition, under which server-only is empty.
        "--packages=external",
        "--log-level=error",
      ],
      { stdio: "inherit" },
    );
    await api(base, "/v1/table/loadt/create", { body: streamOf(0, 1000) });
    const barePort = 3990 + Math.floor(Math.random() * 9);
    const bare = spawn("node", ["--conditions=react-server", "bench/.build/bare-server.mjs"], {
      env: {
        ...process.env,
        QUIVER_ROOT: root,
        ...(azurite ? { QUIVER_STORAGE_OPTIONS: JSON.stringify(azurite.storageOptions) } : {}),
        PORT: String(barePort),
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise((resolve) => bare.stdout.on("data", (d) => String(d).includes("ready") && resolve()));
    // Three rounds, each measuring every target in turn, so that a busy spell of a shared host weighs on all of them
    // alike; medians over the rounds are reported.
    const targets = {
      describe: [[`${base}/v1/table/loadt/describe`, { method: "POST", headers: { "x-api-key": KEY } }], `http://127.0.0.1:${barePort}/describe/loadt`],
      "namespace list": [[`${base}/v1/namespace/%24/list?limit=100`, { headers: { "x-api-key": KEY } }], `http://127.0.0.1:${barePort}/namespaces`],
    };
    const floorUrl = `${base}/healthz`;
    for (const [quiverReq, bareUrl] of Object.values(targets)) {
      await load(...quiverReq, 3);
      await load(bareUrl, {}, 1);
    }
    await load(floorUrl, {}, 3);
    const measured = { floor: [] };
    for (let round = 0; round < 3; round++) {
      for (const [name, [quiverReq, bareUrl]] of Object.entries(targets)) {
        measured[name] ??= { quiver: [], bare: [] };
        measured[name].quiver.push(await load(...quiverReq, 5, quiver.child.pid));
        measured[name].bare.push(await load(bareUrl, {}, 5, bare.pid));
      }
      measured.floor.push(await load(floorUrl, {}, 5, quiver.child.pid));
    }
    const of = (runs, key) => runs.map((r) => r[key]);
    for (const name of Object.keys(targets)) {
      const { quiver: q, bare: b } = measured[name];
      record(`${name} under load`, "req/s", "req/s", of(q, "rps"), of(b, "rps"), "≥ 0.6× bare http");
      record(`${name} under load`, "p50", "ms", of(q, "p50"), of(b, "p50"));
      record(`${name} under load`, "p99", "ms", of(q, "p99"), of(b, "p99"), "≤ 50 ms");
      record(`${name} under load`, "server CPU per request", "ms", of(q, "cpuMs"), of(b, "cpuMs"));
    }
    // What any Next.js route handler costs: the liveness route does no work at all.
    const floor = measured.floor;
    const bareList = measured["namespace list"].bare;
    record("Next.js floor: GET /healthz (no work) under load", "req/s, against bare http's namespace list", "req/s", of(floor, "rps"), of(bareList, "rps"));
    record("Next.js floor: GET /healthz (no work) under load", "p99", "ms", of(floor, "p99"), of(bareList, "p99"));
    record("Next.js floor: GET /healthz (no work) under load", "server CPU per request", "ms", of(floor, "cpuMs"), of(bareList, "cpuMs"));
    for (const name of Object.keys(targets))
      record(
        `${name} under load (baseline: GET /healthz)`,
        "server CPU per request",
        "ms",
        of(measured[name].quiver, "cpuMs"),
        of(floor, "cpuMs"),
        "≤ 1.3× the do-nothing route",
      );
    bare.kill();
  }

  if (want("workers")) {
    console.log("describe and a 1,000-row query under load, served by npm start with 1 worker and with one per core");
    const cores = os.availableParallelism();
    // The load generator shares the host's cores: a call as cheap as describe leaves the server waiting on it, so
    // the scaling is also shown with a query whose work is the server's.
    const requests = {
      describe: (at) => [`${at}/v1/table/workerst/describe`, { method: "POST", headers: { "x-api-key": KEY } }],
      "query of 1,000 rows": (at) => [
        `${at}/v1/table/workerst/query`,
        { method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" }, body: JSON.stringify({ filter: "id >= 5000", k: 1000 }) },
      ],
    };
    const rates = {};
    for (const workers of [1, cores]) {
      const instance = await startQuiver(root, 3800 + Math.floor(Math.random() * 90), azurite?.storageOptions, workers);
      if (workers === 1) await api(instance.base, "/v1/table/workerst/create", { body: streamOf(0, 100_000) });
      for (const [name, request] of Object.entries(requests)) {
        await load(...request(instance.base), 3);
        (rates[name] ??= {})[workers] = await load(...request(instance.base), 5);
      }
      instance.child.kill("SIGTERM");
      await new Promise((resolve) => instance.child.once("exit", resolve));
    }
    for (const [name, rate] of Object.entries(rates)) {
      record(`${name} under load, QUIVER_WORKERS=${cores} (baseline: 1)`, "req/s", "req/s", [rate[cores].rps], [rate[1].rps], "grows with workers");
      record(`${name} under load, QUIVER_WORKERS=${cores} (baseline: 1)`, "p99", "ms", [rate[cores].p99], [rate[1].p99]);
    }
  }

  if (want("maintenance")) {
    console.log("a table after 1,000 small inserts, before and after the automatic policy compacted it");
    const SMALL = 1000;
    await api(base, "/v1/table/small/create", { body: streamOf(0, 10) });
    for (let i = 1; i <= SMALL; i++) await api(base, "/v1/table/small/insert", { body: streamOf(i * 10, 10) });
    const health = async (at) => api(at, "/v1/table/small/maintenance/health", { method: "POST" });
    const latencies = async (at) => {
      const ms = [];
      for (let i = 0; i <= 30; i++) {
        const from = 10 * ((i * 97) % SMALL);
        const s = performance.now();
        await fetch(`${at}/v1/table/small/query`, {
          method: "POST",
          headers: { "x-api-key": KEY, "content-type": "application/json" },
          body: JSON.stringify({ filter: `id >= ${from} AND id < ${from + 10}`, limit: 100 }),
        }).then((r) => r.arrayBuffer());
        if (i > 0) ms.push(performance.now() - s);
      }
      return ms;
    };
    const before = { health: await health(base), ms: await latencies(base) };
    // The same root served with the policy on, looking every second: it finds the table due and compacts it.
    const policy = await startQuiver(root, 3700 + Math.floor(Math.random() * 90), azurite?.storageOptions, undefined, {
      QUIVER_MAINTENANCE: "on",
      QUIVER_MAINTENANCE_INTERVAL_S: "1",
    });
    const started = performance.now();
    let after;
    for (;;) {
      after = await health(policy.base);
      if (after.last_job?.status === "succeeded" && after.last_job.trigger === "policy") break;
      if (performance.now() - started > 300_000) throw new Error(`the policy did not compact within 5 minutes:\n${policy.log()}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const afterMs = await latencies(policy.base);
    policy.child.kill("SIGTERM");
    await new Promise((resolve) => policy.child.once("exit", resolve));
    const name = `${SMALL.toLocaleString("en")} small inserts, after automatic compaction (baseline: before)`;
    record(name, "query of 10 rows by id range, p50", "ms", afterMs, before.ms, "< before");
    record(name, "fragments", "", [after.fragments], [before.health.fragments], "a few");
    record(name, "compaction job", "ms", [Date.parse(after.last_job.finished_at) - Date.parse(after.last_job.created_at)]);
  }

  if (want("latency")) {
    console.log(`operations on a store that answers each request ${latency ?? 0} ms late, against the engine on the same store`);
    if (!proxy) throw new Error("the latency case needs --latency <ms>");
    const rows = await latencyCase({
      base,
      key: KEY,
      lancedb,
      arrow: arrowCjs,
      engineRoot,
      storageOptions: azurite.storageOptions,
      proxy,
      runs: BENCH_LATENCY_RUNS,
      latency,
      record,
    });
    extraTables.push(latencyTable(rows, latency));
  }

  if (want("catalog")) {
    console.log("catalog writes: the REST namespace client's createEmptyTable against the dir namespace in-process");
    await catalogCase({
      lancedb,
      arrow: arrowCjs,
      key: KEY,
      record,
      scratch,
      startQuiver,
      settle,
      azurite,
      proxy,
      latency,
      extraTables,
      tables: Number(process.env.BENCH_CATALOG_TABLES || (onAzurite ? 400 : 10_000)),
      dirTables: Number(process.env.BENCH_CATALOG_DIR_TABLES || Infinity),
    });
  }

  if (selected.includes("idle")) {
    console.log("at rest: store requests of Quiver's instances while nobody calls, over tables that hold data");
    await idleCase({
      lancedb,
      arrow: arrowCjs,
      record,
      startQuiver,
      azurite,
      proxy,
      extraTables,
      tableCounts: (process.env.BENCH_IDLE_TABLES || "300,3000").split(",").map(Number),
      instanceCounts: [1, 2, 4],
    });
  }

  if (want("managed")) {
    console.log("managed versioning: the REST namespace client's adds to a managed table against an unmanaged one");
    await managedCase({ lancedb, arrow: arrowCjs, key: KEY, record, scratch, startQuiver, azurite, proxy, latency });
  }

  if (want("query")) {
    console.log("query 1,000 rows with a filter from 1M rows");
    await api(base, "/v1/table/q/create", { body: streamOf(0, 1_000_000) });
    const e = await engine.createTable("q", rowsTable(0, 1_000_000, arrowCjs));
    const quiverMs = [],
      engineMs = [];
    for (let i = 0; i <= 20; i++) {
      const from = 1000 * i * 37;
      const s = performance.now();
      await fetch(`${base}/v1/table/q/query`, {
        method: "POST",
        headers: { "x-api-key": KEY, "content-type": "application/json" },
        body: JSON.stringify({ filter: `id >= ${from} AND id < ${from + 1000}`, limit: 1000 }),
      }).then((r) => r.arrayBuffer());
      const qm = performance.now() - s;
      const s2 = performance.now();
      await e
        .query()
        .where(`id >= ${from} AND id < ${from + 1000}`)
        .limit(1000)
        .toArrow();
      const em = performance.now() - s2;
      if (i === 0) continue;
      quiverMs.push(qm);
      engineMs.push(em);
    }
    record("query 1,000 of 1M", "p50", "ms", quiverMs, engineMs);
  }
} finally {
  quiver.child.kill("SIGTERM");
  await proxy?.stop();
  azurite?.child.kill("SIGTERM");
  rmSync(scratch, { recursive: true, force: true });
}

const stamp = new Date().toISOString();
mkdirSync("bench/results", { recursive: true });
const named = process.env.BENCH_RESULTS;
if (named !== undefined && !/^[\w.-]+$/.test(named)) throw new Error("BENCH_RESULTS names a file in bench/results: letters, digits, '.', '-' and '_'");
const resultFile = `bench/results/${named ?? `latest${latency !== null ? "-latency" : azurite ? "-azurite" : ""}`}`;
const store =
  latency !== null
    ? `both roots on one in-memory Azurite, each request held back ${latency} ms`
    : azurite
      ? "both roots on one in-memory Azurite"
      : "local roots";
writeFileSync(
  `${resultFile}.json`,
  JSON.stringify({ date: stamp, runs: RUNS, store, machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB`, results }, null, 2),
);
const md = [
  `Benchmarks of ${stamp.slice(0, 10)} (${os.cpus().length} cores, ${store}, ${RUNS} runs after a warm-up; medians, min-max):`,
  "",
  "| case | metric | Quiver | baseline | ratio | target |",
  "|---|---|---|---|---|---|",
  ...results.map(
    (r) =>
      `| ${r.case} | ${r.metric} | ${fmt(r.quiver.median)} ${r.unit} (${fmt(r.quiver.min)}-${fmt(r.quiver.max)}) | ${r.baseline ? `${fmt(r.baseline.median)} ${r.unit}` : "—"} | ${r.ratio ? r.ratio.toFixed(2) : "—"} | ${r.target ?? ""}${verdict(r)} |`,
  ),
].join("\n");
writeFileSync(`${resultFile}.md`, [md, ...extraTables].join("\n\n") + "\n");
console.log(`\n${md}`);
