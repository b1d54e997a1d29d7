/**
 * A table's map: the rows of a vector column laid out in two dimensions, the first layout (principal components) at
 * once and the refined one (UMAP) when a worker thread has made it. Both are kept in the root under
 * `.quiver/maps/<key>/` (the key: the table's location, the version and its manifest's etag, the column, the metric
 * and the layout's revision), so that a second open, a restarted server and every other instance find them; while
 * one instance refines a map, its marker there (renewed as it works) tells the others to wait for it. A map nobody
 * opens goes after a while (map-retention.ts).
 */
import "server-only";
import { createHash } from "node:crypto";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { DataType, Schema, Table, Utf8, makeVector, tableFromIPC, tableToIPC, util, vectorFromArray, type Field, type Vector } from "apache-arrow";
import { QuiverError, invalidInput } from "@/server/errors";
import { engineCall, type NativeTable } from "@/server/lance/native";
import { log } from "@/server/log";
import { metrics } from "@/server/metrics";
import { INSTANCE } from "@/server/instance";
import { config } from "@/server/config";
import type { ObjectStore } from "@/server/storage/object-store";
import type { Id } from "@/server/catalog/catalog";
import type { TableEntry } from "@/server/catalog/catalog-table";
import type { Tables } from "@/server/tables/tables";
import { joinIdentifier } from "@/lib/identifiers";
import {
  MAP_MAX_STRATA,
  MAP_METADATA_KEY,
  MAP_PLACED_REASONS,
  MAP_PREVIEW_ROWS,
  MAP_PREVIEW_VALUES,
  MAP_STRATUM_QUOTA,
  MAP_TEXT_CHARS,
  type MapFacts,
  type MapPlaceFacts,
} from "@/lib/contract/maps";
import { MAPS_PREFIX, noteMapUse } from "./map-retention";
import { seededRandom } from "./layout-math";
import type { LayoutJob, LayoutMessage, PlaceJob, Projection } from "./layout-worker";

/** Part of every map's key: a changed way of laying out makes new maps instead of reading old ones. */
const LAYOUT_REVISION = 2;
const REFINE = { epochs: 100, neighbors: 12, seed: 42 };
/** A refining instance renews its marker this often; a marker older than MARKER_STALE_MS is one whose instance stopped. */
const MARKER_RENEW_MS = 20_000;
const MARKER_STALE_MS = 60_000;
/** Layouts one process makes at a time: each holds its table's vectors and a core. */
const MAX_RUNNING = 2;

export interface MapRequest {
  column?: string;
  version?: number;
  metric: "l2" | "cosine";
  shown: string[];
  /**
   * The stage the caller holds. A preview: answer nothing while it is still the latest, then the next stage whole. The
   * first layout: answer the refined one's coordinates alone, or nothing until it is ready.
   */
  have?: "preview" | "first";
  /** Place the version's rows onto this version's refined layout instead of laying them out. */
  placedOn?: number;
}

interface Layout {
  ids: BigUint64Array;
  x: Float32Array;
  y: Float32Array;
  facts: Pick<MapFacts, "stage" | "rows" | "points" | "without_vector" | "sampled" | "dimensions">;
  /** A refined layout's projection, which rows of other versions are placed by. */
  projection?: Projection;
}

/** Rows placed onto another version's layout: whether each was placed (its vector new or changed) or kept its place. */
interface Placement extends Layout {
  placed: Uint8Array;
}

interface Job {
  first: Promise<Layout>;
  /** The first layout to answer: a large table's preview (every row's scan waits for it), else every row's. */
  earliest: Promise<Layout>;
  /** The latest stage made so far. */
  latest?: Layout;
}

const running = new Map<string, Job>();

const quoted = (name: string) => `\`${name.replace(/`/g, "``")}\``;

function vectorColumn(schema: Schema, table: string, wanted: string | undefined): { name: string; dimensions: number } {
  const isVector = (f: Field) => DataType.isFixedSizeList(f.type) && DataType.isFloat(f.type.children[0].type);
  if (wanted != null) {
    const field = schema.fields.find((f) => f.name === wanted);
    if (!field) throw invalidInput(`table '${table}' has no column '${wanted}'`);
    if (!isVector(field))
      throw invalidInput(
        `column '${wanted}' of table '${table}' is ${field.type}, not a vector (a fixed-size list of floats): only a vector column can be mapped`,
      );
    return { name: field.name, dimensions: field.type.listSize };
  }
  const field = schema.fields.find(isVector);
  if (!field) throw invalidInput(`table '${table}' has no vector column (a fixed-size list of floats) to map`);
  return { name: field.name, dimensions: field.type.listSize };
}

/** Columns a map can carry: one value per row that names or groups it. */
function isShowable(type: DataType): boolean {
  return (
    DataType.isUtf8(type) ||
    DataType.isLargeUtf8(type) ||
    DataType.isInt(type) ||
    DataType.isFloat(type) ||
    DataType.isBool(type) ||
    DataType.isDate(type) ||
    DataType.isTimestamp(type) ||
    (DataType.isDictionary(type) && (DataType.isUtf8(type.dictionary) || DataType.isInt(type.dictionary)))
  );
}

function shownFields(schema: Schema, table: string, names: string[]): Field[] {
  return [...new Set(names)].map((name) => {
    const field = schema.fields.find((f) => f.name === name);
    if (!field) throw invalidInput(`table '${table}' has no column '${name}'`);
    if (!isShowable(field.type))
      throw invalidInput(`column '${name}' is ${field.type}: a map carries text, numbers, booleans, dates and timestamps; read other values from the rows`);
    return field;
  });
}

