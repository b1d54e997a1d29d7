/** A table's map: Quiver's own operation, beside the spec's. */
import { z } from "zod";
import { delimiterQuery } from "../common";
import { mapRequest } from "../maps";
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
};
