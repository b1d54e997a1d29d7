import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { parseManifest } from "./version-manifest";
import { transactionOperation } from "./version-operations";

const dir = mkdtempSync(path.join(os.tmpdir(), "quiver-manifest-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("reading Lance's manifest and transaction files", () => {
  it("answers each version's number, time, counts and operation as the engine lists them", async () => {
    const table = await (
      await lancedb.connect(dir)
    ).createTable(
      "t",
      Array.from({ length: 20 }, (_, i) => ({ id: i, s: `row ${i}` })),
    );
    await table.add(Array.from({ length: 5 }, (_, i) => ({ id: 100 + i, s: "more" })));
    await table.delete("id < 3");
    await table.update({ where: "id = 10", values: { s: "'changed'" } });
    await table.createIndex("id", { config: lancedb.Index.btree() });
    const versionsDir = path.join(dir, "t.lance", "_versions");
    const parsed = readdirSync(versionsDir)
      .filter((name) => name.endsWith(".manifest"))
      .map((name) => parseManifest(readFileSync(path.join(versionsDir, name))))
      .sort((a, b) => a.version - b.version);
    const listed = await table.listVersions();
    expect(parsed.map((v) => v.version)).toEqual(listed.map((v) => v.version));
    for (const [i, engine] of listed.entries()) {
      expect(parsed[i].timestampMillis).toBe(engine.timestamp.getTime());
      for (const [key, value] of Object.entries(parsed[i].metadata)) if (key in engine.metadata) expect([key, value]).toEqual([key, engine.metadata[key]]);
    }
    expect(parsed.at(-1)!.metadata).toMatchObject({ total_rows: "22", total_deletion_files: "1" });
    const operations = parsed.map((v) => transactionOperation(readFileSync(path.join(dir, "t.lance", "_transactions", v.transactionFile!))));
    expect(operations).toEqual(["Overwrite", "Append", "Delete", "Update", "CreateIndex"]);
  });

  it("names every file a version uses: the files on disk are exactly those the versions name", async () => {
    const table = await (
      await lancedb.connect(dir)
    ).createTable(
      "files",
      Array.from({ length: 300 }, (_, i) => ({ id: i, s: `row ${i % 7}`, vector: [i, i + 1, i + 2, i + 3] })),
    );
    await table.add(Array.from({ length: 5 }, (_, i) => ({ id: 1000 + i, s: "more", vector: [0, 0, 0, i] })));
    await table.delete("id < 3");
    await table.delete("id = 1001");
    await table.update({ where: "id = 10", values: { s: "'changed'" } });
    await table.createIndex("id", { config: lancedb.Index.btree() });
    await table.createIndex("s", { config: lancedb.Index.fts() });
    await table.createIndex("vector", { config: lancedb.Index.ivfFlat({ numPartitions: 2 }) });
    await table.optimize({ cleanupOlderThan: new Date(0) });
    const root = path.join(dir, "files.lance");
    const onDisk = (sub: string) => readdirSync(path.join(root, sub)).map((name) => `${sub}/${name}`);
    const named = readdirSync(path.join(root, "_versions"))
      .filter((name) => name.endsWith(".manifest"))
      .map((name) => parseManifest(readFileSync(path.join(root, "_versions", name))).files);
    const files = new Set(named.flatMap((v) => v.files));
    const indexDirectories = new Set(named.flatMap((v) => v.indexDirectories.map((d) => d.slice(0, -1))));
    expect(named.flatMap((v) => v.borrowed)).toEqual([]);
    expect([...files].filter((f) => f.startsWith("data/")).sort()).toEqual(onDisk("data").sort());
    expect([...files].filter((f) => f.startsWith("_deletions/")).sort()).toEqual(onDisk("_deletions").sort());
    expect([...files].filter((f) => f.startsWith("_transactions/")).sort()).toEqual(onDisk("_transactions").sort());
    expect([...indexDirectories].sort()).toEqual(onDisk("_indices").sort());
    expect(indexDirectories.size).toBeGreaterThanOrEqual(4);
    expect(onDisk("_deletions").length).toBeGreaterThanOrEqual(2);
  });

  it("refuses a file that is not a manifest, and names no operation for one that is not a transaction", () => {
    expect(() => parseManifest(Buffer.from("not a manifest at all"))).toThrow(/not a Lance manifest/);
    expect(transactionOperation(Buffer.from([0xff, 0xff, 0xff]))).toBeNull();
  });
});
