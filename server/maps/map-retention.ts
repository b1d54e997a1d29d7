/**
 * How long a table's map stays in the root. A map is a cache, made again when asked for: one whose table was dropped,
 * whose version was cleaned up, or that nobody opens, would otherwise stay for good (a refined map of 100,000 rows
 * keeps about 15 MB). Opening a map notes its use in the map's `used` record, at most once a day per process, so
 * that an open costs no write; the maintainer deletes, about once an hour, each map whose newest file is older than
 * QUIVER_MAP_RETENTION (30 days): one listing of the maps per database.
 */
import "server-only";
import { log } from "@/server/log";
import type { ObjectStore } from "@/server/storage/object-store";

export const MAPS_PREFIX = ".quiver/maps/";
const USE_NOTED_EVERY_MS = 24 * 3_600_000;
/** Maps whose use this process noted lately, by store and folder: bounded, as a process may open many. */
const notedIn = new WeakMap<ObjectStore, Map<string, number>>();
const MOST_NOTED = 10_000;

/** Notes that the map in `folder` was opened, unless this process did so within a day; never in the open's way. */
export function noteMapUse(store: ObjectStore, folder: string): void {
  const now = Date.now();
  const usesNoted = notedIn.get(store) ?? new Map<string, number>();
  notedIn.set(store, usesNoted);
  if ((usesNoted.get(folder) ?? 0) > now - USE_NOTED_EVERY_MS) return;
  if (usesNoted.size >= MOST_NOTED) usesNoted.clear();
  usesNoted.set(folder, now);
  store.put(`${folder}used`, "").catch((err: unknown) => {
    usesNoted.delete(folder);
    log.warn({ err, map: folder }, "noting a map's use failed");
  });
}

/** Deletes the maps of a root whose newest file is older than `retentionMs`; answers how many. */
export async function pruneMaps(store: ObjectStore, retentionMs: number): Promise<number> {
  const newest = new Map<string, number>();
  const files = new Map<string, string[]>();
  for (const [key, info] of await store.listInfo(MAPS_PREFIX)) {
    const folder = key.slice(0, key.indexOf("/", MAPS_PREFIX.length) + 1);
    if (!folder) continue;
    // A file whose time the store does not say keeps its map.
    newest.set(folder, Math.max(newest.get(folder) ?? 0, info.modified ?? Infinity));
    files.set(folder, [...(files.get(folder) ?? []), key]);
  }
  const stale = [...newest].filter(([, at]) => at < Date.now() - retentionMs).map(([folder]) => folder);
  for (const folder of stale) for (const key of files.get(folder)!) await store.delete(key);
  return stale.length;
}
