/** 1,000 inserts of 100 rows from 8 clients into one table, every acknowledged row counted, against the engine's adds. */
import { performance } from "node:perf_hooks";
import { api, streamOf, rowsTable, pool, processTreeCpuMs, median, RUNS, arrowCjs } from "./harness.mjs";

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function parallelCase({ base, quiver, engine, record }) {
  console.log("1,000 inserts of 100 rows, 8 clients, one table");
  const bodies = Array.from({ length: 1000 }, (_, i) => streamOf(i * 100, 100));
  const tables = Array.from({ length: 1000 }, (_, i) => rowsTable(i * 100, 100, arrowCjs));
  const quiverRate = [],
    engineRate = [],
    quiverCpu = [],
    engineCpu = [],
    workMs = [],
    recordMs = [],
    groupSize = [],
    turnMs = [];
  for (let run = 0; run <= Math.min(RUNS, 2); run++) {
    await api(base, `/v1/table/par${run}/create`, { body: streamOf(10_000_000, 1) });
    const q0 = performance.now();
    const qCpu0 = processTreeCpuMs(quiver.child.pid);
    const phases = [];
    await pool(1000, 8, (i) => api(base, `/v1/table/par${run}/insert`, { body: bodies[i], phases: (p) => phases.push(p) }));
    const qs = (performance.now() - q0) / 1000;
    const qCpu = (processTreeCpuMs(quiver.child.pid) - qCpu0) / 1000;
    const count = await api(base, `/v1/table/par${run}/count_rows`, { json: {} });
    if (count !== 100_001) throw new Error(`lost rows: ${count - 1} of 100000 acknowledged`);
    // Where an insert's time goes: the table's write turn commits the appends that arrived together as one version.
    const commits = (await api(base, `/v1/table/par${run}/describe`, { json: {} })).version - 1;
    const e = await engine.createTable(`par${run}`, rowsTable(0, 1, arrowCjs));
    const e0 = performance.now();
    const eCpu0 = process.cpuUsage();
    await pool(1000, 8, (i) => e.add(tables[i]));
    const es = (performance.now() - e0) / 1000;
    const { user, system } = process.cpuUsage(eCpu0);
    if (run === 0) continue;
    quiverRate.push(1000 / qs);
    engineRate.push(1000 / es);
    quiverCpu.push(qCpu);
    engineCpu.push((user + system) / 1000 / 1000);
    workMs.push(mean(phases.map((p) => p.work)));
    recordMs.push(mean(phases.map((p) => p.record)));
    groupSize.push(1000 / commits);
    turnMs.push((qs * 1000) / commits);
  }
  record(
    "parallel small inserts",
    "acknowledged inserts/s (0 rows lost)",
    "inserts/s",
    quiverRate,
    engineRate,
    "≥ 400 and ≥ 2× engine",
    median(quiverRate) >= 400 && median(quiverRate) >= 2 * median(engineRate),
  );
  // The rate swings with this machine's flushes to disk from run to run; the CPU an insert costs does not.
  record("parallel small inserts", "CPU per insert: the server's processes (the engine: its own process)", "ms", quiverCpu, engineCpu);
  record("parallel small inserts", "server: the write, its turn included, mean (Server-Timing work)", "ms", workMs, null);
  record("parallel small inserts", "server: the records before the answer, mean (Server-Timing record)", "ms", recordMs, null);
  record("parallel small inserts", "inserts per commit (the table's versions made)", "", groupSize, null);
  record("parallel small inserts", "time per commit of the table's write turn", "ms", turnMs, null);
}
