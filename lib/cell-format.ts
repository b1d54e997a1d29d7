/**
 * How the data grid shows a value: short enough for its cell (floating point readable, a vector as its dimension and
 * first values, long text cut), and in full when the user asks (every digit of a double, every element).
 */

export interface CellText {
  /** What the cell shows. */
  short: string;
  /** The whole value; the same as `short` when nothing was left out. */
  full: string;
}

const SHORT_TEXT = 60;
const VECTOR_HEAD = 3;

/** A double to 12 significant digits, which drops the binary noise of decimal fractions (9.450000000000001 → 9.45). */
export function readableNumber(n: number): string {
  if (!Number.isFinite(n) || Number.isInteger(n)) return String(n);
  return String(Number(n.toPrecision(12)));
}

/** The shortest decimal that reads back as the same 32-bit float (12.800000190734863 → 12.8). */
export function float32Text(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  for (let digits = 1; digits < 10; digits++) {
    const text = String(Number(n.toPrecision(digits)));
    if (Math.fround(Number(text)) === n) return text;
  }
  return String(n);
}

/** Arrow's list values are Vectors; plain arrays and typed arrays are lists too. Float32 elements read as float32. */
function asList(value: object): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (value instanceof Float32Array) return Array.from(value, float32Text);
  if (ArrayBuffer.isView(value) && !(value instanceof DataView) && !(value instanceof Uint8Array)) return Array.from(value as unknown as ArrayLike<unknown>);
  const vector = value as { toArray?: () => unknown; type?: unknown };
  if (typeof vector.toArray === "function" && vector.type !== undefined) {
    const items = vector.toArray() as object;
    return asList(items) ?? Array.from(items as ArrayLike<unknown>);
  }
  return null;
}

const json = (value: unknown) => JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v));

function fullText(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return String(value);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return `0x${Array.from(value, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  if (typeof value === "object") {
    const list = asList(value);
    if (list) return `[${list.map(fullText).join(", ")}]`;
    const record = value as { toJSON?: () => unknown };
    return json(typeof record.toJSON === "function" ? record.toJSON() : value);
  }
  return String(value);
}

function shortText(value: unknown, full: string): string {
  if (typeof value === "number") return readableNumber(value);
  if (value instanceof Uint8Array) return value.length > 16 ? `${full.slice(0, 34)}… (${value.length} bytes)` : full;
  const list = value !== null && typeof value === "object" ? asList(value) : null;
  if (list) {
    const head = list.slice(0, VECTOR_HEAD).map((v) => (typeof v === "number" ? readableNumber(v) : fullText(v)));
    return list.length > VECTOR_HEAD ? `[${list.length}] ${head.join(", ")}, …` : `[${head.join(", ")}]`;
  }
  return full.length > SHORT_TEXT ? `${full.slice(0, SHORT_TEXT)}…` : full;
}

export function cellText(value: unknown): CellText {
  const full = fullText(value);
  return { short: shortText(value, full), full };
}
