/**
 * The answers LanceDB's remote client (`db://`) gets from Quiver are the answers the engine gives for the same calls
 * on the same data in a local directory: search modes, bounds, projections, orderings, index options and plans. Each
 * of these was once dropped on the way and answered as if it had not been asked.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { client, expectError } from "./client";
import { startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

const arrow = createRequire(import.meta.url)("apache-arrow") as typeof import("apache-arrow");

let server: TestServer;
let remote: lancedb.Table;
let local: lancedb.Table;
const dir = mkdtempSync(path.join(os.tmpdir(), "quiver-engine-"));

const FRUIT = ["banana bread", "apple pie", "cherry tart", "banana split", "plum jam"];
const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int32(), false),
  new arrow.Field("x", new arrow.Float64(), true),
  new arrow.Field("text", new arrow.Utf8(), true),
  new arrow.Field("vec", new arrow.FixedSizeList(4, new arrow.Field("item", new arrow.Float32(), true)), true),
]);
const rowsOf = (from: number, to: number, vec?: number[]) =>
  lancedb.makeArrowTable(
    Array.from({ length: to - from }, (_, k) => {
      const i = from + k;
      return { id: i, x: i % 17, text: `${FRUIT[i % FRUIT.length]} ${i}`, vec: vec ?? [Math.sin(i), Math.cos(i), (i % 7) / 7, 1] };
    }),
    { schema },
  );

/** Each call made on both tables; the two answers, to compare. */
async function both<T>(call: (t: lancedb.Table) => Promise<T>): Promise<[T, T]> {
  return [await call(remote), await call(local)];
}
const plain = (rows: Array<Record<string, unknown>>) =>
  rows.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [k, typeof v === "object" && v !== null && "toArray" in v ? Array.from((v as { toArray(): number[] }).toArray()) : v]),
    ),
  );

