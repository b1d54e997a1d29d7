/**
 * A map's colours: the colour column's values as categories, a colour each. A column of few values (text, booleans,
 * a label) keeps them, the most common first, the rest as "other"; a column of many numbers is cut into ranges of
 * about as many rows each. Each point gets its category's index.
 */
import { DataType, type Table as ArrowTable } from "apache-arrow";
import { cellText } from "@/lib/cell-format";

/** Distinct enough on white and on slate-950, and for the commoner colour blindnesses in the first eight. */
export const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#17becf", "#8c564b"];

const MOST = PALETTE.length;
const RANGES = 6;

export interface Categories {
  labels: string[];
  counts: number[];
  /** Each point's category. */
  of: Float32Array;
}

const toNumber = (v: unknown): number | null => (typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : null);

export function categoriesOf(columns: ArrowTable, column: string | undefined, points: number): Categories {
  const vector = column ? columns.getChild(column) : null;
  if (!vector) return { labels: ["every row"], counts: [points], of: new Float32Array(points) };
  // Values are counted as they are and named once per distinct value: naming each of 100,000 took most of the time.
  const values: unknown[] =
    DataType.isInt(vector.type) || DataType.isFloat(vector.type) ? Array.from(vector.toArray() as ArrayLike<unknown>) : Array.from(vector);
  if (vector.nullCount > 0) for (let i = 0; i < points; i++) if (!vector.isValid(i)) values[i] = null;
  const numeric = DataType.isInt(vector.type) || DataType.isFloat(vector.type);
  const distinct = new Map<unknown, number>();
  for (const v of values) distinct.set(v, (distinct.get(v) ?? 0) + 1);
  if (numeric && distinct.size > MOST) return ranges(values.map(toNumber));
  const ranked = [...distinct.entries()].sort((a, b) => b[1] - a[1]);
  const kept = ranked.length > MOST ? ranked.slice(0, MOST - 1) : ranked;
  const indexOf = new Map(kept.map(([value], i) => [value, i]));
  const other = kept.length;
  const of = Float32Array.from(values, (v) => indexOf.get(v) ?? other);
  const labels = kept.map(([value]) => (value === null ? "null" : cellText(value).short));
  const counts = kept.map(([, count]) => count);
  if (ranked.length > kept.length) {
    labels.push(`other (${ranked.length - kept.length} values)`);
    counts.push(ranked.slice(kept.length).reduce((sum, [, count]) => sum + count, 0));
  }
  return { labels, counts, of };
}

/** Numbers cut into RANGES ranges of about as many points each; nulls apart. */
function ranges(values: Array<number | null>): Categories {
  const sorted = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  const bounds = Array.from({ length: RANGES - 1 }, (_, i) => sorted[Math.floor(((i + 1) * sorted.length) / RANGES)]);
  const uniqueBounds = [...new Set(bounds)];
  const edges = [sorted[0], ...uniqueBounds, sorted[sorted.length - 1]];
  const format = (v: number) => (Number.isInteger(v) ? String(v) : v.toPrecision(3));
  const labels = uniqueBounds
    .map((b, i) => `${format(edges[i])} – <${format(b)}`)
    .concat(`${format(edges[edges.length - 2])} – ${format(edges[edges.length - 1])}`);
  const nullIndex = labels.length;
  const of = Float32Array.from(values, (v) => {
    if (v === null) return nullIndex;
    let i = 0;
    while (i < uniqueBounds.length && v >= uniqueBounds[i]) i++;
    return i;
  });
  const counts = new Array<number>(labels.length + 1).fill(0);
  for (const c of of) counts[c]++;
  if (counts[nullIndex] > 0) labels.push("null");
  return { labels, counts: counts.slice(0, labels.length), of };
}
