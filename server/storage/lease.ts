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
    const next = Math.floor(Date.now() / this.slotMs) + 1;
    if (this.held.has(next)) return;
    // Losing the next slot cannot happen while this holder claims ahead in time; if it does, a job's work is not
    // stopped (the engine's commits stay safe when two compactions race, one of them does its work twice), and the
    // maintainer, no longer holding the lease, stops its passes.
    if (await this.store.putIfAbsent(`${this.prefix}${next}`, this.holder).catch(() => false)) this.held.add(next);
  }

  async release() {
    clearInterval(this.timer);
    for (const slot of this.held) await this.store.delete(`${this.prefix}${slot}`).catch(() => undefined);
  }
}
