/**
 * What each operation asks of the store, counted by a proxy in front of Azurite: Quiver through its HTTP API and
 * LanceDB's clients, and the engine in-process with strong consistency (`readConsistencyInterval: 0`) on the same
 * store through the same proxy. Each data call may ask at most one thing more than the engine (the catalog's
 * version), a metadata call with nothing changed asks one thing per store prefix it depends on, and requests that
 * arrive while a check is under way share the next one. Freshness is not traded for it: a change another instance
 * makes is seen by the next call.
 */
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { azuriteStorageOptions, newAzuriteRoot, startAzurite, type Azurite } from "./azurite";
import { startLatencyProxy, type LatencyProxy, type StoreRequest } from "./latency-proxy";
import { startServer, type TestServer } from "./server";

const arrow = createRequire(import.meta.url)("apache-arrow") as typeof import("apache-arrow");

let azurite: Azurite;
let proxy: LatencyProxy;
let root: string;
let quiver: TestServer;
let other: TestServer;
let remote: lancedb.Connection;
let engine: lancedb.Connection;

const rows = (from: number, n: number) =>
  arrow.tableFromArrays({
    id: BigInt64Array.from({ length: n }, (_, i) => BigInt(from + i)),
    x: Float64Array.from({ length: n }, (_, i) => (from + i) * 0.5),
    s: Array.from({ length: n }, (_, i) => `s${from + i}`),
  });

/** The rows with their strings as plain strings (apache-arrow makes dictionaries of them). */
const undictionaried = (table: import("apache-arrow").Table) =>
  new arrow.Table({
    id: table.getChild("id")!,
    x: table.getChild("x")!,
    s: arrow.vectorFromArray(table.getChild("s")!.toArray() as string[], new arrow.Utf8()),
  });

/**
 * The listing of the root's own directories, which an instance on an object store starts beside a request every
 * few seconds (not once per call), lands in whichever window it falls: it is not the call's cost.
 */
const rootListing = (r: StoreRequest) => r.kind === "list" && r.prefix === `${root.replace(/^az:\/\/[^/]+\//, "")}/`;

/** The catalog committer's claim of its next lease slot, every few seconds while it holds the lease: not the call's cost either. */
const leaseSlot = (r: StoreRequest) => `${r.prefix ?? r.path}`.includes("/.quiver/catalog/committer/lease/");

/** The store requests `work` makes, after a first run that warms caches and handles up. */
async function requestsOf(work: () => Promise<unknown>): Promise<StoreRequest[]> {
  await work();
  proxy.reset();
  await work();
  return proxy.requests().filter((r) => !rootListing(r) && !leaseSlot(r));
}

/** A request for a record of the write ledger (server/tables/write-ledger.ts) or of who committed a version. */
const isLedgerRecord = (r: StoreRequest) => /\/\.quiver\/(requests|versions)\//.test(r.path) || /\.quiver\/requests\//.test(r.prefix ?? "");
function ledgerRecordKind(r: StoreRequest): string {
  if (r.kind === "list") return "same-body listing";
  if (r.path.includes("/.quiver/versions/")) return "version record";
  if (r.path.includes("/same-body/")) return "same-body marker";
  return /\.claim$/.test(r.path) ? "claim" : /\.answer$/.test(r.path) ? "answer" : r.path;
}

/** A statement's rows, through POST /v1/sql as JSON. */
async function sqlRows(server: TestServer, query: string): Promise<unknown[][]> {
  const res = await fetch(`${server.url}/v1/sql`, {
    method: "POST",
    headers: { ...server.auth, "content-type": "application/json" },
    body: JSON.stringify({ query, format: "json" }),
  });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.rows;
}

const createTable = (server: TestServer, name: string, table: import("apache-arrow").Table) =>
  fetch(`${server.url}/v1/table/${name}/create`, {
    method: "POST",
    headers: { ...server.auth, "content-type": "application/vnd.apache.arrow.stream" },
    body: Buffer.from(arrow.tableToIPC(table, "stream")),
  });

