/**
 * Writes applied exactly once when an instance dies at the worst moment or a client retries: two instances on one
 * root behind a load balancer that behaves as nginx does (a request whose instance died is answered 502). On a local
 * root the instance kills itself the moment its commit has landed (QUIVER_FAILPOINTS); on an object store a proxy holds the
 * store's answer to the commit's manifest, and the instance is killed while it waits for it. Either way the commit is
 * in the store and nothing else is: no answer, no record of it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import type { Table } from "apache-arrow";
import { client, rows, until, type Reply } from "./client";
import { testStore } from "./store-server";
import { startLatencyProxy, type LatencyProxy, type StoreRequest } from "./latency-proxy";
import { startLoadBalancer, type LoadBalancer } from "./load-balancer";
import { isStopped, keyOf, onObjectStore, startServer, storeOf, type TestServer } from "./server";

/** A killed instance's unanswered write is taken for stopped after this long without a sign of it. */
const LEASE_MS = 1000;
const LEASE = { QUIVER_WRITE_LEASE: `${LEASE_MS}ms` };
/** The tables whose commits kill the dying instance on a local root. */
const VICTIMS = [
  "killed_insert",
  "killed_earlier_build",
  "killed_update",
  "killed_index",
  "killed_client",
  "killed_version",
  "killed_then_again",
  "killed_keyed",
  "killed_batch_first",
  "killed_batch_last",
  "abandoned_batch",
];
const BACK_TO_BACK = "back_to_back";
const APART = "killed_apart";
const ALIKE = "killed_alike";
const HELD = "held_update";
/** The first table of a batch whose instance dies the moment the batch's versions appeared, before it answered. */
const RELEASED = "killed_batch_released";
/** The batches whose instance pauses before it applies the operation on that table: the first, and the second. */
const PAUSED_CLAIMED = ["paused_batch_claimed", "paused_batch_claimed_b"] as const;
const PAUSED_HALF = ["paused_batch_half", "paused_batch_half_b"] as const;
/** The batch whose instance pauses once it published the first table's version, and that nobody sends again. */
const PAUSED_UNSENT = ["paused_batch_unsent", "paused_batch_unsent_b"] as const;
/** Batches that change the catalog too (mixedBatch), whose instance dies before or after the batch's decision, or pauses before it. */
const MIXED_BEFORE = "mixed_before";
const MIXED_AFTER = "mixed_after";
const MIXED_UNSENT = "mixed_unsent";
const MIXED_PAUSED = "mixed_paused";
const MIXED_ABORTED = "mixed_aborted";
/**
 * The dying instance's failpoints on any root: the second write to BACK_TO_BACK that commits is held before it records
 * or answers anything, and the instance dies once the third write's claim is in the ledger; it dies once the first
 * write to APART has claimed; once a batch whose first table is RELEASED let its versions appear; and in the
 * batches that change the catalog, before or after their decision. It pauses in the batches above.
 */
const ON_ANY_ROOT = [
  `hold-before-answer:${BACK_TO_BACK}@2`,
  `kill-after-claim:${BACK_TO_BACK}@3`,
  `kill-after-claim:${APART}`,
  `kill-after-batch:${RELEASED}`,
  `pause-in-batch:${PAUSED_CLAIMED[0]}`,
  `pause-in-batch:${PAUSED_HALF[1]}`,
  `pause-in-batch:${PAUSED_UNSENT[1]}`,
  `kill-before-batch-decision:${MIXED_BEFORE}_v`,
  `kill-before-batch-decision:${MIXED_UNSENT}_v`,
  `kill-after-batch-decision:${MIXED_AFTER}_v`,
  `pause-before-batch-decision:${MIXED_PAUSED}_v`,
  `pause-before-batch-decision:${MIXED_ABORTED}_v`,
];

let dying: TestServer;
let other: TestServer;
let root: string;
let proxy: LatencyProxy | undefined;
let lb: LoadBalancer;

/** Starts the instance that dies (again, on the same port, after it did), with its failpoints. */
async function startDying(port?: number, failpoints = onObjectStore ? ON_ANY_ROOT : [...VICTIMS.map((t) => `kill-after-commit:${t}`), ...ON_ANY_ROOT]) {
  const store: Record<string, string> = onObjectStore ? { QUIVER_STORAGE_OPTIONS: JSON.stringify(testStore().storageOptionsVia(proxy!.endpoint)) } : {};
  dying = await startServer({ ...LEASE, ...store, QUIVER_FAILPOINTS: failpoints.join(",") }, { root, port });
}

beforeAll(async () => {
  other = await startServer(LEASE);
  root = other.root;
  if (onObjectStore) proxy = await startLatencyProxy(testStore(), 0);
  await startDying();
  lb = await startLoadBalancer([dying.url, other.url]);
});
afterAll(async () => {
  await lb?.stop();
  await Promise.all([dying?.stop(), other?.stop()]);
  await proxy?.stop();
});
afterEach(async () => {
  // A test that failed while the instance was paused leaves it running again; one that killed it has it started
  // again on its port, as a supervisor would, for the next test.
  try {
    process.kill(dying.pid, "SIGCONT");
  } catch {
    // Not running: killed.
  }
  if (
    await fetch(`${dying.url}/healthz`).then(
      () => false,
      () => true,
    )
  )
    await startDying(Number(new URL(dying.url).port));
});

/**
 * Runs `write` against the dying instance and makes it die once the commit of `table` has landed: on an object store, the
 * proxy holds the store's answer to the manifest's write, and the instance is killed while it waits for it.
 */
async function killedAfterCommit<T>(table: string, write: () => Promise<T>): Promise<T | Error> {
  const manifest = (r: StoreRequest) => r.kind === "write" && r.path.includes(`/${table}.lance/_versions/`) && r.path.endsWith(".manifest");
  const release = proxy?.holdAnswers(manifest);
  const writing = write().catch((err: Error) => err);
  if (proxy) {
    for (const deadline = Date.now() + 30_000; !proxy.requests().some(manifest); await new Promise((r) => setTimeout(r, 5))) {
      if (Date.now() > deadline) throw new Error(`no commit of ${table} reached the store`);
    }
    await dying.kill();
    release!();
  }
  return writing;
}

