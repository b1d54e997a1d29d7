/**
 * Operations where users run them: Quiver's root and the engine's on one Azurite behind a proxy that answers every
 * store request `latency` ms late (S3, GCS and Azure take 10-50 ms), the engine in-process with strong consistency
 * (`readConsistencyInterval: 0`, the promise Quiver makes across instances), Quiver through LanceDB's remote client or
 * its REST API. Each operation is timed (median of `runs`, after a warm-up) and its store requests are counted.
 * Targets: at most 1.25x the engine's time and one store request more than it, records of Quiver's (the write ledger,
 * the audit, who made a version) included (issue 64); a write also at most one round trip in a row more than it.
 * With BENCH_TRACE set, the store requests of one insert on each side are printed.
 */
import { performance } from "node:perf_hooks";
import { median, traceStoreRequests } from "./harness.mjs";

const DIM = 32;
const ROWS = 10_000;
const WORDS = ["amber", "basil", "cedar", "delta", "ember", "fjord", "gale", "harbor", "iris", "jade", "kelp", "lumen"];

function tableOf(arrow, from, count) {
  const ids = Array.from({ length: count }, (_, i) => from + i);
  return new arrow.Table({
    id: arrow.vectorFromArray(
      ids.map((i) => BigInt(i)),
      new arrow.Int64(),
    ),
    x: arrow.vectorFromArray(
      ids.map((i) => i * 0.5),
      new arrow.Float64(),
    ),
    s: arrow.vectorFromArray(
      ids.map((i) => `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} note ${i}`),
      new arrow.Utf8(),
    ),
    v: arrow.vectorFromArray(
      ids.map((i) => Array.from({ length: DIM }, (_, d) => Math.sin(i * 0.01 + d))),
      new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)),
    ),
  });
}

/**
 * The round trips in a row among an operation's store requests: each held `latency` ms, a request that arrives a
 * latency after the first of the last wave could have waited for an answer from it, and starts the next.
 */
export function roundTripsInARow(requests, latency) {
  let waves = 0;
  let waveStart = -Infinity;
  for (const { at } of [...requests].sort((a, b) => a.at - b.at)) {
    if (at < waveStart + latency * 0.8) continue;
    waves++;
    waveStart = at;
  }
  return waves;
}

/** The keys' prefix of an object-store root (`az://bench/quiver` → `quiver/`). */
const keyPrefix = (uri) => `${uri.replace(/^[a-z0-9]+:\/\/[^/]+\/?/, "")}/`;

/** Waits until the store has been asked nothing for a few latencies: what an operation set going has reached it. */
async function quiet(proxy, latency) {
  for (let seen = -1; seen !== proxy.requests().length;) {
    seen = proxy.requests().length;
    await new Promise((resolve) => setTimeout(resolve, latency * 4 + 50));
  }
}

/**
 * Runs the operations table. `ctx`: { base, key, lancedb, arrow, root, engineRoot, storageOptions, proxy, runs, latency, record }.
 */
