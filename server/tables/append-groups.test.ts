import { describe, expect, it } from "vitest";
import { Dictionary, Int32, Int64, Table, tableFromIPC, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";
import { AppendGroups, type Appending } from "./append-groups";
import { QuiverError } from "@/server/errors";
import { received, toIpcFile } from "@/server/lance/arrow-ipc";
import { KeyedLock } from "@/server/catalog/keyed-lock";

const body = (ids: number[], dictionary = false): Appending => ({
  ticket: undefined,
  body: toIpcFile(
    received(
      Buffer.from(
        tableToIPC(
          new Table({
            id: vectorFromArray(ids.map(BigInt), new Int64()),
            s: dictionary ? vectorFromArray(ids.map(String), new Dictionary(new Utf8(), new Int32())) : vectorFromArray(ids.map(String), new Utf8()),
          }),
          "stream",
        ),
      ),
    ),
  ),
});

/** A table's write turn and an append that records each committed file's ids and answers a new version. */
function table() {
  const turn = new KeyedLock();
  const commits: number[][] = [];
  let gate: Promise<void> = Promise.resolve();
  return {
    commits,
    hold: () => {
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      return () => open();
    },
    inTurn: (run: () => Promise<void>) => turn.run("t", run),
    /** Refuses a file holding id -1 as the engine refuses bad data; one holding -2 fails as a store would. */
    append: async (_members: Appending[], file: () => Buffer) => {
      await gate;
      const ids = [...tableFromIPC(file()).getChild("id")!.toArray()].map(Number);
      if (ids.includes(-1)) throw new QuiverError("InvalidInput", "refused");
      if (ids.includes(-2)) throw new QuiverError("ServiceUnavailable", "the store is away");
      commits.push(ids);
      return commits.length;
    },
  };
}

describe("AppendGroups", () => {
  it("commits appends that waited for the same turn as one version, each answering it", async () => {
    const groups = new AppendGroups();
    const t = table();
    const open = t.hold();
    const first = groups.append("t", body([1]), t.inTurn, t.append);
    await new Promise((r) => setTimeout(r, 10));
    const rest = [groups.append("t", body([2, 3]), t.inTurn, t.append), groups.append("t", body([4]), t.inTurn, t.append)];
    open();
    expect(await first).toBe(1);
    expect(await Promise.all(rest)).toEqual([2, 2]);
    expect(t.commits).toEqual([[1], [2, 3, 4]]);
  });

  it("keeps bodies with dictionaries or other schemas apart, and lets each refused body fail alone", async () => {
    const groups = new AppendGroups();
    const t = table();
    const open = t.hold();
    const first = groups.append("t", body([1]), t.inTurn, t.append);
    await new Promise((r) => setTimeout(r, 10));
    const rest = [body([2]), body([3], true), body([-1]), body([5])].map((b) => groups.append("t", b, t.inTurn, t.append).catch((e: Error) => e.message));
    open();
    await first;
    expect(await Promise.all(rest)).toEqual([2, 4, "refused", 3]);
    expect(t.commits).toEqual([[1], [2], [5], [3]]);
  });

  it("fails a whole group without committing its bodies again when the failure is not the data's: it may have landed", async () => {
    const groups = new AppendGroups();
    const t = table();
    const open = t.hold();
    const first = groups.append("t", body([1]), t.inTurn, t.append);
    await new Promise((r) => setTimeout(r, 10));
    const rest = [body([2]), body([-2]), body([4])].map((b) => groups.append("t", b, t.inTurn, t.append).catch((e: Error) => e.message));
    open();
    await first;
    expect(await Promise.all(rest)).toEqual(["the store is away", "the store is away", "the store is away"]);
    expect(t.commits).toEqual([[1]]);
  });

  it("fails every waiting append when the turn itself fails", async () => {
    const groups = new AppendGroups();
    const failing = (run: () => Promise<void>) => Promise.reject(new Error("table dropped")).then(run);
    await expect(groups.append("t", body([1]), failing, async () => 1)).rejects.toThrow("table dropped");
  });
});
