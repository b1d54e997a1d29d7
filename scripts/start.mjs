// Starts the production server on PORT (default 3000), building first when there is no build yet. With
// QUIVER_WORKERS above 1 (default: one per core) it runs that many server processes that share the port; they may,
// because instances keep no state of their own: everything lives in the data root.
import "./check-node.mjs";
import cluster from "node:cluster";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import os from "node:os";
import { spawnSync } from "node:child_process";
import promClient from "prom-client";
import { readyLines, relayWorkerOutput, settleLogFormat } from "./worker-output.mjs";

const { AggregatorRegistry } = promClient;

const next = "node_modules/next/dist/bin/next";
const port = process.env.PORT || "3000";

const workers = workerCount(process.env.QUIVER_WORKERS);
if (!existsSync(".next/BUILD_ID")) {
  // The build's own report (its routes, its banner) means nothing to someone starting the server: it is shown only
  // when the build failed or warned.
  console.log("quiver: building the server and console (once, on the first start) …");
  const began = Date.now();
  const build = spawnSync(process.execPath, [next, "build"], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
  // Next's note that it found no build cache (on a CI machine) says nothing about this build.
  const warned = `${build.stdout}${build.stderr}`.split("\n").some((line) => /⚠|warn|error/i.test(line) && !line.includes("No build cache found"));
  if (build.status !== 0 || warned) {
    process.stdout.write(build.stdout ?? "");
    process.stderr.write(build.stderr ?? "");
  }
  if (build.status !== 0) process.exit(build.status ?? 1);
  console.log(`quiver: built in ${Math.round((Date.now() - began) / 1000)} s`);
}

function workerCount(value) {
  if (value === undefined || value === "") return os.availableParallelism();
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 256) {
    console.error(`quiver: QUIVER_WORKERS must be a whole number from 1 to 256, not '${value}'`);
    process.exit(1);
  }
  return n;
}

// The machine's read cache (server/storage/read-cache/): one for all the workers, which reach the store through it.
// Imported once the Node version is checked: Node loads its TypeScript as it is from 22.18 on.
const { registerReadCacheMetrics, startReadCache } = await import("../server/storage/read-cache/read-cache.ts");
const { MetricHistory, quiverMetric } = await import("../server/operations/history.ts");
const primaryMetrics = new promClient.Registry();
const readCache = await startReadCache(
  process.env,
  (line) => console.log(`quiver: ${line}`),
  (what, err) => console.error(`quiver: read cache: ${what}: ${err?.message ?? err}`),
).catch((err) => {
  console.error(`quiver: ${err.message}`);
  process.exit(1);
});
// "none": the workers go to the store, and need not say why again.
process.env.QUIVER_READ_CACHE_ENDPOINT = readCache?.endpoint ?? "none";
if (readCache) registerReadCacheMetrics(primaryMetrics, readCache.cache);

// A worker answering for the whole machine asks here: for /metrics, the sum over all workers and this process's own;
// for the operations page, the recent past of the read cache this process runs (server/operations/history.ts).
const aggregator = new AggregatorRegistry();
const readCacheHistory = new MetricHistory(primaryMetrics, quiverMetric).start();
const questions = {
  "quiver:metrics": () => Promise.all([aggregator.clusterMetrics(), primaryMetrics.metrics()]).then(([workers, primary]) => `${workers}\n${primary}`),
  "quiver:history": (message) => readCacheHistory.since(Number(message.since) || 0),
  // A manifest a worker's engine staged through the cache, for the worker's commit that publishes it.
  "quiver:staged-manifest": async (message) => readCache?.takeStaged(String(message.name))?.toString("base64") ?? null,
};
cluster.on("message", (worker, message) => {
  const question = questions[message?.type];
  if (!question) return;
  question(message).then(
    (answer) => worker.send({ type: `${message.type}-answer`, id: message.id, answer }),
    (err) => worker.send({ type: `${message.type}-answer`, id: message.id, error: String(err?.message ?? err) }),
  );
});
// What names this start to the operations page: its workers are one instance of the root.
process.env.QUIVER_START_ID = randomUUID();
process.env.QUIVER_START_TIME = new Date().toISOString();

