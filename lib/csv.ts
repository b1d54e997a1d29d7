/**
 * CSV rows to Arrow: type inference from a sample, a mapping of CSV columns onto a table's schema, and conversion
 * of rows into record batches, with the rows that will not convert reported instead of sent.
 */
import {
  Bool,
  DateDay,
  Float16,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  LargeUtf8,
  makeData,
  RecordBatch,
  Schema,
  Field,
  Struct,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  vectorFromArray,
  DataType,
} from "apache-arrow";
import type { JsonSchema } from "./arrow-schema";
import { timestampVector } from "./arrow-vectors";

/** The types CSV inference offers; a declared-only table can use any of them. */
export const CSV_TYPES = ["int64", "double", "bool", "string", "date32:day", "timestamp:us:-"] as const;
export type CsvType = (typeof CSV_TYPES)[number];

export interface TargetColumn {
  name: string;
  /** Engine type name (lance vocabulary). */
  type: string;
  nullable: boolean;
}

const INT = /^[-+]?\d+$/;
const FLOAT = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(inf|infinity|nan)$/i;
const BOOL = /^(true|false|yes|no|t|f|y|n)$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

const isNull = (v: string | undefined) => v === undefined || v === "" || v.toLowerCase() === "null";

/** Infers the narrowest type that every non-empty sample value fits, and whether any value is empty. */
export function inferColumns(header: string[], sample: string[][]): TargetColumn[] {
  return header.map((name, c) => {
    const values = sample.map((r) => r[c]);
    const present = values.filter((v) => !isNull(v));
    const nullable = present.length < values.length || present.length === 0;
    const all = (re: RegExp) => present.length > 0 && present.every((v) => re.test(v.trim()));
    let type: CsvType = "string";
    if (all(INT) && present.every((v) => BigInt.asIntN(64, BigInt(v.trim())) === BigInt(v.trim()))) type = "int64";
    else if (all(FLOAT)) type = "double";
    else if (all(BOOL)) type = "bool";
    else if (all(DATE)) type = "date32:day";
    else if (all(TIMESTAMP)) type = "timestamp:us:-";
    return { name, type, nullable };
  });
}

const UNIT_TYPES: Record<string, () => DataType> = {
  s: () => new TimestampSecond(),
  ms: () => new TimestampMillisecond(),
  us: () => new TimestampMicrosecond(),
  ns: () => new TimestampNanosecond(),
};

export function arrowType(type: string): DataType {
  const simple: Record<string, () => DataType> = {
    int8: () => new Int8(),
    int16: () => new Int16(),
    int32: () => new Int32(),
    int64: () => new Int64(),
    uint8: () => new Uint8(),
    uint16: () => new Uint16(),
    uint32: () => new Uint32(),
    uint64: () => new Uint64(),
    halffloat: () => new Float16(),
    float: () => new Float32(),
    double: () => new Float64(),
    string: () => new Utf8(),
    large_string: () => new LargeUtf8(),
    bool: () => new Bool(),
    "date32:day": () => new DateDay(),
  };
  if (simple[type]) return simple[type]();
  const ts = /^timestamp:(s|ms|us|ns)(?::(.+))?$/.exec(type);
  if (ts) {
    const t = UNIT_TYPES[ts[1]]();
    const tz = ts[2] && ts[2] !== "-" ? ts[2] : null;
    return tz ? new (t.constructor as new (tz: string) => DataType)(tz) : t;
  }
  throw new Error(`CSV values cannot be converted to ${type}`);
}

export function supportsCsv(type: string): boolean {
  try {
    arrowType(type);
    return true;
  } catch {
    return false;
  }
}

type Converted = { ok: true; value: unknown } | { ok: false; reason: string };

const TS_SCALE: Record<string, bigint> = { s: 1n, ms: 1000n, us: 1_000_000n, ns: 1_000_000_000n };

