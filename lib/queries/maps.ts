/**
 * A table's map: its rows' coordinates and the columns shown with them. A preview (a large table's sample) is asked
 * for again as `have_stage: "preview"`, which answers nothing until every row is laid out and then every row; while
 * the layout is refined it is asked for again as `have_stage: "first"`, which answers nothing until the refined
 * layout is ready and then its coordinates alone: the rows and their columns are the first answer's.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { tableFromIPC, type Table as ArrowTable } from "apache-arrow";
import { call, type BodyOf } from "../api-client";
import { MAP_METADATA_KEY, type MapFacts, type MapPlaceFacts } from "../contract/maps";
import { queryKeys } from "./keys";

export interface TableMap {
  facts: MapFacts;
  x: Float32Array;
  y: Float32Array;
  /** Each point's row, as the rows' `_rowid` (for the version mapped). */
  rowIds: BigUint64Array;
  /** The shown columns, a value per point. */
  columns: ArrowTable;
  /** Placed onto another version's layout: 1 where the row was placed anew (its vector new or changed), 0 where it kept its place. */
  placed?: Uint8Array;
}

/** How often a map being refined is asked for again. */
const REFINING_POLL_MS = 1_500;

export type MapRequest = Omit<BodyOf<"GetTableMap">, "identity" | "context" | "have_stage">;

async function fetchMap(database: string, table: string[], request: MapRequest, held: TableMap | undefined): Promise<TableMap> {
  // A placement is answered whole once the layout it is placed onto is ready.
  const have = held && held.facts.stage !== "refined" && !request.placed_on_version ? held.facts.stage : undefined;
  const body = have ? { ...request, have_stage: have } : request;
  const answer = tableFromIPC(new Uint8Array(await call("GetTableMap", { id: table, database, body })));
  const facts = JSON.parse(answer.schema.metadata.get(MAP_METADATA_KEY)!) as MapFacts;
  // The same preview again: the map drawn stays as it is.
  if (held && have === "preview" && facts.stage === "preview") return held;
  if (held && have === "first") {
    if (facts.stage !== "refined") return facts.refining === held.facts.refining ? held : { ...held, facts: { ...held.facts, refining: facts.refining } };
    return { ...held, facts, x: answer.getChild("x")!.toArray() as Float32Array, y: answer.getChild("y")!.toArray() as Float32Array };
  }
  return { facts, ...pointsOf(answer), placed: answer.getChild("placed")?.toArray() as Uint8Array | undefined };
}

/** An answer's points: their coordinates, their rows and the columns shown with them. */
const pointsOf = (answer: ArrowTable) => ({
  x: answer.getChild("x")!.toArray() as Float32Array,
  y: answer.getChild("y")!.toArray() as Float32Array,
  rowIds: answer.getChild("_rowid")!.toArray() as BigUint64Array,
  columns: answer,
});

export function useTableMap(database: string, table: string[], request: MapRequest, enabled = true) {
  const client = useQueryClient();
  const key = queryKeys.map(database, table, request);
  return useQuery({
    queryKey: key,
    queryFn: () => fetchMap(database, table, request, client.getQueryData<TableMap>(key)),
    refetchInterval: (query) => (query.state.data?.facts.refining ? REFINING_POLL_MS : false),
    retry: false,
    enabled,
  });
}

export type PlaceRequest = Omit<BodyOf<"PlaceTableMapRows">, "identity" | "context">;

/** Rows a sampled map left out, placed onto its refined layout: a column's rarer values, or rows asked for by id. */
export interface PlacedRows {
  facts: MapPlaceFacts;
  x: Float32Array;
  y: Float32Array;
  rowIds: BigUint64Array;
  columns: ArrowTable;
}

/** Asked again while the map's layout is refined: its rows are placed once it is. */
export function usePlacedRows(database: string, table: string[], request: PlaceRequest | null) {
  return useQuery({
    queryKey: [...queryKeys.map(database, table, request ?? {}), "placed"] as const,
    queryFn: async (): Promise<PlacedRows> => {
      const answer = tableFromIPC(new Uint8Array(await call("PlaceTableMapRows", { id: table, database, body: request! })));
      return { facts: JSON.parse(answer.schema.metadata.get(MAP_METADATA_KEY)!) as MapPlaceFacts, ...pointsOf(answer) };
    },
    refetchInterval: (query) => (query.state.data?.facts.refining ? REFINING_POLL_MS : false),
    enabled: request !== null,
    retry: false,
  });
}

/** A row near another, as a vector search answers it. */
export interface Neighbour {
  rowId: string;
  distance: number;
}

/** How a point's nearest rows are found: exactly, and through the column's vector index when it has one. */
export interface NeighbourSearch {
  version: number;
  column: string;
  /** The distance the index was built for, or the map's when the column has no index. */
  metric: string;
  indexed: boolean;
  k: number;
}

/** A point's nearest rows found both ways, and the share of the exact ones the index found. */
export interface Neighbours {
  exact: Neighbour[];
  indexed: Neighbour[] | null;
  recall: number | null;
}

