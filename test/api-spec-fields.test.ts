/**
 * Fields of the Lance Namespace spec at work: requests shaped as Lance's RestNamespace sends them (the whole request
 * as the body, path parameters included), the fields refused with 406 and why, and the answer fields the spec adds
 * (index type URLs, segments and versions; a table's metadata; UpdateTable's properties).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, expectError, rows } from "./client";
import { rootSnapshot, startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  expect((await api.arrow("/v1/table/spec/create", rows(0, 300))).status).toBe(200);
  expect((await api.post("/v1/table/spec/create_index", { column: "id", index_type: "BTREE", name: "id_idx" })).status).toBe(200);
});
afterAll(() => server?.stop());

describe("the spec's request fields", () => {
  it("DescribeTableIndexStats answers a request shaped as Lance's RestNamespace sends it, index_name included", async () => {
    const stats = await api.post("/v1/table/spec/index/id_idx/stats", { id: ["spec"], index_name: "id_idx", version: null, branch: null });
    expect(stats.status, JSON.stringify(stats.body)).toBe(200);
    expect(stats.body).toMatchObject({ index_type: "BTREE", num_indexed_rows: 300, num_unindexed_rows: 0 });
    const other = await api.post("/v1/table/spec/index/id_idx/stats", { index_name: "other_idx" });
    expectError(other, 400, ErrorCode.InvalidInput);
    expect(other.body.detail).toContain("index_name");
  });

  it("ExplainTableQueryPlan takes the branch beside the query, and the query's own id and identity when they agree", async () => {
    expect((await api.post("/v1/table/spec/branches/create", { name: "dev" })).status).toBe(200);
    expect((await api.arrow("/v1/table/spec/insert?branch=dev", rows(300, 310))).status).toBe(200);
    const query = { filter: "id >= 300", k: 10 };
    const plan = (body: unknown) => api.post("/v1/table/spec/explain_plan", body);
    const beside = await plan({ branch: "dev", query: { ...query, id: ["spec"] }, verbose: false });
    expect(beside.status, JSON.stringify(beside.body)).toBe(200);
    const inside = await plan({ query: { ...query, branch: "dev" } });
    expect(beside.body).toEqual(inside.body);
    expect(typeof beside.body).toBe("string");
    expectError(await plan({ branch: "dev", query: { ...query, branch: "main" } }), 400, ErrorCode.InvalidInput);
    expectError(await plan({ query: { ...query, id: ["elsewhere"] } }), 400, ErrorCode.InvalidInput);
    expectError(await plan({ query: { ...query, identity: { api_key: "someone else's" } } }), 400, ErrorCode.InvalidInput);
  });

  it("refuses with 406 and the reason the fields for what this service does not do, changing nothing", async () => {
    const before = await rootSnapshot(server);
    const computed = await api.post("/v1/table/spec/add_columns", { new_columns: [{ name: "twice", computed: "id * 2" }] });
    expectError(computed, 406, ErrorCode.Unsupported);
    expect(computed.body.detail).toContain("body.new_columns[0].computed: computed columns");
    const virtual = await api.post("/v1/table/spec/add_columns", {
      new_columns: [{ name: "v", virtual_column: { input_columns: ["id"], outputs: [], image: "x", udf_version: "1", udf: "f" } }],
    });
    expectError(virtual, 406, ErrorCode.Unsupported);
    expect(virtual.body.detail).toContain("virtual columns");
    const withProperties = await api.post("/v1/table/spec/update", { updates: [["s", "'x'"]], properties: { owner: "me" } });
    expectError(withProperties, 406, ErrorCode.Unsupported);
    expect(withProperties.body.detail).toContain("UpdateTableProperties");
    expect(await rootSnapshot(server)).toEqual(before);
    // Unset, null or empty, such a field is no request to do anything.
    const plain = await api.post("/v1/table/spec/add_columns", {
      new_columns: [{ name: "twice", expression: "id * 2", computed: null, virtual_column: null }],
    });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    const updated = await api.post("/v1/table/spec/update", { predicate: "id < 2", updates: [["s", "'x'"]], properties: {} });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  });
});

describe("the spec's answer fields", () => {
  it("UpdateTable answers the table's properties", async () => {
    expect((await api.post("/v1/table/spec/properties/update", { updates: { owner: "data-team" } })).status).toBe(200);
    const updated = await api.post("/v1/table/spec/update", { predicate: "id = 5", updates: [["s", "'five'"]] });
    expect(updated.body).toMatchObject({ updated_rows: 1, rows_updated: 1, properties: { owner: "data-team" } });
  });

  it("ListTableIndices answers each index's type URL, segments and format version, as the engine reports them", async () => {
    const listed = await api.post<{ indexes: Array<Record<string, unknown>> }>("/v1/table/spec/index/list", {});
    expect(listed.body.indexes).toHaveLength(1);
    const [index] = listed.body.indexes;
    expect(index).toMatchObject({ index_name: "id_idx", num_segments: 1 });
    expect(index.type_url).toMatch(/^\/lance\..*BTree/i);
    expect(index.index_version).toEqual(expect.any(Number));
  });

  it("DescribeTable answers the table's metadata from its manifest", async () => {
    const described = await api.post("/v1/table/spec/describe", { load_detailed_metadata: true });
    expect(described.body.metadata).toEqual({});
  });

  it("a write applied once per request id answers its transaction_id, which DescribeTransaction describes to its caller alone", async () => {
    const inserted = await api.arrow("/v1/table/spec/insert", rows(1000, 1003), { "x-request-id": "spec-insert-1" });
    expect(inserted.status, JSON.stringify(inserted.body)).toBe(200);
    const transaction = inserted.body.transaction_id as string;
    expect(transaction).toMatch(/^[0-9a-f]{40}$/);
    const described = await api.post(`/v1/transaction/${transaction}/describe`, {});
    expect(described.status, JSON.stringify(described.body)).toBe(200);
    expect(described.body).toMatchObject({
      status: "Succeeded",
      properties: { operation: "InsertIntoTable", version: String(inserted.body.version), by: "QUIVER_ADMIN_API_KEY" },
    });
    // Its retry answers the same id; a transaction is not altered; another caller is told of none.
    const again = await api.arrow("/v1/table/spec/insert", rows(1000, 1003), { "x-request-id": "spec-insert-1" });
    expect(again.body).toMatchObject({ version: inserted.body.version, transaction_id: transaction });
    expectError(await api.post(`/v1/transaction/${transaction}/alter`, { actions: [{ setStatusAction: { status: "Canceled" } }] }), 406, ErrorCode.Unsupported);
    const { key } = (await api.post("/v1/admin/keys/create", { name: "spec-editor", role: "editor" })).body as { key: string };
    const editor = client(server.url, { "x-api-key": key });
    expectError(await editor.post(`/v1/transaction/${transaction}/describe`, {}), 404, ErrorCode.TransactionNotFound);
    // A write refused before its commit leaves no transaction; an operation outside the ledger answers none.
    const refused = await api.post("/v1/table/spec/delete", { predicate: "no_such_column = 1" });
    expect(refused.status).toBe(404);
    expect(refused.body).not.toHaveProperty("transaction_id");
    expect((await api.post("/v1/table/spec/tags/create", { tag: "spec-tag", version: 1 })).body).not.toHaveProperty("transaction_id");
  });
});
