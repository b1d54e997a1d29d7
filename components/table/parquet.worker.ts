/// <reference lib="webworker" />
/**
 * Reads Parquet files off the main thread with hyparquet: the schema and first rows for the preview, then the rows a
 * row group at a time, each row group becoming a record batch of one Arrow IPC stream. The file is read by the byte
 * ranges each step needs (the footer, then one row group's column chunks), never whole.
 */
import { parquetMetadataAsync, parquetReadObjects, parquetSchema, type AsyncBuffer, type FileMetaData } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { Table } from "apache-arrow";
import { fieldToJson } from "@/lib/arrow-schema";
import { cellText } from "@/lib/cell-format";
import { ConvertedStream } from "@/lib/arrow-stream-parts";
import { PARQUET_PARSERS, parquetArrowSchema, parquetRowsToBatch } from "@/lib/parquet";
import type { ReaderReply, ReaderRequest } from "@/lib/upload-protocol";

const PREVIEW_ROWS = 10;
const post = (reply: ReaderReply, transfer: Transferable[] = []) => (self as unknown as DedicatedWorkerGlobalScope).postMessage(reply, transfer);

const bufferOf = (file: File): AsyncBuffer => ({ byteLength: file.size, slice: (start, end) => file.slice(start, end).arrayBuffer() });

async function opened(request: ReaderRequest) {
  const file = bufferOf(request.file);
  const metadata: FileMetaData = await parquetMetadataAsync(file);
  const columns = parquetArrowSchema(parquetSchema(metadata), request.table);
  // Binary columns stay bytes: only what the file marks as text is decoded.
  const read = (rowStart: number, rowEnd: number) =>
    parquetReadObjects({ file, metadata, compressors, parsers: PARQUET_PARSERS, utf8: false, rowStart, rowEnd });
  return { metadata, columns, read };
}

async function inspect(request: ReaderRequest) {
  const { metadata, columns, read } = await opened(request);
  const totalRows = Number(metadata.num_rows);
  // As the data grid writes them (bytes in hex, vectors by their head): Arrow's rows and lists cannot cross to the page.
  const rows = columns.problems.length
    ? []
    : new Table(parquetRowsToBatch(columns.schema, await read(0, Math.min(PREVIEW_ROWS, totalRows)), 0))
        .toArray()
        .map((row: Record<string, unknown>) => Object.fromEntries(columns.schema.fields.map((f) => [f.name, cellText(row[f.name]).short])));
  post({
    kind: "inspected",
    fields: columns.schema.fields.map(fieldToJson),
    rows,
    summary: `${totalRows.toLocaleString("en-US")} rows in ${metadata.row_groups.length.toLocaleString("en-US")} row groups`,
    notes: columns.notes,
    problems: columns.problems,
  });
}

async function encode(request: ReaderRequest) {
  const { metadata, columns, read } = await opened(request);
  if (columns.problems.length) throw new Error(columns.problems.join("; "));
  const stream = new ConvertedStream();
  const totalRows = Number(metadata.num_rows);
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    const batch = parquetRowsToBatch(columns.schema, await read(rowStart, rowEnd), rowStart);
    stream.add({ batch, good: batch.numRows });
    rowStart = rowEnd;
    post({ kind: "progress", bytes: Math.round((request.file.size * rowStart) / Math.max(totalRows, 1)), rows: rowStart });
  }
  // A file without row groups still says its columns.
  if (metadata.row_groups.length === 0) stream.add({ batch: parquetRowsToBatch(columns.schema, [], 0), good: 0 });
  const encoded = stream.finish();
  post(
    { kind: "encoded", ...encoded },
    encoded.parts.map((p) => p.buffer),
  );
}

self.onmessage = (event: MessageEvent<ReaderRequest>) => {
  const work = event.data.kind === "inspect" ? inspect(event.data) : encode(event.data);
  work.catch((err: unknown) => post({ kind: "failed", message: `Parquet: ${err instanceof Error ? err.message : String(err)}` }));
};
