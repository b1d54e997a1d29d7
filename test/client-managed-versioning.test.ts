/**
 * Managed versioning through the Lance REST namespace client, unchanged: for a table whose versions the catalog
 * manages (its `quiver.managed_versioning` property, which QUIVER_MANAGED_VERSIONING=on gives new tables), describe
 * and declare say so, and the client commits every version through CreateTableVersion: each one authorised and
 * audited with the principal that made it, and a caller who may only read is refused.
 */
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { client, expectError } from "./client";
import { testStore } from "./store-server";
import { keyOf, onObjectStore, rootSnapshot, startServer, storeOf, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

const arrow = createRequire(import.meta.url)("apache-arrow") as typeof import("apache-arrow");

let server: TestServer;
/** Lance's own directory namespace on the server's root, with the store's settings as it takes them. */
const dirNamespace = () => {
  const storage = onObjectStore
    ? {
        ...Object.fromEntries(Object.entries(testStore().storageOptions).map(([k, v]) => [`storage.${k}`, v])),
        vend_input_storage_options: "true",
      }
    : {};
  return lancedb.connectNamespace("dir", { root: server.root, ...storage });
};
let ns: lancedb.Connection;
let api: ReturnType<typeof client>;

const schema = new arrow.Schema([new arrow.Field("id", new arrow.Int64(), false), new arrow.Field("s", new arrow.Utf8(), true)]);
const data = (from: number, to: number, s = (i: number) => `s${i}`) =>
  lancedb.makeArrowTable(
    Array.from({ length: to - from }, (_, k) => ({ id: BigInt(from + k), s: s(from + k) })),
    { schema },
  );

interface AuditPage {
  entries: Array<{ action: string; principal: { name: string } | null; target: string; status: number; outcome: string; detail?: string }>;
}

const commits = async (target: string) => (await api.get<AuditPage>(`/v1/admin/audit?action=CreateTableVersion&target=${target}`)).body.entries;
const versionsOf = async (id: string) =>
  (await api.post<{ versions: Array<{ version: number }> }>(`/v1/table/${id}/version/list`, {})).body.versions.map((v) => v.version).sort((a, b) => a - b);
const rowsOf = async (id: string) => (await api.post<number>(`/v1/table/${id}/count_rows`, {})).body;

beforeAll(async () => {
  // On an object store the client writes with credentials Quiver vends: it brings no storage settings of its own.
  server = await startServer({ QUIVER_MANAGED_VERSIONING: "on", ...(onObjectStore ? testStore().vending : {}) });
  ns = await lancedb.connectNamespace("rest", { uri: server.url, headers: { "x-api-key": server.adminKey } });
  api = client(server.url, server.auth);
  await ns.createNamespace(["lake"]);
});
afterAll(async () => {
  await server?.stop();
});

describe("managed versioning", () => {
  it("declares new tables managed, and the client commits every version through the catalog, each audited with its principal", async () => {
    const table = await ns.createTable("events", data(0, 10), ["lake"]);
    const described = await api.post<{ managed_versioning: boolean; properties: Record<string, string>; version: number }>(
      "/v1/table/lake$events/describe",
      {},
    );
    expect(described.body).toMatchObject({ managed_versioning: true, properties: { "quiver.managed_versioning": "true" }, version: 1 });

    await table.add(data(10, 15));
    const merged = await table
      .mergeInsert("id")
      .whenMatchedUpdateAll()
      .whenNotMatchedInsertAll()
      .execute(data(12, 18, (i) => `m${i}`));
    expect(merged).toMatchObject({ numInsertedRows: 3, numUpdatedRows: 3 });
    await table.delete("id < 2");
    await table.update({ where: "id = 5", values: { s: "five" } });

    expect(await versionsOf("lake$events")).toEqual([1, 2, 3, 4, 5]);
    expect(await rowsOf("lake$events")).toBe(16);
    const audited = await commits("lake$events");
    expect(audited).toHaveLength(5);
    expect(audited.every((e) => e.status === 200 && e.principal?.name === "QUIVER_ADMIN_API_KEY")).toBe(true);
    // Each entry says which version it committed and what the version's transaction did.
    const details = audited.map((e) => e.detail ?? "").sort();
    expect(details.map((d) => /^version (\d) of main: /.exec(d)?.[1])).toEqual(["1", "2", "3", "4", "5"]);
    expect(details).toContain("version 2 of main: Append, Insert 5 rows");
    expect(details).toContain("version 4 of main: Delete, Delete rows where id < 2");

    // Another client opens the table through the catalog and sees its versions, the latest and an earlier one.
    const other = await (await lancedb.connectNamespace("rest", { uri: server.url, headers: { "x-api-key": server.adminKey } })).openTable("events", ["lake"]);
    expect(await other.version()).toBe(5);
    expect((await other.query().where("id = 5").toArray())[0].s).toBe("five");
    await other.checkout(2);
    expect(await other.countRows()).toBe(15);
  });

  it("takes every kind of commit the client makes through the catalog: columns, optimize, an index, tags, branches, restore", async () => {
    const table = await ns.createTable("wide", data(0, 20), ["lake"]);
    await table.add(data(20, 40));
    await table.addColumns([{ name: "doubled", valueSql: "id * 2" }]);
    await table.alterColumns([{ path: "s", rename: "label" }]);
    await table.createIndex("id");
    await table.optimize();
    expect(await table.countRows()).toBe(40);
    expect((await table.query().where("id = 7").toArray())[0]).toMatchObject({ label: "s7", doubled: 14n });
    expect((await table.listIndices()).map((i) => i.name)).toContain("id_idx");

    // Every version the client made is one the catalog committed, audited and recorded; the client lists them too.
    const listed = (await table.listVersions()).map((v) => v.version);
    expect(await versionsOf("lake$wide")).toEqual(listed);
    const audited = (await commits("lake$wide")).filter((e) => e.status === 200);
    expect(audited).toHaveLength(listed.length);
    const operations = audited.map((e) => /: (\w+),/.exec(e.detail ?? "")?.[1]).sort();
    expect(operations).toEqual(expect.arrayContaining(["Append", "CreateIndex", "Project", "Rewrite"]));
    const recorded = await api.post<{ versions: Array<{ version: number; committed_by: { operation: string } | null }> }>(
      "/v1/table/lake$wide/version/list?include_operations=true",
      {},
    );
    expect(recorded.body.versions.every((v) => v.committed_by?.operation === "CreateTableVersion")).toBe(true);

    // Tags and branches, and checking out, restoring and writing on a branch.
    const tags = await table.tags();
    await tags.create("loaded", 2);
    expect(await tags.getVersion("loaded")).toBe(2);
    const dev = await (await table.branches()).create("dev");
    const wider = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field("label", new arrow.Utf8(), true),
      new arrow.Field("doubled", new arrow.Int64(), true),
    ]);
    await dev.add(
      lancedb.makeArrowTable(
        [100, 101, 102, 103, 104].map((i) => ({ id: BigInt(i), label: `d${i}`, doubled: BigInt(2 * i) })),
        { schema: wider },
      ),
    );
    expect(await dev.countRows()).toBe(45);
    // Creating the branch and writing on it are commits through the catalog too, on the branch.
    expect((await commits("lake$wide")).filter((e) => e.status === 200 && / of branch 'dev': Append,/.test(e.detail ?? ""))).toHaveLength(1);
    expect(await table.countRows()).toBe(40);
    await table.checkout("loaded");
    expect(await table.countRows()).toBe(40);
    await table.restore();
    const restored = await table.version();
    expect(restored).toBe(listed[listed.length - 1] + 1);
    expect((await table.schema()).fields.map((f) => f.name)).toEqual(["id", "s"]);
    expect(await versionsOf("lake$wide")).toContain(restored);

    // Versions Quiver commits itself are recorded too: a schema metadata change, and a compaction by a maintenance job.
    expect((await api.post("/v1/table/lake$wide/schema_metadata/update", { owner: "ingest" })).status).toBe(200);
    expect((await api.post("/v1/table/lake$wide/create_index", { column: "s", index_type: "BITMAP" })).status).toBe(200);
    const compacted = await api.post<{ job: { status: string } }>("/v1/table/lake$wide/maintenance/compact?wait=true", {});
    expect(compacted.body.job.status).toBe("succeeded");
    const after = await api.post<{ versions: Array<{ version: number; committed_by: { principal: { kind: string }; operation: string } | null }> }>(
      "/v1/table/lake$wide/version/list?include_operations=true&descending=true&limit=10",
      {},
    );
    const own = after.body.versions.filter((v) => v.version > restored);
    expect(own.find((v) => v.version === restored + 1)?.committed_by).toMatchObject({
      operation: "UpdateTableSchemaMetadata",
      principal: { name: "QUIVER_ADMIN_API_KEY" },
    });
    expect(own.find((v) => v.version === restored + 2)?.committed_by).toMatchObject({ operation: "CreateTableIndex" });
    expect(own.filter((v) => v.committed_by?.principal.kind === "maintenance").length).toBeGreaterThan(0);
    expect(own.every((v) => v.committed_by !== null)).toBe(true);

    // The same table through Lance's own dir namespace on the root: same rows, same version.
    const viaDir = await (await dirNamespace()).openTable("wide", ["lake"]);
    expect(await viaDir.version()).toBe(after.body.versions[0].version);
    expect(await viaDir.countRows()).toBe(40);
  });

  it("still sees a table's versions while a writer's staged manifest sorts before them", async () => {
    // A staged manifest of version 6 (`<u64::MAX - 6>.manifest-<uuid>`) is the first key of `_versions/`.
    const location = keyOf(server, (await api.post<{ location: string }>("/v1/table/lake$events/describe", {})).body.location);
    const staged = `${location}/_versions/${(18446744073709551615n - 6n).toString()}.manifest-00000000-0000-0000-0000-000000000000`;
    await storeOf(server).put(staged, "staged by a writer that has not committed yet");
    try {
      const described = await api.post<{ version: number; is_only_declared: boolean }>("/v1/table/lake$events/describe", {});
      expect(described.body).toMatchObject({ version: 5, is_only_declared: false });
      const version = await api.post<{ version: { version: number } }>("/v1/table/lake$events/version/describe", { version: 5 });
      expect(version.status).toBe(200);
      expect(version.body.version.version).toBe(5);
    } finally {
      await storeOf(server).delete(staged);
    }
  });

  it("refuses the commit of a caller who may only read: its rows never become a version", async () => {
    const viewerKey = (await api.post<{ key: string }>("/v1/admin/keys/create", { name: "reader", role: "viewer" })).body.key;
    const reader = await lancedb.connectNamespace("rest", { uri: server.url, headers: { "x-api-key": viewerKey } });
    const table = await reader.openTable("events", ["lake"]);
    expect(await table.countRows()).toBe(16);
    await expect(table.add(data(100, 105))).rejects.toThrow();
    expect(await versionsOf("lake$events")).toEqual([1, 2, 3, 4, 5]);
    expect(await rowsOf("lake$events")).toBe(16);
    const refused = (await commits("lake$events")).filter((e) => e.principal?.name === "reader");
    if (onObjectStore && testStore().checksVendedScope) {
      // Its vended credentials are read-only: the store refuses its files before it can ask for a commit.
      expect(refused).toEqual([]);
    } else {
      // Nothing stops it writing files below a local root (or on a store that does not hold its credentials to their
      // scope), but its commit of a well-formed staged manifest is refused.
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.every((e) => e.status === 403 && e.outcome === "refused")).toBe(true);
    }
  });

  it("orders the commits of two writers through two instances: one wins each version, the other retries, nothing is lost", async () => {
    const second = await startServer({ QUIVER_MANAGED_VERSIONING: "on", ...(onObjectStore ? testStore().vending : {}) }, { root: server.root });
    try {
      await ns.createTable("raced", data(0, 1), ["lake"]);
      const writers = [server, second].map(async (s, w) => {
        const conn = await lancedb.connectNamespace("rest", { uri: s.url, headers: { "x-api-key": s.adminKey } });
        const table = await conn.openTable("raced", ["lake"]);
        for (let i = 0; i < 8; i++) await table.add(data(1000 * (w + 1) + i * 10, 1000 * (w + 1) + i * 10 + 10));
      });
      await Promise.all(writers);
      expect(await rowsOf("lake$raced")).toBe(1 + 2 * 8 * 10);
      expect(await versionsOf("lake$raced")).toEqual(Array.from({ length: 17 }, (_, i) => i + 1));
      const audited = await commits("lake$raced");
      expect(audited.filter((e) => e.status === 200)).toHaveLength(17);
      expect(audited.every((e) => e.status === 200 || e.status === 409)).toBe(true);
    } finally {
      await second.stop();
    }
  });

  it("shows a batch's versions to the client reading through the catalog all at once, never the first tables before the last", async () => {
    const store = storeOf(server);
    const torn: string[] = [];
    let reads = 0;
    for (let round = 0; round < 4; round++) {
      const names = ["a", "b", "c", "d"].map((t) => `batch${round}${t}`);
      const staged: string[] = [];
      for (const name of names) {
        // Version 2 committed by the client, then taken back to the staged file a writer leaves before it commits.
        await (await ns.createTable(name, data(0, 3), ["lake"])).add(data(3, 5));
        const location = keyOf(server, (await api.post<{ location: string }>(`/v1/table/lake$${name}/describe`, {})).body.location);
        const final = `${location}/_versions/18446744073709551613.manifest`;
        staged.push(`${final}-staged`);
        await store.put(staged.at(-1)!, (await store.get(final))!);
        await store.delete(final);
      }
      const readers = await Promise.all(names.map((name) => ns.openTable(name, ["lake"])));
      let committing = true;
      // The reader asks for the tables in the batch's order: a later table older than an earlier one is a torn view.
      const reading = (async () => {
        while (committing) {
          const seen: number[] = [];
          for (const reader of readers) {
            await reader.checkoutLatest();
            seen.push(await reader.version());
          }
          reads++;
          if (seen.some((v, i) => i > 0 && v < seen[i - 1])) torn.push(seen.join(","));
        }
      })();
      const reply = await api.post("/v1/table/version/batch-create", {
        entries: names.map((name, i) => ({ id: ["lake", name], version: 2, manifest_path: staged[i] })),
      });
      committing = false;
      await reading;
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      for (const reader of readers) {
        await reader.checkoutLatest();
        expect(await reader.version()).toBe(2);
        expect(await reader.countRows()).toBe(5);
      }
    }
    expect(reads).toBeGreaterThan(0);
    expect(torn).toEqual([]);
  });

  it("records who made each version, whichever API made it, and counts the commits", async () => {
    const writerKey = (await api.post<{ key: string }>("/v1/admin/keys/create", { name: "loader", role: "editor" })).body.key;
    const loader = client(server.url, { "x-api-key": writerKey });
    const rows = lancedb.makeArrowTable([{ id: 900n, s: "api" }], { schema });
    expect((await loader.arrow<{ version: number }>("/v1/table/lake$events/insert", arrow.tableToIPC(rows, "stream"))).body.version).toBe(6);
    // Appending nothing commits nothing: version 6 stays the loader's.
    const empty = arrow.tableToIPC(lancedb.makeArrowTable([], { schema }), "stream");
    expect((await api.arrow<{ version: number }>("/v1/table/lake$events/insert", empty)).body.version).toBe(6);

    const listed = await api.post<{
      versions: Array<{ version: number; committed_by: { principal: { name: string }; operation: string; detail: string | null } | null }>;
    }>("/v1/table/lake$events/version/list?include_operations=true", {});
    const by = new Map(listed.body.versions.map((v) => [v.version, v.committed_by]));
    for (const v of [1, 2, 3, 4, 5]) expect(by.get(v)).toMatchObject({ principal: { name: "QUIVER_ADMIN_API_KEY" }, operation: "CreateTableVersion" });
    expect(by.get(2)?.detail).toBe("version 2 of main: Append, Insert 5 rows");
    // Version 6 was committed by Quiver's own engine under the request's guard: the version names its caller, no record does.
    expect(by.get(6)).toMatchObject({ principal: { name: "loader" }, operation: "InsertIntoTable", detail: "version 6 of main: Append, Insert 1 row" });
    const location = keyOf(server, (await api.post<{ location: string }>("/v1/table/lake$events/describe", {})).body.location);
    const records = (await storeOf(server).list(`.quiver/versions/${location}/`)).map((k) => k.split("/").pop());
    expect(records).toEqual(expect.arrayContaining(["1.json", "5.json"]));
    expect(records).not.toContain("6.json");
    // Its audit entry says the same; the empty append, which committed nothing, names no version.
    const inserts = (await api.get<AuditPage>("/v1/admin/audit?action=InsertIntoTable&target=lake$events")).body.entries;
    expect(inserts.map((e) => [e.principal?.name, e.detail]).sort()).toEqual([
      ["QUIVER_ADMIN_API_KEY", undefined],
      ["loader", "version 6 of main: 1 row inserted"],
    ]);
    // Without include_operations the answer is the spec's record, nothing more.
    const plain = await api.post<{ versions: Array<Record<string, unknown>> }>("/v1/table/lake$events/version/list", {});
    expect(plain.body.versions.every((v) => !("committed_by" in v))).toBe(true);

    const metrics = (await api.get<string>("/metrics")).body;
    expect(metrics).toMatch(/quiver_commits_total\{operation="CreateTableVersion",managed="true"\} (\d+)/);
    expect(Number(/quiver_commits_total\{operation="InsertIntoTable",managed="true"\} (\d+)/.exec(metrics)?.[1])).toBe(1);
  });

  it("answers the versions a program wrote straight to the table's files, and commits the next on top of them", async () => {
    // Lance's own directory namespace on the same root: it finds the table by the catalog and commits to its files itself.
    const direct = await dirNamespace();
    const table = await direct.openTable("events", ["lake"]);
    const before = await rowsOf("lake$events");
    await table.add(data(2000, 2003));
    expect(await table.version()).toBe(7);

    // The catalog answers the store's versions: the direct one is there, with no record of who made it.
    const listed = await api.post<{ versions: Array<{ version: number; committed_by: unknown }> }>(
      "/v1/table/lake$events/version/list?include_operations=true&descending=true&limit=1",
      {},
    );
    expect(listed.body.versions[0]).toMatchObject({ version: 7, committed_by: null });
    expect(await rowsOf("lake$events")).toBe(before + 3);

    // A client of the catalog that opened the table before another direct commit commits on top of it, as version 9.
    const client = await ns.openTable("events", ["lake"]);
    await table.add(data(3000, 3002));
    await client.add(data(4000, 4004));
    expect(await versionsOf("lake$events")).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await rowsOf("lake$events")).toBe(before + 3 + 2 + 4);
    const audited = await commits("lake$events");
    expect(audited.filter((e) => e.status === 200)).toHaveLength(6);
  });

  it("forgets who made a version when the version is deleted, and every record when the table is dropped", async () => {
    const location = keyOf(server, (await api.post<{ location: string }>("/v1/table/lake$events/describe", {})).body.location);
    const records = async () => (await storeOf(server).list(`.quiver/versions/${location}/`)).map((k) => k.split("/").pop()).sort();
    expect(await records()).toEqual(expect.arrayContaining(["1.json", "2.json", "3.json"]));
    expect((await api.post("/v1/table/lake$events/version/delete", { ranges: [{ start_version: 2, end_version: 4 }] })).status).toBe(200);
    const left = await records();
    expect(left).toContain("1.json");
    expect(left).not.toContain("2.json");
    expect(left).not.toContain("3.json");
    expect((await api.post("/v1/table/lake$events/drop", {})).status).toBe(200);
    expect(await records()).toEqual([]);
  });

  it("switches an existing table: clients that open it afterwards commit the way it now says, and every version stays", async () => {
    const unmanaged = JSON.stringify({ "quiver.managed_versioning": "false" });
    await api.arrow(`/v1/table/lake$switched/create?properties=${encodeURIComponent(unmanaged)}`, arrow.tableToIPC(data(0, 4), "stream"));
    const before = await ns.openTable("switched", ["lake"]);
    await before.add(data(4, 6));
    expect(await commits("lake$switched")).toEqual([]);

    const editorKey = (await api.post<{ key: string }>("/v1/admin/keys/create", { name: "switcher", role: "editor" })).body.key;
    const editor = client(server.url, { "x-api-key": editorKey });
    expectError(
      await editor.post("/v1/table/lake$switched/properties/update", { updates: { "quiver.managed_versioning": "true" } }),
      403,
      ErrorCode.PermissionDenied,
    );
    expectError(await api.post("/v1/table/lake$switched/properties/update", { updates: { "quiver.managed_versioning": "on" } }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/lake$switched/properties/update", { updates: { a: "1" }, removals: ["a"] }), 400, ErrorCode.InvalidInput);
    expect((await api.post<{ managed_versioning: boolean }>("/v1/table/lake$switched/describe", {})).body.managed_versioning).toBe(false);

    const switched = await api.post<{ properties: Record<string, string>; managed_versioning: boolean }>("/v1/table/lake$switched/properties/update", {
      updates: { "quiver.managed_versioning": "true", team: "ingest" },
    });
    expect(switched.body).toEqual(expect.objectContaining({ managed_versioning: true, properties: { "quiver.managed_versioning": "true", team: "ingest" } }));
    const after = await (
      await lancedb.connectNamespace("rest", { uri: server.url, headers: { "x-api-key": server.adminKey } })
    ).openTable("switched", ["lake"]);
    await after.add(data(6, 9));
    expect((await commits("lake$switched")).map((e) => e.detail)).toEqual(["version 3 of main: Append, Insert 3 rows"]);

    // Back to unmanaged, keeping the other property: a client that opens it now commits to the store itself.
    const back = await api.post<{ properties: Record<string, string> }>("/v1/table/lake$switched/properties/update", {
      removals: ["quiver.managed_versioning"],
    });
    expect(back.body.properties).toEqual({ team: "ingest" });
    const later = await (
      await lancedb.connectNamespace("rest", { uri: server.url, headers: { "x-api-key": server.adminKey } })
    ).openTable("switched", ["lake"]);
    await later.add(data(9, 10));
    expect(await commits("lake$switched")).toHaveLength(1);
    expect(await versionsOf("lake$switched")).toEqual([1, 2, 3, 4]);
    expect(await rowsOf("lake$switched")).toBe(10);
  });

  it("takes the choice per table at declare time, and refuses a choice it does not know without changing anything", async () => {
    const plain = await api.post<{ managed_versioning: boolean }>("/v1/table/lake$plain/declare", { properties: { "quiver.managed_versioning": "false" } });
    expect(plain.status).toBe(200);
    expect(plain.body.managed_versioning).toBe(false);
    expect((await api.post<{ managed_versioning: boolean }>("/v1/table/lake$plain/describe", {})).body.managed_versioning).toBe(false);
    const managed = await api.post<{ managed_versioning: boolean }>("/v1/table/lake$declared/declare", {});
    expect(managed.body.managed_versioning).toBe(true);

    const before = await rootSnapshot(server);
    expectError(await api.post("/v1/table/lake$odd/declare", { properties: { "quiver.managed_versioning": "yes" } }), 400, ErrorCode.InvalidInput);
    expect(await rootSnapshot(server)).toEqual(before);
    expectError(await api.post("/v1/table/lake$odd/describe", {}), 404, ErrorCode.TableNotFound);
  });
});
