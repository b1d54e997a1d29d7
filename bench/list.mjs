/** Listing the tables of a large catalog page by page, against the engine's tableNames over as many tables. */
import { performance } from "node:perf_hooks";
import { api, rowsTable, settle, pool, pct, median, RUNS, lancedb, arrowCjs } from "./harness.mjs";

export async function listCase({ base, engineRoot, azurite, onAzurite, record }) {
  // An in-memory Azurite is CPU-bound on this machine's two cores: a tenth of the tables keeps the setup in minutes.
  const TABLES = onAzurite ? 1_000 : 10_000;
  const pages = TABLES / 100;
  console.log(`GET /v1/table with ${TABLES.toLocaleString("en")} tables across 100 namespaces; the engine's tableNames over as many tables`);
  await pool(100, 8, (n) => api(base, `/v1/namespace/n${String(n).padStart(3, "0")}/create`, { json: {} }));
  const t0 = performance.now();
  await pool(TABLES, 16, (i) => api(base, `/v1/table/n${String(i % 100).padStart(3, "0")}$t${String(i).padStart(5, "0")}/declare`, { json: {} }));
  console.log(`  (declared ${TABLES} tables in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  const listed = await lancedb.connect(`${engineRoot}-list`, { readConsistencyInterval: 0, ...(azurite ? { storageOptions: azurite.storageOptions } : {}) });
  const schema = rowsTable(0, 1, arrowCjs).schema;
  const e0 = performance.now();
  await pool(TABLES, 16, (i) => listed.createEmptyTable(`t${String(i).padStart(5, "0")}`, schema));
  console.log(`  (the engine created ${TABLES} empty tables in ${((performance.now() - e0) / 1000).toFixed(1)} s)`);
  settle();
  const first = [],
    engineFirst = [];
  for (let i = 0; i < 30; i++) {
    const s = performance.now();
    await api(base, "/v1/table?limit=100");
    first.push(performance.now() - s);
    const s2 = performance.now();
    await listed.tableNames({ limit: 100 });
    engineFirst.push(performance.now() - s2);
  }
  const all = [],
    engineAll = [];
  const firstPages = [],
    lastPages = [];
  for (let run = 0; run < RUNS; run++) {
    const pageTimes = [];
    const s = performance.now();
    let token;
    let n = 0;
    do {
      const p0 = performance.now();
      const page = await api(base, `/v1/table?limit=100${token ? `&page_token=${encodeURIComponent(token)}` : ""}`);
      pageTimes.push(performance.now() - p0);
      n += page.tables.length;
      token = page.page_token;
    } while (token);
    if (n < TABLES) throw new Error(`listed ${n} tables, expected at least ${TABLES}`);
    all.push(performance.now() - s);
    firstPages.push(...pageTimes.slice(0, 10));
    lastPages.push(...pageTimes.slice(-10));
    const s2 = performance.now();
    let names = [];
    let m = 0;
    do {
      names = await listed.tableNames({ limit: 100, ...(names.length ? { startAfter: names[names.length - 1] } : {}) });
      m += names.length;
    } while (names.length === 100);
    if (m !== TABLES) throw new Error(`the engine listed ${m} tables, expected ${TABLES}`);
    engineAll.push(performance.now() - s2);
  }
  const name = `list ${TABLES.toLocaleString("en")} tables`;
  record(name, "first page of 100, p50", "ms", first, engineFirst, onAzurite ? "≤ 1.25× engine" : "≤ 20 ms");
  record(name, "first page of 100, p99", "ms", [pct(first, 0.99)], [pct(engineFirst, 0.99)]);
  record(name, `all ${pages} pages`, "ms", all, engineAll, onAzurite ? "≤ 1.25× engine" : "≤ 2000 ms");
  record(
    name,
    `page time, last ${Math.min(10, pages)} pages / first ${Math.min(10, pages)} pages of each listing`,
    "×",
    [median(lastPages) / median(firstPages)],
    null,
    "independent of position",
  );
}
