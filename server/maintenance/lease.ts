/**
 * One instance at a time runs a table's maintenance. Not every store can replace an object on the condition that it
 * is unchanged, so the lease is a series of time slots, each an object written only where none exists: who wrote
 * slot k holds the table during it. The holder always holds the next slot too, claiming it ahead, so nobody can
 * take the table while it works; a holder that dies without releasing leaves its slots to run out (two slots).
 */
import "server-only";
import type { ObjectStore } from "@/server/storage/object-store";

const leaseMs = () => Number(process.env.QUIVER_MAINTENANCE_LEASE_MS) || 60_000;

export class TableLease {
  private readonly held = new Set<number>();
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly store: ObjectStore,
    private readonly prefix: string,
    private readonly holder: string,
    first: number,
  ) {
    this.held.add(first);
    this.timer = setInterval(() => void this.claimAhead(), leaseMs() / 4);
    this.timer.unref();
  }

  /** The lease on a table's maintenance for `holder` (a job), or null while another holds it. */
  static async acquire(store: ObjectStore, location: string, holder: string): Promise<TableLease | null> {
    const prefix = `.quiver/maintenance/${location}/lease/`;
    const slot = Math.floor(Date.now() / leaseMs());
    if (!(await store.putIfAbsent(`${prefix}${slot}`, holder))) return null;
    const lease = new TableLease(store, prefix, holder, slot);
    await lease.claimAhead();
    // Slots that ran out are left by holders that died; nobody reads them again.
    for (const key of await store.list(prefix)) if (Number(key.slice(prefix.length)) < slot - 1) await store.delete(key).catch(() => undefined);
    return lease;
  }

  /** Who holds a table's maintenance now (the job), or null. */
  static async holderOf(store: ObjectStore, location: string): Promise<string | null> {
    const body = await store.get(`.quiver/maintenance/${location}/lease/${Math.floor(Date.now() / leaseMs())}`);
    return body ? body.toString("utf8") : null;
  }

  private async claimAhead() {
    const next = Math.floor(Date.now() / leaseMs()) + 1;
    if (this.held.has(next)) return;
    // Losing the next slot cannot happen while this holder claims ahead in time; if it does, the work is not stopped:
    // the engine's commits stay safe when two compactions race, one of them just does its work twice.
    if (await this.store.putIfAbsent(`${this.prefix}${next}`, this.holder).catch(() => false)) this.held.add(next);
  }

  async release() {
    clearInterval(this.timer);
    for (const slot of this.held) await this.store.delete(`${this.prefix}${slot}`).catch(() => undefined);
  }
}
