/**
 * SQL over Lance tables (POST /v1/sql) against the engine reading the same rows in-process. Targets (issue 48):
 * `SELECT k, count(*), avg(x) FROM t GROUP BY k` over 1M rows ≤ 1 s and over 10M ≤ 8 s (or a clear answer naming the
 * cap); `SELECT * FROM t WHERE id = 123` on 10M rows with a scalar index ≤ 50 ms on a local root, and on a store with
 * latency no more store requests than the engine's own filtered query; a join of two 1M-row tables on a key ≤ 3 s.
 * With --latency the tables are smaller (BENCH_SQL_ROWS, 200,000 by default there): Azurite holds them in memory, and
 * the point query's store requests do not depend on the table's size.
 */
import { performance } from "node:perf_hooks";
import { api, arrowCjs, KEY, lancedb, median, RUNS, settle, traceStoreRequests } from "./harness.mjs";

const POINT_RUNS = 20;

/** Rows with an int64 `id`, an int32 `k` of 1,000 groups and a float64 `x`, as IPC streams of 1M-row inserts. */
function rowsOf(from, count) {
  const { Table, vectorFromArray, Int64, Int32, Float64 } = arrowCjs;
  const ids = Array.from({ length: count }, (_, i) => from + i);
  return new Table({
    id: vectorFromArray(BigInt64Array.from(ids, BigInt), new Int64()),
    k: vectorFromArray(
      Int32Array.from(ids, (i) => (i * 7919) % 1000),
      new Int32(),
    ),
    x: vectorFromArray(
      Float64Array.from(ids, (i) => (i % 997) * 0.5),
      new Float64(),
    ),
  });
}

