import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { parseManifest } from "./version-manifest";
import { transactionOperation } from "./version-operations";
import { transactionProperties, withTransactionProperties } from "./transaction-properties";

const dir = mkdtempSync(path.join(os.tmpdir(), "quiver-properties-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const versionsDir = path.join(dir, "t.lance", "_versions");
const newestManifest = () => {
  // V2 names count down: the newest version has the smallest name.
  const name = readdirSync(versionsDir)
    .filter((n) => n.endsWith(".manifest"))
    .sort()[0];
  return path.join(versionsDir, name);
};

describe("a version's transaction properties", () => {
  it("are added to a manifest the engine wrote, and the engine reads the table as before", async () => {
    const table = await (await lancedb.connect(dir)).createTable("t", [{ id: 1, s: "a" }]);
    await table.createIndex("id", { config: lancedb.Index.btree() });
    await table.add([{ id: 2, s: "b" }]);
    const file = newestManifest();
    const before = readFileSync(file);
    expect(transactionProperties(before)).toEqual({});
    const after = withTransactionProperties(before, { "quiver.requests": "k1 k2", who: "loader" });
    expect(transactionProperties(after)).toEqual({ "quiver.requests": "k1 k2", who: "loader" });
    // Given again, a key takes the later value; the others stay.
    expect(transactionProperties(withTransactionProperties(after, { who: "someone else" }))).toEqual({ "quiver.requests": "k1 k2", who: "someone else" });
    // The version is what it was: the same fragments, counts, index and operation.
    const [was, is] = [parseManifest(before), parseManifest(after)];
    expect(is.version).toBe(was.version);
    expect(is.metadata).toEqual(was.metadata);
    expect(is.files).toEqual(was.files);
    writeFileSync(file, after);
    const reopened = await (await lancedb.connect(dir)).openTable("t");
    expect(await reopened.countRows()).toBe(2);
    expect(await reopened.query().where("id = 2").toArray()).toHaveLength(1);
    expect((await reopened.listIndices()).map((i) => i.name)).toEqual(["id_idx"]);
    // The writer's own handle, which staged the bytes before them, reads on and commits on top.
    await table.add([{ id: 3, s: "c" }]);
    expect(await table.countRows()).toBe(3);
    expect(transactionOperation(readFileSync(path.join(dir, "t.lance", "_transactions", parseManifest(after).transactionFile!)))).toBe("Append");
  });

  it("refuse a file that is not a manifest", () => {
    expect(() => withTransactionProperties(Buffer.from("not a manifest at all"), { a: "b" })).toThrow();
  });
});
