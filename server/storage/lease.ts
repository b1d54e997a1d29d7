/**
 * One holder at a time: a table's maintenance (one job), the maintainer of the whole root (one instance), the
 * catalog's committer (one instance). Not
 * every store can replace an object on the condition that it is unchanged, so a lease is a series of time slots,
 * each an object written only where none exists: who wrote slot k holds the lease during it. The holder always
 * holds the next slot too, claiming it ahead, so nobody can take the lease while it works; a holder that dies
 * without releasing leaves its slots to run out (two slots).
 */
import "server-only";
import type { ObjectStore } from "./object-store";

export class Lease {
  private readonly held = new Set<number>();
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly store: ObjectStore,
    private readonly prefix: string,
    private readonly holder: string,
    private readonly slotMs: number,
    first: number,
  ) {
    this.held.add(first);
    this.timer = setInterval(() => void this.claimAhead(), slotMs / 4);
    this.timer.unref();
  }

  /** The lease below `prefix` for `holder`, or null while another holds it. Slots last `slotMs`. */
  static async acquire(store: ObjectStore, prefix: string, holder: string, slotMs: number): Promise<Lease | null> {
    const slot = Math.floor(Date.now() / slotMs);
    if (!(await store.putIfAbsent(`${prefix}${slot}`, holder))) return null;
    const lease = new Lease(store, prefix, holder, slotMs, slot);
    await lease.claimAhead();
    // Slots that ran out are left by holders that died; nobody reads them again.
    for (const key of await store.list(prefix)) if (Number(key.slice(prefix.length)) < slot - 1) await store.delete(key).catch(() => undefined);
    return lease;
  }

  /** Who holds the lease below `prefix` now, or null. */
  static async holderOf(store: ObjectStore, prefix: string, slotMs: number): Promise<string | null> {
    const body = await store.get(`${prefix}${Math.floor(Date.now() / slotMs)}`);
    return body ? body.toString("utf8") : null;
  }

  /** Whether this holder still holds the lease: the current slot is one it claimed (a slot another took is not). */
  get holds(): boolean {
    return this.held.has(Math.floor(Date.now() / this.slotMs));
  }

  private async claimAhead() {
    const current = Math.floor(Date.now() / this.slotMs);
    const next = current + 1;
    if (this.held.has(next)) return;
    // The current slot too, when this holder held the one before but its claim of this one failed (a store error
    // just before the slot began): left unclaimed, anyone could take the lease for it. Losing a slot cannot happen
    // otherwise while this holder claims ahead in time; if it does, a job's work is not stopped (the engine's commits
    // stay safe when two compactions race, one of them does its work twice), and the maintainer, no longer holding
    // the lease, stops its passes.
    const wanted = !this.held.has(current) && this.held.has(current - 1) ? [current, next] : [next];
    for (const slot of wanted) if (await this.store.putIfAbsent(`${this.prefix}${slot}`, this.holder).catch(() => false)) this.held.add(slot);
    // Slots gone by are nobody's concern: a lease held for months leaves its last slots, not one object per slot.
    for (const slot of [...this.held].filter((slot) => slot < current - 1)) {
      this.held.delete(slot);
      await this.store.delete(`${this.prefix}${slot}`).catch(() => this.held.add(slot));
    }
  }

  async release() {
    clearInterval(this.timer);
    for (const slot of this.held) await this.store.delete(`${this.prefix}${slot}`).catch(() => undefined);
  }
}

/**
 * An instance standing for a lease for as long as it runs: it asks twice a slot while it does not hold it, one ask
 * at a time (an ask slower than half a slot must not overlap the next, whose refusal would forget the lease the first
 * one won while its slots went on being claimed), and says when it gains or loses it.
 */
export class Candidacy {
  private lease: Lease | null = null;
  private asking: Promise<void> | null = null;

  constructor(
    private readonly store: ObjectStore,
    private readonly prefix: string,
    private readonly holder: string,
    private readonly slotMs: number,
    private readonly changed: (holds: boolean) => void,
  ) {
    setInterval(() => void this.ask(), slotMs / 2).unref();
    void this.ask();
  }

  get holds(): boolean {
    return this.lease?.holds ?? false;
  }

  /** Takes the lease if nobody holds it; an ask under way is the one answered. */
  private ask(): Promise<void> {
    this.asking ??= this.askOnce().finally(() => (this.asking = null));
    return this.asking;
  }

  private async askOnce() {
    if (this.lease?.holds) return;
    if (this.lease) {
      const lost = this.lease;
      this.lease = null;
      this.changed(false);
      await lost.release();
    }
    this.lease = await Lease.acquire(this.store, this.prefix, this.holder, this.slotMs).catch(() => null);
    if (this.lease) this.changed(true);
  }
}
