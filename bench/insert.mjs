/** Inserting 1M rows as one Arrow stream (uncompressed, and as the LanceDB client's LZ4 body), against the engine's add. */
import { performance } from "node:perf_hooks";
import { api, streamOf, rowsTable, settle, withRss, processTreeRss, remoteClientInsertBody, KEY, RUNS, lancedb, arrowCjs } from "./harness.mjs";

export async function insertCase({ base, quiver, engine, onAzurite, record }) {
  console.log("insert 1M rows as one Arrow stream");
  const body = streamOf(0, 1_000_000);
  const engineTable = rowsTable(0, 1_000_000, arrowCjs);
  const lz4 = await remoteClientInsertBody(base, engineTable);
  console.log(
    `  (the LanceDB client's LZ4 body: ${(lz4.body.length / 2 ** 20).toFixed(1)} MiB, against ${(body.length / 2 ** 20).toFixed(1)} MiB uncompressed)`,
  );
  const engineFile = Buffer.from(arrowCjs.tableToIPC(engineTable, "file"));
  const quiverMs = [],
    lz4Ms = [],
    remoteMs = [],
    engineMs = [],
    rss = [],
    engineRss = [],
    bodyMs = [],
    workMs = [];
  for (let run = 0; run <= RUNS; run++) {
    await api(base, `/v1/table/ins${run}/create`, { body: streamOf(0, 1) });
    await api(base, `/v1/table/lzb${run}/create`, { body: streamOf(0, 1) });
    const remote = await lancedb.connect("db://default", { apiKey: KEY, hostOverride: base });
    const remoteTable = await remote.createTable(`lz${run}`, rowsTable(0, 1, arrowCjs));
    const e = await engine.createTable(`ins${run}`, rowsTable(0, 1, arrowCjs));
    settle();
    let phases;
    const q = await withRss(
      () => processTreeRss(quiver.child.pid),
      () => api(base, `/v1/table/ins${run}/insert`, { body, headers: { "content-type": "application/vnd.apache.arrow.stream" }, phases: (p) => (phases = p) }),
    );
    settle();
    const b0 = performance.now();
    await api(base, `/v1/table/lzb${run}/insert`, { body: lz4.body, headers: { "content-type": lz4.type } });
    const lzb = performance.now() - b0;
    settle();
    const l0 = performance.now();
    await remoteTable.add(engineTable);
    const lz = performance.now() - l0;
    settle();
    const e0 = performance.now();
    await e.add(engineTable);
    const em = performance.now() - e0;
    // The engine's own memory for the same write: its native add of the IPC bytes, in this process.
    const native = (await engine.createTable(`rss${run}`, rowsTable(0, 1, arrowCjs))).inner;
    settle();
    const own = await withRss(
      () => process.memoryUsage.rss(),
      () => native.add(engineFile, "append"),
    );
    if (run === 0) continue;
    quiverMs.push(q.ms);
    rss.push(q.growth / body.length);
    engineRss.push(own.growth / engineFile.length);
    bodyMs.push(phases.body);
    workMs.push(phases.work);
    lz4Ms.push(lzb);
    remoteMs.push(lz);
    engineMs.push(em);
  }
  record("insert 1M", "wall time, uncompressed stream", "ms", quiverMs, engineMs, onAzurite ? "≤ 1.25× engine" : "≤ 1.15× engine");
  record("insert 1M", "wall time, LZ4 stream (the LanceDB client's bytes)", "ms", lz4Ms, engineMs, "≤ 1.25× engine");
  record("insert 1M", "wall time, LanceDB remote client end to end (its LZ4 encoding included)", "ms", remoteMs, engineMs);
  record(
    "insert 1M",
    "rows/s, uncompressed",
    "rows/s",
    quiverMs.map((m) => 1e9 / m),
    engineMs.map((m) => 1e9 / m),
  );
  record("insert 1M", "server: reading the body (Server-Timing)", "ms", bodyMs, null);
  record("insert 1M", "server: catalog and engine work (Server-Timing)", "ms", workMs, null);
  record("insert 1M", "server peak RSS growth / body size (baseline: the engine's native add in-process)", "×", rss, engineRss, "≤ 2×");
}
