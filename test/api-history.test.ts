import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, expectError, rows } from "./client";
import { keyOf, startServer, storeOf, type TestServer } from "./server";
import { testStoreKind } from "./store-server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;

interface VersionRecord {
  version: number;
  manifest_path: string;
  manifest_size: number;
  e_tag: string;
  timestamp_millis: number;
  metadata: Record<string, string>;
}

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  await api.post("/v1/namespace/h/create", {});
  await api.arrow("/v1/table/h$t/create", rows(0, 1));
  for (let i = 1; i < 125; i++) await api.arrow("/v1/table/h$t/insert", rows(i, i + 1));
});
afterAll(() => server?.stop());

async function allVersions(query: string, limit: number) {
  const out: VersionRecord[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const reply = await api.post<{ versions: VersionRecord[]; page_token?: string }>(
      `/v1/table/h$t/version/list?limit=${limit}${query}${token ? `&page_token=${encodeURIComponent(token)}` : ""}`,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.versions.length).toBeLessThanOrEqual(limit);
    out.push(...reply.body.versions);
    token = reply.body.page_token;
    pages++;
  } while (token);
  return { versions: out, pages };
}

describe("versions", () => {
  it("pages through 125 versions in both orders with complete records", async () => {
    const asc = await allVersions("", 50);
    expect(asc.pages).toBe(3);
    expect(asc.versions.map((v) => v.version)).toEqual(Array.from({ length: 125 }, (_, i) => i + 1));
    const desc = await allVersions("&descending=true", 40);
    expect(desc.pages).toBe(4);
    expect(desc.versions.map((v) => v.version)).toEqual(Array.from({ length: 125 }, (_, i) => 125 - i));
    const last = desc.versions[0];
    expect(last.metadata.total_rows).toBe("125");
    expect(last.manifest_size).toBe((await storeOf(server).head(keyOf(server, last.manifest_path)))?.size);
    // The store's etag: object_store's inode-time-size form for a local file, the store's own for an object.
    expect(last.e_tag).toMatch(
      testStoreKind === "azurite" ? /^"?0x[0-9A-F]+"?$/ : testStoreKind === "s3" ? /^"?[0-9a-f]{32}(-\d+)?"?$/ : /^[0-9a-f]+-[0-9a-f]+-[0-9a-f]+$/,
    );
    expect(Math.abs(last.timestamp_millis - Date.now())).toBeLessThan(10 * 60_000);
    expect(asc.versions[0].timestamp_millis).toBeLessThanOrEqual(last.timestamp_millis);
  });

  it("accepts GET, an empty body, null and {}", async () => {
    for (const body of [undefined, "null", "{}", ""]) {
      const reply = await api.raw("POST", "/v1/table/h$t/version/list?limit=1", body, body ? { "content-type": "application/json" } : {});
      expect((reply.body as { versions: unknown[] }).versions).toHaveLength(1);
    }
    expect((await api.get<{ versions: unknown[] }>("/v1/table/h$t/version/list/?limit=2")).body.versions).toHaveLength(2);
    expectError(await api.post("/v1/table/h$missing/version/list"), 404, ErrorCode.TableNotFound);
    expectError(await api.post("/v1/table/h$t/version/list?page_token=bogus"), 400, ErrorCode.InvalidInput);
  });

  it("describes a table dropped and created again at the same place from its new files", async () => {
    const versionOne = async () => {
      const reply = await api.post<{ versions: VersionRecord[] }>("/v1/table/again/version/list", {});
      expect(reply.status).toBe(200);
      return reply.body.versions.find((v) => v.version === 1)!;
    };
    expect((await api.arrow("/v1/table/again/create", rows(0, 3))).status).toBe(200);
    expect((await versionOne()).metadata.total_rows).toBe("3");
    await api.post("/v1/table/again/delete", { predicate: "id = 0" });
    expect((await api.post("/v1/table/again/describe", {})).body).toMatchObject({ stats: { num_deleted_rows: 1 } });
    expect((await api.post("/v1/table/again/drop", {})).status).toBe(200);
    expect((await api.arrow("/v1/table/again/create", rows(0, 5))).status).toBe(200);
    expect((await versionOne()).metadata.total_rows).toBe("5");
    expect((await api.post("/v1/table/again/delete", { predicate: "id < 3" })).status).toBe(200);
    expect((await api.post("/v1/table/again/describe", {})).body).toMatchObject({ version: 2, stats: { num_deleted_rows: 3 } });
  });

  it("lists no versions for a declared-only table", async () => {
    await api.post("/v1/table/h$declared/declare", {});
    expect((await api.post<{ versions: unknown[] }>("/v1/table/h$declared/version/list")).body.versions).toEqual([]);
  });
});