beforeAll(async () => {
  server = await startServer();
  const db = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url, clientConfig: { retryConfig: { retries: 1 } } });
  // The engine's table as Quiver writes one: with stable row ids (QUIVER_STABLE_ROW_IDS), which change some plans.
  const engine = await lancedb.connect(dir, { storageOptions: { new_table_enable_stable_row_ids: "true" } });
  remote = await db.createTable("fruit", rowsOf(0, 600));
  local = await engine.createTable("fruit", rowsOf(0, 600));
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("the remote client gets the engine's answers", () => {
  it("limit(0) answers no rows", async () => {
    const [q, e] = await both((t) => t.query().limit(0).toArray());
    expect(e).toHaveLength(0);
    expect(q).toHaveLength(0);
  });

  it("projections with expressions answer the named expressions only", async () => {
    const [q, e] = await both((t) => t.query().select({ double_x: "x * 2", id: "id" }).where("id < 4").toArray());
    expect(Object.keys(q[0])).toEqual(["double_x", "id"]);
    expect(plain(q)).toEqual(plain(e));
  });

  it("orderBy sorts", async () => {
    const [q, e] = await both((t) =>
      t
        .query()
        .orderBy([
          { columnName: "x", ascending: false },
          { columnName: "id", ascending: true },
        ])
        .limit(20)
        .toArray(),
    );
    expect(q.map((r) => r.id)).toEqual(e.map((r) => r.id));
    expect(q[0].x).toBe(16);
  });

  it("full-text search finds the matching rows, scored as the engine scores them", async () => {
    await both((t) => t.createIndex("text", { config: lancedb.Index.fts({ withPosition: false, stem: true }) }));
    const [q, e] = await both((t) => t.search("banana", "fts").limit(10).toArray());
    expect(q.length).toBe(10);
    expect(q.every((r) => String(r.text).startsWith("banana"))).toBe(true);
    expect(q.map((r) => [r.id, r._score])).toEqual(e.map((r) => [r.id, r._score]));
    const [c, ce] = await both((t) =>
      t
        .query()
        .fullTextSearch("split", { columns: ["text"] })
        .limit(5)
        .toArray(),
    );
    expect(c.map((r) => r.id)).toEqual(ce.map((r) => r.id));
    expect(c.every((r) => String(r.text).startsWith("banana split"))).toBe(true);
  });

  it("a vector index keeps the distance type it was built with, and searches answer the engine's distances", async () => {
    await both((t) => t.createIndex("vec", { config: lancedb.Index.ivfFlat({ distanceType: "cosine", numPartitions: 2 }) }));
    const stats = (await remote.indexStats("vec_idx"))!;
    expect(stats).toMatchObject({ distanceType: "cosine", numIndexedRows: 600, numUnindexedRows: 0 });
    const [q, e] = await both((t) => t.query().nearestTo([0.5, 0.5, 0.5, 1]).distanceType("cosine").nprobes(2).limit(8).toArray());
    expect(q.map((r) => [r.id, r._distance])).toEqual(e.map((r) => [r.id, r._distance]));
  });

  it("hybrid search (a vector and a full-text query in one) answers the engine's reranked rows", async () => {
    const [q, e] = await both((t) =>
      t.query().nearestTo([0.5, 0.5, 0.5, 1]).distanceType("cosine").nprobes(2).fullTextSearch("banana").select(["id", "text"]).limit(8).toArray(),
    );
    const ranked = (rows: Array<Record<string, unknown>>) =>
      rows.map((r) => [r.id, r._relevance_score]).sort((a, b) => Number(b[1]) - Number(a[1]) || Number(a[0]) - Number(b[0]));
    expect(q.length).toBe(8);
    expect(q.every((r) => typeof r._relevance_score === "number" && r._relevance_score > 0)).toBe(true);
    expect(ranked(q)).toEqual(ranked(e));
  });

  it("the rest of the vector query's settings answer the engine's rows, distances and row ids", async () => {
    const search = (t: lancedb.Table) => t.query().nearestTo([0.2, 0.9, 0.3, 1]).distanceType("cosine");
    const shapes: Array<(t: lancedb.Table) => Promise<Array<Record<string, unknown>>>> = [
      (t) => search(t).minimumNprobes(1).maximumNprobes(2).refineFactor(2).limit(6).toArray(),
      (t) => search(t).bypassVectorIndex().withRowId().limit(6).toArray(),
      (t) => search(t).where("x > 8").postfilter().ef(20).limit(6).toArray(),
    ];
    for (const shape of shapes) {
      const [q, e] = await both(shape);
      expect(q.length).toBeGreaterThan(0);
      expect(q.map((r) => [r.id, r._distance, r._rowid])).toEqual(e.map((r) => [r.id, r._distance, r._rowid]));
    }
    const [qs, es] = await both(async (t) => String(await search(t).select(["id"]).outputSchema()));
    expect(qs).toEqual(es);
    const [qt, et] = await both((t) => t.takeOffsets([0, 5, 7]).toArray());
    expect(plain(qt)).toEqual(plain(et));
  });

  it("distance bounds keep only the rows between them", async () => {
    const [q, e] = await both((t) => t.query().nearestTo([0.5, 0.5, 0.5, 1]).distanceType("cosine").nprobes(2).distanceRange(0.01, 0.05).limit(50).toArray());
    expect(q.length).toBeGreaterThan(0);
    expect(q.every((r) => r._distance >= 0.01 && r._distance < 0.05)).toBe(true);
    expect(q.map((r) => r.id)).toEqual(e.map((r) => r.id));
  });

  it("fastSearch leaves out rows added after the index", async () => {
    await both((t) => t.add(rowsOf(600, 610, [0.5, 0.5, 0.5, 1])));
    const [fast, efast] = await both((t) => t.query().nearestTo([0.5, 0.5, 0.5, 1]).distanceType("cosine").nprobes(2).fastSearch().limit(5).toArray());
    expect(fast.every((r) => r.id < 600)).toBe(true);
    expect(fast.map((r) => r.id)).toEqual(efast.map((r) => r.id));
    const [all] = await both((t) => t.query().nearestTo([0.5, 0.5, 0.5, 1]).distanceType("cosine").nprobes(2).limit(5).toArray());
    expect(all.every((r) => r.id >= 600)).toBe(true);
  });

  it("index options reach the engine, and indices can be described, listed with their details and dropped", async () => {
    await remote.createIndex("x", { config: lancedb.Index.btree() });
    const api = client(server.url, server.auth);
    const listed = await api.post<{ indexes: Array<{ index_name: string; index_uuid: string; num_indexed_rows: number }> }>("/v1/table/fruit/index/list", {});
    expect(listed.body.indexes.map((i) => i.index_name)).toEqual(["text_idx", "vec_idx", "x_idx"]);
    expect(listed.body.indexes.every((i) => /^[0-9a-f-]{36}$/.test(i.index_uuid))).toBe(true);
    const paged = await api.post<{ indexes: Array<{ index_name: string }>; page_token?: string }>("/v1/table/fruit/index/list", { limit: 2 });
    expect(paged.body.indexes.map((i) => i.index_name)).toEqual(["text_idx", "vec_idx"]);
    const rest = await api.post<{ indexes: Array<{ index_name: string }> }>("/v1/table/fruit/index/list", { page_token: paged.body.page_token });
    expect(rest.body.indexes.map((i) => i.index_name)).toEqual(["x_idx"]);

    // The parameters each index was built with reach the client as the engine reports them.
    const details = async (t: lancedb.Table) => Object.fromEntries((await t.listIndices()).map((i) => [i.name, i.indexDetails as unknown]));
    const [remoteDetails, localDetails] = [await details(remote), await details(local)];
    expect(remoteDetails.vec_idx).toMatchObject({ metric_type: expect.any(String) });
    expect([remoteDetails.text_idx, remoteDetails.vec_idx]).toEqual([localDetails.text_idx, localDetails.vec_idx]);

    await remote.dropIndex("x_idx");
    expect((await remote.listIndices()).map((i) => i.name).sort()).toEqual(["text_idx", "vec_idx"]);
    await expect(remote.indexStats("x_idx")).resolves.toBeUndefined();
    await expect(remote.dropIndex("x_idx")).rejects.toThrow(/404|not found|no index/i);

    const refused = await api.post("/v1/table/fruit/create_index", { column: "x", index_type: "BTREE", num_partitions: 4 });
    expect(refused.status).toBe(400);
    expect(String(refused.body.detail)).toContain("num_partitions does not apply to a BTREE index");
    const tokenizer = await api.post("/v1/table/fruit/create_index", { column: "text", index_type: "FTS", split_identifiers: true });
    expect(tokenizer.status).toBe(406);
  });

  it("field metadata updates answer the engine's schema", async () => {
    await both((t) => t.updateFieldMetadata([{ path: "x", metadata: { "lancedb:description": "a small number", unit: "m" } }]));
    await both((t) => t.updateFieldMetadata([{ path: "x", metadata: { unit: null } }]));
    const [rs, es] = await both(async (t) => Object.fromEntries((await t.schema()).fields.find((f) => f.name === "x")!.metadata));
    expect(rs).toEqual(es);
    expect(rs).toEqual({ "lancedb:description": "a small number" });
    const api = client(server.url, server.auth);
    const replaced = await api.post("/v1/table/fruit/update_field_metadata", { updates: [{ path: "x", metadata: { owner: "geo" }, replace: true }] });
    expect(replaced.body).toMatchObject({ version: await remote.version(), fields: { x: { owner: "geo" } } });
    expectError(
      await api.post("/v1/table/fruit/update_field_metadata", { updates: [{ path: "nope", metadata: { a: "b" } }] }),
      404,
      ErrorCode.TableColumnNotFound,
    );
  });

  it("create_scalar_index builds scalar indices and refuses vector ones", async () => {
    const api = client(server.url, server.auth);
    const built = await api.post("/v1/table/fruit/create_scalar_index", { column: "x", index_type: "BTREE", name: "x_btree" });
    expect(built.status, JSON.stringify(built.body)).toBe(200);
    expect((await remote.listIndices()).find((i) => i.name === "x_btree")?.indexType).toBe("BTree");
    await local.createIndex("x", { config: lancedb.Index.btree(), name: "x_btree" });
    expectError(await api.post("/v1/table/fruit/create_scalar_index", { column: "vec", index_type: "IVF_PQ" }), 400, ErrorCode.InvalidInput);
  });

  it("structured full-text queries on the namespace path answer the engine's rows and scores", async () => {
    const api = client(server.url, server.auth);
    const structured = async (query: unknown) => {
      const reply = await api.post<import("apache-arrow").Table>("/v1/table/fruit/query", {
        k: 1000,
        vector: null,
        columns: ["id"],
        full_text_query: { structured_query: { query } },
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      return byScore(reply.body.toArray());
    };
    // Every match, ordered by score and then id: rows of equal score come back in no particular order.
    const byScore = (rows: Array<{ id: number; _score: number }>) => rows.map((r) => [r.id, r._score]).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    const engine = async (query: lancedb.FullTextQuery) => byScore(await local.query().fullTextSearch(query).select(["id"]).limit(1000).toArray());
    const cases: Array<[unknown, lancedb.FullTextQuery]> = [
      [
        { match: { terms: "banana split", column: "text", operator: "And" } },
        new lancedb.MatchQuery("banana split", "text", { operator: lancedb.Operator.And }),
      ],
      [{ match: { terms: "banan", column: "text", fuzziness: 1 } }, new lancedb.MatchQuery("banan", "text", { fuzziness: 1 })],
      [
        { boost: { positive: { match: { terms: "banana", column: "text" } }, negative: { match: { terms: "split", column: "text" } }, negative_boost: 0.2 } },
        new lancedb.BoostQuery(new lancedb.MatchQuery("banana", "text"), new lancedb.MatchQuery("split", "text"), { negativeBoost: 0.2 }),
      ],
      [{ multi_match: { match_queries: [{ terms: "cherry", column: "text" }] } }, new lancedb.MultiMatchQuery("cherry", ["text"])],
      [
        { boolean: { must: [{ match: { terms: "banana", column: "text" } }], should: [], must_not: [{ match: { terms: "bread", column: "text" } }] } },
        new lancedb.BooleanQuery([
          [lancedb.Occur.Must, new lancedb.MatchQuery("banana", "text")],
          [lancedb.Occur.MustNot, new lancedb.MatchQuery("bread", "text")],
        ]),
      ],
    ];
    for (const [wire, query] of cases) {
      const [q, e] = [await structured(wire), await engine(query)];
      expect(q.length, JSON.stringify(wire)).toBeGreaterThan(0);
      expect(q, JSON.stringify(wire)).toEqual(e);
    }
    // The index has no positions: a phrase query is the caller's mistake, as the engine says, not a missing table.
    expectError(
      await api.post("/v1/table/fruit/query", {
        k: 10,
        vector: null,
        full_text_query: { structured_query: { query: { phrase: { terms: "banana bread", column: "text" } } } },
      }),
      400,
      ErrorCode.InvalidInput,
    );
    const refused = await api.post("/v1/table/fruit/query", {
      k: 10,
      vector: null,
      full_text_query: { structured_query: { query: { match: { terms: "x", column: "text", fuzzy: 2 } } } },
    });
    expectError(refused, 400, ErrorCode.InvalidInput);
    expect(refused.body.detail).toContain("match.fuzzy");
  });

  it("the asynchronous forms finish before they answer, and the remaining table methods answer as the engine's", async () => {
    const [rj, ej] = await both((t) => t.createIndexAsync("x", { config: lancedb.Index.btree(), name: "x_async" }));
    await Promise.all([rj.wait(), ej.wait()]);
    expect((await remote.listIndices()).map((i) => i.name)).toContain("x_async");
    await both((t) => t.waitForIndex(["x_async"], 10));
    const [rt, et] = await both(async (t) => (await t.query().where("id < 3").withRowId().toArray()).map((r) => r._rowid as bigint));
    expect(rt).toEqual(et);
    const [rr, er] = await both((t) => t.takeRowIds(rt).toArray());
    expect(plain(rr)).toEqual(plain(er));
    expect(await both((t) => t.blobColumns())).toEqual([[], []]);
    expect(await both(async (t) => t.currentBranch())).toEqual([null, null]);
    const db = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url });
    const engine = await lancedb.connect(dir);
    await Promise.all([db.createTable("scratch", rowsOf(0, 2)), engine.createTable("scratch", rowsOf(0, 2))]);
    const [rd, ed] = [await db.dropTableAsync("scratch"), await engine.dropTableAsync("scratch")];
    await Promise.all([rd.wait(), ed.wait()]);
    expect(await db.tableNames()).toEqual(await engine.tableNames());
    await both((t) => t.dropIndex("x_async"));
  });

  it("jobs: every operation finished before it answered, so there are none to list, open or cancel", async () => {
    const db = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url, clientConfig: { retryConfig: { retries: 0 } } });
    // The engine on a local directory has no jobs API at all; LanceDB Cloud's lists its background jobs.
    expect(await db.listJobs()).toEqual([]);
    await expect(db.openJob("job-1")).rejects.toThrow(/not found/);
    expect(await db.cancelJob("job-1")).toBe(false);
  });

  it("explainPlan and analyzePlan answer the engine's plans", async () => {
    const [plan, eplan] = await both((t) => t.query().where("id > 3").select(["id"]).limit(50).explainPlan(true));
    expect(plan).toContain("LanceRead");
    expect(plan.replace(/uri=\S+/g, "")).toEqual(eplan.replace(/uri=\S+/g, ""));
    const analyzed = await remote.query().where("id > 3").analyzePlan();
    expect(analyzed).toMatch(/AnalyzeExec/);
    expect(analyzed).toMatch(/output_rows=606/);
  });

  it("an append or merge of one batch without rows commits nothing and answers the version the table is at", async () => {
    const before = await remote.version();
    const empty = arrow.tableToIPC(rowsOf(0, 1).slice(0, 0), "stream");
    const api = client(server.url, server.auth);
    const appended = await api.arrow<{ version: number; num_inserted_rows: number }>("/v1/table/fruit/insert", empty);
    expect(appended.body).toMatchObject({ version: before, num_inserted_rows: 0 });
    const merged = await api.arrow<{ version: number; num_inserted_rows: number }>(
      "/v1/table/fruit/merge_insert?on=id&when_not_matched_insert_all=true",
      empty,
    );
    expect(merged.body).toMatchObject({ version: before, num_inserted_rows: 0, num_updated_rows: 0 });
    expect(await remote.version()).toBe(before);
    expect(await remote.countRows()).toBe(610);
  });
});

