/**
 * The write ledger's records on a real local store: claims, answers, decisions of a stopped attempt, same-body
 * markers and the sweep. The records a decision reads is the integration tests' (test/client-retries.test.ts); here
 * it is a function that counts its calls.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ObjectStore } from "@/server/storage/object-store";
import type { CommitShape, Verdict, WriteLedger, WriteRequest, WriteTicket } from "./write-ledger";

let dir: string;
let store: ObjectStore;
let ledger: typeof import("./write-ledger");
let decisions: Array<{ attempt: string }> = [];
let verdict: Verdict = { landed: null, why: "nothing like it" };
let subject: WriteLedger;

const shape: CommitShape = { location: "t.lance", directory: "t.lance", branch: null, after: 1, commit: "c" };
const request = (key: string, more: Partial<WriteRequest> = {}): WriteRequest => ({
  key,
  requestId: key,
  fingerprint: "f",
  sameBody: null,
  answeredByVersion: false,
  operation: "InsertIntoTable",
  rows: 5,
  branch: null,
  principal: { kind: "key", id: "k", name: "test" },
  database: "default",
  path: "/v1/table/t/insert",
  ...more,
});
/** Every ticket made, to end the leases of those still claimed before the sweep. */
const tickets: WriteTicket[] = [];
const ticket = (key: string, more: Partial<WriteRequest> = {}): WriteTicket => {
  const made = new ledger.WriteTicket(request(key, more));
  tickets.push(made);
  return made;
};

/** Another process's attempt at a request: a claim written and never answered. */
const stopped = (key: string, attempt: string) =>
  store.putIfAbsent(
    `.quiver/requests/${key}/1.claim`,
    JSON.stringify({ ...request(key), attempt, n: 1, instance: "gone", time: new Date().toISOString(), shape }),
  );

