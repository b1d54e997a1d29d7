/**
 * An Arrow IPC stream built a batch at a time in the browser: each batch framed alone, the schema kept only with the
 * first, and the end-of-stream marker last. The parts joined in a Blob are one stream the server reads.
 */
import { Table, tableToIPC, type RecordBatch } from "apache-arrow";
import type { BadRow } from "./csv";

const END_OF_STREAM = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** Bytes of a one-batch IPC stream without its end-of-stream marker, and without its schema after the first. */
function streamPart(batch: RecordBatch, first: boolean): Uint8Array {
  const bytes = tableToIPC(new Table([batch]), "stream");
  const end = bytes.length - END_OF_STREAM.length;
  if (first) return bytes.slice(0, end);
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const schemaLength = 8 + view.getInt32(4, true);
  return bytes.slice(schemaLength, end);
}

/** Bad rows a worker reports in full; the rest are counted. */
const MAX_REPORTED_BAD_ROWS = 200;

/**
 * A file converted batch by batch: the stream's parts (a batch without rows is kept only as the first, for the
 * schema), the rows converted, and the rows that were not.
 */
export class ConvertedStream {
  private readonly parts: Uint8Array[] = [];
  rows = 0;
  private badCount = 0;
  private readonly bad: BadRow[] = [];

  add(converted: { batch: RecordBatch; good: number; bad?: BadRow[] }) {
    this.rows += converted.good;
    this.badCount += converted.bad?.length ?? 0;
    for (const b of converted.bad ?? []) if (this.bad.length < MAX_REPORTED_BAD_ROWS) this.bad.push(b);
    if (converted.good > 0 || this.parts.length === 0) this.parts.push(streamPart(converted.batch, this.parts.length === 0));
  }

  /** The whole stream, ended, and what the worker reports of it. */
  finish() {
    const parts = [...this.parts, END_OF_STREAM.slice()];
    return { parts, rows: this.rows, badCount: this.badCount, bad: this.bad };
  }
}