type Executable = { execute(): Promise<{ next(): Promise<Buffer | null> }> };

/** Hands each batch of a query's answer to `use` as it comes, so that a large answer is never held whole twice. */
async function eachBatch(query: Executable, what: string, use: (batch: Table) => void): Promise<void> {
  await engineCall(what, async () => {
    const iterator = await query.execute();
    for (let b = await iterator.next(); b; b = await iterator.next()) use(tableFromIPC(b));
  });
}

async function collect(query: Executable, what: string): Promise<Table[]> {
  const batches: Table[] = [];
  await eachBatch(query, what, (batch) => batches.push(batch));
  return batches;
}

/**
 * Appends a batch's non-null vectors (as float32, whatever the floats' width) and their rows' ids; answers how many
 * rows it appended.
 */
function appendVectors(vector: Vector, rowIds: Vector, dimensions: number, out: { vectors: Float32Array; ids: BigUint64Array }, at: number): number {
  let row = 0;
  for (const data of vector.data) {
    const child = data.children[0];
    const values = child.values as Float32Array | Float64Array | Uint16Array;
    const first = data.offset * dimensions + child.offset;
    const idsOf = (i: number) => rowIds.get(row + i) as bigint;
    const copy = (from: number, to: number) => {
      if (values instanceof Uint16Array) for (let k = 0; k < dimensions; k++) out.vectors[to * dimensions + k] = util.uint16ToFloat64(values[from + k]);
      else out.vectors.set(values.subarray(from, from + dimensions), to * dimensions);
    };
    if (data.nullCount === 0) {
      if (values instanceof Uint16Array) for (let i = 0; i < data.length; i++) copy(first + i * dimensions, at + i);
      else out.vectors.set(values.subarray(first, first + data.length * dimensions), at * dimensions);
      for (let i = 0; i < data.length; i++) out.ids[at + i] = idsOf(i);
      at += data.length;
    } else {
      for (let i = 0; i < data.length; i++) {
        if (!data.getValid(i)) continue;
        copy(first + i * dimensions, at);
        out.ids[at++] = idsOf(i);
      }
    }
    row += data.length;
  }
  return at;
}

function copyIds(vector: Vector, out: BigUint64Array, at: number): number {
  for (const data of vector.data) {
    out.set((data.values as BigUint64Array).subarray(data.offset, data.offset + data.length), at);
    at += data.length;
  }
  return at;
}

/** The non-null vectors a query reads (as float32) with their rows' ids, `capacity` rows at most. */
async function vectorsRead(query: Executable, column: { name: string; dimensions: number }, capacity: number) {
  const out = { ids: new BigUint64Array(capacity), vectors: new Float32Array(capacity * column.dimensions) };
  let filled = 0;
  await eachBatch(query, "read the vectors", (batch) => {
    if (filled + batch.numRows > capacity) throw new QuiverError("ServiceUnavailable", "the table changed while its map was read; try again");
    filled = appendVectors(batch.getChild(column.name)!, batch.getChild("_rowid")!, column.dimensions, out, filled);
  });
  return { ids: out.ids.subarray(0, filled), vectors: out.vectors, n: filled };
}

/** The vectors of the rows of these ids that have one. */
function vectorsOfRows(handle: NativeTable, column: { name: string; dimensions: number }, ids: bigint[]) {
  const query = handle.takeRowIds(ids);
  query.selectColumns([column.name]);
  query.withRowId();
  return vectorsRead(query, column, ids.length);
}

/** A seeded random sample's seed: a map of a version holds the same rows however often it is made. */
const SAMPLE_SEED = 7;

/**
 * `most` of these ids chosen at random (seeded), in the table's order. Every n-th row would miss whatever the rows
 * repeat with a period n divides (rows written round-robin from n sources, say): a value could then have none.
 */
function sampleOf(ids: BigUint64Array, most: number): bigint[] {
  const random = seededRandom(SAMPLE_SEED);
  const chosen = new Uint8Array(ids.length);
  // Floyd's: each position equally likely, `most` draws.
  for (let j = ids.length - most; j < ids.length; j++) {
    const pick = Math.floor(random() * (j + 1));
    chosen[chosen[pick] ? j : pick] = 1;
  }
  const out: bigint[] = [];
  for (let i = 0; i < ids.length; i++) if (chosen[i]) out.push(ids[i]);
  return out;
}

/**
 * The vectors to lay out, with their rows' ids: every row with one, or a sample of `config.mapMaxPoints` of them.
 * The table's row count (from its manifest) sizes the arrays; the rows without a vector are what the scan leaves out.
 */
async function readVectors(handle: NativeTable, column: { name: string; dimensions: number }, rows: number) {
  const most = config.mapMaxPoints;
  if (rows > most) {
    const scan = handle.query();
    scan.onlyIf(`${quoted(column.name)} IS NOT NULL`);
    scan.selectColumns([]);
    scan.withRowId();
    const all = new BigUint64Array(rows);
    let filled = 0;
    for (const batch of await collect(scan, "list the rows")) filled = copyIds(batch.getChild("_rowid")!, all, filled);
    const ids = filled > most ? sampleOf(all.subarray(0, filled), most) : [...all.subarray(0, filled)];
    const read = await vectorsOfRows(handle, column, ids);
    return { ...read, rows, withoutVector: rows - filled, sampled: filled > most };
  }
  // Every row is read and the null vectors skipped here: a filter on the column costs the engine more than that.
  const query = handle.query();
  query.selectColumns([column.name]);
  query.withRowId();
  const read = await vectorsRead(query, column, rows);
  return { ...read, rows, withoutVector: rows - read.n, sampled: false };
}

