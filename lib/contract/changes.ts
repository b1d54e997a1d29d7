/**
 * What changed between two versions of a table: the answer of DescribeTableChanges, and the requests of it and of
 * ListTableChangedRows. The ends are versions or tags; `to` defaults to the latest version and `from` to the version
 * before `to`.
 */
import { z } from "zod";
import { context, requestBase } from "./common";
import { ROW_ID } from "./media";

export const changeEnds = {
  from_version: z.number().int().min(0).nullish().describe("The earlier version (0: before the first); the version before `to` when absent"),
  from_tag: z.string().nullish().describe("A tag naming the earlier version"),
  to_version: z.number().int().min(1).nullish().describe("The later version; the latest when absent"),
  to_tag: z.string().nullish().describe("A tag naming the later version"),
};

export const changesRequest = z.object({ ...requestBase, ...changeEnds });

export const CHANGED_ROW_KINDS = ["inserted", "updated", "previous"] as const;

export const changedRowsRequest = z.object({
  ...requestBase,
  ...changeEnds,
  kind: z.enum(CHANGED_ROW_KINDS).describe("inserted or updated: those rows as they are at `to`; previous: the rows `row_ids` names as they were at `from`"),
  limit: z.number().int().min(1).max(1000).nullish().describe("Rows per page (50 when absent)"),
  offset: z.number().int().min(0).nullish(),
  row_ids: z.array(z.string().regex(ROW_ID, "a row id is a decimal integer")).max(1000).nullish().describe("For kind previous: the rows' _rowid"),
});

export const schemaChange = z.object({
  kind: z.enum(["added", "removed", "renamed", "changed"]),
  path: z.array(z.string()),
  type: z.string(),
  from: z.string().optional().describe("A renamed field's earlier name"),
  what: z.array(z.string()).optional().describe("What changed about the field"),
});

export const tableChanges = z.object({
  from_version: z.number().int().nullable().describe("null: the range starts before the table's first version"),
  to_version: z.number().int(),
  stable_row_ids: z.boolean().describe("Whether the table's rows record the versions that made and changed them"),
  rows_before: z.number().int(),
  rows_after: z.number().int(),
  rows_written: z
    .number()
    .int()
    .describe("Rows the range's versions wrote into new fragments (inserted or updated; a compaction's moved rows are not counted)"),
  rows_removed: z
    .number()
    .int()
    .describe("Rows of earlier fragments the range's versions took out (deleted or updated; a compaction's moved rows are not counted)"),
  versions: z
    .array(
      z.object({
        version: z.number().int(),
        operation: z.string().nullable().describe("Lance's name of what made the version (Append, Delete, Update, Rewrite, …); null when unknown"),
        action: z.string().nullable().describe("What was done, in words"),
        rows_before: z.number().int(),
        rows_after: z.number().int(),
        compaction: z.boolean().describe("A compaction: rows moved into new files, none changed"),
      }),
    )
    .nullable()
    .describe("The range's versions one by one; null for a range of more than 200 versions, told from its two ends"),
  rows_inserted: z.number().int().optional().describe("Stable row ids only: rows made in the range"),
  rows_updated: z.number().int().optional().describe("Stable row ids only: rows there before the range and changed in it"),
  rows_deleted: z.number().int().optional().describe("Stable row ids only: rows there before the range and gone at its end"),
  inserted_filter: z.string().optional().describe("The filter that reads the inserted rows at the later version (QueryTable)"),
  updated_filter: z.string().optional().describe("The filter that reads the updated rows at the later version (QueryTable)"),
  why_no_rows: z.string().optional().describe("Why the table cannot say which rows changed, and how a table gets to"),
  schema_changes: z.array(schemaChange),
  context,
});