describe("tags", () => {
  it("creates, reads, moves, lists and deletes tags", async () => {
    expect((await api.post("/v1/table/h$t/tags/create", { tag: "release", version: 10 })).status).toBe(200);
    expect((await api.post("/v1/table/h$t/tags/version", { tag: "release" })).body.version).toBe(10);
    expect((await api.post("/v1/table/h$t/tags/update", { tag: "release", version: 120 })).status).toBe(200);
    const moved = await api.post("/v1/table/h$t/tags/version", { id: ["h", "t"], tag: "release" });
    expect(moved.body.version).toBe(120);
    expect(moved.body.branch).toBeNull();
    await api.post("/v1/table/h$t/tags/create", { tag: "alpha", version: 1 });
    const listed = await api.post<{ tags: Record<string, { version: number; manifestSize: number }> }>("/v1/table/h$t/tags/list");
    expect(Object.keys(listed.body.tags)).toEqual(["alpha", "release"]);
    expect(listed.body.tags.release.version).toBe(120);
    expect(listed.body.tags.release.manifestSize).toBeGreaterThan(0);
    expect(listed.body.tags.release).toMatchObject({ branch: null });
    const paged = await api.get<{ tags: Record<string, unknown>; page_token?: string }>("/v1/table/h$t/tags/list?limit=1");
    expect(Object.keys(paged.body.tags)).toEqual(["alpha"]);
    const next = await api.get<{ tags: Record<string, unknown>; page_token?: string }>(`/v1/table/h$t/tags/list?limit=1&page_token=${paged.body.page_token}`);
    expect(Object.keys(next.body.tags)).toEqual(["release"]);
    expect(next.body.page_token).toBeUndefined();
    expect((await api.post("/v1/table/h$t/tags/delete", { tag: "alpha" })).status).toBe(200);
    expect(Object.keys((await api.post<{ tags: object }>("/v1/table/h$t/tags/list")).body.tags)).toEqual(["release"]);
  });

  it("answers each missing thing with its own code", async () => {
    expectError(await api.post("/v1/table/h$t/tags/update", { tag: "nope", version: 2 }), 404, ErrorCode.TableTagNotFound);
    expectError(await api.post("/v1/table/h$t/tags/update", { tag: "release", version: 999 }), 404, ErrorCode.TableVersionNotFound);
    expectError(await api.post("/v1/table/h$missing/tags/update", { tag: "release", version: 2 }), 404, ErrorCode.TableNotFound);
    expectError(await api.post("/v1/table/nons$t/tags/update", { tag: "release", version: 2 }), 404, ErrorCode.NamespaceNotFound);
    expectError(await api.post("/v1/table/h$t/tags/version", { tag: "nope" }), 404, ErrorCode.TableTagNotFound);
    expectError(await api.post("/v1/table/h$t/tags/create", { tag: "release", version: 3 }), 409, ErrorCode.TableTagAlreadyExists);
    expectError(await api.post("/v1/table/h$t/tags/create", { tag: "new", version: 1000 }), 404, ErrorCode.TableVersionNotFound);
    expectError(await api.post("/v1/table/h$t/tags/delete", { tag: "nope" }), 404, ErrorCode.TableTagNotFound);
    expectError(await api.post("/v1/table/h$t/tags/update", { tag: "release", version: -1 }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/h$t/tags/update", { tag: "release" }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/h$t/tags/update", { tag: "release", version: 3, branch: "nope" }), 404, ErrorCode.TableBranchNotFound);
    expect((await api.post("/v1/table/h$t/tags/version", { tag: "release" })).body.version).toBe(120);
  });
});

