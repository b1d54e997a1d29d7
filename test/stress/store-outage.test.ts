/**
 * The object store behind the data root goes away in the middle of writes and comes back: while it is down, calls
 * answer 503 with the Lance error code and Retry-After (never 500), /readyz says unavailable, no acknowledged row is
 * lost and nothing is half written; when it returns, the same server goes on without a restart. The store (Azurite,
 * or moto's S3 in the S3 run) is reached through a gate on a port of its own, which goes down as a store does: its
 * connections cut, new ones refused, until it opens again on the same port.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, rows, type Reply } from "../client";
import { sharedStoreServer, type StoreServer } from "../store-server";
import { startServer, type TestServer } from "../server";
import { ErrorCode } from "@/lib/contract/errors";

let store: StoreServer;
let gate: Gate;
let server: TestServer;
let api: ReturnType<typeof client>;

interface Gate {
  endpoint: string;
  close: () => Promise<void>;
  open: () => Promise<void>;
}

/** A TCP gate to the store's port: `close` cuts every connection and refuses new ones, `open` listens again. */
async function startGate(target: StoreServer): Promise<Gate> {
  const sockets = new Set<net.Socket>();
  let listener: net.Server | undefined;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve) => {
      listener = net.createServer((client) => {
        const upstream = net.connect(target.port, "127.0.0.1");
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => {});
        }
        client.pipe(upstream).pipe(client);
        client.on("close", () => upstream.destroy());
        upstream.on("close", () => client.destroy());
      });
      listener.listen(port, "127.0.0.1", () => {
        port = (listener!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await open();
  const path = new URL(target.endpoint).pathname.replace(/\/$/, "");
  return {
    endpoint: `http://127.0.0.1:${port}${path}`,
    open,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        listener!.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  store = await sharedStoreServer();
  gate = await startGate(store);
  const { env } = await store.newRoot();
  // Few, short retries, so that an outage shows within seconds rather than the engine's default minutes.
  const options = { ...store.storageOptionsVia(gate.endpoint), client_max_retries: "2", client_retry_timeout: "10", connect_timeout: "2s", timeout: "10s" };
  server = await startServer({ ...env, QUIVER_STORAGE_OPTIONS: JSON.stringify(options), QUIVER_REQUEST_TIMEOUT_MS: "30000" });
  api = client(server.url, server.auth);
});
afterAll(async () => {
  await server?.stop();
  await gate?.close();
});

const BATCH = 100;

function expectUnavailable(reply: Reply, what: string) {
  expect(reply.status, `${what}: ${JSON.stringify(reply.body)}`).toBe(503);
  expect(reply.body).toMatchObject({ code: ErrorCode.ServiceUnavailable, status: 503 });
  expect(reply.headers.get("retry-after")).toBeTruthy();
}

describe("the store stopped in the middle of writes, then started again", () => {
  it("answers 503 while it is down, loses no acknowledged row, and recovers without a restart", async () => {
    expect((await api.arrow("/v1/table/outage/create", rows(0, BATCH))).status).toBe(200);
    const acknowledged = [0];
    const answered: number[] = [];
    let next = 1;
    const writer = (async () => {
      while (next <= 30) {
        const batch = next++;
        const reply = await api.arrow("/v1/table/outage/insert", rows(batch * BATCH, (batch + 1) * BATCH));
        answered.push(reply.status);
        if (reply.status === 200) acknowledged.push(batch);
        else expectUnavailable(reply, `insert ${batch}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await new Promise((r) => setTimeout(r, 1_000));
    await gate.close();

    expectUnavailable(await api.post("/v1/table/outage/count_rows", {}), "count while down");
    expectUnavailable(await api.get("/v1/namespace/$/table/list"), "list while down");
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "unavailable" });

    // The write under way when the store stopped may outlast a short outage by retrying; later ones must fail.
    for (let i = 0; i < 600 && !answered.includes(503) && next <= 30; i++) await new Promise((r) => setTimeout(r, 100));
    await gate.open();
    await writer;
    for (let i = 0; i < 50 && (await fetch(`${server.url}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 200));
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    expect(answered.filter((s) => s === 503).length).toBeGreaterThan(0);
    expect(answered.every((s) => s === 200 || s === 503)).toBe(true);
    const after = await api.arrow<{ version: number }>("/v1/table/outage/insert", rows(-BATCH, 0));
    expect(after.status, JSON.stringify(after.body)).toBe(200);

    // The outage shows in the store's figures, which the alert on an unreachable store reads.
    const scraped = String((await api.get("/metrics")).body);
    const failed = [...scraped.matchAll(/^quiver_store_requests_total\{[^}]*outcome="error"[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    expect(failed).toBeGreaterThan(0);

    // Every acknowledged batch is there whole; a batch answered 503 is there whole or not at all.
    for (let batch = 0; batch <= 30; batch++) {
      const count = (await api.post<number>("/v1/table/outage/count_rows", { predicate: `id >= ${batch * BATCH} AND id < ${(batch + 1) * BATCH}` })).body;
      if (acknowledged.includes(batch)) expect(count, `batch ${batch}`).toBe(BATCH);
      else expect([0, BATCH], `batch ${batch}`).toContain(count);
    }
  }, 300_000);
});
