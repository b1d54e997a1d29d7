import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "@/app/v1/_routes";
import type { Table } from "apache-arrow";
import { client, expectError, rows } from "./client";
import { startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startServer({
    QUIVER_MAX_JSON_BODY_BYTES: "2048",
    QUIVER_MAX_ARROW_BODY_BYTES: "100000",
    QUIVER_MAX_PAGE_SIZE: "50",
    QUIVER_MAX_QUERY_ROWS: "2",
  });
  api = client(server.url, server.auth);
  await api.post("/v1/namespace/p/create", {});
  await api.arrow("/v1/table/p$t/create", rows(0, 3));
});
afterAll(() => server?.stop());

describe("protocol", () => {
  it("answers unknown paths and methods under /v1 with the JSON error shape", async () => {
    const unknown = await api.get("/v1/nothing/here");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toBe("application/json");
    expect(unknown.body).toMatchObject({ type: "/errors/not-found-error", status: 404, code: ErrorCode.Unsupported, instance: "/v1/nothing/here" });
    const unsupported = await api.post("/v1/table/p$t/backfill_column", {});
    expectError(unsupported, 406, ErrorCode.Unsupported);
    expect(unsupported.body.detail).toContain("AlterTableBackfillColumns");
    const unknownAction = await api.post("/v1/table/p$t/frobnicate", {});
    expectError(unknownAction, 406, ErrorCode.Unsupported);
    expect(unknownAction.body.detail).toContain("frobnicate");
    const wrongMethod = await api.get("/v1/table/p$t/insert");
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body).toMatchObject({ status: 405, code: ErrorCode.Unsupported });
    expect((await api.raw("DELETE", "/v1/table")).status).toBe(405);
  });

  it("routes both trailing-slash forms without redirecting", async () => {
    const slash = await api.raw("POST", "/v1/table/p$t/describe/", undefined, {});
    expect(slash.status).toBe(200);
    expect(slash.body).toMatchObject({ version: 1 });
    expect((await api.get("/v1/table/")).status).toBe(200);
    expect((await api.get("/v1/namespace/%24/list/")).status).toBe(200);
  });

  it("returns the request id and the response headers as context", async () => {
    const given = await api.post("/v1/namespace/p/describe", {}, { "x-request-id": "req-123" });
    expect(given.headers.get("x-request-id")).toBe("req-123");
    expect(given.body.context).toMatchObject({ "header.x-request-id": "req-123", "header.content-type": "application/json" });
    const generated = await api.post("/v1/namespace/p/describe", {});
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const error = await api.post("/v1/namespace/nope/describe", {}, { "x-request-id": "err-1" });
    expect((error.body.context as Record<string, string>)["header.x-request-id"]).toBe("err-1");
    const injected = await api.post("/v1/namespace/p/describe", {}, { "x-request-id": "bad id\twith tab" });
    // Refused, and replaced by an id of the server's own (which, being random hex, may itself contain "bad").
    expect(injected.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers a liveness probe without credentials, and says nothing else", async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it("tells an authenticated caller where a call's time went, and nobody else", async () => {
    const insert = await api.arrow("/v1/table/p$timed/create", rows(0, 5));
    expect(insert.status).toBe(200);
    const phases = Object.fromEntries(
      (insert.headers.get("server-timing") ?? "").split(", ").map((part) => [part.split(";")[0], Number(part.split("dur=")[1])]),
    );
    expect(Object.keys(phases)).toEqual(["auth", "queue", "body", "work", "record", "total"]);
    expect(Object.values(phases).every((ms) => ms >= 0 && ms < 60_000)).toBe(true);
    expect(phases.total).toBeGreaterThanOrEqual(phases.body + phases.work + phases.record);
    const anonymous = await client(server.url).post("/v1/namespace/p/describe", {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("server-timing")).toBeNull();
  });

  it("rejects malformed JSON, wrong shapes and disagreeing ids", async () => {
    expectError(await api.raw("POST", "/v1/namespace/q/create", "{not json", { "content-type": "application/json" }), 400, ErrorCode.InvalidInput);
    expectError(await api.raw("POST", "/v1/namespace/q/create", "[1,2]", { "content-type": "application/json" }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/namespace/q/create", { properties: { a: 1 } }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/namespace/q/create", { id: ["other"] }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/p$t/tags/create", { tag: "x", version: "1" }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/namespace/q/exists"), 404, ErrorCode.NamespaceNotFound);
  });

  it("validates identifiers before they reach the file system", async () => {
    for (const id of ["p$..", "..$p", "a%2Fb", "p$$t", "%00", "p$t%0A", "..%2F..%2Fetc", "%C3%A9t%C3%A9", "x".repeat(200)]) {
      expectError(await api.post(`/v1/table/${id}/describe`, {}), 400, ErrorCode.InvalidInput);
    }
    expectError(await api.post("/v1/table/p$t/describe?delimiter=", {}), 400, ErrorCode.InvalidInput);
    expect((await api.post("/v1/table/p%24t/describe", {})).status).toBe(200);
    expect((await api.post("/v1/table/p::t/describe?delimiter=::", {})).status).toBe(200);
    expectError(await api.post("/v1/table/p$t/describe", { id: ["p", "..", "t"] }), 400, ErrorCode.InvalidInput);
  });

  it("limits body sizes and page sizes with clear errors", async () => {
    const big = await api.post("/v1/namespace/big/create", { properties: { blob: "x".repeat(5000) } });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ status: 413, code: ErrorCode.InvalidInput });
    const arrow = await api.arrow("/v1/table/p$t/insert", rows(0, 20000));
    expect(arrow.status).toBe(413);
    expectError(await api.get("/v1/table?limit=51"), 400, ErrorCode.InvalidInput);
    expect((await api.get("/v1/table?limit=50")).status).toBe(200);
    expect((await api.post("/v1/table/p$t/count_rows", {})).body).toBe(3);
    const capped = await api.post<Table>("/v1/table/p$t/query", { limit: 100 });
    expect(capped.status).toBe(200);
    expect(capped.body.numRows).toBe(2);
  });

  it("describes every route of the route table in the OpenAPI document", async () => {
    const doc = await api.get<{ openapi: string; paths: Record<string, Record<string, { operationId: string; responses: object }>> }>("/v1/openapi.json");
    expect(doc.body.openapi).toBe("3.1.0");
    for (const route of apiRoutes) {
      for (const method of route.methods) {
        const op = doc.body.paths[route.path]?.[method.toLowerCase()];
        expect(op, `${method} ${route.path}`).toBeDefined();
        expect(op.responses).toHaveProperty("default");
      }
    }
    const merge = doc.body.paths["/v1/table/{id}/merge_insert"].post as unknown as { parameters: Array<{ name: string }> };
    expect(merge.parameters.map((p) => p.name)).toEqual(
      expect.arrayContaining(["id", "on", "when_matched_update_all", "when_not_matched_by_source_delete_filt", "timeout", "use_index"]),
    );
  });

  it("names the choices of modes, index types and distances as enums, and groups each operation by its resource", async () => {
    type Operation = {
      tags: string[];
      parameters?: Array<{ name: string; schema: { enum?: unknown[] } }>;
      requestBody?: { content: Record<string, { schema: Schema }> };
    };
    type Schema = { properties: Record<string, { enum?: unknown[] }> };
    const doc = await api.get<{ paths: Record<string, Record<string, Operation>> }>("/v1/openapi.json");
    const bodyOf = (path: string) => doc.body.paths[path].post.requestBody!.content["application/json"].schema.properties;
    const queryOf = (path: string, name: string) => doc.body.paths[path].post.parameters!.find((p) => p.name === name)!.schema;
    expect(bodyOf("/v1/namespace/{id}/create").mode.enum).toEqual(["Create", "ExistOk", "Overwrite"]);
    expect(bodyOf("/v1/namespace/{id}/drop").behavior.enum).toEqual(["Restrict", "Cascade"]);
    expect(queryOf("/v1/table/{id}/create", "mode").enum).toEqual(["Create", "ExistOk", "Overwrite"]);
    expect(queryOf("/v1/table/{id}/insert", "mode").enum).toEqual(["Append", "Overwrite"]);
    expect(bodyOf("/v1/table/{id}/create_index").index_type.enum).toEqual(expect.arrayContaining(["BTREE", "FTS", "IVF_PQ", "IVF_HNSW_SQ"]));
    expect(bodyOf("/v1/table/{id}/query").distance_type.enum).toEqual(["l2", "cosine", "dot", "hamming", null]);
    expect(bodyOf("/v1/admin/grants/create").role.enum).toEqual(["viewer", "editor", "admin"]);
    expect(doc.body.paths["/v1/table/{id}/alter_columns"].post.tags).toEqual(["Columns"]);
    expect(doc.body.paths["/v1/table/{id}/create_index"].post.tags).toEqual(["Indexes"]);
    expect(doc.body.paths["/v1/table/{id}/restore"].post.tags).toEqual(["Versions and tags"]);
  });

  it("takes a mode in any case, PascalCase or snake_case, and refuses another naming the choices", async () => {
    expect((await api.post("/v1/namespace/modes/create", { mode: "CREATE" })).status).toBe(200);
    expect((await api.post("/v1/namespace/modes/create", { mode: "existOk" })).status).toBe(200);
    const refused = await api.post<{ detail: string }>("/v1/namespace/modes2/create", { mode: "upsert" });
    expectError(refused, 400, ErrorCode.InvalidInput);
    expect(refused.body.detail).toContain("'upsert' is not one of Create, ExistOk, Overwrite");
    expectError(await api.post("/v1/namespace/modes2/describe", {}), 404, ErrorCode.NamespaceNotFound);
  });
});
