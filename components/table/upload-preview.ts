/**
 * What the upload tab knows of a file before any worker reads it: its kind, by name and type, and for an Arrow IPC
 * file (sent as it is) its columns and first rows, checked against the table's schema.
 */
import { RecordBatchReader, tableFromIPC, type Table as ArrowTable } from "apache-arrow";
import { fieldToJson, type JsonField, type JsonSchema } from "@/lib/arrow-schema";
import { writeSchemaProblem } from "@/lib/schema-compat";
import type { ArrowPreview, FileKind } from "@/lib/upload-machine";

export function kindOf(f: File): FileKind {
  if (/\.(csv|tsv|txt)$/i.test(f.name) || f.type === "text/csv") return "csv";
  if (/\.(parquet|parq|pq)$/i.test(f.name)) return "parquet";
  if (/\.(jsonl|ndjson)$/i.test(f.name) || f.type === "application/x-ndjson") return "jsonl";
  return "arrow";
}

export const KIND_NAMES: Record<FileKind, string> = { csv: "CSV", parquet: "Parquet", jsonl: "JSON Lines", arrow: "Arrow" };

export type Checked = { preview: ArrowPreview; problems: string[] };

/** The preview of a file's columns, with what keeps them from being written into a table of `tableSchema`. */
export function checkedPreview(fields: JsonField[], tableSchema: JsonSchema | undefined, preview: ArrowPreview): Checked {
  const problem = tableSchema ? writeSchemaProblem(tableSchema.fields, fields) : null;
  return { preview, problems: problem ? [problem] : [] };
}

const described = (fields: JsonField[]) => fields.map((f) => `${f.name}: ${f.type.type}`);

/** An Arrow IPC stream's first batch, or a file's first rows (a file too large to read whole in the browser is left to the server). */
export async function previewArrow(file: File, tableSchema: JsonSchema | undefined): Promise<Checked | { error: Error }> {
  const head = new Uint8Array(await file.slice(0, 6).arrayBuffer());
  const isFile = String.fromCharCode(...head) === "ARROW1";
  let table: ArrowTable;
  try {
    if (!isFile) {
      const reader = await RecordBatchReader.from(file.stream() as unknown as AsyncIterable<Uint8Array>);
      await reader.open();
      const first = await reader.next();
      const fields = reader.schema.fields.map(fieldToJson);
      const rows = first.done
        ? []
        : first.value
            .toArray()
            .slice(0, 10)
            .map((r) => r.toJSON());
      await reader.cancel();
      return checkedPreview(fields, tableSchema, { schema: described(fields), rows });
    }
    if (file.size > 256 * 1024 * 1024) return { preview: { schema: [], rows: [], note: "Large Arrow file: no preview; the server checks it." }, problems: [] };
    table = tableFromIPC(new Uint8Array(await file.arrayBuffer()));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/compression/i.test(message))
      return { preview: { schema: [], rows: [], note: "Compressed Arrow buffers: no preview in the browser; the server decompresses them." }, problems: [] };
    return { error: new Error(`not a readable Arrow IPC file: ${message}`) };
  }
  const fields = table.schema.fields.map(fieldToJson);
  return checkedPreview(fields, tableSchema, {
    schema: described(fields),
    rows: table
      .slice(0, 10)
      .toArray()
      .map((r) => r.toJSON()),
  });
}
