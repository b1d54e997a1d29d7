/**
 * The version list the engine's commit connection is answered with, on a real local store: a version whose manifest
 * goes between the listing and its read (a cleanup deleting old versions meanwhile) is left out, not the list refused.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import type { ObjectStore } from "@/server/storage/object-store";
import { openStore } from "@/server/storage/stores";
import { parseRoot } from "@/server/storage/root";
import { EngineVersions } from "./engine-versions";
import { parseManifest } from "./version-manifest";

const dir = mkdtempSync(path.join(os.tmpdir(), "quiver-engine-versions-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The store, with `meanwhile` run once right after the first listing of the versions: between the listing and the reads. */
function storeWhere(store: ObjectStore, meanwhile: () => void): ObjectStore {
  let ran = false;
  return new Proxy(store, {
    get(target, name, receiver) {
      const member = Reflect.get(target, name, receiver);
      if (typeof member !== "function") return member;
      if (name !== "listInfo" && name !== "list") return member.bind(target);
      return async (...args: unknown[]) => {
        const listed = await member.apply(target, args);
        if (!ran && String(args[0]).includes("_versions")) {
          ran = true;
          meanwhile();
        }
        return listed;
      };
    },
  });
}

const versionsDir = path.join(dir, "t.lance", "_versions");

/** Deletes the manifest of `version`, as a cleanup of old versions does. */
const deleteVersion = (version: number) => () => {
  const file = readdirSync(versionsDir).find((n) => n.endsWith(".manifest") && parseManifest(readFileSync(path.join(versionsDir, n))).version === version);
  rmSync(path.join(versionsDir, file!));
};

describe("the version list of the engine's commit connection", () => {
  it("leaves out a version gone between the listing and its read, and the next listed takes its place", async () => {
    const table = await (await lancedb.connect(dir)).createTable("t", [{ id: 1 }]);
    await table.add([{ id: 2 }]);
    await table.add([{ id: 3 }]);
    await table.add([{ id: 4 }]);
    const root = parseRoot(dir);
    const versions = (store: ObjectStore) => new EngineVersions(root, store, "t.lance");
    const all = await versions(openStore(root, {})).answer("list", {});
    expect((all.body as { versions: Array<{ version: number }> }).versions.map((v) => v.version)).toEqual([4, 3, 2, 1]);

    const listed = await versions(storeWhere(openStore(root, {}), deleteVersion(3))).answer("list", { limit: 2 });
    expect(listed.status).toBe(200);
    expect((listed.body as { versions: Array<{ version: number }> }).versions.map((v) => v.version)).toEqual([4, 2]);
    const ascending = await versions(storeWhere(openStore(root, {}), deleteVersion(2))).answer("list", { descending: false });
    expect((ascending.body as { versions: Array<{ version: number }> }).versions.map((v) => v.version)).toEqual([1, 4]);
    // All of them gone as they were read: the table was dropped meanwhile, as the engine is told of a dropped table.
    const dropped = await versions(storeWhere(openStore(root, {}), () => rmSync(versionsDir, { recursive: true, force: true }))).answer("list", {});
    expect(dropped).toMatchObject({ status: 404, body: { code: 4 } });
  });
});
