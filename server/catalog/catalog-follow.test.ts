/**
 * One instance follows another's catalog commits version by version: after inserts, namespaces and a compaction
 * its index holds what a whole read holds, without reading the catalog whole; after changes it cannot follow (a
 * drop elsewhere, a property update), it reads it whole and is right again. Two Catalogs on one root stand for two
 * instances.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "./catalog";
import { TableTurns } from "./table-turns";
import { Datasets } from "@/server/lance/datasets";
import { openStore } from "@/server/storage/stores";
import type { CatalogIndex } from "./catalog-table";
import { metrics } from "@/server/metrics";
import { parseRoot } from "@/server/storage/root";

const dir = mkdtempSync(path.join(os.tmpdir(), "quiver-follow-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let writer: Catalog;
let writerDatasets: Datasets;
let reader: Catalog;

/** A catalog of its own on the root, as another instance has. */
async function instance() {
  const root = parseRoot(dir);
  const store = openStore(root, {});
  const datasets = new Datasets(root, store, {});
  await datasets.init();
  return { catalog: new Catalog(datasets, store, new TableTurns()), datasets };
}

/** What an index says, comparable between two indexes. */
const contents = (index: CatalogIndex) => ({
  namespaces: [...index.namespaces.values()].map((n) => [n.objectId, n.properties]).sort(),
  tables: index.sortedTables.map((id) => {
    const t = index.tables.get(id)!;
    return [id, t.location, t.properties, t.registered];
  }),
  children: [...index.childTables.entries()].sort(),
  deregistered: [...index.deregistered].sort(),
});

const lookups = async (result: "hit" | "miss") => {
  const values = (await metrics.cacheLookups.get()).values;
  return values.find((v) => v.labels.cache === "catalog_changes" && v.labels.result === result)?.value ?? 0;
};

/** The reader's index, checked against a whole read by a third instance. */
async function expectFollowed() {
  const followed = await reader.index();
  const fresh = await instance();
  expect(contents(followed)).toEqual(contents(await fresh.catalog.index()));
}

beforeAll(async () => {
  ({ catalog: writer, datasets: writerDatasets } = await instance());
  reader = (await instance()).catalog;
  await reader.index();
});

describe("an instance following another's catalog commits", () => {
  it("follows namespaces, declares and a compaction without reading the catalog whole", async () => {
    const misses = await lookups("miss");
    const hits = await lookups("hit");
    await writer.createNamespace(["a"], "create", { owner: "x" });
    await expectFollowed();
    for (let i = 0; i < 30; i++) {
      await writer.declareTable(["a", `t${i}`], undefined, { n: String(i) });
      if (i % 7 === 0) await expectFollowed();
    }
    await writer.declareTable(["root1"], undefined, {});
    await expectFollowed();
    // A compaction rewrites the catalog's fragments; the rows stay what they were.
    await (await writerDatasets.catalogTable()).optimize(Date.now() - 3_600_000);
    await writer.declareTable(["a", "after"], undefined, {});
    await expectFollowed();
    expect(await lookups("miss")).toBe(misses);
    expect(await lookups("hit")).toBeGreaterThan(hits);
  });

  it("reads the catalog whole after changes it cannot follow, and is right", async () => {
    const misses = await lookups("miss");
    await writer.dropTable(["a", "t3"]);
    await expectFollowed();
    await writer.updateTableProperties(["a", "t4"], { n: "changed" }, []);
    await expectFollowed();
    expect((await reader.index()).tables.get("a$t4")?.properties).toEqual({ n: "changed" });
    expect(await lookups("miss")).toBeGreaterThan(misses);
  });
});
