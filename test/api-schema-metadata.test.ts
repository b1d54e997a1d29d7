/**
 * UpdateTableSchemaMetadata: keys of a table schema's metadata set in a new version, which the engine then reads
 * (describe, the LanceDB client's schema, queries and writes after it), on main and on a branch, with concurrent
 * writers through another instance losing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { client, expectError, rows } from "./client";
import { keyOf, rootSnapshot, startServer, storeOf, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;

const update = (table: string, metadata: unknown, query = "") =>
  api.post<Record<string, string>>(`/v1/table/${table}/schema_metadata/update${query}`, metadata);
const described = async (table: string) =>
  (await api.post<{ version: number; schema: { metadata?: Record<string, string> } }>(`/v1/table/${table}/describe`, {})).body;

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
});
afterAll(() => server?.stop());

describe("UpdateTableSchemaMetadata", () => {
  it("sets keys in a new version and answers the whole metadata, which the engine and the LanceDB client read", async () => {
    expect((await api.arrow("/v1/table/m/create", rows(0, 20))).status).toBe(200);
    const first = await update("m", { owner: "data-team", purpose: "test" });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({ owner: "data-team", purpose: "test" });
    const second = await update("m", { owner: "platform" });
    expect(second.body).toEqual({ owner: "platform", purpose: "test" });
    expect(await described("m")).toMatchObject({ version: 3, schema: { metadata: { owner: "platform", purpose: "test" } } });

    const db = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url });
    const table = await db.openTable("m");
    expect(Object.fromEntries((await table.schema()).metadata)).toEqual({ owner: "platform", purpose: "test" });
    await table.add(rows(20, 25));
    expect(await table.countRows()).toBe(25);
    expect(await table.countRows("id >= 18")).toBe(7);
    expect(await described("m")).toMatchObject({ version: 4, schema: { metadata: { owner: "platform", purpose: "test" } } });

    const history = await api.post<{ versions: Array<{ version: number; operation: string }> }>("/v1/table/m/version/list?include_operations=true", {});
    expect(history.body.versions.find((v) => v.version === 3)?.operation).toBe("UpdateConfig");
    // The version before the change has the metadata it had.
    const older = await api.post<{ schema: { metadata?: Record<string, string> } }>("/v1/table/m/describe", { version: 1 });
    expect(older.body.schema.metadata ?? {}).toEqual({});
  });

  it("commits nothing for an empty map, and refuses what it cannot do without changing anything", async () => {
    expect((await api.arrow("/v1/table/e/create", rows(0, 3))).status).toBe(200);
    expect((await update("e", { a: "1" })).status).toBe(200);
    const same = await update("e", {});
    expect(same.status).toBe(200);
    expect(same.body).toEqual({ a: "1" });
    expectError(await update("e", { a: 1 }), 400, ErrorCode.InvalidInput);
    expectError(await update("e", ["a"]), 400, ErrorCode.InvalidInput);
    expectError(await update("e", { a: "2" }, "?bogus=1"), 400, ErrorCode.InvalidInput);
    expectError(await update("missing", { a: "1" }), 404, ErrorCode.TableNotFound);
    expect((await update("e", { a: "2" }, "?branch=nope")).status).toBe(404);
    const key = await api.post<{ key: string }>("/v1/admin/keys/create", { name: "reader", role: "viewer" });
    const viewer = client(server.url, { "x-api-key": key.body.key });
    expectError(await viewer.post("/v1/table/e/schema_metadata/update", { a: "3" }), 403, ErrorCode.PermissionDenied);
    expect(await described("e")).toMatchObject({ version: 2, schema: { metadata: { a: "1" } } });
  });

  it("refuses a table whose manifests carry Lance's V1 names (406) and changes nothing", async () => {
    expect((await api.arrow("/v1/table/old/create", rows(0, 4))).status).toBe(200);
    // A dataset an older Lance wrote names its manifests `<version>.manifest`; the engine reads either naming.
    const store = storeOf(server);
    const location = keyOf(server, (await api.post<{ location: string }>("/v1/table/old/describe", {})).body.location);
    for (const key of (await store.list(`${location}/_versions/`)).filter((k) => /\/\d{20}\.manifest$/.test(k))) {
      const version = 18446744073709551615n - BigInt(/(\d{20})\.manifest$/.exec(key)![1]);
      await store.put(`${location}/_versions/${version}.manifest`, (await store.get(key))!);
      await store.delete(key);
    }
    const before = await rootSnapshot(server);
    const refused = await update("old", { owner: "x" });
    expectError(refused, 406, ErrorCode.Unsupported);
    expect(JSON.stringify(refused.body)).toContain("V1 scheme");
    expect(await rootSnapshot(server)).toEqual(before);
    expect((await api.post("/v1/table/old/count_rows", {})).body).toBe(4);
  });

  it("sets keys on a branch, leaving main as it was", async () => {
    expect((await api.arrow("/v1/table/b/create", rows(0, 5))).status).toBe(200);
    expect((await api.post("/v1/table/b/branches/create", { name: "dev" })).status).toBe(200);
    const onBranch = await update("b", { stage: "dev" }, "?branch=dev");
    expect(onBranch.status, JSON.stringify(onBranch.body)).toBe(200);
    expect(onBranch.body).toEqual({ stage: "dev" });
    const branch = await api.post<{ schema: { metadata?: Record<string, string> } }>("/v1/table/b/describe", { branch: "dev" });
    expect(branch.body.schema.metadata).toEqual({ stage: "dev" });
    expect((await described("b")).schema.metadata ?? {}).toEqual({});
    expect((await api.arrow("/v1/table/b/insert?branch=dev", rows(5, 8))).status).toBe(200);
    expect((await api.post<{ schema: { metadata?: Record<string, string> } }>("/v1/table/b/describe", { branch: "dev" })).body.schema.metadata).toEqual({
      stage: "dev",
    });
  });

  it("loses no key and no row while another instance writes the table", async () => {
    expect((await api.arrow("/v1/table/c/create", rows(0, 1))).status).toBe(200);
    const other = await startServer({}, { root: server.root });
    try {
      const otherApi = client(other.url, other.auth);
      const results = await Promise.all([
        ...Array.from({ length: 8 }, (_, i) => update("c", { [`k${i}`]: String(i) })),
        ...Array.from({ length: 8 }, (_, i) => otherApi.arrow("/v1/table/c/insert", rows(100 + i * 10, 105 + i * 10))),
      ]);
      for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(200);
      const count = await api.post<number>("/v1/table/c/count_rows", {});
      expect(count.body).toBe(41);
      expect((await described("c")).schema.metadata).toEqual(Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, String(i)])));
    } finally {
      await other.stop();
    }
  });
});