describe("branches", () => {
  it("writes to a branch without touching main, and reads each by name", async () => {
    await api.arrow("/v1/table/h$b/create", rows(0, 10));
    const created = await api.post("/v1/table/h$b/branches/create", { name: "dev" });
    expect(created.status).toBe(200);
    expectError(await api.post("/v1/table/h$b/branches/create", { name: "dev" }), 409, ErrorCode.TableBranchAlreadyExists);
    const listed = await api.post<{ branches: Record<string, { parentVersion: number }> }>("/v1/table/h$b/branches/list");
    expect(listed.body.branches.dev.parentVersion).toBe(1);

    const inserted = await api.arrow("/v1/table/h$b/insert?branch=dev", rows(10, 15));
    expect(inserted.status).toBe(200);
    expect(inserted.body.num_inserted_rows).toBe(5);
    const merged = await api.arrow(
      "/v1/table/h$b/merge_insert?branch=dev&on=id&when_matched_update_all=true",
      rows(
        0,
        2,
        (i) => i,
        () => "dev",
      ),
    );
    expect(merged.body).toMatchObject({ num_updated_rows: 2 });
    expect((await api.post("/v1/table/h$b/count_rows", { branch: "dev" })).body).toBe(15);
    expect((await api.post("/v1/table/h$b/count_rows", {})).body).toBe(10);
    const devVersions = await api.post<{ versions: Array<{ version: number }> }>("/v1/table/h$b/version/list?branch=dev&descending=true");
    const mainVersions = await api.post<{ versions: Array<{ version: number }> }>("/v1/table/h$b/version/list?descending=true");
    expect(mainVersions.body.versions.map((v) => v.version)).toEqual([1]);
    expect(devVersions.body.versions[0].version).toBeGreaterThan(1);
    const altered = await api.post("/v1/table/h$b/alter_columns", { branch: "dev", alterations: [{ path: "s", rename: "label" }] });
    expect(altered.status).toBe(200);
    const mainFields = ((await api.post("/v1/table/h$b/describe", {})).body.schema as { fields: Array<{ name: string }> }).fields.map((f) => f.name);
    const devFields = ((await api.post("/v1/table/h$b/describe", { branch: "dev" })).body.schema as { fields: Array<{ name: string }> }).fields.map(
      (f) => f.name,
    );
    expect(mainFields).toEqual(["id", "x", "s"]);
    expect(devFields).toEqual(["id", "x", "label"]);

    for (const path of ["insert?branch=nope", "merge_insert?branch=nope&on=id&when_matched_update_all=true"]) {
      expectError(await api.arrow(`/v1/table/h$b/${path}`, rows(0, 1)), 404, ErrorCode.TableBranchNotFound);
    }
    expectError(await api.post("/v1/table/h$b/version/list?branch=nope"), 404, ErrorCode.TableBranchNotFound);
    expectError(
      await api.post("/v1/table/h$b/alter_columns", { branch: "nope", alterations: [{ path: "s", rename: "t" }] }),
      404,
      ErrorCode.TableBranchNotFound,
    );
    expect((await api.post("/v1/table/h$b/branches/delete", { name: "dev" })).status).toBe(200);
    expectError(await api.post("/v1/table/h$b/branches/delete", { name: "dev" }), 404, ErrorCode.TableBranchNotFound);
    expect((await api.post("/v1/table/h$b/count_rows", {})).body).toBe(10);
  });
});

