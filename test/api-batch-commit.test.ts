/**
 * BatchCreateTableVersions and BatchCommitTables: changes to several tables in one request, all applied or none.
 * Refused batches change nothing on the root; a batch overtaken by another writer between its check and its apply
 * is undone (server/tables/batch-commit.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tableVersion } from "@/lib/contract/catalog";
import type { Answer } from "@/lib/contract/common";
import { client, expectError, rows, until } from "./client";
import { BOOKKEEPING, keyOf, rootSnapshot, startServer, storeOf, uriOf, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

/** The keys' records of their use change as the viewer and editor keys are used: the tables' files must not. */
const AUTH = [...BOOKKEEPING, ".quiver/auth/"];

let server: TestServer;
let api: ReturnType<typeof client>;

/** A version as the version operations answer it (the API's own schema). */
type TableVersion = Answer<typeof tableVersion>;

const versions = async (table: string) => (await api.post<{ versions: TableVersion[] }>(`/v1/table/${table}/version/list`)).body.versions.map((v) => v.version);
const count = async (table: string) => (await api.post(`/v1/table/${table}/count_rows`, {})).body;

/**
 * A table at version 1 whose version 2 (two more rows) a writer has staged and not committed: the engine's manifest
 * of version 2 moved to a staging name beside it. Answers the staged manifest's key.
 */
async function withStagedVersion(table: string): Promise<string> {
  expect((await api.arrow(`/v1/table/${table}/create`, rows(0, 3))).status).toBe(200);
  expect((await api.arrow(`/v1/table/${table}/insert`, rows(3, 5))).status).toBe(200);
  const store = storeOf(server);
  const final = keyOf(server, (await api.post<{ version: TableVersion }>(`/v1/table/${table}/version/describe`, {})).body.version.manifest_path);
  const staged = final.replace(/\/_versions\/.*$/, "/_versions/2.manifest-staged");
  await store.put(staged, (await store.get(final))!);
  await store.delete(final);
  expect(await versions(table)).toEqual([1]);
  return staged;
}

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
});
afterAll(() => server?.stop());

describe("BatchCreateTableVersions", () => {
  it("commits staged versions of several tables, answering them in the order asked", async () => {
    const a = await withStagedVersion("a");
    const b = await withStagedVersion("b");
    const reply = await api.post<{ versions: TableVersion[] }>("/v1/table/version/batch-create", {
      entries: [
        { id: ["b"], version: 2, manifest_path: uriOf(server, b) },
        { id: ["a"], version: 2, manifest_path: a },
      ],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.versions.map((v) => [v.version, keyOf(server, v.manifest_path).split("/")[0]])).toEqual([
      [2, "b.lance"],
      [2, "a.lance"],
    ]);
    for (const table of ["a", "b"]) {
      expect(await versions(table)).toEqual([1, 2]);
      expect(await count(table)).toBe(5);
    }
    const store = storeOf(server);
    // Each table's version is recorded as the batch's, though both are version 2 of one commit.
    const authors = async () =>
      Promise.all(
        ["a", "b"].map(
          async (t) =>
            (JSON.parse((await store.get(`.quiver/versions/${t}.lance/main/2.json`))?.toString() ?? "null") as { operation: string } | null)?.operation,
        ),
      );
    expect(await until("the versions' records", authors, (found) => found.every(Boolean), 10_000, 20)).toEqual([
      "BatchCreateTableVersions",
      "BatchCreateTableVersions",
    ]);
    // The staged manifests go once the batch's answer is recorded, beside the answer.
    const gone = async () => [await store.head(a), await store.head(b)];
    expect(await until("the staged manifests' removal", gone, (left) => left.every((x) => x === null), 10_000, 20)).toEqual([null, null]);
  });

  it("refuses a batch any entry of which it cannot commit, and changes nothing", async () => {
    const c = await withStagedVersion("c");
    const d = await withStagedVersion("d");
    const key = await api.post<{ key: string }>("/v1/admin/keys/create", { name: "batch-viewer", role: "viewer" });
    const viewer = client(server.url, { "x-api-key": key.body.key });
    const before = await rootSnapshot(server, AUTH);
    const entryC = { id: ["c"], version: 2, manifest_path: c };
    for (const [entries, status, code, says] of [
      [
        [entryC, { id: ["d"], version: 1, manifest_path: d }],
        400,
        ErrorCode.InvalidInput,
        /number 2\): the staged manifest is of version 2, not 1; nothing was changed/,
      ],
      [
        [entryC, { id: ["d"], version: 2, manifest_path: "d.lance/_versions/none" }],
        400,
        ErrorCode.InvalidInput,
        /table 'd' \(number 2\): manifest_path .* does not exist/,
      ],
      [[entryC, { id: ["nope"], version: 2, manifest_path: d }], 404, ErrorCode.TableNotFound, /Table 'nope' was not found/],
      [[entryC, { ...entryC }], 400, ErrorCode.InvalidInput, /operations 1 and 2 both change table 'c'/],
      [[entryC, { id: ["d"], version: 2, manifest_path: d, metadata: { k: "v" } }], 406, ErrorCode.Unsupported, /metadata/],
      [[entryC, { id: ["d"], version: 2, manifest_path: d, zz: 1 }], 400, ErrorCode.InvalidInput, /body\.entries\[1\]\.zz/],
      [[entryC, { id: ["../x"], version: 2, manifest_path: d }], 400, ErrorCode.InvalidInput, /body\.entries\[1\]\.id: invalid identifier/],
      [[], 400, ErrorCode.InvalidInput, /at least one operation/],
    ] as const) {
      const reply = await api.post("/v1/table/version/batch-create", { entries });
      expectError(reply, status, code);
      expect(JSON.stringify(reply.body)).toMatch(says);
    }
    const forbidden = await viewer.post("/v1/table/version/batch-create", { entries: [entryC] });
    expectError(forbidden, 403, ErrorCode.PermissionDenied);
    expect(JSON.stringify(forbidden.body)).toMatch(/BatchCreateTableVersions needs the editor role on the tables it names; the caller holds it on none/);
    expect(await rootSnapshot(server, AUTH)).toEqual(before);
    expect(await versions("c")).toEqual([1]);
  });

  it("refuses a version that exists with 409, code 14", async () => {
    const e = await withStagedVersion("e");
    const e2 = await withStagedVersion("e2");
    const store = storeOf(server);
    // Version 1 of e2 exists: a staged manifest of version 1 is one too many.
    const one = keyOf(server, (await api.post<{ version: TableVersion }>("/v1/table/e2/version/describe", { version: 1 })).body.version.manifest_path);
    const copy = e2.replace("2.manifest-staged", "1.manifest-staged");
    await store.put(copy, (await store.get(one))!);
    const before = await rootSnapshot(server);
    const reply = await api.post("/v1/table/version/batch-create", {
      entries: [
        { id: ["e"], version: 2, manifest_path: e },
        { id: ["e2"], version: 1, manifest_path: copy },
      ],
    });
    expectError(reply, 409, ErrorCode.ConcurrentModification);
    expect(JSON.stringify(reply.body)).toMatch(/table 'e2' \(number 2\): version 1 of table 'e2' already exists; nothing was changed/);
    expect(await rootSnapshot(server)).toEqual(before);
    expect(await versions("e")).toEqual([1]);
  });
});

