import { z } from "zod";
import { invalidInput } from "@/server/errors";
import { json, route, qBool, qInt, qString, parseMode, remoteDialect } from "@/server/http/route";
import { deleteRows, updateRows, insertRecords, mergeInsert } from "@/server/tables/writes";
import { branchField, branchQuery, delimiterQuery, requestBase, versionResponse, insertAnswer, mergeInsertAnswer } from "@/lib/contract/common";
import { cellSummaries, readCell } from "@/server/tables/media";
import { thumbnail, THUMBNAIL_SIZES } from "@/server/tables/thumbnails";
import { cellsRequest, cellsResponse, ROW_ID } from "@/lib/contract/media";
import { joinIdentifier } from "@/lib/identifiers";
import { parseDuration } from "@/lib/durations";
import { analyzeQuery, countRows, explainQuery, queryTable } from "@/server/tables/queries";
import { queryFields, queryOptions } from "./query-request";
/** One byte range (`bytes=a-b` or `bytes=a-`), as media players ask; anything else is answered whole. */
function rangeOf(header: string | null): { start: number; end?: number } | null {
  const match = /^bytes=(\d+)-(\d*)$/.exec(header?.trim() ?? "");
  if (!match) return null;
  const start = Number(match[1]);
  const end = match[2] ? Number(match[2]) : undefined;
  return end === undefined || end >= start ? { start, end } : null;
}

const safeName = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 120);

