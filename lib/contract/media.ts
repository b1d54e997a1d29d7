/**
 * The console's media operations: what the binary cells of a page hold, and the route that serves one value. Row ids
 * travel as decimal strings, since they pass 2^53.
 */
import { z } from "zod";
import { context, requestBase } from "./common";

export const ROW_ID = /^\d{1,20}$/;

export const mediaType = z.object({
  kind: z.enum(["image", "audio", "video", "pdf"]),
  mime: z.string(),
  extension: z.string(),
});

export const cellSummary = z.object({
  row_id: z.string(),
  column: z.string(),
  size: z.number().int().nullable().describe("Bytes in the value; null for a null value"),
  media: mediaType.nullable().describe("What the value's leading bytes say it is, when it is media the console shows"),
  head: z.string().describe("The value's first bytes in hex, when it is not media"),
});

export const MAX_CELL_ROWS = 500;

export const cellsRequest = z.object({
  ...requestBase,
  columns: z.array(z.string().min(1)).min(1).max(32).describe("Binary or blob columns"),
  row_ids: z.array(z.string().regex(ROW_ID, "a row id is a decimal integer")).max(MAX_CELL_ROWS).describe("Row ids (_rowid) at the version read"),
  version: z.number().int().min(0).nullish(),
  tag: z.string().nullish(),
});

export const cellsResponse = z.object({ cells: z.array(cellSummary), context });

/** The sizes a thumbnail may be asked for, in pixels of its longer side. */
export const THUMBNAIL_SIZES = { min: 16, max: 512 };