describe("a batch's versions seen through the catalog", () => {
  it("appear to a reader asking for the latest versions all at once, never the first tables before the last", async () => {
    const latest = async (table: string) =>
      (await api.post<{ versions: TableVersion[] }>(`/v1/table/${table}/version/list?descending=true&limit=1`)).body.versions[0].version;
    const described = async (table: string) => (await api.post<{ version: number }>(`/v1/table/${table}/describe`, {})).body.version;
    const torn: string[] = [];
    for (let round = 0; round < 8; round++) {
      const tables = ["a", "b", "c", "d"].map((t) => `held${round}${t}`);
      const staged: string[] = [];
      for (const table of tables) staged.push(await withStagedVersion(table));
      let committing = true;
      // Each reader asks for the tables in the batch's order: a later table older than an earlier one is a torn view.
      const reader = async (ask: (table: string) => Promise<number>, how: string) => {
        while (committing) {
          const seen: number[] = [];
          for (const table of tables) seen.push(await ask(table));
          if (seen.some((v, i) => i > 0 && v < seen[i - 1])) torn.push(`${how} ${seen.join(",")}`);
        }
      };
      const readers = [reader(latest, "ListTableVersions"), reader(described, "DescribeTable")];
      const reply = await api.post("/v1/table/version/batch-create", {
        entries: tables.map((table, i) => ({ id: [table], version: 2, manifest_path: staged[i] })),
      });
      committing = false;
      await Promise.all(readers);
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      for (const table of tables) expect(await latest(table)).toBe(2);
    }
    expect(torn).toEqual([]);
    // The batch's record and its holds are gone once it has committed.
    expect(await storeOf(server).list(".quiver/batches/")).toEqual([]);
    expect((await storeOf(server).list("held0a.lance/_versions/")).filter((k) => k.includes(".quiver-batch-"))).toEqual([]);
  });
});

