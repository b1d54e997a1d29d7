/**
 * The server is killed with SIGKILL in the middle of large writes, then started again on the same data root. Each
 * write must be there entirely or not at all, every table must open, read and list, and the next write to the
 * same table must succeed. Runs on a local root and, in the stress suite's second pass, on an Azurite root.
 */
import { rmSync } from "node:fs";
import { Float32, Table as ArrowTable, vectorFromArray, type Table } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, rows, type Reply } from "../client";
import type { ObjectStore } from "@/server/storage/object-store";
import { keyOf, onObjectStore, startServer, storeOf, type TestServer } from "../server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;
/** The data root every server of this file runs on, one after the other. */
let root: string;
/** The root's store, to look at what the servers wrote. */
let store: ObjectStore;

/** The tables that exist so far. */
const TABLES = ["inserted", "first", "merged", "altered", "tagged", "declared"];
const BIG = 300_000;
/** Each table's committed row count, as the writes that are known to have landed make it. */
const expected: Record<string, { rows: number }> = {};

beforeAll(async () => {
  server = await startServer();
  root = server.root;
  store = storeOf(server);
  api = client(server.url, server.auth);
  expect((await api.post("/v1/namespace/k/create", {})).status).toBe(200);
  for (const [name, count] of [
    ["inserted", 1000],
    ["merged", BIG],
    ["altered", BIG],
    ["tagged", 10],
  ] as const) {
    expect((await api.arrow(`/v1/table/k$${name}/create`, rows(0, count))).status).toBe(200);
    expected[name] = { rows: count };
  }
  for (const name of ["first", "declared"]) {
    expect((await api.post(`/v1/table/k$${name}/declare`, {})).status).toBe(200);
    expected[name] = { rows: 0 };
  }
});
afterAll(async () => {
  await server?.stop();
  if (root && !onObjectStore) rmSync(root, { recursive: true, force: true });
});

async function restart() {
  server = await startServer({}, { root });
  api = client(server.url, server.auth);
}

/** The key prefix (ending in `/`) of a table's files below the root. */
async function prefixOf(table: string): Promise<string> {
  const described = await api.post<{ location: string }>(`/v1/table/k$${table}/describe`, {});
  expect(described.status).toBe(200);
  return `${keyOf(server, described.body.location)}/`;
}

/** True once an object lies below the prefix that did not when this was called. */
async function somethingNewIn(prefix: string, picks: (key: string) => boolean = () => true): Promise<() => Promise<boolean>> {
  const before = new Set(await store.list(prefix));
  return async () => (await store.list(prefix)).some((key) => !before.has(key) && picks(key));
}

/** True once an object below the prefix is new or has been replaced since this was called. */
async function somethingNewOrReplacedIn(prefix: string): Promise<() => Promise<boolean>> {
  const etags = async () => new Map(await Promise.all((await store.list(prefix)).map(async (key) => [key, (await store.head(key))?.etag] as const)));
  const before = await etags();
  return async () => [...(await etags())].some(([key, etag]) => before.get(key) !== etag);
}

/**
 * Starts a write and kills the server once `underWay` says the write is under way; unless `mayFinish`, its reply
 * must not have come by then, so the write had not finished as far as its client knows. Then starts the server
 * again.
 */
async function killDuring(underWay: () => Promise<boolean>, write: () => Promise<Reply>, mayFinish = false) {
  let settled = false;
  const pending = write().then(
    (reply) => ({ reply }),
    (error: Error) => ({ error }),
  );
  void pending.finally(() => (settled = true));
  const deadline = Date.now() + 60_000;
  while (!settled && !(await underWay())) {
    if (Date.now() > deadline) throw new Error("the write never got under way");
    await new Promise((r) => setTimeout(r, 1));
  }
  await server.kill();
  const outcome = await pending;
  if (!mayFinish) expect("error" in outcome, `the write finished before the kill: ${JSON.stringify("reply" in outcome && outcome.reply.body)}`).toBe(true);
  await restart();
}

const count = async (table: string, predicate?: string) => {
  const reply = await api.post<number>(`/v1/table/k$${table}/count_rows`, predicate ? { predicate } : {});
  expect(reply.status).toBe(200);
  return reply.body;
};

/** Every table lists, opens and reads; declared-only ones still carry their marker. */
async function everyTableWhole() {
  const listed = await api.get<{ tables: string[] }>("/v1/namespace/k/table/list");
  expect(listed.status).toBe(200);
  expect(listed.body.tables).toEqual([...TABLES].sort());
  for (const table of TABLES) {
    const described = await api.post<{ is_only_declared: boolean; location: string; version?: number }>(`/v1/table/k$${table}/describe`, {});
    expect(described.status, table).toBe(200);
    expect(await count(table), table).toBe(expected[table].rows);
    if (described.body.is_only_declared) {
      expect(await store.head(`${keyOf(server, described.body.location)}/.lance-reserved`), table).not.toBeNull();
      continue;
    }
    const page = await api.post<Table>(`/v1/table/k$${table}/query`, { limit: 5 });
    expect(page.status, table).toBe(200);
    expect(page.body.numRows).toBe(Math.min(5, expected[table].rows));
    const versions = await api.post<{ versions: Array<{ version: number }> }>(`/v1/table/k$${table}/version/list`);
    expect(versions.status, table).toBe(200);
    expect(versions.body.versions.map((v) => v.version)).toContain(described.body.version);
    expect((await api.post(`/v1/table/k$${table}/tags/list`)).status, table).toBe(200);
  }
}

