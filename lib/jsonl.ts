/**
 * JSON Lines to Arrow for the upload tab: the columns are the table's, or for a declared table inferred from the first
 * lines; each line's values are converted to their column's type, and the lines that do not convert are reported
 * with the reason instead of sent. A key no column takes is a reason too: nothing in a line is dropped without a word.
 */
import { DataType, Field, FixedSizeList, List, makeData, RecordBatch, Schema, Struct, vectorFromArray } from "apache-arrow";
import type { JsonDataType, JsonField } from "./arrow-schema";
import { timestampVector } from "./arrow-vectors";
import { arrowType, convertCell, type BadRow } from "./csv";

export interface JsonColumns {
  fields: JsonField[];
  problems: string[];
  notes: string[];
}

type Kind = "integer" | "number" | "boolean" | "text" | "list" | "object";

function kindOf(value: unknown): Kind {
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "string") return "text";
  return Array.isArray(value) ? "list" : "object";
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function inferType(values: unknown[], path: string, out: JsonColumns): JsonDataType | null {
  const present = values.filter((v) => v !== null && v !== undefined);
  const kinds = new Set(present.map(kindOf));
  if (kinds.size === 0) {
    out.notes.push(`column '${path}' is null in every line read: written as string`);
    return { type: "string" };
  }
  if (kinds.has("number")) kinds.delete("integer");
  if (kinds.size > 1) {
    out.problems.push(`column '${path}' holds ${[...kinds].join(" and ")} values in the lines read`);
    return null;
  }
  const [kind] = kinds;
  if (kind === "integer") return { type: "int64" };
  if (kind === "number") return { type: "double" };
  if (kind === "boolean") return { type: "bool" };
  if (kind === "text") return { type: "string" };
  if (kind === "list") {
    const lists = present as unknown[][];
    const items = lists.flat();
    const length = lists[0].length;
    if (length > 0 && items.every((v) => typeof v === "number") && lists.every((l) => l.length === length)) {
      out.notes.push(`column '${path}' holds ${length} numbers in every line: written as a vector of ${length} floats`);
      return { type: "fixed_size_list", length, fields: [{ name: "item", type: { type: "float" }, nullable: true }] };
    }
    const item = inferType(items, `${path}.item`, out);
    return item && { type: "list", fields: [{ name: "item", type: item, nullable: true }] };
  }
  const keys = [...new Set((present as Record<string, unknown>[]).flatMap((o) => Object.keys(o)))];
  const fields: JsonField[] = [];
  for (const key of keys) {
    const type = inferType(
      (present as Record<string, unknown>[]).map((o) => o[key]),
      `${path}.${key}`,
      out,
    );
    if (!type) return null;
    fields.push({ name: key, type, nullable: true });
  }
  return { type: "struct", fields };
}

/** A declared table's columns from the objects of its first lines, in the order their keys first appear. */
export function inferJsonColumns(sample: unknown[]): JsonColumns {
  const out: JsonColumns = { fields: [], problems: [], notes: [] };
  const objects = sample.filter(isObject);
  const keys = [...new Set(objects.flatMap((o) => Object.keys(o)))];
  for (const key of keys) {
    const type = inferType(
      objects.map((o) => o[key]),
      key,
      out,
    );
    if (type) out.fields.push({ name: key, type, nullable: true });
  }
  return out;
}

/** The Arrow type of a column in Lance's JSON form, or why JSON values cannot fill it. */
export function jsonArrowType(type: JsonDataType, path: string): DataType | string {
  if (type.type === "struct" || type.type === "list" || type.type === "fixed_size_list") {
    const children: Field[] = [];
    for (const f of type.fields ?? []) {
      const child = jsonArrowType(f.type, `${path}.${f.name}`);
      if (typeof child === "string") return child;
      children.push(new Field(f.name, child, f.nullable));
    }
    if (type.type === "struct") return new Struct(children);
    return type.type === "list" ? new List(children[0]) : new FixedSizeList(type.length ?? 0, children[0]);
  }
  try {
    return arrowType(type.type);
  } catch {
    return `column '${path}' is ${type.type}, which JSON values cannot fill`;
  }
}

type Converted = { ok: true; value: unknown } | { ok: false; reason: string };

