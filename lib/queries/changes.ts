/** What changed between two versions of a table: the summary, and pages of the rows inserted and updated. */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { tableFromIPC, type Table as ArrowTable } from "apache-arrow";
import type { z } from "zod";
import { apiCall } from "../api-client";
import { encodeIdentifier } from "../identifiers";
import type { tableChanges } from "../contract/changes";
import { queryKeys } from "./keys";

export type TableChanges = z.output<typeof tableChanges>;

/** An end of the range: a version or a tag; the latest (`to`) or the version before `to` (`from`) when neither. */
export interface ChangeEnd {
  version?: number;
  tag?: string;
}

const endsBody = (from: ChangeEnd, to: ChangeEnd) => ({ from_version: from.version, from_tag: from.tag, to_version: to.version, to_tag: to.tag });

export const useTableChanges = (database: string, table: string[], from: ChangeEnd, to: ChangeEnd) =>
  useQuery({
    queryKey: [...queryKeys.table(database, table), "changes", from, to],
    queryFn: () => apiCall<TableChanges>(`/v1/table/${encodeIdentifier(table)}/changes`, { database, json: endsBody(from, to) }),
    retry: false,
  });

/** Rows of the range as the later version has them (inserted or updated), or as the earlier one had them (previous). */
export const useChangedRows = (
  database: string,
  table: string[],
  ends: { from: number | null; to: number },
  kind: "inserted" | "updated" | "previous",
  page: { limit: number; offset: number; rowIds?: string[] },
  enabled: boolean,
) =>
  useQuery({
    queryKey: [...queryKeys.table(database, table), "changed-rows", ends, kind, page],
    queryFn: async (): Promise<ArrowTable> =>
      tableFromIPC(
        new Uint8Array(
          await apiCall<ArrayBuffer>(`/v1/table/${encodeIdentifier(table)}/changes/rows`, {
            database,
            json: { from_version: ends.from ?? 0, to_version: ends.to, kind, limit: page.limit, offset: page.offset, row_ids: page.rowIds },
            accept: "arrow",
          }),
        ),
      ),
    placeholderData: keepPreviousData,
    enabled,
  });
