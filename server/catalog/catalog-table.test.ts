import { describe, expect, it } from "vitest";
import { CatalogIndex } from "./catalog-table";

const row = (object_id: string, object_type: string, location: string | null = null) => ({ object_id, object_type, location, metadata: null });

describe("CatalogIndex.replaceRootDatasets", () => {
  it("adds and removes root-level datasets in order, leaving registered tables alone", () => {
    const index = new CatalogIndex([row("ns", "namespace"), row("ns$t", "table", "ns/t.lance"), row("reg", "table", "reg.lance")], ["b", "reg"]);
    expect(index.sortedTables).toEqual(["b", "ns$t", "reg"]);

    index.replaceRootDatasets(["b", "reg"], ["a", "c"]);

    expect(index.sortedTables).toEqual(["a", "c", "ns$t", "reg"]);
    expect(index.childTables.get("")).toEqual(["a", "c", "reg"]);
    expect(index.tables.get("a")).toMatchObject({ location: "a.lance", registered: false });
    expect(index.tables.get("reg")).toMatchObject({ registered: true });
    expect(index.tables.has("b")).toBe(false);
  });

  it("lists a root-level directory once when its catalog row arrives after it", () => {
    const index = new CatalogIndex([], ["t"]);
    index.addRow(row("t", "table", "t.lance"));
    expect(index.sortedTables).toEqual(["t"]);
    expect(index.childTables.get("")).toEqual(["t"]);
    expect(index.tables.get("t")).toMatchObject({ registered: true });
  });
});