/**
 * Rows a preview's sample takes side by side. Runs of neighbouring rows, spread evenly over the table, read their
 * vectors' pages whole: 5,000 rows of a 100,000 × 768 table in 76 ms, against 145 ms for as many rows one by one
 * (medians of 5, from the page cache; each row then a page of its own to read and decode, and on an object store a
 * range request of its own).
 */
const SAMPLE_RUN_ROWS = 50;

/** The vectors of a sample of MAP_PREVIEW_ROWS rows in runs spread evenly over the table (rows without a vector left out). */
async function readSample(handle: NativeTable, column: { name: string; dimensions: number }, rows: number) {
  const runs = Math.ceil(MAP_PREVIEW_ROWS / SAMPLE_RUN_ROWS);
  const offsets = Array.from({ length: MAP_PREVIEW_ROWS }, (_, i) => Math.floor((Math.floor(i / SAMPLE_RUN_ROWS) * rows) / runs) + (i % SAMPLE_RUN_ROWS));
  const out = { ids: new BigUint64Array(offsets.length), vectors: new Float32Array(offsets.length * column.dimensions) };
  const query = handle.takeOffsets(offsets);
  query.selectColumns([column.name]);
  query.withRowId();
  let filled = 0;
  await eachBatch(query, "read a sample of the vectors", (batch) => {
    filled = appendVectors(batch.getChild(column.name)!, batch.getChild("_rowid")!, column.dimensions, out, filled);
  });
  return { ids: out.ids.subarray(0, filled), vectors: out.vectors, n: filled };
}

const layoutFile = (layout: Layout | Placement): Buffer => {
  const columns: Record<string, Vector> = { _rowid: makeVector(layout.ids), x: makeVector(layout.x), y: makeVector(layout.y) };
  if ("placed" in layout) columns.placed = makeVector(layout.placed);
  const table = new Table(columns);
  table.schema.metadata.set(MAP_METADATA_KEY, JSON.stringify(layout.facts));
  return Buffer.from(tableToIPC(table, "file"));
};

const PROJECTION_KEY = "quiver.map.projection";

/** A projection as a file: the reduced rows as one column, the basis (base64 of its floats) in the metadata. */
function projectionFile(projection: Projection): Buffer {
  const table = new Table({ reduced: makeVector(projection.reduced) });
  const basis = Buffer.from(projection.basis.buffer, projection.basis.byteOffset, projection.basis.byteLength).toString("base64");
  table.schema.metadata.set(PROJECTION_KEY, JSON.stringify({ k: projection.k, basis }));
  return Buffer.from(tableToIPC(table, "file"));
}

function projectionOf(file: Buffer): Projection {
  const table = tableFromIPC(file);
  const { k, basis } = JSON.parse(table.schema.metadata.get(PROJECTION_KEY)!) as { k: number; basis: string };
  const bytes = Buffer.from(basis, "base64");
  return {
    k,
    basis: new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)),
    reduced: table.getChild("reduced")!.toArray() as Float32Array,
  };
}

function layoutOf(file: Buffer): Layout | Placement {
  const table = tableFromIPC(file);
  const flat = <T extends BigUint64Array | Float32Array | Uint8Array>(name: string) => table.getChild(name)!.toArray() as T;
  const layout = {
    ids: flat<BigUint64Array>("_rowid"),
    x: flat<Float32Array>("x"),
    y: flat<Float32Array>("y"),
    facts: JSON.parse(table.schema.metadata.get(MAP_METADATA_KEY)!) as Layout["facts"],
  };
  return table.getChild("placed") ? { ...layout, placed: flat<Uint8Array>("placed") } : layout;
}

/** Projections held in memory, the most recently read last. */
const heldProjections = new Map<string, Promise<Projection>>();
const HELD_PROJECTIONS = 2;

/** The rows a sampled map adds to fill its values' quotas, placed onto its refined layout, and how many values there are. */
interface Strata {
  ids: BigUint64Array;
  x: Float32Array;
  y: Float32Array;
  facts: { values: number; topped_up: number; too_many_values: boolean };
}
const STRATA_KEY = "quiver.map.strata";
const strataName = (column: string) => `strata-${createHash("sha256").update(column).digest("hex").slice(0, 16)}.arrow`;

/** The worker thread's module, shipped beside the server as Node loads it (the bundle would rename it). */
const WORKER = path.join(/*turbopackIgnore: true*/ process.cwd(), "server/maps/layout-worker.ts");

class MapStore {
  constructor(
    private readonly store: ObjectStore,
    readonly folder: string,
  ) {}

  async read(stage: Layout["facts"]["stage"]): Promise<Layout | null> {
    const file = await this.store.get(`${this.folder}${stage}.arrow`);
    return file ? layoutOf(file) : null;
  }

  /** A refined layout's projection is written before it: a refined layout found has its projection. */
  async write(layout: Layout): Promise<void> {
    if (layout.projection) await this.store.put(`${this.folder}projection.arrow`, projectionFile(layout.projection));
    await this.store.put(`${this.folder}${layout.facts.stage}.arrow`, layoutFile(layout));
  }

