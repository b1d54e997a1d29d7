/**
 * The exactly-once soak: three instances on one root behind a load balancer that behaves as nginx does, an instance
 * SIGKILLed every few seconds and started again on its port, for 20 rounds, while eight writers append batches of
 * rows with unique ids: six through LanceDB's remote client (which retries an insert answered 502 or 503 under a new
 * request id), two through the API with an Idempotency-Key they keep across their own retries. Every acknowledged
 * row must be there exactly once, no row may be there twice, and every error a writer saw must be one that says to
 * try again. Runs on a local root and, in the stress suite's later passes, on Azurite and on S3 (moto).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { tableToIPC } from "apache-arrow";
import { client, rows } from "../client";
import { startLoadBalancer, type LoadBalancer } from "../load-balancer";
import { startServer, storeOf, type TestServer } from "../server";
import { writeSoakEvidence } from "./soak-evidence";

const ROUNDS = 20;
const ROWS = 100;
/** A stopped instance's unanswered write is decided after this long without a sign of it (the default is 10 s). */
const ENV = { QUIVER_WRITE_LEASE: "3s" };

let servers: TestServer[] = [];
/** Every instance started, the killed ones included, for their output when the soak fails. */
const started: Array<{ name: string; server: TestServer }> = [];
let lb: LoadBalancer;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  const first = await startServer(ENV);
  servers = [first, await startServer(ENV, { root: first.root }), await startServer(ENV, { root: first.root })];
  servers.forEach((server, i) => started.push({ name: `instance-${i}-start-0`, server }));
  // Each request is labelled with the writer that sent it (a header each writer sends), to tell its batch by when.
  lb = await startLoadBalancer(
    servers.map((s) => s.url),
    { label: ({ headers }) => headers["x-soak-writer"] as string | undefined },
  );
  expect((await client(first.url, first.auth).arrow("/v1/table/soak/create", rows(-1, 0))).status).toBe(200);
});
afterAll(async () => {
  await lb?.stop();
  await Promise.all(servers.map((s) => s.stop()));
});

/** An error a client may act on by sending the write again: the service or the way to it was away, or is still busy. */
const RETRYABLE = /\b(502|503|409)\b|Bad Gateway|Service Unavailable|still being applied|connection|timed out|Hit retry limit/i;

/**
 * What a request that got no whole answer says: fetch fails with a TypeError when the connection is refused, reset or
 * closed before the answer ends (an instance killed as it answered). The outcome is unknown, which is what the writer
 * keeps its Idempotency-Key for: it says so, with the socket's own reason, and sends the write again.
 */
const cutOff = (err: Error) =>
  err instanceof TypeError ? `no answer, the connection was cut: ${err.message} (${(err.cause as Error | undefined)?.message ?? "no cause"})` : err.message;