const describe_ = (server: TestServer, name: string) =>
  fetch(`${server.url}/v1/table/${name}/describe`, { method: "POST", headers: server.auth }).then(async (r) => ({ status: r.status, body: await r.json() }));

beforeAll(async () => {
  azurite = await startAzurite();
  proxy = await startLatencyProxy(azurite, 0);
  const made = await newAzuriteRoot(azurite.endpoint);
  root = made.uri;
  const env = { QUIVER_ROOT: root, QUIVER_STORAGE_OPTIONS: JSON.stringify(azuriteStorageOptions(proxy.endpoint)) };
  quiver = await startServer(env);
  other = await startServer({ QUIVER_ROOT: root, QUIVER_STORAGE_OPTIONS: JSON.stringify(azuriteStorageOptions(azurite.endpoint)) });
  remote = await lancedb.connect("db://default", { apiKey: quiver.adminKey, hostOverride: quiver.url, clientConfig: { retryConfig: { retries: 0 } } });
  engine = await lancedb.connect(`${root.replace(/\/[^/]+$/, "")}/engine`, {
    readConsistencyInterval: 0,
    storageOptions: azuriteStorageOptions(proxy.endpoint),
  });
  await remote.createTable("t", rows(0, 1000));
  await engine.createTable("t", rows(0, 1000));
});

afterAll(async () => {
  await Promise.all([quiver?.stop(), other?.stop()]);
  await proxy?.stop();
  await azurite?.stop();
});