export async function latencyCase(ctx) {
  const { base, key, lancedb, arrow, proxy, runs, latency, record } = ctx;
  // Both roots are in one container (a path is `/<account>/<container>/<key>`): each side's requests are told apart
  // by their root's prefix.
  const ownPrefix = { quiver: keyPrefix(ctx.root), engine: keyPrefix(ctx.engineRoot) };
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const rest = (path, body) =>
    fetch(base + path, { method: body === undefined ? "GET" : "POST", headers, body: body === undefined ? undefined : JSON.stringify(body) }).then(
      async (r) => {
        const text = await r.text();
        if (!r.ok) throw new Error(`${path}: ${r.status} ${text}`);
        return text ? JSON.parse(text) : undefined;
      },
    );
  const remote = await lancedb.connect("db://default", { apiKey: key, hostOverride: base });
  const engine = await lancedb.connect(ctx.engineRoot, { readConsistencyInterval: 0, storageOptions: ctx.storageOptions });
  const namespace = await lancedb.connectNamespace("dir", {
    root: ctx.engineRoot,
    extraProperties: Object.fromEntries(Object.entries(ctx.storageOptions).map(([k, v]) => [`storage.${k}`, v])),
  });
  console.log(`  setting up: two tables of ${ROWS.toLocaleString("en")} rows each side, one with a vector and a full-text index`);
  proxy.setLatency(0);
  for (const db of [remote, engine]) {
    await db.createTable("lat", tableOf(arrow, 0, ROWS));
    const indexed = await db.createTable("lati", tableOf(arrow, 0, ROWS));
    await indexed.createIndex("v", { config: lancedb.Index.ivfPq({ numPartitions: 16, numSubVectors: 4 }) });
    await indexed.createIndex("s", { config: lancedb.Index.fts() });
  }
  for (const ns of ["lat_a", "lat_b"]) {
    await rest(`/v1/namespace/${ns}/create`, {});
    await namespace.createNamespace([ns]).catch(() => undefined);
  }
  proxy.setLatency(latency);
  const q = { plain: await remote.openTable("lat"), indexed: await remote.openTable("lati") };
  const e = { plain: await engine.openTable("lat"), indexed: await engine.openTable("lati") };
  const probe = Array.from({ length: DIM }, (_, d) => Math.sin(42 + d));
  let next = 1_000_000;
  const fresh = () => tableOf(arrow, (next += 100), 100);
  const upsert = () => tableOf(arrow, 9_950, 100);
  const merge = (t) => t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(upsert());

  const operations = [
    ["list tables", () => remote.tableNames(), () => engine.tableNames()],
    [
      "describe (engine: version and schema of an open table)",
      () => rest("/v1/table/lat/describe", {}),
      () => Promise.all([e.plain.version(), e.plain.schema()]),
    ],
    [
      "open and read schema",
      async () => (await (await lancedb.connect("db://default", { apiKey: key, hostOverride: base })).openTable("lat")).schema(),
      async () => (await engine.openTable("lat")).schema(),
    ],
    ["count rows", () => q.plain.countRows(), () => e.plain.countRows()],
    ["filter query, 10 rows", () => q.plain.query().where("id > 5000").limit(10).toArray(), () => e.plain.query().where("id > 5000").limit(10).toArray()],
    ["vector search k=10, no index", () => q.plain.search(probe).limit(10).toArray(), () => e.plain.search(probe).limit(10).toArray()],
    ["vector search k=10, IVF_PQ index", () => q.indexed.search(probe).limit(10).toArray(), () => e.indexed.search(probe).limit(10).toArray()],
    [
      "full-text search, 10 rows",
      () => q.indexed.query().fullTextSearch("cedar").limit(10).toArray(),
      () => e.indexed.query().fullTextSearch("cedar").limit(10).toArray(),
    ],
    ["version list", () => q.plain.listVersions(), () => e.plain.listVersions()],
    ["namespace list", () => rest("/v1/namespace/%24/list"), () => namespace.listNamespaces([])],
    [
      "the console's table page (describe and health, then 100 versions with their operations)",
      async () => {
        await Promise.all([rest("/v1/table/lat/describe", {}), rest("/v1/table/lat/maintenance/health", {})]);
        await rest("/v1/table/lat/version/list?descending=true&limit=100&include_operations=true", {});
      },
      async () => {
        await Promise.all([e.plain.version(), e.plain.schema(), e.plain.stats()]);
        await e.plain.listVersions();
      },
    ],
    ["insert 100 rows", () => q.plain.add(fresh()), () => e.plain.add(fresh())],
    ["merge-insert 100 rows (50 updated, 50 inserted)", () => merge(q.plain), () => merge(e.plain)],
  ];
  const writes = new Set(["insert 100 rows", "merge-insert 100 rows (50 updated, 50 inserted)"]);

  const rows = [];
  for (const [name, viaQuiver, viaEngine] of operations) {
    const times = { quiver: [], engine: [] };
    const requests = { quiver: [], engine: [] };
    const inARow = { quiver: [], engine: [] };
    const last = {};
    const measure = async (side, work) => {
      proxy.reset();
      const t0 = performance.now();
      await work();
      times[side].push(performance.now() - t0);
      // What a side does after its answer (Quiver removes an insert's marker then) is its own, not the next operation's.
      await quiet(proxy, latency);
      const made = proxy.requests().filter((r) => (r.prefix ?? r.path.replace(/^\/[^/]+\/[^/]+\//, "")).startsWith(ownPrefix[side]));
      requests[side].push(made.length);
      // The round trips the caller waits for: those before its answer.
      inARow[side].push(
        roundTripsInARow(
          made.filter((r) => r.at <= times[side].at(-1)),
          latency,
        ),
      );
      last[side] = { ms: times[side].at(-1), made };
    };
    for (let i = 0; i < 2; i++) {
      await viaQuiver();
      await viaEngine();
    }
    for (let run = 0; run < runs; run++) {
      await measure("quiver", viaQuiver);
      await measure("engine", viaEngine);
    }
    const quiverRequests = median(requests.quiver);
    const engineRequests = median(requests.engine);
    const ratio = median(times.quiver) / median(times.engine);
    const requestsMet = quiverRequests <= engineRequests + 1;
    const write = writes.has(name);
    const inARowMet = !write || median(inARow.quiver) <= median(inARow.engine) + 1;
    const met = ratio <= 1.25 && requestsMet && inARowMet;
    record(`${latency} ms store: ${name}`, "p50", "ms", times.quiver, times.engine, "≤ 1.25× engine", ratio <= 1.25);
    record(`${latency} ms store: ${name}`, "store requests", "", requests.quiver, requests.engine, "≤ engine + 1", requestsMet);
    if (write) {
      record(`${latency} ms store: ${name}`, "round trips in a row", "", inARow.quiver, inARow.engine, "≤ engine + 1", inARowMet);
      if (process.env.BENCH_TRACE) for (const side of ["quiver", "engine"]) traceStoreRequests(`${name} (${side})`, last[side].ms, last[side].made);
    }
    rows.push({ name, quiver: median(times.quiver), engine: median(times.engine), ratio, quiverRequests, engineRequests, met });
  }
  return rows;
}

/** The operations table as Markdown. */
export function latencyTable(rows, latency) {
  return [
    `Every store request answered ${latency} ms late (Azurite behind a proxy); medians; the engine in-process with \`readConsistencyInterval: 0\`:`,
    "",
    "| operation | engine | Quiver | ratio | targets (≤ 1.25×, ≤ engine + 1 request, records included; a write ≤ engine + 1 round trip in a row) |",
    "|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.engine.toFixed(1)} ms, ${r.engineRequests} | ${r.quiver.toFixed(1)} ms, ${r.quiverRequests} | ${r.ratio.toFixed(2)}× | ${r.met ? "✓" : "✗"} |`,
    ),
  ].join("\n");
}
