import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "@/app/v1/_routes";
import type { RouteDef } from "@/server/http/route";
import { client, expectError, postAccessKey, rows } from "./client";
import { freePort, startOidc, type TestOidc } from "./oidc";
import { startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let oidc: TestOidc;
let admin: ReturnType<typeof client>;
const keys: Record<string, string> = {};

async function createKey(name: string, role: string, scope?: object, expires_at?: string): Promise<string> {
  const reply = await admin.post<{ key: string }>("/v1/admin/keys/create", { name, role, scope, expires_at });
  expect(reply.status).toBe(200);
  return reply.body.key;
}

beforeAll(async () => {
  const port = await freePort();
  oidc = await startOidc(`http://127.0.0.1:${port}`);
  server = await startServer(oidc.env, { port });
  admin = client(server.url, server.auth);
  await admin.post("/v1/namespace/m/create", {});
  await admin.post("/v1/namespace/secret/create", {});
  await admin.arrow("/v1/table/m$t/create", rows(0, 5));
  await admin.arrow("/v1/table/secret$s/create", rows(0, 5));
  await admin.post("/v1/admin/databases/create", { name: "other" });
  keys.viewer = await createKey("viewer", "viewer");
  keys.editor = await createKey("editor", "editor");
  keys.otherDb = await createKey("other-db admin", "admin", { database: "other", kind: "namespace", id: [] });
  keys.scoped = await createKey("m only", "editor", { kind: "namespace", id: ["m"] });
});
afterAll(async () => {
  await server?.stop();
  await oidc?.stop();
});

/** A concrete request for every route of the router, so a new route cannot escape the matrix. */
function requestFor(route: RouteDef): { method: string; path: string } {
  const id = route.access.on === "parent" ? "m$new" : route.access.on === "namespace" ? "m" : "m$t";
  const path = route.path.replace("{id}", id).replace("{table_name}", "t2").replace("{key_id}", "0123456789abcdef").replace("{grant_id}", "0123456789abcdef");
  return { method: route.methods[0], path };
}

const call = (route: RouteDef, headers: Record<string, string>) => {
  const { method, path } = requestFor(route);
  return client(server.url, headers).raw(method, path, undefined, method === "POST" ? { "content-type": "application/json" } : {});
};

const rank = { viewer: 0, visible: 0, authenticated: 0, editor: 1, admin: 2, "global-admin": 3, "metrics-reader": 3 } as const;

describe("401/403 matrix over every route", () => {
  it("refuses every route without credentials, with 401 and a Bearer challenge", async () => {
    expect(apiRoutes.length).toBeGreaterThan(30);
    for (const route of apiRoutes) {
      const reply = await call(route, {});
      expect(reply.status, `${route.operationId}`).toBe(401);
      expect(reply.headers.get("www-authenticate"), route.operationId).toMatch(/^Bearer/);
      expect((reply.body as { code: number }).code).toBe(ErrorCode.Unauthenticated);
    }
  });

  it("refuses every route with bad credentials", async () => {
    const bad: Array<Record<string, string>> = [
      { "x-api-key": "qvr_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
      { authorization: "Bearer not-a-token" },
      { "x-api-key": "nope" },
    ];
    for (const headers of bad) {
      for (const route of apiRoutes) expect((await call(route, headers)).status, `${route.operationId} ${JSON.stringify(headers)}`).toBe(401);
    }
  });

  it("gives 403 to a viewer on writes, an editor on admin actions, and a key of another database", async () => {
    for (const route of apiRoutes) {
      const need = rank[route.access.need];
      const asViewer = await call(route, { "x-api-key": keys.viewer });
      const asEditor = await call(route, { "x-api-key": keys.editor });
      const otherDb = await call(route, { "x-api-key": keys.otherDb });
      if (need >= rank.editor) expect(asViewer.status, `viewer ${route.operationId}`).toBe(403);
      else expect([401, 403], `viewer ${route.operationId}`).not.toContain(asViewer.status);
      if (need >= rank.admin) expect(asEditor.status, `editor ${route.operationId}`).toBe(403);
      else expect([401, 403], `editor ${route.operationId}`).not.toContain(asEditor.status);
      expect(otherDb.status, `other database ${route.operationId}`).toBe(403);
      for (const reply of [asViewer, asEditor, otherDb].filter((r) => r.status === 403)) {
        expect(reply.body).toMatchObject({ type: "/errors/forbidden-request", status: 403, code: ErrorCode.PermissionDenied });
      }
    }
  });

  it("answers no route with 2xx without credentials", async () => {
    for (const route of apiRoutes) {
      for (const method of route.methods) {
        const { path } = requestFor(route);
        const reply = await client(server.url).raw(method, path, method === "GET" ? undefined : "{}", { "content-type": "application/json" });
        expect(reply.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      }
    }
  });
});

describe("API keys", () => {
  it("accepts a key as x-api-key, as a bearer token and in the body's identity", async () => {
    const viewer = client(server.url);
    expect((await viewer.post("/v1/table/m$t/count_rows", {}, { "x-api-key": keys.viewer })).body).toBe(5);
    expect((await viewer.post("/v1/table/m$t/count_rows", {}, { authorization: `Bearer ${keys.viewer}` })).body).toBe(5);
    expect((await viewer.post("/v1/table/m$t/count_rows", { identity: { api_key: keys.viewer } })).body).toBe(5);
  });

  it("accepts the configured admin key, which need not look like an issued key, wherever it accepts an issued one", async () => {
    const adminKey = server.auth["x-api-key"];
    expect(adminKey.startsWith("qvr_")).toBe(false);
    const asBearer = client(server.url, { authorization: `Bearer ${adminKey}` });
    const whoami = await asBearer.get<{ principal: { name: string }; admin: boolean }>("/v1/whoami");
    expect(whoami.status).toBe(200);
    expect(whoami.body).toMatchObject({ principal: { name: "QUIVER_ADMIN_API_KEY" }, admin: true });
    expect((await asBearer.post("/v1/table/secret$s/count_rows", {})).body).toBe(5);
    expect((await client(server.url).post("/v1/table/secret$s/count_rows", { identity: { auth_token: adminKey } })).body).toBe(5);
    const scraped = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain("quiver_http_requests_total");
    // A near miss is still refused, as a bearer token no provider issued.
    expectError(await client(server.url, { authorization: `Bearer ${adminKey}x` }).get("/v1/whoami"), 401, ErrorCode.Unauthenticated);
  });

  it("stores only a hash, lists without secrets, records last use, and stops working when revoked or expired", async () => {
    const authDir = path.join(server.root, ".quiver", "auth", "keys");
    const stored = readdirSync(authDir)
      .map((f) => readFileSync(path.join(authDir, f), "utf8"))
      .join("\n");
    // The secret is everything after the id; base64url may itself contain "_".
    for (const key of Object.values(keys)) expect(stored).not.toContain(key.split("_").slice(2).join("_"));
    const listed = await admin.get<{ keys: Array<{ id: string; name: string; lastUsedAt: string | null; hash?: string }> }>("/v1/admin/keys");
    const viewerRecord = listed.body.keys.find((k) => k.name === "viewer")!;
    expect(viewerRecord.hash).toBeUndefined();
    expect(viewerRecord.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain(keys.viewer);

    const doomed = await createKey("doomed", "viewer");
    expect((await client(server.url, { "x-api-key": doomed }).get("/v1/whoami")).status).toBe(200);
    const id = doomed.split("_")[1];
    expect((await admin.post(`/v1/admin/keys/${id}/revoke`, {})).body.record).toMatchObject({ id });
    const revoked = await client(server.url, { "x-api-key": doomed }).get("/v1/whoami");
    expectError(revoked, 401, ErrorCode.Unauthenticated);
    expect(revoked.body.detail).toMatch(/revoked/);

    const shortLived = await createKey("short", "viewer", undefined, new Date(Date.now() + 1500).toISOString());
    expect((await client(server.url, { "x-api-key": shortLived }).get("/v1/whoami")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1700));
    const expired = await client(server.url, { "x-api-key": shortLived }).get("/v1/whoami");
    expectError(expired, 401, ErrorCode.Unauthenticated);
    expect(expired.body.detail).toMatch(/expired/);
    expectError(await admin.post("/v1/admin/keys/create", { name: "past", role: "viewer", expires_at: "2001-01-01T00:00:00Z" }), 400, ErrorCode.InvalidInput);
  });

  it("confines a key to its scope, and shows it only what it may read", async () => {
    const scoped = client(server.url, { "x-api-key": keys.scoped });
    expect((await scoped.arrow("/v1/table/m$t/insert", rows(5, 6))).status).toBe(200);
    expectError(await scoped.post("/v1/table/secret$s/count_rows", {}), 403, ErrorCode.PermissionDenied);
    expectError(await scoped.arrow("/v1/table/secret$s/insert", rows(5, 6)), 403, ErrorCode.PermissionDenied);
    expect((await scoped.get<{ tables: string[] }>("/v1/table")).body.tables).toEqual(["m$t"]);
    expect((await scoped.get<{ namespaces: string[] }>("/v1/namespace/%24/list")).body.namespaces).toEqual(["m"]);
    expectError(await scoped.get("/v1/namespace/secret/table/list"), 403, ErrorCode.PermissionDenied);
    expect((await scoped.get<{ tables: string[] }>("/v1/tables")).body.tables).toEqual(["m$t"]);
  });

  it("makes the declaring or creating principal admin of the table, visibly", async () => {
    const scoped = client(server.url, { "x-api-key": keys.scoped });
    expect((await scoped.post("/v1/table/m$mine/declare", {})).status).toBe(200);
    const grants = await admin.get<{ grants: Array<{ principal: { type: string; name: string }; role: string; scope: { id: string[]; kind: string } }> }>(
      "/v1/admin/grants",
    );
    const keyId = keys.scoped.split("_")[1];
    expect(grants.body.grants).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          principal: { type: "key", name: keyId },
          role: "admin",
          scope: expect.objectContaining({ kind: "table", id: ["m", "mine"] }),
        }),
      ]),
    );
    expectError(await scoped.post("/v1/table/m$t/drop"), 403, ErrorCode.PermissionDenied);
    expect((await scoped.post("/v1/table/m$mine/drop")).status).toBe(200);
    // A table made with its data (CreateTable, as LanceDB's clients make one) is its maker's too.
    expect((await scoped.arrow("/v1/table/m$made/create", rows(0, 2))).status).toBe(200);
    expect((await scoped.post("/v1/table/m$made/drop")).status).toBe(200);
    const after = await admin.get<{ grants: Array<{ scope: { id: string[] } }> }>("/v1/admin/grants");
    expect(after.body.grants.some((g) => g.scope.id.join("$") === "m$mine")).toBe(false);
  });

  it("writes no grant when the declarer is admin of the table by what it is", async () => {
    const before = (await admin.get<{ grants: unknown[] }>("/v1/admin/grants")).body.grants;
    expect((await admin.post("/v1/table/m$by_admin/declare", {})).status).toBe(200);
    expect((await admin.get<{ grants: unknown[] }>("/v1/admin/grants")).body.grants).toEqual(before);
    expect((await admin.post("/v1/table/m$by_admin/drop")).status).toBe(200);
  });

  it("requires x-api-key on the enterprise endpoints", async () => {
    const token = await oidc.clientCredentialsToken();
    expectError(await client(server.url, { authorization: `Bearer ${keys.editor}` }).get("/v1/tables"), 401, ErrorCode.Unauthenticated);
    expectError(await client(server.url, { authorization: `Bearer ${token}` }).get("/v1/tables"), 401, ErrorCode.Unauthenticated);
    expect((await client(server.url, { "x-api-key": keys.editor }).get("/v1/tables")).status).toBe(200);
  });
});