const MS_PER_UNIT: Record<string, bigint> = { us: 1000n, ns: 1_000_000n };

/** One JSON value as Arrow's builders take it for a column of `type` (nested timestamps in milliseconds, as they take them). */
function convertValue(type: JsonDataType, value: unknown, nullable: boolean, path: string, nested: boolean): Converted {
  if (value === null || value === undefined) return nullable ? { ok: true, value: null } : { ok: false, reason: `${path} is required` };
  if (type.type === "struct") {
    if (!isObject(value)) return { ok: false, reason: `${path} is not an object` };
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) if (!type.fields?.some((f) => f.name === key)) return { ok: false, reason: `${path}.${key} is not in the column` };
    for (const f of type.fields ?? []) {
      const child = convertValue(f.type, value[f.name], f.nullable, `${path}.${f.name}`, true);
      if (!child.ok) return child;
      out[f.name] = child.value;
    }
    return { ok: true, value: out };
  }
  if (type.type === "list" || type.type === "fixed_size_list") {
    if (!Array.isArray(value)) return { ok: false, reason: `${path} is not a list` };
    if (type.type === "fixed_size_list" && value.length !== type.length)
      return { ok: false, reason: `${path} has ${value.length} values; the column holds ${type.length}` };
    const item = type.fields![0];
    const items: unknown[] = [];
    for (const [i, v] of value.entries()) {
      const child = convertValue(item.type, v, item.nullable, `${path}[${i}]`, true);
      if (!child.ok) return child;
      items.push(child.value);
    }
    return { ok: true, value: items };
  }
  if (type.type === "string" || type.type === "large_string")
    return typeof value === "string" ? { ok: true, value } : { ok: false, reason: `${path}: ${JSON.stringify(value)} is not text` };
  if (typeof value === "object") return { ok: false, reason: `${path}: ${JSON.stringify(value)} is not ${type.type}` };
  const cell = convertCell(String(value), { name: path, type: type.type, nullable });
  const unit = /^timestamp:(us|ns)/.exec(type.type)?.[1];
  if (cell.ok && nested && unit && typeof cell.value === "bigint") return { ok: true, value: Number(cell.value / MS_PER_UNIT[unit]) };
  return cell.ok ? cell : { ok: false, reason: `${path}: ${cell.reason}` };
}

/**
 * Converts JSON lines to one record batch of `fields`; a line that is not a JSON object, holds a key no column takes,
 * or has a value its column cannot hold is left out and reported.
 */
export function jsonLinesToBatch(
  lines: string[],
  fields: JsonField[],
  firstLine: number,
  unknownKey: (key: string) => string,
): { batch: RecordBatch; bad: BadRow[]; good: number } {
  const values: unknown[][] = fields.map(() => []);
  const bad: BadRow[] = [];
  let good = 0;
  lines.forEach((text, i) => {
    const line = firstLine + i;
    if (!text.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      return bad.push({ line, column: "", value: text.slice(0, 80), reason: `not JSON: ${err instanceof Error ? err.message : String(err)}` });
    }
    if (!isObject(parsed)) return bad.push({ line, column: "", value: text.slice(0, 80), reason: "not a JSON object" });
    const stray = Object.keys(parsed).find((key) => !fields.some((f) => f.name === key));
    if (stray !== undefined) return bad.push({ line, column: stray, value: JSON.stringify(parsed[stray]).slice(0, 80), reason: unknownKey(stray) });
    const row: unknown[] = [];
    for (const f of fields) {
      const converted = convertValue(f.type, parsed[f.name], f.nullable, f.name, false);
      if (!converted.ok) return bad.push({ line, column: f.name, value: JSON.stringify(parsed[f.name] ?? null).slice(0, 80), reason: converted.reason });
      row.push(converted.value);
    }
    row.forEach((v, c) => values[c].push(v));
    good++;
  });
  const schema = new Schema(fields.map((f) => new Field(f.name, jsonArrowType(f.type, f.name) as DataType, f.nullable)));
  const children = schema.fields.map(
    (f, c) => (DataType.isTimestamp(f.type) ? timestampVector(f.type, values[c] as Array<bigint | number | null>) : vectorFromArray(values[c], f.type)).data[0],
  );
  return { batch: new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: good, nullCount: 0, children })), bad, good };
}