  /** The refined layout's projection, held for the last few maps asked (13 MB a 100,000 rows: read once, not per request). */
  projection(): Promise<Projection> {
    const held = heldProjections.get(this.folder);
    if (held) return held;
    const read = (async () => {
      const file = await this.store.get(`${this.folder}projection.arrow`);
      if (!file) throw new QuiverError("ServiceUnavailable", "a map's projection went missing from the root while it was read; try again");
      return projectionOf(file);
    })();
    heldProjections.set(this.folder, read);
    if (heldProjections.size > HELD_PROJECTIONS) heldProjections.delete(heldProjections.keys().next().value!);
    read.catch(() => heldProjections.delete(this.folder));
    return read;
  }

  async readStrata(column: string): Promise<Strata | null> {
    const file = await this.store.get(`${this.folder}${strataName(column)}`);
    if (!file) return null;
    const table = tableFromIPC(file);
    return {
      ids: table.getChild("_rowid")!.toArray() as BigUint64Array,
      x: table.getChild("x")!.toArray() as Float32Array,
      y: table.getChild("y")!.toArray() as Float32Array,
      facts: JSON.parse(table.schema.metadata.get(STRATA_KEY)!) as Strata["facts"],
    };
  }

  writeStrata(column: string, strata: Strata): Promise<void> {
    const table = new Table({ _rowid: makeVector(strata.ids), x: makeVector(strata.x), y: makeVector(strata.y) });
    table.schema.metadata.set(STRATA_KEY, JSON.stringify(strata.facts));
    return this.store.put(`${this.folder}${strataName(column)}`, Buffer.from(tableToIPC(table, "file")));
  }

  async readPlacement(onto: string): Promise<Placement | null> {
    const file = await this.store.get(`${this.folder}on-${onto}.arrow`);
    return file ? (layoutOf(file) as Placement) : null;
  }

  writePlacement(onto: string, placement: Placement): Promise<void> {
    return this.store.put(`${this.folder}on-${onto}.arrow`, layoutFile(placement));
  }

  /** Whether another instance is refining this map: its marker renewed lately. */
  async refiningElsewhere(): Promise<boolean> {
    const marker = await this.store.get(`${this.folder}refining.json`);
    if (!marker) return false;
    const { at } = JSON.parse(marker.toString("utf8")) as { at: number };
    return Date.now() - at < MARKER_STALE_MS;
  }

  mark(): Promise<void> {
    return this.store.put(`${this.folder}refining.json`, JSON.stringify({ instance: INSTANCE, at: Date.now() }));
  }

  unmark(): Promise<void> {
    return this.store.delete(`${this.folder}refining.json`);
  }
}

/** Lays out the vectors in a worker thread: the first layout's promise, and the refined one handed to `refined`. */
function runLayout(
  read: Awaited<ReturnType<typeof readVectors>>,
  job: Omit<LayoutJob, "vectors" | "n" | "kind">,
  refined: (layout: Layout) => Promise<void>,
  failed: (err: Error) => void,
): Promise<Layout> {
  const facts = { rows: read.rows, points: read.n, without_vector: read.withoutVector, sampled: read.sampled, dimensions: job.dim };
  return new Promise<Layout>((resolve, reject) => {
    const worker = new Worker(WORKER);
    let settled = false;
    const fail = (err: Error) => {
      void worker.terminate();
      if (!settled) reject(err);
      else failed(err);
      settled = true;
    };
    worker.on("error", fail);
    worker.on("message", (message: LayoutMessage) => {
      if (message.stage === "failed" || message.stage === "placed")
        return fail(new Error(message.stage === "failed" ? message.message : "a layout was placed"));
      const projection = message.stage === "refined" ? { projection: message.projection } : {};
      const layout: Layout = { ids: read.ids, x: message.x, y: message.y, facts: { ...facts, stage: message.stage }, ...projection };
      metrics.mapLayouts.inc({ stage: message.stage });
      if (message.stage === "first") {
        settled = true;
        resolve(layout);
        return;
      }
      void worker.terminate();
      refined(layout).catch(failed);
    });
    const message: LayoutJob = { ...job, kind: "layout", vectors: read.vectors, n: read.n };
    worker.postMessage(message, [read.vectors.buffer]);
  });
}

/** A job of one answer in a worker thread: a preview's layout, or a placement. */
function oneAnswer<S extends "first" | "placed">(
  job: LayoutJob | PlaceJob,
  stage: S,
  worker = new Worker(WORKER),
): Promise<Extract<LayoutMessage, { stage: S }>> {
  return new Promise((resolve, reject) => {
    worker.on("error", reject);
    worker.on("message", (message: LayoutMessage) => {
      void worker.terminate();
      if (message.stage === stage) resolve(message as Extract<LayoutMessage, { stage: S }>);
      else reject(new Error(message.stage === "failed" ? message.message : `the worker answered a ${message.stage} layout`));
    });
    worker.postMessage(job, [job.vectors.buffer as ArrayBuffer]);
  });
}

/** The principal components of a sample spread over the table: what a large table's map shows while every row is read. */
async function previewLayout(
  sample: Awaited<ReturnType<typeof readSample>>,
  rows: number,
  job: Omit<LayoutJob, "vectors" | "n" | "kind">,
  worker: Worker,
): Promise<Layout> {
  const { x, y } = await oneAnswer({ ...job, kind: "preview", vectors: sample.vectors, n: sample.n }, "first", worker);
  metrics.mapLayouts.inc({ stage: "preview" });
  return { ids: sample.ids, x, y, facts: { stage: "preview", rows, points: sample.n, without_vector: 0, sampled: true, dimensions: job.dim } };
}

