/**
 * The data root is a Lance directory namespace: Lance's own clients, pointed at the same root, see the same
 * namespaces, tables, rows and versions, and what they write shows up in Quiver. LanceDB's remote client,
 * which sends LZ4-compressed Arrow, is served too.
 */
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { Int64, Table, vectorFromArray, type Vector } from "apache-arrow";
import { client, rows } from "./client";
import { startServer, type TestServer } from "./server";

// The engine loads apache-arrow as CommonJS; data handed to it is built with that same copy.
const arrowCjs = createRequire(import.meta.url)("apache-arrow") as typeof import("apache-arrow");

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  await api.post("/v1/namespace/sales/create", { properties: { owner: "team" } });
  await api.post("/v1/namespace/sales$eu/create", {});
  await api.arrow("/v1/table/sales$eu$orders/create", rows(0, 40));
  await api.arrow("/v1/table/sales$eu$orders/insert", rows(40, 50));
  await api.arrow("/v1/table/toplevel/create", rows(0, 7));
  await api.post("/v1/table/sales$pending/declare", {});
});
afterAll(() => server?.stop());

describe("directory namespace interoperability", () => {
  it("lists the same namespaces and created tables, and reads the same rows and versions", async () => {
    const dir = await lancedb.connectNamespace("dir", { root: server.root });
    expect((await dir.listNamespaces([])).namespaces).toEqual(["sales"]);
    expect((await dir.listNamespaces(["sales"])).namespaces).toEqual(["eu"]);
    expect(await dir.tableNames(["sales", "eu"])).toEqual(["orders"]);
    expect(await dir.tableNames([])).toContain("toplevel");
    const orders = await dir.openTable("orders", ["sales", "eu"]);
    expect(await orders.countRows()).toBe(50);
    expect(await orders.version()).toBe(2);
    expect((await orders.listVersions()).map((v) => v.version)).toEqual([1, 2]);
    const row = (await orders.query().where("id = 42").toArray())[0];
    expect(row.s).toBe("s42");
    expect((await dir.describeNamespace(["sales"])).properties).toEqual({ owner: "team" });
  });

  it("opens root-level tables with a plain connection", async () => {
    const plain = await lancedb.connect(server.root);
    expect(await plain.tableNames()).toContain("toplevel");
    const t = await plain.openTable("toplevel");
    expect(await t.countRows()).toBe(7);
  });

  it("shows what Lance clients write through the same root", async () => {
    const dir = await lancedb.connectNamespace("dir", { root: server.root });
    await dir.createNamespace(["external"]);
    const schema = new arrowCjs.Schema([new arrowCjs.Field("id", new arrowCjs.Int64(), false), new arrowCjs.Field("s", new arrowCjs.Utf8(), true)]);
    const data = lancedb.makeArrowTable(
      [
        { id: 1n, s: "a" },
        { id: 2n, s: "b" },
      ],
      { schema },
    );
    await dir.createTable("fromlance", data, ["external"]);
    const plain = await lancedb.connect(server.root);
    await plain.createTable("plainroot", data);

    const listed = await api.get<{ tables: string[] }>("/v1/table");
    expect(listed.body.tables).toEqual(expect.arrayContaining(["external$fromlance", "plainroot", "sales$eu$orders", "toplevel", "sales$pending"]));
    expect((await api.post("/v1/table/external$fromlance/count_rows", {})).body).toBe(2);
    expect((await api.post("/v1/table/plainroot/describe", {})).body).toMatchObject({ version: 1, is_only_declared: false });
    const inserted = await api.arrow("/v1/table/external$fromlance/insert", new Table({ id: vectorFromArray([3n], new Int64()) }));
    expect(inserted.body).toMatchObject({ version: 2, num_inserted_rows: 1 });
    const reopened = await dir.openTable("fromlance", ["external"]);
    expect(await reopened.countRows()).toBe(3);
  });

  it("takes rows of a column a Lance client added since Quiver last committed to the table, in merges and inserts", async () => {
    expect((await api.arrow("/v1/table/widening/create", rows(0, 5))).status).toBe(200);
    // Quiver's handle of the table now holds version 2; each column comes in a version written past it.
    expect((await api.arrow("/v1/table/widening/insert", rows(5, 10))).body).toMatchObject({ version: 2 });
    const plain = await lancedb.connect(server.root);
    const widened = (from: number, to: number, extra: Record<string, number>) => {
      const narrow = rows(from, to);
      const columns: Record<string, Vector> = { id: narrow.getChild("id")!, x: narrow.getChild("x")!, s: narrow.getChild("s")! };
      for (const [name, times] of Object.entries(extra))
        columns[name] = vectorFromArray(
          Array.from({ length: to - from }, (_, i) => BigInt((from + i) * times)),
          new Int64(),
        );
      return new Table(columns);
    };
    await (await plain.openTable("widening")).addColumns([{ name: "tag", valueSql: "id * 2" }]);
    const merged = await api.arrow(
      "/v1/table/widening/merge_insert?on=tag&when_matched_update_all=true&when_not_matched_insert_all=true",
      widened(8, 12, { tag: 2 }),
    );
    expect(merged.body).toMatchObject({ version: 4, num_updated_rows: 2, num_inserted_rows: 2 });
    await (await plain.openTable("widening")).addColumns([{ name: "tag3", valueSql: "id * 3" }]);
    expect((await api.arrow("/v1/table/widening/insert", widened(12, 14, { tag: 2, tag3: 3 }))).body).toMatchObject({ version: 6, num_inserted_rows: 2 });
    expect((await api.post("/v1/table/widening/count_rows", { predicate: "tag3 = id * 3" })).body).toBe(14);
  });
});

describe("LanceDB remote client", () => {
  it("creates and appends with LZ4-compressed Arrow bodies", async () => {
    const db = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url });
    const schema = new arrowCjs.Schema([new arrowCjs.Field("id", new arrowCjs.Int64(), false), new arrowCjs.Field("s", new arrowCjs.Utf8(), true)]);
    const make = (from: number, to: number) =>
      lancedb.makeArrowTable(
        Array.from({ length: to - from }, (_, i) => ({ id: BigInt(from + i), s: `value-${from + i}-${"x".repeat(20)}` })),
        { schema },
      );
    const table = await db.createTable("lz4table", make(0, 5000));
    expect(await table.countRows()).toBe(5000);
    await table.add(make(5000, 6000));
    expect((await api.post("/v1/table/lz4table/count_rows", {})).body).toBe(6000);
    expect((await api.post("/v1/table/lz4table/count_rows", { predicate: "id >= 5990" })).body).toBe(10);
    const q = await api.post<Table>("/v1/table/lz4table/query", { filter: "id = 5999", limit: 1 });
    expect(q.body.getChild("s")!.get(0)).toBe(`value-5999-${"x".repeat(20)}`);
  });
});
