/**
 * The API's idempotency contract: a write that carries a request id (`x-request-id`, which LanceDB's clients send on
 * every call, or `Idempotency-Key`) is applied at most once per table; a repeat answers what the first answered, one
 * that runs while the first does waits for it, and one that asks something else under the same id is refused. A
 * first attempt that committed nothing leaves the id free. Runs on a local root and on Azurite.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tableVersion } from "@/lib/contract/catalog";
import type { Answer } from "@/lib/contract/common";
import { ErrorCode } from "@/lib/contract/errors";
import { Int32, Table, vectorFromArray } from "apache-arrow";
import { client, expectError, rows } from "./client";
import { keyOf, startServer, storeOf, type TestServer } from "./server";

let server: TestServer;
let api: ReturnType<typeof client>;

type TableVersion = Answer<typeof tableVersion>;

const id = (name: string) => ({ "x-request-id": `${name}-${Math.random().toString(36).slice(2)}` });
const count = async (table: string, predicate?: string) => (await api.post(`/v1/table/${table}/count_rows`, predicate ? { predicate } : {})).body;
const versions = async (table: string) => (await api.post<{ versions: TableVersion[] }>(`/v1/table/${table}/version/list`)).body.versions.map((v) => v.version);

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
});
afterAll(() => server?.stop());

describe("a repeated write", () => {
  it("insert: the repeat answers the first's version and count and adds nothing; Idempotency-Key names a request too", async () => {
    expect((await api.arrow("/v1/table/ins/create", rows(0, 10))).status).toBe(200);
    const headers = id("insert");
    const first = await api.arrow("/v1/table/ins/insert", rows(10, 15), headers);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await api.arrow("/v1/table/ins/insert", rows(10, 15), headers);
    expect(again.status).toBe(200);
    expect({ version: again.body.version, rows: again.body.num_inserted_rows }).toEqual({ version: first.body.version, rows: 5 });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await count("ins")).toBe(15);
    const metrics = await fetch(`${server.url}/metrics`, { headers: server.auth }).then((r) => r.text());
    expect(metrics).toMatch(/quiver_write_repeats_total\{operation="InsertIntoTable",outcome="replayed"\} [1-9]/);

    // The key wins over the request id: two sends of one key with different request ids are one request.
    const key = { "idempotency-key": `key-${Math.random().toString(36).slice(2)}` };
    const keyed = await api.arrow("/v1/table/ins/insert", rows(15, 17), { ...key, ...id("a") });
    const rekeyed = await api.arrow("/v1/table/ins/insert", rows(15, 17), { ...key, ...id("b") });
    expect(rekeyed.body.version).toBe(keyed.body.version);
    expect(await count("ins")).toBe(17);
    expectError(await api.arrow("/v1/table/ins/insert", rows(15, 17), { "idempotency-key": "not a key!" }), 400, ErrorCode.InvalidInput);
  });

  it("the same rows sent again under a new request id are a new write", async () => {
    expect((await api.arrow("/v1/table/twice/create", rows(0, 1))).status).toBe(200);
    const one = await api.arrow("/v1/table/twice/insert", rows(1, 3), id("one"));
    const two = await api.arrow("/v1/table/twice/insert", rows(1, 3), id("two"));
    expect(two.body.version).toBe((one.body.version as number) + 1);
    expect(await count("twice")).toBe(5);
    // Once their answers are out, their markers among writes of the same body are gone.
    const markers = () => storeOf(server).list(".quiver/requests/same-body/");
    for (let i = 0; i < 50 && (await markers()).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await markers()).toEqual([]);
  });

  it("update, delete, merge-insert and overwrite: applied once, the repeat answering the first's counts", async () => {
    expect((await api.arrow("/v1/table/upd/create", rows(0, 10))).status).toBe(200);
    const update = { predicate: "id < 3", updates: [["x", "x + 100"]] };
    const h1 = id("update");
    const updated = await api.post("/v1/table/upd/update", update, h1);
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(await api.post("/v1/table/upd/update", update, h1).then((r) => r.body)).toMatchObject({ version: updated.body.version, updated_rows: 3 });
    expect(await count("upd", "x >= 100")).toBe(3);
    expect(await count("upd", "x >= 200")).toBe(0);

    const h2 = id("delete");
    const deleted = await api.post("/v1/table/upd/delete", { predicate: "id >= 8" }, h2);
    expect(deleted.body.num_deleted_rows).toBe(2);
    expect((await api.post("/v1/table/upd/delete", { predicate: "id >= 8" }, h2)).body).toMatchObject({ version: deleted.body.version, num_deleted_rows: 2 });

    const h3 = id("merge");
    const merge = "/v1/table/upd/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true";
    const merged = await api.arrow(merge, rows(5, 12), h3);
    expect(merged.body).toMatchObject({ num_inserted_rows: 4, num_updated_rows: 3 });
    expect((await api.arrow(merge, rows(5, 12), h3)).body).toMatchObject({ version: merged.body.version, num_inserted_rows: 4, num_updated_rows: 3 });

    const h4 = id("overwrite");
    const overwritten = await api.arrow("/v1/table/upd/insert?mode=overwrite", rows(0, 4), h4);
    const before = await versions("upd");
    expect((await api.arrow("/v1/table/upd/insert?mode=overwrite", rows(0, 4), h4)).body.version).toBe(overwritten.body.version);
    expect(await versions("upd")).toEqual(before);
    expect(await count("upd")).toBe(4);
  });

  it("column changes and restore: the repeat answers the version instead of failing on what the first did", async () => {
    expect((await api.arrow("/v1/table/cols/create", rows(0, 4))).status).toBe(200);
    for (const [path, body] of [
      ["add_columns", { new_columns: [{ name: "y", expression: "id * 2" }] }],
      ["alter_columns", { alterations: [{ path: "y", rename: "z" }] }],
      ["drop_columns", { columns: ["z"] }],
      ["restore", { version: 1 }],
    ] as const) {
      const h = id(path);
      const first = await api.post(`/v1/table/cols/${path}`, body, h);
      expect(first.status, `${path}: ${JSON.stringify(first.body)}`).toBe(200);
      const again = await api.post(`/v1/table/cols/${path}`, body, h);
      expect(again.status, `${path} again: ${JSON.stringify(again.body)}`).toBe(200);
      expect(again.body.version).toBe(first.body.version);
    }
    expect(await versions("cols")).toEqual([1, 2, 3, 4, 5]);
  });

  it("CreateTableVersion: the repeat answers the committed version rather than a conflict", async () => {
    expect((await api.arrow("/v1/table/staged/create", rows(0, 3))).status).toBe(200);
    expect((await api.arrow("/v1/table/staged/insert", rows(3, 5))).status).toBe(200);
    const store = storeOf(server);
    const final = keyOf(server, (await api.post<{ version: TableVersion }>("/v1/table/staged/version/describe", {})).body.version.manifest_path);
    const staged = final.replace(/\/_versions\/.*$/, "/_versions/2.manifest-staged");
    await store.put(staged, (await store.get(final))!);
    await store.delete(final);
    const h = id("create-version");
    const created = await api.post<{ version: TableVersion }>("/v1/table/staged/version/create", { version: 2, manifest_path: staged }, h);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const again = await api.post<{ version: TableVersion }>("/v1/table/staged/version/create", { version: 2, manifest_path: staged }, h);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.version).toEqual(created.body.version);
    expect(await count("staged")).toBe(5);
  });

  it("a batch: the repeat answers the first's results", async () => {
    const h = id("batch");
    const body = { operations: [{ declare_table: { id: ["batch_a"] } }, { declare_table: { id: ["batch_b"] } }] };
    const first = await api.post("/v1/table/batch-commit", body, h);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await api.post("/v1/table/batch-commit", body, h);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.results).toEqual(first.body.results);
  });
});

describe("the OpenAPI document", () => {
  it("names the headers a write is named by, and the one that says an answer is replayed", async () => {
    const doc = (
      await api.get<{ paths: Record<string, Record<string, { parameters: Array<{ name: string }>; responses: Record<string, { headers?: object }> }>> }>(
        "/v1/openapi.json",
      )
    ).body;
    const insert = doc.paths["/v1/table/{id}/insert"].post;
    expect(insert.parameters.map((p) => p.name)).toEqual(expect.arrayContaining(["Idempotency-Key", "x-request-id"]));
    expect(insert.responses["200"].headers).toHaveProperty("idempotent-replayed");
    expect(doc.paths["/v1/table/{id}/describe"].post.parameters.map((p) => p.name)).not.toContain("Idempotency-Key");
  });
});

describe("a request id used twice", () => {
  it("for another body is refused, and nothing is written", async () => {
    expect((await api.arrow("/v1/table/other/create", rows(0, 2))).status).toBe(200);
    const h = id("other");
    expect((await api.arrow("/v1/table/other/insert", rows(2, 4), h)).status).toBe(200);
    const refused = await api.arrow("/v1/table/other/insert", rows(10, 12), h);
    expectError(refused, 400, ErrorCode.InvalidInput);
    expect(refused.body.error).toContain("another request");
    expect(await count("other")).toBe(4);
    // The same id names a different request on another table.
    expect((await api.arrow("/v1/table/ins/insert", rows(100, 101), h)).status).toBe(200);
  });

  it("at once: one commit, every send answered with it", async () => {
    expect((await api.arrow("/v1/table/racing/create", rows(0, 1))).status).toBe(200);
    const h = id("race");
    const answers = await Promise.all(Array.from({ length: 8 }, () => api.arrow("/v1/table/racing/insert", rows(1, 51), h)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((a) => a.body.version)).size).toBe(1);
    expect(await count("racing")).toBe(51);
    expect(await versions("racing")).toEqual([1, 2]);
  });
});

describe("a first attempt that committed nothing", () => {
  it("leaves the request id free: the same request succeeds once what it needs is there", async () => {
    expect((await api.arrow("/v1/table/later/create", rows(0, 6))).status).toBe(200);
    const h = id("later");
    // Refused by the engine as it commits, after the request's claim: the claim goes, and its key is free.
    const claims = async () => (await storeOf(server).list(".quiver/requests/")).filter((key) => key.endsWith(".claim"));
    const before = await claims();
    expectError(await api.post("/v1/table/later/delete", { predicate: "w > 2" }, h), 404, ErrorCode.TableColumnNotFound);
    expect(await claims()).toEqual(before);
    expect((await api.post("/v1/table/later/add_columns", { new_columns: [{ name: "w", expression: "id" }] })).status).toBe(200);
    const deleted = await api.post("/v1/table/later/delete", { predicate: "w > 2" }, h);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body.num_deleted_rows).toBe(3);
    expect(await count("later")).toBe(3);
  });
});

describe("a write refused for what it asks", () => {
  it("leaves nothing in the ledger: no claim, no marker among writes of its body", async () => {
    expect((await api.arrow("/v1/table/refused/create", rows(0, 5))).status).toBe(200);
    const ledger = () => storeOf(server).list(".quiver/requests/");
    const before = await ledger();
    const other = new Table({ nope: vectorFromArray([1, 2], new Int32()) });
    expectError(await api.arrow("/v1/table/refused/insert", other, id("schema")), 400, ErrorCode.TableSchemaValidationError);
    expectError(
      await api.arrow("/v1/table/refused/merge_insert?on=nope&when_not_matched_insert_all=true", rows(5, 8), id("merge-on")),
      404,
      ErrorCode.TableColumnNotFound,
    );
    expectError(await api.arrow("/v1/table/no_such_table/insert", rows(5, 8), id("missing")), 404, ErrorCode.TableNotFound);
    const broken = await api.arrow("/v1/table/refused/insert", new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), id("broken"));
    expect(broken.status).toBe(400);
    expectError(await api.post("/v1/table/refused/update", { predicate: "id <", updates: [["x", "1"]] }, id("update")), 400, ErrorCode.InvalidInput);
    expect(await ledger()).toEqual(before);
    expect(await count("refused")).toBe(5);
  });
});

describe("the idempotency window", () => {
  let short: TestServer;
  beforeAll(async () => {
    short = await startServer({ QUIVER_IDEMPOTENCY_WINDOW: "1s" });
  });
  afterAll(() => short?.stop());

  it("forgets a request id once it has passed: the same id then writes again", async () => {
    const s = client(short.url, short.auth);
    expect((await s.arrow("/v1/table/w/create", rows(0, 1))).status).toBe(200);
    const h = id("window");
    const first = await s.arrow("/v1/table/w/insert", rows(1, 2), h);
    expect((await s.arrow("/v1/table/w/insert", rows(1, 2), h)).body.version).toBe(first.body.version);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await s.arrow("/v1/table/w/insert", rows(1, 2), h)).body.version).toBe((first.body.version as number) + 1);
    expect((await s.post("/v1/table/w/count_rows", {})).body).toBe(3);
  });
});
