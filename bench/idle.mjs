/**
 * What a root costs at rest: Quiver as `npm start` runs it (a worker per core, the maintenance policy on) as 1, 2 and
 * 4 instances on one Azurite root behind the proxy that counts store requests, over 300 and 3,000 tables that hold
 * data, while nobody calls anything but a readiness probe per instance every 10 s. The policy's passes come every
 * BENCH_IDLE_INTERVAL_S (15 s) instead of the default 300 s so that several fall in the minute counted: a pass's own
 * requests are then counted 20 times as often as at the default, so the figure bounds what the default costs. The
 * engine and Lance's `dir` namespace cost nothing at rest (they run nothing on their own): the baseline is zero.
 * Run with `npm run bench -- --latency 0 idle`.
 */
import { performance } from "node:perf_hooks";
import { NPM_START } from "./harness.mjs";

const WINDOW_MS = Number(process.env.BENCH_IDLE_WINDOW_S || 60) * 1000;
const INTERVAL_S = Number(process.env.BENCH_IDLE_INTERVAL_S || 15);
const PROBE_MS = 10_000;
/**
 * What an instance of `npm start` may cost an hour at rest, whatever the tables: each worker's bids for the
 * maintainer's lease, its readiness probes, and the maintainer's passes over the notes (every 15 s here).
 */
const PER_INSTANCE_HOUR = 2_400;

/** `ctx`: { lancedb, arrow, record, startQuiver, azurite, proxy, extraTables, tableCounts, instanceCounts } */
export async function idleCase(ctx) {
  const { lancedb, arrow, record, azurite, proxy } = ctx;
  if (!proxy) throw new Error("the idle case counts store requests through the proxy: run it with --latency 0");
  const lines = [];
  let made = 0;
  const root = `az://bench/idle-${Date.now()}`;
  const engine = await lancedb.connect(root, { storageOptions: azurite.storageOptions });
  const batch = (i) => arrow.tableFromArrays({ id: BigInt64Array.from({ length: 10 }, (_, k) => BigInt(i * 10 + k)) });
  for (const tables of ctx.tableCounts) {
    // The tables hold data, written by the engine at the root as another writer would; Quiver lists them as tables.
    const t0 = performance.now();
    let next = made;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < tables; i = next++) await engine.createTable(`t${i}`, batch(i));
      }),
    );
    made = Math.max(made, tables);
    console.log(`  ${tables.toLocaleString("en")} tables with data (${((performance.now() - t0) / 1000).toFixed(0)} s to write)`);
    for (const instances of ctx.instanceCounts) {
      const servers = [];
      const began = performance.now();
      for (let k = 0; k < instances; k++) {
        servers.push(
          await ctx.startQuiver(root, 3500 + k * 10 + Math.floor(Math.random() * 9), azurite.storageOptions, NPM_START.workers, {
            ...NPM_START.env,
            QUIVER_MAINTENANCE_INTERVAL_S: String(INTERVAL_S),
          }),
        );
      }
      try {
        // Past the start: the first passes, the leases taken, nothing left from the writes above.
        await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_S * 1000));
        proxy.reset();
        const probes = setInterval(() => servers.forEach((s) => void fetch(`${s.base}/readyz`).catch(() => undefined)), PROBE_MS);
        await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
        clearInterval(probes);
        const requests = proxy.requests();
        const perHour = (requests.length * 3_600_000) / WINDOW_MS;
        const allowed = PER_INSTANCE_HOUR * instances + tables / 24;
        const elapsed = ((performance.now() - began) / 1000).toFixed(0);
        const kinds = {};
        for (const r of requests) kinds[r.kind] = (kinds[r.kind] ?? 0) + 1;
        console.log(
          `  ${instances} instance(s): ${requests.length} store requests in ${WINDOW_MS / 1000} s (${JSON.stringify(kinds)}; ${elapsed} s from start)`,
        );
        record(
          "at rest, Azurite",
          `store requests per hour, ${instances} instance${instances > 1 ? "s" : ""} (${NPM_START.workers} workers each), ${tables.toLocaleString("en")} tables, passes every ${INTERVAL_S} s`,
          "requests/h",
          [perHour],
          [0],
          `≤ ${PER_INSTANCE_HOUR} per instance + 1 per table per day`,
          perHour <= allowed,
        );
        lines.push(
          `| ${tables.toLocaleString("en")} | ${instances} | ${perHour.toFixed(0)} | ${Object.entries(kinds)
            .map(([kind, n]) => `${kind} ${((n * 3_600_000) / WINDOW_MS).toFixed(0)}`)
            .join(", ")} | ${allowed.toFixed(0)} |`,
        );
      } finally {
        // Nothing is written at rest: no graceful stop to wait for (it waits for the probes' idle connections).
        for (const s of servers) {
          const exited = new Promise((resolve) => s.child.once("exit", resolve));
          s.child.kill("SIGKILL");
          await exited;
        }
      }
    }
  }
  ctx.extraTables.push(
    [
      `At rest (store requests per hour, passes every ${INTERVAL_S} s, a readiness probe per instance every ${PROBE_MS / 1000} s; the engine and the dir namespace: 0):`,
      "",
      "| tables | instances | requests/h | by kind | allowed |",
      "|---|---|---|---|---|",
      ...lines,
    ].join("\n"),
  );
}
