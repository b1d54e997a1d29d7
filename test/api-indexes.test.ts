/**
 * Every index type the API builds, each used by a query: the engine's plan names the index, and the query answers
 * the right rows (a vector search finds the row it was given first, a filter its rows, a text search its words).
 */
import { FixedSizeList, Field, Float32, Int64, List, makeVector, Table, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";
import type { Table as ArrowTable } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, expectError } from "./client";
import { startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;

const ROWS = 600;
const DIM = 16;
const vectorOf = (i: number) => Array.from({ length: DIM }, (_, d) => Math.sin(i * 0.37 + d * 1.3) + (d === i % DIM ? 2 : 0));

function items(count = ROWS) {
  const ids = Array.from({ length: count }, (_, i) => i);
  const values = Float32Array.from(ids.flatMap(vectorOf));
  return tableToIPC(
    new Table({
      id: vectorFromArray(ids.map(BigInt), new Int64()),
      category: vectorFromArray(
        ids.map((i) => ["red", "green", "blue"][i % 3]),
        new Utf8(),
      ),
      tags: vectorFromArray(
        ids.map((i) => [`t${i % 5}`, `u${i % 7}`]),
        new List(new Field("item", new Utf8(), true)),
      ),
      text: vectorFromArray(
        ids.map((i) => (i % 50 === 0 ? `a banana bread recipe number ${i}` : `plain words about apples ${i}`)),
        new Utf8(),
      ),
      vec: makeVector({
        type: new FixedSizeList(DIM, new Field("item", new Float32(), true)),
        length: count,
        nullCount: 0,
        child: makeVector(values).data[0],
      }),
    }),
    "stream",
  );
}

const plan = async (query: Record<string, unknown>) => (await api.post<string>("/v1/table/items/explain_plan", { query })).body;
const run = async (query: Record<string, unknown>) => (await api.post<ArrowTable>("/v1/table/items/query", query)).body;
const idsOf = (table: ArrowTable) => [...table.getChild("id")!].map(Number);

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  expect((await api.arrow("/v1/table/items/create", items())).status).toBe(200);
});
afterAll(() => server?.stop());

describe("scalar and full-text indices", () => {
  it("BTREE serves a range filter", async () => {
    expect((await api.post("/v1/table/items/create_index", { column: "id", index_type: "BTREE" })).status).toBe(200);
    const query = { filter: "id >= 100 AND id < 105", columns: ["id"], k: 100 };
    expect(await plan(query)).toMatch(/ScalarIndexQuery|MaterializeIndex/);
    expect(idsOf(await run(query)).sort((a, b) => a - b)).toEqual([100, 101, 102, 103, 104]);
  });

  it("BITMAP serves an equality filter", async () => {
    expect((await api.post("/v1/table/items/create_index", { column: "category", index_type: "BITMAP" })).status).toBe(200);
    const query = { filter: "category = 'blue' AND id < 12", columns: ["id"], k: 100 };
    expect(await plan(query)).toMatch(/ScalarIndexQuery|MaterializeIndex/);
    expect(idsOf(await run(query)).sort((a, b) => a - b)).toEqual([2, 5, 8, 11]);
  });

  it("LABEL_LIST serves array_has_any", async () => {
    expect((await api.post("/v1/table/items/create_index", { column: "tags", index_type: "LABEL_LIST" })).status).toBe(200);
    const query = { filter: "array_has_any(tags, ['t4']) AND array_has_any(tags, ['u6'])", columns: ["id"], k: 1000 };
    expect(await plan(query)).toMatch(/ScalarIndexQuery|MaterializeIndex/);
    expect(idsOf(await run(query)).sort((a, b) => a - b)).toEqual(Array.from({ length: ROWS }, (_, i) => i).filter((i) => i % 5 === 4 && i % 7 === 6));
  });

  it("FTS serves a text search, with scores", async () => {
    expect((await api.post("/v1/table/items/create_index", { column: "text", index_type: "FTS", with_position: false })).status).toBe(200);
    const query = { full_text_query: { string_query: { query: "banana", columns: ["text"] } }, columns: ["id"], k: 100 };
    expect(await plan(query)).toMatch(/MatchQuery|FTS/i);
    const found = await run(query);
    expect(idsOf(found).sort((a, b) => a - b)).toEqual(Array.from({ length: ROWS / 50 }, (_, i) => i * 50));
    expect(found.getChild("_score")).not.toBeNull();
  });
});