describe("OAuth access tokens", () => {
  const now = () => Math.floor(Date.now() / 1000);

  it("accepts a JWT access token from the provider, and an opaque one through introspection", async () => {
    const jwt = await oidc.clientCredentialsToken();
    const whoami = await client(server.url, { authorization: `Bearer ${jwt}` }).get("/v1/whoami");
    expect(whoami.status, JSON.stringify(whoami.body)).toBe(200);
    expect(whoami.body.principal).toMatchObject({ kind: "user", id: "machine", name: "machine@example.com" });
    const opaque = await oidc.clientCredentialsToken(true);
    expect(opaque.split(".").length).toBe(1);
    const viaIntrospection = await client(server.url, { authorization: `Bearer ${opaque}` }).get("/v1/whoami");
    expect(viaIntrospection.status).toBe(200);
    expect(viaIntrospection.body.principal).toMatchObject({ kind: "user", name: "machine@example.com" });
  });

  it.each([
    ["expired", { sub: "u1", exp: now() - 3600 }, {}, /expired/],
    ["not yet valid", { sub: "u1", exp: now() + 3600, nbf: now() + 3600 }, {}, /nbf/],
    ["for another audience", { sub: "u1", exp: now() + 3600, aud: "https://elsewhere" }, {}, /aud/],
    ["from another issuer", { sub: "u1", exp: now() + 3600, iss: "https://evil.example" }, {}, /iss/],
    ["signed by an unknown key id", { sub: "u1", exp: now() + 3600 }, { foreignKey: true, kid: "someone-else" }, /unknown key/],
    ["with a forged signature", { sub: "u1", exp: now() + 3600 }, { foreignKey: true }, /signature/],
  ])("refuses a token %s", async (_, claims, options, message) => {
    const token = await oidc.sign(claims, options);
    const reply = await client(server.url, { authorization: `Bearer ${token}` }).get("/v1/whoami");
    expectError(reply, 401, ErrorCode.Unauthenticated);
    expect(reply.body.detail).toMatch(message);
  });

  it("accepts a token within the clock skew, and refuses a random opaque token", async () => {
    const skewed = await oidc.sign({ sub: "u2", exp: now() + 3600, nbf: now() + 10 });
    expect((await client(server.url, { authorization: `Bearer ${skewed}` }).get("/v1/whoami")).status).toBe(200);
    expectError(await client(server.url, { authorization: "Bearer randomopaquetoken" }).get("/v1/whoami"), 401, ErrorCode.Unauthenticated);
  });

  it("authorizes users and groups through grants, and lists only what they may read", async () => {
    const analyst = await oidc.sign({ sub: "analyst-1", email: "analyst-1@example.com", groups: ["analysts"], exp: now() + 3600 });
    const user = client(server.url, { authorization: `Bearer ${analyst}` });
    expectError(await user.post("/v1/table/m$t/count_rows", {}), 403, ErrorCode.PermissionDenied);
    expect((await user.get<{ tables: string[] }>("/v1/table")).body.tables).toEqual([]);
    await admin.post("/v1/admin/grants/create", { principal: { type: "group", name: "analysts" }, role: "viewer", scope: { kind: "namespace", id: ["m"] } });
    expect((await user.post("/v1/table/m$t/count_rows", {})).body).toBe(6);
    expectError(await user.arrow("/v1/table/m$t/insert", rows(0, 1)), 403, ErrorCode.PermissionDenied);
    expect((await user.get<{ tables: string[] }>("/v1/table")).body.tables).toEqual(["m$t"]);
    await admin.post("/v1/admin/grants/create", {
      principal: { type: "user", name: "analyst-1@example.com" },
      role: "editor",
      scope: { kind: "table", id: ["m", "t"] },
    });
    expect((await user.arrow("/v1/table/m$t/insert", rows(100, 101))).status).toBe(200);
    expectError(await user.post("/v1/admin/keys/create", { name: "x", role: "admin" }), 403, ErrorCode.PermissionDenied);
  });
});

