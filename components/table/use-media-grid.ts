"use client";
/**
 * The binary columns of a table as the grid shows them: the query leaves them out and asks for row ids, and one
 * request per page says what each of their cells holds; values are fetched one at a time when shown or opened.
 */
import type { Table as ArrowTable } from "apache-arrow";
import type { JsonField } from "@/lib/arrow-schema";
import { mediaColumnsOf } from "@/lib/media";
import { useCells } from "@/lib/queries/media";
import type { GridMedia } from "./rows-grid";

export interface MediaProjection {
  /** The columns to query: the shown ones without media, or undefined for all when there is none. */
  columns: string[] | undefined;
  /** The shown binary columns. */
  media: string[];
  order: string[];
}

export function mediaProjection(fields: JsonField[], shown: string[] | undefined): MediaProjection {
  const order = shown ?? fields.map((f) => f.name);
  const media = mediaColumnsOf(fields).filter((c) => order.includes(c));
  return { columns: media.length ? order.filter((c) => !media.includes(c)) : shown, media, order };
}

/** The grid's media for rows read at `version` (whose row ids hold for it), or undefined when no media is shown. */
export function useMediaGrid(
  database: string,
  table: string[],
  version: number | undefined,
  projection: MediaProjection,
  data: ArrowTable | undefined,
): GridMedia | undefined {
  const ids = data?.getChild("_rowid");
  const rowIds = ids ? Array.from({ length: ids.length }, (_, i) => String(ids.get(i))) : [];
  const cells = useCells(database, table, version, projection.media, rowIds);
  if (!projection.media.length || version === undefined) return undefined;
  return {
    columns: projection.media,
    order: projection.order,
    cells: cells.data,
    address: (column, rowId) => ({ database, table, version, column, rowId }),
  };
}
