import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Field, Int32, Int64, Struct, Table, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";
import { client, expectError, rows } from "./client";
import { BOOKKEEPING, rootSnapshot, startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  await api.post("/v1/namespace/d/create", {});
});
afterAll(() => server?.stop());

const count = async (table: string, predicate?: string) => (await api.post<number>(`/v1/table/${table}/count_rows`, predicate ? { predicate } : {})).body;
const ids = async (table: string) => {
  const reply = await api.post<Table>(`/v1/table/${table}/query`, { columns: ["id"], limit: 10000 });
  return [...reply.body.getChild("id")!.toArray()].map(Number).sort((a, b) => a - b);
};
const valueOf = async (table: string, id: number, column = "s") => {
  const reply = await api.post<Table>(`/v1/table/${table}/query`, { filter: `id = ${id}`, columns: [column], limit: 1 });
  return reply.body.getChild(column)?.get(0);
};

describe("insert", () => {
  it("appends by default and overwrites on request, answering counts and versions", async () => {
    expect((await api.arrow("/v1/table/d$ins/create", rows(0, 10))).body.version).toBe(1);
    const appended = await api.arrow("/v1/table/d$ins/insert", rows(10, 15));
    expect(appended.body).toMatchObject({ version: 2, num_inserted_rows: 5 });
    expect(await count("d$ins")).toBe(15);
    for (const mode of ["append", "Append", "APPEND"]) expect((await api.arrow(`/v1/table/d$ins/insert?mode=${mode}`, rows(100, 101))).status).toBe(200);
    expect(await count("d$ins")).toBe(18);
    const overwritten = await api.arrow("/v1/table/d$ins/insert?mode=Overwrite", rows(0, 4));
    expect(overwritten.body).toMatchObject({ version: 6, num_inserted_rows: 4 });
    expect(await ids("d$ins")).toEqual([0, 1, 2, 3]);
    expect((await api.arrow("/v1/table/d$ins/insert?mode=overwrite", rows(0, 2))).body.version).toBe(7);
    expectError(await api.arrow("/v1/table/d$ins/insert?mode=upsert", rows(0, 2)), 400, ErrorCode.InvalidInput);
    expectError(await api.arrow("/v1/table/d$nope/insert", rows(0, 2)), 404, ErrorCode.TableNotFound);
    expectError(await api.arrow("/v1/table/nons$t/insert", rows(0, 2)), 404, ErrorCode.NamespaceNotFound);
  });

  it("accepts a body without content type, and an Arrow file", async () => {
    await api.arrow("/v1/table/d$loose/create", rows(0, 1));
    const bare = await api.raw("POST", "/v1/table/d$loose/insert", Buffer.from(tableToIPC(rows(1, 3), "stream")));
    expect(bare.body).toMatchObject({ num_inserted_rows: 2 });
    const file = await api.raw("POST", "/v1/table/d$loose/insert", Buffer.from(tableToIPC(rows(3, 6), "file")));
    expect(file.body).toMatchObject({ num_inserted_rows: 3 });
    expect(await count("d$loose")).toBe(6);
  });

  it("rejects bad Arrow bodies with a 4xx and leaves the table exactly as it was", async () => {
    await api.arrow("/v1/table/d$safe/create", rows(0, 5));
    const dir = (await api.post("/v1/table/d$safe/describe", {})).body.location as string;
    const before = await rootSnapshot(server, [...BOOKKEEPING, ".quiver/auth/"]);
    const good = Buffer.from(tableToIPC(rows(5, 50), "stream"));
    const wrongSchema = new Table({ other: vectorFromArray([1, 2], new Int32()) });
    const wrongType = new Table({ id: vectorFromArray(["a"], new Utf8()), x: vectorFromArray(["b"], new Utf8()), s: vectorFromArray([1], new Int32()) });
    for (const [name, body, code] of [
      ["empty", Buffer.alloc(0), 13],
      ["truncated", good.subarray(0, good.length - 40), 13],
      ["corrupt", Buffer.concat([good.subarray(0, 8), Buffer.alloc(64, 0x41), good.subarray(72)]), 13],
      ["json", Buffer.from('{"rows":[1,2]}'), 13],
      ["wrong schema", Buffer.from(tableToIPC(wrongSchema, "stream")), 20],
    ] as const) {
      const reply = await api.raw("POST", "/v1/table/d$safe/insert", body, { "content-type": "application/vnd.apache.arrow.stream" });
      expect(reply.status, name).toBeGreaterThanOrEqual(400);
      expect(reply.status, name).toBeLessThan(500);
      expect((reply.body as { code: number }).code, name).toBe(code);
    }
    expectError(await api.arrow("/v1/table/d$safe/insert", wrongType), 400, ErrorCode.TableSchemaValidationError);
    expect(await rootSnapshot(server, [...BOOKKEEPING, ".quiver/auth/"])).toEqual(before);
    expect(await count("d$safe")).toBe(5);
    expect(dir).toContain("d$safe");
  });
});

