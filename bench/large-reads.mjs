/**
 * Reads of a large table where users run them: a 100,000 × 768 table with an IVF-PQ index and a text column of about
 * 2 KB a row (over 500 MiB in all), made through LanceDB's remote client, behind the latency proxy (`--latency`).
 * 1. Warm vector search k=10 through Quiver as `npm start` runs it (its read cache holding the table), p50 and p99
 *    over many query vectors, against the engine in-process with strong consistency reading the same table.
 *    Target: p50 ≤ 25 ms behind 15 ms (LanceDB Enterprise publishes 25 ms p50 for 1M × 1536 on its hardware).
 * 2. Another instance on the same root with a 64 MiB read cache reading the whole table (exact searches, filters of
 *    the text column, IVF-PQ searches, takes): its answers against the engine's, the most its cache directory held
 *    against the budget plus one entry, and its hit rate.
 */
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { median, NPM_START, pct, startQuiver, vectorColumn } from "./harness.mjs";

const DIM = 768;
const ROWS = Number(process.env.BENCH_LARGE_ROWS || 100_000);
const BATCH = 10_000;
const TEXT_BYTES = 2_200;
const SMALL_CACHE = 64 * 2 ** 20;
const QUERIES = 20;

/** A deterministic generator, so both sides and every run see the same rows. */
function random(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

/** Rows `from`…: vectors around 64 centres, so that an IVF index has clusters to find; text that does not compress. */
function tableOf(arrow, from, count) {
  const next = random(from + 7);
  const vectors = new Float32Array(count * DIM);
  for (let i = 0; i < count; i++) {
    const centre = (from + i) % 64;
    for (let d = 0; d < DIM; d++) vectors[i * DIM + d] = Math.sin(centre * 0.37 + d * 0.11) + (next() - 0.5) * 0.6;
  }
  const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ";
  const texts = Array.from({ length: count }, () => {
    let text = "";
    for (let c = 0; c < TEXT_BYTES; c++) text += letters[Math.floor(next() * letters.length)];
    return text;
  });
  return new arrow.Table({
    id: arrow.vectorFromArray(
      Array.from({ length: count }, (_, i) => BigInt(from + i)),
      new arrow.Int64(),
    ),
    text: arrow.vectorFromArray(texts, new arrow.Utf8()),
    v: vectorColumn(arrow, DIM, vectors),
  });
}

const idsOf = (rows) => rows.map((r) => Number(r.id));

/** The most a cache directory's entries held at once, and its largest entry, sampled while `work` runs. */
async function watchingDisk(dir, work) {
  const seen = { mostBytes: 0, largestEntry: 0 };
  const look = () => {
    let bytes = 0;
    const top = path.join(dir, "entries");
    for (const shard of readdirSync(top, { withFileTypes: true })) {
      if (!shard.isDirectory()) continue;
      for (const name of readdirSync(path.join(top, shard.name))) {
        const size = statSync(path.join(top, shard.name, name), { throwIfNoEntry: false })?.size ?? 0;
        bytes += size;
        seen.largestEntry = Math.max(seen.largestEntry, size);
      }
    }
    seen.mostBytes = Math.max(seen.mostBytes, bytes);
  };
  const timer = setInterval(look, 25);
  try {
    await work();
  } finally {
    clearInterval(timer);
    look();
  }
  return seen;
}

async function cacheMetrics(base, key) {
  const text = await (await fetch(`${base}/metrics`, { headers: { "x-api-key": key } })).text();
  return Object.fromEntries([...text.matchAll(/^quiver_read_cache_(\w+) (\S+)$/gm)].map((m) => [m[1], Number(m[2])]));
}

/** `ctx`: { base, key, lancedb, arrow, root, storageOptions, proxy, runs, latency, record, scratch } */
export async function largeReadsCase(ctx) {
  const { base, key, lancedb, arrow, proxy, latency, record } = ctx;
  const remote = await lancedb.connect("db://default", { apiKey: key, hostOverride: base });
  console.log(`  setting up: ${ROWS.toLocaleString("en")} × ${DIM} with ${TEXT_BYTES} bytes of text a row, through the remote client`);
  proxy.setLatency(0);
  let t0 = performance.now();
  const made = await remote.createTable("large", tableOf(arrow, 0, Math.min(BATCH, ROWS)));
  for (let from = BATCH; from < ROWS; from += BATCH) await made.add(tableOf(arrow, from, Math.min(BATCH, ROWS - from)));
  console.log(`  written in ${((performance.now() - t0) / 1000).toFixed(0)} s; building the IVF-PQ index`);
  t0 = performance.now();
  await made.createIndex("v", { config: lancedb.Index.ivfPq({ numPartitions: 256, numSubVectors: 48 }) });
  console.log(`  indexed in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const described = await (
    await fetch(`${base}/v1/table/large/describe`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: "{}" })
  ).json();
  // The engine reads the very table Quiver serves, from the store, as a program beside Quiver would.
  const location = described.location.replace(/\/$/, "");
  const engine = await lancedb.connect(path.posix.dirname(location), { readConsistencyInterval: 0, storageOptions: ctx.storageOptions });
  const e = await engine.openTable(path.posix.basename(location, ".lance"));
  const q = await remote.openTable("large");
  const stats = await e.stats();
  console.log(`  the table holds ${(stats.totalBytes / 2 ** 20).toFixed(0)} MiB in ${stats.fragmentStats.numFragments} fragments`);

  const next = random(99);
  const probes = Array.from({ length: QUERIES }, (_, k) => {
    const centre = Math.floor(next() * 64);
    return Array.from({ length: DIM }, (_, d) => Math.sin(centre * 0.37 + d * 0.11) + (next() - 0.5) * 0.6 + k * 1e-4);
  });
  const search = (t, probe) => t.search(probe).limit(10).select(["id", "_distance"]).toArray();
  proxy.setLatency(latency);
  for (let pass = 0; pass < 2; pass++) for (const probe of probes) await Promise.all([search(q, probe), search(e, probe)]);
  const times = { quiver: [], engine: [] };
  const requests = { quiver: [], engine: [] };
  let differing = 0;
  for (let pass = 0; pass < 3; pass++) {
    for (const probe of probes) {
      const answers = {};
      for (const [side, table] of [
        ["quiver", q],
        ["engine", e],
      ]) {
        proxy.reset();
        const start = performance.now();
        answers[side] = idsOf(await search(table, probe));
        times[side].push(performance.now() - start);
        requests[side].push(proxy.requests().length);
      }
      if (answers.quiver.join() !== answers.engine.join()) differing++;
    }
  }
  const name = `${latency} ms store, ${ROWS / 1000}k × ${DIM}, warm: vector search k=10, IVF-PQ`;
  const p50 = median(times.quiver);
  record(name, "p50", "ms", times.quiver, times.engine, `≤ 25 ms`, p50 <= 25);
  record(name, "store requests", "", requests.quiver, requests.engine, "≤ 2", median(requests.quiver) <= 2);
  const rows = [
    {
      what: `warm vector search k=10, IVF-PQ (${times.quiver.length} calls over ${QUERIES} query vectors)`,
      quiver: `p50 ${p50.toFixed(1)} ms, p99 ${pct(times.quiver, 0.99).toFixed(1)} ms, ${median(requests.quiver)} requests`,
      engine: `p50 ${median(times.engine).toFixed(1)} ms, p99 ${pct(times.engine, 0.99).toFixed(1)} ms, ${median(requests.engine)} requests`,
      verdict: `${p50 <= 25 ? "✓" : "✗"} (≤ 25 ms p50); answers equal to the engine's in ${times.quiver.length - differing} of ${times.quiver.length}`,
    },
  ];

  console.log(`  another instance with a ${SMALL_CACHE / 2 ** 20} MiB read cache, reading the whole table`);
  const smallDir = path.join(ctx.scratch, "small-read-cache");
  const small = await startQuiver(ctx.root, 4000 + Math.floor(Math.random() * 90), ctx.storageOptions, NPM_START.workers, {
    ...NPM_START.env,
    QUIVER_READ_CACHE_DIR: smallDir,
    QUIVER_READ_CACHE_SIZE: String(SMALL_CACHE),
  });
  try {
    const s = await (await lancedb.connect("db://default", { apiKey: key, hostOverride: small.base })).openTable("large");
    const reads = [
      ...probes.slice(0, 3).map((probe) => (t) => t.search(probe).bypassVectorIndex().limit(10).select(["id", "_distance"]).toArray()),
      ...Array.from({ length: 10 }, (_, k) => {
        const from = Math.floor(((k * 7919) % 97) * (ROWS / 100));
        return (t) =>
          t
            .query()
            .where(`id >= ${from} AND id < ${from + 20}`)
            .select(["id", "text"])
            .toArray();
      }),
      ...probes.map((probe) => (t) => search(t, probe)),
      (t) => t.takeOffsets([1, Math.floor(ROWS / 3), Math.floor(ROWS / 2), ROWS - 2]).toArray(),
    ];
    let right = 0;
    let asked = 0;
    const before = await cacheMetrics(small.base, key);
    const disk = await watchingDisk(smallDir, async () => {
      for (let pass = 0; pass < 2; pass++) {
        for (const read of reads) {
          const [mine, theirs] = [await read(s), await read(e)];
          const same = (row) => `${row.id}:${row.text?.length ?? ""}:${row.text?.slice(0, 16) ?? ""}`;
          if (mine.map(same).join() === theirs.map(same).join()) right++;
          asked++;
        }
      }
    });
    const after = await cacheMetrics(small.base, key);
    const hits = after.hits_total - (before.hits_total ?? 0);
    const misses = after.misses_total - (before.misses_total ?? 0);
    const hitRate = hits / Math.max(1, hits + misses);
    const withinBudget = disk.mostBytes <= SMALL_CACHE + disk.largestEntry;
    record(
      `${latency} ms store, ${SMALL_CACHE / 2 ** 20} MiB cache over the table`,
      "answers right",
      "",
      [right],
      undefined,
      `${asked} of ${asked}`,
      right === asked,
    );
    record(
      `${latency} ms store, ${SMALL_CACHE / 2 ** 20} MiB cache over the table`,
      "most held on disk",
      "MiB",
      [disk.mostBytes / 2 ** 20],
      undefined,
      `≤ budget + one entry (${((SMALL_CACHE + disk.largestEntry) / 2 ** 20).toFixed(1)} MiB)`,
      withinBudget,
    );
    record(`${latency} ms store, ${SMALL_CACHE / 2 ** 20} MiB cache over the table`, "hit rate", "%", [hitRate * 100]);
    rows.push({
      what: `${SMALL_CACHE / 2 ** 20} MiB read cache reading the ${(stats.totalBytes / 2 ** 20).toFixed(0)} MiB table twice over (${reads.length} reads a pass)`,
      quiver: `${right} of ${asked} answers as the engine's; at most ${(disk.mostBytes / 2 ** 20).toFixed(1)} MiB on disk (largest entry ${(disk.largestEntry / 2 ** 20).toFixed(1)} MiB); hit rate ${(hitRate * 100).toFixed(0)}% (${hits} hits, ${misses} misses, ${after.evictions_total - (before.evictions_total ?? 0)} evictions)`,
      engine: "—",
      verdict: right === asked && withinBudget ? "✓" : "✗",
    });
  } finally {
    small.child.kill("SIGTERM");
  }
  return rows;
}

/** The large table's figures as Markdown. */
export function largeReadsTable(rows, latency) {
  return [
    `A ${ROWS.toLocaleString("en")} × ${DIM} table with an IVF-PQ index and ${TEXT_BYTES} bytes of text a row, every store request answered ${latency} ms late; the engine in-process with \`readConsistencyInterval: 0\` reading the same table:`,
    "",
    "| read | Quiver | engine | target |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${r.what} | ${r.quiver} | ${r.engine} | ${r.verdict} |`),
  ].join("\n");
}
