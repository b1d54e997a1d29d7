import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { schemaMetadataCommit, schemaMetadataOf } from "./schema-metadata-commit";
import { manifestKey } from "./version-manifest";
import { transactionOperation } from "./version-operations";

const dir = mkdtempSync(path.join(os.tmpdir(), "quiver-schema-metadata-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Commits a schema metadata change to a table on a local directory, as the server does on its store. */
function commit(table: string, changes: Record<string, string>) {
  const versions = path.join(dir, `${table}.lance`, "_versions");
  // V2 names sort the newest version first.
  const [latest] = readdirSync(versions)
    .filter((name) => /^\d{20}\.manifest$/.test(name))
    .sort();
  const next = schemaMetadataCommit(readFileSync(path.join(versions, latest)), changes);
  if (next.transactionFile) writeFileSync(path.join(dir, `${table}.lance`, "_transactions", next.transactionFile), next.transaction, { flag: "wx" });
  writeFileSync(manifestKey(path.join(dir, `${table}.lance`), next.version, true), next.manifest, { flag: "wx" });
  return next;
}

const rows = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ id: from + i, s: `row ${from + i}` }));

describe("a commit that changes the schema's metadata", () => {
  it("is a version the engine reads: the metadata set, rows, indexes and earlier versions unchanged", async () => {
    const db = await lancedb.connect(dir);
    const table = await db.createTable("t", rows(0, 300));
    await table.createIndex("id", { config: lancedb.Index.btree() });
    const before = await table.version();

    const first = commit("t", { owner: "data-team", "quiver:purpose": "test" });
    expect(first.version).toBe(before + 1);
    expect(first.metadata).toEqual({ owner: "data-team", "quiver:purpose": "test" });
    const second = commit("t", { owner: "platform" });
    expect(second.metadata).toEqual({ owner: "platform", "quiver:purpose": "test" });

    const reopened = await (await lancedb.connect(dir)).openTable("t");
    expect(await reopened.version()).toBe(before + 2);
    expect(Object.fromEntries((await reopened.schema()).metadata)).toEqual({ owner: "platform", "quiver:purpose": "test" });
    expect(await reopened.countRows()).toBe(300);
    expect(await reopened.countRows("id >= 250")).toBe(50);
    expect((await reopened.listIndices()).map((i) => i.name)).toEqual(["id_idx"]);
    expect((await reopened.indexStats("id_idx"))?.numIndexedRows).toBe(300);
    expect((await reopened.listVersions()).map((v) => v.version)).toEqual([1, 2, 3, 4]);
    await reopened.checkout(before);
    expect(Object.fromEntries((await reopened.schema()).metadata)).toEqual({});
    // Lance's own reader of what made the version, and ours, see an UpdateConfig.
    expect(schemaMetadataOf(first.manifest)).toEqual({ version: before + 1, metadata: first.metadata });
    expect(transactionOperation(second.transaction)).toBe("UpdateConfig");
  });

  it("is rebased over by a writer that read the version before it, which keeps the metadata", async () => {
    const db = await lancedb.connect(dir);
    const table = await db.createTable("r", rows(0, 10));
    // A handle that does not look for newer versions, so its append is committed against the version before.
    const stale = await db.openTable("r");
    await stale.countRows();
    commit("r", { owner: "data-team" });
    await stale.add(rows(10, 15));
    const fresh = await (await lancedb.connect(dir, { readConsistencyInterval: 0 })).openTable("r");
    expect(await fresh.version()).toBe(3);
    expect(await fresh.countRows()).toBe(15);
    expect(Object.fromEntries((await fresh.schema()).metadata)).toEqual({ owner: "data-team" });
    await table.add(rows(15, 20));
    expect(await fresh.countRows()).toBe(20);
  });
});