/** The claims in the write ledger, each with its key in the store, the request id it was sent under and its marker among writes of its body. */
async function ledgerClaimFiles() {
  const store = storeOf(other);
  const keys = (await store.list(".quiver/requests/")).filter((k) => k.endsWith(".claim") && !k.includes("/same-body/"));
  type Claim = { requestId: string; marker?: string; since?: number; shape: { named?: true } };
  return Promise.all(keys.map(async (key) => ({ key, claim: JSON.parse((await store.get(key))!.toString()) as Claim })));
}

const ledgerClaims = async () => (await ledgerClaimFiles()).map((file) => file.claim);

/** Sends rows to the other instance, as a client sends them again after a 502: its answer's status, version and whether it was an earlier attempt's. */
async function sendAgain(table: string, body: Table, headers: Record<string, string>) {
  const reply = await client(other.url, other.auth).arrow(`/v1/table/${table}/insert`, body, headers);
  return { status: reply.status, version: reply.body.version, replayed: reply.headers.get("idempotent-replayed") === "true" };
}

/** Two inserts alike (as many rows), one an instance only claimed and one it committed, as the tests below make them. */
const twoAlike = () => ({ claimed: rows(100, 200), committed: rows(200, 300) });

/** The table's latest version, as the other instance reads it. */
const latestVersion = async (table: string) =>
  (await client(other.url, other.auth).post<{ version: { version: number } }>(`/v1/table/${table}/version/describe`, {})).body.version.version;

/**
 * Sends both writes again under new request ids, as LanceDB's client does after a 502, the one only claimed first:
 * each one's answer, and the rows of each in the table.
 */
async function bothSentAgain(table: string, writes: ReturnType<typeof twoAlike>) {
  const retry = (name: keyof typeof writes) => sendAgain(table, writes[name], { "x-request-id": `${table}-${name}-retry` });
  const retried = { claimed: await retry("claimed"), committed: await retry("committed") };
  const rowsIn = async (from: number) =>
    (await client(other.url, other.auth).post<number>(`/v1/table/${table}/count_rows`, { predicate: `id >= ${from} AND id < ${from + 100}` })).body;
  return { ...retried, rows: { claimed: await rowsIn(100), committed: await rowsIn(200) } };
}

const count = async (table: string) => (await client(other.url, other.auth).post(`/v1/table/${table}/count_rows`, {})).body;

/**
 * A table at version 1 whose version 2 (two more rows) is staged as a managed table's writer stages it: made, then
 * taken back with its record. Answers the staged manifest's key, the key it is published at, and its path in answers.
 */
async function withStagedVersion2(table: string) {
  const api = client(other.url, other.auth);
  expect((await api.arrow(`/v1/table/${table}/create`, rows(0, 3))).status).toBe(200);
  expect((await api.arrow(`/v1/table/${table}/insert`, rows(3, 5))).status).toBe(200);
  const store = storeOf(other);
  const described = await api.post<{ version: { manifest_path: string } }>(`/v1/table/${table}/version/describe`, {});
  const final = keyOf(other, described.body.version.manifest_path);
  const staged = final.replace(/\/_versions\/.*$/, "/_versions/2.manifest-staged");
  await store.put(staged, (await store.get(final))!);
  await store.delete(final);
  await store.delete(`.quiver/versions/${final.replace(/\/_versions\/.*$/, "")}/main/2.json`);
  return { staged, final, manifestPath: described.body.version.manifest_path };
}

/** Whether each staged version is published now: its manifest at the key a version is published at. */
const publishedNow = (staged: Array<{ final: string }>) => Promise.all(staged.map(async ({ final }) => (await storeOf(other).get(final)) !== null));

/** A batch's answer as each version's number and manifest path, and what that is for versions 2 staged as `staged`. */
const versionsAnswered = (body: { versions: Array<{ version: number; manifest_path: string }> }) => body.versions.map((v) => [v.version, v.manifest_path]);
const asStaged = (staged: Array<{ manifestPath: string }>) => staged.map((s) => [2, s.manifestPath]);

/** Each table's versions as readers through the catalog see them. */
const versionsListed = (tables: readonly string[]) =>
  Promise.all(
    tables.map(async (t) =>
      (await client(other.url, other.auth).post<{ versions: Array<{ version: number }> }>(`/v1/table/${t}/version/list`)).body.versions.map((v) => v.version),
    ),
  );

/** A batch's answer: each version and its manifest path. */
type BatchAnswer = { versions: Array<{ version: number; manifest_path: string }> };

/**
 * Sends a batch of two tables' staged versions 2 to the dying instance, whose failpoint pauses it in the batch:
 * the staged versions, the batch's body and headers, and its answer to come, once the instance has paused.
 */
async function pausedBatch(tables: readonly [string, string]) {
  const staged = [await withStagedVersion2(tables[0]), await withStagedVersion2(tables[1])];
  const body = { entries: tables.map((table, i) => ({ id: [table], version: 2, manifest_path: staged[i].staged })) };
  const headers = { "x-request-id": `${tables[0]}-1` };
  const first = client(dying.url, dying.auth)
    .post<BatchAnswer>("/v1/table/version/batch-create", body, headers)
    .catch((err: Error) => err);
  await until("the instance paused in the batch", async () => isStopped(dying.pid), Boolean, 30_000, 10);
  return { staged, body, headers, first };
}

/** Wakes the paused instance: its attempt answers the staged versions, readers see both, and each table has 5 rows. */
async function wokenAnswersStaged(first: Promise<Reply<BatchAnswer> | Error>, tables: readonly string[], staged: Array<{ manifestPath: string }>) {
  process.kill(dying.pid, "SIGCONT");
  const woken = await first;
  expect(woken).not.toBeInstanceOf(Error);
  if (woken instanceof Error) return;
  expect(woken.status, JSON.stringify(woken.body)).toBe(200);
  expect(versionsAnswered(woken.body)).toEqual(asStaged(staged));
  expect(await versionsListed(tables)).toEqual([
    [1, 2],
    [1, 2],
  ]);
  for (const table of tables) expect(await count(table)).toBe(5);
}

/** Waits until readers through the catalog see a held batch's tables change (a reader finished it), and answers what they saw then. */
const finishedByReader = (tables: readonly string[]) =>
  until(
    "the batch finished",
    () => versionsListed(tables),
    (seen) => JSON.stringify(seen) !== "[[1],[1]]",
    20_000,
    50,
  );