describe("vector indices", () => {
  const target = 123;
  const cases: Array<[string, Record<string, unknown>]> = [
    ["IVF_FLAT", { num_partitions: 4 }],
    ["IVF_PQ", { num_partitions: 4, num_sub_vectors: 4, distance_type: "cosine" }],
    ["IVF_RQ", { num_partitions: 4 }],
    ["IVF_HNSW_PQ", { num_partitions: 2, num_sub_vectors: 4, m: 8, ef_construction: 50 }],
    ["IVF_HNSW_SQ", { num_partitions: 2, m: 8, ef_construction: 50 }],
  ];
  it.each(cases)("%s serves a nearest-neighbour search", async (type, options) => {
    const built = await api.post("/v1/table/items/create_index", { column: "vec", index_type: type, name: "vec_idx", replace: true, ...options });
    expect(built.status, JSON.stringify(built.body)).toBe(200);
    const listed = (
      await api.post<{ indexes: Array<{ index_name: string; index_type: string; num_unindexed_rows: number; index_details: unknown }> }>(
        "/v1/table/items/index/list",
        {},
      )
    ).body.indexes;
    expect(listed.find((i) => i.index_name === "vec_idx")).toMatchObject({ num_unindexed_rows: 0 });
    // The parameters it was built with, as the engine recorded them.
    const details = JSON.parse(listed.find((i) => i.index_name === "vec_idx")!.index_details as string) as Record<string, Record<string, unknown>>;
    if (options.num_sub_vectors) expect(details.compression.num_sub_vectors).toBe(options.num_sub_vectors);
    if (options.m) expect(details.hnsw).toMatchObject({ max_connections: options.m, construction_ef: options.ef_construction });
    expect(details.metric_type).toBe(String(options.distance_type ?? "l2").toUpperCase());
    const query = { vector: vectorOf(target), vector_column: "vec", k: 5, columns: ["id"], nprobes: 4, refine_factor: 5 };
    expect(await plan(query)).toMatch(/ANN|Ivf/i);
    const found = await run(query);
    expect(idsOf(found)[0]).toBe(target);
    expect(Number(found.getChild("_distance")!.get(0))).toBeLessThan(1e-3);
  });

  it("refuses a vector index on a column that is not a vector, and an unknown type", async () => {
    expectError(await api.post("/v1/table/items/create_index", { column: "id", index_type: "IVF_PQ" }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/items/create_index", { column: "vec", index_type: "IVF_SQ" }), 406, ErrorCode.Unsupported);
  });

  it("refuses, with the engine's reason and changing nothing, an index the table has too few rows to train", async () => {
    expect((await api.arrow("/v1/table/few/create", items(40))).status).toBe(200);
    const version = async () => (await api.post<{ version: number }>("/v1/table/few/describe", {})).body.version;
    const before = await version();
    const tooFew = await api.post<{ error: string }>("/v1/table/few/create_index", { column: "vec", index_type: "IVF_PQ" });
    expectError(tooFew, 400, ErrorCode.InvalidInput);
    expect(tooFew.body.error).toMatch(/Not enough rows to train PQ\. Requires 256 rows but only 40 available/);
    const partitions = await api.post<{ error: string }>("/v1/table/few/create_index", { column: "vec", index_type: "IVF_FLAT", num_partitions: 50 });
    expectError(partitions, 400, ErrorCode.InvalidInput);
    expect(partitions.body.error).toMatch(/cannot train 50 centroids with 40 vectors/);
    expect(await version()).toBe(before);
    expect((await api.post<{ indexes: unknown[] }>("/v1/table/few/index/list", {})).body.indexes).toEqual([]);
  });

  it("drops an index: the plan no longer uses it, the answer stays the same", async () => {
    const query = { filter: "id >= 100 AND id < 105", columns: ["id"], k: 100 };
    expect((await api.post("/v1/table/items/index/id_idx/drop")).status).toBe(200);
    expect(await plan(query)).not.toMatch(/ScalarIndexQuery|MaterializeIndex/);
    expect(idsOf(await run(query)).sort((a, b) => a - b)).toEqual([100, 101, 102, 103, 104]);
    expectError(await api.post("/v1/table/items/index/id_idx/drop"), 404, ErrorCode.TableIndexNotFound);
  });
});