describe("grants follow the catalog's changes", () => {
  it("a renamed table keeps its grants under its new name; a dropped namespace's grants, and those of all it held, go with it", async () => {
    const token = await oidc.sign({ sub: "grantee-1", email: "grantee-1@example.com", exp: Math.floor(Date.now() / 1000) + 3600 });
    const user = client(server.url, { authorization: `Bearer ${token}` });
    const grant = (role: string, kind: string, id: string[]) =>
      admin.post("/v1/admin/grants/create", { principal: { type: "user", name: "grantee-1@example.com" }, role, scope: { kind, id, database: "default" } });
    for (const ns of ["g", "g$sub"]) expect((await admin.post(`/v1/namespace/${ns}/create`, {})).status).toBe(200);
    for (const t of ["g$t", "g$sub$u"]) expect((await admin.arrow(`/v1/table/${t}/create`, rows(0, 2))).status).toBe(200);
    await grant("editor", "table", ["g", "t"]);
    await grant("viewer", "namespace", ["g", "sub"]);
    await grant("editor", "table", ["g", "sub", "u"]);
    expect((await user.post("/v1/table/g$sub$u/count_rows", {})).body).toBe(2);

    expect((await admin.post("/v1/table/g$t/rename", { new_table_name: "t2" })).status).toBe(200);
    expect((await user.arrow("/v1/table/g$t2/insert", rows(2, 3))).status).toBe(200);
    expect((await admin.arrow("/v1/table/g$t/create", rows(0, 1))).status).toBe(200);
    expectError(await user.post("/v1/table/g$t/count_rows", {}), 403, ErrorCode.PermissionDenied);

    expect((await admin.post("/v1/namespace/g$sub/drop", { behavior: "Cascade" })).status).toBe(200);
    const scopes = (await admin.get<{ grants: Array<{ scope: { id: string[] } }> }>("/v1/admin/grants")).body.grants.map((g) => g.scope.id.join("$"));
    expect(scopes).toContain("g$t2");
    expect(scopes.filter((id) => id.startsWith("g$sub"))).toEqual([]);
    expect((await admin.post("/v1/namespace/g$sub/create", {})).status).toBe(200);
    expect((await admin.arrow("/v1/table/g$sub$u/create", rows(0, 1))).status).toBe(200);
    expectError(await user.post("/v1/table/g$sub$u/count_rows", {}), 403, ErrorCode.PermissionDenied);
  });
});

