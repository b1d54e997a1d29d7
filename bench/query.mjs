/** A filtered query of 1,000 rows from 1M, against the engine's. */
import { performance } from "node:perf_hooks";
import { api, queryArrow, streamOf, rowsTable, arrowCjs } from "./harness.mjs";

export async function queryCase({ base, engine, record }) {
  console.log("query 1,000 rows with a filter from 1M rows");
  await api(base, "/v1/table/q/create", { body: streamOf(0, 1_000_000) });
  const e = await engine.createTable("q", rowsTable(0, 1_000_000, arrowCjs));
  const quiverMs = [],
    engineMs = [];
  for (let i = 0; i <= 20; i++) {
    const from = 1000 * i * 37;
    const s = performance.now();
    await queryArrow(base, "q", { filter: `id >= ${from} AND id < ${from + 1000}`, limit: 1000 });
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
