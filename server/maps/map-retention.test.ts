import { describe, expect, it } from "vitest";
import { storeKinds } from "@/test/stores";
import { MAPS_PREFIX, noteMapUse, pruneMaps } from "./map-retention";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(storeKinds())("the maps kept in a root on the $name store", ({ make }) => {
  it("go once nobody opened them within the retention, and stay while they are opened", async () => {
    const store = await make();
    const unopened = `${MAPS_PREFIX}aaaa/`;
    const opened = `${MAPS_PREFIX}bbbb/`;
    for (const folder of [unopened, opened]) for (const file of ["first.arrow", "refined.arrow", "projection.arrow"]) await store.put(folder + file, "x");
    await store.put(".quiver/other/kept.json", "{}");
    // Past the retention (an Azure Blob listing says times to the second), one of them is opened.
    await sleep(2_500);
    noteMapUse(store, opened);
    await sleep(200);
    // Opened again within a day: its use is not written again.
    noteMapUse(store, opened);
    expect(await pruneMaps(store, 1_600)).toBe(1);
    const left = await store.list(MAPS_PREFIX);
    expect(left.sort()).toEqual([`${opened}first.arrow`, `${opened}projection.arrow`, `${opened}refined.arrow`, `${opened}used`]);
    expect(await store.list(".quiver/other/")).toEqual([".quiver/other/kept.json"]);
    // Once it too goes unopened, it goes.
    await sleep(2_500);
    expect(await pruneMaps(store, 1_600)).toBe(1);
    expect(await store.list(MAPS_PREFIX)).toEqual([]);
  }, 30_000);
});
