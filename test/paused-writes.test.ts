/**
 * A write whose instance froze (SIGSTOP: a paused VM, a stalled event loop, a throttled container) for longer than
 * its lease, while its client's retry was answered by another instance, and then woke: the write is applied once.
 * The paused instance stops itself at the moment named (QUIVER_FAILPOINTS pause points), so the moment is the same
 * on every run: once its claim is in the ledger, or in the middle of its commit (the engine has staged the manifest,
 * Quiver has not yet published it). The retry is answered by the other instance at a new version; the woken write
 * then finds its request in that version and publishes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, rows, until } from "./client";
import { isStopped, startServer, storeOf, type TestServer } from "./server";

const LEASE_MS = 1000;
const AFTER_CLAIM = "paused_after_claim";
const MID_COMMIT = "paused_mid_commit";
const UPDATE = "paused_update";
const FIRST = "paused_first_write";

let paused: TestServer;
let other: TestServer;

beforeAll(async () => {
  other = await startServer({ QUIVER_WRITE_LEASE: `${LEASE_MS}ms` });
  paused = await startServer(
    {
      QUIVER_WRITE_LEASE: `${LEASE_MS}ms`,
      QUIVER_FAILPOINTS: [
        `pause-after-claim:${AFTER_CLAIM}@1`,
        `pause-before-publish:${MID_COMMIT}@1`,
        `pause-before-publish:${UPDATE}@1`,
        `pause-before-publish:${FIRST}@1`,
      ].join(","),
    },
    { root: other.root },
  );
});
afterAll(async () => {
  if (paused) process.kill(paused.pid, "SIGCONT");
  await Promise.all([paused?.stop(), other?.stop()]);
});

/** Waits until the instance has paused itself, then for longer than its lease: to the other, its write's instance is gone. */
async function pausedPastItsLease() {
  await until(
    "the instance pauses",
    async () => isStopped(paused.pid),
    (stopped) => stopped,
    30_000,
    10,
  );
  await new Promise((r) => setTimeout(r, 2 * LEASE_MS));
}

/**
 * An insert paused at its pause point, retried through the other instance, then woken: what each part then shows. The
 * table has 10 rows at version 1, or, `declared` only, none: the insert then makes its first version.
 */
async function pausedThenRetried(table: string, declared = false) {
  const api = client(other.url, other.auth);
  const made = declared ? await api.post(`/v1/table/${table}/declare`, {}) : await api.arrow(`/v1/table/${table}/create`, rows(0, 10));
  expect(made.status).toBe(200);
  const headers = { "x-request-id": `${table}-batch` };
  const first = client(paused.url, paused.auth).arrow(`/v1/table/${table}/insert`, rows(10, 110), headers);
  await pausedPastItsLease();
  const retry = await api.arrow(`/v1/table/${table}/insert`, rows(10, 110), headers);
  expect(retry.status, JSON.stringify(retry.body)).toBe(200);
  expect(retry.body).toMatchObject({ version: declared ? 1 : 2, num_inserted_rows: 100 });
  process.kill(paused.pid, "SIGCONT");
  const woken = await first;
  const versions = (await api.post<{ versions: Array<{ version: number }> }>(`/v1/table/${table}/version/list`, {})).body.versions.map((v) => v.version);
  const counted = (await api.post<number>(`/v1/table/${table}/count_rows`, {})).body;
  return { woken, versions, counted };
}

describe("an instance paused for longer than its lease while its client's retry is answered elsewhere", () => {
  /** The batch once, in the retry's version, which the woken instance answers too. */
  const expectOnce = ({ woken, versions, counted }: Awaited<ReturnType<typeof pausedThenRetried>>) => {
    expect(counted).toBe(110);
    expect(versions).toEqual([1, 2]);
    expect(woken.status, JSON.stringify(woken.body)).toBe(200);
    expect(woken.body).toMatchObject({ version: 2, num_inserted_rows: 100 });
  };

  it("once its claim was in the ledger: when it wakes, its write lands nowhere and it answers the retry's version", async () => {
    expectOnce(await pausedThenRetried(AFTER_CLAIM));
  });

  it("in the middle of its commit (its manifest staged, not yet published): when it wakes, it publishes nothing", async () => {
    expectOnce(await pausedThenRetried(MID_COMMIT));
    // Both instances go on writing the table.
    expect((await client(paused.url, paused.auth).arrow(`/v1/table/${MID_COMMIT}/insert`, rows(200, 205))).body.version).toBe(3);
  });

  it("a declared table's first write in the middle of its commit: when it wakes, it neither overwrites nor appends", async () => {
    const { woken, versions, counted } = await pausedThenRetried(FIRST, true);
    // Without the guards (the look for its request, and only version 1 its to make) it made a version 2 when it woke.
    expect(versions).toEqual([1]);
    expect(counted).toBe(100);
    expect(woken.status, JSON.stringify(woken.body)).toBe(200);
    expect(woken.body).toMatchObject({ version: 1, num_inserted_rows: 100 });
  });

  it("an update in the middle of its commit: when it wakes, the rows are changed once", async () => {
    const api = client(other.url, other.auth);
    expect((await api.arrow(`/v1/table/${UPDATE}/create`, rows(0, 10))).status).toBe(200);
    const update = { predicate: "id < 10", updates: [["x", "x + 1"]] };
    const headers = { "x-request-id": `${UPDATE}-once` };
    const first = client(paused.url, paused.auth).post(`/v1/table/${UPDATE}/update`, update, headers);
    await pausedPastItsLease();
    const retry = await api.post(`/v1/table/${UPDATE}/update`, update, headers);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ version: 2, updated_rows: 10 });
    process.kill(paused.pid, "SIGCONT");
    const woken = await first;
    expect(woken.status, JSON.stringify(woken.body)).toBe(200);
    expect(woken.body).toMatchObject({ version: 2 });
    const versions = (await api.post<{ versions: Array<{ version: number }> }>(`/v1/table/${UPDATE}/version/list`, {})).body.versions.map((v) => v.version);
    expect(versions).toEqual([1, 2]);
    const xs = await api.post<import("apache-arrow").Table>(`/v1/table/${UPDATE}/query`, { columns: ["id", "x"], limit: 100 });
    const byId = new Map([...xs.body.getChild("id")!.toArray()].map((id, i) => [Number(id), Number(xs.body.getChild("x")!.get(i))]));
    // rows() gives row i the value 1.5 i: one update adds 1, once.
    expect([...byId].sort(([a], [b]) => a - b).map(([, x]) => x)).toEqual(Array.from({ length: 10 }, (_, i) => i * 1.5 + 1));
    // The woken update ran once: its guard, finding its request in version 2, ended the commit there, and the engine
    // did not rebase it and run it again (writing another data file) after a backoff as long as the pause.
    const dataFiles = await storeOf(other).list(`${UPDATE}.lance/data/`);
    expect(dataFiles.length, dataFiles.join(" ")).toBe(3); // the create's, the retry's, the woken attempt's
  });
});
