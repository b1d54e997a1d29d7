import { describe, expect, it } from "vitest";
import { Field, Float64, Int64, List, Struct, Table, TimestampMicrosecond, Utf8, vectorFromArray } from "apache-arrow";
import { parquetMetadataAsync, parquetReadObjects, parquetSchema } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { Compression, parquetBytes } from "@/test/parquet-file";
import { PARQUET_PARSERS, parquetArrowSchema, parquetRowsToBatch } from "./parquet";

const point = new Struct([new Field("x", new Float64(), true), new Field("y", new Float64(), true)]);

function sample() {
  return new Table({
    id: vectorFromArray([1n, 2n, 3n], new Int64()),
    name: vectorFromArray(["a", null, "ccc"], new Utf8()),
    at: vectorFromArray(
      [1_700_000_000_123_456n, 0n, null].map((v) => (v === null ? null : Number(v) / 1000)),
      new TimestampMicrosecond("UTC"),
    ),
    point: vectorFromArray([{ x: 1.5, y: -2 }, null, { x: 0, y: 3.25 }], point),
    tags: vectorFromArray([["p", "q"], [], null], new List(new Field("item", new Utf8(), true))),
    embedding: vectorFromArray(
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      new List(new Field("item", new Float64(), true)),
    ),
  });
}

async function read(bytes: Uint8Array, table?: Parameters<typeof parquetArrowSchema>[1]) {
  const file = { byteLength: bytes.byteLength, slice: (start: number, end?: number) => bytes.slice(start, end).buffer };
  const metadata = await parquetMetadataAsync(file);
  const columns = parquetArrowSchema(parquetSchema(metadata), table);
  const rows = await parquetReadObjects({ file, metadata, compressors, parsers: PARQUET_PARSERS, utf8: false });
  return { columns, batch: parquetRowsToBatch(columns.schema, rows, 0) };
}

describe("Parquet files read into Arrow", () => {
  it("reads snappy and zstd pages, a struct, lists and a microsecond timestamp to the digit", async () => {
    const bytes = parquetBytes(sample(), { name: Compression.ZSTD, tags: Compression.ZSTD });
    const { columns, batch } = await read(bytes);
    expect(columns.problems).toEqual([]);
    expect(columns.schema.fields.map((f) => `${f.name}: ${String(f.type)}`)).toEqual([
      "id: Int64",
      "name: Utf8",
      "at: Timestamp<MICROSECOND, UTC>",
      "point: Struct<{x:Float64, y:Float64}>",
      "tags: List<Utf8>",
      "embedding: List<Float64>",
    ]);
    const got = new Table(batch);
    expect(got.getChild("id")!.toArray()).toEqual(BigInt64Array.from([1n, 2n, 3n]));
    expect(got.getChild("name")!.toArray()).toEqual(["a", null, "ccc"]);
    expect(Array.from(got.getChild("at")!.data[0].values as BigInt64Array).slice(0, 2)).toEqual([1_700_000_000_123_456n, 0n]);
    expect(got.getChild("at")!.get(2)).toBeNull();
    expect(got.getChild("point")!.get(0)!.toJSON()).toEqual({ x: 1.5, y: -2 });
    expect(got.getChild("point")!.get(1)).toBeNull();
    expect(Array.from(got.getChild("tags")!.get(0))).toEqual(["p", "q"]);
    expect(got.getChild("tags")!.get(2)).toBeNull();
  });

  it("shapes a plain list into the table's vector column, and says which row does not fit", async () => {
    const vector = { type: "fixed_size_list", length: 2, fields: [{ name: "item", type: { type: "float" }, nullable: true }] };
    const { columns, batch } = await read(parquetBytes(sample(), {}), [{ name: "embedding", type: vector, nullable: true }]);
    expect(String(columns.schema.fields.find((f) => f.name === "embedding")!.type)).toBe("FixedSizeList[2]<Float32>");
    expect(Array.from(new Table(batch).getChild("embedding")!.get(1))).toEqual([3, 4]);
    const three = { ...vector, length: 3 };
    await expect(read(parquetBytes(sample(), {}), [{ name: "embedding", type: three, nullable: true }])).rejects.toThrow(
      "row 1, column 'embedding' has 2 values; the table's column holds 3 per row",
    );
  });
});
