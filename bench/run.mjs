#!/usr/bin/env node
/**
 * Quiver benchmarks: each case measured through the real server (auth on, an API key) and, in the same run,
 * against its baseline (the engine called in-process, or a bare http server for metadata under load).
 * Usage: npm run bench [-- [--azurite | --latency <ms>] case ...]   Cases: insert, merge, parallel, list, versions,
 * load, workers, maintenance, query, sql (POST /v1/sql: a group-by over 1M and 10M rows, a point query by an indexed id,
 * a join; with --latency smaller tables and the point query's store requests), operations (the operations page on 10,000 tables: a look, its store requests, the
 * page in Chromium), map (a 100,000 × 768 table's Map tab in Chromium: first and refined layout, a second open, hover,
 * lasso, bytes received; MNIST's digits kept apart, BENCH_MAP_ROWS; with --latency, a map over the slow store beside the
 * engine reading its vectors, BENCH_MAP_STORE_ROWS), catalog (BENCH_CATALOG_TABLES tables, 10,000 by default, 400 on Azurite), managed
 * (the REST namespace client's adds to a managed table against an unmanaged one), idle (store requests at rest, with
 * --latency 0: 1, 2 and 4 instances over BENCH_IDLE_TABLES tables, 300 and 3,000 by default);
 * latency (the operations table) and reads (warm and cold reads of a 50,000 × 128 indexed table, BENCH_READS_ROWS) are the
 * cases run with --latency alone; large-reads (a 100,000 × 768 table of 500 MiB, BENCH_LARGE_ROWS: warm IVF-PQ p50 and
 * p99, and a 64 MiB read cache reading it whole) runs with --latency when named, and takes about ten minutes.
 * With --azurite, Quiver's root and the engine's both live on one Azurite (a real Azure Blob server, in memory); with
 * --latency, also behind a proxy that answers each store request that many milliseconds late and counts them.
 * Prints a table of medians (min-max) and ratios, and writes bench/results/latest[-azurite|-latency].{json,md}, or
 * bench/results/$BENCH_RESULTS.{json,md}. BENCH_TRACE prints the store requests of one add on each side of the managed case.
 * BENCH_CATALOG_DIR_TABLES caps the dir namespace's run of the catalog case
 * (its rate falls as its catalog grows: a 50,000-table run of it alone takes most of an hour).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { startLatencyProxy } from "../test/latency-proxy.ts";
import { arrowCjs, fmt, KEY, lancedb, median, NPM_START, RUNS, settle, startAzurite, startQuiver } from "./harness.mjs";
import { catalogCase } from "./catalog.mjs";
import { idleCase } from "./idle.mjs";
import { insertCase } from "./insert.mjs";
import { latencyCase, latencyTable } from "./latency.mjs";
import { largeReadsCase, largeReadsTable } from "./large-reads.mjs";
import { readsCase, readsTable } from "./reads.mjs";
import { listCase } from "./list.mjs";
import { loadCase } from "./load.mjs";
import { maintenanceCase } from "./maintenance.mjs";
import { managedCase } from "./managed.mjs";
import { mapCase } from "./map.mjs";
import { mergeCase } from "./merge.mjs";
import { operationsCase } from "./operations.mjs";
import { parallelCase } from "./parallel.mjs";
import { queryCase } from "./query.mjs";
import { sqlCase } from "./sql.mjs";
import { versionsCase } from "./versions.mjs";
import { workersCase } from "./workers.mjs";

const args = process.argv.slice(2);
const latencyAt = args.indexOf("--latency");
/** With `--latency <ms>`, both roots are on Azurite behind a proxy that answers each store request that late. */
const latency = latencyAt < 0 ? null : Number(args[latencyAt + 1]);
if (latency !== null && !(latency >= 0)) throw new Error("--latency takes the milliseconds each store request is held back, e.g. --latency 15");
const onAzurite = args.includes("--azurite") || latency !== null;
const selected = args.filter((a, i) => a !== "--azurite" && a !== "--latency" && (latencyAt < 0 || i !== latencyAt + 1));
// With --latency alone, the operations table and the reads; the other cases run where asked for by name.
const LATENCY_CASES = ["latency", "reads"];
const want = (name) => (selected.length === 0 ? (latency === null ? !LATENCY_CASES.includes(name) : LATENCY_CASES.includes(name)) : selected.includes(name));
const results = [];
/** Tables of their own that a case adds to the results' Markdown. */
const extraTables = [];
const BENCH_LATENCY_RUNS = Number(process.env.BENCH_RUNS || 15);

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