describe("version operations and console listings", () => {
  it("names the operation behind each version, and what the user did", async () => {
    const ok = (reply: { status: number; body: unknown }) => expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    ok(await api.arrow("/v1/table/h$ops/create", rows(0, 5)));
    ok(await api.arrow("/v1/table/h$ops/insert", rows(5, 10)));
    ok(await api.arrow("/v1/table/h$ops/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true", rows(8, 12)));
    ok(await api.post("/v1/table/h$ops/alter_columns", { alterations: [{ path: "s", rename: "label" }] }));
    ok(await api.post("/v1/table/h$ops/restore", { version: 2 }));
    ok(await api.arrow("/v1/table/h$ops/insert?mode=overwrite", rows(0, 1)));
    ok(
      await api.post("/v1/table/h$ops/add_columns", {
        new_columns: [
          { name: "twice", expression: "id * 2" },
          { name: "thrice", expression: "id * 3" },
        ],
      }),
    );
    ok(await api.post("/v1/table/h$ops/drop_columns", { columns: ["twice", "thrice"] }));
    ok(await api.post("/v1/table/h$ops/delete", { predicate: "id = 0" }));
    ok(await api.arrow("/v1/table/h$ops/insert", rows(20, 30)));
    ok(await api.post("/v1/table/h$ops/create_index", { column: "id", index_type: "BTREE" }));
    ok(await api.post("/v1/table/h$ops/index/id_idx/drop", {}));
    ok(await api.post("/v1/table/h$ops/alter_columns", { alterations: [{ path: "id", data_type: { type: "int32" } }] }));
    ok(await api.post("/v1/table/h$ops/update", { predicate: "id = 20", updates: [["s", "'changed'"]] }));
    const reply = await api.post<{ versions: Array<{ version: number; operation: string; action: string }> }>(
      "/v1/table/h$ops/version/list?include_operations=true",
    );
    expect(reply.body.versions.map((v) => [v.version, v.operation, v.action])).toEqual([
      [1, "Overwrite", "Create the table with 5 rows"],
      [2, "Append", "Insert 5 rows"],
      [3, "Update", "Update or merge-insert rows (4 rows written)"],
      [4, "Project", "Rename column s to label"],
      [5, "Restore", "Restore version 2"],
      [6, "Overwrite", "Overwrite the table with 1 row"],
      [7, "Merge", "Add columns twice, thrice"],
      [8, "Project", "Drop columns twice, thrice"],
      [9, "Delete", "Delete rows where id = 0"],
      [10, "Append", "Insert 10 rows"],
      [11, "CreateIndex", "Create index id_idx"],
      [12, "CreateIndex", "Drop index id_idx"],
      [13, "Merge", "Change the type of column id"],
      [14, "Update", "Update or merge-insert rows (1 row written)"],
    ]);
    const plain = await api.post<{ versions: Array<Record<string, unknown>> }>("/v1/table/h$ops/version/list");
    expect(plain.body.versions[0]).not.toHaveProperty("operation");
    expect(plain.body.versions[0]).not.toHaveProperty("action");
  });

  it("lists a namespace's entries filtered, with table states, and searches the catalog", async () => {
    await api.post("/v1/table/h$pending_one/declare", {});
    const tables = await api.get<{ entries: Array<{ name: string; declared_only: boolean }> }>("/v1/namespace/h/entries?kind=table&filter=PEND");
    expect(tables.body.entries).toEqual([{ name: "pending_one", kind: "table", declared_only: true }]);
    const all = await api.get<{ entries: Array<{ name: string; declared_only: boolean }>; page_token?: string }>("/v1/namespace/h/entries?limit=2");
    expect(all.body.entries).toHaveLength(2);
    expect(all.body.page_token).toBeDefined();
    // A namespace's entry says whether it holds anything: a tree offers to open only those.
    await api.post("/v1/namespace/h$hollow/create", {});
    await api.post("/v1/namespace/h$nested/create", {});
    await api.post("/v1/namespace/h$nested$inner/create", {});
    const namespaces = await api.get<{ entries: Array<{ name: string; has_children: boolean }> }>("/v1/namespace/h/entries?kind=namespace");
    expect(namespaces.body.entries).toEqual([
      { name: "hollow", kind: "namespace", has_children: false },
      { name: "nested", kind: "namespace", has_children: true },
    ]);
    const root = await api.get<{ entries: Array<{ name: string; has_children: boolean }> }>("/v1/namespace/%24/entries?kind=namespace&filter=h");
    expect(root.body.entries.find((e) => e.name === "h")).toEqual({ name: "h", kind: "namespace", has_children: true });
    const found = await api.get<{ namespaces: string[][]; tables: string[][] }>("/v1/search?q=ops");
    expect(found.body.tables).toEqual([["h", "ops"]]);
    expect((await api.get<{ namespaces: string[][] }>("/v1/search?q=h")).body.namespaces).toEqual([
      ["h"],
      ["h", "hollow"],
      ["h", "nested"],
      ["h", "nested", "inner"],
    ]);
  });
});
