/**
 * No route drops a field it was sent. For every route of the API: an unknown query parameter, or an unknown field of
 * a JSON body, is refused with a 400 (InvalidInput) that names it, and the request changes nothing.
 */
import { tableToIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "@/app/v1/_routes";
import type { RouteDef } from "@/server/http/route";
import { client, rows } from "./client";
import { rootSnapshot, startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  expect((await api.post("/v1/namespace/n/create", {})).status).toBe(200);
  expect((await api.arrow("/v1/table/n$t/create", rows(0, 5))).status).toBe(200);
});
afterAll(() => server?.stop());

/** The route's path with every parameter filled by an object that exists. */
const pathOf = (route: RouteDef) =>
  route.path
    .replace("{id}", route.path.startsWith("/v1/namespace/") ? "n" : "n$t")
    .replace("{table_name}", "n$t")
    .replace(/\{\w+\}/g, "x");

function send(route: RouteDef, method: string, query: string, json: unknown) {
  const headers: Record<string, string> = { ...server.auth };
  let body: BodyInit | Uint8Array | undefined;
  if (route.body?.kind === "arrow") {
    headers["content-type"] = "application/vnd.apache.arrow.stream";
    body = tableToIPC(rows(100, 101), "stream");
  } else if (route.body?.kind === "json" && method !== "GET") {
    headers["content-type"] = "application/json";
    body = JSON.stringify(json);
  }
  return api.raw(method, `${pathOf(route)}${query}`, body, headers);
}

const cases = apiRoutes.flatMap((route) => route.methods.map((method) => ({ name: `${method} ${route.path}`, route, method })));

describe("unknown fields are refused by name, never ignored", () => {
  it.each(cases)("$name: an unknown query parameter", async ({ route, method }) => {
    const before = await rootSnapshot(server);
    const reply = await send(route, method, "?zz_unknown=1", {});
    expect(reply.status, JSON.stringify(reply.body)).toBe(400);
    expect(reply.body).toMatchObject({ code: ErrorCode.InvalidInput, status: 400 });
    expect(String(reply.body.detail)).toContain("query.zz_unknown");
    expect(await rootSnapshot(server)).toEqual(before);
  });

  it.each(cases.filter(({ route, method }) => route.body?.kind === "json" && method !== "GET"))("$name: an unknown body field", async ({ route, method }) => {
    const before = await rootSnapshot(server);
    const reply = await send(route, method, "", { zz_unknown: 1 });
    expect(reply.status, JSON.stringify(reply.body)).toBe(400);
    expect(String(reply.body.detail)).toContain("body.zz_unknown");
    expect(await rootSnapshot(server)).toEqual(before);
  });

  it.each(["valueOf", "constructor", "toString", "__proto__", "hasOwnProperty"])(
    "a body field named as an Object method, %s, is unknown like any other (it once failed the server)",
    async (name) => {
      const reply = await api.raw("POST", "/v1/namespace/proto_named/create", `{"${name}": -1}`, { ...server.auth, "content-type": "application/json" });
      expect(reply.status, JSON.stringify(reply.body)).toBe(400);
      expect(String(reply.body.detail)).toContain(`body.${name}`);
    },
  );

  it("and the objects the requests named are as they were", async () => {
    expect((await api.post<number>("/v1/table/n$t/count_rows", {})).body).toBe(5);
    expect((await api.get<{ tables: string[] }>("/v1/namespace/n/table/list")).body.tables).toEqual(["t"]);
  });
});
