/**
 * Reads where users run them, warm and cold: a 50,000 × 128 table with an IVF-PQ and a full-text index, Quiver
 * through LanceDB's remote client against the engine in-process with strong consistency on the same store, both
 * behind the latency proxy (`--latency`). Warm: the same call again, nothing changed; Quiver's read cache
 * (server/storage/read-cache/) holds the table's write-once files, the engine caches what it caches itself.
 * Cold: the first read of a table none of whose bytes are cached (a table just made), against the engine's first read
 * of its own copy through a new connection.
 * Targets: warm ≤ 0.5× the engine, or one store round trip + 5 ms where the engine itself needs one round trip; at
 * most 2 store requests; cold ≤ 1.1× the engine.
 */
import { performance } from "node:perf_hooks";
import { median, pct, vectorColumn } from "./harness.mjs";

const DIM = 128;
const ROWS = Number(process.env.BENCH_READS_ROWS || 50_000);
const COLD_ROWS = 10_000;
const WORDS = ["amber", "basil", "cedar", "delta", "ember", "fjord", "gale", "harbor", "iris", "jade", "kelp", "lumen"];

function tableOf(arrow, from, count) {
  const ids = Array.from({ length: count }, (_, i) => from + i);
  const vectors = new Float32Array(count * DIM);
  for (let i = 0; i < count; i++) for (let d = 0; d < DIM; d++) vectors[i * DIM + d] = Math.sin((from + i) * 0.013 + d * 0.7);
  return new arrow.Table({
    id: arrow.vectorFromArray(
      ids.map((i) => BigInt(i)),
      new arrow.Int64(),
    ),
    s: arrow.vectorFromArray(
      ids.map((i) => `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} note ${i}`),
      new arrow.Utf8(),
    ),
    v: vectorColumn(arrow, DIM, vectors),
  });
}