describe("what the remote client asks for and Quiver does not do is refused by name", () => {
  it("clones, page-cache prewarming and the LSM write path answer 406 naming the operation", async () => {
    const db = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url, clientConfig: { retryConfig: { retries: 0 } } });
    const refusals: Array<[string, () => Promise<unknown>]> = [
      ["CloneTable", () => db.cloneTable("copy", "fruit")],
      ["page_cache/prewarm", () => remote.prewarmData(["id"])],
      ["index/vec_idx/prewarm", () => remote.prewarmIndex("vec_idx")],
      ["get_lsm_stats", () => remote.getLsmStats()],
      ["flush_lsm", () => remote.flushLsm()],
    ];
    for (const [operation, call] of refusals) {
      const message = await call().then(
        () => "answered",
        (err: Error) => err.message,
      );
      expect(message, operation).toContain("406");
      expect(message, operation).toMatch(new RegExp(`'${operation}' is not supported|${operation} is not supported`));
    }
    expect(await db.tableNames()).not.toContain("copy");
  });
});

describe("the Lance namespace path keeps DirectoryNamespace's reading of k", () => {
  it("a k of 0 without the remote client's trailing slash answers the default 10 rows", async () => {
    const api = client(server.url, server.auth);
    const reply = await api.post<import("apache-arrow").Table>("/v1/table/fruit/query", { k: 0, vector: null });
    expect(reply.status).toBe(200);
    expect(reply.body.numRows).toBe(10);
  });
});

