/** A table's map (server/maps): its rows laid out from a vector column. */
import { route } from "@/server/http/route";
import { placeMapRows, tableMap } from "@/server/maps/table-map";
import { mapOperations as ops } from "@/lib/contract/operations/maps";

/** Which map a request names, as both operations name it. */
const mapOf = (body: { column?: string | null; version?: number | null; metric?: "l2" | "cosine" | null; columns?: string[] | null }) => ({
  column: body.column ?? undefined,
  version: body.version ?? undefined,
  metric: body.metric ?? "l2",
  shown: body.columns ?? [],
});

export const mapRoutes = [
  route({
    ...ops.GetTableMap,
    access: { need: "viewer", on: "table" },
    heavy: true,
    handler: async ({ id, body, tables }) => ({
      kind: "arrow-file",
      body: await tableMap(tables, id, {
        ...mapOf(body),
        have: body.have_stage ?? undefined,
        placedOn: body.placed_on_version ?? undefined,
      }),
    }),
  }),
  route({
    ...ops.PlaceTableMapRows,
    access: { need: "viewer", on: "table" },
    heavy: true,
    handler: async ({ id, body, tables }) => ({
      kind: "arrow-file",
      body: await placeMapRows(tables, id, {
        ...mapOf(body),
        rowIds: body.row_ids ?? [],
        stratifyBy: body.stratify_by ?? undefined,
      }),
    }),
  }),
];