// A table's write turn across the workers (server/peers/machine-turns.ts): per table, the workers that asked, in order;
// the first holds the turn. A worker that exits gives up its place, and its turn passes on. The grant says whether
// another worker held the table's turn last (its commits then moved the table on under this worker's handle).
const turns = new Map();
const lastHolders = new Map();
const LAST_HOLDERS_KEPT = 10_000;
const grant = (key) => {
  const head = turns.get(key)?.[0];
  if (!head || head.worker.isDead()) return;
  const last = lastHolders.get(key);
  lastHolders.delete(key);
  lastHolders.set(key, head.worker.id);
  if (lastHolders.size > LAST_HOLDERS_KEPT) lastHolders.delete(lastHolders.keys().next().value);
  head.worker.send({ type: "quiver:turn-granted", id: head.id, afterAnother: last !== undefined && last !== head.worker.id });
};
cluster.on("message", (worker, message) => {
  if (message?.type === "quiver:turn-ask") {
    const queue = turns.get(message.key) ?? [];
    turns.set(message.key, queue);
    queue.push({ worker, id: message.id });
    if (queue.length === 1) grant(message.key);
  } else if (message?.type === "quiver:turn-done") {
    const queue = turns.get(message.key);
    if (!queue || queue[0]?.worker !== worker || queue[0].id !== message.id) return;
    queue.shift();
    if (queue.length === 0) turns.delete(message.key);
    else grant(message.key);
  }
});
const leaveTurns = (worker) => {
  for (const [key, queue] of turns) {
    const held = queue[0]?.worker === worker;
    const left = queue.filter((place) => place.worker !== worker);
    if (left.length === 0) turns.delete(key);
    else {
      turns.set(key, left);
      if (held) grant(key);
    }
  }
};

// Each worker is Next's own `next start`; as a cluster worker its listen() shares the primary's socket. Its output
// comes through here (worker-output.mjs).
settleLogFormat();
cluster.setupPrimary({ exec: next, args: ["start", "-p", port, ...process.argv.slice(2)], silent: true });
let forked = 0;
/** Per worker, what makes its output go as it comes, once it has started. */
const startedOutput = new Map();
cluster.on("fork", (worker) => startedOutput.set(worker.id, relayWorkerOutput(worker, ++forked === 1)));

// The start ends once every worker has started and listens, with where to sign in and the first admin key if a
// worker made it (server/startup.ts tells its start is done, with the key if it made one).
const host = hostArgument();
const url = process.env.NEXTAUTH_URL ?? `http://${!host || host === "0.0.0.0" || host === "::" ? "localhost" : host}:${port}`;
let listening = 0;
let started = 0;
let firstKey;
let announced = false;
const announce = () => {
  if (announced || listening < workers || started < workers) return;
  announced = true;
  process.stdout.write(readyLines(url, workers, firstKey));
};
cluster.on("listening", () => {
  listening++;
  announce();
});
cluster.on("message", (worker, message) => {
  if (message?.type !== "quiver:started") return;
  startedOutput.get(worker.id)?.();
  startedOutput.delete(worker.id);
  started++;
  if (message.key) firstKey = message.key;
  // A key made by a worker that started after the announcement (one that replaced another) is shown on its own.
  if (announced && message.key) process.stdout.write(readyLines(url, workers, message.key));
  announce();
});

function hostArgument() {
  const args = process.argv.slice(2);
  const at = args.findIndex((a) => a === "-H" || a === "--hostname");
  return at >= 0 ? args[at + 1] : process.env.HOSTNAME;
}

let stopping = false;
/** Start times of recent worker exits: a worker that keeps dying right after it starts stops the server. */
const recentDeaths = [];
cluster.on("exit", (worker, code, signal) => {
  leaveTurns(worker);
  startedOutput.delete(worker.id);
  if (stopping) {
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(process.exitCode ?? 0);
    return;
  }
  const now = Date.now();
  recentDeaths.push(now);
  while (recentDeaths.length && recentDeaths[0] < now - 30_000) recentDeaths.shift();
  console.error(`quiver: worker ${worker.process.pid} exited (${signal ?? `code ${code}`})`);
  if (recentDeaths.length > 3 * workers) {
    console.error("quiver: workers keep exiting; stopping");
    stop("SIGTERM", 1);
    return;
  }
  cluster.fork();
});

function stop(signal, exitCode = 0) {
  stopping = true;
  const running = Object.values(cluster.workers ?? {});
  if (running.length === 0) process.exit(exitCode);
  for (const worker of running) worker?.process.kill(signal);
  process.exitCode = exitCode;
}
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => stop(signal));

for (let i = 0; i < workers; i++) cluster.fork();