describe("store requests per operation, against the engine on the same store", () => {
  it("a data call asks at most one thing more than the engine; a write also writes its records in the write ledger", async () => {
    const t = await remote.openTable("t");
    const e = await engine.openTable("t");
    const pairs: Array<[string, () => Promise<unknown>, () => Promise<unknown>]> = [
      ["count rows", () => t.countRows(), () => e.countRows()],
      ["filter query", () => t.query().where("id > 10").limit(10).toArray(), () => e.query().where("id > 10").limit(10).toArray()],
      ["projection of one column", () => t.query().select(["id"]).limit(5).toArray(), () => e.query().select(["id"]).limit(5).toArray()],
      ["version list", () => t.listVersions(), () => e.listVersions()],
    ];
    let from = 10_000;
    let upsert = 900;
    pairs.push(["insert 100 rows", () => t.add(rows((from += 100), 100)), () => e.add(rows((from += 100), 100))]);
    // Each merge-insert its own rows (half of them new): a body sent again would be looked up among earlier ones.
    pairs.push([
      "merge-insert 100 rows",
      () =>
        t
          .mergeInsert("id")
          .whenMatchedUpdateAll()
          .whenNotMatchedInsertAll()
          .execute(rows((upsert += 50), 100)),
      () =>
        e
          .mergeInsert("id")
          .whenMatchedUpdateAll()
          .whenNotMatchedInsertAll()
          .execute(rows((upsert += 50), 100)),
    ]);
    for (const [name, viaQuiver, viaEngine] of pairs) {
      const quiverAsked = await requestsOf(viaQuiver);
      const engineAsked = await requestsOf(viaEngine);
      const shown = (asked: StoreRequest[]) =>
        `${asked.length} store requests (${asked.map((r) => `${r.kind} ${r.prefix ?? r.path.replace(/^.*\//, "")}`).join(", ")})`;
      const ledger = quiverAsked.filter(isLedgerRecord);
      // The marker of an answered write is deleted once the answer is recorded, without waiting: free, and not counted.
      const asked = ledger.filter((r) => r.kind !== "delete");
      expect(quiverAsked.length - ledger.length, `${name}: Quiver ${shown(quiverAsked)}, the engine ${shown(engineAsked)}`).toBeLessThanOrEqual(
        engineAsked.length + 1,
      );
      // The claim, the same-body marker and the look for earlier writes of the body; a merge's answer too (an insert's
      // is its version and its body's rows: a repeat reads it from the version). The version names who committed it.
      const records: Record<string, string[]> = {
        "insert 100 rows": ["claim", "same-body listing", "same-body marker"],
        "merge-insert 100 rows": ["answer", "claim", "same-body listing", "same-body marker"],
      };
      expect(asked.map(ledgerRecordKind).sort(), `${name}: ${shown(quiverAsked)}`).toEqual(records[name] ?? []);
    }
  });

  it("a SQL query lists the table's versions once, and asks no more than the engine's own filtered query and its audit entry", async () => {
    const e = await engine.openTable("t");
    const sql = () => sqlRows(quiver, "SELECT id, s FROM t WHERE id = 123");
    expect(await sql()).toEqual([[123, "s123"]]);
    const quiverAsked = await requestsOf(sql);
    const engineAsked = await requestsOf(() => e.query().where("id = 123").select(["id", "s"]).toArray());
    const shown = quiverAsked.map((r) => `${r.kind} ${r.prefix ?? r.path}`).join(", ");
    expect(quiverAsked.filter((r) => r.prefix?.endsWith("t.lance/_versions/")).length, shown).toBe(1);
    const audit = quiverAsked.filter((r) => r.kind === "write" && r.path.includes("/.quiver/auth/audit/"));
    expect(audit.length, shown).toBe(1);
    expect(quiverAsked.length - audit.length, shown).toBeLessThanOrEqual(engineAsked.length);
  });

  it("a metadata call with nothing changed asks the store once per prefix it depends on", async () => {
    const listing = await requestsOf(() => fetch(`${quiver.url}/v1/table?limit=100`, { headers: quiver.auth }));
    expect(listing.map((r) => r.prefix)).toEqual([expect.stringMatching(/__manifest\/_versions\/$/)]);
    const namespaces = await requestsOf(() => fetch(`${quiver.url}/v1/namespace/%24/list`, { headers: quiver.auth }));
    expect(namespaces.map((r) => r.prefix)).toEqual([expect.stringMatching(/__manifest\/_versions\/$/)]);
    // A description depends on the catalog (which table the name is) and on the table's newest manifest.
    const described = await requestsOf(() => describe_(quiver, "t"));
    expect(described.map((r) => r.prefix).sort()).toEqual([expect.stringMatching(/__manifest\/_versions\/$/), expect.stringMatching(/t\.lance\/_versions\/$/)]);
  });

  it("shares one check among the requests that arrive while it runs", async () => {
    await describe_(quiver, "t");
    proxy.setLatency(100);
    try {
      proxy.reset();
      const answers = await Promise.all(Array.from({ length: 24 }, () => describe_(quiver, "t")));
      expect(answers.every((a) => a.status === 200 && a.body.version === answers[0].body.version)).toBe(true);
      const catalogChecks = proxy.requests().filter((r) => r.prefix?.endsWith("__manifest/_versions/")).length;
      const tableChecks = proxy.requests().filter((r) => r.prefix?.endsWith("t.lance/_versions/")).length;
      // Without sharing, 24 each; a request that arrives while a check runs waits for the next, so a few at most.
      expect(catalogChecks).toBeLessThanOrEqual(4);
      expect(tableChecks).toBeLessThanOrEqual(4);
    } finally {
      proxy.setLatency(0);
    }
  });
});

describe("a catalog write asks the store only what it must", () => {
  it("a declare of a nested table reserves its new location without listing it, and audits the declare and its vended credentials in one write", async () => {
    const vending = await startServer({
      QUIVER_ROOT: root,
      QUIVER_STORAGE_OPTIONS: JSON.stringify(azuriteStorageOptions(proxy.endpoint)),
      QUIVER_VEND_CREDENTIALS: "container",
    });
    try {
      const post = (path: string, body: object) =>
        fetch(`${vending.url}${path}`, { method: "POST", headers: { ...vending.auth, "content-type": "application/json" }, body: JSON.stringify(body) });
      expect((await post("/v1/namespace/declared/create", {})).status).toBe(200);
      expect((await post("/v1/table/declared$warm/declare", {})).status).toBe(200);
      proxy.reset();
      const declared = await post("/v1/table/declared$t/declare", {});
      expect(declared.status).toBe(200);
      const answer = (await declared.json()) as { location: string; storage_options: Record<string, string> };
      expect(answer.storage_options.azure_storage_sas_token).toBeDefined();
      const location = answer.location.replace(/^.*\//, "");
      const requests = proxy.requests();
      const atLocation = requests.filter((r) => r.path.includes(`/${location}/`) || r.prefix?.includes(`/${location}/`));
      expect(atLocation.map((r) => `${r.kind} ${r.path.replace(/^.*\//, "")}`)).toEqual(["write .lance-reserved"]);
      const auditWrites = requests.filter((r) => r.kind === "write" && r.path.includes("/.quiver/auth/audit/"));
      expect(auditWrites).toHaveLength(1);
      const requestId = declared.headers.get("x-request-id");
      const audit = (await (await fetch(`${vending.url}/v1/admin/audit?target=declared$t`, { headers: vending.auth })).json()) as {
        entries: Array<{ action: string; requestId: string }>;
      };
      expect(
        audit.entries
          .filter((e) => e.requestId === requestId)
          .map((e) => e.action)
          .sort(),
      ).toEqual(["DeclareTable", "VendCredentials"]);
    } finally {
      await vending.stop();
    }
  });
});

/** Waits until the proxy has seen a request `matches` picks; false after a few seconds without one. */
const seen = async (matches: (r: StoreRequest) => boolean) => {
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 10))) {
    if (proxy.requests().some(matches)) return true;
  }
  return false;
};

