/** The store contract, held by every implementation: whole writes, conditional writes that race fairly, listings. */
import { mkdtempSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { storeKinds } from "@/test/stores";
import type { ObjectInfo } from "./object-store";

describe.each(storeKinds())("the $name store", ({ make }) => {
  it("reads what it wrote, with an etag that changes with the content", async () => {
    const store = await make();
    expect(await store.get("a/b.json")).toBeNull();
    expect(await store.head("a/b.json")).toBeNull();
    await store.put("a/b.json", '{"x":1}');
    expect((await store.get("a/b.json"))?.toString()).toBe('{"x":1}');
    const first = await store.head("a/b.json");
    expect(first?.size).toBe(7);
    await store.put("a/b.json", '{"x":22}');
    expect((await store.get("a/b.json"))?.toString()).toBe('{"x":22}');
    const second = await store.head("a/b.json");
    expect(second?.size).toBe(8);
    expect(second?.etag).not.toBe(first?.etag);
  });

  it("writes if absent for exactly one of many racing writers", async () => {
    const store = await make();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.putIfAbsent("race/once", `writer ${i}`)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.findIndex(Boolean);
    expect((await store.get("race/once"))?.toString()).toBe(`writer ${winner}`);
    // What the winner was told was written is what the store says is there.
    expect(results[winner]).toEqual(await store.head("race/once"));
    expect(await store.putIfAbsent("race/once", "late")).toBeNull();
  });

  it("lists keys below a prefix at any depth, and the directories one level down", async () => {
    const store = await make();
    for (const key of ["t.lance/_versions/1.manifest", "t.lance/data/x.lance", "u.lance/_versions/1.manifest", "top.json"]) await store.put(key, "x");
    expect(await store.list("t.lance/")).toEqual(["t.lance/_versions/1.manifest", "t.lance/data/x.lance"]);
    expect(await store.list("t.lance/", 1)).toEqual(["t.lance/_versions/1.manifest"]);
    expect(await store.list("", 3)).toEqual(["t.lance/_versions/1.manifest", "t.lance/data/x.lance", "top.json"]);
    expect(await store.list("t.lance/", 5)).toEqual(["t.lance/_versions/1.manifest", "t.lance/data/x.lance"]);
    await store.put("t.lance/data/x.lance", "longer");
    const listed = await store.listInfo("t.lance/");
    expect([...listed.keys()]).toEqual(["t.lance/_versions/1.manifest", "t.lance/data/x.lance"]);
    // The listing's etags and sizes are the ones a head gives, so either may validate a cache; it says when each was written.
    const facts = (info: ObjectInfo | null | undefined) => info && { etag: info.etag, size: info.size };
    for (const [key, info] of listed) expect(facts(info)).toEqual(facts(await store.head(key)));
    for (const info of listed.values()) expect(Math.abs(info.modified! - Date.now())).toBeLessThan(60_000);
    expect(listed.get("t.lance/data/x.lance")?.size).toBe(6);
    const first = [...(await store.listInfo("t.lance/", 1))];
    expect(first.map(([key, info]) => [key, facts(info)])).toEqual([["t.lance/_versions/1.manifest", facts(await store.head("t.lance/_versions/1.manifest"))]]);
    expect(await store.list("nothing/")).toEqual([]);
    const tables = async () => (await store.listDirectories("")).filter((name) => name.endsWith(".lance")).sort();
    expect(await tables()).toEqual(["t.lance", "u.lance"]);
    expect(await store.listDirectories("t.lance/")).toEqual(expect.arrayContaining(["_versions", "data"]));
    expect(await store.exists("t.lance/")).toBe(true);
    expect(await store.exists("t.lanc/")).toBe(false);
    await store.deletePrefix("t.lance/");
    expect(await store.list("t.lance/")).toEqual([]);
    expect(await store.exists("t.lance/")).toBe(false);
    expect(await tables()).toEqual(["u.lance"]);
    await store.delete("top.json");
    await store.delete("top.json");
    expect(await store.get("top.json")).toBeNull();
  });

  it("refuses keys that could leave the root", async () => {
    const store = await make();
    for (const key of ["../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", "a\\b", "a/b\u0000"]) {
      await expect(store.get(key), key).rejects.toThrow(/not a key inside the data root/);
    }
  });
});

describe("the local store", () => {
  it("lists only plain keys, leaving out the engine's staged files and other programs' names", async () => {
    const store = await storeKinds()[0].make();
    await store.put("t.lance/_versions/1.manifest", "x");
    for (const name of ["t.lance/_versions/2.manifest#1", "t.lance/_versions/odd name", "t.lance/bad dir/x"]) {
      mkdirSync(path.dirname(path.join(store.root.uri, name)), { recursive: true });
      writeFileSync(path.join(store.root.uri, name), "x");
    }
    expect(await store.list("t.lance/")).toEqual(["t.lance/_versions/1.manifest"]);
    expect([...(await store.listInfo("t.lance/")).keys()]).toEqual(["t.lance/_versions/1.manifest"]);
    expect(await store.listDirectories("t.lance/")).toEqual(["_versions"]);
  });

  it("moves a directory in one step, and its listing stamp changes with the entries below it", async () => {
    const store = await storeKinds()[0].make();
    await store.put("a.lance/_versions/1.manifest", "x");
    const before = await store.listingStamp("");
    await new Promise((resolve) => setTimeout(resolve, 20));
    await store.movePrefix("a.lance/", "b.lance/");
    expect(await store.list("")).toEqual(["b.lance/_versions/1.manifest"]);
    expect(await store.listingStamp("")).not.toBe(before);
  });

  it("never follows a symbolic link planted in the root", async () => {
    const outside = mkdtempSync(path.join(os.tmpdir(), "quiver-outside-"));
    mkdirSync(path.join(outside, "_versions"));
    const make = storeKinds().find((k) => k.name === "local")!.make;
    const store = await make();
    symlinkSync(outside, path.join(store.root.uri, "evil.lance"));
    await expect(store.list("evil.lance/")).rejects.toThrow(/symbolic link/);
    await expect(store.put("evil.lance/_versions/x", "x")).rejects.toThrow(/symbolic link/);
    expect(await store.listDirectories("")).toEqual([]);
  });
});