describe("instances killed under eight writers", () => {
  it(`${ROUNDS} rounds: every acknowledged row exactly once, none twice, every error a retryable answer`, async () => {
    const acknowledged = new Set<number>();
    const errors: string[] = [];
    let writing = true;
    let batch = 0;
    /** Which writer sent each batch, and from when to when: the requests that carried it, told by their writer's header. */
    const sending = new Map<number, { writer: string; from: number; to: number }>();
    const nextBatch = (writer: string) => {
      const b = batch++;
      sending.set(b, { writer, from: Date.now(), to: Infinity });
      return b;
    };
    const sent = (b: number) => (sending.get(b)!.to = Date.now());
    const ids = (b: number) => rows(b * ROWS, (b + 1) * ROWS);

    const remoteWriter = async (w: number) => {
      const db = await lancedb.connect("db://default", {
        apiKey: servers[0].adminKey,
        hostOverride: lb.url,
        clientConfig: { extraHeaders: { "x-soak-writer": `remote-${w}` } },
      });
      const table = await db.openTable("soak");
      while (writing) {
        const b = nextBatch(`remote-${w}`);
        try {
          await table.add(ids(b));
          acknowledged.add(b);
        } catch (err) {
          errors.push(`remote batch ${b}: ${(err as Error).message.slice(0, 300)}`);
        }
        sent(b);
      }
    };
    const keyedWriter = async (w: number) => {
      const api = client(lb.url, { ...servers[0].auth, "x-soak-writer": `keyed-${w}` });
      while (writing) {
        const b = nextBatch(`keyed-${w}`);
        const body = tableToIPC(ids(b), "stream");
        for (let attempt = 0; attempt < 30; attempt++) {
          const reply = await api.arrow("/v1/table/soak/insert", body, { "idempotency-key": `soak-${w}-${b}` }).catch((err: Error) => err);
          if (!(reply instanceof Error) && reply.status === 200) {
            acknowledged.add(b);
            break;
          }
          const said = reply instanceof Error ? cutOff(reply) : `${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`;
          if (!RETRYABLE.test(said)) {
            errors.push(`keyed batch ${b}: ${said}`);
            break;
          }
          await sleep(250);
        }
        sent(b);
      }
    };
    const writers = [...Array.from({ length: 6 }, (_, w) => remoteWriter(w)), keyedWriter(0), keyedWriter(1)];

    const killer = (async () => {
      for (let round = 0; round < ROUNDS; round++) {
        await sleep(1500 + Math.random() * 1500);
        const i = round % servers.length;
        const port = Number(new URL(servers[i].url).port);
        await servers[i].kill();
        await sleep(1000 + Math.random() * 1000);
        servers[i] = await startServer(ENV, { root: servers[i].root, port });
        started.push({ name: `instance-${i}-start-${round + 1}`, server: servers[i] });
      }
    })();
    await killer;
    writing = false;
    await Promise.all(writers);

    const table = await (await lancedb.connect("db://default", { apiKey: servers[0].adminKey, hostOverride: servers[0].url })).openTable("soak");
    const stored = await table.query().select(["id"]).toArray();
    const times = new Map<number, number>();
    for (const row of stored) times.set(Number(row.id), (times.get(Number(row.id)) ?? 0) + 1);
    const twice = [...times].filter(([, n]) => n > 1).map(([id]) => id);
    const missing = [...acknowledged].filter((b) => Array.from({ length: ROWS }, (_, r) => b * ROWS + r).some((id) => !times.has(id)));
    const kills = lb.passed().filter((r) => r.status === 502).length;
    console.log(
      `soak: ${batch} batches sent, ${acknowledged.size} acknowledged, ${errors.length} errors, ${stored.length} rows stored, ` +
        `${kills} requests answered 502 by the load balancer`,
    );
    errors.slice(0, 10).forEach((e) => console.log(`  ${e}`));
    if (twice.length || missing.length) {
      const summary = await writeSoakEvidence({
        doubled: [...new Set(twice.map((id) => Math.floor(id / ROWS)))],
        missing,
        rowsPerBatch: ROWS,
        table: "soak",
        requestsOf: (b) => {
          const { writer, from, to } = sending.get(b)!;
          return lb.passed().filter((r) => r.label === writer && r.at >= from && r.at <= to);
        },
        passed: lb.passed(),
        store: storeOf(servers[0]),
        api: client(servers[0].url, servers[0].auth),
        outputs: started.map(({ name, server }) => ({ name, output: server.output() })),
      });
      console.log(summary);
    }
    expect({ twice: twice.slice(0, 10), missing: missing.slice(0, 10) }, "rows stored twice, acknowledged batches missing").toEqual({
      twice: [],
      missing: [],
    });
    expect(errors.filter((e) => !RETRYABLE.test(e))).toEqual([]);
    expect(acknowledged.size).toBeGreaterThan(ROUNDS * 4);
    expect(kills, "no write was cut off by a kill: the soak tested nothing").toBeGreaterThan(0);
    // The soak takes about two minutes; reading the evidence of a failure, up to two more.
  }, 360_000);
});