/** The test rows with `x` as float32, for a table whose `x` was changed to that type. */
function rowsWithFloatX(from: number, to: number): Table {
  const made = rows(from, to);
  const x = vectorFromArray(Array.from(made.getChild("x")!.toArray()), new Float32());
  return new ArrowTable({ id: made.getChild("id")!, x, s: made.getChild("s")! });
}

/**
 * Writes of every kind to the table succeed after the crash, and leave it as they say. The rows are made as the
 * table's columns now are: a merge-insert takes the table's own types (the engine refuses a double into a float).
 */
async function laterWritesSucceed(table: string, rowsOf: (from: number, to: number) => Table = rows) {
  const from = 10_000_000 + expected[table].rows;
  const inserted = await api.arrow<{ version: number }>(`/v1/table/k$${table}/insert`, rowsOf(from, from + 10));
  expect(inserted.status, JSON.stringify(inserted.body)).toBe(200);
  const merged = await api.arrow(
    `/v1/table/k$${table}/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true`,
    rowsOf(from + 5, from + 15),
  );
  expect(merged.body).toMatchObject({ num_updated_rows: 5, num_inserted_rows: 5 });
  expected[table].rows += 15;
  expect(await count(table)).toBe(expected[table].rows);
  for (const [path, rename] of [
    ["s", "renamed"],
    ["renamed", "s"],
  ]) {
    const altered = await api.post(`/v1/table/k$${table}/alter_columns`, { alterations: [{ path, rename }] });
    expect(altered.status, JSON.stringify(altered.body)).toBe(200);
  }
  const tag = `after-${Date.now()}`;
  expect((await api.post(`/v1/table/k$${table}/tags/create`, { tag, version: inserted.body.version })).status).toBe(200);
  expect((await api.post(`/v1/table/k$${table}/tags/update`, { tag, version: inserted.body.version + 1 })).status).toBe(200);
  expect((await api.post<{ version: number }>(`/v1/table/k$${table}/tags/version`, { tag })).body.version).toBe(inserted.body.version + 1);
}

