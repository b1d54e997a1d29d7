/** A table's map: its rows' coordinates and the columns shown with them, asked again while the layout is refined. */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { tableFromIPC, type Table as ArrowTable } from "apache-arrow";
import { call, type BodyOf } from "../api-client";
import { MAP_METADATA_KEY, type MapFacts } from "../contract/maps";
import { queryKeys } from "./keys";

export interface TableMap {
  facts: MapFacts;
  x: Float32Array;
  y: Float32Array;
  /** Each point's row, as the rows' `_rowid` (for the version mapped). */
  rowIds: string[];
  /** The shown columns, a value per point. */
  columns: ArrowTable;
}

/** How often a map being refined is asked for again. */
const REFINING_POLL_MS = 1_500;

export type MapRequest = Omit<BodyOf<"GetTableMap">, "identity" | "context">;

export const useTableMap = (database: string, table: string[], request: MapRequest, enabled = true) =>
  useQuery({
    queryKey: queryKeys.map(database, table, request),
    queryFn: async (): Promise<TableMap> => {
      const answer = tableFromIPC(new Uint8Array(await call("GetTableMap", { id: table, database, body: request })));
      const ids = answer.getChild("_rowid")!.toArray() as BigUint64Array;
      return {
        facts: JSON.parse(answer.schema.metadata.get(MAP_METADATA_KEY)!) as MapFacts,
        x: answer.getChild("x")!.toArray() as Float32Array,
        y: answer.getChild("y")!.toArray() as Float32Array,
        rowIds: Array.from(ids, String),
        columns: answer,
      };
    },
    refetchInterval: (query) => (query.state.data?.facts.refining ? REFINING_POLL_MS : false),
    placeholderData: keepPreviousData,
    retry: false,
    enabled,
  });
