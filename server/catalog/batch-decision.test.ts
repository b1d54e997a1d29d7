/**
 * A batch's deciding catalog commit (CatalogTable.decideBatch) is made only as the version right after the one the
 * catalog was checked at: a commit another instance makes between the check and the decision sends the batch back to
 * check again, where it finds what changed. The race is made for certain by a commit handle that lets the other
 * instance commit just before the decision is committed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { Datasets } from "@/server/lance/datasets";
import type { NativeTable } from "@/server/lance/native";
import { engineStorageOptions } from "@/server/storage/read-cache/engine-store";
import { parseRoot } from "@/server/storage/root";
import { openStore } from "@/server/storage/stores";
import type { BatchChanges } from "./batch-holds";
import { Catalog } from "./catalog";
import type { CatalogTable } from "./catalog-table";
import { TableTurns } from "./table-turns";

const dir = mkdtempSync(path.join(os.tmpdir(), "quiver-batch-decision-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A catalog over the root, as one instance has it. */
async function instance() {
  const root = parseRoot(dir);
  const store = openStore(root, {});
  const datasets = new Datasets(root, store, engineStorageOptions(root, {}));
  await datasets.init();
  return { catalog: new Catalog(datasets, store, new TableTurns()), datasets };
}

let ours: Awaited<ReturnType<typeof instance>>;
let theirs: Awaited<ReturnType<typeof instance>>;

beforeAll(async () => {
  ours = await instance();
  theirs = await instance();
});

/** Makes `before` run once, just before our next decision is committed (once the catalog was checked). */
async function beforeNextDecision(before: () => Promise<unknown>) {
  const table: NativeTable = await ours.datasets.catalogCommitHandle();
  const checkoutLatest = table.checkoutLatest.bind(table);
  table.checkoutLatest = async () => {
    table.checkoutLatest = checkoutLatest;
    await before();
    return checkoutLatest();
  };
}

describe("a batch's decision", () => {
  it("made after another instance changed the catalog past its check, checks again and finds the change", async () => {
    await ours.catalog.createNamespace(["ns"], "create", {});
    const declare = await ours.catalog.batchDeclare(["ns", "t"], undefined, {});
    const changes: BatchChanges = { declares: [declare], deregisters: [], deletions: [] };
    // Between our check and our commit, the other instance drops the namespace the batch declares its table in.
    await beforeNextDecision(() => theirs.catalog.dropNamespace(["ns"], "fail", "restrict"));

    expect(await ours.catalog.decideBatch("b1", "committed", changes)).toEqual({ conflict: "the namespace of table 'ns$t' no longer exists" });
    expect(await ours.catalog.batchDecision("b1")).toBeUndefined();
    expect((await theirs.catalog.index()).tables.has("ns$t")).toBe(false);

    // Decided aborted, the batch's row says so to every instance, and a later attempt to commit it finds that.
    expect(await ours.catalog.decideBatch("b1", "aborted", changes)).toEqual({ state: "aborted" });
    expect(await theirs.catalog.batchDecision("b1")).toBe("aborted");
    await theirs.catalog.createNamespace(["ns"], "create", {});
    expect(await theirs.catalog.decideBatch("b1", "committed", changes)).toEqual({ state: "aborted" });
    expect((await ours.catalog.index()).tables.has("ns$t")).toBe(false);
  });

  it("commits its catalog changes with its row, in one commit, and every instance reads it decided", async () => {
    const declare = await ours.catalog.batchDeclare(["ns", "u"], undefined, { owner: "etl" });
    const before = await ours.datasets.catalogVersion();
    expect(await ours.catalog.decideBatch("b2", "committed", { declares: [declare], deregisters: [], deletions: [] })).toEqual({ state: "committed" });
    expect(await ours.datasets.catalogVersion()).toBe(before + 1);
    expect(await theirs.catalog.batchDecision("b2")).toBe("committed");
    expect((await theirs.catalog.resolve(["ns", "u"])).properties).toEqual({ owner: "etl" });
    // Lance's own directory namespace reads the catalog with the batches' rows in it, and lists none of them.
    const lance = await lancedb.connectNamespace("dir", { root: dir });
    expect(await lance.tableNames(["ns"])).toEqual(["u"]);
    expect(await lance.tableNames([])).toEqual([]);
    expect((await lance.listNamespaces([])).namespaces).toEqual(["ns"]);
    await lance.createNamespace(["after_batches"]);
    expect((await ours.catalog.index()).namespaces.has("after_batches")).toBe(true);
    // Another attempt of it finds it decided, and commits nothing.
    const decided = await ours.datasets.catalogVersion();
    expect(await theirs.catalog.decideBatch("b2", "committed", { declares: [declare], deregisters: [], deletions: [] })).toEqual({ state: "committed" });
    expect(await ours.datasets.catalogVersion()).toBe(decided);
  });

  it("rows go once decided longer ago than the idempotency window, in one commit when the catalog is compacted", async () => {
    const table = (ours.catalog as unknown as { catalogTable: CatalogTable }).catalogTable;
    await ours.catalog.index();
    await table.forgetBatchesDecidedBefore(Date.now() - 60_000);
    expect(await theirs.catalog.batchDecision("b2")).toBe("committed");
    await table.forgetBatchesDecidedBefore(Date.now() + 1);
    expect(await theirs.catalog.batchDecision("b1")).toBeUndefined();
    expect(await theirs.catalog.batchDecision("b2")).toBeUndefined();
    expect((await theirs.catalog.resolve(["ns", "u"])).properties).toEqual({ owner: "etl" });
  });
});
