/**
 * One committer of the catalog's table rows among the instances of a root. The catalog's commits follow each other
 * (each is the next version of `__manifest`): instances that commit alone race for each version, the loser follows
 * the winner's commit and tries again, and the catalog's rate falls as instances are added. So the instance that
 * holds the committer's lease (`.quiver/catalog/committer/lease/`, taken by the first instance that has a row to
 * commit while nobody holds it, let go after two slots without any) commits the table rows of every instance of the
 * root in its group commits, and the others hand theirs to it (server/peers). At rest nobody holds it: it costs nothing.
 *
 * A holder that cannot be reached, or that declines (it let the lease go), costs the row its detour only: the instance
 * commits it itself, as every instance did before. That is safe whatever the holder did with it, because a table
 * row is inserted by a merge-insert on its object id (one row per name, whoever commits it) and whose row it is is
 * told by its location, which exactly one request claimed (CatalogTable.insertGroup).
 */
import "server-only";
import { log } from "@/server/log";
import { metrics } from "@/server/metrics";
import { config } from "@/server/config";
import { Lease } from "@/server/storage/lease";
import type { ObjectStore } from "@/server/storage/object-store";
import { callPeer, handlePeerCalls, ownPeerAddress, PeerDeclined, reachable, type PeerAddress } from "@/server/peers/peer-link";

const LEASE_PREFIX = ".quiver/catalog/committer/lease/";
const CALL = "catalog-rows";
const CHANGES = "catalog-changes";
/** A hand-off waits this long for the holder's commit; longer than a commit takes on a slow store under load. */
const CALL_TIMEOUT_MS = 30_000;
/** The committer answers changes from memory: one that takes longer is busy, and the store answers instead. */
const CHANGES_TIMEOUT_MS = 2_000;
const slotMs = () => Number(process.env.QUIVER_CATALOG_LEASE_MS) || 10_000;

export interface HandedRow {
  objectId: string;
  objectType: "table";
  location: string;
  properties: Record<string, string>;
}

/** What the catalog of this process does for the others when it is their committer. */
interface CommitterSide<Row> {
  /** Commits rows handed to it: whether each was inserted (false: the catalog held its name). */
  receive(rows: HandedRow[], seenVersion: number): Promise<boolean[]>;
  /** The rows each of versions (from, to] inserted, when every one of them was one of its group commits. */
  changes(from: number, to: number): Row[][] | null;
}

/** The catalogs this process has open, by their root's address, for the calls other instances make to their committer. */
const catalogs = new Map<string, { committer: CatalogCommitter<unknown>; side: CommitterSide<unknown> }>();

function committing(catalog: unknown) {
  const target = typeof catalog === "string" ? catalogs.get(catalog) : undefined;
  if (!target?.committer.committing) throw new PeerDeclined("this instance does not commit that catalog's rows now");
  return target;
}

handlePeerCalls(CALL, async (body) => {
  const { catalog, rows, seen } = parseCall(body);
  const target = committing(catalog);
  target.committer.used();
  const inserted = await target.side.receive(rows, seen);
  metrics.catalogRows.inc({ route: "received" }, rows.length);
  return { inserted };
});

handlePeerCalls(CHANGES, async (body) => {
  const { catalog, from, to } = body as { catalog?: unknown; from?: unknown; to?: unknown };
  if (!Number.isInteger(from) || !Number.isInteger(to)) throw new Error("a call for the catalog's changes must name the versions from and to");
  const versions = committing(catalog).side.changes(from as number, to as number);
  if (!versions) throw new PeerDeclined("not every one of those versions is a commit of this instance's");
  return { versions };
});

export class CatalogCommitter<Row> {
  private lease: Lease | null = null;
  private holder?: { peer: PeerAddress | null; until: number };
  private choosing?: Promise<void>;
  private lastUse = 0;

  constructor(
    private readonly store: ObjectStore,
    side: CommitterSide<Row>,
  ) {
    catalogs.set(store.root.uri, { committer: this, side });
  }

  /** Whether this process commits the root's table rows now. */
  get committing(): boolean {
    return this.lease?.holds === true;
  }

  used() {
    this.lastUse = Date.now();
  }

  /**
   * Hands table rows to the instance that commits them: answers whether each was inserted, or null when this process
   * is to commit them (it is the committer, nobody can be reached, or the one asked declined or failed; then whether
   * it committed them is not known, and the caller's commit finds out).
   */
  async handOff(rows: HandedRow[], seenVersion: number): Promise<boolean[] | null> {
    if (!config.catalogHandoff) return null;
    this.used();
    const peer = this.route();
    if (!peer) return null;
    try {
      const answer = (await callPeer(peer, CALL, { catalog: this.store.root.uri, rows, seen: seenVersion }, CALL_TIMEOUT_MS)) as { inserted?: unknown };
      if (!Array.isArray(answer.inserted) || answer.inserted.length !== rows.length) throw new Error("the committer answered without a result per row");
      metrics.catalogRows.inc({ route: "handed" }, rows.length);
      return answer.inserted.map((inserted) => inserted === true);
    } catch (err) {
      if (!(err instanceof PeerDeclined)) log.warn({ err, instance: peer.instance }, "the catalog's committer could not be reached; committing here");
      if (this.holder?.peer === peer) this.holder = undefined;
      metrics.catalogRows.inc({ route: "fallback" }, rows.length);
      return null;
    }
  }

