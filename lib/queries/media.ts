/** The binary cells of a page of rows: what each holds (one request per page), and the address of one value. */
import { useQuery } from "@tanstack/react-query";
import type { z } from "zod";
import { apiCall } from "../api-client";
import { encodeIdentifier } from "../identifiers";
import type { cellsResponse } from "../contract/media";
import { queryKeys } from "./keys";

export type CellSummary = z.output<typeof cellsResponse>["cells"][number];

/** Where a value is: its table at one version (row ids hold for that version), column and row. */
export interface CellAddress {
  database: string;
  table: string[];
  version: number;
  column: string;
  rowId: string;
}

/** The media route's URL: an element cannot send the database header, so it goes in the query. */
export function mediaUrl(at: CellAddress, options: { thumbnail?: number; download?: boolean } = {}): string {
  const params = new URLSearchParams({ column: at.column, row_id: at.rowId, version: String(at.version) });
  if (at.database !== "default") params.set("database", at.database);
  if (options.thumbnail) params.set("thumbnail", String(options.thumbnail));
  if (options.download) params.set("download", "true");
  return `/v1/table/${encodeIdentifier(at.table)}/media?${params.toString()}`;
}

export const cellKey = (rowId: string, column: string) => `${rowId}:${column}`;

export const useCells = (database: string, table: string[], version: number | undefined, columns: string[], rowIds: string[]) =>
  useQuery({
    queryKey: [...queryKeys.table(database, table), "cells", version, columns, rowIds],
    queryFn: async () => {
      const answer = await apiCall<z.output<typeof cellsResponse>>(`/v1/table/${encodeIdentifier(table)}/cells`, {
        database,
        json: { columns, row_ids: rowIds, version },
      });
      return new Map(answer.cells.map((c) => [cellKey(c.row_id, c.column), c]));
    },
    enabled: version !== undefined && columns.length > 0 && rowIds.length > 0,
  });
