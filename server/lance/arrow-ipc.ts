/**
 * Arrow IPC framing without decoding data. Clients send IPC streams (often with LZ4 or ZSTD compressed buffers,
 * which apache-arrow 18 cannot decode); the Lance engine's native layer reads IPC files and decompresses itself.
 * So a body is only re-framed: its messages are scanned, validated and wrapped with a file footer, and the
 * record data never passes through JavaScript.
 */
import "server-only";
import * as flatbuffers from "flatbuffers";
import { Message as FbMessage } from "apache-arrow/fb/message";
import { MessageHeader } from "apache-arrow/fb/message-header";
import { RecordBatch as FbRecordBatch } from "apache-arrow/fb/record-batch";
import { DictionaryBatch as FbDictionaryBatch } from "apache-arrow/fb/dictionary-batch";
import { Schema as FbSchema } from "apache-arrow/fb/schema";
import { Field as FbField } from "apache-arrow/fb/field";
import { Footer as FbFooter } from "apache-arrow/fb/footer";
import { Footer, FileBlock } from "apache-arrow/ipc/metadata/file";
import { Message } from "apache-arrow/ipc/metadata/message";
import type { Schema } from "apache-arrow";

const MAGIC = Buffer.from("ARROW1");
const CONTINUATION = 0xffffffff;
const METADATA_V5 = 4;

export class ArrowBodyError extends Error {}

interface ScannedMessage {
  kind: "schema" | "dictionary" | "batch";
  start: number;
  metadataLength: number;
  bodyLength: number;
  rows: number;
  metadata: Uint8Array;
}

/** arrow-rs slices each buffer of a batch out of the message body unchecked, and panics when one lies outside it. */
function checkBuffers(batch: FbRecordBatch | null, bodyLength: number, metadataLength: number) {
  if (!batch) throw new ArrowBodyError("Arrow stream is corrupt: a batch message has no batch");
  const count = batch.buffersLength();
  // A buffer entry is a 16-byte struct.
  if (!(count >= 0 && count * 16 <= metadataLength)) throw new ArrowBodyError("Arrow stream is corrupt: a batch lists more buffers than its metadata holds");
  for (let i = 0; i < count; i++) {
    const buffer = batch.buffers(i)!;
    const start = Number(buffer.offset());
    const length = Number(buffer.length());
    if (!(start >= 0 && length >= 0 && start + length <= bodyLength))
      throw new ArrowBodyError("Arrow stream is corrupt: a buffer lies outside its batch's body");
  }
}

/** Reads consecutive encapsulated messages from `offset` until end-of-stream or the end of `buf`. */
function scanMessages(buf: Buffer, offset: number, end = buf.length): { messages: ScannedMessage[]; end: number } {
  const messages: ScannedMessage[] = [];
  let pos = offset;
  while (pos < end) {
    const start = pos;
    if (pos + 4 > end) throw new ArrowBodyError("Arrow stream is truncated inside a message length");
    let length = buf.readInt32LE(pos);
    pos += 4;
    if (length === -1 || buf.readUInt32LE(start) === CONTINUATION) {
      if (pos + 4 > end) throw new ArrowBodyError("Arrow stream is truncated inside a message length");
      length = buf.readInt32LE(pos);
      pos += 4;
    }
    if (length === 0) return { messages, end: pos };
    if (length < 0 || pos + length > end) throw new ArrowBodyError("Arrow stream is truncated or corrupt: a message runs past the end of the body");
    const metadata = buf.subarray(pos, pos + length);
    pos += length;
    let kind: ScannedMessage["kind"];
    let bodyLength: number;
    let rows = 0;
    try {
      const message = FbMessage.getRootAsMessage(new flatbuffers.ByteBuffer(metadata));
      bodyLength = Number(message.bodyLength());
      const header = message.headerType();
      if (header === MessageHeader.Schema) kind = "schema";
      else if (header === MessageHeader.DictionaryBatch) {
        kind = "dictionary";
        checkBuffers(message.header(new FbDictionaryBatch())!.data(), bodyLength, length);
      } else if (header === MessageHeader.RecordBatch) {
        kind = "batch";
        const batch = message.header(new FbRecordBatch());
        checkBuffers(batch, bodyLength, length);
        rows = Number(batch!.length());
      } else throw new ArrowBodyError(`unsupported Arrow message type ${header}`);
    } catch (err) {
      if (err instanceof ArrowBodyError) throw err;
      throw new ArrowBodyError("Arrow stream is corrupt: a message header cannot be read");
    }
    if (!Number.isFinite(bodyLength) || bodyLength < 0 || pos + bodyLength > end) {
      throw new ArrowBodyError("Arrow stream is truncated: a record batch body runs past the end of the body");
    }
    if (rows < 0) throw new ArrowBodyError("Arrow stream is corrupt: negative row count");
    messages.push({ kind, start, metadataLength: pos - start, bodyLength, rows, metadata });
    pos += bodyLength;
  }
  return { messages, end: pos };
}

