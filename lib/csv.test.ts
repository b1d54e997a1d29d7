import { describe, expect, it } from "vitest";
import { tableFromIPC, tableToIPC, Table } from "apache-arrow";
import { convertCell, inferColumns, mapColumns, rowsToBatch } from "./csv";

describe("CSV type inference", () => {
  it("infers the narrowest type per column and nullability", () => {
    const header = ["id", "price", "ok", "day", "at", "name", "sparse"];
    const sample = [
      ["1", "2.5", "true", "2024-01-02", "2024-01-02T03:04:05Z", "a", ""],
      ["2", "3", "false", "2024-02-03", "2024-01-02 03:04:05.123", "b", "7"],
      ["-3", "1e3", "yes", "2024-03-04", "2024-01-02T03:04", "c", ""],
    ];
    expect(inferColumns(header, sample).map((c) => [c.name, c.type, c.nullable])).toEqual([
      ["id", "int64", false],
      ["price", "double", false],
      ["ok", "bool", false],
      ["day", "date32:day", false],
      ["at", "timestamp:us:-", false],
      ["name", "string", false],
      ["sparse", "int64", true],
    ]);
  });

  it("falls back to string for mixed values and to double for integers beyond int64", () => {
    expect(inferColumns(["x"], [["1"], ["two"]])[0].type).toBe("string");
    expect(inferColumns(["x"], [["99999999999999999999"]])[0].type).toBe("double");
  });
});

describe("conversion", () => {
  it("converts cells to the target type or explains why not", () => {
    expect(convertCell("12", { name: "a", type: "int32", nullable: false })).toEqual({ ok: true, value: 12 });
    expect(convertCell("12", { name: "a", type: "int64", nullable: false })).toEqual({ ok: true, value: 12n });
    expect(convertCell("300", { name: "a", type: "int8", nullable: false })).toMatchObject({ ok: false });
    expect(convertCell("x", { name: "a", type: "double", nullable: false })).toMatchObject({ ok: false, reason: "'x' is not a number" });
    expect(convertCell("", { name: "a", type: "double", nullable: false })).toMatchObject({ ok: false, reason: "a is required" });
    expect(convertCell("", { name: "a", type: "double", nullable: true })).toEqual({ ok: true, value: null });
    expect(convertCell("2024-01-02T00:00:01.5Z", { name: "t", type: "timestamp:us:UTC", nullable: false })).toEqual({ ok: true, value: 1704153601500000n });
  });

  it("maps columns onto a table's schema and builds a batch without the bad rows", () => {
    const schema = {
      fields: [
        { name: "id", type: { type: "int64" }, nullable: false },
        { name: "score", type: { type: "double" }, nullable: true },
        { name: "label", type: { type: "string" }, nullable: true },
      ],
    };
    const mapped = mapColumns(["ID", "label", "score"], schema);
    expect(mapped.problems).toEqual([]);
    const { batch, bad, good } = rowsToBatch(
      [
        ["1", "a", "1.5"],
        ["oops", "b", "2"],
        ["3", "", "x"],
        ["4", "d", ""],
      ],
      mapped.columns,
      mapped.indexes,
      2,
    );
    expect(good).toBe(2);
    expect(bad).toEqual([
      { line: 3, column: "id", value: "oops", reason: "'oops' is not an integer" },
      { line: 4, column: "score", value: "x", reason: "'x' is not a number" },
    ]);
    const table = tableFromIPC(tableToIPC(new Table([batch]), "stream"));
    expect(table.toArray().map((r) => r.toJSON())).toEqual([
      { id: 1n, score: 1.5, label: "a" },
      { id: 4n, score: null, label: "d" },
    ]);
    // Timestamps keep their microseconds (apache-arrow's own builders take milliseconds and refuse a BigInt).
    const stamped = rowsToBatch([["2024-01-02T03:04:05.123456Z"], [""]], [{ name: "at", type: "timestamp:us:-", nullable: true }], [0], 2);
    expect(stamped.bad).toEqual([]);
    expect(Array.from(stamped.batch.getChildAt(0)!.data[0].values as BigInt64Array).slice(0, 2)).toEqual([1704164645123456n, 0n]);
    expect(stamped.batch.getChildAt(0)!.get(1)).toBeNull();
    expect(mapColumns(["id", "extra"], schema).problems).toEqual(["the file's column 'extra' is not in the table"]);
    expect(mapColumns(["score"], schema).problems).toEqual(["the table's required column 'id' is not in the file"]);
  });
});
