/**
 * Path safety: no identifier, location, property or header reads or writes outside the data root, whatever its
 * spelling, and symbolic links planted inside the root lead nowhere. A directory outside the root, holding a real
 * dataset, is fingerprinted before and after every case.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { client, expectError, rows, type Reply } from "./client";
import { changes, contractProblem, send, snapshot, type RawRequest } from "./hostile";
import { BOOKKEEPING, startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;
let outside: string;
let outsideBefore: Map<string, string>;

/**
 * The server's bookkeeping, which changes on its own time (the audit log records refused and failed calls by design,
 * the leases are claimed slot after slot); nothing else may change.
 */
const OWN = BOOKKEEPING.map((prefix) => path.join(...prefix.replace(/\/$/, "").split("/")));

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  outside = mkdtempSync(path.join(os.tmpdir(), "quiver-outside-"));
  writeFileSync(path.join(outside, "secret.txt"), "not for the API");
  expect((await api.arrow("/v1/table/donor/create", rows(0, 4))).status).toBe(200);
  cpSync(path.join(server.root, "donor.lance"), path.join(outside, "dataset.lance"), { recursive: true });
  expect((await api.post("/v1/table/donor/drop", {})).status).toBe(200);
  expect((await api.post("/v1/namespace/ns/create", {})).status).toBe(200);
  outsideBefore = snapshot(outside);
});
afterAll(async () => {
  await server?.stop();
  if (outside) rmSync(outside, { recursive: true, force: true });
});
beforeEach(() => {
  expect(snapshot(outside)).toEqual(outsideBefore);
});

const untouched = () => expect(changes(outsideBefore, snapshot(outside))).toEqual([]);

/** Expects a refusal in the documented shape that left both the data root and the outside directory as they were. */
async function refused(call: () => Promise<Reply>, status: number, code: number) {
  const before = snapshot(server.root, OWN);
  expectError(await call(), status, code);
  expect(changes(before, snapshot(server.root, OWN))).toEqual([]);
  untouched();
}

const NAMES = [
  "..",
  ".",
  "../outside",
  "/etc",
  "%2e%2e",
  "%2f",
  "..%2f..%2fetc",
  "a/b",
  "a\\b",
  "..\\..\\x",
  "a\u0000b",
  "\u2024\u2024",
  "\uff0e\uff0e",
  "a\u2215b",
  "\u2215etc",
  "a".repeat(129),
  "x.lance/../..",
  "~",
];

describe("identifiers", () => {
  it.each(NAMES)("refuses %j as a namespace or table name, with every operation", async (name) => {
    const nested = encodeURIComponent(`ns$${name}`);
    // A whole path segment of `.` or `..` never names anything: URL parsing resolves it (see the raw paths below).
    const ids = name === "." || name === ".." ? [nested] : [encodeURIComponent(name), nested];
    for (const id of ids) {
      await refused(() => api.post(`/v1/namespace/${id}/create`, {}), 400, ErrorCode.InvalidInput);
      await refused(() => api.post(`/v1/table/${id}/declare`, {}), 400, ErrorCode.InvalidInput);
      await refused(() => api.arrow(`/v1/table/${id}/create`, rows(0, 1)), 400, ErrorCode.InvalidInput);
      await refused(() => api.arrow(`/v1/table/${id}/insert`, rows(0, 1)), 400, ErrorCode.InvalidInput);
      await refused(() => api.post(`/v1/table/${id}/describe`, {}), 400, ErrorCode.InvalidInput);
      await refused(() => api.post(`/v1/table/${id}/drop`, {}), 400, ErrorCode.InvalidInput);
      await refused(() => api.post(`/v1/namespace/${id}/drop`, {}), 400, ErrorCode.InvalidInput);
    }
    await refused(() => api.post("/v1/table/ns$t/declare", { id: ["ns", name] }), 400, ErrorCode.InvalidInput);
  });

  it.each(["..", "../x", "a/b", "\uff0e\uff0e"])("refuses %j as a new table name or target namespace of a rename", async (name) => {
    expect((await api.arrow("/v1/table/ns$renamed/create", rows(0, 1))).status).toBe(200);
    await refused(() => api.post("/v1/table/ns$renamed/rename", { new_table_name: name }), 400, ErrorCode.InvalidInput);
    await refused(() => api.post("/v1/table/ns$renamed/rename", { new_table_name: "x", new_namespace_id: [name] }), 400, ErrorCode.InvalidInput);
    expect((await api.post("/v1/table/ns$renamed/drop", {})).status).toBe(200);
  });

  it.each([
    ["/", "..//.."],
    ["/", "ns/../.."],
    [".", "ns...t"],
    ["..", "ns....t"],
    ["\\", "ns\\..\\t"],
  ])("splits with delimiter %j and still refuses %j", async (delimiter, raw) => {
    await refused(() => api.post(`/v1/table/${encodeURIComponent(raw)}/declare?delimiter=${encodeURIComponent(delimiter)}`, {}), 400, ErrorCode.InvalidInput);
  });

  it.each(["/v1/table/../../../etc/passwd/describe", "/v1/table/%2e%2e/%2e%2e/describe", "/v1/namespace/..%2f..%2f/list", "/v1/table/ns$..$..$x/declare"])(
    "answers the raw path %s without failing or touching anything",
    async (rawPath) => {
      const before = snapshot(server.root, OWN);
      const req: RawRequest = { method: rawPath.endsWith("declare") ? "POST" : "GET", path: rawPath, headers: server.auth };
      const reply = await send(server.url, req);
      expect(contractProblem(req, reply)).toBeNull();
      expect(reply.status).toBeGreaterThanOrEqual(400);
      expect(changes(before, snapshot(server.root, OWN))).toEqual([]);
      untouched();
    },
  );

  it("refuses branch and tag names that climb out of the table", async () => {
    expect((await api.arrow("/v1/table/ns$refs/create", rows(0, 2))).status).toBe(200);
    for (const name of ["../x", "../../../../x", "/abs", "a/../b", "a\\b", "."]) {
      await refused(() => api.post("/v1/table/ns$refs/branches/create", { name }), 400, ErrorCode.InvalidInput);
      await refused(() => api.post("/v1/table/ns$refs/tags/create", { tag: name, version: 1 }), 400, ErrorCode.InvalidInput);
    }
  });
});