describe("the write ledger's records", () => {
  it("ride on round trips the write makes anyway: none waits for another in a row", async () => {
    const t = await remote.openTable("t");
    await t.add(rows(60_000, 100));
    const prefix = `${root.replace(/^az:\/\/[^/]+\//, "")}/`;
    proxy.reset();
    // Requests sent together all reach the store while the answers to all of them are held back; one that waits for
    // another's answer never would. Before the write's turn: its look at the table's versions, the look for earlier
    // writes of its body and its marker among them. In the turn, before the commit: the claim (no look at the table's
    // directory: the write's look found this process's own last commit the latest). Before the answer: the audit
    // entry (an insert records no answer, its version names its caller).
    const rounds = [
      [
        (r: StoreRequest) => r.kind === "list" && r.prefix === `${prefix}t.lance/_versions/`,
        (r: StoreRequest) => r.kind === "list" && (r.prefix ?? "").includes("/same-body/"),
        (r: StoreRequest) => r.kind === "write" && /\/same-body\/[0-9a-f]+\/\d+-/.test(r.path),
      ],
      [(r: StoreRequest) => /\.claim$/.test(r.path)],
      [(r: StoreRequest) => r.kind === "write" && r.path.includes("/.quiver/auth/audit/")],
    ];
    const releases = rounds.map((round) => round.map((matches) => proxy.holdAnswers(matches)));
    const adding = t.add(rows(60_100, 100));
    try {
      for (const [k, round] of rounds.entries()) {
        for (const [i, matches] of round.entries()) expect(await seen(matches), `round trip ${k}, request ${i}`).toBe(true);
        releases[k].forEach((release) => release());
      }
    } finally {
      releases.flat().forEach((release) => release());
      await adding.catch(() => undefined);
    }
    expect((await adding).version).toBeGreaterThan(1);
    expect(proxy.requests().filter((r) => /\.answer$/.test(r.path) || r.path.includes("/.quiver/versions/"))).toEqual([]);
    expect(proxy.requests().filter((r) => r.kind === "list" && r.prefix === `${prefix}t.lance/`)).toEqual([]);
  });

  it("are none beside the one manifest of a group of appends committed as one version, which names its requests and caller", async () => {
    const insert = (from: number) =>
      fetch(`${quiver.url}/v1/table/t/insert`, {
        method: "POST",
        headers: { ...quiver.auth, "content-type": "application/vnd.apache.arrow.stream" },
        body: Buffer.from(arrow.tableToIPC(undictionaried(rows(from, 10)), "stream")),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { version: number } }));
    proxy.reset();
    // The first insert's commit is held at its manifest: the seven sent meanwhile wait for the table's turn together,
    // and are committed as one version when it is let go (bodies with dictionaries are each committed alone).
    const release = proxy.holdAnswers((r) => r.kind === "write" && r.path.endsWith(".manifest"));
    const first = insert(70_000);
    expect(await seen((r) => r.kind === "write" && r.path.endsWith(".manifest"))).toBe(true);
    const others = Array.from({ length: 7 }, (_, i) => insert(70_100 + i * 10));
    await new Promise((resolve) => setTimeout(resolve, 500));
    release();
    const answers = await Promise.all([first, ...others]);
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const versions = new Set(answers.map((a) => a.body.version));
    expect(versions.size).toBeLessThan(8);
    // Each version names the requests it answered and who committed it in its own manifest: no record is written for it.
    expect(proxy.requests().filter((r) => r.kind === "write" && r.path.includes("/.quiver/versions/"))).toEqual([]);
    const manifests = proxy.requests().filter((r) => r.kind === "write" && /\/t\.lance\/_versions\/\d+\.manifest$/.test(r.path));
    expect(manifests.length).toBe(versions.size);
  });
});

