/**
 * One maintainer for the whole root: two instances on one object-store root (Azurite, or moto's S3 in the S3 run)
 * behind a proxy that counts store requests, the policy on and passing every second. A pass looks at the tables written since the last one, and at rest no
 * table is looked at; when the maintainer is killed, the other instance takes its lease over and maintains.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, rows, until as waitFor } from "./client";
import { sharedStoreServer, type StoreServer } from "./store-server";
import { startLatencyProxy, type LatencyProxy } from "./latency-proxy";
import { startServer, type TestServer } from "./server";
import { openStore } from "@/server/storage/stores";
import { parseRoot } from "@/server/storage/root";
import { Lease } from "@/server/storage/lease";
import type { ObjectStore } from "@/server/storage/object-store";

const TABLES = 20;

let storeServer: StoreServer;
let proxy: LatencyProxy;
let root: string;
let store: ObjectStore;
let servers: TestServer[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for `what`, looking every 200 ms, for 25,000 ms unless told otherwise. */
const until = <T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, ms = 25_000) => waitFor(what, probe, done, ms, 200);

/** Whether an instance says it is the maintainer (its `quiver_maintainer` gauge). */
const isMaintainer = async (server: TestServer) =>
  /^quiver_maintainer 1$/m.test(
    await fetch(`${server.url}/metrics`, { headers: server.auth }).then(
      (r) => r.text(),
      () => "",
    ),
  );

/** The tables a run of store requests reached, by their directory. */
const tablesReached = () =>
  new Set(
    proxy
      .requests()
      .map((r) => /\/(t\d+\.lance)\//.exec(`${r.prefix ?? r.path}`)?.[1])
      .filter((t): t is string => t !== undefined),
  );

beforeAll(async () => {
  storeServer = await sharedStoreServer();
  proxy = await startLatencyProxy(storeServer, 0);
  root = (await storeServer.newRoot()).uri;
  store = openStore(parseRoot(root), storeServer.storageOptions);
  const env = {
    QUIVER_ROOT: root,
    QUIVER_STORAGE_OPTIONS: JSON.stringify(storeServer.storageOptionsVia(proxy.endpoint)),
    QUIVER_MAINTENANCE: "on",
    QUIVER_MAINTENANCE_INTERVAL_S: "1",
    QUIVER_MAINTAINER_LEASE_MS: "1000",
    QUIVER_MAINTENANCE_COMPACT_SMALL_FRAGMENTS: "4",
  };
  servers = [await startServer(env), await startServer(env)];
  const api = client(servers[0].url, servers[0].auth);
  for (let i = 0; i < TABLES; i++) expect((await api.arrow(`/v1/table/t${i}/create`, rows(0, 10))).status).toBe(200);
  expect((await api.arrow("/v1/table/t7/insert", rows(10, 20))).status).toBe(200);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await proxy?.stop();
});

describe("the maintainer", () => {
  it("is one instance; its passes look at the tables written since the last one, and at rest at none", async () => {
    await until(
      "one maintainer",
      () => Promise.all(servers.map(isMaintainer)),
      (said) => said.filter(Boolean).length === 1,
    );
    // The notes of the setup's writes are written two seconds after them, then read and let go by a pass.
    await sleep(4000);
    await until(
      "the setup's notes dealt with",
      () => store.list(".quiver/written/"),
      (notes) => notes.length === 0,
    );
    proxy.reset();
    expect((await client(servers[1].url, servers[1].auth).arrow("/v1/table/t12/insert", rows(10, 20))).status).toBe(200);
    await until(
      "the write noted",
      () => store.list(".quiver/written/"),
      (notes) => notes.length > 0,
    );
    await until(
      "the note dealt with",
      () => store.list(".quiver/written/"),
      (notes) => notes.length === 0,
    );
    // The written table is looked at (its write, and the pass's look at its health); no other table is.
    expect(tablesReached()).toEqual(new Set(["t12.lance"]));
    const looks = proxy.requests().filter((r) => r.kind === "list" && r.prefix?.endsWith("t12.lance/_versions/"));
    expect(looks.length).toBeGreaterThan(1);

    // At rest: some requests a second for the lease, the notes and the catalog; none for any of the tables.
    proxy.reset();
    await sleep(5000);
    const atRest = proxy.requests();
    expect(tablesReached()).toEqual(new Set());
    expect(atRest.length, atRest.map((r) => `${r.kind} ${r.prefix ?? r.path}`).join("\n")).toBeLessThan(5 * 10);
  }, 120_000);

  it("is replaced by another instance when it is killed, which then maintains the tables written", async () => {
    const said = await Promise.all(servers.map(isMaintainer));
    const holder = said.indexOf(true);
    expect(holder).toBeGreaterThanOrEqual(0);
    const other = servers[1 - holder];
    const holderOf = () => Lease.holderOf(store, ".quiver/maintainer/lease/", 1000);
    const killed = await holderOf();
    expect(killed).not.toBeNull();
    await servers[holder].kill();
    await until("another maintainer", () => isMaintainer(other), Boolean);
    // The lease's slot now is the other instance's, written by it once the killed one's slots ran out.
    const successor = await holderOf();
    expect(successor).not.toBeNull();
    expect(successor).not.toBe(killed);
    const api = client(other.url, other.auth);
    for (let i = 0; i < 6; i++) expect((await api.arrow("/v1/table/t3/insert", rows(100 + i * 10, 110 + i * 10))).status).toBe(200);
    const compacted = await until(
      "a compaction by the new maintainer",
      () => api.post<{ small_fragments: number; last_job: { trigger: string; status: string } | null }>("/v1/table/t3/maintenance/health", {}),
      (r) => r.body.last_job?.trigger === "policy" && r.body.last_job.status === "succeeded",
    );
    expect(compacted.body.small_fragments).toBeLessThan(4);
  });
});
