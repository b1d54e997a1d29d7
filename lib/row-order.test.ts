import { describe, expect, it } from "vitest";
import { defaultRowOrder, PRIMARY_KEY_METADATA } from "./row-order";

const field = (name: string, type: string, metadata?: Record<string, string>) => ({ name, type: { type }, nullable: true, metadata });

describe("defaultRowOrder", () => {
  it("orders by the declared primary key before a column named id", () => {
    const fields = [field("id", "int64"), field("sku", "string", { [PRIMARY_KEY_METADATA]: "true" })];
    expect(defaultRowOrder(fields, 10)).toEqual({ column: "sku", ascending: true, reason: "primary key" });
  });
  it("falls back to a column named id, whatever its case, when it can be ordered", () => {
    expect(defaultRowOrder([field("name", "string"), field("ID", "int32")], 10)).toEqual({ column: "ID", ascending: true, reason: "id column" });
    expect(defaultRowOrder([field("id", "fixed_size_list")], 10)).toBeUndefined();
  });
  it("keeps storage order without a key, and for a table too large to sort for every page", () => {
    expect(defaultRowOrder([field("name", "string")], 10)).toBeUndefined();
    expect(defaultRowOrder([field("id", "int64")], 1_000_001)).toBeUndefined();
    expect(defaultRowOrder([field("id", "int64")], undefined)).toBeUndefined();
  });
});
