/**
 * The server processes of a root, for the operations page: each writes a record of itself below `.quiver/instances/`
 * when it starts (its start, its release, how to reach it) and writes it again every TOUCH_MS, so that a record's
 * time in the listing says when its process was last known alive even where it cannot be reached. At rest that is
 * one write per process per TOUCH_MS (10 minutes); the maintainer deletes records nobody touched for three of them.
 * Whether a process is up now is what answering a call says, not its record.
 */
import "server-only";
import os from "node:os";
import { SERVICE_VERSION } from "@/lib/service";
import { INSTANCE } from "@/server/instance";
import { log } from "@/server/log";
import type { ObjectStore } from "@/server/storage/object-store";
import { ownPeerAddress, type PeerAddress } from "@/server/peers/peer-link";

const PREFIX = ".quiver/instances/";
const touchMs = () => Number(process.env.QUIVER_ROSTER_TOUCH_MS) || 600_000;

/** A server process of the root, as it wrote itself down. */
export interface RosterRecord {
  instance: string;
  /** The `npm start` it is a worker of (its instance id when it runs alone): its workers are one instance of the root. */
  start: string;
  started_at: string;
  machine: string;
  pid: number;
  version: string;
  peer: PeerAddress;
}

/** The start this process belongs to, as `npm start`'s primary named it (scripts/start.mjs). */
export const START_ID = process.env.QUIVER_START_ID || INSTANCE;
const STARTED_AT = process.env.QUIVER_START_TIME || new Date().toISOString();

const keyOf = (instance: string) => `${PREFIX}${instance}.json`;

/** This process's record. */
export async function ownRecord(): Promise<RosterRecord> {
  return {
    instance: INSTANCE,
    start: START_ID,
    started_at: STARTED_AT,
    machine: os.hostname(),
    pid: process.pid,
    version: SERVICE_VERSION,
    peer: await ownPeerAddress(),
  };
}

/** Writes this process's record now and every TOUCH_MS from now on. */
export async function joinRoster(store: ObjectStore): Promise<void> {
  const body = JSON.stringify(await ownRecord());
  await store.put(keyOf(INSTANCE), body);
  setInterval(
    () => void store.put(keyOf(INSTANCE), body).catch((err: unknown) => log.warn({ err }, "this process's record in the roster could not be written")),
    touchMs(),
  ).unref();
}

const bodies = new Map<string, RosterRecord>();

/** The records of the root's processes with when each was last written: one listing, and one read per process not seen before. */
export async function readRoster(store: ObjectStore): Promise<Array<RosterRecord & { touched: number }>> {
  const listed = await store.listInfo(PREFIX);
  for (const key of bodies.keys()) if (!listed.has(key)) bodies.delete(key);
  const records = await Promise.all(
    [...listed].map(async ([key, info]) => {
      let record = bodies.get(key);
      if (!record) {
        const body = await store.get(key);
        if (!body) return null;
        record = JSON.parse(body.toString("utf8")) as RosterRecord;
        bodies.set(key, record);
      }
      return { ...record, touched: info.modified ?? Date.now() };
    }),
  );
  return records.filter((record) => record !== null);
}

/** Deletes the records of processes that stopped long ago (three touches missed); answers how many. */
export async function pruneRoster(store: ObjectStore): Promise<number> {
  const gone = [...(await store.listInfo(PREFIX))].filter(([, info]) => info.modified !== undefined && info.modified < Date.now() - 3 * touchMs());
  for (const [key] of gone) await store.delete(key);
  return gone.length;
}

/** Whether a record's process may still run though it did not answer: it touched its record within the last two touches. */
export const recentlyTouched = (touched: number) => touched >= Date.now() - 2 * touchMs();