/**
 * Whether a map shows a preview first: when its vectors are many enough that reading them all takes a while (on this
 * machine about a second for 64 MB) and a sample of MAP_PREVIEW_ROWS is quicker to read and lay out.
 */
const previewed = (rows: number, dimensions: number) => rows > MAP_PREVIEW_ROWS && rows * dimensions >= MAP_PREVIEW_VALUES;

/** How long an instance waits for another's first look at a map before laying it out itself. */
const WAIT_ELSEWHERE_MS = 15_000;
const LOOK_EVERY_MS = 300;

/** Another instance's first look at the map (its preview or first layout) as soon as it is in the root. */
async function shownSoon(maps: MapStore): Promise<Layout | null> {
  for (const until = Date.now() + WAIT_ELSEWHERE_MS; Date.now() < until; await new Promise((r) => setTimeout(r, LOOK_EVERY_MS))) {
    const [first, preview] = await Promise.all([maps.read("first"), maps.read("preview")]);
    if (first ?? preview) return first ?? preview;
    if (!(await maps.refiningElsewhere())) return null;
  }
  return null;
}

/**
 * The map's layout: made here, being made here or by another instance, or found in the root. A large table's map
 * answers a preview of a sample first while every row is read.
 */
async function layoutFor(
  key: string,
  maps: MapStore,
  handle: NativeTable,
  column: { name: string; dimensions: number },
  job: Omit<LayoutJob, "vectors" | "n" | "kind">,
): Promise<{ layout: Layout; refining: boolean }> {
  const here = running.get(key);
  if (here) {
    const layout = here.latest ?? (await here.earliest);
    return { layout, refining: layout.facts.stage !== "refined" };
  }
  const refined = await maps.read("refined");
  if (refined) return { layout: refined, refining: false };
  const [first, elsewhere] = await Promise.all([maps.read("first"), maps.refiningElsewhere()]);
  if (elsewhere) {
    const early = first ?? (await shownSoon(maps));
    if (early) return { layout: early, refining: true };
  }
  if (running.size >= MAX_RUNNING) throw new QuiverError("ServiceUnavailable", `this server is laying out ${running.size} maps already; try again shortly`);
  const renew = setInterval(() => void maps.mark().catch(() => undefined), MARKER_RENEW_MS);
  renew.unref();
  const done = () => {
    clearInterval(renew);
    running.delete(key);
    void maps.unmark().catch(() => undefined);
  };
  const started = performance.now();
  const made = (layout: Layout) =>
    log.info({ map: key, stage: layout.facts.stage, points: layout.facts.points, ms: Math.round(performance.now() - started) }, "a table's map laid out");
  const counted = engineCall("count the rows", () => handle.countRows());
  const previewMade = counted.then(async (rows) => {
    if (!previewed(rows, column.dimensions)) return null;
    // The worker starts while the sample is read.
    const worker = new Worker(WORKER);
    const sample = await readSample(handle, column, rows).catch(async (err: unknown) => {
      await worker.terminate();
      throw err;
    });
    // A sample without vectors shows nothing: every row's read tells how many have none.
    if (sample.n) return previewLayout(sample, rows, job, worker);
    await worker.terminate();
    return null;
  });
  const entry = {} as Job;
  entry.first = (async () => {
    await maps.mark();
    const rows = await counted;
    // The preview is made first: every row's scan beside it would crowd it off the machine's cores.
    await previewMade.catch(() => null);
    const vectors = await readVectors(handle, column, rows);
    const layout = await runLayout(
      vectors,
      job,
      async (refined) => {
        made(refined);
        await maps.write(refined);
        entry.latest = refined;
        done();
      },
      (err) => {
        log.error({ err, map: key }, "refining a table's map failed");
        done();
      },
    );
    made(layout);
    await maps.write(layout);
    entry.latest = layout;
    return layout;
  })();
  const preview = (async () => {
    const layout = await previewMade;
    if (!layout) return entry.first;
    made(layout);
    if (entry.latest) return entry.latest;
    entry.latest = layout;
    // Kept for other instances, not awaited: the caller sees the preview at once.
    maps.write(layout).catch((err: unknown) => log.warn({ err, map: key }, "keeping a map's preview failed"));
    return layout;
  })();
  // A preview that fails leaves the first layout to answer.
  entry.earliest = preview.catch(() => entry.first);
  running.set(key, entry);
  entry.first.catch(done);
  const layout = await entry.earliest;
  return { layout, refining: true };
}

const isText = (type: DataType) => DataType.isUtf8(type) || DataType.isLargeUtf8(type) || (DataType.isDictionary(type) && DataType.isUtf8(type.dictionary));
const cut = (value: unknown) => (typeof value === "string" && value.length > MAP_TEXT_CHARS ? `${value.slice(0, MAP_TEXT_CHARS)}…` : value);

/**
 * The shown columns' values in the layout's order of rows, text cut short: one scan of those columns (small beside
 * the vectors), whose rows are the layout's in the same order when every row has a vector and none was left out of a
 * sample; otherwise each point's row is found by its id among those scanned. `only`: the points are a few of the
 * table's rows, taken by their ids instead of scanning every row.
 */
