/**
 * Makes a batch's new versions of several tables visible together to readers that ask the catalog for a table's
 * versions (Lance's REST namespace client asks ListTableVersions for the latest one). Before publishing any of them,
 * the batch writes its record (`.quiver/batches/<id>.json`) and a hold beside each version's manifest; while the
 * record exists, readers through the catalog answer as if the held versions did not exist yet. Deleting the record
 * is the one instant at which all of them appear; the holds are tidied afterwards. The record names every version
 * of the batch and the manifest staged for it, so that a batch whose instance stopped part-way (died, or paused past
 * the write lease) and that no retry finished is finished by the first reader to meet its hold after the lease
 * (server/tables/batch-finish.ts). A record older than any batch takes that could not be finished (a version taken
 * meanwhile by another commit, or a record of an earlier build, which names no staged manifest) holds nothing: what
 * the store has is then what readers see.
 */
import "server-only";
import { randomBytes } from "node:crypto";
import { holdKey, type BatchHold } from "@/server/lance/version-manifest";
import type { ObjectStore } from "@/server/storage/object-store";
import { config } from "@/server/config";

const PREFIX = ".quiver/batches/";
const ABANDONED_AFTER_MS = 5 * 60_000;

const recordKey = (batch: string) => `${PREFIX}${batch}.json`;

export interface HeldVersion {
  directory: string;
  version: number;
}

/** A version a batch publishes, as a reader finishing the batch needs it: its table, branch and staged manifest. */
export interface BatchMember extends HeldVersion {
  table: string[];
  branch?: string;
  staged: string;
  v2: boolean;
}

/**
 * Who asked for a batch, as its answer would have recorded it: a reader that finishes the batch writes its versions'
 * records and its audit entry in the batch's name.
 */
export interface BatchAuthor {
  requestId: string;
  principal: { kind: string; id: string; name: string };
  operation: string;
  /** The write ledger's id for the batch's commit, which its versions' records name. */
  commit: string;
  database: string;
  path: string;
}

/**
 * What a batch changes besides publishing versions (BatchCommitTables' declares, deregisters and deletions of
 * versions), as checked before it applied anything, so that any attempt of it, or a reader, can finish it the same
 * way (server/tables/batch-finish.ts).
 */
export interface BatchChanges {
  declares: Array<{ id: string[]; objectId: string; location: string; generated: boolean; properties: Record<string, string> }>;
  /** `hides`: a root-level table in its own directory, whose row becomes the one hiding it; otherwise its row goes. */
  deregisters: Array<{ id: string[]; objectId: string; location: string; hides: boolean; properties: Record<string, string> }>;
  deletions: Array<{ table: string[]; branch?: string; directory: string; versions: number[]; v2: boolean }>;
}

interface BatchRecord {
  time: string;
  versions: HeldVersion[];
  /** Every version of the batch (those an earlier attempt published too); a record of an earlier build has none. */
  members?: BatchMember[];
  /** Absent from a record of an earlier build. */
  author?: BatchAuthor;
  /** Set for a batch that changes the catalog or deletes versions too. */
  changes?: BatchChanges;
}

/** Finishes a batch whose instance stopped part-way, in the background: a reader keeps holding its versions meanwhile. */
export type BatchFinisher = (batch: string, members: BatchMember[], author: BatchAuthor | null, changes: BatchChanges | null) => void;

/** A new batch's name, which its claim in the write ledger records before the batch holds anything. */
export const newBatchId = () => randomBytes(8).toString("hex");

/**
 * Holds the versions a batch is about to publish; `release` makes them visible at once (or lets an undone batch go).
 * A batch finishing what an interrupted attempt began holds under that attempt's name (`batch`), so that the
 * versions it had published and those published now appear at the same instant; `earlier` are the ones it may have
 * held, whose holds are tidied too. With nothing left to publish, it holds nothing more and releases what was held.
 */
export async function holdVersions(
  store: ObjectStore,
  versions: HeldVersion[],
  {
    members,
    author,
    changes = null,
    batch = newBatchId(),
    earlier = [],
  }: { members: BatchMember[]; author: BatchAuthor | null; changes?: BatchChanges | null; batch?: string; earlier?: HeldVersion[] },
) {
  const holds = versions.map((v) => holdKey(v.directory, { batch, version: v.version }));
  if (versions.length || changes) {
    const record: BatchRecord = { time: new Date().toISOString(), versions, members, ...(author ? { author } : {}), ...(changes ? { changes } : {}) };
    await Promise.all([store.put(recordKey(batch), JSON.stringify(record)), ...holds.map((key) => store.put(key, batch))]);
  }
  return {
    release: () => store.delete(recordKey(batch)),
    tidy: () => tidyHolds(store, batch, [...versions, ...earlier]),
  };
}

/** Makes a finished batch's versions appear (its record goes), then removes its holds. */
export async function releaseBatch(store: ObjectStore, batch: string, versions: HeldVersion[]) {
  await store.delete(recordKey(batch));
  await tidyHolds(store, batch, versions);
}

async function tidyHolds(store: ObjectStore, batch: string, versions: HeldVersion[]) {
  const keys = new Set(versions.map((v) => holdKey(v.directory, { batch, version: v.version })));
  await Promise.all([...keys].map((key) => store.delete(key)));
}

/**
 * The versions among `holds` that a pending batch still holds back. A batch whose record is older than the write
 * lease has stopped part-way: `finish` is asked to finish it, and its versions stay held until it has, or, for a
 * batch that changes the catalog, until `committed` finds it decided so.
 */
export async function heldBack(
  store: ObjectStore,
  holds: readonly BatchHold[],
  finish?: BatchFinisher,
  committed?: (batch: string) => Promise<boolean>,
): Promise<Set<number>> {
  const held = new Set<number>();
  if (holds.length === 0) return held;
  const batches = [...new Set(holds.map((h) => h.batch))];
  const pending = new Set<string>();
  await Promise.all(
    batches.map(async (batch) => {
      const record = await store.get(recordKey(batch));
      if (!record) return;
      let parsed: Partial<BatchRecord> = {};
      try {
        parsed = JSON.parse(record.toString("utf8")) as Partial<BatchRecord>;
      } catch {
        // a record not of this service's writing holds nothing
      }
      const age = Date.now() - Date.parse(parsed.time ?? "");
      if (age >= config.writeLeaseMs && (parsed.members?.length || parsed.changes) && finish)
        finish(batch, parsed.members ?? [], parsed.author ?? null, parsed.changes ?? null);
      // A batch that changes the catalog appears with its decision, which made the catalog's part of it seen.
      if (parsed.changes && committed && (await committed(batch))) return;
      if (age < ABANDONED_AFTER_MS) pending.add(batch);
    }),
  );
  for (const hold of holds) if (pending.has(hold.batch)) held.add(hold.version);
  return held;
}
