/**
 * The Lance REST namespace client (`connectNamespace("rest")`), unchanged: it declares tables through Quiver and
 * writes their datasets itself at the returned location, which must then look right through Quiver's own API.
 */
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { client } from "./client";
import { freePort, startOidc, type TestOidc } from "./oidc";
import { onObjectStore, startServer, type TestServer } from "./server";
import { testStore, testStoreKind } from "./store-server";

const arrow = createRequire(import.meta.url)("apache-arrow") as typeof import("apache-arrow");

let server: TestServer;
let oidc: TestOidc;
let ns: lancedb.Connection;

const schema = new arrow.Schema([new arrow.Field("id", new arrow.Int64(), false), new arrow.Field("s", new arrow.Utf8(), true)]);
const data = (from: number, to: number, s = (i: number) => `s${i}`) =>
  lancedb.makeArrowTable(
    Array.from({ length: to - from }, (_, k) => ({ id: BigInt(from + k), s: s(from + k) })),
    { schema },
  );

beforeAll(async () => {
  const port = await freePort();
  oidc = await startOidc(`http://127.0.0.1:${port}`);
  // On an object store the client writes with credentials Quiver vends: it brings no storage settings of its own.
  server = await startServer({ ...oidc.env, QUIVER_ADMINS: "machine", ...(onObjectStore ? testStore().vending : {}) }, { port });
  ns = await lancedb.connectNamespace("rest", { uri: server.url, headers: { "x-api-key": server.adminKey } });
});
afterAll(async () => {
  await server?.stop();
  await oidc?.stop();
});

