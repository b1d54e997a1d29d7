/**
 * A table's map (GetTableMap): every row of a vector column laid out in two dimensions on the server, answered as an
 * Arrow IPC file of `_rowid`, `x`, `y` and the columns the console shows, never the vectors themselves. What the
 * layout is (its stage, how many rows it holds, whether they are a sample) travels in the file's schema metadata
 * under `quiver.map`.
 */
import { z } from "zod";
import { requestBase } from "./common";

/** The most rows a map lays out unless the server is told otherwise (QUIVER_MAP_MAX_POINTS); a larger table's map is a random sample of this many, which it says. */
export const MAP_MAX_POINTS = 100_000;
/** Row ids one PlaceTableMapRows request may ask to have placed. */
export const MAP_MAX_ASKED_ROWS = 10_000;
/**
 * A sampled map stratified by a column keeps at least this many rows of each of its values (every row of a value with
 * fewer), placed onto the sample's layout.
 */
export const MAP_STRATUM_QUOTA = 50;
/** A column of more distinct values than this names rows rather than groups them: a map is not stratified by it. */
export const MAP_MAX_STRATA = 1_000;
/** The most columns a map's answer carries beside its coordinates. */
export const MAP_MAX_SHOWN = 8;
/** Text values shown on a map are cut to this many characters: the map names rows, the grid shows them whole. */
export const MAP_TEXT_CHARS = 120;
export const MAP_METADATA_KEY = "quiver.map";

export const MAP_METRICS = ["l2", "cosine"] as const;

export const mapRequest = z.object({
  ...requestBase,
  column: z.string().nullish().describe("The vector column (a fixed-size list of floats) to map; the table's only or first one when absent"),
  version: z.number().int().min(1).nullish().describe("The version to map; the latest when absent"),
  metric: z
    .enum(MAP_METRICS)
    .nullish()
    .describe("Which rows are near: l2 (Euclidean, the default) or cosine (by angle: the vectors are scaled to unit length first)"),
  columns: z
    .array(z.string().min(1))
    .max(MAP_MAX_SHOWN)
    .nullish()
    .describe(`Scalar columns to answer beside the coordinates (to colour, filter and name the points); text is cut to ${MAP_TEXT_CHARS} characters`),
  placed_on_version: z
    .number()
    .int()
    .min(1)
    .nullish()
    .describe(
      "Place the version's rows onto this version's refined layout instead of laying them out: a row whose vector that layout holds keeps its place, the others (new, or re-embedded) go among their nearest rows there; answered with a `placed` column (1: placed, 0: kept), and as no rows (the metadata saying `refining`) while that layout is being made",
    ),
  have_stage: z
    .enum(["preview", "first"])
    .nullish()
    .describe(
      "The stage of this map the caller holds. `preview`: answered as no rows (the metadata saying `preview`) while the preview is still all there is, then whole, as without it. `first`: the caller asks for the refined layout, answered as `x` and `y` alone, in the first layout's order of rows, once it is ready, and as no rows (the metadata saying `refining`) until then",
    ),
});

export const MAP_STAGES = ["preview", "first", "refined"] as const;

/** A map of more rows than this, and at least MAP_PREVIEW_VALUES vector values, first answers a preview of a sample of this many, in runs of rows spread evenly over the table. */
export const MAP_PREVIEW_ROWS = 5_000;
export const MAP_PREVIEW_VALUES = 16_000_000;

/** The `quiver.map` schema metadata of a map's answer. */
export const mapFacts = z.object({
  version: z.number().int(),
  column: z.string(),
  metric: z.enum(MAP_METRICS),
  stage: z
    .enum(MAP_STAGES)
    .describe(
      `preview: above ${MAP_PREVIEW_ROWS} rows and ${MAP_PREVIEW_VALUES / 1e6} million vector values, the two principal components of a sample of ${MAP_PREVIEW_ROWS} rows spread over the table, at once, while every row is read; first: every row by the two principal components; refined: UMAP's layout, when it is done`,
    ),
  refining: z.boolean().describe("A refined layout is being made: ask again for it"),
  rows: z.number().int().describe("The table's rows at the version"),
  points: z.number().int().describe("The rows laid out (the answer's rows)"),
  without_vector: z.number().int().describe("Rows whose vector is null, left off the map"),
  sampled: z
    .boolean()
    .describe(
      `More rows have a vector than the server lays out (${MAP_MAX_POINTS.toLocaleString("en")} unless QUIVER_MAP_MAX_POINTS says otherwise): the map holds a random sample of them (the same rows each time it is made), which PlaceTableMapRows adds rows to`,
    ),
  dimensions: z.number().int().describe("The vectors' length"),
  placed_on: z.number().int().optional().describe("The version whose layout the rows were placed onto (`placed_on_version`)"),
  placed: z.number().int().optional().describe("Rows placed anew onto that layout: their vector is new or changed since"),
});
export type MapFacts = z.infer<typeof mapFacts>;

/** What a PlaceTableMapRows request adds to a map: rows it asks for by id, and rows of a column's rarer values. */
export const mapPlaceRequest = mapRequest.omit({ placed_on_version: true, have_stage: true }).extend({
  row_ids: z
    .array(z.number().int().min(0))
    .max(MAP_MAX_ASKED_ROWS)
    .nullish()
    .describe("Rows to have on the map (a search's hits, a point's neighbours): those the map's sample left out are placed onto its layout"),
  stratify_by: z
    .string()
    .min(1)
    .nullish()
    .describe(
      `A column whose values each keep at least ${MAP_STRATUM_QUOTA} rows on a sampled map (every row of a rarer value): the rows the sample holds too few of are placed onto its layout. A column of more than ${MAP_MAX_STRATA} distinct values is not stratified by (the answer says so)`,
    ),
});

/** Why a row was placed onto a sampled map: asked for by id, or to fill its value's quota. */
export const MAP_PLACED_REASONS = { asked: 1, quota: 2 } as const;

/** The `quiver.map` schema metadata of a PlaceTableMapRows answer. */
export const mapPlaceFacts = mapFacts.pick({ version: true, column: true, metric: true, stage: true, refining: true, rows: true, sampled: true }).extend({
  points: z.number().int().describe("The rows answered: each left out of the map's sample, placed among its nearest rows on the refined layout"),
  asked: z.number().int().describe("Distinct row ids asked for"),
  already_on_map: z.number().int().describe("Of those, rows the map holds already"),
  not_placed: z.number().int().describe("Of those, rows neither on the map nor placed: no such row at the version, or its vector is null"),
  stratified_by: z.string().optional(),
  values: z.number().int().optional().describe("Distinct values of the stratifying column among the rows with a vector"),
  topped_up: z.number().int().optional().describe("Values the sample held fewer rows of than their quota, given rows here"),
  too_many_values: z.boolean().optional().describe(`The column has more than ${MAP_MAX_STRATA} distinct values: the map is not stratified by it`),
});
export type MapPlaceFacts = z.infer<typeof mapPlaceFacts>;
