import { describe, expect, it } from "vitest";
import { Dictionary, Int32, Int64, Table, tableFromIPC, tableToIPC, vectorFromArray, Utf8 } from "apache-arrow";
import { ArrowBodyError, FILE_ROOM, received, toIpcFile } from "./arrow-ipc";

const table = new Table({
  id: vectorFromArray([1n, 2n, 3n], new Int64()),
  s: vectorFromArray(["a", "b", "c"], new Utf8()),
  d: vectorFromArray(["x", "y", "x"], new Dictionary(new Utf8(), new Int32())),
});

describe("toIpcFile", () => {
  it("re-frames a stream as a file with the same rows", () => {
    const body = toIpcFile(received(Buffer.from(tableToIPC(table, "stream"))));
    expect(body.rows).toBe(3);
    expect(body.batches).toBe(1);
    const back = tableFromIPC(body.file);
    expect(back.numRows).toBe(3);
    expect(back.getChild("d")!.toArray()).toEqual(["x", "y", "x"]);
    expect(body.schema.fields.map((f) => f.name)).toEqual(["id", "s", "d"]);
  });

  it.each([
    ["with its end-of-stream marker", (b: Buffer) => b],
    ["without one", (b: Buffer) => b.subarray(0, b.length - 8)],
  ])("frames a stream %s in the room around it, without copying it", (_, trim) => {
    const stream = trim(Buffer.from(tableToIPC(table, "stream")));
    const whole = Buffer.alloc(FILE_ROOM.before + stream.length + FILE_ROOM.after, 0xaa);
    stream.copy(whole, FILE_ROOM.before);
    const body = toIpcFile({ whole, start: FILE_ROOM.before, length: stream.length });
    expect(body.file.buffer).toBe(whole.buffer);
    expect(body.file.byteOffset).toBe(whole.byteOffset);
    const back = tableFromIPC(body.file);
    expect(back.numRows).toBe(3);
    expect(back.getChild("d")!.toArray()).toEqual(["x", "y", "x"]);
    expect(back.getChild("id")!.toArray()).toEqual(new BigInt64Array([1n, 2n, 3n]));
  });

  it("copies a stream that came without room", () => {
    const stream = Buffer.from(tableToIPC(table, "stream"));
    const body = toIpcFile(received(stream));
    expect(body.file.buffer).not.toBe(stream.buffer);
    expect(tableFromIPC(body.file).numRows).toBe(3);
  });

  it("passes a file through", () => {
    const file = Buffer.from(tableToIPC(table, "file"));
    expect(toIpcFile(received(file)).rows).toBe(3);
  });

  it("accepts a stream with zero batches", () => {
    expect(toIpcFile(received(Buffer.from(tableToIPC(table.slice(0, 0), "stream")))).rows).toBe(0);
  });

  it.each([
    ["empty", Buffer.alloc(0)],
    ["truncated", Buffer.from(tableToIPC(table, "stream")).subarray(0, 200)],
    ["garbage", Buffer.from("this is not arrow at all, not even close")],
    ["json", Buffer.from('{"a":1}')],
  ])("rejects a %s body", (_, buf) => {
    expect(() => toIpcFile(received(buf))).toThrow(ArrowBodyError);
  });
});
