/**
 * Two versions in one map: the later version's rows placed onto the earlier one's layout (rows whose vector is
 * unchanged where they were, new and re-embedded rows among their nearest rows), and the earlier version's rows
 * that are gone drawn where they were. Each point is unchanged, added, moved (re-embedded: drawn where it went, a
 * trail from where it was) or deleted.
 */
import type { TableMap } from "@/lib/queries/maps";
import type { Categories } from "./categories";

export const CHANGE_COLORS = ["#94a3b8", "#16a34a", "#d97706", "#dc2626"];
const Change = { Unchanged: 0, Added: 1, Moved: 2, Deleted: 3 } as const;

export interface Comparison {
  x: Float32Array;
  y: Float32Array;
  rowIds: BigUint64Array;
  categories: Categories;
  /** Points from here on are the earlier version's deleted rows. */
  deletedFrom: number;
  /** Where each moved point was: its index, and its place in the earlier layout. */
  trails: { index: Int32Array; x: Float32Array; y: Float32Array };
}

export function compareVersions(later: TableMap, earlier: TableMap): Comparison {
  const was = new Map<bigint, number>();
  earlier.rowIds.forEach((id, j) => was.set(id, j));
  const n = later.rowIds.length;
  const kept = new Set<bigint>();
  const change = new Float32Array(n);
  const moved: number[] = [];
  for (let i = 0; i < n; i++) {
    const id = later.rowIds[i];
    const j = was.get(id);
    if (j !== undefined) kept.add(id);
    if (!later.placed?.[i]) change[i] = Change.Unchanged;
    else if (j === undefined) change[i] = Change.Added;
    else {
      change[i] = Change.Moved;
      moved.push(i);
    }
  }
  const deleted = earlier.rowIds.reduce<number[]>((gone, id, j) => (kept.has(id) ? gone : (gone.push(j), gone)), []);
  const total = n + deleted.length;
  const x = new Float32Array(total);
  const y = new Float32Array(total);
  const rowIds = new BigUint64Array(total);
  const of = new Float32Array(total);
  x.set(later.x);
  y.set(later.y);
  rowIds.set(later.rowIds);
  of.set(change);
  deleted.forEach((j, d) => {
    x[n + d] = earlier.x[j];
    y[n + d] = earlier.y[j];
    rowIds[n + d] = earlier.rowIds[j];
    of[n + d] = Change.Deleted;
  });
  const counts = [0, 0, 0, 0];
  for (const c of of) counts[c]++;
  const from = later.facts.placed_on;
  const trails = {
    index: Int32Array.from(moved),
    x: Float32Array.from(moved, (i) => earlier.x[was.get(later.rowIds[i])!]),
    y: Float32Array.from(moved, (i) => earlier.y[was.get(later.rowIds[i])!]),
  };
  return {
    x,
    y,
    rowIds,
    categories: { labels: ["unchanged place", `added since version ${from}`, "re-embedded (moved)", `deleted since version ${from}`], counts, of },
    deletedFrom: n,
    trails,
  };
}
