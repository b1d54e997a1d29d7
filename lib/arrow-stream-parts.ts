/**
 * An Arrow IPC stream built a batch at a time in the browser: each batch framed alone, the schema kept only with the
 * first, and the end-of-stream marker last. The parts joined in a Blob are one stream the server reads.
 */
import { Table, tableToIPC, type RecordBatch } from "apache-arrow";

export const END_OF_STREAM = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** Bytes of a one-batch IPC stream without its end-of-stream marker, and without its schema after the first. */
export function streamPart(batch: RecordBatch, first: boolean): Uint8Array {
  const bytes = tableToIPC(new Table([batch]), "stream");
  const end = bytes.length - END_OF_STREAM.length;
  if (first) return bytes.slice(0, end);
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const schemaLength = 8 + view.getInt32(4, true);
  return bytes.slice(schemaLength, end);
}
