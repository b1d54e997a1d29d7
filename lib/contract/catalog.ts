/**
 * The catalog operations' answers the console reads: namespace listings and search, a table's description, its
 * versions and tags, and declared tables. Route handlers are held to these schemas by the type checker, the OpenAPI
 * document publishes them, and the console's types are read from them.
 */
import { z } from "zod";
import type { JsonField } from "../arrow-schema";
import { context, pageToken, properties } from "./common";

const jsonField: z.ZodType<JsonField> = z.lazy(() =>
  z.object({
    name: z.string(),
    type: z.object({ type: z.string(), fields: z.array(jsonField).optional(), length: z.number().int().optional() }),
    nullable: z.boolean(),
    metadata: z.record(z.string(), z.string()).optional(),
  }),
);
export const jsonArrowSchema = z
  .object({ fields: z.array(jsonField), metadata: z.record(z.string(), z.string()).optional() })
  .describe("Lance JSON Arrow schema");

/** A table schema's metadata, as UpdateTableSchemaMetadata takes and answers it: a bare map of strings. */
export const schemaMetadata = z.record(z.string().min(1), z.string()).describe("Schema metadata keys and their values");

export const catalogEntry = z.object({
  name: z.string(),
  kind: z.enum(["namespace", "table"]),
  declared_only: z.boolean().optional().describe("Tables only: declared, with no data written yet"),
  has_children: z.boolean().optional().describe("Namespaces only: whether it holds a namespace or table the caller can see"),
});
export const entriesResponse = z.object({ entries: z.array(catalogEntry), page_token: pageToken, context });
export const searchResponse = z.object({ namespaces: z.array(z.array(z.string())), tables: z.array(z.array(z.string())), context });
export const describeNamespaceResponse = z.object({ properties, context });

export const tableStats = z.object({
  num_fragments: z.number(),
  num_deleted_rows: z.number(),
  num_rows: z.number(),
  total_bytes: z.number(),
  num_indices: z.number(),
});
export const tableDescription = z.object({
  table: z.string(),
  namespace: z.array(z.string()),
  location: z.string(),
  table_uri: z.string(),
  version: z.number().int().optional(),
  schema: jsonArrowSchema.optional(),
  properties,
  metadata: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      "Lance's table metadata (key-value pairs about the table, apart from its configuration and schema metadata); read from the version's manifest, on the main branch",
    ),
  is_only_declared: z.boolean(),
  storage_options: z.record(z.string(), z.string()),
  managed_versioning: z.boolean(),
  stats: tableStats.optional(),
  context,
});

/**
 * The table property that says a table's versions are managed by the catalog: Lance's clients then commit every
 * version through CreateTableVersion and ask the catalog for the latest one ("true"; anything else, or none: not).
 */
export const MANAGED_VERSIONING = "quiver.managed_versioning";

export const isManagedVersioning = (properties: Record<string, string> | null | undefined) => properties?.[MANAGED_VERSIONING] === "true";

/**
 * The table property, given at declare or create time, that writes the table with Lance's stable row ids: each row
 * keeps its id through updates and compactions, and the engine records the version that made and last changed it,
 * which is what lets the console show the rows a version inserted and updated. Fixed once the table has data; a
 * table that does not say gets the service's default (QUIVER_STABLE_ROW_IDS, on).
 */
export const STABLE_ROW_IDS = "quiver.stable_row_ids";

/** Whether a table's first version is written with stable row ids: as its property says, else the service's default. */
export const wantsStableRowIds = (properties: Record<string, string> | null | undefined, serviceDefault: boolean) =>
  properties?.[STABLE_ROW_IDS] === undefined ? serviceDefault : properties[STABLE_ROW_IDS] === "true";

export const declaredTable = z.object({
  location: z.string(),
  storage_options: z.record(z.string(), z.string()),
  properties,
  managed_versioning: z.boolean(),
  context,
});

/** Who committed a version of a managed table, as the catalog recorded it. */
export const versionAuthor = z.object({
  principal: z.object({ kind: z.string(), id: z.string(), name: z.string() }),
  operation: z.string().describe("the catalog operation that committed it (CreateTableVersion, InsertIntoTable, ...)"),
  detail: z.string().nullable().describe("what the commit did, as its audit entry says"),
  time: z.string().describe("when the catalog recorded it (RFC 3339)"),
});
export type VersionAuthor = z.output<typeof versionAuthor>;

export const tableVersion = z.object({
  version: z.number().int(),
  manifest_path: z.string(),
  manifest_size: z.number().int(),
  e_tag: z.string(),
  timestamp_millis: z.number().int(),
  timestamp: z.string().describe("RFC 3339, for LanceDB's clients"),
  metadata: z.record(z.string(), z.string()),
  operation: z.string().nullable().optional().describe("Lance's name of the operation that made the version (with `include_operations=true`)"),
  action: z.string().nullable().optional().describe("what the user did to make the version, in their words (with `include_operations=true`)"),
  committed_by: versionAuthor
    .nullable()
    .optional()
    .describe(
      "who committed the version, for a table whose versions the catalog manages; null when the catalog has no record of it (with `include_operations=true`)",
    ),
});
export const versionsResponse = z.object({ versions: z.array(tableVersion), page_token: pageToken, context });

export const tagMap = z.record(
  z.string(),
  z.object({
    version: z.number().int(),
    manifestSize: z.number().int(),
    branch: z.string().nullable().describe("The branch the tagged version is on; null for main"),
  }),
);
export const tagsPage = z.object({ tags: tagMap, page_token: pageToken, context });

export type CatalogEntry = z.output<typeof catalogEntry>;
export type TableDescription = z.output<typeof tableDescription>;
export type TableVersion = z.output<typeof tableVersion>;

/** A table's size, rows, indices and how its rows lie in fragments (LanceDB's table stats). */
export const tableStatsAnswer = z.object({
  total_bytes: z.number(),
  num_rows: z.number(),
  num_indices: z.number(),
  fragment_stats: z.object({
    num_fragments: z.number().int(),
    num_small_fragments: z.number().int().describe("fragments under the engine's small-fragment threshold, which compaction merges"),
    lengths: z
      .object({ min: z.number(), max: z.number(), mean: z.number(), p25: z.number(), p50: z.number(), p75: z.number(), p99: z.number() })
      .describe("rows per fragment"),
  }),
  context,
});

export const indexDescription = z.object({
  index_name: z.string(),
  index_uuid: z.string(),
  index_type: z.string(),
  type_url: z.string().optional().describe("The protobuf type URL of the index's details: its precise kind"),
  columns: z.array(z.string()),
  status: z.string(),
  num_segments: z.number().int().optional().describe("The deltas (segments) the index is made of"),
  index_version: z.number().int().optional().describe("The index's on-disk format version"),
  num_indexed_rows: z.number().optional(),
  num_unindexed_rows: z.number().optional(),
  size_bytes: z.number().optional(),
  created_at: z.string().optional(),
  index_details: z.string().optional().describe("The build parameters the engine recorded in the index, as JSON text"),
});

export const indexListAnswer = z.object({ indexes: z.array(indexDescription), page_token: pageToken, context });

export const indexStatsAnswer = z.object({
  index_type: z.string(),
  distance_type: z.string().optional(),
  num_indexed_rows: z.number(),
  num_unindexed_rows: z.number(),
  num_indices: z.number().optional(),
  context,
});