/** `ctx`: { base, key, lancedb, arrow, engineRoot, storageOptions, proxy, runs, latency, record } */
export async function readsCase(ctx) {
  const { base, key, lancedb, arrow, proxy, runs, latency, record } = ctx;
  const remote = await lancedb.connect("db://default", { apiKey: key, hostOverride: base });
  const engineOf = () => lancedb.connect(ctx.engineRoot, { readConsistencyInterval: 0, storageOptions: ctx.storageOptions });
  const engine = await engineOf();
  console.log(`  setting up: ${ROWS.toLocaleString("en")} × ${DIM} on each side, with an IVF-PQ and a full-text index`);
  proxy.setLatency(0);
  const made = { quiver: await remote.createTable("reads", tableOf(arrow, 0, 0)), engine: await engine.createTable("reads", tableOf(arrow, 0, 0)) };
  for (let from = 0; from < ROWS; from += 10_000) {
    const batch = tableOf(arrow, from, Math.min(10_000, ROWS - from));
    await made.quiver.add(batch);
    await made.engine.add(batch);
  }
  for (const table of Object.values(made)) {
    await table.createIndex("v", { config: lancedb.Index.ivfPq({ numPartitions: 64, numSubVectors: 16 }) });
    await table.createIndex("s", { config: lancedb.Index.fts() });
  }
  proxy.setLatency(latency);
  const q = await remote.openTable("reads");
  const e = await engine.openTable("reads");
  const probe = Array.from({ length: DIM }, (_, d) => Math.sin(42 * 0.013 + d * 0.7));
  // Each side's own row ids of the same rows (Quiver's table has stable row ids, the engine's does not).
  const rowIdsOf = async (t) => (await t.query().where("id IN (7, 12000, 25001, 49000)").withRowId().toArray()).map((r) => r._rowid);
  const rowIds = new Map([
    [q, await rowIdsOf(q)],
    [e, await rowIdsOf(e)],
  ]);
  const reads = [
    ["count rows", (t) => t.countRows()],
    ["filter query, 10 rows", (t) => t.query().where("id >= 31000 AND id < 31010").toArray()],
    ["take 4 rows by row ids", (t) => t.takeRowIds(rowIds.get(t)).toArray()],
    ["vector search k=10, IVF-PQ", (t) => t.search(probe).limit(10).toArray()],
    ["vector search k=10, exact", (t) => t.search(probe).bypassVectorIndex().limit(10).toArray()],
    ["full-text search, 10 rows", (t) => t.query().fullTextSearch("cedar").limit(10).toArray()],
  ];
  const rows = [];
  const timed = async (work) => {
    proxy.reset();
    const t0 = performance.now();
    await work();
    return { ms: performance.now() - t0, requests: proxy.requests().length };
  };
  for (const [name, read] of reads) {
    const times = { quiver: [], engine: [] };
    const requests = { quiver: [], engine: [] };
    for (let i = 0; i < 2; i++) {
      await read(q);
      await read(e);
    }
    for (let run = 0; run < runs; run++) {
      for (const [side, table] of [
        ["quiver", q],
        ["engine", e],
      ]) {
        const { ms, requests: n } = await timed(() => read(table));
        times[side].push(ms);
        requests[side].push(n);
      }
    }
    const [quiverMs, engineMs] = [median(times.quiver), median(times.engine)];
    const oneRoundTrip = median(requests.engine) <= 1;
    const timeMet = quiverMs <= 0.5 * engineMs || (oneRoundTrip && quiverMs <= latency + 5);
    const requestsMet = median(requests.quiver) <= 2;
    const target = oneRoundTrip ? `≤ 0.5× engine or ≤ ${latency + 5} ms` : "≤ 0.5× engine";
    record(`${latency} ms store, warm: ${name}`, "p50", "ms", times.quiver, times.engine, target, timeMet);
    record(`${latency} ms store, warm: ${name}`, "store requests", "", requests.quiver, requests.engine, "≤ 2", requestsMet);
    rows.push({
      name: `warm: ${name}`,
      quiver: quiverMs,
      engine: engineMs,
      quiverRequests: median(requests.quiver),
      engineRequests: median(requests.engine),
      met: timeMet && requestsMet,
      p99: pct(times.quiver, 0.99),
    });
  }

  console.log(
    `  cold: the first read of tables of ${COLD_ROWS.toLocaleString("en")} × ${DIM} just made, against the engine's first read through a new connection`,
  );
  const cold = { count: { quiver: [], engine: [] }, filter: { quiver: [], engine: [] }, exact: { quiver: [], engine: [] } };
  const coldReads = {
    count: (t) => t.countRows(),
    filter: (t) => t.query().where("id >= 3000 AND id < 3010").toArray(),
    exact: (t) => t.search(probe).bypassVectorIndex().limit(10).toArray(),
  };
  for (let k = 0; k < Math.max(3, Math.ceil(runs / 3)); k++) {
    for (const [what, read] of Object.entries(coldReads)) {
      // Each read is its table's first: a table per read and side.
      const own = `cold${k}_${what}`;
      proxy.setLatency(0);
      await remote.createTable(own, tableOf(arrow, 0, COLD_ROWS));
      await engine.createTable(own, tableOf(arrow, 0, COLD_ROWS));
      proxy.setLatency(latency);
      cold[what].quiver.push((await timed(async () => read(await remote.openTable(own)))).ms);
      cold[what].engine.push((await timed(async () => read(await (await engineOf()).openTable(own)))).ms);
    }
  }
  for (const [what, times] of Object.entries(cold)) {
    const ratio = median(times.quiver) / median(times.engine);
    record(`${latency} ms store, cold: ${what}`, "first read", "ms", times.quiver, times.engine, "≤ 1.1× engine", ratio <= 1.1);
    rows.push({
      name: `cold: ${what}`,
      quiver: median(times.quiver),
      engine: median(times.engine),
      quiverRequests: "—",
      engineRequests: "—",
      met: ratio <= 1.1,
    });
  }
  return rows;
}

/** The reads table as Markdown. */
export function readsTable(rows, latency) {
  return [
    `Reads of a ${ROWS.toLocaleString("en")} × ${DIM} table with an IVF-PQ and a full-text index, every store request answered ${latency} ms late; medians (p99 of Quiver's warm reads); the engine in-process with \`readConsistencyInterval: 0\`:`,
    "",
    "| read | engine | Quiver | ratio | Quiver p99 | target |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.engine.toFixed(1)} ms, ${r.engineRequests} | ${r.quiver.toFixed(1)} ms, ${r.quiverRequests} | ${(r.quiver / r.engine).toFixed(2)}× | ${r.p99 === undefined ? "—" : `${r.p99.toFixed(1)} ms`} | ${r.met ? "✓" : "✗"} |`,
    ),
  ].join("\n");
}
