/**
 * Binary values of a table one at a time, for the console's media: what each cell of a page holds (its size, what
 * its leading bytes say it is, a short head) without sending the values, and a whole value (or a byte range of it)
 * when someone asks. Blob columns (`lance.blob.v2`) are read through their blob files, by range; plain binary
 * columns through a take of the rows.
 */
import "server-only";
import { tableFromIPC, type Table } from "apache-arrow";
import { hexHead, MEDIA_SNIFF_BYTES, sniffMedia, type MediaType } from "@/lib/media";
import { invalidInput } from "@/server/errors";
import { engineCall } from "@/server/lance/native";
import type { Id, ReadAt } from "@/server/catalog/catalog";
import type { NativeTable } from "@/server/lance/native";
import type { Tables } from "./tables";

export interface CellSummary {
  row_id: string;
  column: string;
  /** Bytes in the value; null for a null value. */
  size: number | null;
  media: MediaType | null;
  /** The first bytes in hex, for a value that is not media. */
  head: string;
}

const HEAD_BYTES = 16;

function summary(rowId: bigint, column: string, bytes: Uint8Array | null, size: number | null): CellSummary {
  if (!bytes || size === null) return { row_id: String(rowId), column, size: null, media: null, head: "" };
  const media = sniffMedia(bytes);
  return { row_id: String(rowId), column, size, media, head: media ? "" : hexHead(bytes, HEAD_BYTES) };
}

async function taken(table: NativeTable, rowIds: bigint[], columns: string[]): Promise<Table> {
  const query = table.takeRowIds(rowIds);
  query.selectColumns(columns);
  query.withRowId();
  const iterator = await query.execute();
  const batches: Table[] = [];
  for (let b = await iterator.next(); b; b = await iterator.next()) batches.push(tableFromIPC(b));
  if (batches.length === 0) return tableFromIPC(await query.outputSchema());
  return batches[0].concat(...batches.slice(1));
}

/** Lance's first blob encoding (`lance-encoding:blob`), whose values the 0.39 engine reads only as their place and size. */
const LEGACY_BLOB = "lance-encoding:blob";

async function checkedColumns(table: NativeTable, columns: string[]): Promise<{ blobs: Set<string>; legacy: Set<string> }> {
  const schema = tableFromIPC(await engineCall("read the schema", () => table.schema())).schema;
  const blobs = new Set(await engineCall("list the blob columns", () => table.blobColumns()));
  const legacy = new Set<string>();
  for (const column of columns) {
    const field = schema.fields.find((f) => f.name === column);
    if (!field) throw invalidInput(`the table has no column '${column}'`);
    const binary = ["Binary", "LargeBinary"].includes(String(field.type));
    if (!binary && !blobs.has(column)) throw invalidInput(`column '${column}' is ${String(field.type)}, not binary or blob`);
    if (field.metadata.get(LEGACY_BLOB) === "true") legacy.add(column);
  }
  return { blobs, legacy };
}

/** What each of the cells of `columns` in the rows `rowIds` holds, without their values. */
export async function cellSummaries(tables: Tables, id: Id, at: ReadAt, columns: string[], rowIds: bigint[]): Promise<CellSummary[]> {
  return tables.readAt(id, "be read", at, async (table) => {
    const { blobs, legacy } = await checkedColumns(table, columns);
    const out: CellSummary[] = [];
    const plain = columns.filter((c) => !blobs.has(c));
    if (plain.length && rowIds.length) {
      const rows = await engineCall("read the rows", () => taken(table, rowIds, plain));
      const ids = rows.getChild("_rowid")!;
      for (let r = 0; r < rows.numRows; r++) {
        for (const column of plain) {
          const rowId = BigInt(ids.get(r) as bigint);
          if (legacy.has(column)) {
            // The engine answers where the value is and its size, not the value: its size is all there is to say.
            const place = rows.getChild(column)!.get(r) as { size: bigint } | null;
            out.push({ row_id: String(rowId), column, size: place ? Number(place.size) : null, media: null, head: "" });
            continue;
          }
          const value = rows.getChild(column)!.get(r) as Uint8Array | null;
          out.push(summary(rowId, column, value, value ? value.byteLength : null));
        }
      }
    }
    for (const column of columns.filter((c) => blobs.has(c))) {
      const files = await engineCall("open the blobs", () => table.fetchBlobFiles(column, rowIds));
      const heads = await Promise.all(
        files.map(async (file) => {
          if (!file) return null;
          const size = file.size();
          const end = size < BigInt(MEDIA_SNIFF_BYTES) ? size : BigInt(MEDIA_SNIFF_BYTES);
          return { size: Number(size), head: end > 0n ? await engineCall("read a blob", () => file.readRange(0n, end)) : new Uint8Array(0) };
        }),
      );
      heads.forEach((h, i) => out.push(summary(rowIds[i], column, h?.head ?? null, h?.size ?? null)));
    }
    return out;
  });
}

export interface CellValue {
  /** The bytes asked for: the whole value, or the range. */
  bytes: Uint8Array;
  /** The whole value's size. */
  size: number;
  media: MediaType | null;
  /** The range the bytes are, when one was asked for and the value has it. */
  range: { start: number; end: number } | null;
}

/** The part of a value of `size` bytes a range names (inclusive end); null for the whole value (no range, or one past its end). */
function spanOf(range: { start: number; end?: number } | null, size: number): { start: number; end: number } | null {
  return range && range.start < size ? { start: range.start, end: Math.min(range.end ?? size - 1, size - 1) } : null;
}

/** One cell's value, or the bytes `range` names of it (inclusive end, as HTTP has it). */
export async function readCell(
  tables: Tables,
  id: Id,
  at: ReadAt,
  column: string,
  rowId: bigint,
  range: { start: number; end?: number } | null,
): Promise<CellValue> {
  return tables.readAt(id, "be read", at, async (table) => {
    const { blobs, legacy } = await checkedColumns(table, [column]);
    if (legacy.has(column))
      throw invalidInput(
        `column '${column}' uses Lance's first blob encoding (${LEGACY_BLOB}), whose values this engine cannot read: rewrite it as a lance.blob.v2 column`,
      );
    const missing = () => invalidInput(`row id ${rowId} has no value of '${column}' in this version of the table (no such row, or null)`);
    if (blobs.has(column)) {
      const [file] = await engineCall("open the blob", () => table.fetchBlobFiles(column, [rowId]));
      if (!file) throw missing();
      const size = Number(file.size());
      const span = spanOf(range, size);
      const start = span?.start ?? 0;
      const bytes = await engineCall("read a blob", () => file.readRange(BigInt(start), BigInt((span?.end ?? size - 1) + 1)));
      // The bytes read hold the value's head, unless a range starts past it or ends before the sniffer's need.
      const sniffed = Math.min(size, MEDIA_SNIFF_BYTES);
      const head = start === 0 && bytes.length >= sniffed ? bytes : await engineCall("read a blob", () => file.readRange(0n, BigInt(sniffed)));
      return { bytes, size, media: sniffMedia(head.subarray(0, sniffed)), range: span };
    }
    const rows = await engineCall("read the row", () => taken(table, [rowId], [column]));
    const value = rows.numRows ? (rows.getChild(column)!.get(0) as Uint8Array | null) : null;
    if (!value) throw missing();
    const span = spanOf(range, value.byteLength);
    return {
      bytes: span ? value.subarray(span.start, span.end + 1) : value,
      size: value.byteLength,
      media: sniffMedia(value.subarray(0, MEDIA_SNIFF_BYTES)),
      range: span,
    };
  });
}