describe("BatchCommitTables", () => {
  it("declares, commits a version, deletes versions and deregisters in one request", async () => {
    const f = await withStagedVersion("f");
    expect((await api.arrow("/v1/table/g/create", rows(0, 2))).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await api.arrow("/v1/table/g/insert", rows(10 + i, 11 + i))).status).toBe(200);
    expect((await api.arrow("/v1/table/h/create", rows(0, 2))).status).toBe(200);
    expect((await api.post("/v1/namespace/ns/create", {})).status).toBe(200);

    const reply = await api.post<{ results: Array<Record<string, Record<string, unknown>>> }>("/v1/table/batch-commit", {
      operations: [
        { declare_table: { id: ["ns", "new"], properties: { owner: "etl" } } },
        { create_table_version: { id: ["f"], version: 2, manifest_path: f } },
        { delete_table_versions: { id: ["g"], ranges: [{ start_version: 1, end_version: 3 }] } },
        { deregister_table: { id: ["h"] } },
      ],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const [declared, created, deleted, deregistered] = reply.body.results;
    expect(Object.keys(declared)).toEqual(["declare_table"]);
    expect(declared.declare_table).toMatchObject({ properties: { owner: "etl" }, managed_versioning: false, storage_options: {} });
    expect(created.create_table_version).toMatchObject({ version: { version: 2 } });
    expect(deleted.delete_table_versions).toEqual({ deleted_count: 2 });
    expect(deregistered.deregister_table).toMatchObject({ id: ["h"], location: expect.stringContaining("h.lance") });

    const described = await api.post<{ is_only_declared: boolean; properties: Record<string, string> }>("/v1/table/ns$new/describe", {});
    expect(described.body).toMatchObject({ is_only_declared: true, properties: { owner: "etl" } });
    expect(await versions("f")).toEqual([1, 2]);
    expect(await count("f")).toBe(5);
    expect(await versions("g")).toEqual([3, 4]);
    expect(await count("g")).toBe(5);
    expectError(await api.post("/v1/table/h/describe", {}), 404, ErrorCode.TableNotFound);
    // Deregistered, not dropped: its files register again.
    expect((await api.post("/v1/table/h/register", { location: "h.lance" })).status).toBe(200);
    expect(await count("h")).toBe(2);
  });

  it("refuses a batch with any part it cannot do, naming that part, and changes nothing", async () => {
    const i = await withStagedVersion("i");
    const key = await api.post<{ key: string }>("/v1/admin/keys/create", { name: "batch-editor", role: "editor" });
    const editor = client(server.url, { "x-api-key": key.body.key });
    const before = await rootSnapshot(server, AUTH);
    const commitI = { create_table_version: { id: ["i"], version: 2, manifest_path: i } };
    for (const [operations, status, code, says] of [
      [
        [commitI, { declare_table: { id: ["a"] } }],
        409,
        ErrorCode.TableAlreadyExists,
        /operation declare_table of table 'a' \(number 2\): Table 'a' already exists; nothing was changed/,
      ],
      [[commitI, { declare_table: { id: ["missing", "t"] } }], 404, ErrorCode.NamespaceNotFound, /Namespace 'missing' was not found/],
      [[commitI, { deregister_table: { id: ["gone"] } }], 404, ErrorCode.TableNotFound, /Table 'gone' was not found/],
      [
        [commitI, { delete_table_versions: { id: ["a"], ranges: [{ start_version: 0, end_version: -1 }] } }],
        400,
        ErrorCode.InvalidInput,
        /version 2 is the latest of table 'a'/,
      ],
      [[commitI, { declare_table: { id: ["j"] }, deregister_table: { id: ["k"] } }], 400, ErrorCode.InvalidInput, /exactly one of/],
      [[commitI, {}], 400, ErrorCode.InvalidInput, /exactly one of/],
      [[commitI, { deregister_table: { id: ["a"], identity: { api_key: "other" } } }], 400, ErrorCode.InvalidInput, /identity is given once/],
      [[commitI, { deregister_table: { id: ["i"] } }], 400, ErrorCode.InvalidInput, /operations 1 and 2 both change table 'i'/],
      [[commitI, { deregister_table: { id: ["a"], zz: true } }], 400, ErrorCode.InvalidInput, /body\.operations\[1\]\.deregister_table\.zz/],
    ] as const) {
      const reply = await api.post("/v1/table/batch-commit", { operations });
      expect(reply.status, JSON.stringify(reply.body)).toBe(status);
      expectError(reply, status, code);
      expect(JSON.stringify(reply.body)).toMatch(says);
    }
    const forbidden = await editor.post("/v1/table/batch-commit", { operations: [commitI, { deregister_table: { id: ["a"] } }] });
    expectError(forbidden, 403, ErrorCode.PermissionDenied);
    expect(JSON.stringify(forbidden.body)).toMatch(
      /BatchCommitTables \(deregister_table\) needs the admin role on table 'a' of database 'default'; the caller is editor/,
    );
    expect(await rootSnapshot(server, AUTH)).toEqual(before);
    expect(await versions("i")).toEqual([1]);

    // The editor may do the parts an editor may.
    const allowed = await editor.post("/v1/table/batch-commit", { operations: [commitI, { declare_table: { id: ["by_editor"] } }] });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(await versions("i")).toEqual([1, 2]);
    expect((await editor.post("/v1/table/by_editor/describe", {})).status).toBe(200);
  });
});
