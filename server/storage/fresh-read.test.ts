import { describe, expect, it } from "vitest";
import { FreshRead, KeyedFreshRead } from "./fresh-read";

/** A value another instance changes, read slowly: each read returns the value as it was when the read began. */
function slowState() {
  const state = { value: 0, reads: 0, release: [] as Array<() => void> };
  const read = () => {
    state.reads++;
    const seen = state.value;
    return new Promise<number>((resolve) => state.release.push(() => resolve(seen)));
  };
  const finishRead = async () => {
    state.release.shift()!();
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { state, read, finishRead };
}

describe("FreshRead", () => {
  it("never answers a caller with a read that began before it asked, and shares the next read among those who wait", async () => {
    const { state, read, finishRead } = slowState();
    const fresh = new FreshRead(read);
    const first = fresh.get();
    // A change is acknowledged elsewhere while the first read is under way; callers who ask now must see it.
    state.value = 1;
    const second = fresh.get();
    const third = fresh.get();
    expect(state.reads).toBe(1);
    await finishRead();
    expect(await first).toBe(0);
    expect(state.reads).toBe(2);
    await finishRead();
    expect(await second).toBe(1);
    expect(await third).toBe(1);
    expect(fresh.idle).toBe(true);
    // Nothing under way: a caller starts its own read.
    state.value = 2;
    const fourth = fresh.get();
    await finishRead();
    expect(await fourth).toBe(2);
    expect(state.reads).toBe(3);
  });

  it("passes a failed read to those who shared it, and reads again for the next caller", async () => {
    let calls = 0;
    const fresh = new FreshRead(() => (++calls === 1 ? Promise.reject(new Error("store down")) : Promise.resolve(calls)));
    await expect(fresh.get()).rejects.toThrow("store down");
    await expect(fresh.get()).resolves.toBe(2);
  });
});

describe("KeyedFreshRead", () => {
  it("reads each key on its own and forgets a key once nothing reads it", async () => {
    const a = slowState();
    const b = slowState();
    const keyed = new KeyedFreshRead<number>();
    const fromA = keyed.get("a", a.read);
    a.state.value = 5;
    const laterA = keyed.get("a", a.read);
    const fromB = keyed.get("b", b.read);
    await a.finishRead();
    await b.finishRead();
    await a.finishRead();
    expect([await fromA, await laterA, await fromB]).toEqual([0, 5, 0]);
    expect([a.state.reads, b.state.reads]).toEqual([2, 1]);
    expect((keyed as unknown as { reads: Map<string, unknown> }).reads.size).toBe(0);
  });
});
