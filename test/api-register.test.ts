/**
 * RegisterTable and DeregisterTable, as Lance's directory namespace serves them: an existing dataset under the root
 * becomes a table by its relative location, and a deregistered table leaves the catalog while its files stay, hidden
 * from every instance on the root and from Lance's own directory listing, until it is registered again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { testStore } from "./store-server";
import { client, expectError, rows } from "./client";
import { onObjectStore, rootSnapshot, startServer, storeOf, uriOf, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;
const storageOptions = () => (onObjectStore ? testStore().storageOptions : {});

/** A dataset written by the engine itself at a key under the server's root, as another tool would leave one. */
async function engineDataset(parent: string, name: string, count: number): Promise<lancedb.Table> {
  const db = await lancedb.connect(uriOf(server, parent), { storageOptions: storageOptions() });
  return db.createTable(
    name,
    Array.from({ length: count }, (_, i) => ({ id: BigInt(i), x: i * 1.5, s: `s${i}` })),
  );
}

async function engineRows(key: string): Promise<number> {
  const slash = key.lastIndexOf("/");
  const db = await lancedb.connect(uriOf(server, slash < 0 ? "" : key.slice(0, slash)), { storageOptions: storageOptions() });
  return (await db.openTable(key.slice(slash + 1).replace(/\.lance$/, ""))).countRows();
}

const tables = async (ns: string) => (await api.get(`/v1/namespace/${ns}/table/list`)).body.tables;

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  expect((await api.post("/v1/namespace/lake/create", {})).status).toBe(200);
  await engineDataset("imports", "events", 7);
});
afterAll(() => server?.stop());