  /**
   * The rows each of the catalog's versions (from, to] inserted, as the committer that made them all remembers them,
   * or null (no committer known, or one that did not make them all: then the store says).
   */
  async changes(from: number, to: number): Promise<Row[][] | null> {
    const peer = this.committing ? null : this.holder?.peer;
    if (!config.catalogHandoff || !peer || this.holder!.until <= Date.now()) return null;
    try {
      const answer = (await callPeer(peer, CHANGES, { catalog: this.store.root.uri, from, to }, CHANGES_TIMEOUT_MS)) as { versions?: unknown };
      return Array.isArray(answer.versions) && answer.versions.length === to - from && answer.versions.every(Array.isArray)
        ? (answer.versions as Row[][])
        : null;
    } catch {
      return null;
    }
  }

  /**
   * The instance to hand rows to, or null when this process commits them. Who that is is found out beside the rows
   * that ask first, which this process commits meanwhile: a write that found nobody holding the lease does not wait
   * for its round trips.
   */
  private route(): PeerAddress | null {
    if (this.committing) return null;
    if (this.holder && this.holder.until > Date.now()) return this.holder.peer;
    this.choosing ??= this.choose()
      .catch((err: unknown) => log.warn({ err }, "finding the catalog's committer failed"))
      .finally(() => (this.choosing = undefined));
    return null;
  }

  /** Takes the lease, or learns who holds it (for a slot: a holder that lets it go declines meanwhile). */
  private async choose() {
    if (this.lease) await this.letGo();
    const own = await ownPeerAddress();
    const lease = await Lease.acquire(this.store, LEASE_PREFIX, JSON.stringify(own), slotMs());
    if (lease) {
      this.lease = lease;
      metrics.catalogCommitter.set(1);
      this.watchIdle(lease);
      log.info("this instance now commits the catalog's table rows for every instance of the root");
      return;
    }
    const peer = parsePeer(await Lease.holderOf(this.store, LEASE_PREFIX, slotMs()));
    // Asked again after a slot: one that cannot be reached (another machine's loopback) commits nothing meanwhile.
    if (peer) this.holder = { peer: reachable(peer) ? peer : null, until: Date.now() + slotMs() };
  }

  /** Lets the lease go once nobody has had a row to commit for two slots, so that the root costs nothing at rest. */
  private watchIdle(lease: Lease) {
    const timer = setInterval(() => {
      if (this.lease !== lease) return clearInterval(timer);
      if (Date.now() - this.lastUse >= 2 * slotMs() || !lease.holds) {
        clearInterval(timer);
        void this.letGo();
      }
    }, slotMs());
    timer.unref();
  }

  private async letGo() {
    const lease = this.lease;
    this.lease = null;
    metrics.catalogCommitter.set(0);
    await lease?.release();
  }
}

/** The process that holds the lease of the catalog's committer on `store` now, or null (at rest nobody does). */
export async function committerHolder(store: ObjectStore): Promise<string | null> {
  return parsePeer(await Lease.holderOf(store, LEASE_PREFIX, slotMs()))?.instance ?? null;
}

function parsePeer(body: string | null): PeerAddress | null {
  if (!body) return null;
  try {
    const peer = JSON.parse(body) as Partial<PeerAddress>;
    const fields = [peer.instance, peer.machine, peer.url, peer.token];
    return fields.every((field) => typeof field === "string") ? (peer as PeerAddress) : null;
  } catch {
    return null;
  }
}

function parseCall(body: unknown): { catalog: string; rows: HandedRow[]; seen: number } {
  const call = body as { catalog?: unknown; rows?: unknown; seen?: unknown };
  const isRow = (row: unknown): row is HandedRow => {
    const r = row as Partial<HandedRow>;
    return (
      typeof r?.objectId === "string" &&
      r.objectType === "table" &&
      typeof r.location === "string" &&
      typeof r.properties === "object" &&
      r.properties !== null &&
      Object.values(r.properties).every((value) => typeof value === "string")
    );
  };
  if (typeof call?.catalog !== "string" || !Array.isArray(call.rows) || !call.rows.every(isRow) || !Number.isInteger(call.seen)) {
    throw new Error("a call to commit catalog rows must name the catalog, the rows and the version its caller saw");
  }
  return { catalog: call.catalog, rows: call.rows, seen: call.seen as number };
}
