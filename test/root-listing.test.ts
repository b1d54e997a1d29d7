/**
 * Root-level tables on an object store, where the calls that list tables use the root's listing of the last few
 * seconds and start the next one beside them: a listing that began before a table was dropped, and answers after
 * the drop, must not bring the table back as a directory another tool made. A proxy in front of the store (Azurite,
 * or moto's S3 in the S3 run) holds that listing's answer (the store answered it when it arrived, with the table's
 * directory) until the drop is done.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { sharedStoreServer, type StoreServer } from "./store-server";
import { client, rows } from "./client";
import { startLatencyProxy, type LatencyProxy, type StoreRequest } from "./latency-proxy";
import { startServer, type TestServer } from "./server";

let store: StoreServer;
let proxy: LatencyProxy;
let root: string;
let server: TestServer;

/** The listing of the root's own directories (its tables' directories among them). */
const rootListing = (r: StoreRequest) => r.kind === "list" && r.prefix === `${root.replace(/^(az|s3):\/\/[^/]+\//, "")}/`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  store = await sharedStoreServer();
  proxy = await startLatencyProxy(store, 0);
  root = (await store.newRoot()).uri;
  // One process, so that the listing held is the one the next call answers from.
  server = await startServer({ QUIVER_ROOT: root, QUIVER_STORAGE_OPTIONS: JSON.stringify(store.storageOptionsVia(proxy.endpoint)) }, { workers: 1 });
});

afterAll(async () => {
  await server?.stop();
  await proxy?.stop();
});

it("does not list a root-level table again that was dropped while a listing begun before the drop was answering", async () => {
  const api = client(server.url, server.auth);
  const tables = async () => (await api.get<{ tables: string[] }>("/v1/table")).body.tables;
  expect(await tables()).toEqual([]);
  expect((await api.arrow("/v1/table/flash/create", rows(0, 2))).status).toBe(200);
  const release = proxy.holdAnswers(rootListing);
  proxy.reset();
  // The root's listing is renewed when its stamp, a two-second clock on an object store, has moved.
  await sleep(2_100);
  expect(await tables()).toEqual(["flash"]);
  for (let i = 0; i < 100 && !proxy.requests().some(rootListing); i++) await sleep(20);
  expect(proxy.requests().some(rootListing)).toBe(true);
  expect((await api.post("/v1/table/flash/drop", {})).status).toBe(200);
  release();
  await sleep(500);
  expect(await tables()).toEqual([]);
  expect((await api.get<{ tables: string[] }>("/v1/namespace/%24/table/list")).body.tables).toEqual([]);
});
