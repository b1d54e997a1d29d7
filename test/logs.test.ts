/**
 * The server's log: one JSON line per API request (request id, principal, operation, status, duration) when not in a
 * terminal, readable lines when asked for, and never a credential, whether the call was let in or refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client } from "./client";
import { startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let pretty: TestServer;

const requestLines = (output: string) =>
  output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.msg === "request");

beforeAll(async () => {
  [server, pretty] = await Promise.all([startServer(), startServer({ QUIVER_LOG_FORMAT: "pretty" })]);
});
afterAll(async () => {
  await server?.stop();
  await pretty?.stop();
});

describe("the request log", () => {
  it("has one JSON line per request with its id, principal, operation, status and duration, and no credential", async () => {
    const api = client(server.url, server.auth);
    const secretKey = "not-a-key-but-secret-0123456789";
    const token = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2VjcmV0LXRva2Vu";
    await api.post("/v1/namespace/logs/create", {}, { "x-request-id": "req-create-1" });
    await api.post("/v1/table/nope/describe", {}, { "x-request-id": "req-missing-2" });
    await client(server.url, { "x-api-key": secretKey }).get("/v1/table", { "x-request-id": "req-badkey-3" });
    await client(server.url, { authorization: `Bearer ${token}` }).get("/v1/table", { "x-request-id": "req-token-4" });
    await client(server.url).post("/v1/table/t/describe", { identity: { api_key: secretKey } }, { "x-request-id": "req-identity-5" });
    let lines: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 50 && lines.length < 5; i++) {
      lines = requestLines(server.output()).filter((l) => String(l.request_id).startsWith("req-"));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const byId = Object.fromEntries(lines.map((l) => [l.request_id, l]));
    expect(byId["req-create-1"]).toMatchObject({
      level: 30,
      method: "POST",
      path: "/v1/namespace/logs/create",
      operation: "CreateNamespace",
      status: 200,
      principal: "key:QUIVER_ADMIN_API_KEY",
      database: "default",
      duration_ms: expect.any(Number),
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(byId["req-missing-2"]).toMatchObject({ level: 40, operation: "DescribeTable", status: 404, code: ErrorCode.TableNotFound });
    expect(byId["req-badkey-3"]).toMatchObject({ status: 401, principal: null, code: ErrorCode.Unauthenticated });
    expect(byId["req-token-4"]).toMatchObject({ status: 401, principal: null });
    expect(byId["req-identity-5"]).toMatchObject({ status: 401, principal: null });
    for (const secret of [secretKey, token, server.adminKey]) expect(server.output()).not.toContain(secret);
  });

  it("is readable in a terminal's format when asked for", async () => {
    const api = client(pretty.url, pretty.auth);
    await api.get("/v1/table", { "x-request-id": "req-pretty-1" });
    let line: string | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = pretty
        .output()
        .split("\n")
        .find((l) => l.includes("req-pretty-1"));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(line).toBeDefined();
    expect(line!.startsWith("{")).toBe(false);
    expect(line).toMatch(/INFO.*request.*ListAllTables/);
  });
});