/** The cases in the order they run, each in a file of its own. */
const CASES = [
  ["insert", insertCase],
  ["merge", mergeCase],
  ["parallel", parallelCase],
  ["list", listCase],
  ["versions", versionsCase],
  ["load", loadCase],
  ["workers", workersCase],
  ["maintenance", maintenanceCase],
  [
    "latency",
    async (ctx) => {
      console.log(`operations on a store that answers each request ${latency ?? 0} ms late, against the engine on the same store`);
      if (!ctx.proxy) throw new Error("the latency case needs --latency <ms>");
      const rows = await latencyCase({ ...ctx, key: KEY, lancedb, arrow: arrowCjs, storageOptions: ctx.azurite.storageOptions, runs: BENCH_LATENCY_RUNS });
      extraTables.push(latencyTable(rows, latency));
    },
  ],
  [
    "reads",
    async (ctx) => {
      console.log(`reads, warm and cold, on a store that answers each request ${latency ?? 0} ms late, against the engine on the same store`);
      if (!ctx.proxy) throw new Error("the reads case needs --latency <ms>");
      const rows = await readsCase({ ...ctx, key: KEY, lancedb, arrow: arrowCjs, storageOptions: ctx.azurite.storageOptions, runs: BENCH_LATENCY_RUNS });
      extraTables.push(readsTable(rows, latency));
    },
  ],
  [
    "large-reads",
    async (ctx) => {
      console.log(`reads of a large table on a store that answers each request ${latency ?? 0} ms late, against the engine reading the same table`);
      if (!ctx.proxy) throw new Error("the large-reads case needs --latency <ms>");
      const rows = await largeReadsCase({ ...ctx, key: KEY, lancedb, arrow: arrowCjs, storageOptions: ctx.azurite.storageOptions });
      extraTables.push(largeReadsTable(rows, latency));
    },
  ],
  [
    "catalog",
    (ctx) => {
      console.log("catalog writes: the REST namespace client's createEmptyTable against the dir namespace in-process");
      return catalogCase({
        ...ctx,
        lancedb,
        arrow: arrowCjs,
        key: KEY,
        startQuiver,
        settle,
        tables: Number(process.env.BENCH_CATALOG_TABLES || (onAzurite ? 400 : 10_000)),
        dirTables: Number(process.env.BENCH_CATALOG_DIR_TABLES || Infinity),
      });
    },
  ],
  [
    "idle",
    (ctx) => {
      console.log("at rest: store requests of Quiver's instances while nobody calls, over tables that hold data");
      return idleCase({
        ...ctx,
        lancedb,
        arrow: arrowCjs,
        startQuiver,
        tableCounts: (process.env.BENCH_IDLE_TABLES || "300,3000").split(",").map(Number),
        instanceCounts: [1, 2, 4],
      });
    },
  ],
  [
    "managed",
    (ctx) => {
      console.log("managed versioning: the REST namespace client's adds to a managed table against an unmanaged one");
      return managedCase({ ...ctx, lancedb, arrow: arrowCjs, key: KEY, startQuiver });
    },
  ],
  ["query", queryCase],
  ["sql", sqlCase],
  ["operations", operationsCase],
  ["map", mapCase],
];
for (const name of selected) if (!CASES.some(([known]) => known === name)) throw new Error(`no case '${name}': ${CASES.map(([known]) => known).join(", ")}`);

// ---------------------------------------------------------------- main

const scratch = mkdtempSync(path.join(os.tmpdir(), "quiver-bench-"));
const azurite = onAzurite ? await startAzurite(10100 + Math.floor(Math.random() * 800)) : null;
// With --latency, everything reaches Azurite through the proxy, whose delay starts once the setup is done.
const proxy = latency === null ? null : await startLatencyProxy({ kind: "azurite", endpoint: azurite.endpoint }, 0);
if (proxy) azurite.storageOptions = { ...azurite.storageOptions, azure_storage_endpoint: proxy.endpoint };
const root = azurite ? "az://bench/quiver" : path.join(scratch, "quiver");
const engineRoot = azurite ? "az://bench/engine" : path.join(scratch, "engine");
if (!azurite) {
  mkdirSync(root);
  mkdirSync(engineRoot);
}
if (!existsSync(".next/BUILD_ID")) spawnSync("node_modules/.bin/next", ["build"], { stdio: "inherit" });
// Quiver as `npm start` runs it; it makes the container on start, and the engine's connection then finds it.
// Its read cache in the run's scratch directory: each run starts cold and leaves nothing behind.
const quiver = await startQuiver(root, 3900 + Math.floor(Math.random() * 90), azurite?.storageOptions, NPM_START.workers, {
  ...NPM_START.env,
  QUIVER_READ_CACHE_DIR: path.join(scratch, "read-cache"),
});
// A run that fails shows what the server said last.
process.on("exit", (code) => {
  if (code !== 0) console.error(`Quiver's log ends:\n${quiver.log().slice(-4000)}`);
});
const engine = await lancedb.connect(engineRoot, { readConsistencyInterval: 0, ...(azurite ? { storageOptions: azurite.storageOptions } : {}) });
const base = quiver.base;
console.log(`Quiver (${NPM_START.name}: ${NPM_START.workers} workers) at ${base}, data in ${scratch}; ${RUNS} runs per case after a warm-up\n`);

const ctx = { base, quiver, engine, engineRoot, root, azurite, onAzurite, proxy, latency, scratch, record, extraTables };
try {
  // idle runs only when named: it takes many minutes and its own instances.
  for (const [name, run] of CASES) if (name === "idle" ? selected.includes(name) : want(name)) await run(ctx);
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
