/**
 * The store failing a write's requests after it acted on them: a proxy in front of the run's store (Azurite, or
 * moto's S3 in the S3 run) answers 503 in the store's own words, or cuts the answer off halfway, to requests the store
 * has carried out (a data file, the commit's manifest, one of Quiver's own records). Whatever the client is told, a
 * write is there once or not at all, and its retry under the same request id makes it there once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, rows } from "./client";
import { startLatencyProxy, type LatencyProxy, type StoreRequest } from "./latency-proxy";
import { startServer, type TestServer } from "./server";
import { sharedStoreServer } from "./store-server";

let proxy: LatencyProxy;
let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  const store = await sharedStoreServer();
  proxy = await startLatencyProxy(store, 0);
  const { env } = await store.newRoot();
  server = await startServer({ ...env, QUIVER_STORAGE_OPTIONS: JSON.stringify(store.storageOptionsVia(proxy.endpoint)) });
  api = client(server.url, server.auth);
});
afterAll(async () => {
  await server?.stop();
  await proxy?.stop();
});

const BATCH = 100;
const countOf = async (table: string, from: number) =>
  (await api.post<number>(`/v1/table/${table}/count_rows`, { predicate: `id >= ${from} AND id < ${from + BATCH}` })).body;
const versionOf = async (table: string) => (await api.post<{ version: number }>(`/v1/table/${table}/describe`, {})).body.version;

/** The requests a write makes to the store that it may see fail after the store acted on them. */
const FAULTS: Array<[string, (table: string) => (r: StoreRequest) => boolean]> = [
  ["the commit's manifest", (table) => (r) => r.kind === "write" && r.path.includes(`/${table}.lance/_versions/`) && r.path.endsWith(".manifest")],
  ["a data file", (table) => (r) => r.kind === "write" && r.path.includes(`/${table}.lance/data/`)],
  ["the write ledger's claim", () => (r) => r.kind === "write" && r.path.includes("/.quiver/requests/") && r.path.endsWith(".claim")],
];

describe.each(["503", "cut"] as const)("the store's answer %s after it acted", (how) => {
  it.each(FAULTS)("to %s: the insert is there once, and so after its retry", async (what, picks) => {
    const table = `fault_${how}_${what.replace(/\W+/g, "_")}`;
    expect((await api.arrow(`/v1/table/${table}/create`, rows(0, BATCH))).status).toBe(200);
    const before = await versionOf(table);
    proxy.reset();
    const spoiled = proxy.spoilAnswers(picks(table), how, 1);
    const headers = { "x-request-id": `${table}-insert` };
    const first = await api.arrow<{ version?: number }>(`/v1/table/${table}/insert`, rows(BATCH, 2 * BATCH), headers);
    expect(spoiled.spoiled(), "the fault was made").toBe(1);
    expect([200, 503], JSON.stringify(first.body)).toContain(first.status);
    expect([0, BATCH]).toContain(await countOf(table, BATCH));
    if (first.status === 200) expect(await countOf(table, BATCH)).toBe(BATCH);

    const again = await api.arrow<{ version?: number }>(`/v1/table/${table}/insert`, rows(BATCH, 2 * BATCH), headers);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(await countOf(table, BATCH)).toBe(BATCH);
    expect(await countOf(table, 0)).toBe(BATCH);
    // one version for the one insert, whatever the store answered on the way
    expect(await versionOf(table)).toBe(before + 1);
    if (first.status === 200) expect(again.body.version).toBe(first.body.version);
  });
});