/**
 * apache-arrow decodes a schema trusting the lengths of its flatbuffer vectors, so a corrupt length (0x7fffffff
 * fields, say) has it loop and allocate until the process runs out of memory. Each entry of those vectors takes at
 * least four bytes of the metadata, so a schema that claims more entries than its bytes can hold is corrupt.
 */
function checkSchemaSize(schema: FbSchema | null, bytes: number) {
  if (!schema) throw new ArrowBodyError("Arrow metadata has no schema");
  let budget = bytes / 4;
  const take = (n: number) => {
    budget -= n;
    if (!(n >= 0) || budget < 0) throw new ArrowBodyError("Arrow metadata is corrupt: it claims more entries than it has bytes");
  };
  const visit = (field: FbField | null) => {
    if (!field) return;
    take(1 + field.childrenLength() + field.customMetadataLength());
    for (let i = 0; i < field.childrenLength(); i++) visit(field.children(i));
  };
  take(schema.fieldsLength() + schema.customMetadataLength() + schema.featuresLength());
  for (let i = 0; i < schema.fieldsLength(); i++) visit(schema.fields(i));
}

function decodeSchema(message: ScannedMessage): Schema {
  try {
    checkSchemaSize(FbMessage.getRootAsMessage(new flatbuffers.ByteBuffer(message.metadata)).header(new FbSchema()), message.metadata.length);
    return Message.decode(message.metadata).header() as Schema;
  } catch {
    throw new ArrowBodyError("Arrow stream is corrupt: its schema cannot be read");
  }
}

function isFile(buf: Buffer) {
  return buf.length >= 12 && buf.subarray(0, 6).equals(MAGIC) && buf.subarray(buf.length - 6).equals(MAGIC);
}

/** Reads an IPC file through its footer (writers may pad the file's start, so it cannot be scanned from byte 8). */
function scanFile(buf: Buffer): { schema: Schema; messages: ScannedMessage[] } {
  const footerLength = buf.readInt32LE(buf.length - 10);
  const footerStart = buf.length - 10 - footerLength;
  if (footerLength <= 0 || footerStart < 8) throw new ArrowBodyError("Arrow file is corrupt: bad footer length");
  let footer: Footer;
  try {
    const bytes = buf.subarray(footerStart, footerStart + footerLength);
    const fb = FbFooter.getRootAsFooter(new flatbuffers.ByteBuffer(bytes));
    checkSchemaSize(fb.schema(), footerLength);
    // A block is a 24-byte struct.
    if (!(fb.recordBatchesLength() + fb.dictionariesLength() <= footerLength / 24))
      throw new ArrowBodyError("Arrow file footer lists more blocks than it holds");
    footer = Footer.decode(bytes);
  } catch {
    throw new ArrowBodyError("Arrow file is corrupt: its footer cannot be read");
  }
  const messages: ScannedMessage[] = [];
  for (const block of [...footer.dictionaryBatches(), ...footer.recordBatches()]) {
    const start = Number(block.offset);
    const end = start + block.metaDataLength + Number(block.bodyLength);
    if (start < 8 || end > footerStart) throw new ArrowBodyError("Arrow file is corrupt: a block lies outside the file");
    const [message] = scanMessages(buf, start, end).messages;
    if (!message) throw new ArrowBodyError("Arrow file is corrupt: an empty block");
    messages.push(message);
  }
  return { schema: footer.schema, messages };
}

export interface ArrowBody {
  /** The same data as an Arrow IPC file, which is what the engine reads. */
  file: Buffer;
  schema: Schema;
  rows: number;
  batches: number;
  /** Dictionary batches, whose ids are only meaningful within their own body. */
  dictionaries: number;
}

/**
 * Room kept around a received body so that a stream can become a file where it lies: the file's 8-byte header
 * before it, and the end-of-stream marker and footer after it (24 bytes per batch, plus the schema).
 */
export const FILE_ROOM = { before: 8, after: 64 * 1024 };

/** A body as received: `length` bytes at `start` of `whole`, which may hold room around them (FILE_ROOM). */
export interface ReceivedBody {
  whole: Buffer;
  start: number;
  length: number;
}

export const received = (body: Buffer): ReceivedBody => ({ whole: body, start: 0, length: body.length });