describe("killed in the middle of a write, then restarted", () => {
  // The first new data file, the first new transaction file, the manifest the engine staged for Quiver to publish (in
  // the middle of the commit; on an object store the read cache keeps it, so only a local root sees it), and the
  // first new version's manifest (just after the commit: a write that took more than one commit would be caught half
  // done). From the transaction file to the reply there are only milliseconds, so on a busy machine the reply can win
  // the race to the kill: from that stage on, a write may finish, and the data stage always kills a write midway.
  const STAGES = [
    { name: "data", dir: "data", picks: () => true },
    { name: "_transactions", dir: "_transactions", picks: () => true },
    ...(onObjectStore ? [] : [{ name: "a staged manifest in _versions", dir: "_versions", picks: (key: string) => key.includes(".manifest-") }]),
    { name: "_versions", dir: "_versions", picks: (key: string) => key.endsWith(".manifest") },
  ];
  for (const [index, stage] of STAGES.entries()) {
    it(`a large insert (killed at its first new file in ${stage.name}/) is all there or not at all`, async () => {
      const underWay = await somethingNewIn(`${await prefixOf("inserted")}${stage.dir}/`, stage.picks);
      const from = 1_000_000 * (1 + index);
      await killDuring(underWay, () => api.arrow(`/v1/table/k$inserted/insert`, rows(from, from + BIG)), stage.name !== "data");
      const landed = await count("inserted", `id >= ${from} AND id < ${from + BIG}`);
      console.log(`insert killed at ${stage.name}/: ${landed ? "committed" : "not committed"}`);
      expect([0, BIG]).toContain(landed);
      expected.inserted.rows += landed;
      await everyTableWhole();
      await laterWritesSucceed("inserted");
    });

    it(`a large merge-insert (killed at its first new file in ${stage.name}/) is all there or not at all`, async () => {
      const underWay = await somethingNewIn(`${await prefixOf("merged")}${stage.dir}/`, stage.picks);
      // A value no row holds before (theirs are multiples of 1.5), so that the rows holding it are the merge's.
      const marker = 7.25 + index;
      const from = 1_000_000 * (5 + index);
      const body = rows(0, BIG, () => marker).concat(rows(from, from + 1000, () => marker));
      await killDuring(
        underWay,
        () => api.arrow(`/v1/table/k$merged/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true`, body as Table),
        stage.name !== "data",
      );
      const marked = await count("merged", `x = ${marker}`);
      expect([0, BIG + 1000]).toContain(marked);
      console.log(`merge-insert killed at ${stage.name}/: ${marked ? "committed" : "not committed"}`);
      expected.merged.rows += marked ? 1000 : 0;
      await everyTableWhole();
      await laterWritesSucceed("merged");
    });
  }

  it("a column type change that rewrites the data is all there or not at all", async () => {
    await killDuring(await somethingNewIn(`${await prefixOf("altered")}data/`), () =>
      api.post(`/v1/table/k$altered/alter_columns`, { alterations: [{ path: "x", data_type: { type: "float32" } }] }),
    );
    const described = await api.post<{ schema: { fields: Array<{ name: string; type: { type: string } }> } }>(`/v1/table/k$altered/describe`, {});
    const type = described.body.schema.fields.find((f) => f.name === "x")!.type.type;
    expect(["double", "float"]).toContain(type);
    console.log(`alteration killed: ${type === "float" ? "committed" : "not committed"}`);
    const sample = await api.post<Table>(`/v1/table/k$altered/query`, { filter: "id = 1234", limit: 1 });
    expect(sample.body.getChild("x")!.get(0)).toBe(1234 * 1.5);
    await everyTableWhole();
    await laterWritesSucceed("altered", type === "float" ? rowsWithFloatX : rows);
  });

  it("a first insert into a declared table is all there, or the table is still declared with its marker", async () => {
    const prefix = await prefixOf("first");
    await killDuring(await somethingNewIn(`${prefix}data/`), () => api.arrow(`/v1/table/k$first/insert`, rows(0, BIG)));
    const described = await api.post<{ is_only_declared: boolean }>(`/v1/table/k$first/describe`, {});
    expect(described.status).toBe(200);
    if (described.body.is_only_declared) expect(await store.head(`${prefix}.lance-reserved`)).not.toBeNull();
    expected.first.rows = described.body.is_only_declared ? 0 : BIG;
    console.log(`first insert killed: ${described.body.is_only_declared ? "not committed" : "committed"}`);
    expect(await count("first")).toBe(expected.first.rows);
    await everyTableWhole();
    await laterWritesSucceed("first");
  });

  it("a table created from a large body is all there, or not there at all", async () => {
    const dataOfNewTable = async () => {
      const directories = (await store.listDirectories("")).filter((name) => name.endsWith("_k$created"));
      return (await Promise.all(directories.map((name) => store.exists(`${name}/data/`)))).some(Boolean);
    };
    await killDuring(dataOfNewTable, () => api.arrow(`/v1/table/k$created/create`, rows(0, BIG)));
    const described = await api.post<{ is_only_declared: boolean }>(`/v1/table/k$created/describe`, {});
    console.log(`create killed: ${described.status === 404 ? "not there" : described.body.is_only_declared ? "declared only" : "created"}`);
    if (described.status === 404) {
      expect(described.body).toMatchObject({ code: ErrorCode.TableNotFound });
      expect((await api.arrow(`/v1/table/k$created/create`, rows(0, 10))).status).toBe(200);
      expected.created = { rows: 10 };
    } else {
      expect(described.body.is_only_declared).toBe(false);
      expected.created = { rows: BIG };
    }
    TABLES.push("created");
    await everyTableWhole();
    await laterWritesSucceed("created");
  });

  it("a tag moved back and forth points at one of its two versions after the kill", async () => {
    for (const r of [1, 2]) expect((await api.arrow(`/v1/table/k$tagged/insert`, rows(100 * r, 100 * r + 10))).status).toBe(200);
    expected.tagged.rows += 20;
    expect((await api.post(`/v1/table/k$tagged/tags/create`, { tag: "moving", version: 2 })).status).toBe(200);
    const mover = async (): Promise<Reply> => {
      for (let i = 1; ; i++) {
        const reply = await api.post(`/v1/table/k$tagged/tags/update`, { tag: "moving", version: 2 + (i % 2) });
        if (reply.status !== 200) return reply;
      }
    };
    // On a local root the engine writes a moved tag to a temporary file first and renames it over the tag: kill at
    // the first one. An object store replaces the tag whole: kill at the first replacement, with the next under way.
    await killDuring(await somethingNewOrReplacedIn(`${await prefixOf("tagged")}_refs/tags/`), mover);
    const tagged = await api.post<{ version: number }>(`/v1/table/k$tagged/tags/version`, { tag: "moving" });
    expect(tagged.status, JSON.stringify(tagged.body)).toBe(200);
    expect([2, 3]).toContain(tagged.body.version);
    await everyTableWhole();
    await laterWritesSucceed("tagged");
  });

  it("a declared-only table keeps its marker, and nothing else, through every crash", async () => {
    const described = await api.post<{ is_only_declared: boolean; location: string }>(`/v1/table/k$declared/describe`, {});
    expect(described.body.is_only_declared).toBe(true);
    const prefix = `${keyOf(server, described.body.location)}/`;
    expect(await store.list(prefix)).toEqual([`${prefix}.lance-reserved`]);
  });
});