/** A statement through POST /v1/sql, its Arrow answer read whole; an error answer is returned, not thrown. */
async function sql(base, query) {
  const started = performance.now();
  const res = await fetch(`${base}/v1/sql`, {
    method: "POST",
    headers: { "x-api-key": KEY, "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const ms = performance.now() - started;
  if (res.status !== 200) return { ms, error: `${res.status} ${Buffer.from(bytes).toString("utf8").slice(0, 300)}` };
  return { ms, body: arrowCjs.tableFromIPC(bytes) };
}

/** A table of `rows` rows on both sides, written in 1M-row inserts; `indexed`: a BTREE index on id. */
async function makeTable(ctx, name, rows, indexed) {
  const { base, engine } = ctx;
  const step = 1_000_000;
  let engineTable = null;
  for (let from = 0; from < rows; from += step) {
    const part = rowsOf(from, Math.min(step, rows - from));
    const body = Buffer.from(arrowCjs.tableToIPC(part, "stream"));
    await api(base, `/v1/table/${name}/${from === 0 ? "create" : "insert"}`, { body });
    if (engineTable) await engineTable.add(part);
    else engineTable = await engine.createTable(name, part);
  }
  if (indexed) {
    await api(base, `/v1/table/${name}/create_index`, { json: { column: "id", index_type: "BTREE" } });
    await engineTable.createIndex("id", { config: lancedb.Index.btree() });
  }
  await settle();
  return engineTable;
}

async function timed(runs, work) {
  await work();
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    await work();
    ms.push(performance.now() - s);
  }
  return ms;
}

export async function sqlCase(ctx) {
  const { base, record, proxy, latency } = ctx;
  const big = Number(process.env.BENCH_SQL_ROWS || (proxy ? 200_000 : 10_000_000));
  const small = proxy ? big : Math.min(big, 1_000_000);
  console.log(`SQL: a group-by over ${small.toLocaleString("en")} and ${big.toLocaleString("en")} rows, a point query by an indexed id, a join of two tables`);
  proxy?.setLatency(0);
  const t1 = await makeTable(ctx, "sql_a", small, false);
  const t1b = await makeTable(ctx, "sql_b", small, false);
  const t10 = await makeTable(ctx, "sql_big", big, true);
  proxy?.setLatency(latency ?? 0);

  const expectOk = async (query) => {
    const r = await sql(base, query);
    if (r.error) throw new Error(`${query}: ${r.error}`);
    return r;
  };

  // The point query: Quiver's SQL against the engine's own filtered query, in time and (with latency) store requests.
  const point = "SELECT * FROM sql_big WHERE id = 123";
  const answer = await expectOk(point);
  if (answer.body.numRows !== 1) throw new Error(`${point} answered ${answer.body.numRows} rows`);
  const pointQuiver = await timed(POINT_RUNS, () => expectOk(point));
  const pointEngine = await timed(POINT_RUNS, () => t10.query().where("id = 123").toArrow());
  const pointTarget = proxy ? null : 50;
  record(
    `SQL point query (${big.toLocaleString("en")} rows, BTREE)`,
    "p50",
    "ms",
    pointQuiver,
    pointEngine,
    pointTarget ? `≤ ${pointTarget} ms` : undefined,
    pointTarget ? median(pointQuiver) <= pointTarget : undefined,
  );
  if (proxy) {
    const counts = { quiver: [], engine: [] };
    for (let i = 0; i < 5; i++) {
      proxy.reset();
      const q = await expectOk(point);
      counts.quiver.push(proxy.requests().length);
      if (process.env.BENCH_TRACE && i === 4) traceStoreRequests("SQL point query", q.ms, proxy.requests());
      proxy.reset();
      const s = performance.now();
      await t10.query().where("id = 123").toArrow();
      counts.engine.push(proxy.requests().length);
      if (process.env.BENCH_TRACE && i === 4) traceStoreRequests("engine point query", performance.now() - s, proxy.requests());
    }
    record(
      `SQL point query, ${latency} ms store`,
      "store requests",
      "",
      counts.quiver,
      counts.engine,
      "≤ the engine's",
      median(counts.quiver) <= median(counts.engine),
    );
  }

  const groupBy = (table) => `SELECT k, count(*) AS n, avg(x) AS mean FROM ${table} GROUP BY k`;
  const g1 = await timed(RUNS, () => expectOk(groupBy("sql_a")));
  const read1 = await timed(RUNS, () => t1.query().select(["k", "x"]).toArrow());
  record(`SQL group-by (${small.toLocaleString("en")} rows)`, "time", "ms", g1, read1, proxy ? undefined : "≤ 1000 ms", proxy ? undefined : median(g1) <= 1000);
  if (!proxy) {
    const g10 = [];
    let capped = null;
    for (let i = 0; i <= RUNS; i++) {
      const r = await sql(base, groupBy("sql_big"));
      if (r.error) capped = r.error;
      if (i > 0) g10.push(r.ms);
    }
    const read10 = await timed(RUNS, () => t10.query().select(["k", "x"]).toArrow());
    record(
      `SQL group-by (${big.toLocaleString("en")} rows)${capped ? `: ${capped}` : ""}`,
      "time",
      "ms",
      g10,
      read10,
      "≤ 8000 ms or the cap named",
      median(g10) <= 8000 || /QUIVER_SQL_/.test(capped ?? ""),
    );
  }

  const join = "SELECT count(*) AS n, sum(a.x + b.x) AS total FROM sql_a a JOIN sql_b b ON a.id = b.id";
  const joined = await expectOk(join);
  if (Number(joined.body.getChild("n").get(0)) !== small) throw new Error(`${join} counted ${joined.body.getChild("n").get(0)}`);
  const j = await timed(RUNS, () => expectOk(join));
  const readBoth = await timed(RUNS, () => Promise.all([t1.query().select(["id", "x"]).toArrow(), t1b.query().select(["id", "x"]).toArrow()]));
  record(
    `SQL join (2 × ${small.toLocaleString("en")} rows)`,
    "time",
    "ms",
    j,
    readBoth,
    proxy ? undefined : "≤ 3000 ms",
    proxy ? undefined : median(j) <= 3000,
  );
}
