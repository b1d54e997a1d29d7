/**
 * A merge-insert of 100k rows (half of them matching) into 1M rows, against the engine's: on a table of the engine's
 * defaults, and on one with stable row ids, which Quiver's tables get by default (QUIVER_STABLE_ROW_IDS).
 */
import { performance } from "node:perf_hooks";
import { api, streamOf, rowsTable, settle, RUNS, arrowCjs } from "./harness.mjs";

export async function mergeCase({ base, engine, record }) {
  console.log("merge-insert 100k rows (half match) into 1M rows");
  const big = streamOf(0, 1_000_000);
  const source = streamOf(950_000, 100_000);
  const sourceTable = rowsTable(950_000, 100_000, arrowCjs);
  const quiverMs = [],
    engineMs = [],
    stableMs = [],
    workMs = [];
  let counts;
  for (let run = 0; run <= RUNS; run++) {
    await api(base, `/v1/table/m${run}/create`, { body: big });
    const e = await engine.createTable(`m${run}`, rowsTable(0, 1_000_000, arrowCjs));
    const stable = await engine.createTable(`ms${run}`, rowsTable(0, 1_000_000, arrowCjs), {
      storageOptions: { new_table_enable_stable_row_ids: "true" },
    });
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
    settle();
    const s0 = performance.now();
    await stable.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(sourceTable);
    const sm = performance.now() - s0;
    if (run === 0) continue;
    quiverMs.push(qm);
    engineMs.push(em);
    stableMs.push(sm);
    workMs.push(phases.work);
  }
  console.log(`  counts: ${counts.num_updated_rows} updated, ${counts.num_inserted_rows} inserted`);
  record("merge 100k into 1M", "wall time", "ms", quiverMs, engineMs, "≤ 1.15× engine");
  record("merge 100k into 1M", "wall time (baseline: the engine's own table with stable row ids)", "ms", quiverMs, stableMs, "≤ 1.15× engine");
  record("merge 100k into 1M", "server: catalog and engine work (Server-Timing)", "ms", workMs, null);
}