/** Who each table's version 2 is recorded as made by, and the audit log's entries of a batch's request id. */
async function finishedRecords(tables: readonly string[], requestId: string) {
  const store = storeOf(other);
  const authors = await Promise.all(
    tables.map(async (t) => {
      const record = await store.get(`.quiver/versions/${t}.lance/main/2.json`);
      const parsed = record && (JSON.parse(record.toString("utf8")) as { version: number; principal: { id: string }; operation: string });
      return parsed && { version: parsed.version, principal: parsed.principal.id, operation: parsed.operation };
    }),
  );
  const { body } = await client(other.url, other.auth).get<{
    entries: Array<{ requestId: string; action: string; outcome: string; status: number; detail?: string }>;
  }>("/v1/admin/audit?action=BatchCreateTableVersions");
  const audit = body.entries
    .filter((e) => e.requestId === requestId)
    .map((e) => ({ action: e.action, outcome: e.outcome, status: e.status, finishedByReader: e.detail?.includes("by a reader") === true }));
  return { authors, audit };
}

/** Waits until what a batch of staged versions leaves until its answer is recorded (staged manifests, its hold) is gone. */
async function batchTidied(tables: readonly string[], staged: Array<{ staged: string }>) {
  const store = storeOf(other);
  const holds = async () => (await Promise.all(tables.map((t) => store.list(`${t}.lance/_versions/`)))).flat().filter((k) => k.includes(".quiver-batch-"));
  const left = async () => [...(await Promise.all(staged.map((s) => store.head(s.staged)))), ...(await store.list(".quiver/batches/")), ...(await holds())];
  expect(await until("the batch's staged manifests and holds tidied", left, (found) => found.every((x) => x === null), 10_000, 20)).toEqual(
    staged.map(() => null),
  );
}

