import { describe, expect, it } from "vitest";
import { Field, FixedSizeList, Float32, makeVector, Table, tableFromArrays, vectorFromArray } from "apache-arrow";
import { cellText, readableNumber } from "./cell-format";

describe("the data grid's cell text", () => {
  it("shows doubles readably and keeps every digit for the full value", () => {
    expect(readableNumber(9.450000000000001)).toBe("9.45");
    expect(readableNumber(0.1 + 0.2)).toBe("0.3");
    expect(readableNumber(1e-9 / 3)).toBe("3.33333333333e-10");
    expect(readableNumber(42)).toBe("42");
    expect(cellText(9.450000000000001)).toEqual({ short: "9.45", full: "9.450000000000001" });
    expect(cellText(null)).toEqual({ short: "null", full: "null" });
    expect(cellText(12345678901234567890n)).toEqual({ short: "12345678901234567890", full: "12345678901234567890" });
  });

  it("shows a vector column's value as its dimension and first values", () => {
    const type = new FixedSizeList(128, new Field("item", new Float32()));
    const values = Float32Array.from({ length: 256 }, (_, i) => i / 10);
    const table = new Table({ v: makeVectorOf(type, values) });
    const cell = cellText(table.get(1)!.v);
    expect(cell.short).toBe("[128] 12.8, 12.9, 13, …");
    expect(cell.full.startsWith("[12.8, 12.9, 13, 13.1, ")).toBe(true);
    expect(cell.full.split(", ")).toHaveLength(128);
    expect(cellText([1, 2]).short).toBe("[1, 2]");
  });

  it("cuts long text and bytes, and shows a struct as JSON", () => {
    const long = "x".repeat(500);
    expect(cellText(long)).toEqual({ short: `${"x".repeat(60)}…`, full: long });
    expect(cellText(new Uint8Array(40)).short).toBe(`0x${"0".repeat(32)}… (40 bytes)`);
    const struct = tableFromArrays({ id: [1] });
    expect(cellText(struct.get(0)).full).toBe('{"id":1}');
    expect(cellText(vectorFromArray(["a", "b"])).short).toBe("[a, b]");
  });
});

function makeVectorOf(type: FixedSizeList<Float32>, values: Float32Array) {
  const child = makeVector(values);
  return makeVector({ type, length: values.length / type.listSize, nullCount: 0, child: child.data[0] });
}
