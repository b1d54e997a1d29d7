/**
 * Rows told apart by their values, whatever Arrow layout carried them: a request's body as the engine reads it and
 * the same rows as it reads them back from the table give the same signatures. No Lance commit made through the
 * engine can carry an identity of Quiver's, but the rows an append adds are its body's own: so the table's history
 * tells the version a stopped append made from another write's of the same shape (write-history.ts).
 */
import "server-only";
import { createHash } from "node:crypto";
import { Vector, type Table } from "apache-arrow";

/**
 * A value as text that does not depend on how Arrow laid it out: integers of any width alike, floats at float32
 * precision (a table may store a body's doubles as floats), lists and structs by their members.
 */
function valueText(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "bigint") return `i${value}`;
  if (typeof value === "number") return Number.isInteger(value) ? `i${value}` : Number.isNaN(value) ? "nan" : `f${Math.fround(value)}`;
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "boolean") return value ? "t" : "f";
  if (value instanceof Uint8Array) return `x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex")}`;
  if (value instanceof Date) return `i${value.getTime()}`;
  if (value instanceof Vector || ArrayBuffer.isView(value)) return `[${Array.from(value as Iterable<unknown>, (v) => valueText(v)).join(",")}]`;
  // A struct's or a map's row.
  const fields = Object.entries((value as { toJSON?: () => Record<string, unknown> }).toJSON?.() ?? (value as Record<string, unknown>));
  return `{${fields
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${JSON.stringify(k)}:${valueText(v)}`)
    .join(",")}}`;
}

/** Adds the signature of every row of a batch, over `columns`, to `into`. */
export function addSignatures(batch: Table, columns: string[], into: Set<string>): void {
  const children = columns.map((name) => batch.getChild(name));
  for (let row = 0; row < batch.numRows; row++) {
    const text = children.map((child) => valueText(child?.get(row))).join("\u0001");
    into.add(createHash("sha256").update(text).digest("hex").slice(0, 16));
  }
}