describe("an instance killed after its commit landed and before it answered", () => {
  it("the client's retry with the same request id through another instance answers the same version; the rows are there once", async () => {
    const api = client(other.url, other.auth);
    expect((await api.arrow("/v1/table/killed_insert/create", rows(0, 10))).status).toBe(200);
    const toDying = client(dying.url, dying.auth);
    const first = await killedAfterCommit("killed_insert", () =>
      toDying.arrow("/v1/table/killed_insert/insert", rows(10, 15), { "x-request-id": "killed-insert-1" }),
    );
    expect(first).toBeInstanceOf(Error);
    proxy?.reset();
    const retry = await api.arrow("/v1/table/killed_insert/insert", rows(10, 15), { "x-request-id": "killed-insert-1" });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ version: 2, num_inserted_rows: 5 });
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await count("killed_insert")).toBe(15);
    // Asked again, it answers the same from the record the retry left.
    expect((await api.arrow("/v1/table/killed_insert/insert", rows(10, 15), { "x-request-id": "killed-insert-1" })).body.version).toBe(2);
    expect(await count("killed_insert")).toBe(15);
  });

  it("a claim an earlier build left (its commit names no request): the retry is answered that it cannot be told, and commits nothing", async () => {
    const api = client(other.url, other.auth);
    expect((await api.arrow("/v1/table/killed_earlier_build/create", rows(0, 10))).status).toBe(200);
    const toDying = client(dying.url, dying.auth);
    const first = await killedAfterCommit("killed_earlier_build", () =>
      toDying.arrow("/v1/table/killed_earlier_build/insert", rows(10, 15), { "x-request-id": "earlier-build-1" }),
    );
    expect(first).toBeInstanceOf(Error);
    proxy?.reset();
    // The claim as a build before guarded commits wrote it: no `named`, no `since`; nothing but the history to go by.
    const dead = (await ledgerClaimFiles()).find((file) => file.claim.requestId === "earlier-build-1")!;
    const { since: _since, ...earlier } = dead.claim;
    delete earlier.shape.named;
    await storeOf(other).put(dead.key, JSON.stringify(earlier));
    const retry = await api.arrow("/v1/table/killed_earlier_build/insert", rows(10, 15), { "x-request-id": "earlier-build-1" });
    expect(retry.status, JSON.stringify(retry.body)).toBe(409);
    expect(retry.body.error).toMatch(/earlier build of Quiver/);
    expect(await count("killed_earlier_build")).toBe(15);
    expect(await latestVersion("killed_earlier_build")).toBe(2);
  });

  it("a version a client staged (CreateTableVersion): the retry with the same request id answers the version the first published", async () => {
    const { staged, final, manifestPath } = await withStagedVersion2("killed_version");
    const body = { version: 2, manifest_path: staged };
    const toDying = client(dying.url, dying.auth);
    const first = await killedAfterCommit("killed_version", () =>
      toDying.post("/v1/table/killed_version/version/create", body, { "x-request-id": "killed-version-1" }),
    );
    expect(first).toBeInstanceOf(Error);
    expect(await storeOf(other).get(final)).not.toBeNull();
    const retry = await client(other.url, other.auth).post<{ version: { version: number; manifest_path: string } }>(
      "/v1/table/killed_version/version/create",
      body,
      { "x-request-id": "killed-version-1" },
    );
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.version).toMatchObject({ version: 2, manifest_path: manifestPath });
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await count("killed_version")).toBe(5);
  });

  for (const [killedAt, tables] of [
    ["the first table's version", ["killed_batch_first", "killed_batch_first_b"]],
    ["the last table's version", ["killed_batch_last_a", "killed_batch_last"]],
    ["both and let them appear", [RELEASED, "killed_batch_released_b"]],
  ] as const) {
    it(`a batch of staged versions killed once it published ${killedAt}: the retry finishes it, each version published once, all seen together`, async () => {
      const api = client(other.url, other.auth);
      const staged = [await withStagedVersion2(tables[0]), await withStagedVersion2(tables[1])];
      const body = { entries: tables.map((table, i) => ({ id: [table], version: 2, manifest_path: staged[i].staged })) };
      const released = tables[0] === RELEASED;
      const victim = killedAt.startsWith("the first") ? tables[0] : tables[1];
      const toDying = client(dying.url, dying.auth);
      const send = () => toDying.post("/v1/table/version/batch-create", body, { "x-request-id": `${victim}-1` });
      // The batch that let its versions appear dies of its failpoint on any root.
      const first = released ? await send().catch((err: Error) => err) : await killedAfterCommit(victim, send);
      expect(first).toBeInstanceOf(Error);
      proxy?.reset();
      const published = await publishedNow(staged);
      expect(published).toEqual(killedAt.startsWith("the first") ? [true, false] : [true, true]);
      // Readers through the catalog see neither version while the batch's hold stands, and both once it ended.
      const listed = () => versionsListed(tables);
      expect(await listed()).toEqual(
        released
          ? [
              [1, 2],
              [1, 2],
            ]
          : [[1], [1]],
      );
      const retry = await api.post<{ versions: Array<{ version: number; manifest_path: string }> }>("/v1/table/version/batch-create", body, {
        "x-request-id": `${victim}-1`,
      });
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(versionsAnswered(retry.body)).toEqual(asStaged(staged));
      expect(await listed()).toEqual([
        [1, 2],
        [1, 2],
      ]);
      for (const table of tables) expect(await count(table)).toBe(5);
      // Asked again, it answers the same from the record the retry left, and publishes nothing.
      const again = await api.post<{ versions: Array<{ version: number }> }>("/v1/table/version/batch-create", body, { "x-request-id": `${victim}-1` });
      expect(again.body.versions.map((v) => v.version)).toEqual([2, 2]);
      expect(await listed()).toEqual([
        [1, 2],
        [1, 2],
      ]);
      await batchTidied(tables, staged);
    });
  }

  it("an update's retry answers the first's count, and the update is applied once", async () => {
    const api = client(other.url, other.auth);
    expect((await api.arrow("/v1/table/killed_update/create", rows(0, 10))).status).toBe(200);
    const update = { predicate: "id < 4", updates: [["x", "x + 1000"]] };
    const toDying = client(dying.url, dying.auth);
    const first = await killedAfterCommit("killed_update", () => toDying.post("/v1/table/killed_update/update", update, { "x-request-id": "killed-update-1" }));
    expect(first).toBeInstanceOf(Error);
    const retry = await api.post("/v1/table/killed_update/update", update, { "x-request-id": "killed-update-1" });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ version: 2, updated_rows: 4 });
    expect((await api.post("/v1/table/killed_update/count_rows", { predicate: "x >= 1000" })).body).toBe(4);
    expect((await api.post("/v1/table/killed_update/count_rows", { predicate: "x >= 2000" })).body).toBe(0);
  });

  it("an index build's retry answers the first's version, and the index is built once", async () => {
    const api = client(other.url, other.auth);
    expect((await api.arrow("/v1/table/killed_index/create", rows(0, 10))).status).toBe(200);
    const build = { column: "id", index_type: "BTREE", name: "id_idx" };
    const toDying = client(dying.url, dying.auth);
    const first = await killedAfterCommit("killed_index", () =>
      toDying.post("/v1/table/killed_index/create_index", build, { "x-request-id": "killed-index-1" }),
    );
    expect(first).toBeInstanceOf(Error);
    const retry = await api.post("/v1/table/killed_index/create_index", build, { "x-request-id": "killed-index-1" });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    // Built again (the index replaced), it would have made version 3.
    expect(await latestVersion("killed_index")).toBe(2);
    const listed = await api.post<{ indexes: Array<{ index_name: string }> }>("/v1/table/killed_index/index/list", {});
    expect(listed.body.indexes.map((i) => i.index_name)).toEqual(["id_idx"]);
    // Its drop, killed the same way: the retry is answered as dropped, not refused for a missing index.
    await startDying(Number(new URL(dying.url).port));
    const drop = () => client(dying.url, dying.auth).post("/v1/table/killed_index/index/id_idx/drop", {}, { "x-request-id": "killed-index-2" });
    expect(await killedAfterCommit("killed_index", drop)).toBeInstanceOf(Error);
    const dropRetry = await api.post("/v1/table/killed_index/index/id_idx/drop", {}, { "x-request-id": "killed-index-2" });
    expect(dropRetry.status, JSON.stringify(dropRetry.body)).toBe(200);
    expect(await latestVersion("killed_index")).toBe(3);
    expect((await api.post<{ indexes: unknown[] }>("/v1/table/killed_index/index/list", {})).body.indexes).toEqual([]);
  });

  it("LanceDB's client, retrying the insert after the load balancer's 502 under a new request id, is answered with the first's version; the rows are there once", async () => {
    const api = client(other.url, other.auth);
    expect((await api.arrow("/v1/table/killed_client/create", rows(0, 10))).status).toBe(200);
    // The client's first insert goes to the instance that dies; anything after it to the other.
    let sent = false;
    lb.send((r) => r.path.includes("killed_client/insert") && !sent && (sent = true), 0);
    lb.send((r) => r.path.includes("killed_client/insert") && sent, 1);
    const db = await lancedb.connect("db://default", { apiKey: other.adminKey, hostOverride: lb.url });
    const table = await db.openTable("killed_client");
    const added = await killedAfterCommit("killed_client", () => table.add(rows(10, 30)));
    expect(added).toEqual({ version: 2 });
    const inserts = lb.passed().filter((r) => r.path.includes("killed_client/insert"));
    // The instance died before answering: the client saw a 502 and sent the same rows again, under a new id.
    expect(inserts.map((r) => [r.upstream, r.status])).toEqual([
      [0, 502],
      [1, 200],
    ]);
    expect(inserts[0].requestId).not.toBe(inserts[1].requestId);
    expect(await count("killed_client")).toBe(30);
  });
});

