/** The routes of a table's rows: insert, merge-insert, update, delete, count, query and its plans, binary cells. */
import { invalidInput } from "@/server/errors";
import { json, route, remoteDialect } from "@/server/http/route";
import { deleteRows, updateRows, insertRecords, mergeInsert } from "@/server/tables/writes";
import { cellSummaries, readCell } from "@/server/tables/media";
import { thumbnail } from "@/server/tables/thumbnails";
import { THUMBNAIL_SIZES } from "@/lib/contract/media";
import { joinIdentifier } from "@/lib/identifiers";
import { parseDuration } from "@/lib/durations";
import { analyzeQuery, countRows, explainQuery, queryTable } from "@/server/tables/queries";
import { explainedQuery, queryOptions } from "./query-request";
import { dataOperations as ops } from "@/lib/contract/operations/data";

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
    ...ops.InsertIntoTable,
    access: { need: "editor", on: "table" },
    // Appending no rows commits nothing; overwriting with none commits an empty version.
    commits: (answer, query) => answer.num_inserted_rows > 0 || query.mode === "overwrite",
    once: {
      scope: "table",
      sameBody: true,
      answeredByVersion: true,
      decided: async ({ version, counts }) => json({ version, num_inserted_rows: counts.inserted }),
    },
    handler: async ({ id, query, body, tables }) => {
      const mode = query.mode ?? "append";
      return json(await insertRecords(tables, id, body, mode, query.branch || undefined));
    },
  }),
  route({
    ...ops.MergeInsertIntoTable,
    access: { need: "editor", on: "table" },
    // A merge that could change nothing is not attempted.
    commits: (answer) => answer.num_attempts !== 0,
    once: {
      scope: "table",
      sameBody: true,
      decided: async ({ version, counts }) =>
        json({ version, num_inserted_rows: counts.inserted, num_updated_rows: counts.updated, num_deleted_rows: counts.deleted, num_attempts: 1 }),
    },
    handler: async ({ id, query, body, tables }) => {
      const on = query.on === undefined ? [] : Array.isArray(query.on) ? query.on : [query.on];
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
    ...ops.CountTableRows,
    access: { need: "viewer", on: "table" },
    heavy: true,
    handler: async ({ id, body, query, tables }) => {
      const value = await countRows(tables, id, body.predicate ?? undefined, {
        version: body.version ?? undefined,
        branch: body.branch ?? query.branch ?? undefined,
      });
      return { kind: "integer", value };
    },
  }),
  route({
    ...ops.QueryTable,
    access: { need: "viewer", on: "table" },
    heavy: true,
    handler: async ({ id, body, tables, request }) => ({
      kind: "arrow-file",
      body: await queryTable(tables, id, queryOptions(body, remoteDialect(request))),
    }),
  }),
  route({
    ...ops.ExplainTableQueryPlan,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, body, tables, request }) =>
      json(await explainQuery(tables, id, queryOptions(explainedQuery(body, id), remoteDialect(request)), body.verbose ?? false)),
  }),
  route({
    ...ops.AnalyzeTableQueryPlan,
    access: { need: "viewer", on: "table" },
    heavy: true,
    handler: async ({ id, body, tables, request }) => json(await analyzeQuery(tables, id, queryOptions(body, remoteDialect(request)))),
  }),
  route({
    ...ops.UpdateTable,
    access: { need: "editor", on: "table" },
    heavy: true,
    commits: true,
    once: {
      scope: "table",
      decided: async ({ version, counts }, { id, catalog }) =>
        json({ version, updated_rows: counts.updated, rows_updated: counts.updated, properties: (await catalog.resolve(id)).properties }),
    },
    handler: async ({ id, body, tables }) => json(await updateRows(tables, id, body.predicate ?? undefined, body.updates, body.branch ?? undefined)),
  }),
  route({
    ...ops.DeleteFromTable,
    access: { need: "editor", on: "table" },
    heavy: true,
    commits: true,
    once: { scope: "table", decided: async ({ version, counts }) => json({ version, num_deleted_rows: counts.deleted }) },
    handler: async ({ id, body, tables }) => json(await deleteRows(tables, id, body.predicate, body.branch ?? undefined)),
  }),
  route({
    ...ops.DescribeTableCells,
    access: { need: "viewer", on: "table" },
    heavy: true,
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
    ...ops.GetTableCellValue,
    access: { need: "viewer", on: "table" },
    heavy: true,
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