/** Converts one CSV cell to a value apache-arrow accepts for `type`. */
export function convertCell(raw: string | undefined, column: TargetColumn): Converted {
  if (isNull(raw)) return column.nullable ? { ok: true, value: null } : { ok: false, reason: `${column.name} is required` };
  const v = raw!.trim();
  const t = column.type;
  if (/^u?int\d+$/.test(t)) {
    if (!INT.test(v)) return { ok: false, reason: `'${v}' is not an integer` };
    const big = BigInt(v);
    const bits = Number(t.replace(/\D/g, ""));
    const unsigned = t.startsWith("u");
    const fits = unsigned ? BigInt.asUintN(bits, big) === big : BigInt.asIntN(bits, big) === big;
    if (!fits) return { ok: false, reason: `${v} does not fit ${t}` };
    return { ok: true, value: bits === 64 ? big : Number(big) };
  }
  if (t === "double" || t === "float" || t === "halffloat") {
    if (!FLOAT.test(v)) return { ok: false, reason: `'${v}' is not a number` };
    return { ok: true, value: Number(/^[-+]?inf/i.test(v) ? (v.startsWith("-") ? "-Infinity" : "Infinity") : v) };
  }
  if (t === "bool") {
    if (!BOOL.test(v)) return { ok: false, reason: `'${v}' is not true or false` };
    return { ok: true, value: /^(true|yes|t|y)$/i.test(v) };
  }
  if (t === "date32:day") {
    const ms = DATE.test(v) ? Date.parse(`${v}T00:00:00Z`) : NaN;
    return Number.isNaN(ms) ? { ok: false, reason: `'${v}' is not a date (YYYY-MM-DD)` } : { ok: true, value: new Date(ms) };
  }
  const ts = /^timestamp:(s|ms|us|ns)/.exec(t);
  if (ts) {
    const ms = TIMESTAMP.test(v) ? Date.parse(/[Zz]|[+-]\d{2}:?\d{2}$/.test(v) ? v.replace(" ", "T") : `${v.replace(" ", "T")}Z`) : NaN;
    if (Number.isNaN(ms)) return { ok: false, reason: `'${v}' is not a timestamp` };
    const fraction = /\.(\d+)/.exec(v)?.[1] ?? "";
    const subMs = BigInt((fraction.slice(3, 9) + "000000").slice(0, 6));
    const value = (BigInt(ms) * TS_SCALE[ts[1]]) / 1000n + (ts[1] === "us" ? subMs / 1000n : ts[1] === "ns" ? subMs : 0n);
    return { ok: true, value: ts[1] === "s" || ts[1] === "ms" ? Number(value) : value };
  }
  return { ok: true, value: raw };
}

export interface BadRow {
  line: number;
  column: string;
  value: string;
  reason: string;
}

/** Maps CSV headers onto the table's columns: by name, then ignoring case. */
export function mapColumns(header: string[], table: JsonSchema): { columns: TargetColumn[]; indexes: number[]; problems: string[] } {
  const problems: string[] = [];
  const columns: TargetColumn[] = [];
  const indexes: number[] = [];
  const used = new Set<number>();
  for (const field of table.fields) {
    let i = header.indexOf(field.name);
    if (i < 0) i = header.findIndex((h) => h.toLowerCase() === field.name.toLowerCase());
    if (i < 0) {
      if (!field.nullable) problems.push(`the table's required column '${field.name}' is not in the file`);
      continue;
    }
    if (!supportsCsv(field.type.type)) problems.push(`column '${field.name}' is ${field.type.type}, which CSV values cannot fill`);
    used.add(i);
    columns.push({ name: field.name, type: field.type.type, nullable: field.nullable });
    indexes.push(i);
  }
  header.forEach((h, i) => {
    if (!used.has(i)) problems.push(`the file's column '${h}' is not in the table`);
  });
  return { columns, indexes, problems };
}

/** Converts rows to one record batch; rows with any bad cell are left out and reported. */
export function rowsToBatch(
  rows: string[][],
  columns: TargetColumn[],
  indexes: number[],
  firstLine: number,
): { batch: RecordBatch; bad: BadRow[]; good: number } {
  const values: unknown[][] = columns.map(() => []);
  const bad: BadRow[] = [];
  let good = 0;
  rows.forEach((row, r) => {
    const converted: unknown[] = [];
    for (let c = 0; c < columns.length; c++) {
      const result = convertCell(row[indexes[c]], columns[c]);
      if (!result.ok) {
        bad.push({ line: firstLine + r, column: columns[c].name, value: row[indexes[c]] ?? "", reason: result.reason });
        return;
      }
      converted.push(result.value);
    }
    converted.forEach((v, c) => values[c].push(v));
    good++;
  });
  const schema = new Schema(columns.map((c) => new Field(c.name, arrowType(c.type), c.nullable)));
  const children = schema.fields.map(
    (f, i) => (DataType.isTimestamp(f.type) ? timestampVector(f.type, values[i] as Array<bigint | number | null>) : vectorFromArray(values[i], f.type)).data[0],
  );
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: good, nullCount: 0, children }));
  return { batch, bad, good };
}
