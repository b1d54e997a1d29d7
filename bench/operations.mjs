/**
 * The operations page on a root of 10,000 tables (1,000 on Azurite): the look it makes (GET /v1/admin/operations,
 * over every worker of `npm start`), the store requests a look costs, and the page itself rendered in Chromium, from
 * navigation to its charts and instances on screen. Nothing of it grows with the tables: a look lists the roster and
 * reads the two leases' slots. No baseline: the engine and Lance's dir namespace have no such page.
 */
import { performance } from "node:perf_hooks";
import { chromium } from "@playwright/test";
import { api, KEY, median, pool } from "./harness.mjs";

const LOOKS = 20;
const RENDERS = 5;

/** Quiver's own store requests so far, summed over the workers (GET /metrics). */
async function storeRequests(base) {
  const text = await (await fetch(`${base}/metrics`, { headers: { "x-api-key": KEY } })).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("quiver_store_requests_total{"))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

export async function operationsCase({ base, onAzurite, record }) {
  const TABLES = onAzurite ? 1_000 : 10_000;
  console.log(`the operations page on a root of ${TABLES.toLocaleString("en")} tables across 100 namespaces`);
  await pool(100, 8, (n) => api(base, `/v1/namespace/ops${String(n).padStart(3, "0")}/create`, { json: {} }));
  const t0 = performance.now();
  await pool(TABLES, 16, (i) => api(base, `/v1/table/ops${String(i % 100).padStart(3, "0")}$t${String(i).padStart(5, "0")}/declare`, { json: {} }));
  console.log(`  (declared ${TABLES} tables in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);

  const looks = [];
  for (let i = 0; i < LOOKS; i++) {
    const s = performance.now();
    const overview = await api(base, "/v1/admin/operations?window=3600");
    looks.push(performance.now() - s);
    if (!overview.charts?.length) throw new Error(`the look answered no charts: ${JSON.stringify(overview).slice(0, 300)}`);
  }
  // The store requests of ten looks, less what the same time costs at rest (the lease bids of each worker).
  const quiet = async (work) => {
    const before = await storeRequests(base);
    const s = performance.now();
    await work();
    return { requests: (await storeRequests(base)) - before, ms: performance.now() - s };
  };
  const looked = await quiet(async () => {
    for (let i = 0; i < 10; i++) await api(base, "/v1/admin/operations?window=3600");
  });
  const rest = await quiet(() => new Promise((resolve) => setTimeout(resolve, looked.ms)));
  const perLook = Math.max(0, looked.requests - rest.requests) / 10;

  // Debian's Chromium, as the browser tests use (Playwright's own download cannot reach its registry here).
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium" });
  const renders = [];
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/signin?callbackUrl=${encodeURIComponent("/operations")}`);
    await page.getByRole("textbox", { name: "Access key" }).fill(KEY);
    await page.getByRole("button", { name: "Sign in with access key" }).click();
    await page.getByTestId("signed-in-user").waitFor();
    for (let i = 0; i < RENDERS + 1; i++) {
      const s = performance.now();
      await page.goto(`${base}/operations?window=3600&refresh=0`);
      await page.getByRole("figure", { name: "Requests per second by operation" }).waitFor();
      await page.getByRole("region", { name: "Instances of the root" }).waitFor();
      // The first load compiles nothing on a built server, but warms the browser's cache of the console's code.
      if (i > 0) renders.push(performance.now() - s);
    }
  } finally {
    await browser.close();
  }
  const name = `operations page, ${TABLES.toLocaleString("en")} tables`;
  record(name, "a look (GET /v1/admin/operations, 1 h)", "ms", looks, null, "≤ 1000 ms", median(looks) <= 1000);
  record(name, "store requests per look", "requests", [perLook], null, "≤ 3, none per table", perLook <= 3);
  record(name, "page on screen in Chromium (charts and instances)", "ms", renders, null, "≤ 1000 ms", median(renders) <= 1000);
}
