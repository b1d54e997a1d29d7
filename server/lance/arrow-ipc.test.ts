import { describe, expect, it } from "vitest";
import { Dictionary, Float64, Int32, Int64, Table, tableFromIPC, tableToIPC, vectorFromArray, Utf8 } from "apache-arrow";
import * as flatbuffers from "flatbuffers";
import { Message as FbMessage } from "apache-arrow/fb/message";
import { RecordBatch as FbRecordBatch } from "apache-arrow/fb/record-batch";
import { Schema as FbSchema } from "apache-arrow/fb/schema";
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
    stream.fill(0);
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

  /** The metadata of the encapsulated message at `start`, and where it begins in the stream. */
  const metadataAt = (buf: Buffer, start: number) => ({
    at: start + 8,
    bb: new flatbuffers.ByteBuffer(buf.subarray(start + 8, start + 8 + buf.readInt32LE(start + 4))),
  });

  it("refuses a schema that claims more fields than its bytes hold, instead of decoding until out of memory", () => {
    const plain = new Table({ id: vectorFromArray([1n], new Int64()), x: vectorFromArray([1.5], new Float64()), s: vectorFromArray(["a"], new Utf8()) });
    const buf = Buffer.from(tableToIPC(plain, "stream"));
    const { at, bb } = metadataAt(buf, 0);
    const schema = FbMessage.getRootAsMessage(bb).header(new FbSchema())!;
    const fields = bb.__vector(schema.bb_pos + bb.__offset(schema.bb_pos, 6));
    buf.writeInt32LE(0x7fffffff, at + fields - 4);
    expect(() => toIpcFile(received(buf))).toThrow(ArrowBodyError);
  });

  it("refuses a batch with a buffer outside its body, on which the engine's reader panics", () => {
    const buf = Buffer.from(tableToIPC(table.slice(0, 3).select(["id"]), "stream"));
    const batchStart = 8 + buf.readInt32LE(4);
    const { at, bb } = metadataAt(buf, batchStart);
    const buffer = FbMessage.getRootAsMessage(bb).header(new FbRecordBatch())!.buffers(1)!;
    buf.writeBigInt64LE(1n << 40n, at + buffer.bb_pos + 8);
    expect(() => toIpcFile(received(buf))).toThrow("a buffer lies outside");
  });
});