describe("a commit of a version a client staged (managed versioning)", () => {
  it("makes three round trips in a row on Quiver's side: the reads that check it with its claim, the publishing write, then what follows", async () => {
    // The client writes with the credentials Quiver vends, to the store through the proxy.
    const writer = await startServer({
      QUIVER_ROOT: root,
      QUIVER_STORAGE_OPTIONS: JSON.stringify(azuriteStorageOptions(proxy.endpoint)),
      QUIVER_VEND_CREDENTIALS: "container",
    });
    const managed = encodeURIComponent(JSON.stringify({ "quiver.managed_versioning": "true" }));
    const made = await fetch(`${writer.url}/v1/table/staged/create?properties=${managed}`, {
      method: "POST",
      headers: { ...writer.auth, "content-type": "application/vnd.apache.arrow.stream" },
      body: Buffer.from(arrow.tableToIPC(rows(0, 10), "stream")),
    });
    expect(made.status).toBe(200);
    const ns = await lancedb.connectNamespace("rest", { uri: writer.url, headers: { "x-api-key": writer.adminKey } });
    const t = await ns.openTable("staged");
    await t.add(rows(10, 10));
    const prefix = `${root.replace(/^az:\/\/[^/]+\//, "")}/`;
    proxy.reset();
    const staged = (r: StoreRequest) => /\/_versions\/\d+\.manifest-[0-9a-f-]+$/.test(r.path);
    const finalManifest = (r: StoreRequest) => r.kind === "write" && /\/_versions\/\d{20}\.manifest$/.test(r.path);
    // Held back together, each group's requests all reach the store: none waits for another's answer.
    const first = [
      (r: StoreRequest) => r.kind === "read" && staged(r),
      (r: StoreRequest) => r.kind === "list" && (r.prefix ?? "").endsWith("/_versions/") && !(r.prefix ?? "").includes("__manifest"),
      (r: StoreRequest) => r.kind === "write" && /\.claim$/.test(r.path),
    ];
    const last = [
      (r: StoreRequest) => r.kind === "write" && r.path.includes("/.quiver/auth/audit/"),
      (r: StoreRequest) => /\.answer$/.test(r.path),
      (r: StoreRequest) => /\/\.quiver\/versions\/.*\.json$/.test(r.path),
    ];
    // The staged file goes once the version's record is written, after the answer: the one or the other tells a
    // retry whose the version is.
    const stagedDelete = (r: StoreRequest) => r.kind === "delete" && staged(r);
    // The client's own requests (its data file, its listing of `_versions/`, its transaction) come first; with its
    // staged manifest's write held, what follows is Quiver's.
    const stagedWrite = (r: StoreRequest) => r.kind === "write" && staged(r);
    const stagedWritten = proxy.holdAnswers(stagedWrite);
    const adding = t.add(rows(20, 10));
    expect(await seen(stagedWrite)).toBe(true);
    const firstHeld = first.map((matches) => proxy.holdAnswers(matches));
    const publishing = proxy.holdAnswers(finalManifest);
    const lastHeld = last.map((matches) => proxy.holdAnswers(matches));
    stagedWritten();
    try {
      for (const [i, matches] of first.entries()) expect(await seen(matches), `request ${i} of the first round trip`).toBe(true);
      expect(proxy.requests().some(finalManifest)).toBe(false);
      firstHeld.forEach((release) => release());
      expect(await seen(finalManifest)).toBe(true);
      expect(proxy.requests().some((r) => last.some((matches) => matches(r)))).toBe(false);
      publishing();
      for (const [i, matches] of last.entries()) expect(await seen(matches), `request ${i} of the last round trip`).toBe(true);
      expect(proxy.requests().some(stagedDelete)).toBe(false);
      lastHeld.forEach((release) => release());
      expect(await seen(stagedDelete)).toBe(true);
    } finally {
      [stagedWritten, ...firstHeld, publishing, ...lastHeld].forEach((release) => release());
    }
    expect((await adding).version).toBe(3);
    await writer.stop();
    // What the version did is read from the staged manifest, which holds its transaction: no read of `_transactions/`.
    expect(proxy.requests().filter((r) => r.kind === "read" && r.path.includes(`${prefix}`) && r.path.includes("/_transactions/"))).toEqual([]);
  });
});