describe("a batch of staged versions killed part-way that its client never sends again", () => {
  it("is finished by a reader that meets its hold after the lease: both versions appear together, each once", async () => {
    const tables = ["abandoned_batch", "abandoned_batch_b"];
    const staged = [await withStagedVersion2(tables[0]), await withStagedVersion2(tables[1])];
    const body = { entries: tables.map((table, i) => ({ id: [table], version: 2, manifest_path: staged[i].staged })) };
    const send = (to: TestServer) => client(to.url, to.auth).post("/v1/table/version/batch-create", body, { "x-request-id": "abandoned-batch-1" });
    expect(await killedAfterCommit(tables[0], () => send(dying))).toBeInstanceOf(Error);
    proxy?.reset();
    expect(await publishedNow(staged)).toEqual([true, false]);
    expect(await versionsListed(tables)).toEqual([[1], [1]]);
    // The transaction, by the id its answer would have given (its key in the ledger), is under way.
    const { key } = (await ledgerClaimFiles()).find((file) => file.claim.requestId === "abandoned-batch-1")!;
    const transaction = async () =>
      (await client(other.url, other.auth).post<{ status: string }>(`/v1/transaction/${key.split("/")[2]}/describe`, {})).body.status;
    expect(await transaction()).toBe("Running");
    // Once the lease has passed, a reader meeting the hold has the batch finished; readers see nothing in between.
    expect(await finishedByReader(tables)).toEqual([
      [1, 2],
      [1, 2],
    ]);
    expect(await publishedNow(staged)).toEqual([true, true]);
    expect(await transaction()).toBe("Succeeded");
    for (const table of tables) expect(await count(table)).toBe(5);
    // Each version is recorded as the batch's caller's, and the batch has its audit entry, as its answer would have written them.
    expect(
      await until(
        "the finished batch's records",
        () => finishedRecords(tables, "abandoned-batch-1"),
        (r) => r.audit.length > 0,
        10_000,
        50,
      ),
    ).toEqual({
      authors: tables.map(() => ({ version: 2, principal: "admin", operation: "BatchCreateTableVersions" })),
      audit: [{ action: "BatchCreateTableVersions", outcome: "ok", status: 200, finishedByReader: true }],
    });
    // The client's retry, should it come after all, answers those versions and publishes nothing again.
    const retry = await send(other);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(versionsAnswered(retry.body as BatchAnswer)).toEqual(asStaged(staged));
    expect(await versionsListed(tables)).toEqual([
      [1, 2],
      [1, 2],
    ]);
    await batchTidied(tables, staged);
  });
});

/**
 * A batch that changes the catalog as well as tables (BatchCommitTables): `<name>_v`'s staged version 2, a declare of
 * `new` in namespace `<name>_ns` (a root-level declare's reserved directory is a table to the root's listing from the
 * moment it is reserved, as in Lance's directory namespace), a deletion of `<name>_old`'s version 1 (of 2), and a
 * deregister of `<name>_gone`.
 */
async function mixedBatch(name: string) {
  const api = client(other.url, other.auth);
  const staged = await withStagedVersion2(`${name}_v`);
  expect((await api.arrow(`/v1/table/${name}_old/create`, rows(0, 2))).status).toBe(200);
  expect((await api.arrow(`/v1/table/${name}_old/insert`, rows(2, 3))).status).toBe(200);
  expect((await api.arrow(`/v1/table/${name}_gone/create`, rows(0, 2))).status).toBe(200);
  expect((await api.post(`/v1/namespace/${name}_ns/create`, {})).status).toBe(200);
  const body = {
    operations: [
      { create_table_version: { id: [`${name}_v`], version: 2, manifest_path: staged.staged } },
      { declare_table: { id: [`${name}_ns`, "new"], properties: { owner: "etl" } } },
      { delete_table_versions: { id: [`${name}_old`], ranges: [{ start_version: 1, end_version: 2 }] } },
      { deregister_table: { id: [`${name}_gone`] } },
    ],
  };
  const send = (to: TestServer) =>
    client(to.url, to.auth).post<{ results: Array<Record<string, Record<string, unknown>>> }>("/v1/table/batch-commit", body, { "x-request-id": `${name}-1` });
  return { staged, send };
}

/** What readers through the catalog see of a mixed batch's tables. */
async function mixedSeen(name: string) {
  const api = client(other.url, other.auth);
  const [[v], [old]] = [await versionsListed([`${name}_v`]), await versionsListed([`${name}_old`])];
  const declared = (await api.post(`/v1/table/${name}_ns$new/describe`, {})).status === 200;
  const deregistered = (await api.post(`/v1/table/${name}_gone/describe`, {})).status === 404;
  return { v, declared, deregistered, old };
}
const MIXED_UNTOUCHED = { v: [1], declared: false, deregistered: false, old: [1, 2] };
const MIXED_APPLIED = { v: [1, 2], declared: true, deregistered: true, old: [2] };

/** A mixed batch's answer, each part as the test checks it. */
const mixedAnswer = (body: { results: Array<Record<string, Record<string, unknown>>> }) => {
  const [created, declared, deleted, deregistered] = body.results;
  return [
    (created.create_table_version?.version as { version: number } | undefined)?.version,
    declared.declare_table?.properties,
    deleted.delete_table_versions?.deleted_count,
    typeof deregistered.deregister_table?.location,
  ];
};
const MIXED_ANSWER = [2, { owner: "etl" }, 1, "string"];