describe("Lance REST namespace client", () => {
  it("creates, lists, describes and drops namespaces", async () => {
    await ns.createNamespace(["lake"], { properties: { owner: "data" } });
    await ns.createNamespace(["lake", "raw"]);
    await ns.createNamespace(["scratch"]);
    expect((await ns.listNamespaces([])).namespaces).toEqual(["lake", "scratch"]);
    expect((await ns.listNamespaces(["lake"])).namespaces).toEqual(["raw"]);
    expect((await ns.describeNamespace(["lake"])).properties).toEqual({ owner: "data" });
    await ns.dropNamespace(["scratch"]);
    expect((await ns.listNamespaces([])).namespaces).toEqual(["lake"]);
    await expect(ns.describeNamespace(["scratch"])).rejects.toThrow(/not found/i);
  });

  it("creates a table it writes itself, which Quiver then serves with versions, schema and rows", async () => {
    const t = await ns.createTable("events", data(0, 10), ["lake", "raw"]);
    expect(await t.countRows()).toBe(10);
    await t.add(data(10, 15));
    const merged = await t
      .mergeInsert("id")
      .whenMatchedUpdateAll()
      .whenNotMatchedInsertAll()
      .execute(data(12, 20, () => "merged"));
    expect(merged).toMatchObject({ numUpdatedRows: 3, numInsertedRows: 5 });
    const tags = await t.tags();
    await tags.create("start", 1);
    expect((await t.listVersions()).map((v) => v.version)).toEqual([1, 2, 3]);

    const api = client(server.url, server.auth);
    const described = await api.post("/v1/table/lake$raw$events/describe", {});
    expect(described.body).toMatchObject({ version: 3, is_only_declared: false });
    expect((described.body.schema as { fields: Array<{ name: string }> }).fields.map((f) => f.name)).toEqual(["id", "s"]);
    expect((await api.post("/v1/table/lake$raw$events/count_rows", { predicate: "s = 'merged'" })).body).toBe(8);
    const versions = await api.post<{ versions: Array<{ version: number; operation: string }> }>(
      "/v1/table/lake$raw$events/version/list?include_operations=true",
    );
    expect(versions.body.versions.map((v) => [v.version, v.operation])).toEqual([
      [1, "Overwrite"],
      [2, "Append"],
      [3, "Update"],
    ]);
    expect((await api.post("/v1/table/lake$raw$events/tags/version", { tag: "start" })).body.version).toBe(1);
    expect((await api.get<{ tables: string[] }>("/v1/table")).body.tables).toEqual(["lake$raw$events"]);
  });

  it("opens tables, lists them with paging, and drops them with their data", async () => {
    for (const name of ["a", "b", "c"]) await ns.createTable(name, data(0, 1), ["lake"]);
    expect(await ns.tableNames(["lake"])).toEqual(["a", "b", "c"]);
    expect(await ns.tableNames(["lake"], { limit: 2 })).toEqual(["a", "b"]);
    expect(await ns.tableNames(["lake"], { startAfter: "a", limit: 5 })).toEqual(["b", "c"]);
    const page = await ns.listTables(["lake"], { limit: 2 });
    expect(page.tables).toEqual(["a", "b"]);
    expect((await ns.listTables(["lake"], { limit: 2, pageToken: page.pageToken })).tables).toEqual(["c"]);
    const opened = await ns.openTable("events", ["lake", "raw"]);
    expect(await opened.countRows()).toBe(20);
    await ns.dropTable("b", ["lake"]);
    expect(await ns.tableNames(["lake"])).toEqual(["a", "c"]);
    await expect(ns.openTable("b", ["lake"])).rejects.toThrow(/not found/i);
  });

  it("authenticates with a bearer token in the headers, and refuses a wrong key with the error it knows", async () => {
    const token = await oidc.clientCredentialsToken();
    const withToken = await lancedb.connectNamespace("rest", { uri: server.url, headers: { authorization: `Bearer ${token}` } });
    expect(await withToken.tableNames(["lake"])).toEqual(["a", "c"]);
    const wrong = await lancedb.connectNamespace("rest", { uri: server.url, headers: { "x-api-key": "wrong" } });
    await expect(wrong.tableNames(["lake"])).rejects.toThrow(/credentials|API key|unauthenticated/i);
  });

  it.runIf(onObjectStore)("is vended short-lived credentials: read-write for an editor, read-only for a viewer, each vend audited", async () => {
    const api = client(server.url, server.auth);
    const described = await api.post<{ storage_options: Record<string, string> }>("/v1/table/lake$raw$events/describe", {});
    const options = described.body.storage_options;
    if (testStoreKind === "azurite") {
      expect(options.azure_storage_sas_token).toMatch(/(^|&)sp=racwdl(&|$)/);
      expect(options.azure_storage_account_key).toBeUndefined();
    } else {
      // an STS session of the vending role, never the service's own key
      const own = testStore().storageOptions;
      expect(options.aws_access_key_id).toMatch(/^ASIA/);
      expect(options.aws_access_key_id).not.toBe(own.aws_access_key_id);
      expect(options.aws_secret_access_key).not.toBe(own.aws_secret_access_key);
      expect(options.aws_session_token).toBeTruthy();
      expect(options.aws_endpoint).toBe(own.aws_endpoint);
    }
    expect(Number(options.expires_at_millis) - Date.now()).toBeGreaterThan(3_500_000);
    expect(Number(options.expires_at_millis) - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect((await api.post<{ storage_options: object }>("/v1/table/lake$raw$events/describe", { vend_credentials: false })).body.storage_options).toEqual({});

    const viewerKey = (await api.post<{ key: string }>("/v1/admin/keys/create", { name: "reader", role: "viewer" })).body.key;
    const reader = await lancedb.connectNamespace("rest", { uri: server.url, headers: { "x-api-key": viewerKey } });
    const table = await reader.openTable("events", ["lake", "raw"]);
    expect(await table.countRows()).toBe(20);
    // The store holds the viewer's credentials to reading (Azurite checks a SAS's permissions; moto checks no STS
    // session policy, whose statements server/storage/credentials/credentials.test.ts checks).
    if (testStore().checksVendedScope) {
      await expect(table.add(data(100, 101))).rejects.toThrow(/403|permission|authoriz/i);
      expect(await (await ns.openTable("events", ["lake", "raw"])).countRows()).toBe(20);
    }

    const audit = await api.get<{ entries: Array<{ principal: { name: string }; target: string; detail: string }> }>(
      "/v1/admin/audit?action=VendCredentials&target=lake$raw$events",
    );
    const details = audit.body.entries.map((e) => `${e.principal.name}: ${e.detail.split(" until ")[0]}`);
    expect(details).toContain("reader: read");
    expect(details).toContain("QUIVER_ADMIN_API_KEY: write");
  });
});
