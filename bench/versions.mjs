/** Paging through a long version history, against the engine's listVersions. */
import { performance } from "node:perf_hooks";
import { api, streamOf, rowsTable, pool, pct, RUNS, arrowCjs } from "./harness.mjs";

export async function versionsCase({ base, engine, onAzurite, record }) {
  const VERSIONS = onAzurite ? 500 : 2_000;
  console.log(`version/list on a table with ${VERSIONS.toLocaleString("en")} versions; the engine's listVersions on as many`);
  await api(base, "/v1/table/hist/create", { body: streamOf(0, 1) });
  // One insert at a time: inserts that wait together are committed as one version.
  await pool(VERSIONS - 1, 1, (i) => api(base, "/v1/table/hist/insert", { body: streamOf(i + 1, 1) }));
  const { version } = await api(base, "/v1/table/hist/describe", { json: {} });
  if (version !== VERSIONS) throw new Error(`the history table has ${version} versions, not ${VERSIONS}`);
  const e = await engine.createTable("hist", rowsTable(0, 1, arrowCjs));
  for (let i = 1; i < VERSIONS; i++) await e.add(rowsTable(i, 1, arrowCjs));
  const first = [],
    engineAll = [];
  for (let i = 0; i < 30; i++) {
    const s = performance.now();
    await api(base, "/v1/table/hist/version/list?descending=true&limit=100", { method: "POST" });
    first.push(performance.now() - s);
  }
  for (let i = 0; i < 5; i++) {
    const s = performance.now();
    await e.listVersions();
    engineAll.push(performance.now() - s);
  }
  const all = [];
  for (let run = 0; run < RUNS; run++) {
    const s = performance.now();
    let token;
    do {
      const page = await api(base, `/v1/table/hist/version/list?limit=100${token ? `&page_token=${token}` : ""}`, { method: "POST" });
      token = page.page_token;
    } while (token);
    all.push(performance.now() - s);
  }
  // The engine has no page of versions: its baseline is always the whole history.
  const name = `${VERSIONS.toLocaleString("en")} versions`;
  record(name, "first page of 100 (baseline: the engine's whole list), p50", "ms", first, engineAll, onAzurite ? "≤ 1.25× engine" : "≤ 50 ms");
  record(name, "first page of 100, p99", "ms", [pct(first, 0.99)]);
  record(name, `all ${VERSIONS / 100} pages`, "ms", all, engineAll, onAzurite ? "≤ 1.25× engine" : undefined);
}