describe("a batch that changes the catalog as well as tables, its instance stopped part-way", () => {
  for (const [killedAt, name] of [
    ["before its decision, its version published", MIXED_BEFORE],
    ["after its decision, before its deletions and its versions' release", MIXED_AFTER],
  ] as const) {
    it(`killed ${killedAt}: the retry finishes it, each part applied once, and readers see it whole or not at all`, async () => {
      const { staged, send } = await mixedBatch(name);
      expect(await send(dying).catch((err: Error) => err)).toBeInstanceOf(Error);
      expect(await publishedNow([staged])).toEqual([true]);
      // Before the decision nothing of it is seen; from the decision on, all but the deletion, which trails it.
      const decided = name === MIXED_AFTER;
      expect(await mixedSeen(name)).toEqual(decided ? { ...MIXED_APPLIED, old: [1, 2] } : MIXED_UNTOUCHED);
      const retry = await send(other);
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(mixedAnswer(retry.body)).toEqual(MIXED_ANSWER);
      expect(await mixedSeen(name)).toEqual(MIXED_APPLIED);
      expect(await count(`${name}_v`)).toBe(5);
      const again = await send(other);
      expect(again.status).toBe(200);
      expect(mixedAnswer(again.body)).toEqual(MIXED_ANSWER);
      expect(await versionsListed([`${name}_v`])).toEqual([[1, 2]]);
    });
  }

  it("killed before its decision and not sent again: a reader that meets its hold after the lease finishes it whole", async () => {
    const { staged, send } = await mixedBatch(MIXED_UNSENT);
    expect(await send(dying).catch((err: Error) => err)).toBeInstanceOf(Error);
    expect(await mixedSeen(MIXED_UNSENT)).toEqual(MIXED_UNTOUCHED);
    // The transaction, by the id its answer would have given, is under way until the batch is decided.
    const { key } = (await ledgerClaimFiles()).find((file) => file.claim.requestId === `${MIXED_UNSENT}-1`)!;
    const transaction = async () =>
      (await client(other.url, other.auth).post<{ status: string }>(`/v1/transaction/${key.split("/")[2]}/describe`, {})).body.status;
    expect(await transaction()).toBe("Running");
    // Reading the versioned table after the lease has the batch finished; once its declared table is seen, so is its version.
    await until(
      "the batch finished",
      () => mixedSeen(MIXED_UNSENT),
      (s) => s.declared,
      20_000,
      50,
    );
    expect((await mixedSeen(MIXED_UNSENT)).v).toEqual([1, 2]);
    expect(
      await until(
        "its deletion",
        () => mixedSeen(MIXED_UNSENT),
        (s) => s.old.length === 1,
        10_000,
        50,
      ),
    ).toEqual(MIXED_APPLIED);
    expect(await transaction()).toBe("Succeeded");
    expect(await publishedNow([staged])).toEqual([true]);
    const retry = await send(other);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(mixedAnswer(retry.body)).toEqual(MIXED_ANSWER);
  });

  it("paused before its decision for longer than its lease while its retry is answered elsewhere: woken, it answers the same and applies nothing again", async () => {
    const { send } = await mixedBatch(MIXED_PAUSED);
    const first = send(dying).catch((err: Error) => err);
    await until("the instance paused in the batch", async () => isStopped(dying.pid), Boolean, 30_000, 10);
    expect(await mixedSeen(MIXED_PAUSED)).toEqual(MIXED_UNTOUCHED);
    await new Promise((r) => setTimeout(r, 2 * LEASE_MS));
    const retry = await send(other);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(mixedAnswer(retry.body)).toEqual(MIXED_ANSWER);
    expect(await mixedSeen(MIXED_PAUSED)).toEqual(MIXED_APPLIED);
    process.kill(dying.pid, "SIGCONT");
    const woken = await first;
    expect(woken).not.toBeInstanceOf(Error);
    if (woken instanceof Error) return;
    expect(woken.status, JSON.stringify(woken.body)).toBe(200);
    expect(mixedAnswer(woken.body)).toEqual(MIXED_ANSWER);
    expect(await mixedSeen(MIXED_PAUSED)).toEqual(MIXED_APPLIED);
    expect(await count(`${MIXED_PAUSED}_v`)).toBe(5);
  });

  it("paused before its decision while another request changed a table it deregisters: its retry aborts it, and woken it finds it aborted", async () => {
    const { send } = await mixedBatch(MIXED_ABORTED);
    const api = client(other.url, other.auth);
    const first = send(dying).catch((err: Error) => err);
    await until("the instance paused in the batch", async () => isStopped(dying.pid), Boolean, 30_000, 10);
    // Another request deregisters the table the batch deregisters; the retry finds it changed and aborts the batch.
    expect((await api.post(`/v1/table/${MIXED_ABORTED}_gone/deregister`, {})).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2 * LEASE_MS));
    const retry = await send(other);
    expect(retry.status, JSON.stringify(retry.body)).toBe(409);
    expect(JSON.stringify(retry.body)).toMatch(/was changed by another request; nothing was changed/);
    // Registered again where it was, the table is as the batch checked it: the woken attempt must still not apply it.
    expect((await api.post(`/v1/table/${MIXED_ABORTED}_gone/register`, { location: `${MIXED_ABORTED}_gone.lance` })).status).toBe(200);
    process.kill(dying.pid, "SIGCONT");
    const woken = await first;
    expect(woken).not.toBeInstanceOf(Error);
    if (woken instanceof Error) return;
    expect(woken.status, JSON.stringify(woken.body)).toBe(409);
    expect(await mixedSeen(MIXED_ABORTED)).toEqual(MIXED_UNTOUCHED);
    expect(await count(`${MIXED_ABORTED}_v`)).toBe(3);
  });
});

describe("a batch of staged versions whose instance was paused for longer than its lease", () => {
  it("paused once it published the first table's version, and not sent again: a reader finishes it; woken, the first attempt answers those versions", async () => {
    const tables = PAUSED_UNSENT;
    const { staged, first } = await pausedBatch(tables);
    expect(await publishedNow(staged)).toEqual([true, false]);
    expect(await versionsListed(tables)).toEqual([[1], [1]]);
    expect(await finishedByReader(tables)).toEqual([
      [1, 2],
      [1, 2],
    ]);
    await wokenAnswersStaged(first, tables, staged);
    await batchTidied(tables, staged);
  });

  for (const [pausedAt, tables] of [
    ["once it claimed the batch", PAUSED_CLAIMED],
    ["once it published the first table's version", PAUSED_HALF],
  ] as const) {
    it(`paused ${pausedAt}: the retry elsewhere finishes it; woken, the first attempt neither publishes again nor takes back`, async () => {
      const api = client(other.url, other.auth);
      const { staged, body, headers, first } = await pausedBatch(tables);
      const published = await publishedNow(staged);
      expect(published).toEqual(tables === PAUSED_HALF ? [true, false] : [false, false]);
      expect(await versionsListed(tables)).toEqual([[1], [1]]);
      // The client gives up on the paused instance and sends the batch again elsewhere once its lease has run out.
      await new Promise((r) => setTimeout(r, 2 * LEASE_MS));
      const retry = await api.post<BatchAnswer>("/v1/table/version/batch-create", body, headers);
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(versionsAnswered(retry.body)).toEqual(asStaged(staged));
      expect(await versionsListed(tables)).toEqual([
        [1, 2],
        [1, 2],
      ]);
      await wokenAnswersStaged(first, tables, staged);
      const again = await api.post<{ versions: Array<{ version: number }> }>("/v1/table/version/batch-create", body, headers);
      expect(again.body.versions.map((v) => v.version)).toEqual([2, 2]);
      await batchTidied(tables, staged);
    });
  }
});