/** Accepts an Arrow IPC stream (or file) body and returns it framed as an IPC file. */
export function toIpcFile(input: ReceivedBody): ArrowBody {
  const body = input.whole.subarray(input.start, input.start + input.length);
  if (body.length === 0) throw new ArrowBodyError("the request body is empty; an Arrow IPC stream is required");
  if (isFile(body)) {
    const { schema, messages } = scanFile(body);
    const batches = messages.filter((m) => m.kind === "batch");
    return { file: body, schema, rows: batches.reduce((n, m) => n + m.rows, 0), batches: batches.length, dictionaries: messages.length - batches.length };
  }
  const { messages, end } = scanMessages(body, 0, body.length);
  if (messages.length === 0 || messages[0].kind !== "schema") {
    throw new ArrowBodyError("the body is not an Arrow IPC stream: it does not start with a schema message");
  }
  if (end < body.length && body.subarray(end).some((b) => b !== 0)) {
    throw new ArrowBodyError("unexpected bytes after the end of the Arrow stream");
  }
  if (messages.slice(1).some((m) => m.kind === "schema")) throw new ArrowBodyError("Arrow stream has more than one schema");
  const schema = decodeSchema(messages[0]);
  const batches = messages.filter((m) => m.kind === "batch");
  const file = frameInPlace(input, schema, messages, end) ?? assembleFile(schema, [{ buf: body, messages: messages.slice(1) }]);
  return { file, schema, rows: batches.reduce((n, m) => n + m.rows, 0), batches: batches.length, dictionaries: messages.length - 1 - batches.length };
}

/**
 * An IPC file is the stream itself between a header and a footer. When the body was received with room around
 * it, the header and footer are written into that room and the stream's bytes are never copied.
 */
function frameInPlace(input: ReceivedBody, schema: Schema, messages: ScannedMessage[], streamEnd: number): Buffer | null {
  if (input.start < FILE_ROOM.before) return null;
  const last = messages[messages.length - 1];
  const dataEnd = last.start + last.metadataLength + last.bodyLength;
  const hasEos = streamEnd > dataEnd;
  const records: FileBlock[] = [];
  const dictionaries: FileBlock[] = [];
  for (const m of messages.slice(1))
    (m.kind === "batch" ? records : dictionaries).push(new FileBlock(m.metadataLength, m.bodyLength, FILE_ROOM.before + m.start));
  const footer = Footer.encode(new Footer(schema, METADATA_V5, records, dictionaries));
  const footerAt = input.start + (hasEos ? streamEnd : dataEnd + 8);
  const fileEnd = footerAt + footer.length + 4 + MAGIC.length;
  if (fileEnd > input.whole.length) return null;
  const whole = input.whole;
  const fileStart = input.start - FILE_ROOM.before;
  whole.write("ARROW1\0\0", fileStart, "latin1");
  if (!hasEos) whole.writeBigUInt64LE(0xffffffffn, input.start + dataEnd);
  whole.set(footer, footerAt);
  whole.writeInt32LE(footer.length, footerAt + footer.length);
  MAGIC.copy(whole, footerAt + footer.length + 4);
  return whole.subarray(fileStart, fileEnd);
}

/**
 * Writes an IPC file: the schema, then the given dictionary and record batch messages copied verbatim,
 * then a footer that indexes them.
 */
function assembleFile(schema: Schema, sources: Array<{ buf: Buffer; messages: ScannedMessage[] }>): Buffer {
  const schemaMessage = Message.encode(Message.from(schema));
  const parts: Buffer[] = [Buffer.from("ARROW1\0\0")];
  let offset = 8;
  const push = (b: Buffer) => {
    parts.push(b);
    offset += b.length;
  };
  push(framed(schemaMessage));
  const records: FileBlock[] = [];
  const dictionaries: FileBlock[] = [];
  for (const { buf, messages } of sources) {
    for (const m of messages) {
      if (m.kind === "schema") continue;
      const block = new FileBlock(m.metadataLength, m.bodyLength, offset);
      (m.kind === "batch" ? records : dictionaries).push(block);
      push(buf.subarray(m.start, m.start + m.metadataLength + m.bodyLength));
    }
  }
  push(Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]));
  const footer = Buffer.from(Footer.encode(new Footer(schema, METADATA_V5, records, dictionaries)));
  const length = Buffer.alloc(4);
  length.writeInt32LE(footer.length);
  parts.push(footer, length, MAGIC);
  return Buffer.concat(parts);
}

function framed(metadata: Uint8Array): Buffer {
  const padded = Math.ceil((metadata.length + 8) / 8) * 8 - 8;
  const out = Buffer.alloc(8 + padded);
  out.writeUInt32LE(CONTINUATION, 0);
  out.writeInt32LE(padded, 4);
  out.set(metadata, 8);
  return out;
}

/** Joins the IPC files the engine yields per batch (and a schema-only file) into one IPC file. */
export function joinIpcFiles(schemaFile: Buffer, batchFiles: Buffer[]): Buffer {
  return assembleFile(
    scanFile(schemaFile).schema,
    batchFiles.map((buf) => ({ buf, messages: scanFile(buf).messages })),
  );
}
