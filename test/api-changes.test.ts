/**
 * What changed between versions: counts from the manifests for every table, and on a table written with stable row
 * ids the rows each range inserted and updated, with what an update changed them from.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Table } from "apache-arrow";
import { client, expectError, rows } from "./client";
import { startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;

interface Changes {
  from_version: number | null;
  to_version: number;
  stable_row_ids: boolean;
  rows_before: number;
  rows_after: number;
  rows_written: number;
  rows_removed: number;
  rows_inserted?: number;
  rows_updated?: number;
  rows_deleted?: number;
  why_no_rows?: string;
  versions?: Array<{ version: number; operation: string | null; rows_before: number; rows_after: number; compaction: boolean }> | null;
  schema_changes: Array<{ kind: string; path: string[]; type: string }>;
}

const ids = (table: Table) => [...table.getChild("id")!.toArray()].map(Number).sort((a, b) => a - b);

/** Five rows, three more, id 2 updated, id 3 deleted, a column added: versions 1 to 5. */
async function history(table: string) {
  await api.arrow(`/v1/table/${table}/insert`, rows(0, 5));
  await api.arrow(`/v1/table/${table}/insert`, rows(5, 8));
  expect((await api.post(`/v1/table/${table}/update`, { predicate: "id = 2", updates: [["s", "'changed'"]] })).status).toBe(200);
  expect((await api.post(`/v1/table/${table}/delete`, { predicate: "id = 3" })).status).toBe(200);
  expect((await api.post(`/v1/table/${table}/add_columns`, { new_columns: [{ name: "double_x", expression: "x * 2" }] })).status).toBe(200);
}

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  await api.post("/v1/namespace/c/create", {});
  expect((await api.post("/v1/table/c$stable/declare", { properties: { "quiver.stable_row_ids": "true" } })).status).toBe(200);
  await history("c$stable");
  await api.post("/v1/table/c$plain/declare", { properties: { "quiver.stable_row_ids": "false" } });
  await history("c$plain");
});
afterAll(() => server?.stop());