export const dataRoutes = [
  route({
    operationId: "InsertIntoTable",
    summary: "Insert records from an Arrow IPC stream (mode Append or Overwrite); creates a declared-only table",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/insert",
    access: { need: "editor", on: "table" },
    query: z.object({ ...delimiterQuery, ...branchQuery, mode: qString("Append (default) or Overwrite, case-insensitive") }),
    body: { kind: "arrow" },
    response: insertAnswer,
    // Appending no rows commits nothing; overwriting with none commits an empty version.
    commits: (answer, query) => answer.num_inserted_rows > 0 || parseMode(query.mode, ["append", "overwrite"] as const, "append", "mode") === "overwrite",
    handler: async ({ id, query, body, tables }) => {
      const mode = parseMode(query.mode, ["append", "overwrite"] as const, "append", "mode");
      return json(await insertRecords(tables, id, body, mode, query.branch || undefined));
    },
  }),
  route({
    operationId: "MergeInsertIntoTable",
    summary: "Merge-insert (upsert) records from an Arrow IPC stream, matching rows on one or more key columns",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/merge_insert",
    access: { need: "editor", on: "table" },
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
    // A merge that could change nothing is not attempted.
    commits: (answer) => answer.num_attempts !== 0,
    handler: async ({ id, query, body, tables }) => {
      const on = query.on === undefined ? [] : Array.isArray(query.on) ? query.on : [query.on];
      if (on.length === 0 || on.some((o) => o.length === 0)) throw invalidInput("'on' is required: name the key column(s) to match rows on");
      let timeoutMs: number | undefined;
      if (query.timeout !== undefined) {
        timeoutMs = parseDuration(query.timeout) ?? undefined;
        if (timeoutMs === undefined) throw invalidInput(`timeout '${query.timeout}' is not a duration such as 500ms, 30s, 5m or 1h`);
      }
      return json(
        await mergeInsert(tables, id, body, {
          on,
          whenMatchedUpdateAll: query.when_matched_update_all ?? false,
          whenMatchedUpdateAllFilt: query.when_matched_update_all_filt || undefined,
          whenNotMatchedInsertAll: query.when_not_matched_insert_all ?? false,
          whenNotMatchedBySourceDelete: query.when_not_matched_by_source_delete ?? false,
          whenNotMatchedBySourceDeleteFilt: query.when_not_matched_by_source_delete_filt || undefined,
          timeoutMs,
          useIndex: query.use_index,
          branch: query.branch || undefined,
        }),
      );
    },
  }),
  route({
    operationId: "CountTableRows",
    summary: "Count rows, optionally matching a predicate, at a version; answers a bare integer",
    group: "Data",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/count_rows",
    access: { need: "viewer", on: "table" },
    heavy: true,
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
    handler: async ({ id, body, query, tables }) => {
      const value = await countRows(tables, id, body.predicate ?? undefined, {
        version: body.version ?? undefined,
        branch: body.branch ?? query.branch ?? undefined,
      });
      return { kind: "integer", value };
    },
  }),
  route({
    operationId: "QueryTable",
    summary: "Query rows (filter, projection with expressions, order, limit, offset, version or tag; vector or full-text search); answers an Arrow IPC file",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/query",
    access: { need: "viewer", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...queryFields }) },
    response: "arrow-file",
    handler: async ({ id, body, tables, request }) => ({
      kind: "arrow-file",
      body: await queryTable(tables, id, queryOptions(body, remoteDialect(request))),
    }),
  }),
  route({
    operationId: "ExplainTableQueryPlan",
    summary: "The engine's plan for a query, without running it",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/explain_plan",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, query: z.object(queryFields), verbose: z.boolean().nullish() }) },
    response: z.string(),
    handler: async ({ id, body, tables, request }) =>
      json(await explainQuery(tables, id, queryOptions(body.query, remoteDialect(request)), body.verbose ?? false)),
  }),
  route({
    operationId: "AnalyzeTableQueryPlan",
    summary: "Run a query and answer its plan with what each step did (rows, time) instead of its rows",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/analyze_plan",
    access: { need: "viewer", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...queryFields }) },
    response: z.string(),
    handler: async ({ id, body, tables, request }) => json(await analyzeQuery(tables, id, queryOptions(body, remoteDialect(request)))),
  }),
  route({
    operationId: "UpdateTable",
    summary: "Update rows matching a predicate with SQL expressions",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/update",
    access: { need: "editor", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({ ...requestBase, ...branchField, predicate: z.string().nullish(), updates: z.array(z.tuple([z.string().min(1), z.string()])) }),
    },
    response: z.object({ ...versionResponse, updated_rows: z.number().int(), rows_updated: z.number().int() }),
    commits: true,
    handler: async ({ id, body, tables }) => json(await updateRows(tables, id, body.predicate ?? undefined, body.updates, body.branch ?? undefined)),
  }),
  route({
    operationId: "DeleteFromTable",
    summary: "Delete rows matching a predicate",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/delete",
    access: { need: "editor", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...branchField, predicate: z.string().min(1) }) },
    response: z.object({ ...versionResponse, num_deleted_rows: z.number().int() }),
    commits: true,
    handler: async ({ id, body, tables }) => json(await deleteRows(tables, id, body.predicate, body.branch ?? undefined)),
  }),
  route({
    operationId: "DescribeTableCells",
    summary: "What binary and blob cells of some rows hold (size, media type by leading bytes, a head), without their values",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/cells",
    access: { need: "viewer", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: cellsRequest },
    response: cellsResponse,
    handler: async ({ id, body, tables }) =>
      json({
        cells: await cellSummaries(
          tables,
          id,
          { version: body.version ?? undefined, tag: body.tag ?? undefined },
          body.columns,
          body.row_ids.map((r) => BigInt(r)),
        ),
      }),
  }),
  route({
    operationId: "GetTableCellValue",
    summary:
      "One binary or blob value, served with the content type its leading bytes say (images, audio, video, PDF; anything else as a download), byte ranges, or a thumbnail of an image",
    group: "Data",
    methods: ["GET"],
    path: "/v1/table/{id}/media",
    access: { need: "viewer", on: "table" },
    heavy: true,
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
    handler: async ({ id, query, tables, request }) => {
      if (query.thumbnail !== undefined && (query.thumbnail < THUMBNAIL_SIZES.min || query.thumbnail > THUMBNAIL_SIZES.max))
        throw invalidInput(`thumbnail must be between ${THUMBNAIL_SIZES.min} and ${THUMBNAIL_SIZES.max} pixels, got ${query.thumbnail}`);
      const range = query.thumbnail === undefined ? rangeOf(request.headers.get("range")) : null;
      const cell = await readCell(tables, id, { version: query.version, tag: query.tag }, query.column, BigInt(query.row_id), range);
      const name = safeName(`${joinIdentifier(id)}-${query.column}-${query.row_id}`);
      const headers: Record<string, string> = {
        // A stored document (an SVG, an HTML file named .png) opened on its own runs nothing and reaches nothing. A PDF
        // is left to the browser's viewer, which a sandbox would block, and which runs no page script.
        "content-security-policy":
          cell.media?.kind === "pdf"
            ? "default-src 'none'; frame-ancestors 'none'"
            : "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox",
        "cross-origin-resource-policy": "same-origin",
        "cache-control": query.version !== undefined ? "private, max-age=3600" : "private, no-cache",
      };
      if (query.thumbnail !== undefined) {
        const picture = await thumbnail(cell.bytes, cell.media, query.thumbnail);
        return { kind: "media", body: picture, contentType: "image/webp", headers };
      }
      const inline = cell.media !== null && !query.download;
      headers["content-disposition"] = `${inline ? "inline" : "attachment"}; filename="${name}.${cell.media?.extension ?? "bin"}"`;
      headers["accept-ranges"] = "bytes";
      const contentType = cell.media?.mime ?? "application/octet-stream";
      if (!cell.range) return { kind: "media", body: cell.bytes, contentType, headers };
      headers["content-range"] = `bytes ${cell.range.start}-${cell.range.end}/${cell.size}`;
      return { kind: "media", body: cell.bytes, contentType, status: 206, headers };
    },
  }),
];