/** The vectors of some rows at a version, by row id. */
async function vectorsOf(database: string, table: string[], version: number, column: string, rowIds: string[]): Promise<Map<string, number[]>> {
  const body = { version, columns: [column], filter: `_rowid IN (${rowIds.join(", ")})`, limit: rowIds.length, with_row_id: true };
  const answer = tableFromIPC(new Uint8Array(await call("QueryTable", { id: table, database, body })));
  const ids = answer.getChild("_rowid")!;
  const vectors = answer.getChild(column)!;
  const found = new Map<string, number[]>();
  for (let i = 0; i < answer.numRows; i++) found.set(String(ids.get(i)), Array.from(vectors.get(i)!.toArray() as Float32Array));
  return found;
}

/** The k rows nearest a vector other than `self`, exactly or through the index. */
async function nearest(database: string, table: string[], search: NeighbourSearch, vector: number[], self: string, exact: boolean): Promise<Neighbour[]> {
  const body = {
    version: search.version,
    vector,
    vector_column: search.column,
    distance_type: search.metric,
    k: search.k + 1,
    columns: [],
    with_row_id: true,
    ...(exact ? { bypass_vector_index: true } : {}),
  };
  const answer = tableFromIPC(new Uint8Array(await call("QueryTable", { id: table, database, body })));
  const ids = answer.getChild("_rowid")!;
  const distances = answer.getChild("_distance")!;
  const rows: Neighbour[] = [];
  for (let i = 0; i < answer.numRows; i++) rows.push({ rowId: String(ids.get(i)), distance: Number(distances.get(i)) });
  return rows.filter((r) => r.rowId !== self).slice(0, search.k);
}

async function neighboursOf(database: string, table: string[], search: NeighbourSearch, rowId: string, vector: number[]): Promise<Neighbours> {
  const [exact, indexed] = await Promise.all([
    nearest(database, table, search, vector, rowId, true),
    search.indexed ? nearest(database, table, search, vector, rowId, false) : null,
  ]);
  const found = new Set(indexed?.map((n) => n.rowId));
  const recall = indexed && exact.length ? exact.filter((n) => found.has(n.rowId)).length / exact.length : null;
  return { exact, indexed, recall };
}

export function useNeighbours(database: string, table: string[], search: NeighbourSearch, rowId: string | null) {
  return useQuery({
    queryKey: [...queryKeys.map(database, table, search), "neighbours", rowId] as const,
    queryFn: async () => {
      const vector = (await vectorsOf(database, table, search.version, search.column, [rowId!])).get(rowId!);
      if (!vector) throw new Error(`row ${rowId} has no ${search.column} at version ${search.version}`);
      return neighboursOf(database, table, search, rowId!, vector);
    },
    enabled: rowId !== null,
    retry: false,
  });
}

export type NeighboursQuery = ReturnType<typeof useNeighbours>;

/** The index checked against exact search at sample points: each point's recall, lowest first. */
export interface IndexCheck {
  points: Array<{ rowId: string; recall: number }>;
  mean: number;
}

/** Searches run at once by an index check: enough to overlap round trips without crowding the server. */
const CHECK_CONCURRENCY = 4;

export function useIndexCheck(database: string, table: string[], search: NeighbourSearch) {
  return useMutation({
    mutationFn: async (rowIds: string[]): Promise<IndexCheck> => {
      const vectors = await vectorsOf(database, table, search.version, search.column, rowIds);
      const queue = [...vectors.entries()];
      const points: IndexCheck["points"] = [];
      const worker = async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const { recall } = await neighboursOf(database, table, search, next[0], next[1]);
          if (recall !== null) points.push({ rowId: next[0], recall });
        }
      };
      await Promise.all(Array.from({ length: CHECK_CONCURRENCY }, worker));
      points.sort((a, b) => a.recall - b.recall);
      return { points, mean: points.reduce((s, p) => s + p.recall, 0) / Math.max(1, points.length) };
    },
  });
}

/** Rows a search finds, as row ids: a filter's every match, or a full-text or vector search's best `limit`. */
export type MapSearch =
  | { kind: "filter"; filter: string }
  | { kind: "text"; words: string; column: string; limit: number }
  | { kind: "vector"; vector: number[]; column: string; metric: string; limit: number };

export function useMapSearch(database: string, table: string[], version: number, rows: number, search: MapSearch | null) {
  return useQuery({
    queryKey: [...queryKeys.map(database, table, { version }), "search", search] as const,
    queryFn: async (): Promise<string[]> => {
      const s = search!;
      const body =
        s.kind === "filter"
          ? { filter: s.filter, limit: rows }
          : s.kind === "text"
            ? { full_text_query: { string_query: { query: s.words, columns: [s.column] } }, k: s.limit }
            : { vector: s.vector, vector_column: s.column, distance_type: s.metric, k: s.limit };
      const answer = tableFromIPC(
        new Uint8Array(await call("QueryTable", { id: table, database, body: { ...body, version, columns: [], with_row_id: true } })),
      );
      const ids = answer.getChild("_rowid")!;
      return Array.from({ length: answer.numRows }, (_, i) => String(ids.get(i)));
    },
    enabled: search !== null,
    retry: false,
  });
}
