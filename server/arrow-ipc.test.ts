import { describe, expect, it } from "vitest";
import { Dictionary, Int32, Int64, Table, tableFromIPC, tableToIPC, vectorFromArray, Utf8 } from "apache-arrow";
import { ArrowBodyError, toIpcFile } from "./arrow-ipc";

const table = new Table({
  id: vectorFromArray([1n, 2n, 3n], new Int64()),
  s: vectorFromArray(["a", "b", "c"], new Utf8()),
  d: vectorFromArray(["x", "y", "x"], new Dictionary(new Utf8(), new Int32())),
});

describe("toIpcFile", () => {
  it("re-frames a stream as a file with the same rows", () => {
    const body = toIpcFile(Buffer.from(tableToIPC(table, "stream")));
    expect(body.rows).toBe(3);
    expect(body.batches).toBe(1);
    const back = tableFromIPC(body.file);
    expect(back.numRows).toBe(3);
    expect(back.getChild("d")!.toArray()).toEqual(["x", "y", "x"]);
    expect(body.schema.fields.map((f) => f.name)).toEqual(["id", "s", "d"]);
  });

  it("passes a file through", () => {
    const file = Buffer.from(tableToIPC(table, "file"));
    expect(toIpcFile(file).rows).toBe(3);
  });

  it("accepts a stream with zero batches", () => {
    expect(toIpcFile(Buffer.from(tableToIPC(table.slice(0, 0), "stream"))).rows).toBe(0);
  });

  it.each([
    ["empty", Buffer.alloc(0)],
    ["truncated", Buffer.from(tableToIPC(table, "stream")).subarray(0, 200)],
    ["garbage", Buffer.from("this is not arrow at all, not even close")],
    ["json", Buffer.from('{"a":1}')],
  ])("rejects a %s body", (_, buf) => {
    expect(() => toIpcFile(buf)).toThrow(ArrowBodyError);
  });
});