async function shownColumns(handle: NativeTable, ids: BigUint64Array, fields: Field[], { only = false } = {}): Promise<Record<string, Vector>> {
  if (!fields.length || !ids.length) return Object.fromEntries(fields.map((f) => [f.name, vectorFromArray([], isText(f.type) ? new Utf8() : f.type)]));
  const scan = only ? handle.takeRowIds([...ids]) : handle.query();
  scan.selectColumns(fields.map((f) => f.name));
  scan.withRowId();
  const batches = await collect(scan, "read the map's columns");
  const whole = batches.slice(1).reduce((all, batch) => all.concat(batch), batches[0]);
  const scanned = whole.getChild("_rowid")!.toArray() as BigUint64Array;
  const inOrder = scanned.length === ids.length && scanned.every((id, i) => id === ids[i]);
  let positions: Int32Array | null = null;
  if (!inOrder) {
    const at = new Map<bigint, number>();
    scanned.forEach((id, i) => at.set(id, i));
    positions = Int32Array.from(ids, (id) => at.get(id) ?? -1);
  }
  const out: Record<string, Vector> = {};
  for (const field of fields) {
    const column = whole.getChild(field.name)!;
    const text = isText(field.type);
    if (positions === null && !text) {
      out[field.name] = column;
      continue;
    }
    const values = positions === null ? Array.from(column) : Array.from(positions, (p) => (p < 0 ? null : column.get(p)));
    out[field.name] = text ? vectorFromArray(values.map(cut) as Array<string | null>, new Utf8()) : vectorFromArray(values, field.type);
  }
  return out;
}

async function manifestEtag(tables: Tables, entry: TableEntry, version: number): Promise<string> {
  const files = tables.filesOf(entry);
  const { sources } = await files.versions(files.directoryOf());
  return sources.get(version)?.info?.etag ?? "";
}

/** Where a version's maps are kept: the key names the table's location, the version and its manifest, the column and the metric. */
async function mapsOf(tables: Tables, entry: TableEntry, version: number, column: string, metric: "l2" | "cosine") {
  const etag = await manifestEtag(tables, entry, version);
  const key = createHash("sha256")
    .update(JSON.stringify([LAYOUT_REVISION, entry.location, version, etag, column, metric]))
    .digest("hex")
    .slice(0, 40);
  const folder = `${MAPS_PREFIX}${key}/`;
  noteMapUse(tables.records, folder);
  return { key, maps: new MapStore(tables.records, folder) };
}

/** A version's layout (made, being made, or found in the root) and where it is kept. */
async function layoutAt(
  tables: Tables,
  entry: TableEntry,
  handle: NativeTable,
  version: number,
  column: { name: string; dimensions: number },
  metric: "l2" | "cosine",
) {
  const { key, maps } = await mapsOf(tables, entry, version, column.name, metric);
  const made = await layoutFor(key, maps, handle, column, { dim: column.dimensions, metric, ...REFINE });
  return { key, maps, ...made };
}

type Onto = Awaited<ReturnType<typeof layoutAt>>;

/** Work kept in the root that is asked for again while this process makes it: the second caller joins the first. */
const making = new Map<string, Promise<unknown>>();
function joined<T>(key: string, work: () => Promise<T>): Promise<T> {
  const running = making.get(key);
  if (running) return running as Promise<T>;
  const started = work().finally(() => making.delete(key));
  making.set(key, started);
  return started;
}

/**
 * Rows placed onto a refined layout in a worker thread: a row whose vector the layout holds for its id keeps its
 * place, the others go among their nearest laid-out rows.
 */
async function placedOnto(
  read: { ids: BigUint64Array; vectors: Float32Array; n: number },
  column: { dimensions: number },
  metric: "l2" | "cosine",
  onto: Onto,
): Promise<{ x: Float32Array; y: Float32Array; placed: Uint8Array }> {
  if (!read.n) return { x: new Float32Array(0), y: new Float32Array(0), placed: new Uint8Array(0) };
  const projection = await onto.maps.projection();
  const made = await oneAnswer(
    {
      kind: "place",
      vectors: read.vectors,
      n: read.n,
      dim: column.dimensions,
      metric,
      ids: read.ids,
      onto: { ids: onto.layout.ids, x: onto.layout.x, y: onto.layout.y, projection },
    },
    "placed",
  );
  metrics.mapLayouts.inc({ stage: "placed" });
  return made;
}

/** A version's rows placed onto another version's refined layout: made once, then kept beside the version's own map. */
async function placementOn(
  here: MapStore,
  handle: NativeTable,
  column: { name: string; dimensions: number },
  metric: "l2" | "cosine",
  onto: Onto,
): Promise<Placement> {
  return joined(`${here.folder}on-${onto.key}`, async () => {
    const kept = await here.readPlacement(onto.key);
    if (kept) return kept;
    const rows = await engineCall("count the rows", () => handle.countRows());
    const read = await readVectors(handle, column, rows);
    const made = await placedOnto(read, column, metric, onto);
    const placement: Placement = {
      ids: read.ids,
      x: made.x,
      y: made.y,
      placed: made.placed,
      facts: { stage: "refined", rows: read.rows, points: read.n, without_vector: read.withoutVector, sampled: read.sampled, dimensions: column.dimensions },
    };
    await here.writePlacement(onto.key, placement);
    return placement;
  });
}

