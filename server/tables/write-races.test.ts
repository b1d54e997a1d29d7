/**
 * Writes that another change overtakes while they run, made certain by doing that change inside the write: a rename
 * of the table (its files are the renamed table's still, and stay), and the table dropped and made again at the
 * same location by another process (the handle that followed this process's commits belongs to the old one, and
 * writing through it would put the old table's versions into the new one).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import * as lancedb from "@lancedb/lancedb";
import { openDatabase } from "@/server/databases";
import type { Catalog } from "@/server/catalog/catalog";
import { received, toIpcFile } from "@/server/lance/arrow-ipc";
import type { Tables } from "./tables";
import { parseRoot } from "@/server/storage/root";
import { insertRecords } from "./writes";
import { currentWrite, WriteTicket } from "./write-ledger";
import { countRows } from "./queries";

const arrow = createRequire(import.meta.url)("apache-arrow") as typeof import("apache-arrow");
const dir = mkdtempSync(path.join(os.tmpdir(), "quiver-races-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rows = (from: number, to: number) => arrow.tableFromArrays({ id: BigInt64Array.from({ length: to - from }, (_, i) => BigInt(from + i)) });
const body = (from: number, to: number) => toIpcFile(received(Buffer.from(arrow.tableToIPC(rows(from, to), "stream"))));

/** Runs `write` as a write request the ledger covers (as the HTTP edge does), and records its answer. */
async function asRequest<T extends { version: number }>(id: string, write: () => Promise<T>): Promise<T> {
  const ticket = new WriteTicket({
    key: `key-${id}`,
    requestId: id,
    fingerprint: id,
    sameBody: null,
    answeredByVersion: true,
    operation: "InsertIntoTable",
    rows: null,
    branch: null,
    principal: { kind: "key", id: "test", name: "test" },
    database: "default",
    path: `/v1/table/${id}/insert`,
  });
  const answer = await currentWrite.run(ticket, write);
  await tables.ledger.finish(ticket, { outcome: "committed", status: 200, body: answer });
  return answer;
}

let catalog: Catalog;
let tables: Tables;
beforeAll(async () => {
  ({ catalog, tables } = await openDatabase(parseRoot(dir), {}));
});

describe("a write overtaken while it runs", () => {
  it("keeps the files of a table renamed under it, which are the renamed table's", async () => {
    await catalog.createNamespace(["ns"], "create", {});
    await catalog.declareTable(["ns", "a"], undefined, {});
    await insertRecords(tables, ["ns", "a"], body(0, 5), "append");
    const entry = await catalog.resolve(["ns", "a"]);
    const answer = await tables.unlessDropped(entry, async () => {
      await catalog.renameTable(["ns", "a"], "b");
      return "written";
    });
    expect(answer).toBe("written");
    expect(await countRows(tables, ["ns", "b"], undefined, {})).toBe(5);
    await expect(countRows(tables, ["ns", "a"], undefined, {})).rejects.toMatchObject({ codeName: "TableNotFound" });
  });

  it("writes into the table made again at the same location by another process, not into the one it replaced", async () => {
    await catalog.declareTable(["t"], undefined, {});
    await insertRecords(tables, ["t"], body(0, 10), "append");
    // This process's commit handle now holds version 2 of the first table, which it published itself: a write that
    // finds that manifest still the latest commits without a look at the directory.
    expect((await asRequest("r2", () => insertRecords(tables, ["t"], body(10, 20), "append"))).version).toBe(2);
    const elsewhere = await lancedb.connect(dir);
    await elsewhere.dropTable("t");
    await elsewhere.createTable("t", rows(100, 103));
    await elsewhere.openTable("t").then((t) => t.add(rows(103, 105)));
    // The new table is at version 2 too, but its manifest is another write than the one this process published.
    const { version } = await asRequest("r3", () => insertRecords(tables, ["t"], body(200, 201), "append"));
    expect(version).toBe(3);
    const now = await elsewhere.openTable("t");
    expect(await now.countRows()).toBe(6);
    expect(await now.countRows("id < 100")).toBe(0);
  });
});
