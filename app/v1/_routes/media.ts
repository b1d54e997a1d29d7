import { z } from "zod";
import { invalidInput } from "@/server/errors";
import { json, qBool, qInt, qString, route } from "@/server/http/route";
import { cellSummaries, readCell } from "@/server/tables/media";
import { thumbnail, THUMBNAIL_SIZES } from "@/server/tables/thumbnails";
import { delimiterQuery } from "@/lib/contract/common";
import { cellsRequest, cellsResponse, ROW_ID } from "@/lib/contract/media";
import { joinIdentifier } from "@/lib/identifiers";

/** One byte range (`bytes=a-b` or `bytes=a-`), as media players ask; anything else is answered whole. */
function rangeOf(header: string | null): { start: number; end?: number } | null {
  const match = /^bytes=(\d+)-(\d*)$/.exec(header?.trim() ?? "");
  if (!match) return null;
  const start = Number(match[1]);
  const end = match[2] ? Number(match[2]) : undefined;
  return end === undefined || end >= start ? { start, end } : null;
}

const safeName = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 120);

export const mediaRoutes = [
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
