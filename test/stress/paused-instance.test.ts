/**
 * An instance paused at random moments (SIGSTOP, as a paused VM, a stalled event loop or a throttled container would
 * be) for longer than its write lease, again and again, while a client writes 100-row batches to it, each under a
 * request id of its own: a request the paused instance does not answer in time is sent again, with the same id and
 * body, to the other instance until it is answered; then the paused one is woken. Every batch acknowledged is in the
 * table exactly once, whichever instance committed it and whenever the paused one woke. (Before writes named their
 * requests in their versions, 8 of 47 pauses stored an acknowledged batch twice.)
 */
import type { Table } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, rows } from "../client";
import { startServer, type TestServer } from "../server";

const LEASE_MS = 1000;
const PAUSES = Number(process.env.QUIVER_PAUSES ?? 50);
/**
 * A pause under a batch takes its 1.6 s wait, twice the lease and the retry, and three batches answered as usual come
 * before it: about 4 s on a local root, more on an object store. The test's own time is that many pauses' worth.
 */
const PAUSE_BUDGET_MS = 12_000;
const TABLE = "paused";

let paused: TestServer;
let other: TestServer;

beforeAll(async () => {
  other = await startServer({ QUIVER_WRITE_LEASE: `${LEASE_MS}ms` });
  paused = await startServer({ QUIVER_WRITE_LEASE: `${LEASE_MS}ms` }, { root: other.root });
});
afterAll(async () => {
  if (paused) process.kill(paused.pid, "SIGCONT");
  await Promise.all([paused?.stop(), other?.stop()]);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends a batch to `server`, giving up on the answer after `timeoutMs` (the request may still be applied). */
async function send(server: TestServer, batch: number, timeoutMs: number): Promise<number | null> {
  const api = client(server.url, server.auth);
  const answer = api.arrow(`/v1/table/${TABLE}/insert`, rows(batch * 100, batch * 100 + 100), { "x-request-id": `batch-${batch}` });
  const timedOut = sleep(timeoutMs).then(() => null);
  const reply = await Promise.race([answer.catch(() => null), timedOut]);
  return reply && reply.status === 200 ? (reply.body.version as number) : null;
}

describe("an instance paused again and again for longer than its lease while its retries are answered elsewhere", () => {
  it(
    `stores every acknowledged batch once (${PAUSES} pauses)`,
    async () => {
      const api = client(other.url, other.auth);
      expect((await api.arrow(`/v1/table/${TABLE}/create`, rows(0, 1))).status).toBe(200);
      const started = performance.now();
      const acknowledged = new Set<number>();
      let batch = 0;
      let pausesMidWrite = 0;
      for (let pause = 0; pause < PAUSES; pause++) {
        // A few batches answered as usual, then one the instance is paused under, at a random moment of it.
        for (let i = 0; i < 3; i++) {
          const usual = ++batch;
          if ((await send(paused, usual, 30_000)) !== null) acknowledged.add(usual);
        }
        const victim = ++batch;
        const sending = send(paused, victim, 1_500);
        await sleep(Math.random() * 40);
        process.kill(paused.pid, "SIGSTOP");
        const answeredFirst = await Promise.race([sending.then((v) => v !== null), sleep(1_600).then(() => false)]);
        if (answeredFirst) acknowledged.add(victim);
        else {
          pausesMidWrite++;
          // Its client gives up on the paused instance and sends the batch again to the other until it is answered.
          await sleep(2 * LEASE_MS);
          for (let tries = 0; ; tries++) {
            if ((await send(other, victim, 30_000)) !== null) break;
            if (tries > 20) throw new Error(`batch ${victim} was never answered by the other instance`);
            await sleep(200);
          }
          acknowledged.add(victim);
        }
        process.kill(paused.pid, "SIGCONT");
        await sending;
      }
      // Every write the woken instance still had under way is done before the table is read.
      await sleep(2_000);
      const all = await api.post<Table>(`/v1/table/${TABLE}/query`, { columns: ["id"], limit: 10_000_000 });
      expect(all.status).toBe(200);
      const ids = [...all.body.getChild("id")!.toArray()].map(Number);
      const copies = new Map<number, number>();
      for (const id of ids) if (id >= 100) copies.set(Math.floor(id / 100), (copies.get(Math.floor(id / 100)) ?? 0) + 1);
      const twice = [...copies].filter(([, n]) => n > 100).map(([b]) => b);
      const missing = [...acknowledged].filter((b) => (copies.get(b) ?? 0) !== 100);
      console.log(
        `${PAUSES} pauses, ${pausesMidWrite} while a batch was unanswered; ${acknowledged.size} batches acknowledged; ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
      expect(twice, "batches stored more than once").toEqual([]);
      expect(missing, "acknowledged batches not stored exactly once").toEqual([]);
      expect(pausesMidWrite).toBeGreaterThan(PAUSES / 4);
    },
    PAUSES * PAUSE_BUDGET_MS,
  );
});
