import { describe, it } from "vitest";
import { storeKinds } from "@/test/stores";
import type { ObjectStore } from "./object-store";
import { Candidacy, Lease } from "./lease";

const tableLeasePrefix = (location: string) => `.quiver/maintenance/${location}/lease/`;
/** A table's maintenance lease's slot, as the server has it by default. */
const SLOT_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The store, each of its calls answered `ms` later: a store far away, or busy. */
const slow = (store: ObjectStore, ms: number): ObjectStore =>
  new Proxy(store, {
    get: (target, name, receiver) => {
      const value: unknown = Reflect.get(target, name, receiver);
      return typeof value === "function" ? async (...args: unknown[]) => (await sleep(ms), value.apply(target, args)) : value;
    },
  });

// Each test waits out slots on a store of its own: they run at once, and so the stores' runs do.
describe.concurrent.each(storeKinds())("a table's maintenance lease on the $name store", ({ make }) => {
  it("is held by one job at a time, says who holds it, and is free again once released", async ({ expect }) => {
    const store = await make();
    const first = await Lease.acquire(store, tableLeasePrefix("t.lance"), "job-a", SLOT_MS);
    expect(first).not.toBeNull();
    expect(await Lease.acquire(store, tableLeasePrefix("t.lance"), "job-b", SLOT_MS)).toBeNull();
    expect(await Lease.holderOf(store, tableLeasePrefix("t.lance"), SLOT_MS)).toBe("job-a");
    // Another table's maintenance is its own.
    const other = await Lease.acquire(store, tableLeasePrefix("u.lance"), "job-c", SLOT_MS);
    expect(other).not.toBeNull();
    await first!.release();
    expect(await Lease.holderOf(store, tableLeasePrefix("t.lance"), SLOT_MS)).toBeNull();
    const second = await Lease.acquire(store, tableLeasePrefix("t.lance"), "job-b", SLOT_MS);
    expect(second).not.toBeNull();
    expect(await Lease.holderOf(store, tableLeasePrefix("t.lance"), SLOT_MS)).toBe("job-b");
    await second!.release();
    await other!.release();
  });

  it("stays with its holder from slot to slot while it works, and runs out when the holder stops claiming", async ({ expect }) => {
    const slot = 800;
    const store = await make();
    const lease = await Lease.acquire(store, tableLeasePrefix("slots.lance"), "job-a", slot);
    expect(lease).not.toBeNull();
    for (let i = 0; i < 6; i++) {
      await sleep(400);
      expect(await Lease.acquire(store, tableLeasePrefix("slots.lance"), "job-b", slot)).toBeNull();
      expect(await Lease.holderOf(store, tableLeasePrefix("slots.lance"), slot)).toBe("job-a");
    }
    // A holder that died: it claims nothing more, and its slots run out.
    (lease as unknown as { timer: NodeJS.Timeout }).timer.close();
    await sleep(2000);
    const next = await Lease.acquire(store, tableLeasePrefix("slots.lance"), "job-b", slot);
    expect(next).not.toBeNull();
    await next!.release();
  });

  it("keeps its lease when claiming the next slot fails just before that slot begins", async ({ expect }) => {
    const slot = 800;
    const store = await make();
    const prefix = tableLeasePrefix("flaky.lance");
    // Acquired late in a slot, and the store answers the claim of the next one with an error (a 503, a cut connection).
    await sleep(slot - (Date.now() % slot) + 600);
    let failed = 0;
    const flaky = new Proxy(store, {
      get: (target, name, receiver) => {
        const value: unknown = Reflect.get(target, name, receiver);
        if (name !== "putIfAbsent" || typeof value !== "function") return value;
        return (key: string, data: string) =>
          key.endsWith(String(Math.floor(Date.now() / slot) + 1)) && failed++ === 0 ? Promise.reject(new Error("503")) : value.call(target, key, data);
      },
    });
    const lease = await Lease.acquire(flaky, prefix, "job-a", slot);
    expect(lease).not.toBeNull();
    expect(failed).toBeGreaterThan(0);
    // Into the next slot, and on through two more: nobody else can take the lease meanwhile.
    for (let i = 0; i < 6; i++) {
      await sleep(300);
      expect(await Lease.acquire(store, prefix, "job-b", slot)).toBeNull();
      expect(lease!.holds).toBe(true);
    }
    await lease!.release();
  });

  it("leaves a holder of many slots its last ones only, not an object per slot gone by", async ({ expect }) => {
    const store = await make();
    const prefix = tableLeasePrefix("long.lance");
    const lease = await Lease.acquire(store, prefix, "job-a", 400);
    await sleep(12 * 400);
    expect(lease!.holds).toBe(true);
    // Its last slots only, once the deletes of the ones gone by have landed (on a busy machine one may lag a slot);
    // an object left per slot would be twelve and more by now, and growing.
    await expect.poll(async () => (await store.list(prefix)).length, { timeout: 2_000 }).toBeLessThanOrEqual(3);
    await lease!.release();
    expect(await store.list(prefix)).toEqual([]);
  });

  it("is won by one candidate whose asks answer slower than it asks, which then holds it", async ({ expect }) => {
    const store = await make();
    const prefix = ".quiver/maintainer/lease/";
    const said: boolean[] = [];
    // Every store call takes 150 ms; an ask (its slot, the next one, a listing) takes longer than the 200 ms between asks.
    const candidacy = new Candidacy(slow(store, 150), prefix, "instance-a", 400, (holds) => said.push(holds));
    await sleep(2500);
    expect(said).toEqual([true]);
    expect(candidacy.holds).toBe(true);
    expect(await Lease.holderOf(store, prefix, 400)).toBe("instance-a");
    const rival = new Candidacy(store, prefix, "instance-b", 400, (holds) => said.push(holds));
    await sleep(1000);
    expect(rival.holds).toBe(false);
    expect(said).toEqual([true]);
  });
});
