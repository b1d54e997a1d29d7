/**
 * The console stays light at scale: a namespace with 10,000 tables and a table with 2,000 versions open with one
 * page fetched and a few rows rendered, and more is fetched only when asked for. (How fast they open is measured by
 * `npm run bench`, not asserted here, where a busy machine would fail the test for the wrong reason.)
 */
import { expect, test, type Page } from "@playwright/test";
import { hydrated, signInWithKey } from "./helpers";
import { call, rows } from "./api";

test.describe.configure({ mode: "serial" });

async function inParallel(count: number, clients: number, work: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < count; i = next++) await work(i);
    }),
  );
}

interface Fetched {
  params: URLSearchParams;
  items: number;
}

/**
 * Records the console's calls to one API path, with how many items each answer held. `settled` waits for the
 * answers' bodies, which arrive after the page has drawn them.
 */
function recordFetches(page: Page, apiPath: string, itemsOf: (body: Record<string, unknown[]>) => unknown[]) {
  const pending: Array<Promise<Fetched>> = [];
  page.on("response", (response) => {
    const url = new URL(response.url());
    if (decodeURIComponent(url.pathname) === apiPath && response.ok())
      pending.push(response.json().then((body) => ({ params: url.searchParams, items: itemsOf(body).length })));
  });
  return { settled: () => Promise.all(pending) };
}

const total = (fetched: Fetched[]) => fetched.reduce((sum, f) => sum + f.items, 0);

test.beforeAll(async () => {
  test.setTimeout(600_000);
  await call("/v1/namespace/scale/create", { json: {} });
  await inParallel(10_000, 16, (i) => call(`/v1/table/scale$t${String(i).padStart(5, "0")}/declare`, { json: {} }));
  await call("/v1/table/scale$history/create", { body: rows(0, 1) });
  // One client, one insert at a time: inserts that wait together are committed as one version.
  for (let i = 1; i < 2_000; i++) await call("/v1/table/scale$history/insert", { body: rows(i, i + 1) });
  expect((await call("/v1/table/scale$history/describe", { json: {} })).version).toBe(2000);
});

test("a namespace with 10,000 tables opens with one page, renders a window of it, and filters on the server", async ({ page }) => {
  await signInWithKey(page);
  const entries = recordFetches(page, "/v1/namespace/scale/entries", (body) => body.entries);
  await page.goto("/browse/scale");
  await expect(page.getByRole("listitem").filter({ hasText: "t00000" })).toBeVisible();
  await hydrated(page);
  const tables = async () => (await entries.settled()).filter((f) => f.params.get("kind") === "table");
  expect(await tables()).toHaveLength(1);
  expect((await tables())[0].items).toBe(500);
  const list = page.getByRole("list", { name: "Tables" });
  // Virtualized: the DOM holds a window of rows, not the page.
  expect(await list.getByRole("listitem").count()).toBeLessThan(100);

  await list.evaluate((el) => (el.scrollTop = el.scrollHeight));
  await expect(page.getByTestId("table-count")).toContainText(/^1000/);
  const scrolled = await tables();
  expect(scrolled).toHaveLength(2);
  expect(scrolled[1].params.get("page_token")).toBeTruthy();
  expect(total(scrolled)).toBe(1000);
  expect(await list.getByRole("listitem").count()).toBeLessThan(100);

  await page.getByLabel("Filter tables").fill("t09999");
  await expect(page.getByTestId("table-count")).toHaveText("1 table");
  const filtered = (await tables()).filter((f) => f.params.get("filter") === "t09999");
  expect(filtered).toHaveLength(1);
  expect(filtered[0].items).toBe(1);
  await expect(list.getByRole("listitem")).toHaveCount(1);
});

test("a table with 2,000 versions shows its newest page of history and fetches older pages on demand", async ({ page }) => {
  await signInWithKey(page);
  const versions = recordFetches(page, "/v1/table/scale$history/version/list", (body) => body.versions);
  await page.goto("/tables/scale/history?tab=versions");
  await expect(page.getByTestId("version-row-2000")).toContainText("Append");
  await expect(page.getByTestId("version-row-1901")).toBeVisible();
  await expect(page.getByTestId("version-row-1900")).toHaveCount(0);
  const first = await versions.settled();
  expect(first).toHaveLength(1);
  expect(first[0].params.get("limit")).toBe("100");
  expect(first[0].items).toBe(100);

  await page.getByRole("button", { name: "Load older versions" }).click();
  await expect(page.getByTestId("version-row-1801")).toBeVisible();
  await expect(page.getByTestId("version-row-1800")).toHaveCount(0);
  const both = await versions.settled();
  expect(both).toHaveLength(2);
  expect(both[1].params.get("page_token")).toBeTruthy();
  expect(total(both)).toBe(200);
});