describe("branches through the remote client are the engine's branches", () => {
  it("writes on a branch answer as the engine's do and leave main alone", async () => {
    const mainRows = await both((t) => t.countRows());
    const mainVersions = await both((t) => t.version());
    const [rb, eb] = await both(async (t) => (await t.branches()).create("dev"));
    const onBranch = <T>(call: (t: lancedb.Table) => Promise<T>) => Promise.all([call(rb), call(eb)]);
    await onBranch((b) => b.add(rowsOf(700, 710)));
    await onBranch((b) => b.update({ valuesSql: { x: "x + 100" }, where: "id < 5" }));
    await onBranch((b) => b.delete("id >= 705"));
    await onBranch((b) => b.addColumns([{ name: "x2", valueSql: "x * 2" }]));
    await onBranch((b) => b.dropColumns(["text"]));
    await onBranch((b) => b.createIndex("id"));
    // A branch's versions go on from the version it was made at, which differs between the two tables' histories.
    const [rv, ev] = await onBranch((b) => b.version());
    expect(rv - mainVersions[0]).toBe(ev - mainVersions[1]);
    expect(rv - mainVersions[0]).toBe(6);
    const [rs, es] = await onBranch(async (b) => ({ rows: (await b.stats()).numRows, indices: (await b.stats()).numIndices, count: await b.countRows() }));
    expect(rs).toEqual(es);
    expect(rs.count).toBe(mainRows[1] + 5);
    const [rq, eq] = await onBranch((b) => b.query().select(["id", "x", "x2"]).where("id < 8 OR id > 700").toArray());
    expect(plain(rq).sort((a, b) => Number(a.id) - Number(b.id))).toEqual(plain(eq).sort((a, b) => Number(a.id) - Number(b.id)));
    expect(rq.find((r) => r.id === 1)?.x).toBe(101);
    const [ri, ei] = (await onBranch((b) => b.listIndices())).map((l) => l.map((i) => i.name).sort());
    expect(ri).toEqual(ei);
    expect(ri).toContain("id_idx");
    const [rlv, elv] = await onBranch((b) => b.listVersions());
    // The engine lists a branch's versions from the one it was made at.
    expect(rlv.map((v) => v.version)).toEqual(Array.from({ length: 7 }, (_, i) => mainVersions[0] + i));
    expect(elv.map((v) => v.version)).toEqual(Array.from({ length: 7 }, (_, i) => mainVersions[1] + i));
    // Main did not change.
    expect(await both((t) => t.countRows())).toEqual(mainRows);
    expect((await remote.schema()).fields.map((f) => f.name)).toContain("text");
    expect((await remote.listIndices()).map((i) => i.name)).not.toContain("id_idx");
  });

  it("branches list with their creation time, and tags carry the branch they are on", async () => {
    const [rl, el] = await both(async (t) => (await t.branches()).list());
    expect(Object.keys(rl)).toEqual(Object.keys(el));
    expect([rl.dev.parentVersion, rl.dev.parentBranch ?? null]).toEqual([await remote.version(), null]);
    expect([el.dev.parentVersion, el.dev.parentBranch ?? null]).toEqual([await local.version(), null]);
    const api = client(server.url, server.auth);
    const listed = await api.post<{ branches: Record<string, { createAt: number }> }>("/v1/table/fruit/branches/list", {});
    expect(Math.abs(listed.body.branches.dev.createAt - Date.now() / 1000)).toBeLessThan(600);

    const [rb, eb] = await both(async (t) => (await t.branches()).checkout("dev"));
    const version = await rb.version();
    await Promise.all([rb, eb].map(async (b) => (await b.tags()).create("on-dev", await b.version())));
    const tags = await api.post<{ tags: Record<string, { version: number; branch: string | null }> }>("/v1/table/fruit/tags/list", {});
    expect(tags.body.tags["on-dev"]).toMatchObject({ version, branch: "dev" });
    expect((await api.post("/v1/table/fruit/tags/version", { tag: "on-dev" })).body).toMatchObject({ version, branch: "dev" });
    const described = await api.post<{ version: number; schema: { fields: Array<{ name: string }> } }>("/v1/table/fruit/describe", {
      tag: "on-dev",
      load_detailed_metadata: true,
    });
    expect(described.body.version).toBe(version);
    expect(described.body.schema.fields.map((f) => f.name)).toContain("x2");

    // A branch that a tag points into stays until the tag goes, on both.
    const refusals = await both((t) =>
      t
        .branches()
        .then((b) => b.delete("dev"))
        .then(
          () => "deleted",
          (err: Error) => err.message,
        ),
    );
    expect(refusals[1]).toContain("referenced by tags");
    expect(refusals[0]).toContain("409");
    expect(refusals[0]).toContain("referenced by tags");
    await both(async (t) => (await t.tags()).delete("on-dev"));
    await both(async (t) => (await t.branches()).delete("dev"));
    const [after, engineAfter] = await both(async (t) => Object.keys(await (await t.branches()).list()));
    expect(after).toEqual(engineAfter);
    expect(after).toEqual([]);
  });
});