describe("the same rows sent again after an instance died", () => {
  const claimOf = async (requestId: string) => (await ledgerClaims()).find((c) => c.requestId === requestId);
  /**
   * Makes `table`, sends rows to the dying instance under `first` (a request id or an Idempotency-Key, as `header`
   * says) and kills it once they are committed; answers a sender of the same rows to the other instance, which gives
   * each answer's status, version and whether it was an earlier attempt's.
   */
  async function sameRowsAfterDeath(table: string, header: "x-request-id" | "idempotency-key", first: string) {
    const api = client(other.url, other.auth);
    expect((await api.arrow(`/v1/table/${table}/create`, rows(0, 10))).status).toBe(200);
    const send = (id: string, to = api) => to.arrow(`/v1/table/${table}/insert`, rows(10, 15), { [header]: id });
    expect(await killedAfterCommit(table, () => send(first, client(dying.url, dying.auth)).catch((err: Error) => err))).toBeInstanceOf(Error);
    return (id: string) => sendAgain(table, rows(10, 15), { [header]: id });
  }

  it("once a retry under a new request id has been answered for the first try, they are the caller's new write", async () => {
    const send = await sameRowsAfterDeath("killed_then_again", "x-request-id", "again-1");
    expect(await send("again-2")).toEqual({ status: 200, version: 2, replayed: true });
    // The first try's marker goes once the retry's answer is out: nothing is left to take a later write for.
    const marker = (await claimOf("again-1"))!.marker!;
    await until(
      "the first try's marker going",
      () => storeOf(other).head(marker),
      (info) => info === null,
      5000,
      50,
    );
    expect(await send("again-3")).toEqual({ status: 200, version: 3, replayed: false });
    expect(await count("killed_then_again")).toBe(20);
  });

  it("under another Idempotency-Key, they are a new write at once; under the first's key, its answer", async () => {
    const send = await sameRowsAfterDeath("killed_keyed", "idempotency-key", "keyed-1");
    // A request with a key of its own is never taken for another's retry, and leaves no marker among writes of its body.
    expect(await claimOf("keyed-1")).toMatchObject({ requestId: "keyed-1" });
    expect((await claimOf("keyed-1"))!.marker).toBeUndefined();
    expect(await send("keyed-2")).toEqual({ status: 200, version: 3, replayed: false });
    expect(await send("keyed-1")).toEqual({ status: 200, version: 2, replayed: true });
    expect(await count("killed_keyed")).toBe(20);
  });
});

describe("an instance killed between two writes to one table, the first committed and the second only claimed", () => {
  it("each retry under a new request id gets its own write's outcome: the one committed is answered with its version, the other is written", async () => {
    const api = client(other.url, other.auth);
    const toDying = client(dying.url, dying.auth);
    expect((await api.arrow(`/v1/table/${BACK_TO_BACK}/create`, rows(0, 10))).status).toBe(200);
    const insert = (body: Table, requestId: string) =>
      toDying.arrow(`/v1/table/${BACK_TO_BACK}/insert`, body, { "x-request-id": requestId }).catch((err: Error) => err);
    // A large write holds the table's turn while two writes alike (appends of as many rows, each over 8 MiB, so
    // committed on their own) wait for it. When it is done they commit one after the other, in one turn: the first
    // of them is held once committed and records nothing, the second claims the moment the first's commit returns,
    // and the instance dies before the second's commit.
    // The first request to the instance started again on its port may go out on a connection to the one killed
    // before, still in fetch's pool, and break on it before the server sees it (EPIPE): sent again under the same
    // request id, which the write ledger makes safe, as a client retrying a broken connection does.
    const aheadRows = rows(10_000_000, 11_200_000);
    const ahead = insert(aheadRows, "back-to-back-ahead").then((reply) =>
      reply instanceof Error && ["EPIPE", "ECONNRESET"].includes((reply.cause as { code?: string } | undefined)?.code ?? "")
        ? insert(aheadRows, "back-to-back-ahead")
        : reply,
    );
    await until("the write ahead claiming", ledgerClaims, (claims) => claims.some((c) => c.requestId === "back-to-back-ahead"), 30_000, 5);
    const writes = { one: rows(10, 400_010), two: rows(1_000_000, 1_400_000) };
    const sent = await Promise.all([insert(writes.one, "back-to-back-one"), insert(writes.two, "back-to-back-two")]);
    expect(sent.every((reply) => reply instanceof Error)).toBe(true);
    expect((await ahead) as unknown).toMatchObject({ status: 200, body: { version: 2 } });
    expect((await api.post<{ version: { version: number } }>(`/v1/table/${BACK_TO_BACK}/version/describe`, {})).body.version.version).toBe(3);
    const rowsOf = async (name: keyof typeof writes) => {
      const ids = writes[name].getChild("id")!;
      const predicate = `id >= ${ids.get(0)} AND id <= ${ids.get(ids.length - 1)}`;
      return (await api.post<number>(`/v1/table/${BACK_TO_BACK}/count_rows`, { predicate })).body;
    };
    const committed = (await rowsOf("one")) === 400_000 ? "one" : "two";
    const onlyClaimed = committed === "one" ? "two" : "one";
    expect(await rowsOf(onlyClaimed)).toBe(0);

    // As LanceDB's client retries after a 502: the same rows under a new request id, the one only claimed first.
    const retry = (name: keyof typeof writes) => sendAgain(BACK_TO_BACK, writes[name], { "x-request-id": `back-to-back-${name}-retry` });
    const retried = { onlyClaimed: await retry(onlyClaimed), committed: await retry(committed) };
    expect({ ...retried, rows: { one: await rowsOf("one"), two: await rowsOf("two") } }).toEqual({
      // The one only claimed is written now, the committed one answered with its version: each there once.
      onlyClaimed: { status: 200, version: 4, replayed: false },
      committed: { status: 200, version: 3, replayed: true },
      rows: { one: 400_000, two: 400_000 },
    });
  });
});

