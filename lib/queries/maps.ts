/**
 * A table's map: its rows' coordinates and the columns shown with them. While the layout is refined it is asked for
 * again as `have_stage: "first"`, which answers nothing until the refined layout is ready and then its coordinates
 * alone: the rows and their columns are the first answer's.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { tableFromIPC, type Table as ArrowTable } from "apache-arrow";
import { call, type BodyOf } from "../api-client";
import { MAP_METADATA_KEY, type MapFacts } from "../contract/maps";
import { queryKeys } from "./keys";

export interface TableMap {
  facts: MapFacts;
  x: Float32Array;
  y: Float32Array;
  /** Each point's row, as the rows' `_rowid` (for the version mapped). */
  rowIds: BigUint64Array;
  /** The shown columns, a value per point. */
  columns: ArrowTable;
}

/** How often a map being refined is asked for again. */
const REFINING_POLL_MS = 1_500;

export type MapRequest = Omit<BodyOf<"GetTableMap">, "identity" | "context" | "have_stage">;

async function fetchMap(database: string, table: string[], request: MapRequest, held: TableMap | undefined): Promise<TableMap> {
  const refining = held?.facts.stage === "first";
  const body = refining ? { ...request, have_stage: "first" as const } : request;
  const answer = tableFromIPC(new Uint8Array(await call("GetTableMap", { id: table, database, body })));
  const facts = JSON.parse(answer.schema.metadata.get(MAP_METADATA_KEY)!) as MapFacts;
  if (held && refining) {
    if (facts.stage !== "refined") return { ...held, facts: { ...held.facts, refining: facts.refining } };
    return { ...held, facts, x: answer.getChild("x")!.toArray() as Float32Array, y: answer.getChild("y")!.toArray() as Float32Array };
  }
  return {
    facts,
    x: answer.getChild("x")!.toArray() as Float32Array,
    y: answer.getChild("y")!.toArray() as Float32Array,
    rowIds: answer.getChild("_rowid")!.toArray() as BigUint64Array,
    columns: answer,
  };
}

export function useTableMap(database: string, table: string[], request: MapRequest, enabled = true) {
  const client = useQueryClient();
  const key = queryKeys.map(database, table, request);
  return useQuery({
    queryKey: key,
    queryFn: () => fetchMap(database, table, request, client.getQueryData<TableMap>(key)),
    refetchInterval: (query) => (query.state.data?.facts.stage === "first" && query.state.data.facts.refining ? REFINING_POLL_MS : false),
    retry: false,
    enabled,
  });
}
