import { writeFileSync } from "node:fs";
import path from "node:path";
import os from "node:os";
import { expect, test } from "@playwright/test";
import {
  Binary,
  Field,
  FixedSizeList,
  Float32,
  List,
  makeVector,
  Struct,
  tableToIPC,
  Table,
  TimestampMicrosecond,
  vectorFromArray,
  Int64,
  Utf8,
  Float64,
} from "apache-arrow";
import * as lancedb from "@lancedb/lancedb";
import { adminKey, apiAs, hydrated, origin, shots, signInWithKey } from "./helpers";
import { call, queryRows, rows } from "./api";
import { Compression, parquetBytes } from "../test/parquet-file";
import { mediaTable, mediaValues } from "../test/media-table";
import { ErrorCode } from "../lib/contract/errors";

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await call("/v1/namespace/shop/create", { json: { properties: { owner: "retail" } } });
  await call("/v1/namespace/shop$eu/create", { json: {} });
  await call("/v1/table/shop$items/create", { body: rows(0, 120) });
  await call("/v1/table/shop$items/insert", { body: rows(120, 150) });
  await call("/v1/table/shop$items/tags/create", { json: { tag: "launch", version: 1 } });
  await call("/v1/table/shop$pending/declare", { json: { properties: { team: "growth" } } });
});

test("browse namespaces and tables, search, and see each page in both themes", async ({ page }) => {
  await signInWithKey(page);
  await expect(page.getByRole("navigation", { name: "Catalog" }).getByRole("link", { name: "shop" })).toBeVisible();
  await page.getByRole("list", { name: "Child namespaces" }).getByRole("link", { name: /shop/ }).click();
  await expect(page).toHaveURL(/\/browse\/shop$/);
  await hydrated(page);
  await expect(page.getByRole("listitem").filter({ hasText: "pending" })).toContainText("declared only");
  await expect(page.getByRole("listitem").filter({ hasText: "items" })).toContainText("created");
  await expect(page.getByText("retail")).toBeVisible();
  await page.getByLabel("Filter tables").fill("pend");
  await expect(page.getByTestId("table-count")).toHaveText("1 table");
  await shots(page, "namespace");

  await page.keyboard.press("Escape");
  await page.locator("body").click();
  await page.keyboard.press("/");
  await page.keyboard.type("items");
  await expect(page.getByRole("option", { name: /shop\$items/ })).toBeVisible();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/tables\/shop\/items$/);
  await expect(page.getByTestId("overview-facts")).toContainText("150");
  await shots(page, "table-overview");
});

