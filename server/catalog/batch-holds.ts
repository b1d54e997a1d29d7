/**
 * Makes a batch's new versions of several tables visible together to readers that ask the catalog for a table's
 * versions (Lance's REST namespace client asks ListTableVersions for the latest one). Before publishing any of them,
 * the batch writes its record (`.quiver/batches/<id>.json`) and a hold beside each version's manifest; while the
 * record exists, readers through the catalog answer as if the held versions did not exist yet. Deleting the record
 * is the one instant at which all of them appear; the holds are tidied afterwards. A record older than any batch
 * takes (a process that stopped mid-batch) holds nothing: what the store has is then what readers see.
 */
import "server-only";
import { randomBytes } from "node:crypto";
import { holdKey, type BatchHold } from "@/server/lance/version-manifest";
import type { ObjectStore } from "@/server/storage/object-store";

const PREFIX = ".quiver/batches/";
const ABANDONED_AFTER_MS = 5 * 60_000;

const recordKey = (batch: string) => `${PREFIX}${batch}.json`;

export interface HeldVersion {
  directory: string;
  version: number;
}

/** A new batch's name, which its claim in the write ledger records before the batch holds anything. */
export const newBatchId = () => randomBytes(8).toString("hex");

/**
 * Holds the versions a batch is about to publish; `release` makes them visible at once (or lets an undone batch go).
 * A batch finishing what an interrupted attempt began holds under that attempt's name (`batch`), so that the
 * versions it had published and those published now appear at the same instant; `earlier` are the ones it may have
 * held, whose holds are tidied too. With nothing left to publish, it holds nothing more and releases what was held.
 */
export async function holdVersions(store: ObjectStore, versions: HeldVersion[], batch = newBatchId(), earlier: HeldVersion[] = []) {
  const keyOf = (v: HeldVersion) => holdKey(v.directory, { batch, version: v.version });
  const holds = versions.map(keyOf);
  if (versions.length)
    await Promise.all([
      store.put(recordKey(batch), JSON.stringify({ time: new Date().toISOString(), versions })),
      ...holds.map((key) => store.put(key, batch)),
    ]);
  return {
    release: () => store.delete(recordKey(batch)),
    tidy: () => Promise.all([...new Set([...holds, ...earlier.map(keyOf)])].map((key) => store.delete(key))).then(() => undefined),
  };
}

/** The versions among `holds` that a pending batch still holds back. */
export async function heldBack(store: ObjectStore, holds: readonly BatchHold[]): Promise<Set<number>> {
  const held = new Set<number>();
  if (holds.length === 0) return held;
  const batches = [...new Set(holds.map((h) => h.batch))];
  const pending = new Set<string>();
  await Promise.all(
    batches.map(async (batch) => {
      const record = await store.get(recordKey(batch));
      if (!record) return;
      let time = NaN;
      try {
        time = Date.parse((JSON.parse(record.toString("utf8")) as { time?: string }).time ?? "");
      } catch {
        // a record not of this service's writing holds nothing
      }
      if (Date.now() - time < ABANDONED_AFTER_MS) pending.add(batch);
    }),
  );
  for (const hold of holds) if (pending.has(hold.batch)) held.add(hold.version);
  return held;
}