describe("databases", () => {
  it("keeps databases apart, selected by header; an unknown one is 404", async () => {
    const other = client(server.url, { ...server.auth, "x-quiver-database": "other" });
    expect((await other.get<{ tables: string[] }>("/v1/table")).body.tables).toEqual([]);
    expect((await other.post("/v1/namespace/m/create", {})).status).toBe(200);
    expect((await other.arrow("/v1/table/m$t/create", rows(0, 2))).status).toBe(200);
    expect((await other.post("/v1/table/m$t/count_rows", {})).body).toBe(2);
    expect((await client(server.url, { ...server.auth, "x-lancedb-database": "other" }).post("/v1/table/m$t/count_rows", {})).body).toBe(2);
    expect((await admin.post("/v1/table/m$t/count_rows", {})).body).toBe(7);
    const otherKey = client(server.url, { "x-api-key": keys.otherDb, "x-quiver-database": "other" });
    expect((await otherKey.post("/v1/table/m$t/count_rows", {})).body).toBe(2);
    expectError(await client(server.url, { ...server.auth, "x-quiver-database": "nowhere" }).get("/v1/table"), 404, ErrorCode.NamespaceNotFound);
    expectError(await client(server.url, { ...server.auth, "x-quiver-database": "../etc" }).get("/v1/table"), 400, ErrorCode.InvalidInput);
    expect((await admin.get<{ databases: string[] }>("/v1/admin/databases")).body.databases).toEqual(["default", "other"]);
  });
});

