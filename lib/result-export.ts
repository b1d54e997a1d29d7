/**
 * A query's result as a file to keep: CSV (RFC 4180, a header row), Parquet (hyparquet-writer) or an Arrow IPC file,
 * made in the browser from the rows on screen, so an export runs nothing again.
 */
import { DataType, tableToIPC, type Field, type Table } from "apache-arrow";
import { parquetWriteBuffer } from "hyparquet-writer";

const bigintSafe = (_k: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);

/** A value as plain data: nested values as arrays and objects, binary values in base64, times as ISO strings. */
function plain(value: unknown, field: Field): unknown {
  if (value === null || value === undefined) return null;
  if ((DataType.isDate(field.type) || DataType.isTimestamp(field.type)) && typeof value === "number") return new Date(value).toISOString();
  if (value instanceof Uint8Array) return base64(value);
  if (typeof value === "object" && "toJSON" in value && typeof value.toJSON === "function") return value.toJSON() as unknown;
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  return value;
}

function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function csvField(value: unknown): string {
  if (value === null) return "";
  const text = typeof value === "object" ? JSON.stringify(value, bigintSafe) : String(value);
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

export function resultCsv(table: Table): string {
  const fields = table.schema.fields;
  const columns = fields.map((f) => table.getChild(f.name)!);
  const lines = [fields.map((f) => csvField(f.name)).join(",")];
  for (let r = 0; r < table.numRows; r++) lines.push(columns.map((c, i) => csvField(plain(c.get(r), fields[i]))).join(","));
  return lines.join("\r\n") + "\r\n";
}

type ParquetType = "BOOLEAN" | "INT32" | "INT64" | "FLOAT" | "DOUBLE" | "STRING" | "BYTE_ARRAY" | "TIMESTAMP" | "JSON";

/** The Parquet type a column is written as, and each value in the form the writer takes for it. */
function parquetColumn(field: Field, values: unknown[]): { type: ParquetType; data: unknown[] } {
  const t = field.type;
  if (DataType.isBool(t)) return { type: "BOOLEAN", data: values };
  if (DataType.isInt(t))
    return t.bitWidth === 64 || (!t.isSigned && t.bitWidth === 32)
      ? { type: "INT64", data: values.map((v) => (v === null ? null : BigInt(v as number | bigint))) }
      : { type: "INT32", data: values };
  if (DataType.isFloat(t)) return { type: t.precision === 1 ? "FLOAT" : "DOUBLE", data: values };
  if (DataType.isUtf8(t) || DataType.isLargeUtf8(t)) return { type: "STRING", data: values };
  if (DataType.isBinary(t) || DataType.isLargeBinary(t)) return { type: "BYTE_ARRAY", data: values };
  if (DataType.isDate(t) || DataType.isTimestamp(t)) return { type: "TIMESTAMP", data: values.map((v) => (v === null ? null : new Date(v as number))) };
  return { type: "JSON", data: values.map((v) => plain(v, field)) };
}

export function resultParquet(table: Table): ArrayBuffer {
  const columnData = table.schema.fields.map((f) => {
    const vector = table.getChild(f.name)!;
    const values = Array.from({ length: table.numRows }, (_, r) => (vector.get(r) ?? null) as unknown);
    return { name: f.name, ...parquetColumn(f, values) };
  });
  return parquetWriteBuffer({ columnData: columnData });
}

export function resultArrowFile(table: Table): Uint8Array {
  return tableToIPC(table, "file");
}
