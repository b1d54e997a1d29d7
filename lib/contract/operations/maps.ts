/** A table's map: Quiver's own operation, beside the spec's. */
import { z } from "zod";
import { delimiterQuery } from "../common";
import { mapPlaceRequest, mapRequest } from "../maps";
import { defineOperation } from "../operation";

export const mapOperations = {
  GetTableMap: defineOperation({
    operationId: "GetTableMap",
    summary:
      "A table's rows laid out in two dimensions from a vector column: an Arrow IPC file of _rowid, x and y in [-1, 1] and the columns asked for, its `quiver.map` schema metadata saying the layout's stage (first, then refined) and whether it is a sample; cached in the root per version, column and metric",
    group: "Maps",
    methods: ["POST"],
    path: "/v1/table/{id}/map",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: mapRequest },
    response: "arrow-file",
  }),
  PlaceTableMapRows: defineOperation({
    operationId: "PlaceTableMapRows",
    summary:
      "Rows a sampled map left out, placed onto its refined layout: those asked for by id (a search's hits, a point's neighbours) and, stratified by a column, enough rows of each of its rarer values. An Arrow IPC file of _rowid, x, y, `reason` (1: asked, 2: a value's quota) and the columns asked for, its `quiver.map` schema metadata saying what was asked, found and placed; no rows, the metadata saying `refining`, until the refined layout is ready",
    group: "Maps",
    methods: ["POST"],
    path: "/v1/table/{id}/map/place",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: mapPlaceRequest },
    response: "arrow-file",
  }),
};