test("schema, data, versions and tags of a table", async ({ page }) => {
  await call("/v1/table/shop$items/alter_columns", { json: { alterations: [{ path: "name", rename: "title" }] } });
  await signInWithKey(page, undefined, "/tables/shop/items?tab=schema&compare=v:1");
  await expect(page.getByTestId("schema-diff")).toContainText("renamed");
  await expect(page.getByTestId("schema-diff")).toContainText("title");
  await shots(page, "table-schema");

  await page.goto("/tables/shop/items?tab=data");
  await hydrated(page);
  await expect(page.getByTestId("data-range")).toContainText("Rows 1–50 of 150");
  await page.getByLabel("Filter expression").fill("id >= 140");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page.getByTestId("data-range")).toContainText("Rows 1–10 of 10 matching");
  await page.getByRole("checkbox", { name: "score" }).click();
  await expect(page.getByTestId("data-grid").locator("th")).toHaveText(["", "id ▲", "title", ""]);
  await expect(page).toHaveURL(/columns=id%2Ctitle|columns=id,title/);
  await shots(page, "table-data");
  await page.goto("/tables/shop/items?tab=data&tag=launch");
  await expect(page.getByTestId("data-range")).toContainText("of 120");

  await page.goto("/tables/shop/items?tab=versions");
  await hydrated(page);
  // What the user did, with Lance's name for it beside.
  await expect(page.getByTestId("version-row-3").getByTestId("version-action")).toHaveText(/^Rename column name to title\s*Project$/);
  await expect(page.getByTestId("version-row-2").getByTestId("version-action")).toHaveText(/^Insert 30 rows\s*Append$/);
  await expect(page.getByTestId("version-row-1")).toContainText("launch");
  // The chart reads against its axes: rows on the left to a round top, the versions along the bottom.
  await expect(page.getByTestId("chart-axis-rows").locator("span")).toHaveText(["200", "100", "0"]);
  await expect(page.getByTestId("chart-axis-versions").locator("span")).toHaveText(["v1", "v2", "v3"]);
  // The latest version has no Restore; its links stay in line with the others'.
  const dataLink = (version: number) => page.getByTestId(`version-row-${version}`).getByRole("link", { name: "data" }).boundingBox();
  expect((await dataLink(3))!.x).toBe((await dataLink(1))!.x);
  await page.getByRole("button", { name: "Tag version 2" }).click();
  await page.getByLabel("Tag name").fill("appended");
  await page.getByRole("button", { name: "Create tag" }).click();
  await expect(page.getByTestId("version-row-2")).toContainText("appended");
  await shots(page, "table-versions");
  await page.getByRole("button", { name: "Restore version 1" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Restore" }).click();
  await expect(page.getByRole("status")).toContainText("Restored as version 4");
  expect(await call("/v1/table/shop$items/count_rows", { json: {} })).toBe(120);

  await page.goto("/tables/shop/items?tab=tags");
  await hydrated(page);
  await page.getByRole("button", { name: "Move tag launch" }).click();
  await page.getByLabel("To version").selectOption("2");
  await expect(page.getByTestId("move-preview")).toContainText("version 1 → version 2");
  await expect(page.getByTestId("move-preview")).toContainText("rows 120 → 150 (+30)");
  await page.getByRole("button", { name: "Move tag", exact: true }).click();
  await page.getByRole("button", { name: "Confirm move 1 → 2" }).click();
  await expect(page.getByTestId("tag-row-launch")).toContainText("2");
  expect((await call("/v1/table/shop$items/tags/version", { json: { tag: "launch" } })).version).toBe(2);
  await shots(page, "table-tags");
  await page.getByRole("button", { name: "Delete tag appended" }).click();
  await expect(page.getByTestId("tag-row-appended")).toHaveCount(0);
});

test("a table whose versions the catalog manages says who made each version, and a restore in the console is the signed-in user's", async ({ page }) => {
  const managed = encodeURIComponent(JSON.stringify({ "quiver.managed_versioning": "true" }));
  await call(`/v1/table/shop$ledger/create?properties=${managed}`, { body: rows(0, 10) });
  const { key } = (await call("/v1/admin/keys/create", { json: { name: "nightly-loader", role: "editor" } })) as unknown as { key: string };
  const loaded = await fetch(`${origin()}/v1/table/shop$ledger/insert`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/vnd.apache.arrow.stream" },
    body: rows(10, 15) as unknown as BodyInit,
  });
  expect(loaded.status).toBe(200);

  await signInWithKey(page, undefined, "/tables/shop/ledger?tab=versions");
  await expect(page.getByTestId("version-row-2").getByTestId("version-author")).toHaveText("by nightly-loader");
  await expect(page.getByTestId("version-row-1").getByTestId("version-author")).toHaveText("by QUIVER_ADMIN_API_KEY");
  await page.getByRole("button", { name: "Restore version 1" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Restore" }).click();
  await expect(page.getByRole("status")).toContainText("Restored as version 3");
  await expect(page.getByTestId("version-row-3").getByTestId("version-author")).toHaveText(/^by \S+/);
  await expect(page.getByTestId("version-row-3").getByTestId("version-action")).toContainText("Restore");

  // A table whose versions are not managed shows no column of who made them until it is switched; then its earlier
  // versions show their authors too, whose records every table keeps.
  await call("/v1/table/shop$switchable/create", { body: rows(0, 5) });
  await page.goto("/tables/shop/switchable?tab=versions");
  await hydrated(page);
  await expect(page.getByTestId("version-row-1")).toBeVisible();
  await expect(page.getByTestId("version-author")).toHaveCount(0);
  await page.goto("/tables/shop/switchable?tab=overview");
  await hydrated(page);
  await expect(page.getByTestId("versioning")).toContainText("each client commits its own");
  await page.getByRole("button", { name: "Have Quiver manage them" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Manage", exact: true }).click();
  await expect(page.getByTestId("versioning")).toContainText("managed by Quiver");
  expect((await call("/v1/table/shop$switchable/describe", { json: {} })).managed_versioning).toBe(true);
  await call("/v1/table/shop$switchable/insert", { body: rows(5, 7) });
  await page.goto("/tables/shop/switchable?tab=versions");
  await hydrated(page);
  await expect(page.getByTestId("version-row-2").getByTestId("version-author")).toHaveText("by QUIVER_ADMIN_API_KEY");
  await expect(page.getByTestId("version-row-1").getByTestId("version-author")).toHaveText("by QUIVER_ADMIN_API_KEY");
});

test("set a schema metadata key: a new version, which the schema at the version before does not have", async ({ page }) => {
  await call("/v1/table/shop$meta/create", { body: rows(0, 5) });
  await signInWithKey(page, undefined, "/tables/shop/meta?tab=schema");
  const section = page.getByRole("region", { name: "Schema metadata" });
  await expect(section).toContainText("No schema metadata.");
  await section.getByRole("textbox", { name: "Key" }).fill("owner");
  await section.getByRole("textbox", { name: "Value" }).fill("data-team");
  await section.getByRole("button", { name: "Set key" }).click();
  await expect(section.getByTestId("schema-metadata-entry")).toHaveText(["ownerdata-team"]);
  await expect(page.getByText("Version 2", { exact: true })).toBeVisible();
  const described = await call("/v1/table/shop$meta/describe", { json: {} });
  expect(described.version).toBe(2);
  expect((described.schema as { metadata?: Record<string, string> }).metadata).toEqual({ owner: "data-team" });
  await page.goto("/tables/shop/meta?tab=schema&version=1");
  await expect(section).toContainText("No schema metadata.");
  await expect(section.getByRole("button", { name: "Set key" })).toHaveCount(0);
});

test("alter columns with a preview, then see the new version", async ({ page }) => {
  await call("/v1/table/shop$cols/create", { body: rows(0, 10) });
  await signInWithKey(page, undefined, "/tables/shop/cols?tab=columns");
  await page.getByLabel("Rename name").fill("label");
  await page.getByLabel("Type of score").selectOption("float");
  await page.getByLabel("id nullable").check();
  await expect(page.getByTestId("schema-diff")).toContainText("renamed");
  await expect(page.getByTestId("schema-diff")).toContainText("type double → float");
  await shots(page, "table-columns");
  await page.getByRole("button", { name: "Apply alterations" }).click();
  await expect(page.getByRole("status")).toContainText("version 2");
  const described = await call("/v1/table/shop$cols/describe", { json: {} });
  expect(described.version).toBe(2);
  expect(
    (described.schema as { fields: Array<{ name: string; type: { type: string }; nullable: boolean }> }).fields.map((f) => [f.name, f.type.type, f.nullable]),
  ).toEqual([
    ["id", "int64", true],
    ["label", "string", true],
    ["score", "float", true],
  ]);
});

test("create a namespace, declare a table, drop them by typing their names", async ({ page }) => {
  await signInWithKey(page, undefined, "/browse/shop");
  // The button is on screen before its page has hydrated (CI once clicked it then, and no dialog opened): click until
  // the dialog is there.
  await expect(async () => {
    await page.getByRole("button", { name: "New namespace" }).click();
    await expect(page.getByLabel("Namespace name")).toBeVisible({ timeout: 1000 });
  }).toPass();
  await page.getByLabel("Namespace name").fill("tmp");
  await page.getByRole("button", { name: "Create namespace" }).click();
  await expect(page).toHaveURL(/\/browse\/shop\/tmp$/);
  await hydrated(page);
  await page.getByRole("button", { name: "Declare table" }).click();
  await page.getByLabel("Table name").fill("draft");
  await page.getByRole("button", { name: "Add property" }).click();
  await page.getByLabel("Property 1 name").fill("stage");
  await page.getByLabel("Property 1 value").fill("draft");
  await page.getByRole("dialog").getByRole("button", { name: "Declare table" }).click();
  await expect(page).toHaveURL(/\/tables\/shop\/tmp\/draft$/);
  // The console declares with stable row ids unless told not to.
  expect((await call("/v1/table/shop$tmp$draft/describe", { json: {} })).properties).toEqual({ stage: "draft", "quiver.stable_row_ids": "true" });
  await page.goto("/browse/shop/tmp");
  await hydrated(page);
  await page.getByRole("button", { name: "Drop namespace" }).click();
  await expect(page.getByTestId("drop-preview")).toContainText("draft");
  const confirm = page.getByRole("dialog").getByRole("button", { name: "Drop namespace" });
  await expect(confirm).toBeDisabled();
  await page.getByLabel("Type tmp to confirm").fill("tmp");
  await confirm.click();
  await expect(page).toHaveURL(/\/browse\/shop$/);
  await expect(call("/v1/namespace/shop$tmp/describe", { json: {} })).rejects.toThrow(/404/);
});

function csvFile(name: string, lines: string[]): string {
  const file = path.join(os.tmpdir(), `${Date.now()}-${name}`);
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

test("upload a CSV with bad rows, then merge an Arrow file", async ({ page }) => {
  await call("/v1/table/shop$upload/create", { body: rows(0, 5) });
  await signInWithKey(page, undefined, "/tables/shop/upload?tab=upload");
  const csv = csvFile("items.csv", ["id,name,score", "100,apple,1.5", "101,pear,oops", "102,plum,3", "not-a-number,fig,4", "104,kiwi,"]);
  await page.getByLabel("Choose files to upload").setInputFiles(csv);
  await expect(page.getByTestId("inferred-schema")).toContainText("int64");
  await expect(page.getByTestId("conversion-summary")).toContainText("3 rows ready, 2 rows will not convert");
  await expect(page.getByTestId("bad-rows")).toContainText("'oops' is not a number");
  await expect(page.getByTestId("bad-rows")).toContainText("'not-a-number' is not an integer");
  await shots(page, "table-upload");
  // Each file's write carries a key of its own, so that sending it again after a lost answer cannot write it twice.
  const sent = page.waitForRequest((r) => r.url().includes("/insert"));
  await page.getByRole("button", { name: "Insert into table" }).click();
  expect((await sent).headers()["idempotency-key"]).toMatch(/^upload-[0-9a-f]{16}$/);
  await expect(page.getByTestId("upload-result")).toContainText("3 inserted");
  expect(await call("/v1/table/shop$upload/count_rows", { json: {} })).toBe(8);

  const arrowPath = path.join(os.tmpdir(), `${Date.now()}-merge.arrow`);
  writeFileSync(
    arrowPath,
    tableToIPC(
      new Table({
        id: vectorFromArray([0n, 1n, 500n], new Int64()),
        name: vectorFromArray(["a", "b", "new"], new Utf8()),
        score: vectorFromArray([9, 9, 9], new Float64()),
      }),
      "file",
    ),
  );
  await page.getByRole("radio", { name: "Merge (upsert)" }).check();
  await page.getByRole("group", { name: "Key columns" }).getByRole("checkbox", { name: "id" }).check();
  await page.getByLabel("Choose files to upload").setInputFiles(arrowPath);
  await page.getByRole("button", { name: "Merge into table" }).click();
  await expect(page.getByTestId("upload-result").last()).toContainText("1 inserted, 2 updated, 0 deleted");
  expect(await call("/v1/table/shop$upload/count_rows", { json: { predicate: "score = 9" } })).toBe(3);
});

test("upload Parquet written by a real writer: snappy and zstd pages, a struct, lists, bytes; into a declared table and into a table's vector column", async ({
  page,
}) => {
  const n = 1000;
  const ids = Array.from({ length: n }, (_, i) => i);
  const point = new Struct([new Field("x", new Float64(), true), new Field("y", new Float64(), true)]);
  const source = new Table({
    id: vectorFromArray(ids.map(BigInt), new Int64()),
    name: vectorFromArray(
      ids.map((i) => (i % 7 === 0 ? null : `name-${i}`)),
      new Utf8(),
    ),
    at: vectorFromArray(
      ids.map((i) => 1_700_000_000_000 + i * 1.5),
      new TimestampMicrosecond("UTC"),
    ),
    point: vectorFromArray(
      ids.map((i) => (i % 5 === 0 ? null : { x: i / 4, y: -i })),
      point,
    ),
    tags: vectorFromArray(
      ids.map((i) => Array.from({ length: i % 3 }, (_, t) => `t${t}`)),
      new List(new Field("item", new Utf8(), true)),
    ),
    raw: vectorFromArray(
      ids.map((i) => Uint8Array.from([i % 256, 0, 255])),
      new Binary(),
    ),
  });
  // Three row groups; the text columns' pages zstd, the rest snappy.
  const file = path.join(os.tmpdir(), `${Date.now()}-rows.parquet`);
  writeFileSync(file, parquetBytes(source, { name: Compression.ZSTD, tags: Compression.ZSTD }, 400));
  await call("/v1/table/shop$from_parquet/declare", { json: {} });
  await signInWithKey(page, undefined, "/tables/shop/from_parquet?tab=upload");
  await page.getByLabel("Choose files to upload").setInputFiles(file);
  const staged = page.getByTestId("staged-file");
  await expect(staged).toContainText("Parquet");
  await expect(staged).toContainText("1,000 rows in 3 row groups");
  await expect(staged).toContainText("point: struct");
  await expect(page.getByTestId("conversion-summary")).toContainText("1,000 rows ready");
  await shots(page, "table-upload-parquet");
  await page.getByRole("button", { name: "Insert into table" }).click();
  await expect(page.getByTestId("upload-result")).toContainText("1,000 inserted");
  const back = await queryRows("shop$from_parquet");
  expect(back.numRows).toBe(n);
  const byId = new Map(back.toArray().map((r) => [Number(r.id), r.toJSON()]));
  for (const i of [0, 1, 2, 5, 7, 399, 400, 401, 999]) {
    const row = byId.get(i)!;
    expect(row.name).toBe(i % 7 === 0 ? null : `name-${i}`);
    expect(Number(row.at)).toBe(1_700_000_000_000 + i * 1.5);
    expect(row.point === null ? null : (row.point as { toJSON(): unknown }).toJSON()).toEqual(i % 5 === 0 ? null : { x: i / 4, y: -i });
    expect(Array.from(row.tags as Iterable<string>)).toEqual(Array.from({ length: i % 3 }, (_, t) => `t${t}`));
    expect(Array.from(row.raw as Uint8Array)).toEqual([i % 256, 0, 255]);
  }
  const described = await call("/v1/table/shop$from_parquet/describe", { json: {} });
  expect((described.schema as { fields: Array<{ name: string; type: { type: string } }> }).fields.map((f) => f.type.type)).toEqual([
    "int64",
    "string",
    "timestamp:us:UTC",
    "struct",
    "list",
    "binary",
  ]);

  // Into a table with a vector column: Parquet holds the vectors as plain lists of doubles.
  const dims = 4;
  const embedding = new FixedSizeList(dims, new Field("item", new Float32(), true));
  await call("/v1/table/shop$pq_vectors/create", {
    body: tableToIPC(
      new Table({
        id: vectorFromArray([0n], new Int64()),
        embedding: makeVector({ type: embedding, length: 1, nullCount: 0, child: makeVector(new Float32Array(dims)).data[0] }),
      }),
      "stream",
    ),
  });
  const vectors = new Table({
    id: vectorFromArray([1n, 2n], new Int64()),
    embedding: vectorFromArray(
      [
        [0.5, 1, 1.5, 2],
        [3, 2, 1, 0],
      ],
      new List(new Field("item", new Float64(), true)),
    ),
  });
  const vectorFile = path.join(os.tmpdir(), `${Date.now()}-vectors.parquet`);
  writeFileSync(vectorFile, parquetBytes(vectors, {}));
  await page.goto("/tables/shop/pq_vectors?tab=upload");
  await hydrated(page);
  await page.getByLabel("Choose files to upload").setInputFiles(vectorFile);
  await expect(page.getByTestId("conversion-summary")).toContainText("2 rows ready");
  await page.getByRole("button", { name: "Insert into table" }).click();
  await expect(page.getByTestId("upload-result")).toContainText("2 inserted");
  const stored = await queryRows("shop$pq_vectors", { filter: "id = 1" });
  expect(Array.from(stored.get(0)!.embedding as Iterable<number>)).toEqual([0.5, 1, 1.5, 2]);

  // A file whose columns the table does not have is held back, with the reason.
  const strangers = path.join(os.tmpdir(), `${Date.now()}-strangers.parquet`);
  writeFileSync(strangers, parquetBytes(new Table({ other: vectorFromArray(["x"], new Utf8()) }), {}));
  await page.getByLabel("Choose files to upload").setInputFiles(strangers);
  await expect(page.getByTestId("mapping-problems")).toContainText("column 'other' is not in the table");
});

test("upload JSON Lines: a declared table's columns from its lines, and lines that do not fit the table shown and left out", async ({ page }) => {
  await call("/v1/table/shop$from_jsonl/declare", { json: {} });
  await signInWithKey(page, undefined, "/tables/shop/from_jsonl?tab=upload");
  const events = csvFile("events.jsonl", [
    ...Array.from({ length: 25 }, (_, i) =>
      JSON.stringify({
        id: i,
        kind: i % 2 ? "click" : "view",
        at: `2024-05-01T10:00:${String(i).padStart(2, "0")}.000123Z`,
        meta: { ms: i * 1.5 },
        embedding: [i, i + 1, i + 2],
      }),
    ),
  ]);
  await page.getByLabel("Choose files to upload").setInputFiles(events);
  const staged = page.getByTestId("staged-file");
  await expect(staged).toContainText("JSON Lines");
  await expect(staged).toContainText("columns from the first 25 lines");
  await expect(staged).toContainText("written as a vector of 3 floats");
  await expect(page.getByTestId("conversion-summary")).toContainText("25 rows ready, every row converts");
  await page.getByRole("button", { name: "Insert into table" }).click();
  await expect(page.getByTestId("upload-result")).toContainText("25 inserted");
  const back = await queryRows("shop$from_jsonl", { filter: "id = 3" });
  expect(back.get(0)!.toJSON()).toMatchObject({ id: 3n, kind: "click", at: "2024-05-01T10:00:03.000123Z" });
  expect(Array.from(back.get(0)!.embedding as Iterable<number>)).toEqual([3, 4, 5]);

  await page.goto("/tables/shop/upload?tab=upload");
  await hydrated(page);
  const mixed = csvFile("mixed.jsonl", [
    '{"id": 900, "name": "ok", "score": 1.5}',
    '{"id": "nine hundred one", "name": "bad"}',
    '{"id": 902, "colour": "red"}',
  ]);
  await page.getByLabel("Choose files to upload").setInputFiles(mixed);
  await expect(page.getByTestId("conversion-summary")).toContainText("1 rows ready, 2 rows will not convert");
  await expect(page.getByTestId("bad-rows")).toContainText("'nine hundred one' is not an integer");
  await expect(page.getByTestId("bad-rows")).toContainText("the table has no column 'colour'");
  await page.getByRole("button", { name: "Insert into table" }).click();
  await expect(page.getByTestId("upload-result")).toContainText("1 inserted");
  expect(await call("/v1/table/shop$upload/count_rows", { json: { predicate: "id >= 900" } })).toBe(1);
});

test("upload two files at once, then merge with filter expressions", async ({ page }) => {
  await call("/v1/table/shop$multi/create", { body: rows(0, 10) });
  await signInWithKey(page, undefined, "/tables/shop/multi?tab=upload");
  const streamPath = path.join(os.tmpdir(), `${Date.now()}-more.arrows`);
  writeFileSync(streamPath, rows(13, 17));
  await page.getByLabel("Choose files to upload").setInputFiles([csvFile("more.csv", ["id,name,score", "10,a,5", "11,b,5.5", "12,c,6"]), streamPath]);
  await expect(page.getByTestId("staged-file")).toHaveCount(2);
  await expect(page.getByTestId("conversion-summary")).toContainText("3 rows ready, every row converts");
  await page.getByRole("button", { name: "Insert all 2 files" }).click();
  await expect(page.getByTestId("upload-result")).toHaveCount(2);
  await expect(page.getByTestId("upload-result").first()).toContainText("3 inserted → version 2");
  await expect(page.getByTestId("upload-result").last()).toContainText("4 inserted → version 3");
  expect(await call("/v1/table/shop$multi/count_rows", { json: {} })).toBe(17);

  const mergePath = path.join(os.tmpdir(), `${Date.now()}-merge-filtered.arrow`);
  writeFileSync(
    mergePath,
    tableToIPC(
      new Table({
        id: vectorFromArray([0n, 1n, 2n, 100n], new Int64()),
        name: vectorFromArray(["up", "kept", "up", "new"], new Utf8()),
        score: vectorFromArray([100, -1, 100, 5], new Float64()),
      }),
      "file",
    ),
  );
  await page.getByRole("radio", { name: "Merge (upsert)" }).check();
  await page.getByRole("group", { name: "Key columns" }).getByRole("checkbox", { name: "id" }).check();
  await page.getByLabel("Update only where").fill("target.score < source.score");
  await page.getByRole("checkbox", { name: "Delete table rows missing from the file" }).check();
  await page.getByLabel("Delete only where").fill("id >= 13");
  await page.getByLabel("Choose files to upload").setInputFiles(mergePath);
  await page.getByRole("button", { name: "Merge into table" }).click();
  await expect(page.getByTestId("upload-result").last()).toContainText("1 inserted, 2 updated, 4 deleted → version 4");
  expect(await call("/v1/table/shop$multi/count_rows", { json: {} })).toBe(14);
  expect(await call("/v1/table/shop$multi/count_rows", { json: { predicate: "name = 'up' AND score = 100" } })).toBe(2);
  expect(await call("/v1/table/shop$multi/count_rows", { json: { predicate: "id = 1 AND name = 'item-1' AND score = 0.5" } })).toBe(1);
  expect(await call("/v1/table/shop$multi/count_rows", { json: { predicate: "id >= 13 AND id < 100" } })).toBe(0);
});

test("switch databases from the header, and every link keeps the database", async ({ page }) => {
  await call("/v1/admin/databases/create", { json: { name: "analytics" } });
  await call("/v1/namespace/metrics/create", { json: {}, database: "analytics" });
  await call("/v1/table/metrics$daily/create", { body: rows(0, 7), database: "analytics" });
  await signInWithKey(page);
  await page.getByRole("combobox", { name: "Database" }).selectOption("analytics");
  await expect(page).toHaveURL(/\?db=analytics$/);
  await hydrated(page);
  const tree = page.getByRole("navigation", { name: "Catalog" });
  await expect(tree.getByRole("link", { name: "metrics" })).toBeVisible();
  await expect(tree.getByRole("link", { name: "shop" })).toHaveCount(0);
  await page
    .getByRole("list", { name: "Child namespaces" })
    .getByRole("link", { name: /metrics/ })
    .click();
  await expect(page).toHaveURL(/\/browse\/metrics\?db=analytics$/);
  await page.getByRole("main").getByRole("link", { name: /daily/ }).first().click();
  await expect(page).toHaveURL(/\/tables\/metrics\/daily\?db=analytics$/);
  await expect(page.getByTestId("overview-facts")).toContainText("7");
  await page.getByRole("navigation", { name: "Table sections" }).getByRole("link", { name: "Versions" }).click();
  await expect(page).toHaveURL(/tab=versions/);
  await expect(page).toHaveURL(/db=analytics/);
  await expect(page.getByTestId("version-row-1")).toBeVisible();
  await page.reload();
  await hydrated(page);
  await expect(page.getByRole("combobox", { name: "Database" })).toHaveValue("analytics");
  await page.getByRole("combobox", { name: "Database" }).selectOption("default");
  await expect(page).not.toHaveURL(/db=/);
  await expect(page.getByRole("navigation", { name: "Catalog" }).getByRole("link", { name: "shop" })).toBeVisible();
});

test("a root whose tables all sit at the top level says how namespaces are made, and the tree shows them", async ({ page }) => {
  await call("/v1/admin/databases/create", { json: { name: "flat" } });
  await call("/v1/table/loose/create", { body: rows(0, 3), database: "flat" });
  await signInWithKey(page, undefined, "/?db=flat");
  await expect(page.getByRole("main").getByRole("link", { name: /loose/ }).first()).toBeVisible();
  await expect(page.getByRole("main")).toContainText("No namespaces yet: tables can sit at the root");
  const tree = page.getByRole("navigation", { name: "Catalog" });
  await expect(tree.getByRole("link", { name: "loose" })).toHaveAttribute("href", "/tables/loose?db=flat");
  await shots(page, "flat-root");

  // A namespace offers to open only when it holds something; the one holding the table shown is open.
  await call("/v1/namespace/empty/create", { json: {}, database: "flat" });
  await call("/v1/namespace/full/create", { json: {}, database: "flat" });
  await call("/v1/table/full$inner/create", { body: rows(0, 2), database: "flat" });
  await page.reload();
  await expect(tree.getByRole("link", { name: "empty" })).toBeVisible();
  await expect(tree.getByRole("button", { name: "Expand empty" })).toHaveCount(0);
  await tree.getByRole("button", { name: "Expand full" }).click();
  await tree.getByRole("link", { name: "inner" }).click();
  await expect(page).toHaveURL(/\/tables\/full\/inner\?db=flat$/);
  await expect(tree.getByRole("link", { name: "inner" })).toHaveAttribute("aria-current", "page");
  await expect(tree.getByRole("button", { name: "Collapse full" })).toBeVisible();
});

test("the theme choice is remembered across reloads and rendered by the server", async ({ page }) => {
  await signInWithKey(page);
  const themes = page.getByRole("radiogroup", { name: "Theme" });
  await themes.getByRole("radio", { name: "dark" }).click();
  await expect(page.locator("html")).toHaveClass(/\bdark\b/);
  await page.reload();
  await expect(page.locator("html")).toHaveClass(/\bdark\b/);
  await hydrated(page);
  await expect(themes.getByRole("radio", { name: "dark" })).toHaveAttribute("aria-checked", "true");
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await themes.getByRole("radio", { name: "light" }).click();
  await page.reload();
  await expect(page.locator("html")).toHaveClass(/\blight\b/);
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).not.toBe(background);
  await themes.getByRole("radio", { name: "system" }).click();
});

test("an upload in flight can be cancelled, and nothing is written", async ({ page }) => {
  await call("/v1/table/shop$cancel/create", { body: rows(0, 5) });
  await signInWithKey(page, undefined, "/tables/shop/cancel?tab=upload");
  // Hold the request at the browser's door so that it is still in flight when the operator cancels, then let it go
  // on: had the cancel not stopped it, it would reach the server now and add its rows.
  let released: Promise<void> | undefined;
  await page.route("**/v1/table/shop%24cancel/insert**", (route) => {
    released = new Promise((r) => setTimeout(r, 2000)).then(() => route.continue().catch(() => undefined));
    return released;
  });
  const aborted = page.waitForEvent("requestfailed", (request) => request.url().includes("/insert"));
  await page.getByLabel("Choose files to upload").setInputFiles(csvFile("cancel.csv", ["id,name,score", "100,apple,1.5", "101,pear,2"]));
  await expect(page.getByTestId("conversion-summary")).toContainText("2 rows ready");
  await page.getByRole("button", { name: "Insert into table" }).click();
  await page.getByRole("button", { name: "Cancel", exact: true }).click();
  expect((await aborted).failure()?.errorText).toContain("ERR_ABORTED");
  await expect(page.getByRole("alert").filter({ hasText: "cancelled" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Insert into table" })).toBeEnabled();
  await released;
  await page.unroute("**/v1/table/shop%24cancel/insert**");
  const versions = (await call("/v1/table/shop$cancel/version/list", { json: {} })) as unknown as { versions: unknown[] };
  expect(versions.versions).toHaveLength(1);
  expect(await call("/v1/table/shop$cancel/count_rows", { json: {} })).toBe(5);
});

test("administration pages in both themes", async ({ page }) => {
  await signInWithKey(page, undefined, "/keys");
  await expect(page.getByRole("heading", { name: "API keys", level: 1 })).toBeVisible();
  await shots(page, "admin-keys");
  await page.goto("/access");
  await hydrated(page);
  await expect(page.getByRole("heading", { name: "Access", level: 1 })).toBeVisible();
  await shots(page, "admin-access");
  await page.goto("/audit");
  await hydrated(page);
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  await shots(page, "admin-audit");
  await page.goto("/docs");
  await shots(page, "api-reference");
});

test("the documentation beside the API reference: a page, its anchors, and links that stay in the console", async ({ page }) => {
  await signInWithKey(page, undefined, "/docs/operations");
  await hydrated(page);
  await expect(page.getByRole("heading", { name: "Operations", level: 1 })).toBeVisible();
  await expect(page.locator("h2#metrics")).toHaveText(/Metrics/);
  await expect(page.getByRole("navigation", { name: "Documentation" }).getByRole("link", { name: "Operations" })).toHaveAttribute("aria-current", "page");
  await shots(page, "docs-operations");
  await page.getByTestId("doc-page").getByRole("link", { name: "read cache", exact: true }).click();
  await expect(page).toHaveURL(/\/docs\/object-storage#the-read-cache$/);
  await expect(page.locator("h2#the-read-cache")).toBeVisible();
  await page.getByRole("navigation", { name: "Documentation" }).getByRole("link", { name: "Overview" }).click();
  await expect(page.getByRole("heading", { name: "Quiver", level: 1 })).toBeVisible();
  await page.getByRole("navigation", { name: "Documentation" }).getByRole("link", { name: "API reference" }).click();
  await expect(page).toHaveURL(/\/docs$/);
});

test("create a declared-only table from a 50 MB CSV with chosen types, with progress", async ({ page }) => {
  test.setTimeout(180_000);
  await call("/v1/table/shop$big/declare", { json: {} });
  const lines = ["id,label,amount,flag"];
  let i = 0;
  let size = 0;
  while (size < 52 * 1024 * 1024) {
    const line = `${i},label-number-${i}-${"x".repeat(20)},${(i * 0.25).toFixed(2)},${i % 2 === 0}`;
    lines.push(line);
    size += line.length + 1;
    i++;
  }
  const csv = csvFile("big.csv", lines);
  await signInWithKey(page, undefined, "/tables/shop/big?tab=upload");
  await page.getByLabel("Choose files to upload").setInputFiles(csv);
  await expect(page.getByLabel("Type of id")).toHaveValue("int64");
  await page.getByLabel("Type of amount").selectOption("double");
  await page.getByRole("button", { name: "Check all rows" }).click();
  await expect(page.getByTestId("conversion-summary")).toContainText(`${i.toLocaleString("en-US")} rows ready, every row converts`, { timeout: 120_000 });
  await page.getByRole("button", { name: "Insert into table" }).click();
  await expect(page.getByTestId("upload-result")).toContainText(`${i.toLocaleString("en-US")} inserted`, { timeout: 120_000 });
  expect(await call("/v1/table/shop$big/count_rows", { json: {} })).toBe(i);
  const described = await call("/v1/table/shop$big/describe", { json: {} });
  expect((described.schema as { fields: Array<{ name: string; type: { type: string } }> }).fields.map((f) => [f.name, f.type.type])).toEqual([
    ["id", "int64"],
    ["label", "string"],
    ["amount", "double"],
    ["flag", "bool"],
  ]);
});

test("the data grid keeps long values and vectors in their cells, shows doubles readably, and expands on demand", async ({ page }) => {
  const embedding = new FixedSizeList(128, new Field("item", new Float32()));
  const values = Float32Array.from({ length: 2 * 128 }, (_, i) => i / 10);
  const vectors = makeVector({ type: embedding, length: 2, nullCount: 0, child: makeVector(values).data[0] });
  const body = tableToIPC(
    new Table({
      id: vectorFromArray([1n, 2n], new Int64()),
      price: vectorFromArray([9.450000000000001, 0.1 + 0.2], new Float64()),
      embedding: vectors,
      note: vectorFromArray(["short", "a long note ".repeat(40)], new Utf8()),
    }),
    "stream",
  );
  await call("/v1/table/shop$vectors/create", { body });
  await signInWithKey(page, undefined, "/tables/shop/vectors?tab=data");
  await hydrated(page);
  const cells = page.getByTestId("data-cell");
  await expect(cells).toHaveCount(8);
  await expect(cells.nth(1)).toHaveText("9.45");
  await expect(cells.nth(5)).toHaveText("0.3");
  await expect(cells.nth(2)).toHaveText("[128] 0, 0.1, 0.2, …");
  // Numbers read right-aligned (the id and the price), text and vectors from the left.
  const alignments = await cells.evaluateAll((tds) => tds.slice(0, 4).map((td) => getComputedStyle(td).textAlign));
  expect(alignments).toEqual(["right", "right", "left", "left"]);
  // No value runs over the next column: each cell's text ends inside the cell, or is clipped by a box that does.
  const overrunning = await cells.evaluateAll((tds) =>
    tds.flatMap((td, i) => {
      const inner = td.firstElementChild!;
      const range = document.createRange();
      range.selectNodeContents(inner);
      const cellRight = td.getBoundingClientRect().right;
      const fits = range.getBoundingClientRect().right <= cellRight + 0.5;
      const clipped = getComputedStyle(inner).overflowX === "hidden" && inner.getBoundingClientRect().right <= cellRight + 0.5;
      return fits || clipped ? [] : [i];
    }),
  );
  expect(overrunning).toEqual([]);
  await cells.nth(6).getByRole("button").click();
  await expect(page.getByRole("dialog")).toContainText("[12.8, 12.9, 13, 13.1,");
  await expect(page.getByRole("dialog")).toContainText("25.5]");
});

test("a table's health, compaction and version cleanup with its preview, from the overview", async ({ page }) => {
  await call("/v1/table/shop$events/create", { body: rows(0, 10) });
  for (let i = 1; i <= 11; i++) await call("/v1/table/shop$events/insert", { body: rows(i * 10, i * 10 + 10) });
  await call("/v1/table/shop$events/delete", { json: { predicate: "id < 5" } });
  await call("/v1/table/shop$events/tags/create", { json: { tag: "audit", version: 2 } });
  await signInWithKey(page, undefined, "/tables/shop/events");
  await hydrated(page);
  const health = page.getByTestId("table-health");
  await expect(health).toContainText("12 (12 small)");
  await expect(health).toContainText("compaction: 12 small fragments (at 10)");
  await expect(page.getByText("No maintenance has run on this table.")).toBeVisible();

  await page.getByRole("button", { name: "Compact" }).click();
  const history = page.getByRole("list", { name: "Maintenance history" });
  await expect(history.getByRole("listitem")).toHaveCount(1);
  await expect(history.getByRole("listitem").first()).toContainText("succeeded");
  await expect(history.getByRole("listitem").first()).toContainText("12 → 1 fragments, 5 deleted rows removed");
  await expect(health).toContainText("1 (1 small)");

  await page.getByRole("button", { name: "Clean up versions…" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Older than").fill("0");
  await dialog.getByRole("button", { name: "Preview" }).click();
  const preview = dialog.getByTestId("cleanup-preview");
  // 15 versions: the creation, 11 inserts, the delete and the compaction's two commits; the latest and the tagged one stay.
  await expect(preview).toContainText("13 versions would go (v1, v3, v4,");
  await expect(preview).toContainText("Kept by tags: audit (v2)");
  await dialog.getByRole("button", { name: "Remove 13 versions" }).click();
  await expect(dialog).toBeHidden();
  await expect(history.getByRole("listitem").first()).toContainText("Version cleanup");
  await expect(history.getByRole("listitem").first()).toContainText("13 versions removed");
  await expect(health).toContainText(/Versions\s*2,/);
  await shots(page, "table-maintenance");
});

test("the jobs of every table under load: a failed compaction with its reason, filters, and a link to its table", async ({ page }) => {
  await call("/v1/namespace/ops/create", { json: {} });
  await call("/v1/table/ops$broken/create", { body: rows(0, 10) });
  await call("/v1/table/ops$busy/create", { body: rows(0, 10) });
  // Writes go on beside the page all along; every maintenance job of ops$broken fails (the e2e server's failure point).
  let loading = true;
  const load = (async () => {
    for (let i = 1; loading; i++) await call("/v1/table/ops$busy/insert", { body: rows(i * 10, i * 10 + 10) });
  })();
  try {
    await call("/v1/table/ops$broken/maintenance/compact", { json: {} });
    await signInWithKey(page, undefined, "/jobs");
    await hydrated(page);
    const jobRows = page.getByTestId("job-row");
    const broken = jobRows.filter({ hasText: "ops$broken" });
    await expect(broken).toHaveCount(1);
    await expect(broken).toContainText("failed");
    await expect(broken).toContainText("the store failed during the compact");
    await expect(jobRows.filter({ hasText: "shop$events" }).first()).toContainText("succeeded");
    // The policy (off on this server but for tables that turn it on) and the heavy requests beside the jobs.
    await expect(page.getByRole("region", { name: "Automatic maintenance" })).toContainText("Off, but for tables whose properties turn it on");
    await expect(page.getByRole("region", { name: "Heavy requests now" })).toBeVisible();
    await expect(page.getByRole("region", { name: "Long or failed requests lately" })).toBeVisible();
    await shots(page, "jobs");
    await page.getByLabel("Filter the requests").fill("no such operation");
    await expect(page.getByRole("region", { name: "Heavy requests now" })).toContainText("None matches.");
    await expect(page.getByRole("region", { name: "Long or failed requests lately" })).toContainText("None matches.");
    await page.getByLabel("Filter the requests").fill("");
    await page.getByLabel("Status", { exact: true }).selectOption("failed");
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await expect(jobRows).toHaveCount(1);
    await expect(jobRows.first()).toContainText("ops$broken");
    await jobRows.first().getByRole("link", { name: "ops$broken" }).click();
    await expect(page).toHaveURL(/\/tables\/ops\/broken/);
  } finally {
    loading = false;
    await load;
  }
});

test("the operations page under load: a failed compaction and refused calls show in the next refresh, the view kept across a reload", async ({ page }) => {
  // The jobs test's tables when it ran first, made here when it did not.
  const ensure = (path: string, init: Parameters<typeof call>[1]) => call(path, init).catch((err: Error) => expect(err.message).toMatch(/answered 409/));
  await ensure("/v1/namespace/ops/create", { json: {} });
  await ensure("/v1/table/ops$broken/create", { body: rows(0, 10) });
  await ensure("/v1/table/ops$busy/create", { body: rows(0, 10) });
  let loading = true;
  const load = (async () => {
    for (let i = 1; loading; i++) await call("/v1/table/ops$busy/insert", { body: rows(i * 10, i * 10 + 10) });
  })();
  try {
    await signInWithKey(page, undefined, "/operations?window=900&refresh=5000");
    await hydrated(page);
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Operations", exact: true })).toHaveAttribute("aria-current", "page");
    const instances = page.getByRole("region", { name: "Instances of the root" });
    await expect(instances.getByRole("row")).toHaveCount(2);
    await expect(instances).toContainText("answered this page");
    await expect(instances).toContainText("up");
    const requests = page.getByRole("figure", { name: "Requests per second by operation" });
    await expect(requests.getByRole("button", { name: /InsertIntoTable/ })).toBeVisible();
    const failedJobs = page.getByTestId("total-Maintenance failed");
    const before = Number(await failedJobs.textContent());
    const errors = Number(await page.getByTestId("total-Errors").textContent());

    // A compaction that fails, and calls refused for their credentials: both in the next refresh (every 5 s).
    await call("/v1/table/ops$broken/maintenance/compact", { json: {} });
    for (let i = 0; i < 3; i++) expect((await fetch(new URL("/v1/namespace/ops/describe", page.url()), { method: "POST", body: "{}" })).status).toBe(401);
    await expect(failedJobs).toHaveText(String(before + 1), { timeout: 15_000 });
    await expect.poll(async () => Number(await page.getByTestId("total-Errors").textContent()), { timeout: 15_000 }).toBeGreaterThanOrEqual(errors + 3);
    const maintenance = page.getByRole("figure", { name: "Maintenance jobs finished per minute" });
    await expect(maintenance.getByRole("button", { name: /compact failed/ })).toBeVisible();
    await expect(page.getByRole("figure", { name: "Errors and refusals per second by status" }).getByRole("button", { name: /401/ })).toBeVisible();
    await shots(page, "operations");

    // The window is the operator's, in the address: a reload keeps it, and the server kept the figures.
    await page.getByLabel("Window").selectOption({ label: "last hour" });
    await expect(page).toHaveURL(/window=3600/);
    await page.reload();
    await hydrated(page);
    await expect(page.getByLabel("Window")).toHaveValue("3600");
    await expect(page.getByLabel("Refresh")).toHaveValue("5000");
    await expect(page.getByTestId("total-Maintenance failed")).toHaveText(String(before + 1));
    await expect(page.getByRole("figure", { name: "Requests per second by operation" }).getByRole("button", { name: /InsertIntoTable/ })).toBeVisible();
    // A line hidden from its legend, and the values under the pointer.
    const insert = requests.getByRole("button", { name: /InsertIntoTable/ });
    await insert.click();
    await expect(insert).toHaveAttribute("aria-pressed", "false");
    await requests.locator("svg").hover();
    await expect(requests.getByRole("tooltip")).toBeVisible();

    // A metrics key's holder reads the page, and nothing of the catalog or its administration.
    const { key } = await call("/v1/admin/keys/create", { json: { name: "grafana-reader", role: "metrics" } });
    await page.context().clearCookies();
    await signInWithKey(page, key as string, "/operations");
    await hydrated(page);
    const nav = page.getByRole("navigation", { name: "Main" });
    await expect(nav.getByRole("link", { name: "Operations" })).toBeVisible();
    for (const hidden of ["Jobs", "API keys", "Access", "Audit log"]) await expect(nav.getByRole("link", { name: hidden })).toHaveCount(0);
    await expect(page.getByRole("figure", { name: "Requests per second by operation" }).getByRole("button", { name: /InsertIntoTable/ })).toBeVisible();
    await expect(page.getByTestId("total-Maintenance failed")).toHaveText(String(before + 1));
  } finally {
    loading = false;
    await load;
  }
});

test("build and drop indices of every kind a column takes, then search by vector, by a row, and by text, with the plan", async ({ page }) => {
  const DIM = 8;
  const count = 300;
  const ids = Array.from({ length: count }, (_, i) => i);
  const embedding = new FixedSizeList(DIM, new Field("item", new Float32()));
  const docs = (ids: number[]) => {
    const values = Float32Array.from(ids.flatMap((i) => Array.from({ length: DIM }, (_, d) => Math.cos(i * 0.7 + d) + (d === i % DIM ? 1 : 0))));
    return tableToIPC(
      new Table({
        id: vectorFromArray(ids.map(BigInt), new Int64()),
        title: vectorFromArray(
          ids.map((i) => (i % 30 === 0 ? `banana bread ${i}` : `apple pie ${i}`)),
          new Utf8(),
        ),
        embedding: makeVector({ type: embedding, length: ids.length, nullCount: 0, child: makeVector(values).data[0] }),
      }),
      "stream",
    );
  };
  await call("/v1/table/shop$docs/create", { body: docs(ids) });
  await signInWithKey(page, undefined, "/tables/shop/docs?tab=indexes");
  await hydrated(page);
  await expect(page.getByText("This table has no index")).toBeVisible();
  const form = page.getByRole("form", { name: "Build an index" });
  await form.getByLabel("Column").selectOption("embedding");
  await expect(form.getByLabel("Type")).toHaveValue("IVF_PQ");
  await expect(form.getByText("Vectors of dimension 8.")).toBeVisible();
  await form.getByLabel("Sub-vectors").fill("3");
  await expect(form.getByRole("alert")).toHaveText("sub-vectors must divide the dimension 8; 3 does not");
  await expect(form.getByRole("button", { name: "Build index" })).toBeDisabled();
  await form.getByLabel("Sub-vectors").fill("2");
  await form.getByLabel("Partitions").fill("2");
  await form.getByRole("button", { name: "Build index" }).click();
  const list = page.getByRole("table", { name: "Indexes" });
  await expect(list.getByRole("row").filter({ hasText: "embedding_idx" })).toContainText("IVF_PQ");
  await expect(list.getByRole("row").filter({ hasText: "embedding_idx" })).toContainText("300");
  await expect(list.getByRole("row").filter({ hasText: "embedding_idx" })).toContainText("l2");
  await expect(list.getByRole("row").filter({ hasText: "embedding_idx" })).toContainText("num sub vectors 2");

  await form.getByLabel("Column").selectOption("title");
  await form.getByLabel("Type").selectOption("FTS");
  await expect(form.getByText("Full-text search ranked by BM25.")).toBeVisible();
  await form.getByRole("button", { name: "Build index" }).click();
  await expect(list.getByRole("row").filter({ hasText: "title_idx" })).toContainText("FTS");
  await form.getByLabel("Column").selectOption("id");
  await form.getByLabel("Type").selectOption("BITMAP");
  await form.getByLabel("Name").fill("id_bitmap");
  await form.getByRole("button", { name: "Build index" }).click();
  await expect(list.getByRole("row").filter({ hasText: "id_bitmap" })).toContainText("BITMAP");
  await list.getByRole("button", { name: "Drop index id_bitmap" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Drop index" }).click();
  await expect(list.getByRole("row").filter({ hasText: "id_bitmap" })).toHaveCount(0);
  await expect(page.getByTestId("unindexed-rows")).toHaveCount(0);

  // Rows written after the build are not in the indices until maintenance indexes them.
  await call("/v1/table/shop$docs/insert", { body: docs(Array.from({ length: 20 }, (_, i) => count + i)) });
  await page.reload();
  await expect(page.getByTestId("unindexed-rows")).toContainText("20 rows written since the indexes were built");
  await shots(page, "table-indexes");
  await page.getByRole("button", { name: "Index new rows" }).click();
  await expect(page.getByTestId("unindexed-rows")).toHaveCount(0, { timeout: 30_000 });
  await expect(list.getByRole("row").filter({ hasText: "embedding_idx" })).toContainText("320");

  await page.getByRole("link", { name: "Data" }).click();
  await page.getByRole("button", { name: "Full-text search" }).click();
  const text = page.getByRole("form", { name: "Full-text search" });
  await text.getByLabel("Words").fill("banana");
  await text.getByRole("button", { name: "Search" }).click();
  await expect(page.getByTestId("search-count")).toHaveText("10 matching rows, best first");
  const results = page.getByRole("table", { name: "Search results" });
  await expect(results.getByRole("columnheader", { name: "_score" })).toBeVisible();
  await expect(results).toContainText("banana bread 0");
  await text.getByRole("button", { name: "Explain plan" }).click();
  await expect(page.getByTestId("query-plan")).toContainText(/MatchQuery|FTS/i);
  await page.getByRole("dialog").getByRole("button", { name: "Close" }).click();

  await page.getByRole("button", { name: "Browse" }).click();
  await page.getByLabel("Filter expression").fill("id = 7");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page.getByTestId("data-range")).toContainText("of 1 matching");
  await page.getByLabel("Filter expression").fill("");
  await page.getByRole("button", { name: "Apply" }).click();
  await page.getByRole("table", { name: "Rows" }).getByRole("row").nth(8).getByRole("button", { name: "Similar" }).click();
  const vector = page.getByRole("form", { name: "Vector search" });
  // Similar searches at once, with the row's vector at its own precision (no float32 noise such as 0.8799999952316284).
  await expect(page.getByTestId("search-count")).toHaveText("10 nearest rows, nearest first");
  await expect(results.getByTestId("data-cell").first()).toHaveText("7");
  await expect(vector.getByLabel("Query vector")).not.toHaveValue("");
  expect(await vector.getByLabel("Query vector").inputValue()).not.toMatch(/\d\.\d{10,}/);
  await vector.getByLabel("Results").fill("3");
  await vector.getByRole("button", { name: "Search" }).click();
  await expect(page.getByTestId("search-count")).toHaveText("3 nearest rows, nearest first");
  await expect(results.getByRole("columnheader", { name: "_distance" })).toBeVisible();
  await expect(results.getByTestId("data-cell").first()).toHaveText("7");
  // Distances are 32-bit floats, read at that precision, and right-aligned like every number, cut or not.
  const distance = results.getByRole("row").nth(2).getByTestId("data-cell").last();
  await expect(distance).toHaveText(/^0\.\d{1,9}$/);
  const [cell, value] = await Promise.all([distance.boundingBox(), distance.locator("button, span").first().boundingBox()]);
  expect(cell!.x + cell!.width - (value!.x + value!.width)).toBeLessThan(16);
  await shots(page, "table-search");
});

test("the data grid orders by a column, and a row opens under its own key", async ({ page }) => {
  await call("/v1/table/shop$ordered/create", { body: rows(0, 30) });
  // Updated rows move to the end of the table's own order.
  await call("/v1/table/shop$ordered/update", { json: { predicate: "id < 3", updates: [["name", "'moved'"]] } });
  const favicon: number[] = [];
  page.on("response", (res) => {
    if (new URL(res.url()).pathname === "/favicon.ico") favicon.push(res.status());
  });
  await signInWithKey(page, undefined, "/tables/shop/ordered?tab=data");
  const grid = page.getByRole("table", { name: "Rows" });
  const firstId = () => grid.getByRole("row").nth(1).getByTestId("data-cell").first();
  // By default the rows stay in their places, ordered by the table's id, not moved to the end by the update.
  await expect(grid.getByRole("columnheader", { name: "id ▲" })).toHaveAttribute("aria-sort", "ascending");
  await expect(firstId()).toHaveText("0");
  await expect(page.getByTestId("data-range")).toContainText("by id, the table's id");
  await grid.getByRole("columnheader", { name: "id ▲" }).getByRole("button").click();
  await expect(firstId()).toHaveText("29");
  await expect(page).toHaveURL(/sort=-id/);
  await grid.getByRole("columnheader", { name: "name" }).getByRole("button").click();
  await expect(grid.getByRole("columnheader", { name: "name ▲" })).toHaveAttribute("aria-sort", "ascending");
  await expect(page.getByTestId("data-range")).toContainText("by name, ascending");
  await expect(page).toHaveURL(/sort=name/);
  await grid.getByRole("columnheader", { name: "name ▲" }).getByRole("button").click();
  await grid.getByRole("columnheader", { name: "name ▼" }).getByRole("button").click();
  await expect(grid.getByRole("columnheader", { name: "id ▲" })).toBeVisible();
  await expect(page).not.toHaveURL(/sort=/);
  await grid.getByRole("columnheader", { name: "id ▲" }).getByRole("button").click();
  await expect(firstId()).toHaveText("29");
  await grid.getByRole("row").nth(1).getByRole("button", { name: "Open" }).click();
  await expect(page.getByRole("dialog")).toContainText("Row id 29");
  await shots(page, "table-row-detail");
  expect(favicon.filter((status) => status >= 400)).toEqual([]);
});

test("media inline: thumbnails, players, a row's detail at full size, a script-carrying SVG that runs nothing, search results with their media", async ({
  page,
}) => {
  const values = await mediaValues();
  await call("/v1/table/shop$gallery/create", { body: mediaTable(values) });
  const mediaResponses: Array<{ url: string; bytes: number }> = [];
  page.on("response", (res) => {
    if (res.url().includes("/media?"))
      void res.body().then(
        (b) => mediaResponses.push({ url: res.url(), bytes: b.length }),
        () => undefined,
      );
  });
  await signInWithKey(page, undefined, "/tables/shop/gallery?tab=data");
  const grid = page.getByRole("table", { name: "Rows" });
  const thumbnails = grid.getByTestId("media-thumbnail");
  // Row by row: the png in `media` and in the blob column, the jpeg, the svg.
  await expect(thumbnails).toHaveCount(4);
  const natural = () =>
    thumbnails.evaluateAll((images) =>
      (images as HTMLImageElement[]).map((img) => (img.complete && img.naturalWidth ? `${img.naturalWidth}x${img.naturalHeight}` : "")),
    );
  await expect.poll(natural).toEqual(["40x30", "40x30", "64x48", "20x10"]);
  await expect(grid.getByTestId("media-audio")).toHaveCount(1);
  await expect(grid.getByTestId("media-video")).toHaveCount(1);
  await expect(grid).toContainText("40 B · 0x00254a6f94b9de03284d7297bce1062b…");
  await expect(grid).toContainText("2.0 MiB");
  // Nothing of a value larger than a thumbnail reached the page: not the 2 MiB blob, not the sound or the film.
  await expect.poll(() => mediaResponses.length).toBeGreaterThanOrEqual(4);
  expect(mediaResponses.every((r) => r.url.includes("thumbnail=") && r.bytes < 4096)).toBe(true);
  await shots(page, "table-media");

  // The sound's row, whole: a player that knows the sound's length.
  await grid.getByRole("row").nth(3).getByRole("button", { name: "Open" }).click();
  const detail = page.getByTestId("row-detail");
  await expect(detail).toContainText("wav");
  const duration = (player: ReturnType<typeof detail.getByTestId>) =>
    player.evaluate((el) => (el as HTMLMediaElement).duration).then((d) => (Number.isFinite(d) ? Math.round(d * 10) / 10 : null));
  await expect.poll(() => duration(detail.getByTestId("media-player"))).toBe(1.5);
  await expect(detail.getByRole("link", { name: /Download \(audio\/wav/ })).toHaveAttribute("href", /download=true/);
  await page.getByRole("button", { name: "Close" }).last().click();
  await grid.getByRole("row").nth(4).getByRole("button", { name: "Open" }).click();
  await expect.poll(() => duration(detail.getByTestId("media-player"))).toBe(2);
  await page.getByRole("button", { name: "Close" }).last().click();

  // The JPEG at full size.
  await grid.getByTestId("media-thumbnail").nth(2).click();
  const full = detail.getByTestId("media-full");
  await expect.poll(() => full.evaluate((img) => `${(img as HTMLImageElement).naturalWidth}x${(img as HTMLImageElement).naturalHeight}`)).toBe("64x48");
  await shots(page, "table-media-row");
  await page.getByRole("button", { name: "Close" }).last().click();

  // The SVG carries a script: shown as a picture it runs nothing, and opened on its own it runs nothing either.
  const svgCalls: string[] = [];
  page.on("request", (req) => {
    if (req.url().includes("from=svg")) svgCalls.push(req.url());
  });
  await grid.getByTestId("media-thumbnail").nth(3).click();
  await expect(detail.getByTestId("media-full")).toBeVisible();
  const svgUrl = await detail.getByTestId("media-full").getAttribute("src");
  await page.getByRole("button", { name: "Close" }).last().click();
  const svgPage = await page.context().newPage();
  await svgPage.goto(svgUrl!);
  await svgPage.waitForTimeout(300);
  expect(await svgPage.evaluate(() => (window as unknown as { __svgRan?: boolean }).__svgRan ?? false)).toBe(false);
  await svgPage.close();
  expect(svgCalls).toEqual([]);

  // Rows like row 0, by its embedding: the results show their media too.
  await grid.getByRole("row").nth(1).getByRole("button", { name: "Similar" }).click();
  const vector = page.getByRole("form", { name: "Vector search" });
  await expect(vector.getByLabel("Query vector")).not.toHaveValue("");
  await vector.getByRole("button", { name: "Search" }).click();
  await expect(page.getByTestId("search-count")).toHaveText("7 nearest rows, nearest first");
  const results = page.getByRole("table", { name: "Search results" });
  await expect(results.getByTestId("media-thumbnail").first()).toBeVisible();
  await expect(results.getByTestId("media-audio")).toHaveCount(1);

  // A table LanceDB's own client wrote (its remote client, through the API) shows its media the same way.
  const db = await lancedb.connect("db://default", { apiKey: adminKey(), hostOverride: origin() });
  await db.createTable(
    "client_gallery",
    new Table({
      id: vectorFromArray([0n, 1n, 2n, 3n], new Int64()),
      media: vectorFromArray([values.png, values.jpeg, values.wav, values.mp4], new Binary()),
    }),
  );
  await page.goto("/tables/client_gallery?tab=data");
  await hydrated(page);
  const clientGrid = page.getByRole("table", { name: "Rows" });
  await expect
    .poll(() =>
      clientGrid
        .getByTestId("media-thumbnail")
        .evaluateAll((images) => (images as HTMLImageElement[]).map((img) => (img.complete ? `${img.naturalWidth}x${img.naturalHeight}` : ""))),
    )
    .toEqual(["40x30", "64x48"]);
  await expect(clientGrid.getByTestId("media-audio")).toHaveCount(1);
  await expect(clientGrid.getByTestId("media-video")).toHaveCount(1);

  // A viewer of another namespace gets 403 from the media route.
  const { key } = (await call("/v1/admin/keys/create", {
    json: { name: "outsider", role: "viewer", scope: { kind: "namespace", id: ["elsewhere"] } },
  })) as unknown as {
    key: string;
  };
  const refused = await apiAs(key, new URL(svgUrl!, origin()).pathname + new URL(svgUrl!, origin()).search);
  expect(refused.status).toBe(403);
  expect(await refused.json()).toMatchObject({ status: 403, code: ErrorCode.PermissionDenied });
});

test("what a version changed: counts, schema, and on a table with stable row ids the inserted and updated rows with the changed cells marked", async ({
  page,
}) => {
  await call("/v1/table/shop$changing/declare", { json: { properties: { "quiver.stable_row_ids": "true" } } });
  await call("/v1/table/shop$changing/insert", { body: rows(0, 5) });
  await call("/v1/table/shop$changing/insert", { body: rows(5, 8) });
  await call("/v1/table/shop$changing/update", { json: { predicate: "id = 2", updates: [["name", "'renamed'"]] } });
  await call("/v1/table/shop$changing/delete", { json: { predicate: "id = 3" } });
  await signInWithKey(page, undefined, "/tables/shop/changing?tab=versions");
  await page.getByRole("link", { name: "What version 3 changed" }).click();
  await expect(page).toHaveURL(/tab=changes&to_version=3|to_version=3&tab=changes/);
  await expect(page.getByTestId("changes-range")).toHaveText("From version 2 to version 3");
  await expect(page.getByTestId("rows-updated")).toHaveText("1");
  await expect(page.getByTestId("rows-inserted")).toHaveText("0");
  const changed = page.getByRole("table", { name: "Updated rows" }).getByTestId("changed-cell");
  await expect(changed).toHaveCount(1);
  await expect(changed).toContainText("renamed");
  await expect(changed).toHaveAttribute("title", "was item-2");

  await page.getByLabel("From").selectOption("v:1");
  await page.getByLabel("To").selectOption("");
  await expect(page.getByTestId("changes-range")).toHaveText("From version 1 to version 4");
  await expect(page.getByTestId("rows-before")).toHaveText("5");
  await expect(page.getByTestId("rows-after")).toHaveText("7");
  await expect(page.getByTestId("rows-inserted")).toHaveText("3");
  await expect(page.getByTestId("rows-deleted")).toHaveText("1");
  await expect(page.getByRole("table", { name: "Inserted rows" }).getByTestId("changed-row")).toHaveCount(3);
  await expect(page.getByRole("table", { name: "Updated rows" }).getByTestId("changed-row")).toHaveCount(1);
  await shots(page, "table-changes");

  // A table without stable row ids says what it can: the rows each version held, and what made it.
  await call(`/v1/table/shop$plain_changes/create?properties=${encodeURIComponent(JSON.stringify({ "quiver.stable_row_ids": "false" }))}`, {
    body: rows(0, 10),
  });
  await call("/v1/table/shop$plain_changes/insert", { body: rows(10, 14) });
  await page.goto("/tables/shop/plain_changes?tab=changes");
  await hydrated(page);
  await expect(page.getByTestId("no-stable-row-ids")).toContainText("not which rows changed");
  await expect(page.getByTestId("rows-written")).toHaveText("4");
  await expect(page.getByTestId("rows-inserted")).toHaveCount(0);
  await expect(page.getByTestId("changes-version")).toHaveText(["v2 Insert 4 rows: 10 → 14 rows (+4)"]);
  await shots(page, "table-changes-plain");
});

test("Changes names the rows of a table LanceDB's client made with createTable", async ({ page }) => {
  const db = await lancedb.connect("db://default", { apiKey: adminKey(), hostOverride: origin() });
  const pets = await db.createTable(
    "pets",
    Array.from({ length: 6 }, (_, i) => ({ id: i, name: `pet-${i}` })),
  );
  await pets.add([{ id: 6, name: "pet-6" }]);
  await pets.update({ where: "id = 1", values: { name: "renamed" } });
  await pets.delete("id = 2");
  await signInWithKey(page, undefined, "/tables/pets?tab=changes&from_version=1");
  await expect(page.getByTestId("changes-range")).toHaveText("From version 1 to version 4");
  await expect(page.getByTestId("rows-inserted")).toHaveText("1");
  await expect(page.getByTestId("rows-updated")).toHaveText("1");
  await expect(page.getByTestId("rows-deleted")).toHaveText("1");
  await expect(page.getByRole("table", { name: "Updated rows" }).getByTestId("changed-cell")).toContainText("renamed");
  await shots(page, "table-changes-client");
});

test("the SQL workspace: completion, run, a chart, export, a saved query, history, an error marked in the text, cancel, media in the result", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await call("/v1/table/shop$sales/create", { body: rows(0, 150) });
  await call("/v1/table/shop$posters/create", { body: mediaTable(await mediaValues()) });
  await signInWithKey(page, undefined, "/sql");
  await expect(page.getByTestId("sql-tables")).toContainText("shop.items");
  const editor = page.getByTestId("sql-editor");
  const completions = page.locator(".cm-tooltip-autocomplete");
  /** Types a statement; `completing` leaves the completions it opened on screen, else they close. */
  const write = async (text: string, completing = false) => {
    await editor.focus();
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.press("Delete");
    await page.keyboard.type(text);
    if (!completing) await page.keyboard.press("Escape");
  };

  // Completion: a namespace's tables, then the named table's columns, then DuckDB's functions.
  await write("SELECT * FROM shop.it", true);
  await expect(completions.getByText("items", { exact: true })).toBeVisible();
  // CodeMirror takes no Enter for a completion in the first moments after it opens, so that typing on is not taken for one.
  await page.waitForTimeout(200);
  await page.keyboard.press("Enter");
  await expect(editor).toContainText("SELECT * FROM shop.items");
  await page.keyboard.type(" WHERE sco");
  await expect(completions.getByText("score", { exact: true })).toBeVisible();
  await write("SELECT approx_count_dis", true);
  await expect(completions.getByText("approx_count_distinct")).toBeVisible();
  await page.keyboard.press("Escape");

  // Run with Ctrl+Enter: the rows, what was read, a chart of the numbers.
  await write("SELECT id % 3 AS bucket, count(*) AS n, sum(score) AS total FROM shop.sales GROUP BY bucket ORDER BY bucket");
  await page.keyboard.press("ControlOrMeta+Enter");
  const grid = page.getByRole("table", { name: "Result" });
  await expect(grid.getByRole("row")).toHaveCount(4);
  await expect(grid.getByRole("row").nth(1)).toContainText("50");
  await expect(page.getByRole("status")).toContainText("3 rows");
  await page.getByText(/Read 1 table/).click();
  await expect(page.getByTestId("sql-sources")).toContainText("shop.sales v1: 150 rows of id, score");
  await page.getByRole("tab", { name: "Chart" }).click();
  const chart = page.getByTestId("result-chart");
  await expect(chart.locator("rect")).toHaveCount(3);
  await chart.getByRole("checkbox", { name: "total" }).check();
  await expect(chart.locator("rect")).toHaveCount(6);
  await shots(page, "sql-chart");

  // Export: the rows on screen as CSV and Parquet.
  const csv = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export as CSV" }).click();
  const csvText = await (await csv).createReadStream().then(async (s) => {
    let text = "";
    for await (const chunk of s) text += String(chunk);
    return text;
  });
  expect(csvText.split("\r\n")).toEqual(["bucket,n,total", "0,50,1837.5", "1,50,1862.5", "2,50,1887.5", ""]);
  const parquet = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export as Parquet" }).click();
  expect((await parquet).suggestedFilename()).toBe("result.parquet");

  // Saved, by name, on the server: still there after a reload, and loads into the editor.
  await page.getByRole("button", { name: "Save…" }).click();
  await page.getByRole("textbox", { name: "Name" }).fill("Buckets of items");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByTestId("sql-saved")).toContainText("Buckets of items");
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("sql-saved")).toContainText("Buckets of items");
  await expect(page.getByTestId("sql-history")).toContainText("GROUP BY bucket");
  await page.getByTestId("sql-saved").getByRole("button", { name: "Buckets of items", exact: true }).click();
  await expect(editor).toContainText("GROUP BY bucket ORDER BY bucket");

  // An error is marked where it is, with the server's message.
  await write("SELECT id,\n  nope FROM shop.sales");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(page.getByRole("region", { name: "Statement and result" }).getByRole("alert")).toContainText('Referenced column "nope" not found');
  await expect(page.locator(".cm-lintRange-error")).toHaveText("nope");
  await shots(page, "sql-error");

  // Cancel: the running query stops, and history says so.
  await write("SELECT count(*) FROM range(100000000) a, range(1000) b WHERE (a.range * b.range) % 7 = 1");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(page.getByRole("status")).toContainText("Running…");
  await page.getByRole("button", { name: "Cancel", exact: true }).click();
  await expect(page.getByRole("status")).not.toContainText("Running…");
  await expect(page.getByTestId("sql-history").locator("li").first()).toContainText("cancelled");

  // Media in a result: images from their own bytes, as the data grid shows them.
  await write("SELECT * FROM shop.posters ORDER BY id");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const thumbnails = page.getByRole("table", { name: "Result" }).getByTestId("media-thumbnail");
  await expect
    .poll(() =>
      thumbnails.evaluateAll((images) =>
        (images as HTMLImageElement[]).map((img) => (img.complete && img.naturalWidth ? `${img.naturalWidth}x${img.naturalHeight}` : "")),
      ),
    )
    .toEqual(expect.arrayContaining(["40x30", "64x48", "20x10"]));
  await shots(page, "sql-media");
});
