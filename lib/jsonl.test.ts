import { describe, expect, it } from "vitest";
import { Table } from "apache-arrow";
import { inferJsonColumns, jsonLinesToBatch } from "./jsonl";

const lines = [
  '{"id": 1, "name": "a", "score": 1, "tags": ["x"], "where": {"lat": 1.5, "ok": true}, "embedding": [1, 2, 3]}',
  '{"id": 2, "name": null, "score": 2.5, "tags": [], "where": null, "embedding": [4, 5, 6]}',
  '{"id": 3, "score": 3, "tags": ["y", "z"], "where": {"lat": -2}, "embedding": [7, 8, 9]}',
];

describe("JSON Lines read into Arrow", () => {
  it("infers a declared table's columns from the first lines", () => {
    const inferred = inferJsonColumns(lines.map((l) => JSON.parse(l) as unknown));
    expect(inferred.problems).toEqual([]);
    expect(inferred.fields.map((f) => [f.name, f.type.type])).toEqual([
      ["id", "int64"],
      ["name", "string"],
      ["score", "double"],
      ["tags", "list"],
      ["where", "struct"],
      ["embedding", "fixed_size_list"],
    ]);
    expect(inferred.notes).toEqual(["column 'embedding' holds 3 numbers in every line: written as a vector of 3 floats"]);
    expect(inferJsonColumns([{ a: 1 }, { a: "one" }]).problems).toEqual(["column 'a' holds integer and text values in the lines read"]);
  });

  it("converts every line, and leaves out with a reason the lines that are not JSON, have a stray key, or a value that does not fit", () => {
    const { fields } = inferJsonColumns(lines.map((l) => JSON.parse(l) as unknown));
    const more = [
      ...lines,
      "",
      "{not json",
      '{"id": 4, "colour": "red"}',
      '{"id": 5.5}',
      '{"id": 6, "embedding": [1, 2]}',
      '{"id": 7, "where": {"lat": "north"}}',
      "[1, 2]",
    ];
    const { batch, bad, good } = jsonLinesToBatch(more, fields, 1, (key) => `no column '${key}'`);
    expect(good).toBe(3);
    expect(bad.map((b) => [b.line, b.column, b.reason])).toEqual([
      [5, "", expect.stringContaining("not JSON")],
      [6, "colour", "no column 'colour'"],
      [7, "id", "id: '5.5' is not an integer"],
      [8, "embedding", "embedding has 2 values; the column holds 3"],
      [9, "where", "where.lat: 'north' is not a number"],
      [10, "", "not a JSON object"],
    ]);
    const rows = new Table(batch).toArray().map((r) => r.toJSON());
    expect(rows[0].id).toBe(1n);
    expect(rows[1].name).toBeNull();
    expect(rows[1].score).toBe(2.5);
    expect(Array.from(rows[2].tags as Iterable<string>)).toEqual(["y", "z"]);
    expect((rows[0].where as { toJSON(): unknown }).toJSON()).toEqual({ lat: 1.5, ok: true });
    expect((rows[2].where as { toJSON(): unknown }).toJSON()).toEqual({ lat: -2, ok: null });
    expect(Array.from(rows[2].embedding as Iterable<number>)).toEqual([7, 8, 9]);
  });

  it("fills a table's own types: integers of any width, timestamps from ISO text to the microsecond", () => {
    const fields = [
      { name: "n", type: { type: "int16" }, nullable: false },
      { name: "at", type: { type: "timestamp:us:UTC" }, nullable: true },
    ];
    const { batch, bad } = jsonLinesToBatch(['{"n": 7, "at": "2024-01-02T03:04:05.123456Z"}', '{"n": 70000}', '{"at": null}'], fields, 1, String);
    expect(bad.map((b) => b.reason)).toEqual(["n: 70000 does not fit int16", "n is required"]);
    expect(batch.getChild("n")!.get(0)).toBe(7);
    expect(Array.from(batch.getChild("at")!.data[0].values as BigInt64Array).slice(0, 1)).toEqual([1704164645123456n]);
  });
});