describe("RegisterTable", () => {
  it("catalogs an existing dataset by its location relative to the root", async () => {
    const reply = await api.post("/v1/table/lake$events/register", { location: "imports/events.lance", properties: { source: "batch" } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toMatchObject({ location: uriOf(server, "imports/events.lance"), properties: { source: "batch" } });
    expect(await tables("lake")).toEqual(["events"]);
    const described = await api.post("/v1/table/lake$events/describe", { load_detailed_metadata: true });
    expect(described.body).toMatchObject({ version: 1, location: uriOf(server, "imports/events.lance"), properties: { source: "batch" } });
    expect((await api.post("/v1/table/lake$events/count_rows", {})).body).toBe(7);
    // Writes through the catalog land in the registered dataset itself.
    expect((await api.arrow("/v1/table/lake$events/insert", rows(100, 103))).status).toBe(200);
    expect(await engineRows("imports/events.lance")).toBe(10);
  });

  it("refuses locations outside the root, the service's own data, and places without a dataset, changing nothing", async () => {
    await engineDataset("", "elsewhere", 1);
    const before = await rootSnapshot(server);
    const refused: Array<[string, number, number]> = [
      ["/tmp/events.lance", 400, ErrorCode.InvalidInput],
      [`${uriOf(server, "imports/events.lance")}`, 400, ErrorCode.InvalidInput],
      ["s3://bucket/events.lance", 400, ErrorCode.InvalidInput],
      ["imports/../events.lance", 400, ErrorCode.InvalidInput],
      ["./imports/events.lance", 400, ErrorCode.InvalidInput],
      ["__manifest", 400, ErrorCode.InvalidInput],
      [".quiver/auth", 400, ErrorCode.InvalidInput],
      ["imports/nothing.lance", 400, ErrorCode.InvalidInput],
      ["imports/events.lance", 409, ErrorCode.TableAlreadyExists],
      ["imports/events.lance/data", 409, ErrorCode.TableAlreadyExists],
      ["elsewhere.lance", 409, ErrorCode.TableAlreadyExists],
    ];
    for (const [location, status, code] of refused) {
      const reply = await api.post("/v1/table/lake$copy/register", { location });
      expect(reply.status, `${location}: ${JSON.stringify(reply.body)}`).toBe(status);
      expectError(reply, status, code);
    }
    expectError(await api.post("/v1/table/lake$events/register", { location: "elsewhere.lance" }), 409, ErrorCode.TableAlreadyExists);
    expectError(await api.post("/v1/table/nowhere$events/register", { location: "elsewhere.lance" }), 404, ErrorCode.NamespaceNotFound);
    expectError(await api.post("/v1/table/lake$x/register", { location: "elsewhere.lance", mode: "Sideways" }), 400, ErrorCode.InvalidInput);
    expect(await rootSnapshot(server)).toEqual(before);
    expect(await tables("lake")).toEqual(["events"]);
  });
});

describe("DeregisterTable", () => {
  it("takes a table out of the catalog, keeps its files, and registers again with its rows", async () => {
    const reply = await api.post("/v1/table/lake$events/deregister", {});
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toMatchObject({ id: ["lake", "events"], location: uriOf(server, "imports/events.lance"), properties: { source: "batch" } });
    expectError(await api.post("/v1/table/lake$events/describe", {}), 404, ErrorCode.TableNotFound);
    expect((await api.post("/v1/table/lake$events/exists", {})).status).toBe(404);
    expect(await tables("lake")).toEqual([]);
    expectError(await api.post("/v1/table/lake$events/deregister", {}), 404, ErrorCode.TableNotFound);
    expect(await engineRows("imports/events.lance")).toBe(10);
    expect(await storeOf(server).head("imports/events.lance/.lance-deregistered")).not.toBeNull();

    expect((await api.post("/v1/table/lake$again/register", { location: "imports/events.lance" })).status).toBe(200);
    expect((await api.post("/v1/table/lake$again/count_rows", {})).body).toBe(10);
    expect(await storeOf(server).head("imports/events.lance/.lance-deregistered")).toBeNull();
  });

  it("Overwrite moves a name to another dataset, keeping the files of the one it named before", async () => {
    await engineDataset("imports", "other", 2);
    expectError(await api.post("/v1/table/lake$again/register", { location: "imports/other.lance" }), 409, ErrorCode.TableAlreadyExists);
    expect((await api.post("/v1/table/lake$again/register", { location: "imports/other.lance", mode: "Overwrite" })).status).toBe(200);
    expect((await api.post("/v1/table/lake$again/count_rows", {})).body).toBe(2);
    expect(await engineRows("imports/events.lance")).toBe(10);
  });

  it("hides a root-level directory from every instance on the root and from Lance's directory listing", async () => {
    await engineDataset("", "loose", 3);
    expect((await api.arrow("/v1/table/made/create", rows(0, 4))).status).toBe(200);
    // On an object store the root's listing, which finds a dataset another tool wrote, is a few seconds old.
    await expect.poll(() => tables("$"), { timeout: 20_000, interval: 500 }).toEqual(expect.arrayContaining(["loose", "made"]));
    for (const name of ["loose", "made"]) expect((await api.post(`/v1/table/${name}/deregister`, {})).status).toBe(200);
    expect(await tables("$")).not.toEqual(expect.arrayContaining(["loose"]));
    expect(await tables("$")).not.toContain("made");

    const second = await startServer({}, { root: server.root });
    try {
      const other = client(second.url, second.auth);
      const listed = (await other.get("/v1/namespace/$/table/list")).body.tables;
      expect(listed).not.toContain("loose");
      expect(listed).not.toContain("made");
      expectError(await other.post("/v1/table/loose/describe", {}), 404, ErrorCode.TableNotFound);
      // A new table cannot take the directory the deregistered one kept.
      expectError(await other.arrow("/v1/table/loose/create", rows(0, 1)), 409, ErrorCode.TableAlreadyExists);
      expectError(await other.post("/v1/table/elsewhere/rename", { new_table_name: "made" }), 409, ErrorCode.TableAlreadyExists);
    } finally {
      await second.stop();
    }
    if (!onObjectStore) {
      const dir = await lancedb.connectNamespace("dir", { root: server.root });
      const names = await dir.tableNames();
      expect(names).toContain("elsewhere");
      expect(names).not.toContain("loose");
      expect(names).not.toContain("made");
    }

    expect((await api.post("/v1/table/loose/register", { location: "loose.lance" })).status).toBe(200);
    expect((await api.post("/v1/table/loose/count_rows", {})).body).toBe(3);
    expect(await tables("$")).toContain("loose");
    if (!onObjectStore) expect(await (await lancedb.connectNamespace("dir", { root: server.root })).tableNames()).toContain("loose");
  });

  it("drops a deregistered root-level directory, files and all, as Lance's directory namespace does", async () => {
    expectError(await api.post("/v1/table/made/describe", {}), 404, ErrorCode.TableNotFound);
    const dropped = await api.post("/v1/table/made/drop", {});
    expect(dropped.status, JSON.stringify(dropped.body)).toBe(200);
    expect(await storeOf(server).list("made.lance/")).toEqual([]);
    expectError(await api.post("/v1/table/made/drop", {}), 404, ErrorCode.TableNotFound);
    expect((await api.arrow("/v1/table/made/create", rows(0, 2))).status).toBe(200);
    expect((await api.post("/v1/table/made/count_rows", {})).body).toBe(2);
  });
});