const answerFile = (columns: Record<string, Vector>, facts: MapFacts | MapPlaceFacts): Buffer => {
  const table = new Table(columns);
  table.schema.metadata.set(MAP_METADATA_KEY, JSON.stringify(facts));
  return Buffer.from(tableToIPC(table, "file"));
};

/** An answer's columns without a point: a caller that holds the map, or waits for the layout its rows go onto. */
const noPoints = () => ({ _rowid: makeVector(new BigUint64Array(0)), x: makeVector(new Float32Array(0)), y: makeVector(new Float32Array(0)) });

/** The table's version a map request names, its vector column and the columns shown, each checked. */
async function mappedTable(tables: Tables, id: Id, request: Pick<MapRequest, "version" | "column" | "shown">) {
  const name = joinIdentifier(id);
  const { entry, value: handle } = await tables.resolveWith(id, (at) => tables.fixedHandle(at, "be mapped", { version: request.version }));
  const [schema, version] = await Promise.all([tables.schemaOf(handle), engineCall("read the version", () => handle.version())]);
  return { name, entry, handle, schema, version, column: vectorColumn(schema, name, request.column), shown: shownFields(schema, name, request.shown) };
}

/**
 * The map of a table's version: an Arrow IPC file of `_rowid`, `x`, `y` and the shown columns, its facts in its
 * metadata. Placed onto another version's layout, it has `placed` too (1: the row's vector is not the one that
 * layout holds for it, so the row was put among its nearest rows there; 0: it kept its place).
 */
export async function tableMap(tables: Tables, id: Id, request: MapRequest): Promise<Buffer> {
  const { name, entry, handle, version, column, shown } = await mappedTable(tables, id, request);
  const mapped = { version, column: column.name, metric: request.metric };
  if (request.placedOn !== undefined) {
    if (request.have) throw invalidInput("have_stage says which stage of a map the caller holds; a placed map is answered whole: send one or the other");
    const base = await tables.resolveWith(id, (at) => tables.fixedHandle(at, "be mapped", { version: request.placedOn }));
    const baseVersion = await engineCall("read the version", () => base.value.version());
    const baseColumn = vectorColumn(await tables.schemaOf(base.value), name, column.name);
    if (baseColumn.dimensions !== column.dimensions)
      throw invalidInput(
        `column '${column.name}' holds ${baseColumn.dimensions} values a row at version ${baseVersion} and ${column.dimensions} at ${version}: its rows cannot share a layout`,
      );
    const onto = await layoutAt(tables, base.entry, base.value, baseVersion, baseColumn, request.metric);
    if (onto.layout.facts.stage !== "refined") {
      const waiting = { ...mapped, ...onto.layout.facts, refining: true, points: 0, placed_on: baseVersion, placed: 0 };
      return answerFile(noPoints(), waiting);
    }
    const { maps: here } = await mapsOf(tables, entry, version, column.name, request.metric);
    const placement = await placementOn(here, handle, column, request.metric, onto);
    const placedCount = placement.placed.reduce((sum, p) => sum + p, 0);
    return answerFile(
      {
        _rowid: makeVector(placement.ids),
        x: makeVector(placement.x),
        y: makeVector(placement.y),
        placed: makeVector(placement.placed),
        ...(await shownColumns(handle, placement.ids, shown)),
      },
      { ...mapped, refining: false, ...placement.facts, placed_on: baseVersion, placed: placedCount },
    );
  }
  const { layout, refining } = await layoutAt(tables, entry, handle, version, column, request.metric);
  const facts: MapFacts = { ...mapped, refining, ...layout.facts };
  if (request.have === "preview" && layout.facts.stage === "preview") {
    return answerFile(noPoints(), facts);
  }
  if (request.have === "first") {
    const refined = layout.facts.stage === "refined";
    return answerFile({ x: makeVector(refined ? layout.x : new Float32Array(0)), y: makeVector(refined ? layout.y : new Float32Array(0)) }, facts);
  }
  return answerFile(
    { _rowid: makeVector(layout.ids), x: makeVector(layout.x), y: makeVector(layout.y), ...(await shownColumns(handle, layout.ids, shown)) },
    facts,
  );
}

/** A date as its time, so that equal dates are one value. */
const valueKey = (value: unknown) => (value instanceof Date ? value.getTime() : (value ?? null));

/**
 * The rows a sampled map adds so that each of a column's values keeps MAP_STRATUM_QUOTA rows on it (every row of a
 * rarer value): for each value the sample holds too few of, rows spread evenly over those it left out, the
 * rarest values first. One scan of the column, of the rows with a vector.
 */
async function strataRows(handle: NativeTable, column: { name: string }, by: Field, onMap: Set<bigint>): Promise<{ ids: bigint[]; facts: Strata["facts"] }> {
  const groups = new Map<unknown, bigint[]>();
  const scan = handle.query();
  scan.onlyIf(`${quoted(column.name)} IS NOT NULL`);
  scan.selectColumns([by.name]);
  scan.withRowId();
  await eachBatch(scan, "read the column the map is stratified by", (batch) => {
    if (groups.size > MAP_MAX_STRATA) return;
    const values = batch.getChild(by.name)!;
    const ids = batch.getChild("_rowid")!.toArray() as BigUint64Array;
    for (let i = 0; i < ids.length && groups.size <= MAP_MAX_STRATA; i++) {
      const value = valueKey(values.get(i));
      const group = groups.get(value);
      if (group) group.push(ids[i]);
      else groups.set(value, [ids[i]]);
    }
  });
  if (groups.size > MAP_MAX_STRATA) return { ids: [], facts: { values: groups.size, topped_up: 0, too_many_values: true } };
  const ids: bigint[] = [];
  let toppedUp = 0;
  for (const group of [...groups.values()].sort((a, b) => a.length - b.length)) {
    const left = group.filter((id) => !onMap.has(id));
    const held = group.length - left.length;
    const wanted = Math.min(group.length, Math.max(held, MAP_STRATUM_QUOTA)) - held;
    if (wanted <= 0) continue;
    toppedUp++;
    for (let j = 0; j < wanted; j++) ids.push(left[Math.floor((j * left.length) / wanted)]);
  }
  return { ids, facts: { values: groups.size, topped_up: toppedUp, too_many_values: false } };
}

