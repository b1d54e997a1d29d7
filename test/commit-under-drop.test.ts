/**
 * A managed commit (CreateTableVersion) that a drop overtakes: the catalog held the table when the commit began, so
 * the commit is answered as made (ordered before the drop), and what it wrote where the table was (its manifest, the
 * record of who made it) goes as the drop's other files went. The catalog's look after the write runs beside the
 * audit entry and the record rather than before them, so this is what guards it. The drop is made on another
 * instance (this one's catalog still names the table when it records the commit). A proxy in front of the store
 * (Azurite, or moto's S3) holds the answer to the commit's read of the staged manifest until the drop is done: the
 * commit then publishes into the dropped table's directory.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { ErrorCode } from "@/lib/contract/errors";
import { parseRoot } from "@/server/storage/root";
import { openStore } from "@/server/storage/stores";
import type { ObjectStore } from "@/server/storage/object-store";
import { sharedStoreServer, type StoreServer } from "./store-server";
import { client, expectError, rows } from "./client";
import { startLatencyProxy, type LatencyProxy, type StoreRequest } from "./latency-proxy";
import { startServer, type TestServer } from "./server";

let storeServer: StoreServer;
let proxy: LatencyProxy;
let store: ObjectStore;
let server: TestServer;
let other: TestServer;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  storeServer = await sharedStoreServer();
  proxy = await startLatencyProxy(storeServer, 0);
  const root = (await storeServer.newRoot()).uri;
  // The test's own reads and writes go to the store directly, not through the proxy.
  store = openStore(parseRoot(root), storeServer.storageOptions);
  const env = { QUIVER_ROOT: root, QUIVER_STORAGE_OPTIONS: JSON.stringify(storeServer.storageOptionsVia(proxy.endpoint)), QUIVER_MANAGED_VERSIONING: "on" };
  [server, other] = await Promise.all([startServer(env), startServer(env)]);
});

afterAll(async () => {
  await Promise.all([server?.stop(), other?.stop()]);
  await proxy?.stop();
});

/**
 * A table of two versions whose second is taken back and staged as a writer that has not committed it yet would
 * stage it (named as Lance's client names a staged file); answers the staged file's key.
 */
async function stagedSecondVersion(table: string): Promise<string> {
  const api = client(server.url, server.auth);
  expect((await api.arrow(`/v1/table/${table}/create`, rows(0, 3))).status).toBe(200);
  expect((await api.arrow(`/v1/table/${table}/insert`, rows(3, 5))).status).toBe(200);
  const final = `${table}.lance/_versions/18446744073709551613.manifest`;
  const staged = `${final}-6f1d2c3b-0000-4000-8000-000000000000`;
  await store.put(staged, (await store.get(final))!);
  await store.delete(final);
  return staged;
}

it("answers a managed commit overtaken by a drop as made, and leaves nothing of the dropped table behind", async () => {
  const api = client(server.url, server.auth);
  const staged = await stagedSecondVersion("late");

  const stagedRead = (r: StoreRequest) => r.kind === "read" && r.path.endsWith(staged);
  const release = proxy.holdAnswers(stagedRead);
  proxy.reset();
  const commit = api.post<{ version: { version: number } }>("/v1/table/late/version/create", { version: 2, manifest_path: staged });
  for (let i = 0; i < 250 && !proxy.requests().some(stagedRead); i++) await sleep(20);
  expect(proxy.requests().some(stagedRead)).toBe(true);
  expect((await client(other.url, other.auth).post("/v1/table/late/drop", {})).status).toBe(200);
  release();

  const answered = await commit;
  expect(answered.status, JSON.stringify(answered.body)).toBe(200);
  expect(answered.body.version.version).toBe(2);
  // The commit's manifest and its record went with the table.
  expect(await store.list("late.lance/")).toEqual([]);
  expect(await store.list(".quiver/versions/late.lance/")).toEqual([]);
  expectError(await api.post("/v1/table/late/describe", {}), 404, ErrorCode.TableNotFound);
  expect((await api.get<{ tables: string[] }>("/v1/table")).body.tables).toEqual([]);
});

it("refuses a managed commit to a table another instance dropped before it began, and leaves no claim of it behind", async () => {
  const api = client(server.url, server.auth);
  const staged = await stagedSecondVersion("gone");
  // This instance's last look at the catalog still names the table; the other drops it.
  expect((await client(other.url, other.auth).post("/v1/table/gone/drop", {})).status).toBe(200);
  const claims = () => store.list(".quiver/requests/");
  const before = await claims();
  // The claim is written beside the commit's first reads; held back, the refusal waits for it rather than leaving it
  // to land after the request has ended (with nothing left to let it go).
  const claim = (r: StoreRequest) => r.kind === "write" && r.path.endsWith(".claim");
  const release = proxy.holdAnswers(claim);
  proxy.reset();
  const committing = api.post("/v1/table/gone/version/create", { version: 2, manifest_path: staged }, { "x-request-id": "commit-to-a-dropped-table" });
  for (let i = 0; i < 250 && !proxy.requests().some(claim); i++) await sleep(20);
  expect(proxy.requests().some(claim)).toBe(true);
  const first = await Promise.race([committing.then(() => "answered"), sleep(500).then(() => "waiting for its claim")]);
  release();
  expect(first).toBe("waiting for its claim");
  expectError(await committing, 404, ErrorCode.TableNotFound);
  // The claim written beside the commit's first reads was let go with the refusal.
  expect(await claims()).toEqual(before);
});
