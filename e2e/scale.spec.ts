/** The console stays fast at scale: a namespace with 10,000 tables and a table with 2,000 versions. */
import { expect, test } from "@playwright/test";
import { hydrated, signInWithKey } from "./helpers";
import { call, rows } from "./api";

test.describe.configure({ mode: "serial" });

async function inParallel(count: number, clients: number, work: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let i = next++; i < count; i = next++) await work(i);
  }));
}

test.beforeAll(async () => {
  test.setTimeout(600_000);
  await call("/v1/namespace/scale/create", { json: {} });
  await inParallel(10_000, 16, (i) => call(`/v1/table/scale$t${String(i).padStart(5, "0")}/declare`, { json: {} }));
  await call("/v1/table/scale$history/create", { body: rows(0, 1) });
  // One client, one insert at a time: inserts that wait together are committed as one version.
  for (let i = 1; i < 2_000; i++) await call("/v1/table/scale$history/insert", { body: rows(i, i + 1) });
  expect((await call("/v1/table/scale$history/describe", { json: {} })).version).toBe(2000);
});

test("a namespace with 10,000 tables opens, scrolls and filters within a second", async ({ page }) => {
  await signInWithKey(page);
  const started = Date.now();
  await page.goto("/browse/scale");
  await expect(page.getByRole("listitem").filter({ hasText: "t00000" })).toBeVisible();
  expect(Date.now() - started).toBeLessThan(1000);
  await hydrated(page);
  const list = page.getByRole("list", { name: "Tables" });
  await list.evaluate((el) => (el.scrollTop = el.scrollHeight));
  await expect(page.getByTestId("table-count")).toContainText(/^(1000|1500|[0-9]{4,})/);
  const filtering = Date.now();
  await page.getByLabel("Filter tables").fill("t09999");
  await expect(page.getByTestId("table-count")).toHaveText("1 table");
  expect(Date.now() - filtering).toBeLessThan(1000);
});

test("a table with 2,000 versions shows its history within a second", async ({ page }) => {
  await signInWithKey(page);
  await page.goto("/tables/scale/history?tab=versions");
  await expect(page.getByTestId("version-row-2000")).toBeVisible();
  const started = Date.now();
  await page.reload();
  await expect(page.getByTestId("version-row-2000")).toContainText("Append");
  await expect(page.getByTestId("version-row-1901")).toBeVisible();
  expect(Date.now() - started).toBeLessThan(1000);
  await page.getByRole("button", { name: "Load older versions" }).click();
  await expect(page.getByTestId("version-row-1801")).toBeVisible();
});
