import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DiskCache, type EntryHeader } from "./disk-cache.ts";

const MiB = 2 ** 20;
const header = (object: string, size: number): EntryHeader => ({ object, size, headers: { etag: '"e"' } });
const bytesOf = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) % 251));
const failures: string[] = [];
const open = (dir: string, budget: number) => DiskCache.open(dir, budget, (what) => failures.push(what));
const freshDir = () => mkdtempSync(path.join(os.tmpdir(), "quiver-read-cache-"));

function entryFiles(dir: string): string[] {
  const top = path.join(dir, "entries");
  return readdirSync(top).flatMap((shard) => readdirSync(path.join(top, shard)).map((name) => path.join(top, shard, name)));
}

// a file may be renamed or removed between the listing and its stat: it then counts under its other name, or not at all
const onDisk = (dir: string) => entryFiles(dir).reduce((sum, file) => sum + (statSync(file, { throwIfNoEntry: false })?.size ?? 0), 0);

describe("the read cache's disk entries", () => {
  it("answers a range any kept entry holds, and nothing it does not", async () => {
    const cache = await open(freshDir(), 64 * MiB);
    const object = "/account/c/t.lance/data/a.lance";
    const body = bytesOf(1000, 1);
    await cache.keep(object, 5000, header(object, 100_000), body);
    expect((await cache.read(object, 5000, 6000))?.body).toEqual(body);
    expect((await cache.read(object, 5100, 5200))?.body).toEqual(body.subarray(100, 200));
    expect(await cache.read(object, 4999, 5100)).toBeUndefined();
    expect(await cache.read(object, 5900, 6001)).toBeUndefined();
    expect(await cache.read("/account/c/t.lance/data/b.lance", 5000, 5100)).toBeUndefined();
    expect(cache.sizeOf(object)).toBe(100_000);
    cache.close();
  });

  it("never holds more than its budget plus the entry being added, and evicts the least recently used first", async () => {
    const dir = freshDir();
    const budget = 4 * MiB;
    const cache = await open(dir, budget);
    const objects = Array.from({ length: 12 }, (_, i) => `/a/c/t.lance/data/${i}.lance`);
    for (const [i, object] of objects.entries()) {
      await cache.keep(object, 0, header(object, MiB), bytesOf(MiB, i));
      // the first stays in use, so it is never the least recently used
      expect(await cache.read(objects[0], 0, 10)).toBeDefined();
      expect(onDisk(dir)).toBeLessThanOrEqual(budget + MiB + 4096);
      expect(cache.sizeBytes).toBeLessThanOrEqual(budget);
    }
    expect(cache.stats.evictions).toBeGreaterThanOrEqual(8);
    expect(await cache.read(objects[0], 0, MiB)).toBeDefined();
    expect(await cache.read(objects[1], 0, MiB)).toBeUndefined();
    expect(await cache.read(objects[11], 0, MiB)).toBeDefined();
    cache.close();
  });

  it("stays within its budget on disk while many fills are written at once, keeping what fits", async () => {
    const dir = freshDir();
    // four entries of a MiB each, with their headers
    const budget = 4 * MiB + 4096;
    const cache = await open(dir, budget);
    const keep = (name: string, seed: number) => {
      const object = `/a/c/t.lance/data/${name}.lance`;
      return cache.keep(object, 0, header(object, MiB), bytesOf(MiB, seed)).then(() => {
        expect(onDisk(dir)).toBeLessThanOrEqual(budget);
        return object;
      });
    };
    for (let i = 0; i < 4; i++) await keep(`old-${i}`, i);
    const fills = Array.from({ length: 12 }, (_, i) => {
      const fill = keep(`new-${i}`, 10 + i);
      expect(cache.sizeBytes).toBeLessThanOrEqual(budget);
      return fill;
    });
    const kept = await Promise.all(fills);
    expect(onDisk(dir)).toBeLessThanOrEqual(budget);
    // The four older entries made room for the first four fills; the fills under way held the rest of the budget.
    expect(cache.stats.evictions).toBe(4);
    expect(cache.stats.notKept).toBe(8);
    for (const [i, object] of kept.entries()) expect(Boolean(await cache.read(object, 0, MiB))).toBe(i < 4);
    cache.close();
  });

  it("detects an entry damaged on disk or cut short, removes it and answers nothing for it", async () => {
    const dir = freshDir();
    const cache = await open(dir, 64 * MiB);
    const [flipped, cut] = ["/a/c/t.lance/data/f.lance", "/a/c/t.lance/data/g.lance"];
    await cache.keep(flipped, 0, header(flipped, 4096), bytesOf(4096, 3));
    await cache.keep(cut, 0, header(cut, 4096), bytesOf(4096, 4));
    for (const file of entryFiles(dir)) {
      const content = readFileSync(file);
      if (readFileSync(file).includes(Buffer.from("f.lance"))) {
        content[content.length - 100] ^= 0x01;
        writeFileSync(file, content);
      } else writeFileSync(file, content.subarray(0, content.length - 1000));
    }
    // What was kept is also in memory, checked: the damage is found when the entries are next read from disk.
    expect((await cache.read(flipped, 0, 4096))?.body).toEqual(bytesOf(4096, 3));
    cache.close();
    const restarted = await open(dir, 64 * MiB);
    expect(await restarted.read(flipped, 0, 4096)).toBeUndefined();
    expect(await restarted.read(cut, 0, 10)).toBeUndefined();
    expect(restarted.stats.damaged).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(entryFiles(dir)).toEqual([]);
    expect(restarted.sizeBytes).toBe(0);
    restarted.close();
  });

  it("keeps its entries across a restart, and drops the temporary files of fills a crash cut short", async () => {
    const dir = freshDir();
    const first = await open(dir, 64 * MiB);
    const object = "/a/c/t.lance/_indices/1/index.idx";
    await first.keep(object, 0, header(object, 2048), bytesOf(2048, 5));
    const [kept] = entryFiles(dir);
    writeFileSync(`${kept}.123.abcd.tmp`, bytesOf(100, 0));
    // as a SIGKILL leaves it: the owner file of a process that is gone
    writeFileSync(path.join(dir, "owner"), "999999999");
    const second = await open(dir, 64 * MiB);
    expect((await second.read(object, 0, 2048))?.body).toEqual(bytesOf(2048, 5));
    expect(entryFiles(dir)).toEqual([kept]);
    second.close();
  });

  it("refuses a directory another live process owns", async () => {
    const dir = freshDir();
    writeFileSync(path.join(dir, "owner"), String(process.ppid));
    await expect(open(dir, 64 * MiB)).rejects.toThrow(`in use by process ${process.ppid}`);
  });
});
