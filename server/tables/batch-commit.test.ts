/**
 * A batch that another writer overtakes between its check and its apply: what it had published is taken back and its
 * declared table's location let go, and it is decided aborted, so that the batch changes all of its tables or none.
 * The race is made for certain by letting the engine commit on one of the batch's tables after the batch was checked.
 */
import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import type { Catalog } from "@/server/catalog/catalog";
import { openDatabase } from "@/server/databases";
import { QuiverError } from "@/server/errors";
import { manifestKey } from "@/server/lance/version-manifest";
import { parseRoot } from "@/server/storage/root";
import { TableFiles } from "@/server/lance/table-files";
import { checkBatch, commitBatch } from "./batch-commit";
import type { Tables } from "./tables";

const dir = mkdtempSync(path.join(os.tmpdir(), "quiver-batch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rows = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ id: from + i }));
let db: lancedb.Connection;
let catalog: Catalog;
let tables: Tables;

/** Version 2 of a new table, written and then taken back to a staging path, as a writer stages a commit. */
async function staged(table: string): Promise<string> {
  const t = await db.createTable(table, rows(0, 3));
  await t.add(rows(3, 5));
  const final = manifestKey(path.join(dir, `${table}.lance`), 2, true);
  const stagedPath = path.join(dir, `${table}.lance`, "_versions", "2.manifest-staged");
  renameSync(final, stagedPath);
  return stagedPath;
}

const latestVersion = async (table: string) => (await db.openTable(table)).version();

beforeAll(async () => {
  db = await lancedb.connect(dir);
  ({ catalog, tables } = await openDatabase(parseRoot(dir), {}));
});

describe("a batch overtaken between its check and its apply", () => {
  it("takes back what it applied before the part that failed: versions, declares and deregisters", async () => {
    const aStaged = await staged("a");
    const bStaged = await staged("b");
    await db.createTable("d", rows(0, 2));
    const batch = await checkBatch(catalog, tables, [
      { kind: "create_table_version", id: ["a"], version: { version: 2, manifestPath: aStaged } },
      { kind: "declare_table", id: ["c"], properties: { owner: "x" } },
      { kind: "deregister_table", id: ["d"] },
      { kind: "create_table_version", id: ["b"], version: { version: 2, manifestPath: bStaged } },
    ]);
    // Another writer commits version 2 of b first.
    await (await db.openTable("b")).add(rows(100, 101));

    const failed = await batch.apply().catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(QuiverError);
    expect((failed as QuiverError).codeName).toBe("ConcurrentModification");
    expect((failed as QuiverError).message).toMatch(/the batch was not applied: table 'b': version 2 is another commit's; nothing was changed/);

    expect(await latestVersion("a")).toBe(1);
    expect(existsSync(aStaged)).toBe(true);
    await expect(catalog.resolve(["c"])).rejects.toMatchObject({ codeName: "TableNotFound" });
    expect(existsSync(path.join(dir, "c.lance"))).toBe(false);
    expect((await catalog.resolve(["d"])).location).toBe("d.lance");
    expect(await (await db.openTable("d")).countRows()).toBe(2);
    expect(await (await db.openTable("b")).countRows()).toBe(4);

    // Checked again, the same batch (less b's taken version) commits whole.
    const { results, tidy } = await commitBatch(catalog, tables, [
      { kind: "create_table_version", id: ["a"], version: { version: 2, manifestPath: aStaged } },
      { kind: "declare_table", id: ["c"], properties: { owner: "x" } },
      { kind: "deregister_table", id: ["d"] },
    ]);
    expect(results.map((r) => r.kind)).toEqual(["create_table_version", "declare_table", "deregister_table"]);
    expect(await latestVersion("a")).toBe(2);
    expect(await (await db.openTable("a")).countRows()).toBe(5);
    // The staged manifest goes once the batch's answer is recorded.
    expect(existsSync(aStaged)).toBe(true);
    await tidy(Promise.resolve());
    expect(existsSync(aStaged)).toBe(false);
    expect(await catalog.isDeclaredOnly(await catalog.resolve(["c"]))).toBe(true);
    await expect(catalog.resolve(["d"])).rejects.toMatchObject({ codeName: "TableNotFound" });
  });

  it("the store failing while it publishes a version leaves a batch that changes the catalog undecided, for its retry", async () => {
    const eStaged = await staged("e");
    await db.createTable("f", rows(0, 2));
    const decided = (await catalog.index()).batches.size;
    const publishing = TableFiles.prototype.publishManifest;
    TableFiles.prototype.publishManifest = async () => {
      TableFiles.prototype.publishManifest = publishing;
      throw new QuiverError("ServiceUnavailable", "the data root's store is unavailable: a test's");
    };
    const failed = await commitBatch(catalog, tables, [
      { kind: "create_table_version", id: ["e"], version: { version: 2, manifestPath: eStaged } },
      { kind: "deregister_table", id: ["f"] },
    ]).catch((err: unknown) => err);
    TableFiles.prototype.publishManifest = publishing;
    expect(failed).toBeInstanceOf(QuiverError);
    expect((failed as QuiverError).codeName).toBe("ServiceUnavailable");
    // Not decided: no batch's row in the catalog, nothing of it applied.
    expect((await catalog.index()).batches.size).toBe(decided);
    expect(await latestVersion("e")).toBe(1);
    expect((await catalog.resolve(["f"])).location).toBe("f.lance");
  });
});