describe("audit log", () => {
  it("records mutating and refused calls with who, what, target and outcome, filterable and paged", async () => {
    const viewer = client(server.url, { "x-api-key": keys.viewer, "x-request-id": "audit-refused-1" });
    await viewer.arrow("/v1/table/m$t/insert", rows(0, 1));
    await admin.arrow("/v1/table/m$t/insert", rows(200, 201), { "x-request-id": "audit-ok-1" });
    const refused = await admin.get<{ entries: Array<Record<string, unknown>> }>("/v1/admin/audit?outcome=refused&action=InsertIntoTable");
    expect(refused.body.entries[0]).toMatchObject({
      requestId: "audit-refused-1",
      action: "InsertIntoTable",
      target: "m$t",
      status: 403,
      code: ErrorCode.PermissionDenied,
      outcome: "refused",
      principal: { kind: "key", name: "viewer" },
      database: "default",
    });
    const ok = await admin.get<{ entries: Array<Record<string, unknown>> }>("/v1/admin/audit?action=InsertIntoTable&outcome=ok&limit=1");
    expect(ok.body.entries).toHaveLength(1);
    expect(ok.body.entries[0]).toMatchObject({ requestId: "audit-ok-1", status: 200, principal: { name: "QUIVER_ADMIN_API_KEY" } });
    const page1 = await admin.get<{ entries: Array<{ requestId: string }>; page_token?: string }>("/v1/admin/audit?limit=3");
    const page2 = await admin.get<{ entries: Array<{ requestId: string }> }>(`/v1/admin/audit?limit=3&page_token=${page1.body.page_token}`);
    expect(page2.body.entries.length).toBe(3);
    expect(page2.body.entries.map((e) => e.requestId)).not.toContain(page1.body.entries[0].requestId);
    const unauthenticated = await admin.get<{ entries: Array<{ principal: unknown; status: number }> }>("/v1/admin/audit?outcome=refused&limit=1000");
    expect(unauthenticated.body.entries.some((e) => e.principal === null && e.status === 401)).toBe(true);
  });

  it("never writes keys or tokens to the audit log or the server output", async () => {
    const auditDir = path.join(server.root, ".quiver", "auth", "audit");
    const segments = readdirSync(auditDir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl"));
    expect(segments.length).toBeGreaterThan(0);
    const audit = segments.map((f) => readFileSync(path.join(auditDir, f), "utf8")).join("\n");
    for (const key of [...Object.values(keys), server.adminKey]) {
      expect(audit).not.toContain(key);
      expect(server.output()).not.toContain(key);
    }
  });
});

describe("console session", () => {
  async function signInWithKey(key: string): Promise<string> {
    const res = await postAccessKey(server.url, key);
    const session = res.headers.getSetCookie().find((c) => c.startsWith("next-auth.session-token="));
    expect(session, "session cookie").toBeDefined();
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    return session!.split(";")[0];
  }

  it("uses the session cookie only from the same origin, and ends with the key's revocation", async () => {
    const key = await createKey("console user", "viewer");
    const cookie = await signInWithKey(key);
    const same = await client(server.url, { cookie, "sec-fetch-site": "same-origin" }).get("/v1/whoami");
    expect(same.status).toBe(200);
    expect(same.body.principal).toMatchObject({ kind: "key", name: "console user" });
    expectError(await client(server.url, { cookie, "sec-fetch-site": "cross-site" }).get("/v1/whoami"), 403, ErrorCode.PermissionDenied);
    expectError(await client(server.url, { cookie, origin: "https://evil.example" }).post("/v1/table/m$t/count_rows", {}), 403, ErrorCode.PermissionDenied);
    expect((await client(server.url, { cookie, origin: server.url }).post("/v1/table/m$t/count_rows", {})).status).toBe(200);
    await admin.post(`/v1/admin/keys/${key.split("_")[1]}/revoke`, {});
    expectError(await client(server.url, { cookie, "sec-fetch-site": "same-origin" }).get("/v1/whoami"), 401, ErrorCode.Unauthenticated);
  });

  it("refuses a wrong access key at sign-in", async () => {
    const res = await postAccessKey(server.url, "qvr_wrong");
    expect(res.headers.getSetCookie().some((c) => c.startsWith("next-auth.session-token="))).toBe(false);
  });
});

describe("bootstrap", () => {
  it("creates, prints once and keeps only the hash of a first admin key when nothing is configured", async () => {
    const fresh = await startServer({ QUIVER_ADMIN_API_KEY: "" });
    try {
      const keyPattern = /qvr_[0-9a-f]{16}_[A-Za-z0-9_-]{43}/;
      for (let i = 0; i < 100 && !keyPattern.test(fresh.output()); i++) await new Promise((r) => setTimeout(r, 100));
      const printed = keyPattern.exec(fresh.output())?.[0];
      expect(printed).toBeDefined();
      const api = client(fresh.url, { "x-api-key": printed! });
      expect((await api.get("/v1/whoami")).body).toMatchObject({ admin: true });
      expect((await api.post("/v1/namespace/boot/create", {})).status).toBe(200);
      expectError(await client(fresh.url).get("/v1/table"), 401, ErrorCode.Unauthenticated);
      const stored = readdirSync(path.join(fresh.root, ".quiver", "auth", "keys"))
        .map((f) => readFileSync(path.join(fresh.root, ".quiver", "auth", "keys", f), "utf8"))
        .join("");
      // The secret is base64url, which may itself contain "_": it is the last 43 characters, not a split part.
      const secret = printed!.slice(-43);
      expect(secret).toHaveLength(43);
      expect(stored).not.toContain(secret);
    } finally {
      await fresh.stop();
    }
  });
});