/** A sampled map's rows of its rarer values, placed onto its refined layout: made once per column, then kept beside it. */
async function strataOf(
  handle: NativeTable,
  column: { name: string; dimensions: number },
  by: Field,
  metric: "l2" | "cosine",
  onto: Onto,
  onMap: Set<bigint>,
): Promise<Strata> {
  return joined(`${onto.maps.folder}${strataName(by.name)}`, async () => {
    const kept = await onto.maps.readStrata(by.name);
    if (kept) return kept;
    const chosen = await strataRows(handle, column, by, onMap);
    const read = await vectorsOfRows(handle, column, chosen.ids);
    const { x, y } = await placedOnto(read, column, metric, onto);
    const strata = { ids: read.ids.slice(), x, y, facts: chosen.facts };
    await onto.maps.writeStrata(by.name, strata);
    return strata;
  });
}

/** The vectors of those of these rows that exist at the handle's version and have one. */
function vectorsWhere(handle: NativeTable, column: { name: string; dimensions: number }, ids: bigint[]) {
  const query = handle.query();
  query.onlyIf(`_rowid IN (${ids.join(", ")})`);
  query.selectColumns([column.name]);
  query.withRowId();
  return vectorsRead(query, column, ids.length);
}

export interface MapPlaceRequest extends Omit<MapRequest, "have" | "placedOn"> {
  rowIds: number[];
  stratifyBy?: string;
}

/**
 * Rows a sampled map left out, placed onto its refined layout (PlaceTableMapRows): those asked for by id, and the
 * stratifying column's rarer values up to their quota. An Arrow IPC file of `_rowid`, `x`, `y`, `reason` and the shown
 * columns; no rows until the layout is refined.
 */
export async function placeMapRows(tables: Tables, id: Id, request: MapPlaceRequest): Promise<Buffer> {
  const { name, entry, handle, schema, version, column, shown } = await mappedTable(tables, id, request);
  const by = request.stratifyBy === undefined ? undefined : shownFields(schema, name, [request.stratifyBy])[0];
  const asked = [...new Set(request.rowIds.map(BigInt))];
  const onto = await layoutAt(tables, entry, handle, version, column, request.metric);
  const { stage, rows, sampled } = onto.layout.facts;
  const facts: MapPlaceFacts = {
    version,
    column: column.name,
    metric: request.metric,
    stage,
    refining: onto.refining,
    rows,
    sampled,
    points: 0,
    asked: asked.length,
    already_on_map: 0,
    not_placed: 0,
    ...(by ? { stratified_by: by.name } : {}),
  };
  if (stage !== "refined") return answerFile({ ...noPoints(), reason: makeVector(new Uint8Array(0)) }, facts);
  const onMap = new Set(onto.layout.ids);
  // Every row with a vector is on a map that is not a sample: there is nothing to add to it.
  const strata = by && sampled ? await strataOf(handle, column, by, request.metric, onto, onMap) : null;
  const byQuota = new Set(strata?.ids);
  const left = asked.filter((rowId) => !onMap.has(rowId));
  const wanted = sampled ? left.filter((rowId) => !byQuota.has(rowId)) : [];
  const read = wanted.length ? await vectorsWhere(handle, column, wanted) : { ids: new BigUint64Array(0), vectors: new Float32Array(0), n: 0 };
  const ids = read.ids.slice();
  const placed = await placedOnto(read, column, request.metric, onto);
  const quota = strata?.ids.length ?? 0;
  const all = new BigUint64Array(quota + ids.length);
  const x = new Float32Array(all.length);
  const y = new Float32Array(all.length);
  const reason = new Uint8Array(all.length).fill(MAP_PLACED_REASONS.asked, quota);
  if (strata) {
    all.set(strata.ids);
    x.set(strata.x);
    y.set(strata.y);
    reason.fill(MAP_PLACED_REASONS.quota, 0, quota);
  }
  all.set(ids, quota);
  x.set(placed.x, quota);
  y.set(placed.y, quota);
  const askedByQuota = left.filter((rowId) => byQuota.has(rowId)).length;
  const answered: MapPlaceFacts = {
    ...facts,
    points: all.length,
    already_on_map: asked.length - left.length,
    not_placed: left.length - askedByQuota - ids.length,
    ...(strata ? (strata.facts.too_many_values ? { too_many_values: true } : { values: strata.facts.values, topped_up: strata.facts.topped_up }) : {}),
  };
  return answerFile(
    { _rowid: makeVector(all), x: makeVector(x), y: makeVector(y), reason: makeVector(reason), ...(await shownColumns(handle, all, shown, { only: true })) },
    answered,
  );
}
