import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, expectError, rows } from "./client";
import { startServer, storeOf, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
});
afterAll(() => server?.stop());

describe("namespaces", () => {
  it("creates nested namespaces with properties and describes them", async () => {
    expect((await api.post("/v1/namespace/prod/create", { properties: { owner: "data" } })).body.properties).toEqual({ owner: "data" });
    expect((await api.post("/v1/namespace/prod$sales/create", {})).status).toBe(200);
    expect((await api.post("/v1/namespace/prod$sales$eu/create", { id: ["prod", "sales", "eu"] })).status).toBe(200);
    expect((await api.post("/v1/namespace/prod/describe", {})).body.properties).toEqual({ owner: "data" });
    expect((await api.post("/v1/namespace/%24/describe")).body.properties).toEqual({});
    expect((await api.post("/v1/namespace/prod$sales/exists")).status).toBe(200);
    expectError(await api.post("/v1/namespace/nope/exists"), 404, ErrorCode.NamespaceNotFound);
    expectError(await api.post("/v1/namespace/nope/describe"), 404, ErrorCode.NamespaceNotFound);
  });

  it("honours create modes", async () => {
    expectError(await api.post("/v1/namespace/prod/create", {}), 409, ErrorCode.NamespaceAlreadyExists);
    expect((await api.post("/v1/namespace/prod/create", { mode: "ExistOk", properties: { ignored: "1" } })).body.properties).toEqual({ owner: "data" });
    expect((await api.post("/v1/namespace/prod/create", { mode: "exist_ok" })).status).toBe(200);
    expect((await api.post("/v1/namespace/prod/create", { mode: "Overwrite", properties: { owner: "ops" } })).body.properties).toEqual({ owner: "ops" });
    expect((await api.post("/v1/namespace/prod/describe")).body.properties).toEqual({ owner: "ops" });
    expectError(await api.post("/v1/namespace/prod/create", { mode: "sometimes" }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/namespace/%24/create", {}), 409, ErrorCode.NamespaceAlreadyExists);
    expectError(await api.post("/v1/namespace/missing$child/create", {}), 404, ErrorCode.NamespaceNotFound);
  });

  it("lists children, paged, with a custom delimiter", async () => {
    for (let i = 0; i < 7; i++) await api.post(`/v1/namespace/prod$n${i}/create`, {});
    const all = await api.get<{ namespaces: string[] }>("/v1/namespace/prod/list");
    expect(all.body.namespaces).toEqual(["n0", "n1", "n2", "n3", "n4", "n5", "n6", "sales"]);
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await api.get<{ namespaces: string[]; page_token?: string }>(
        `/v1/namespace/prod/list?limit=3${token ? `&page_token=${encodeURIComponent(token)}` : ""}`,
      );
      expect(page.body.namespaces.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.namespaces);
      token = page.body.page_token;
      pages++;
    } while (token);
    expect(seen).toEqual(all.body.namespaces);
    expect(pages).toBe(3);
    expect((await api.get<{ namespaces: string[] }>("/v1/namespace/prod.sales/list?delimiter=.")).body.namespaces).toEqual(["eu"]);
    expect((await api.get<{ namespaces: string[] }>("/v1/namespace/%24/list")).body.namespaces).toEqual(["prod"]);
    expectError(await api.get("/v1/namespace/nope/list"), 404, ErrorCode.NamespaceNotFound);
    expect((await api.get<{ namespaces: string[] }>("/v1/namespace/prod/list?page_token=n4")).body.namespaces).toEqual(["n5", "n6", "sales"]);
    expectError(await api.get("/v1/namespace/prod/list?limit=0"), 400, ErrorCode.InvalidInput);
  });

  it("drops with Restrict, Cascade, Fail and Skip", async () => {
    await api.post("/v1/namespace/tmp/create", {});
    await api.post("/v1/namespace/tmp$inner/create", {});
    await api.arrow("/v1/table/tmp$inner$t/create", rows(0, 5));
    await api.post("/v1/table/tmp$declared/declare", {});
    expectError(await api.post("/v1/namespace/tmp/drop", {}), 409, ErrorCode.NamespaceNotEmpty);
    expectError(await api.post("/v1/namespace/tmp/drop", { behavior: "Restrict" }), 409, ErrorCode.NamespaceNotEmpty);
    const dropped = await api.post("/v1/namespace/tmp/drop", { behavior: "Cascade" });
    expect(dropped.status).toBe(200);
    expectError(await api.post("/v1/namespace/tmp/exists"), 404, ErrorCode.NamespaceNotFound);
    expectError(await api.post("/v1/namespace/tmp$inner/exists"), 404, ErrorCode.NamespaceNotFound);
    const all = await api.get<{ tables: string[] }>("/v1/table");
    expect(all.body.tables.filter((t) => t.startsWith("tmp"))).toEqual([]);
    expectError(await api.post("/v1/namespace/tmp/drop", {}), 404, ErrorCode.NamespaceNotFound);
    expect((await api.post("/v1/namespace/tmp/drop", { mode: "Skip" })).status).toBe(200);
    expectError(await api.post("/v1/namespace/%24/drop", {}), 400, ErrorCode.InvalidInput);
  });
});

describe("the catalog's own history", () => {
  it("is pruned as the catalog is compacted, so checking for its latest version stays cheap", async () => {
    const versions = async () => (await storeOf(server).list("__manifest/_versions/")).filter((n) => n.endsWith(".manifest")).length;
    expect((await api.post("/v1/namespace/hist/create", {})).status).toBe(200);
    const burst = async (from: number) => {
      for (let i = from; i < from + 100; i++) expect((await api.post(`/v1/table/hist$t${i}/declare`, {})).status).toBe(200);
    };
    // 201 catalog commits in two bursts. Superseded versions are kept 3 s and a compaction comes with every hundred
    // commits, so a slow store may already prune some of the first burst's (the count after it is not asserted);
    // after a wait longer than that, the compaction in the second burst prunes all of the first burst's.
    await burst(0);
    await new Promise((r) => setTimeout(r, 4_000));
    await burst(100);
    let after = await versions();
    for (let i = 0; i < 100 && after >= 150; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await versions();
    }
    expect(after).toBeLessThan(150);
    const listed = await api.get<{ tables: string[] }>("/v1/namespace/hist/table/list?limit=1000");
    expect(listed.body.tables).toHaveLength(200);
  }, 120_000);
});