describe("merge_insert", () => {
  const table = "d$m";
  beforeEach(async () => {
    await api.post(`/v1/table/${table}/drop`);
    await api.arrow(`/v1/table/${table}/create`, rows(0, 10));
  });
  const merge = (query: string, body: Table) => api.arrow(`/v1/table/${table}/merge_insert?${query}`, body);

  it("updates matched rows only", async () => {
    const r = await merge(
      "on=id&when_matched_update_all=true",
      rows(
        5,
        15,
        (i) => i,
        () => "new",
      ),
    );
    expect(r.body).toMatchObject({ version: 2, num_updated_rows: 5, num_inserted_rows: 0, num_deleted_rows: 0 });
    expect(await count(table)).toBe(10);
    expect(await valueOf(table, 7)).toBe("new");
    expect(await valueOf(table, 2)).toBe("s2");
  });

  it("inserts unmatched rows only", async () => {
    const r = await merge(
      "on=id&when_not_matched_insert_all=true",
      rows(
        5,
        15,
        (i) => i,
        () => "new",
      ),
    );
    expect(r.body).toMatchObject({ num_updated_rows: 0, num_inserted_rows: 5, num_deleted_rows: 0 });
    expect(await count(table)).toBe(15);
    expect(await valueOf(table, 7)).toBe("s7");
  });

  it("upserts, and deletes target rows missing from the source", async () => {
    const r = await merge(
      "on=id&when_matched_update_all=true&when_not_matched_insert_all=true&when_not_matched_by_source_delete=true",
      rows(
        5,
        15,
        (i) => i,
        () => "new",
      ),
    );
    expect(r.body).toMatchObject({ num_updated_rows: 5, num_inserted_rows: 5, num_deleted_rows: 5 });
    expect(await ids(table)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  it("applies conditional update and conditional delete filters, which enable their actions", async () => {
    const r = await merge(
      `on=id&when_matched_update_all_filt=${encodeURIComponent("target.id < 7")}&when_not_matched_by_source_delete_filt=${encodeURIComponent("id < 2")}`,
      rows(
        5,
        10,
        (i) => i,
        () => "new",
      ),
    );
    expect(r.body).toMatchObject({ num_updated_rows: 2, num_inserted_rows: 0, num_deleted_rows: 2 });
    expect(await valueOf(table, 5)).toBe("new");
    expect(await valueOf(table, 8)).toBe("s8");
    expect(await ids(table)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("matches on a composite key given as repeated 'on'", async () => {
    const source = rows(
      0,
      4,
      (i) => i,
      (i) => (i % 2 ? `s${i}` : "other"),
    );
    const r = await merge("on=id&on=s&when_matched_update_all=true&when_not_matched_insert_all=true", source);
    expect(r.body).toMatchObject({ num_updated_rows: 2, num_inserted_rows: 2 });
    expect(await count(table)).toBe(12);
  });

  it("accepts backtick-quoted key names, timeouts and use_index", async () => {
    const r = await merge(
      "on=%60id%60&when_matched_update_all=true&timeout=30s&use_index=false",
      rows(
        0,
        3,
        (i) => i,
        () => "q",
      ),
    );
    expect(r.body).toMatchObject({ num_updated_rows: 3 });
    expect((await merge("on=id&when_matched_update_all=true&timeout=500ms&use_index=true", rows(0, 1))).status).toBe(200);
  });

  it("answers the documented errors for bad keys and switches, changing nothing", async () => {
    const before = await rootSnapshot(server, [...BOOKKEEPING, ".quiver/auth/"]);
    expectError(await merge("when_matched_update_all=true", rows(0, 1)), 400, ErrorCode.InvalidInput);
    expectError(await merge("on=&when_matched_update_all=true", rows(0, 1)), 400, ErrorCode.InvalidInput);
    expectError(await merge("on=nope&when_matched_update_all=true", rows(0, 1)), 404, ErrorCode.TableColumnNotFound);
    expectError(await merge("on=id..x&when_matched_update_all=true", rows(0, 1)), 400, ErrorCode.InvalidInput);
    expectError(await merge("on=%60id&when_matched_update_all=true", rows(0, 1)), 400, ErrorCode.InvalidInput);
    expectError(await merge("on=id", rows(0, 1)), 400, ErrorCode.InvalidInput);
    expectError(await merge("on=id&when_matched_update_all=false&when_not_matched_insert_all=false", rows(0, 1)), 400, ErrorCode.InvalidInput);
    expectError(await merge("on=id&when_matched_update_all=perhaps", rows(0, 1)), 400, ErrorCode.InvalidInput);
    expectError(await merge("on=id&when_matched_update_all=true&timeout=soon", rows(0, 1)), 400, ErrorCode.InvalidInput);
    const duplicateKeys = new Table({ id: vectorFromArray([1n, 1n], new Int64()), x: vectorFromArray([1, 2]), s: vectorFromArray(["a", "b"], new Utf8()) });
    const dup = await merge("on=id&when_matched_update_all=true", duplicateKeys);
    expect(dup.status).toBe(400);
    expect(await rootSnapshot(server, [...BOOKKEEPING, ".quiver/auth/"])).toEqual(before);
  });

  it("answers Unsupported for a nested key and works on nested data with a top-level key", async () => {
    const nested = (ids: number[], tag: string) =>
      new Table({
        id: vectorFromArray(ids.map(BigInt), new Int64()),
        k: vectorFromArray(
          ids.map((i) => ({ a: i, "x.y": i })),
          new Struct([new Field("a", new Int32()), new Field("x.y", new Int32())]),
        ),
        tag: vectorFromArray(
          ids.map(() => tag),
          new Utf8(),
        ),
      });
    await api.arrow("/v1/table/d$nested/create", nested([1, 2, 3], "a"));
    expectError(await api.arrow("/v1/table/d$nested/merge_insert?on=k.a&when_matched_update_all=true", nested([3], "b")), 406, ErrorCode.Unsupported);
    expectError(
      await api.arrow(`/v1/table/d$nested/merge_insert?on=${encodeURIComponent("k.`x.y`")}&when_matched_update_all=true`, nested([3], "b")),
      406,
      ErrorCode.Unsupported,
    );
    expectError(await api.arrow("/v1/table/d$nested/merge_insert?on=k.zz&when_matched_update_all=true", nested([3], "b")), 404, ErrorCode.TableColumnNotFound);
    const byStruct = await api.arrow("/v1/table/d$nested/merge_insert?on=k&when_matched_update_all=true", nested([3, 4], "b"));
    expect(byStruct.body).toMatchObject({ num_updated_rows: 1, num_inserted_rows: 0 });
    const created = await api.arrow("/v1/table/d$dots/create", new Table({ "a.b": vectorFromArray([1], new Int32()) }));
    expect(created.status).toBe(400);
    expect((created.body as { code: number }).code).toBe(ErrorCode.TableSchemaValidationError);
  });
});

describe("count and query", () => {
  it("counts with a predicate and at a version, and queries with filter, columns, limit, offset", async () => {
    await api.arrow("/v1/table/d$q/create", rows(0, 100));
    await api.arrow("/v1/table/d$q/insert", rows(100, 150));
    expect(await count("d$q")).toBe(150);
    expect(await count("d$q", "id >= 140")).toBe(10);
    expect((await api.post("/v1/table/d$q/count_rows", { version: 1 })).body).toBe(100);
    expect((await api.get("/v1/table/d$q/count_rows")).body).toBe(150);
    expectError(await api.post("/v1/table/d$q/count_rows", { version: 9 }), 404, ErrorCode.TableVersionNotFound);
    const q = await api.post<Table>("/v1/table/d$q/query", { filter: "id >= 10 AND id < 30", columns: ["id", "s"], limit: 5, offset: 2 });
    expect(q.headers.get("content-type")).toBe("application/vnd.apache.arrow.file");
    expect(q.body.numRows).toBe(5);
    expect(q.body.schema.fields.map((f) => f.name)).toEqual(["id", "s"]);
    expect([...q.body.getChild("id")!.toArray()].map(Number)).toEqual([12, 13, 14, 15, 16]);
    const aliased = await api.post<Table>("/v1/table/d$q/query", { filter: "id = 3", columns: { column_aliases: { ident: "id" } }, k: 10 });
    expect(aliased.body.schema.fields.map((f) => f.name)).toEqual(["ident"]);
    const old = await api.post<Table>("/v1/table/d$q/query", { version: 1, limit: 1000 });
    expect(old.body.numRows).toBe(100);
    const none = await api.post<Table>("/v1/table/d$q/query", { filter: "id < 0", limit: 10 });
    expect(none.body.numRows).toBe(0);
    expect(none.body.schema.fields.length).toBe(3);
    expectError(await api.post("/v1/table/d$q/query", { filter: "nosuchcolumn > 1", limit: 1 }), 404, ErrorCode.TableColumnNotFound);
    expectError(await api.post("/v1/table/d$q/query", { filter: "id >>>> 1", limit: 1 }), 400, ErrorCode.InvalidInput);
  });
});

describe("alter_columns", () => {
  it("renames, changes types in both vocabularies and nullability, returning the new version", async () => {
    await api.arrow("/v1/table/d$alt/create", rows(0, 3));
    const renamed = await api.post("/v1/table/d$alt/alter_columns", {
      alterations: [
        { path: "s", rename: "label" },
        { path: "x", nullable: true },
      ],
    });
    expect(renamed.body.version).toBe(2);
    const typed = await api.post("/v1/table/d$alt/alter_columns", { alterations: [{ path: "id", data_type: { type: "int32" } }] });
    expect(typed.body.version).toBe(3);
    const back = await api.post("/v1/table/d$alt/alter_columns", {
      alterations: [
        { path: "label", data_type: { type: "large_utf8" } },
        { path: "x", data_type: { type: "float32" } },
      ],
    });
    expect(back.body.version).toBe(4);
    const fields = (
      (await api.post("/v1/table/d$alt/describe", {})).body.schema as { fields: Array<{ name: string; type: { type: string }; nullable: boolean }> }
    ).fields;
    expect(fields.map((f) => [f.name, f.type.type, f.nullable])).toEqual([
      ["id", "int32", true],
      ["x", "float", true],
      ["label", "large_string", true],
    ]);
    expectError(
      await api.post("/v1/table/d$alt/alter_columns", { alterations: [{ path: "label", data_type: { type: "int64" } }] }),
      400,
      ErrorCode.InvalidInput,
    );
    expectError(await api.post("/v1/table/d$alt/alter_columns", { alterations: [{ path: "nope", rename: "x" }] }), 404, ErrorCode.TableColumnNotFound);
    expectError(await api.post("/v1/table/d$alt/alter_columns", { alterations: [{ path: "id" }] }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/d$alt/alter_columns", { alterations: [{ path: "id", data_type: "int64" }] }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/d$alt/alter_columns", { alterations: [{ path: "id", virtual_column: { udf: "f" } }] }), 406, ErrorCode.Unsupported);
    expectError(await api.post("/v1/table/d$alt/alter_columns", { alterations: [] }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/d$nope/alter_columns", { alterations: [{ path: "id", rename: "y" }] }), 404, ErrorCode.TableNotFound);
  });

  it("alters nested fields, including a quoted name with a dot", async () => {
    const t = new Table({
      id: vectorFromArray([1n], new Int64()),
      k: vectorFromArray([{ a: 1, "x.y": 2 }], new Struct([new Field("a", new Int32()), new Field("x.y", new Int32())])),
    });
    await api.arrow("/v1/table/d$nest/create", t);
    expect((await api.post("/v1/table/d$nest/alter_columns", { alterations: [{ path: "k.a", data_type: { type: "int64" } }] })).status).toBe(200);
    const renamed = await api.post("/v1/table/d$nest/alter_columns", { alterations: [{ path: "k.`x.y`", rename: "xy" }] });
    expect(renamed.status).toBe(200);
    const k = (
      (await api.post("/v1/table/d$nest/describe", {})).body.schema as {
        fields: Array<{ name: string; type: { fields: Array<{ name: string; type: { type: string } }> } }>;
      }
    ).fields[1];
    expect(k.type.fields.map((f) => [f.name, f.type.type])).toEqual([
      ["a", "int64"],
      ["xy", "int32"],
    ]);
  });
});

describe("restore", () => {
  it("restores an old version as a new version", async () => {
    await api.arrow("/v1/table/d$r/create", rows(0, 2));
    await api.arrow("/v1/table/d$r/insert", rows(2, 10));
    const restored = await api.post("/v1/table/d$r/restore", { version: 1 });
    expect(restored.body.version).toBe(3);
    expect(await count("d$r")).toBe(2);
    expectError(await api.post("/v1/table/d$r/restore", { version: 42 }), 404, ErrorCode.TableVersionNotFound);
    expectError(await api.post("/v1/table/d$r/restore", {}), 400, ErrorCode.InvalidInput);
  });
});

describe("compressed Arrow bodies", () => {
  it("accepts ZSTD-compressed record batches", async () => {
    const { zstdStream } = await import("./zstd-arrow");
    const body = await zstdStream(
      rows(
        0,
        2000,
        (i) => i / 4,
        (i) => `zstd-${i}`,
      ),
    );
    const created = await api.raw("POST", "/v1/table/d$zstd/create", body, { "content-type": "application/vnd.apache.arrow.stream" });
    expect(created.status).toBe(200);
    expect(await count("d$zstd")).toBe(2000);
    expect(await valueOf("d$zstd", 1999)).toBe("zstd-1999");
    const inserted = await api.raw("POST", "/v1/table/d$zstd/insert", await zstdStream(rows(2000, 2100)), {});
    expect(inserted.body).toMatchObject({ num_inserted_rows: 100 });
  });
});
