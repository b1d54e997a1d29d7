/** The binary cells of a page of rows: what each holds (one request per page), and the address of one value. */
import { useQuery } from "@tanstack/react-query";
import { call, operationUrl, type AnswerOf } from "../api-client";
import { queryKeys } from "./keys";

export type CellSummary = AnswerOf<"DescribeTableCells">["cells"][number];

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
  return operationUrl("GetTableCellValue", {
    id: at.table,
    query: {
      column: at.column,
      row_id: at.rowId,
      version: String(at.version),
      database: at.database !== "default" ? at.database : undefined,
      thumbnail: options.thumbnail ? String(options.thumbnail) : undefined,
      download: options.download ? "true" : undefined,
    },
  });
}

export const cellKey = (rowId: string, column: string) => `${rowId}:${column}`;

export const useCells = (database: string, table: string[], version: number | undefined, columns: string[], rowIds: string[]) =>
  useQuery({
    queryKey: queryKeys.cells(database, table, version, columns, rowIds),
    queryFn: async () => {
      const answer = await call("DescribeTableCells", { id: table, database, body: { columns, row_ids: rowIds, version } });
      return new Map(answer.cells.map((c) => [cellKey(c.row_id, c.column), c]));
    },
    enabled: version !== undefined && columns.length > 0 && rowIds.length > 0,
  });