describe("a table with stable row ids", () => {
  it("counts the rows a range inserted, updated and deleted, and names its schema changes", async () => {
    const rowsOnly = await api.post<Changes>("/v1/table/c$stable/changes", { from_version: 1, to_version: 4 });
    expect(rowsOnly.status).toBe(200);
    expect(rowsOnly.body).toMatchObject({
      from_version: 1,
      to_version: 4,
      stable_row_ids: true,
      rows_before: 5,
      rows_after: 7,
      rows_inserted: 3,
      rows_updated: 1,
      rows_deleted: 1,
      schema_changes: [],
    });
    // A column added gives every row a new value: the engine counts each row as updated by it.
    const column = await api.post<Changes>("/v1/table/c$stable/changes", {});
    expect(column.body).toMatchObject({ from_version: 4, to_version: 5, rows_inserted: 0, rows_updated: 7, rows_deleted: 0 });
    expect(column.body.schema_changes).toEqual([{ kind: "added", path: ["double_x"], type: "double" }]);
    const deleteOnly = await api.post<Changes>("/v1/table/c$stable/changes", { to_version: 4 });
    expect(deleteOnly.body).toMatchObject({ from_version: 3, to_version: 4, rows_inserted: 0, rows_updated: 0, rows_deleted: 1, schema_changes: [] });
    const first = await api.post<Changes>("/v1/table/c$stable/changes", { to_version: 1 });
    expect(first.body).toMatchObject({ from_version: null, rows_before: 0, rows_after: 5, rows_inserted: 5 });
  });

  it("gives the inserted and the updated rows, and what the update changed them from", async () => {
    const inserted = await api.post<Table>("/v1/table/c$stable/changes/rows", { from_version: 1, kind: "inserted" });
    expect(ids(inserted.body)).toEqual([5, 6, 7]);
    const updated = await api.post<Table>("/v1/table/c$stable/changes/rows", { from_version: 1, to_version: 3, kind: "updated" });
    expect(ids(updated.body)).toEqual([2]);
    expect(updated.body.getChild("s")!.get(0)).toBe("changed");
    const rowId = String(updated.body.getChild("_rowid")!.get(0));
    const before = await api.post<Table>("/v1/table/c$stable/changes/rows", { from_version: 1, to_version: 3, kind: "previous", row_ids: [rowId] });
    expect(before.body.getChild("s")!.get(0)).toBe("s2");
    const paged = await api.post<Table>("/v1/table/c$stable/changes/rows", { from_version: 1, kind: "inserted", limit: 2, offset: 2 });
    expect(paged.body.numRows).toBe(1);
  });

  it("keeps its stable row ids: the property cannot be changed once the table has data", async () => {
    expectError(await api.post("/v1/table/c$stable/properties/update", { removals: ["quiver.stable_row_ids"] }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/c$stable/properties/update", { updates: { "quiver.stable_row_ids": "maybe" } }), 400, ErrorCode.InvalidInput);
    const created = await api.arrow(
      `/v1/table/c$created/create?properties=${encodeURIComponent(JSON.stringify({ "quiver.stable_row_ids": "true" }))}`,
      rows(0, 2),
    );
    expect(created.status).toBe(200);
    expect((await api.post<Changes>("/v1/table/c$created/changes", {})).body.stable_row_ids).toBe(true);
  });
});

describe("a table without stable row ids", () => {
  it("counts rows from the manifests and says why it cannot name them", async () => {
    const whole = await api.post<Changes>("/v1/table/c$plain/changes", { from_version: 1 });
    expect(whole.body).toMatchObject({ stable_row_ids: false, rows_before: 5, rows_after: 7 });
    expect(whole.body.rows_inserted).toBeUndefined();
    expect(whole.body.why_no_rows).toContain("quiver.stable_row_ids");
    // What it can say: each version of the range, what made it, and its row count.
    expect(whole.body.versions).toEqual([
      expect.objectContaining({ version: 2, operation: "Append", rows_before: 5, rows_after: 8, compaction: false }),
      expect.objectContaining({ version: 3, operation: "Update", rows_before: 8, rows_after: 8, compaction: false }),
      expect.objectContaining({ version: 4, operation: "Delete", rows_before: 8, rows_after: 7, compaction: false }),
      expect.objectContaining({ version: 5, rows_before: 7, rows_after: 7, compaction: false }),
    ]);
    // The update rewrote its row into a new fragment, and the column was added in place.
    const update = await api.post<Changes>("/v1/table/c$plain/changes", { to_version: 3 });
    expect(update.body).toMatchObject({ rows_written: 1, rows_removed: 1 });
    expectError(await api.post("/v1/table/c$plain/changes/rows", { kind: "inserted" }), 400, ErrorCode.InvalidInput);
  });

  it("never counts a compaction's moved rows as written or taken out", async () => {
    expect((await api.post("/v1/table/c$plain/maintenance/compact?wait=true", {})).body).toMatchObject({ job: { status: "succeeded" } });
    const compacted = await api.post<Changes>("/v1/table/c$plain/changes", { from_version: 5 });
    expect(compacted.body.to_version).toBeGreaterThan(5);
    expect(compacted.body).toMatchObject({ rows_before: 7, rows_after: 7, rows_written: 0, rows_removed: 0 });
    expect(compacted.body.versions!.length).toBeGreaterThan(0);
    expect(compacted.body.versions!.every((v) => v.compaction)).toBe(true);
  });
});

describe("a table whose first version Quiver writes, that does not say", () => {
  it("gets stable row ids from the service's default", async () => {
    expect((await api.arrow("/v1/table/c$default/create", rows(0, 3))).status).toBe(200);
    expect((await api.arrow("/v1/table/c$default/insert", rows(3, 5))).status).toBe(200);
    const changes = await api.post<Changes>("/v1/table/c$default/changes", {});
    expect(changes.body).toMatchObject({ stable_row_ids: true, rows_inserted: 2, rows_updated: 0, rows_deleted: 0 });
    // The property is the table's own choice; the service's default is not written into it.
    expect((await api.post<{ properties?: Record<string, string> }>("/v1/table/c$default/describe", {})).body.properties ?? {}).not.toHaveProperty(
      "quiver.stable_row_ids",
    );
  });

  it("refuses ends in the wrong order, twice named, or not there", async () => {
    expectError(await api.post("/v1/table/c$plain/changes", { from_version: 4, to_version: 2 }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/c$plain/changes", { from_version: 1, from_tag: "x" }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/c$plain/changes", { to_version: 99 }), 404, ErrorCode.TableVersionNotFound);
    expectError(await api.post("/v1/table/c$plain/changes", { from_tag: "nope" }), 404, ErrorCode.TableTagNotFound);
  });
});