describe("two instances killed one after the other, the first once it claimed a write, the second after committing one alike", () => {
  it("the first's retry is written, not taken for the second's version; the second's retry is answered with that version", async () => {
    const api = client(other.url, other.auth);
    expect((await api.arrow(`/v1/table/${APART}/create`, rows(0, 10))).status).toBe(200);
    const writes = twoAlike();
    const insert = (name: keyof typeof writes, requestId: string, to = api) =>
      to.arrow(`/v1/table/${APART}/insert`, writes[name], { "x-request-id": requestId }).catch((err: Error) => err);
    // The instance dies once its write's claim is in the ledger.
    expect(await insert("claimed", "apart-claimed", client(dying.url, dying.auth))).toBeInstanceOf(Error);
    // Well over a lease later, another instance (this one started again) commits a write alike (as many rows) and
    // dies before anything records it: an unrecorded version made after the first claim, as that claim's would be.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 1.5));
    await startDying(Number(new URL(dying.url).port), [`hold-before-answer:${APART}`]);
    const committing = insert("committed", "apart-committed", client(dying.url, dying.auth));
    await until(
      "the second write committing",
      () => latestVersion(APART),
      (version) => version >= 2,
      30_000,
      20,
    );
    await dying.kill();
    expect(await committing).toBeInstanceOf(Error);

    expect(await bothSentAgain(APART, writes)).toEqual({
      claimed: { status: 200, version: 3, replayed: false },
      committed: { status: 200, version: 2, replayed: true },
      rows: { claimed: 100, committed: 100 },
    });
  });
});

describe("a retry under the same request id while the first attempt is still under way on another instance", () => {
  it("is applied at once there, and the update lands once", async () => {
    const api = client(other.url, other.auth);
    expect((await api.arrow(`/v1/table/${HELD}/create`, rows(0, 10))).status).toBe(200);
    const update = { predicate: "id < 4", updates: [["x", "x + 1000"]] };
    // The first attempt is held once claimed, its instance alive and silent, as a stalled commit's is.
    await dying.kill();
    await startDying(Number(new URL(dying.url).port), [`hold-after-claim:${HELD}`]);
    const first = client(dying.url, dying.auth)
      .post(`/v1/table/${HELD}/update`, update, { "x-request-id": "held-update" })
      .catch((err: Error) => err);
    await until("the first attempt's claim", ledgerClaims, (claims) => claims.some((c) => c.requestId === "held-update"), 30_000, 20);
    // No version names the request: the retry need not wait for the first to stop (it would wait in vain, 409).
    const retry = await api.post(`/v1/table/${HELD}/update`, update, { "x-request-id": "held-update" });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ version: 2, updated_rows: 4 });
    await dying.kill();
    expect(await first).toBeInstanceOf(Error);
    expect((await api.post(`/v1/table/${HELD}/count_rows`, { predicate: "x >= 1000" })).body).toBe(4);
    expect((await api.post(`/v1/table/${HELD}/count_rows`, { predicate: "x >= 2000" })).body).toBe(0);
    const again = await api.post(`/v1/table/${HELD}/update`, update, { "x-request-id": "held-update" });
    expect({ status: again.status, version: again.body.version }).toEqual({ status: 200, version: 2 });
  });
});

describe("two writes alike on two instances killed together, the first only claimed while the second committed", () => {
  it("the first's retry is written, not taken for the second's version made while the first was under way", async () => {
    const api = client(other.url, other.auth);
    expect((await api.arrow(`/v1/table/${ALIKE}/create`, rows(0, 10))).status).toBe(200);
    const writes = twoAlike();
    // The first write is held once claimed, its lease renewed all the while, as a stalled commit's is.
    await dying.kill();
    await startDying(Number(new URL(dying.url).port), [`hold-after-claim:${ALIKE}`]);
    const claiming = client(dying.url, dying.auth)
      .arrow(`/v1/table/${ALIKE}/insert`, writes.claimed, { "x-request-id": "alike-claimed" })
      .catch((err: Error) => err);
    await until("the first write's claim", ledgerClaims, (claims) => claims.some((c) => c.requestId === "alike-claimed"), 30_000, 20);
    // Meanwhile a third instance commits a write of as many rows, and is held before it records or answers it.
    const third = await startServer({ ...LEASE, QUIVER_FAILPOINTS: `hold-before-answer:${ALIKE}` }, { root });
    try {
      const committing = client(third.url, third.auth)
        .arrow(`/v1/table/${ALIKE}/insert`, writes.committed, { "x-request-id": "alike-committed" })
        .catch((err: Error) => err);
      await until(
        "the second write committing",
        () => latestVersion(ALIKE),
        (version) => version >= 2,
        30_000,
        20,
      );
      await third.kill();
      await dying.kill();
      expect(await committing).toBeInstanceOf(Error);
      expect(await claiming).toBeInstanceOf(Error);
    } finally {
      await third.stop();
    }

    expect(await bothSentAgain(ALIKE, writes)).toEqual({
      claimed: { status: 200, version: 3, replayed: false },
      committed: { status: 200, version: 2, replayed: true },
      rows: { claimed: 100, committed: 100 },
    });
  });
});

describe("LanceDB's client retrying after its read timeout", () => {
  it("sends an update again under the same request id; it is applied once and both sends are answered alike", async () => {
    const api = client(other.url, other.auth);
    expect((await api.arrow("/v1/table/timed_out/create", rows(0, 10))).status).toBe(200);
    // The first update's answer is held back past the client's read timeout; the client then sends it again.
    let first = true;
    const release = lb.holdAnswers((r) => r.path.includes("timed_out/update") && first && !(first = false));
    const db = await lancedb.connect("db://default", {
      apiKey: other.adminKey,
      hostOverride: lb.url,
      clientConfig: { timeoutConfig: { readTimeout: 1 } },
    });
    const table = await db.openTable("timed_out");
    try {
      const updated = await table.update({ valuesSql: { x: "x + 1000" }, where: "id < 3" });
      expect(updated).toMatchObject({ rowsUpdated: 3, version: 2 });
    } finally {
      release();
    }
    const updates = lb.passed().filter((r) => r.path.includes("timed_out/update"));
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(new Set(updates.map((r) => r.requestId)).size).toBe(1);
    expect((await api.post("/v1/table/timed_out/count_rows", { predicate: "x >= 1000" })).body).toBe(3);
    expect((await api.post("/v1/table/timed_out/count_rows", { predicate: "x >= 2000" })).body).toBe(0);
    expect((await api.post<{ versions: unknown[] }>("/v1/table/timed_out/version/list")).body.versions).toHaveLength(2);
  });
});
