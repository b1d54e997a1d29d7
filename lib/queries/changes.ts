/** What changed between two versions of a table: the summary, and pages of the rows inserted and updated. */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { tableFromIPC, type Table as ArrowTable } from "apache-arrow";
import { call, type AnswerOf } from "../api-client";
import { queryKeys } from "./keys";

export type TableChanges = AnswerOf<"DescribeTableChanges">;

/** An end of the range: a version or a tag; the latest (`to`) or the version before `to` (`from`) when neither. */
export interface ChangeEnd {
  version?: number;
  tag?: string;
}

const endsBody = (from: ChangeEnd, to: ChangeEnd) => ({ from_version: from.version, from_tag: from.tag, to_version: to.version, to_tag: to.tag });

export const useTableChanges = (database: string, table: string[], from: ChangeEnd, to: ChangeEnd) =>
  useQuery({
    queryKey: queryKeys.changes(database, table, from, to),
    queryFn: () => call("DescribeTableChanges", { id: table, database, body: endsBody(from, to) }),
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
    queryKey: queryKeys.changedRows(database, table, ends, kind, page),
    queryFn: async (): Promise<ArrowTable> =>
      tableFromIPC(
        new Uint8Array(
          await call("ListTableChangedRows", {
            id: table,
            database,
            body: { from_version: ends.from ?? 0, to_version: ends.to, kind, limit: page.limit, offset: page.offset, row_ids: page.rowIds },
          }),
        ),
      ),
    placeholderData: keepPreviousData,
    enabled,
  });
