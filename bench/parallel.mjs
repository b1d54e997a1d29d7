/** 1,000 inserts of 100 rows from 8 clients into one table, every acknowledged row counted, against the engine's adds. */
import { performance } from "node:perf_hooks";
import { api, streamOf, rowsTable, pool, RUNS, arrowCjs } from "./harness.mjs";

export async function parallelCase({ base, engine, record }) {
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
