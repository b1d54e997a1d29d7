/**
 * Writes an Arrow IPC stream whose record batch buffers are ZSTD-compressed (apache-arrow 18 writes none),
 * by re-encoding each batch: every buffer becomes its uncompressed length (int64) followed by its ZSTD frame.
 */
import * as flatbuffers from "flatbuffers";
import { compress, init } from "@bokuweb/zstd-wasm";
import { tableToIPC, type Table } from "apache-arrow";
import { Message } from "apache-arrow/fb/message";
import { MessageHeader } from "apache-arrow/fb/message-header";
import { RecordBatch } from "apache-arrow/fb/record-batch";
import { BodyCompression } from "apache-arrow/fb/body-compression";
import { CompressionType } from "apache-arrow/fb/compression-type";
import { BodyCompressionMethod } from "apache-arrow/fb/body-compression-method";
import { FieldNode } from "apache-arrow/fb/field-node";
import { Buffer as FbBuffer } from "apache-arrow/fb/buffer";
import { MetadataVersion } from "apache-arrow/fb/metadata-version";

const pad8 = (n: number) => Math.ceil(n / 8) * 8;

function frame(metadata: Uint8Array, body: Buffer): Buffer {
  const length = pad8(metadata.length);
  const head = Buffer.alloc(8 + length);
  head.writeUInt32LE(0xffffffff, 0);
  head.writeInt32LE(length, 4);
  head.set(metadata, 8);
  return Buffer.concat([head, body]);
}

export async function zstdStream(table: Table): Promise<Buffer> {
  await init();
  const input = Buffer.from(tableToIPC(table, "stream"));
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < input.length) {
    const start = pos;
    pos += 4;
    const length = input.readInt32LE(pos);
    pos += 4;
    if (length === 0) {
      out.push(input.subarray(start, pos));
      break;
    }
    const meta = input.subarray(pos, pos + length);
    pos += length;
    const message = Message.getRootAsMessage(new flatbuffers.ByteBuffer(meta));
    const bodyLength = Number(message.bodyLength());
    const body = input.subarray(pos, pos + bodyLength);
    pos += bodyLength;
    if (message.headerType() !== MessageHeader.RecordBatch) {
      out.push(input.subarray(start, pos));
      continue;
    }
    const batch = message.header(new RecordBatch()) as RecordBatch;
    const parts: Buffer[] = [];
    const spans: Array<[number, number]> = [];
    let offset = 0;
    for (let i = 0; i < batch.buffersLength(); i++) {
      const b = batch.buffers(i)!;
      const raw = body.subarray(Number(b.offset()), Number(b.offset()) + Number(b.length()));
      let data = Buffer.alloc(0);
      if (raw.length > 0) {
        const prefix = Buffer.alloc(8);
        prefix.writeBigInt64LE(BigInt(raw.length));
        data = Buffer.concat([prefix, Buffer.from(compress(raw, 3))]);
      }
      const padded = Buffer.concat([data, Buffer.alloc(pad8(data.length) - data.length)]);
      spans.push([offset, data.length]);
      parts.push(padded);
      offset += padded.length;
    }
    const builder = new flatbuffers.Builder(1024);
    RecordBatch.startNodesVector(builder, batch.nodesLength());
    for (let i = batch.nodesLength() - 1; i >= 0; i--) {
      const n = batch.nodes(i)!;
      FieldNode.createFieldNode(builder, n.length(), n.nullCount());
    }
    const nodes = builder.endVector();
    RecordBatch.startBuffersVector(builder, spans.length);
    for (let i = spans.length - 1; i >= 0; i--) FbBuffer.createBuffer(builder, BigInt(spans[i][0]), BigInt(spans[i][1]));
    const buffers = builder.endVector();
    const compression = BodyCompression.createBodyCompression(builder, CompressionType.ZSTD, BodyCompressionMethod.BUFFER);
    RecordBatch.startRecordBatch(builder);
    RecordBatch.addLength(builder, batch.length());
    RecordBatch.addNodes(builder, nodes);
    RecordBatch.addBuffers(builder, buffers);
    RecordBatch.addCompression(builder, compression);
    const header = RecordBatch.endRecordBatch(builder);
    builder.finish(Message.createMessage(builder, MetadataVersion.V5, MessageHeader.RecordBatch, header, BigInt(offset), 0));
    out.push(frame(builder.asUint8Array(), Buffer.concat(parts)));
  }
  return Buffer.concat(out);
}
