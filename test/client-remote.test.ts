/** LanceDB's remote client (`db://`), unchanged, against the real server: every table method it offers. */
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { onObjectStore, startServer, type TestServer } from "./server";

const arrow = createRequire(import.meta.url)("apache-arrow") as typeof import("apache-arrow");

let server: TestServer;
let db: lancedb.Connection;

const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("s", new arrow.Utf8(), true),
  new arrow.Field("x", new arrow.Float64(), true),
  new arrow.Field("vec", new arrow.FixedSizeList(4, new arrow.Field("item", new arrow.Float32(), true)), true),
]);
const data = (from: number, to: number, s = (i: number) => `s${i}`) =>
  lancedb.makeArrowTable(
    Array.from({ length: to - from }, (_, k) => {
      const i = from + k;
      return { id: BigInt(i), s: s(i), x: i * 1.5, vec: [i, i + 1, i + 2, i + 3] };
    }),
    { schema },
  );

beforeAll(async () => {
  server = await startServer();
  db = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url, clientConfig: { retryConfig: { retries: 1 } } });
});
afterAll(() => server?.stop());

describe("LanceDB remote client", () => {
  it("creates tables in every mode and reports duplicates as the errors it knows", async () => {
    const t = await db.createTable("items", data(0, 100));
    expect(await t.countRows()).toBe(100);
    await expect(db.createTable("items", data(0, 1))).rejects.toThrow(/already exists/);
    const existing = await db.createTable("items", data(0, 5), { existOk: true });
    expect(await existing.countRows()).toBe(100);
    const replaced = await db.createTable("scratch", data(0, 3));
    await db.createTable("scratch", data(0, 7), { mode: "overwrite" });
    expect(await replaced.countRows()).toBe(7);
    await db.createEmptyTable("empty", schema);
    expect(await (await db.openTable("empty")).countRows()).toBe(0);
    await expect(db.openTable("nope")).rejects.toThrow(/not found/i);
  });

  it("opens, reads schema and version, adds, counts and queries", async () => {
    const t = await db.openTable("items");
    expect((await t.schema()).fields.map((f) => f.name)).toEqual(["id", "s", "x", "vec"]);
    expect(await t.version()).toBe(1);
    expect((await t.add(data(100, 150))).version).toBe(2);
    expect(await t.countRows()).toBe(150);
    expect(await t.countRows("id >= 140")).toBe(10);
    const rows = await t.query().where("id >= 10 AND id < 20").select(["id", "s"]).limit(3).offset(2).toArray();
    expect(rows.map((r) => Number(r.id))).toEqual([12, 13, 14]);
    expect(Object.keys(rows[0])).toEqual(["id", "s"]);
    const nearest = await t.search([50, 51, 52, 53]).limit(2).toArray();
    expect(Number(nearest[0].id)).toBe(50);
    expect((await t.toArrow()).numRows).toBe(150);
    await t.add(data(0, 10), { mode: "overwrite" });
    expect(await t.countRows()).toBe(10);
  });

  it("merge-inserts with every clause and a composite key", async () => {
    const t = await db.createTable("merge", data(0, 10));
    const upsert = await t
      .mergeInsert("id")
      .whenMatchedUpdateAll()
      .whenNotMatchedInsertAll()
      .execute(data(5, 15, () => "new"));
    expect(upsert).toMatchObject({ numUpdatedRows: 5, numInsertedRows: 5, numDeletedRows: 0 });
    expect(upsert.version).toBe(2);
    const conditional = await t
      .mergeInsert(["id", "s"])
      .whenMatchedUpdateAll({ where: "target.id < 8" })
      .whenNotMatchedBySourceDelete({ where: "id > 12" })
      .execute(data(5, 10, () => "new"));
    expect(conditional).toMatchObject({ numUpdatedRows: 3, numInsertedRows: 0, numDeletedRows: 2 });
    expect(await t.countRows()).toBe(13);
  });

  it("versions, checkout of a version and a tag, restore, and tags", async () => {
    const t = await db.createTable("hist", data(0, 5));
    await t.add(data(5, 10));
    await t.add(data(10, 15));
    const versions = await t.listVersions();
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3]);
    expect(versions[0].timestamp.getTime()).toBeGreaterThan(Date.now() - 600_000);
    const tags = await t.tags();
    await tags.create("first", 1);
    await tags.create("second", 2);
    await tags.update("second", 3);
    expect(await tags.getVersion("second")).toBe(3);
    const listed = await tags.list();
    expect(Object.keys(listed).sort()).toEqual(["first", "second"]);
    expect(listed.first.version).toBe(1);
    await tags.delete("second");
    expect(Object.keys(await tags.list())).toEqual(["first"]);
    await expect(tags.getVersion("second")).rejects.toThrow();

    await t.checkout(1);
    expect(await t.countRows()).toBe(5);
    await t.checkout("first");
    expect(await t.version()).toBe(1);
    await t.restore();
    await t.checkoutLatest();
    expect(await t.version()).toBe(4);
    expect(await t.countRows()).toBe(5);
  });

  it("alters, adds and drops columns; updates and deletes rows", async () => {
    const t = await db.createTable("schema_ops", data(0, 10));
    await t.alterColumns([
      { path: "s", rename: "label" },
      { path: "x", nullable: true },
    ]);
    await t.alterColumns([{ path: "id", dataType: "int32" }]);
    await t.addColumns([{ name: "double_x", valueSql: "x * 2" }]);
    await t.dropColumns(["vec"]);
    expect((await t.schema()).fields.map((f) => [f.name, String(f.type)])).toEqual([
      ["id", "Int32"],
      ["label", "Utf8"],
      ["x", "Float64"],
      ["double_x", "Float64"],
    ]);
    const updated = await t.update({ values: { label: "changed" }, where: "id < 3" });
    expect(updated.rowsUpdated).toBe(3);
    const deleted = await t.delete("id >= 8");
    expect(deleted.numDeletedRows).toBe(2);
    expect(await t.countRows("label = 'changed'")).toBe(3);
    expect(await t.countRows()).toBe(8);
  });

  it("creates and lists indices, and reports stats", async () => {
    const t = await db.openTable("items");
    await t.createIndex("id");
    await t.createIndex("s", { config: lancedb.Index.bitmap() });
    const indices = await t.listIndices();
    expect(indices.map((i) => i.columns[0]).sort()).toEqual(["id", "s"]);
    const stats = await t.stats();
    expect(stats.numRows).toBe(10);
    expect(stats.numIndices).toBe(2);
    expect(stats.fragmentStats.numFragments).toBeGreaterThan(0);
  });

  it("renames and drops tables, and pages table names", async () => {
    await db.createTable("old_name", data(0, 2));
    if (onObjectStore) {
      // A root-level table's directory is its name, and an object store cannot rename a directory.
      await expect(db.renameTable("old_name", "new_name")).rejects.toThrow(/406 Not Acceptable.*object stores cannot rename/);
      await db.dropTable("old_name");
      await db.createTable("new_name", data(0, 2));
    } else await db.renameTable("old_name", "new_name");
    // The client keeps its handle under the old name; a new connection sees the rename as any other client does.
    const fresh = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url });
    expect(await (await fresh.openTable("new_name")).countRows()).toBe(2);
    await expect(fresh.openTable("old_name")).rejects.toThrow(/not found/i);
    await fresh.dropTable("new_name");
    await expect(fresh.openTable("new_name")).rejects.toThrow(/not found/i);
    const all = await db.tableNames();
    expect(all).toEqual(["empty", "hist", "items", "merge", "schema_ops", "scratch"]);
    expect(await db.tableNames({ limit: 2 })).toEqual(["empty", "hist"]);
    expect(await db.tableNames({ startAfter: "hist", limit: 2 })).toEqual(["items", "merge"]);
  });

  it("works with namespaces", async () => {
    await db.createNamespace(["team"]);
    expect((await db.listNamespaces()).namespaces).toContain("team");
    const t = await db.createTable("in_ns", data(0, 3), ["team"]);
    expect(await t.countRows()).toBe(3);
    expect(await db.tableNames(["team"])).toEqual(["in_ns"]);
    const page = await db.listTables({ limit: 2 });
    expect(page.tables.length).toBe(2);
  });

  it("refuses a wrong API key with the error the client knows", async () => {
    const wrong = await lancedb.connect("db://default", { apiKey: "wrong", hostOverride: server.url, clientConfig: { retryConfig: { retries: 1 } } });
    await expect(wrong.tableNames()).rejects.toThrow(/401|Unauthorized|credentials/i);
  });
});
