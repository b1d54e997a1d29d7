/**
 * A sampled map with the rows placed onto its layout (a colour column's rarer values, a search's hits, a point's
 * neighbours the sample left out): the sample's points first, then the placed ones, with the shown columns' values.
 */
import { DataType, Table, vectorFromArray, type Vector } from "apache-arrow";
import type { PlacedRows, TableMap } from "@/lib/queries/maps";

function joined<T extends Float32Array | BigUint64Array>(parts: T[], make: new (length: number) => T): T {
  const out = new make(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part as never, at);
    at += part.length;
  }
  return out;
}

/** A column's values one after another; dictionaries by value, as each answer has its own. */
function joinedColumn(parts: Vector[]): Vector {
  if (parts.some((p) => DataType.isDictionary(p.type))) return vectorFromArray(parts.flatMap((p) => Array.from(p)));
  return parts.slice(1).reduce((all, p) => all.concat(p), parts[0]);
}

export function withPlaced(map: TableMap, placed: Array<PlacedRows | undefined>): TableMap {
  const added = placed.filter((p): p is PlacedRows => Boolean(p?.rowIds.length));
  if (!added.length) return map;
  const all = [map, ...added];
  const names = map.columns.schema.fields.map((f) => f.name).filter((n) => !["_rowid", "x", "y"].includes(n));
  const columns = Object.fromEntries(
    names.filter((n) => added.every((p) => p.columns.getChild(n))).map((n) => [n, joinedColumn(all.map((m) => m.columns.getChild(n)!))]),
  );
  return {
    ...map,
    x: joined(
      all.map((m) => m.x),
      Float32Array,
    ),
    y: joined(
      all.map((m) => m.y),
      Float32Array,
    ),
    rowIds: joined(
      all.map((m) => m.rowIds),
      BigUint64Array,
    ),
    columns: new Table(columns),
  };
}
