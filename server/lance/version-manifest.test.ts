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

  it("refuses a file that is not a manifest, and names no operation for one that is not a transaction", () => {
    expect(() => parseManifest(Buffer.from("not a manifest at all"))).toThrow(/not a Lance manifest/);
    expect(transactionOperation(Buffer.from([0xff, 0xff, 0xff]))).toBeNull();
  });
});