beforeAll(async () => {
  process.env.QUIVER_IDEMPOTENCY_WINDOW = "3s";
  process.env.QUIVER_WRITE_LEASE = "300ms";
  dir = mkdtempSync(path.join(os.tmpdir(), "quiver-ledger-"));
  const { openStore } = await import("@/server/storage/stores");
  const { parseRoot } = await import("@/server/storage/root");
  store = openStore(parseRoot(dir), {});
  ledger = await import("./write-ledger");
  subject = new ledger.WriteLedger(store, async (claim) => {
    decisions.push({ attempt: claim.attempt });
    return verdict;
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the write ledger", () => {
  it("holds a request's key for its first attempt: a repeat is refused at the claim and answered with the first's answer", async () => {
    const first = ticket("k1");
    await subject.claim(first, shape);
    await expect(subject.claim(ticket("k1"), shape)).rejects.toBeInstanceOf(ledger.EarlierAttempt);
    await subject.finish(first, { outcome: "committed", status: 200, body: { version: 2 } });
    expect(await subject.settle("k1", "f")).toEqual({ kind: "committed", status: 200, body: { version: 2 } });
    expect(await subject.settle("k1", "another")).toEqual({ kind: "different-request" });
  });

  it("gives a key up when its attempt committed nothing: the next attempt claims it", async () => {
    const first = ticket("k2");
    await subject.claim(first, shape);
    await subject.finish(first, { outcome: "not-committed" });
    expect(await subject.settle("k2", "f")).toEqual({ kind: "free", next: 1 });
    await subject.claim(ticket("k2"), shape);
  });

  it("makes a repeat in the same process wait for the attempt under way, then answers with it", async () => {
    const first = ticket("k3");
    await subject.claim(first, shape);
    const settling = subject.settle("k3", "f");
    await new Promise((resolve) => setTimeout(resolve, 50));
    await subject.finish(first, { outcome: "committed", status: 200, body: { version: 7 } });
    expect(await settling).toMatchObject({ kind: "committed", body: { version: 7 } });
  });

  it("decides once, from the table's records, an attempt whose instance went quiet after its last renewal, and keeps the decision", async () => {
    await stopped("k4", "a-stopped");
    decisions = [];
    verdict = { landed: { version: 3, counts: { inserted: 5, updated: 0, deleted: 0 } }, why: "version 3 looks like it" };
    const settling = subject.settle("k4", "f");
    // The attempt's instance renews its lease once more while the repeat waits: the wait starts again from it.
    await subject.renew("k4", 1, 1);
    const renewedAt = Date.parse(JSON.parse((await store.get(".quiver/requests/k4/1.lease-1"))!.toString()).time);
    expect(await settling).toEqual({ kind: "decided", decided: { version: 3, counts: { inserted: 5, updated: 0, deleted: 0 } }, stopped: true });
    expect(decisions).toEqual([{ attempt: "a-stopped" }]);
    const decision = JSON.parse((await store.get(".quiver/requests/k4/1.decision"))!.toString());
    expect(Date.parse(decision.time) - renewedAt).toBeGreaterThanOrEqual(300);
    expect(await subject.settle("k4", "f")).toMatchObject({ kind: "decided" });
    expect(decisions).toHaveLength(1);
  });

  it("frees the key of a stopped attempt the table's records say did not land, for an attempt of the next number", async () => {
    await stopped("k5", "b-stopped");
    verdict = { landed: null, why: "nothing like it" };
    expect(await subject.settle("k5", "f")).toEqual({ kind: "free", next: 2 });
    const next = ticket("k5");
    next.attempt = 2;
    await subject.claim(next, shape);
  });

  it("names earlier writes of the same body that are still unanswered, and forgets them once answered", async () => {
    const first = ticket("k6", { sameBody: "same" });
    await subject.claim(first, shape);
    const second = ticket("k7", { sameBody: "same" });
    await expect(subject.claim(second, shape)).rejects.toMatchObject({ earlier: [{ key: "k6" }], sameBody: true });
    // The second gave its claim up: its key is free.
    expect(await subject.settle("k7", "f")).toEqual({ kind: "free", next: 1 });
    await subject.finish(first, { outcome: "committed", status: 200, body: { version: 4 } });
    // Answered, but not yet known to have reached its client: a write of the same body may still be its retry.
    const third = ticket("k9", { sameBody: "same" });
    await expect(subject.claim(third, shape)).rejects.toMatchObject({ earlier: [{ key: "k6" }] });
    await subject.answerSent(first);
    await subject.claim(ticket("k7", { sameBody: "same" }), shape);
  });

  it("takes an answered write whose marker stays for a lease's time for one whose answer never reached its client", async () => {
    const first = ticket("k10", { sameBody: "lost" });
    await subject.claim(first, shape);
    await subject.finish(first, { outcome: "committed", status: 200, body: { version: 9 } });
    const [marker] = await store.list(".quiver/requests/same-body/lost/");
    expect(await subject.settleSameBody("k10", marker)).toMatchObject({ kind: "committed", body: { version: 9 } });
    await subject.answerSent(first);
    expect(await subject.settleSameBody("k10", marker)).toEqual({ kind: "another" });
  });

  it("answers an insert from the version naming it, and takes it for another write once its marker goes, not before", async () => {
    const first = ticket("k14", { sameBody: "named", answeredByVersion: true });
    await subject.claim(first, { ...shape, named: true });
    first.landed = true;
    verdict = { landed: { version: 12, counts: { inserted: 5, updated: 0, deleted: 0 } }, why: "version 12 names the request" };
    await subject.finish(first, { outcome: "committed", status: 200, body: { version: 12, num_inserted_rows: 5 } });
    // No answer recorded: its version gives it, at once.
    expect(await store.head(".quiver/requests/k14/1.answer")).toBeNull();
    expect(await subject.settle("k14", "f")).toMatchObject({ kind: "decided", decided: { version: 12 }, stopped: false });
    // While its marker stays its answer may be on its way: a write of the same body is not yet another write.
    const [marker] = await store.list(".quiver/requests/same-body/named/");
    let settled = false;
    const settling = subject.settleSameBody("k14", marker).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(settled).toBe(false);
    await subject.answerSent(first);
    expect(await settling).toEqual({ kind: "another" });
  });

  it("marks a write before its turn: a write of the same body waits for its claim, and its marker goes if it claims nothing", async () => {
    const first = ticket("k11", { sameBody: "early" });
    await subject.lookForSameBody(first);
    const [marker] = await store.list(".quiver/requests/same-body/early/");
    expect(marker).toMatch(/-k11$/);
    const second = ticket("k12", { sameBody: "early" });
    await expect(subject.lookForSameBody(second)).rejects.toMatchObject({ earlier: [{ key: "k11", marker }], sameBody: true });
    expect(await store.list(".quiver/requests/same-body/early/")).toEqual([marker]);
    // Marked and not claimed yet: not taken for another write while its turn may still come.
    let settled = false;
    const settling = subject.settleSameBody("k11", marker).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(settled).toBe(false);
    await subject.claim(first, shape);
    expect((await store.get(".quiver/requests/k11/1.claim"))?.toString()).toContain(marker);
    await subject.finish(first, { outcome: "committed", status: 200, body: { version: 11 } });
    await subject.answerSent(first);
    expect(await settling).toEqual({ kind: "another" });
    // A write that stops before its claim (refused, say) takes its marker away with its ending.
    const refused = ticket("k13", { sameBody: "early" });
    await subject.lookForSameBody(refused);
    expect(await store.list(".quiver/requests/same-body/early/")).toHaveLength(1);
    await subject.finish(refused, { outcome: "not-committed" });
    expect(await store.list(".quiver/requests/same-body/early/")).toEqual([]);
  });

  it("sweeps away the records older than the idempotency window, and the staged manifests of published versions their claims name, and keeps the rest", async () => {
    for (const made of tickets) if (made.claimed) await subject.finish(made, { outcome: "committed", status: 200, body: {} });
    // A batch whose staged manifests outlived its answer (a reader finished it), one naming a version's own manifest,
    // one outside its version's directory, and one whose version was never made.
    const member = (table: string, staged: string) => ({ table: [table], directory: `${table}.lance`, version: 2, staged, v2: false });
    const staged = [
      "b.lance/_versions/2.manifest-staged",
      "c.lance/_versions/2.manifest",
      "d.lance/elsewhere/2.manifest-staged",
      "f.lance/_versions/2.manifest-staged",
    ];
    const batch = {
      hold: "h",
      members: [member("b", staged[0]), member("c", staged[1]), member("d", "b.lance/_versions/2.manifest-staged"), member("f", staged[3])],
    };
    const claim = { ...request("k9"), attempt: "a9", n: 1, instance: "gone", time: new Date().toISOString(), shape: { ...shape, batch } };
    await store.putIfAbsent(".quiver/requests/k9/1.claim", JSON.stringify(claim));
    for (const key of [...staged, "b.lance/_versions/2.manifest", "d.lance/_versions/2.manifest"]) await store.put(key, "manifest");
    await new Promise((resolve) => setTimeout(resolve, 3100));
    const recent = ticket("k8");
    await subject.claim(recent, { ...shape, batch: { hold: "h2", members: [member("e", "e.lance/_versions/2.manifest-staged")] } });
    await store.put("e.lance/_versions/2.manifest-staged", "manifest");
    const swept = await subject.sweep();
    expect(swept).toBeGreaterThan(0);
    const left = await store.list(".quiver/requests/");
    expect(left.filter((key) => !key.startsWith(".quiver/requests/k8/"))).toEqual([]);
    expect(left).toContain(".quiver/requests/k8/1.claim");
    // Only the staged manifest of a published version, inside its directory, goes; a recent claim's stays.
    expect(await Promise.all([...staged, "e.lance/_versions/2.manifest-staged"].map(async (key) => (await store.get(key)) !== null))).toEqual([
      false,
      true,
      true,
      true,
      true,
    ]);
  });
});