describe("freshness is kept", () => {
  it("sees at once what another instance changed: rows, a rename, a drop", async () => {
    const t = await remote.openTable("t");
    const before = await t.countRows();
    const otherRemote = await lancedb.connect("db://default", {
      apiKey: other.adminKey,
      hostOverride: other.url,
      clientConfig: { retryConfig: { retries: 0 } },
    });
    await (await otherRemote.openTable("t")).add(rows(900_000, 7));
    expect(await t.countRows()).toBe(before + 7);
    expect(await sqlRows(quiver, "SELECT count(*) FROM t")).toEqual([[before + 7]]);
    expect((await describe_(quiver, "t")).body.version).toBe((await describe_(other, "t")).body.version);

    await fetch(`${quiver.url}/v1/namespace/ns/create`, { method: "POST", headers: quiver.auth, body: "{}" });
    expect((await createTable(quiver, "ns$x", rows(0, 3))).status).toBe(200);
    expect((await describe_(quiver, "ns$x")).status).toBe(200);
    const renamed = await fetch(`${other.url}/v1/table/ns$x/rename`, {
      method: "POST",
      headers: { ...other.auth, "content-type": "application/json" },
      body: JSON.stringify({ new_table_name: "y" }),
    });
    expect(renamed.status).toBe(200);
    expect((await describe_(quiver, "ns$x")).status).toBe(404);
    expect((await describe_(quiver, "ns$y")).status).toBe(200);
    const counted = await fetch(`${quiver.url}/v1/table/ns$x/count_rows`, { method: "POST", headers: quiver.auth, body: "{}" });
    expect(counted.status).toBe(404);

    expect((await fetch(`${other.url}/v1/table/ns$y/drop`, { method: "POST", headers: other.auth })).status).toBe(200);
    const afterDrop = await fetch(`${quiver.url}/v1/table/ns$y/count_rows`, { method: "POST", headers: quiver.auth, body: "{}" });
    expect(afterDrop.status).toBe(404);

    // A table made again at the same location: its first version is not the first version read before.
    expect((await createTable(quiver, "again", rows(0, 3))).status).toBe(200);
    expect(await sqlRows(quiver, "SELECT sum(id) FROM again")).toEqual([[3]]);
    expect((await fetch(`${other.url}/v1/table/again/drop`, { method: "POST", headers: other.auth })).status).toBe(200);
    expect((await createTable(other, "again", rows(10, 3))).status).toBe(200);
    expect(await sqlRows(quiver, "SELECT sum(id) FROM again")).toEqual([[33]]);
  });
});
