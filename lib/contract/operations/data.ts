/** A table's rows: insert, merge-insert, update, delete, count, query and its plans, and binary cells. */

import { z } from "zod";
import { queryFields } from "../query";
import { branchField, branchQuery, delimiterQuery, insertAnswer, mergeInsertAnswer, qBool, qInt, qString, requestBase, versionResponse } from "../common";
import { cellsRequest, cellsResponse, ROW_ID, THUMBNAIL_SIZES } from "../media";
import { defineOperation } from "../operation";
export const dataOperations = {
  InsertIntoTable: defineOperation({
    operationId: "InsertIntoTable",
    summary: "Insert records from an Arrow IPC stream (mode Append or Overwrite); creates a declared-only table",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/insert",
    query: z.object({ ...delimiterQuery, ...branchQuery, mode: qString("Append (default) or Overwrite, case-insensitive") }),
    body: { kind: "arrow" },
    response: insertAnswer,
  }),
  MergeInsertIntoTable: defineOperation({
    operationId: "MergeInsertIntoTable",
    summary: "Merge-insert (upsert) records from an Arrow IPC stream, matching rows on one or more key columns",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/merge_insert",
    query: z.object({
      ...delimiterQuery,
      ...branchQuery,
      on: z
        .union([z.string(), z.array(z.string())])
        .optional()
        .describe("Key field path; repeat for a composite key"),
      when_matched_update_all: qBool("Update all columns of matched rows"),
      when_matched_update_all_filt: qString("SQL condition for updating a matched row; enables the update"),
      when_not_matched_insert_all: qBool("Insert rows that match no target row"),
      when_not_matched_by_source_delete: qBool("Delete target rows that match no source row"),
      when_not_matched_by_source_delete_filt: qString("SQL condition for deleting unmatched target rows; enables the delete"),
      timeout: qString("Time limit such as 500ms, 30s, 5m, 1h"),
      use_index: qBool("Whether to use an index to match rows"),
    }),
    body: { kind: "arrow" },
    response: mergeInsertAnswer,
  }),
  CountTableRows: defineOperation({
    operationId: "CountTableRows",
    summary: "Count rows, optionally matching a predicate, at a version; answers a bare integer",
    group: "Data",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/count_rows",
    query: z.object({ ...delimiterQuery, ...branchQuery }),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        predicate: z.string().nullish(),
        version: z.number().int().min(0).nullish(),
        branch: z.string().nullish(),
      }),
    },
    response: "integer",
  }),
  QueryTable: defineOperation({
    operationId: "QueryTable",
    summary: "Query rows (filter, projection with expressions, order, limit, offset, version or tag; vector or full-text search); answers an Arrow IPC file",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/query",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...queryFields }) },
    response: "arrow-file",
  }),
  ExplainTableQueryPlan: defineOperation({
    operationId: "ExplainTableQueryPlan",
    summary: "The engine's plan for a query, without running it",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/explain_plan",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, query: z.object(queryFields), verbose: z.boolean().nullish() }) },
    response: z.string(),
  }),
  AnalyzeTableQueryPlan: defineOperation({
    operationId: "AnalyzeTableQueryPlan",
    summary: "Run a query and answer its plan with what each step did (rows, time) instead of its rows",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/analyze_plan",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...queryFields }) },
    response: z.string(),
  }),
  UpdateTable: defineOperation({
    operationId: "UpdateTable",
    summary: "Update rows matching a predicate with SQL expressions",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/update",
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({ ...requestBase, ...branchField, predicate: z.string().nullish(), updates: z.array(z.tuple([z.string().min(1), z.string()])) }),
    },
    response: z.object({ ...versionResponse, updated_rows: z.number().int(), rows_updated: z.number().int() }),
  }),
  DeleteFromTable: defineOperation({
    operationId: "DeleteFromTable",
    summary: "Delete rows matching a predicate",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/delete",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...branchField, predicate: z.string().min(1) }) },
    response: z.object({ ...versionResponse, num_deleted_rows: z.number().int() }),
  }),
  DescribeTableCells: defineOperation({
    operationId: "DescribeTableCells",
    summary: "What binary and blob cells of some rows hold (size, media type by leading bytes, a head), without their values",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/cells",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: cellsRequest },
    response: cellsResponse,
  }),
  GetTableCellValue: defineOperation({
    operationId: "GetTableCellValue",
    summary:
      "One binary or blob value, served with the content type its leading bytes say (images, audio, video, PDF; anything else as a download), byte ranges, or a thumbnail of an image",
    group: "Data",
    methods: ["GET"],
    path: "/v1/table/{id}/media",
    query: z.object({
      ...delimiterQuery,
      database: qString("The database, for a caller that cannot send x-quiver-database (an <img> or <video> element)"),
      column: z.string().min(1).describe("A binary or blob column"),
      row_id: z.string().regex(ROW_ID, "a row id is a decimal integer").describe("The row's _rowid at the version read"),
      version: qInt("The version to read; the latest when absent"),
      tag: qString("A tag to read instead of a version"),
      thumbnail: qInt(`A WebP picture of an image at most this many pixels wide and high (${THUMBNAIL_SIZES.min}-${THUMBNAIL_SIZES.max})`, 1),
      download: qBool("Answer as an attachment to save"),
    }),
    response: "media",
  }),
};