describe("locations", () => {
  it.each(["/etc", "../outside", "/tmp", "x.lance/../../x", "__manifest", ".quiver", ".quiver/links", "./t.lance", "t.lance/", "%2e%2e"])(
    "refuses %j as the location of a declared table",
    async (location) => {
      await refused(() => api.post("/v1/table/placed/declare", { location }), 400, ErrorCode.InvalidInput);
      await refused(() => api.post("/v1/table/ns$placed/declare", { location }), 400, ErrorCode.InvalidInput);
    },
  );

  it("refuses the outside directory and a path that leaves the root through it", async () => {
    await refused(() => api.post("/v1/table/placed/declare", { location: outside }), 400, ErrorCode.InvalidInput);
    await refused(
      () => api.post("/v1/table/placed/declare", { location: path.join(server.root, "..", path.basename(outside), "x.lance") }),
      400,
      ErrorCode.InvalidInput,
    );
    await refused(() => api.post("/v1/table/placed/declare", { location: `${server.root}/../placed.lance` }), 400, ErrorCode.InvalidInput);
  });

  it("takes only the location the catalog would choose, and keeps it inside the root", async () => {
    const reply = await api.post<{ location: string }>("/v1/table/chosen/declare", {
      location: path.join(server.root, "chosen.lance"),
      properties: { location: "/etc" },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.location).toBe(path.join(server.root, "chosen.lance"));
    expect(readdirSync(path.join(server.root, "chosen.lance"))).toEqual([".lance-reserved"]);
    untouched();
  });

  it("refuses storage options that name paths, and keeps properties that do as plain properties", async () => {
    const options = `storage_options=${encodeURIComponent(JSON.stringify({ root: outside }))}`;
    await refused(() => api.arrow(`/v1/table/ns$opts/create?${options}`, rows(0, 2)), 406, ErrorCode.Unsupported);
    const properties = `properties=${encodeURIComponent(JSON.stringify({ location: outside }))}`;
    const reply = await api.arrow<{ location: string; properties: Record<string, string> }>(`/v1/table/ns$opts/create?${properties}`, rows(0, 2));
    expect(reply.status).toBe(200);
    expect(reply.body.location.startsWith(server.root + path.sep)).toBe(true);
    expect(reply.body.properties).toEqual({ location: outside });
    untouched();
  });
});

describe("database headers", () => {
  it.each(["..", "../..", "/tmp", "a/b", "%2e%2e", "a\\b", ".", "default/../x", "\u2024", "\uff0e\uff0e", "a".repeat(65)])("refuses %j", async (name) => {
    // Header values are bytes: a client sends a non-Latin-1 name as its UTF-8 bytes.
    const value = Buffer.from(name, "utf8").toString("latin1");
    for (const header of ["x-quiver-database", "x-lancedb-database"]) {
      await refused(() => api.get("/v1/namespace/%24/list", { [header]: value }), 400, ErrorCode.InvalidInput);
      await refused(() => api.post("/v1/namespace/x/create", {}, { [header]: value }), 400, ErrorCode.InvalidInput);
    }
    await refused(() => api.post("/v1/admin/databases/create", { name }), 400, ErrorCode.InvalidInput);
  });

  it("keeps a database's tables under .quiver/databases/<name>", async () => {
    expect((await api.post("/v1/admin/databases/create", { name: "db1" })).status).toBe(200);
    const reply = await api.arrow<{ location: string }>("/v1/table/t/create", rows(0, 2), { "x-quiver-database": "db1" });
    expect(reply.status).toBe(200);
    expect(reply.body.location).toBe(path.join(server.root, ".quiver", "databases", "db1", "t.lance"));
    await refused(() => api.get("/v1/namespace/%24/list", { "x-quiver-database": "nope" }), 404, ErrorCode.NamespaceNotFound);
  });
});

describe("symbolic links planted in the root", () => {
  it("a <name>.lance link to a dataset outside is neither listed, read, written nor removed", async () => {
    symlinkSync(path.join(outside, "dataset.lance"), path.join(server.root, "planted.lance"), "dir");
    const listed = await api.get<{ tables: string[] }>("/v1/namespace/%24/table/list");
    expect(listed.body.tables).not.toContain("planted");
    await refused(() => api.post("/v1/table/planted/describe", {}), 404, ErrorCode.TableNotFound);
    await refused(() => api.post("/v1/table/planted/query", {}), 404, ErrorCode.TableNotFound);
    await refused(() => api.arrow("/v1/table/planted/insert", rows(10, 12)), 404, ErrorCode.TableNotFound);
    await refused(() => api.post("/v1/table/planted/drop", {}), 404, ErrorCode.TableNotFound);
    await refused(() => api.arrow("/v1/table/planted/create", rows(10, 12)), 409, ErrorCode.TableAlreadyExists);
    await refused(() => api.arrow("/v1/table/planted/create?mode=overwrite", rows(10, 12)), 409, ErrorCode.TableAlreadyExists);
    await refused(() => api.post("/v1/table/planted/declare", {}), 409, ErrorCode.TableAlreadyExists);
  });

  it("a dangling <name>.lance link is a name in use, not a place to create", async () => {
    symlinkSync(path.join(outside, "missing.lance"), path.join(server.root, "dangling.lance"), "dir");
    await refused(() => api.arrow("/v1/table/dangling/create", rows(0, 2)), 409, ErrorCode.TableAlreadyExists);
    await refused(() => api.post("/v1/table/dangling/declare", {}), 409, ErrorCode.TableAlreadyExists);
  });

  it("a table whose directory was swapped for a link outside is refused, not followed", async () => {
    const declared = await api.post<{ location: string }>("/v1/table/ns$swapped/declare", {});
    expect(declared.status).toBe(200);
    const location = declared.body.location;
    rmSync(location, { recursive: true });
    symlinkSync(path.join(outside, "dataset.lance"), location, "dir");
    const described = await api.post("/v1/table/ns$swapped/describe", {});
    expect(described.status).toBe(200);
    expect(described.body).toMatchObject({ is_only_declared: true });
    await refused(() => api.post("/v1/table/ns$swapped/query", {}), 404, ErrorCode.TableNotFound);
    expect((await api.post<number>("/v1/table/ns$swapped/count_rows", { predicate: "id > 0" })).body).toBe(0);
    expect((await api.post<{ versions: unknown[] }>("/v1/table/ns$swapped/version/list", {})).body.versions).toEqual([]);
    await refused(() => api.arrow("/v1/table/ns$swapped/insert", rows(0, 2)), 409, ErrorCode.InvalidTableState);
    await refused(() => api.arrow("/v1/table/ns$swapped/create?mode=overwrite", rows(0, 2)), 409, ErrorCode.InvalidTableState);
    expect((await api.post("/v1/table/ns$swapped/drop", {})).status).toBe(200);
    untouched();
  });

  it("a directory named like a namespace that links outside is never used: namespaces have no directories", async () => {
    symlinkSync(outside, path.join(server.root, "evil"), "dir");
    expect((await api.post("/v1/namespace/evil/create", {})).status).toBe(200);
    const created = await api.arrow<{ location: string }>("/v1/table/evil$t/create", rows(0, 3));
    expect(created.status).toBe(200);
    expect(path.dirname(created.body.location)).toBe(server.root);
    expect((await api.arrow("/v1/table/evil$t/insert", rows(3, 5))).status).toBe(200);
    expect((await api.post<number>("/v1/table/evil$t/count_rows", {})).body).toBe(5);
    expect((await api.post("/v1/namespace/evil/drop", { behavior: "Cascade" })).status).toBe(200);
    untouched();
  });

  it("a database directory that links outside is no database", async () => {
    mkdirSync(path.join(server.root, ".quiver", "databases"), { recursive: true });
    symlinkSync(outside, path.join(server.root, ".quiver", "databases", "linked"), "dir");
    await refused(() => api.get("/v1/namespace/%24/list", { "x-quiver-database": "linked" }), 404, ErrorCode.NamespaceNotFound);
    await refused(() => api.post("/v1/namespace/x/create", {}, { "x-lancedb-database": "linked" }), 404, ErrorCode.NamespaceNotFound);
    await refused(() => api.post("/v1/admin/databases/create", { name: "linked" }), 409, ErrorCode.NamespaceAlreadyExists);
    const listed = await api.get<{ databases: string[] }>("/v1/admin/databases");
    expect(listed.body.databases).not.toContain("linked");
  });

  it("the outside directory kept its dataset intact", () => {
    expect(changes(outsideBefore, snapshot(outside))).toEqual([]);
    expect(readdirSync(outside).sort()).toEqual(["dataset.lance", "secret.txt"]);
  });
});
