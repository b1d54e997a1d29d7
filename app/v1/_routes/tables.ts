import { z } from "zod";
import { QuiverError, invalidInput } from "@/server/errors";
import { identifierIn, json, pageLimit, pageQuery, route, qBool, qString, parseMode, remoteDialect, type RouteContext } from "@/server/http/route";
import { tableStats } from "@/server/tables/indices";
import { branchField, context, delimiterQuery, requestBase, pageToken, properties } from "@/lib/contract/common";
import { tableStatsAnswer, declaredTable, isManagedVersioning, tableDescription } from "@/lib/contract/catalog";
import { formatIdentifier } from "@/lib/identifiers";
import { declareFields, deregisteredTable, updatedTableProperties } from "@/lib/contract/table-changes";
import { type ArrowBody } from "@/server/lance/arrow-ipc";
import { vendedStorageOptions } from "@/server/http/vending";
import { readableTables } from "./visibility";
import { forgetAuthors } from "@/server/tables/version-authors";
const listAll = {
  query: z.object({ ...delimiterQuery, ...pageQuery, include_declared: qBool("Include declared-only tables (default true)") }),
  response: z.object({ tables: z.array(z.string()), page_token: pageToken, context }),
  handler: async (ctx: RouteContext<{ page_token?: string; limit?: number; include_declared?: boolean }, unknown>) => {
    const { query, delimiter, catalog } = ctx;
    const page = await catalog.listAllTables(query.page_token, pageLimit(query.limit), query.include_declared ?? true, readableTables(ctx));
    return json({ tables: page.items.map((id) => formatIdentifier(id, delimiter)), page_token: page.pageToken });
  },
};

function parseStringMap(raw: string | undefined, name: string): Record<string, string> {
  if (raw === undefined || raw === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalidInput(`${name} must be a JSON object of strings`);
  }
  const parsed = z.record(z.string(), z.string()).safeParse(value);
  if (!parsed.success) throw invalidInput(`${name} must be a JSON object of strings`);
  return parsed.data;
}

const createQuery = z.object({
  ...delimiterQuery,
  mode: qString("Create (default), ExistOk or Overwrite"),
  properties: qString("Table properties as a JSON object of strings"),
  storage_options: qString("Only {} is taken: tables are written with the service's own storage settings (QUIVER_STORAGE_OPTIONS)"),
});

const createResponse = z.object({
  version: z.number().int(),
  location: z.string(),
  storage_options: z.record(z.string(), z.string()),
  properties,
  context,
});

async function createTable(ctx: RouteContext<z.output<typeof createQuery>, ArrowBody>) {
  const { catalog, id, body, query, request } = ctx;
  const mode = parseMode(query.mode, ["create", "exist_ok", "overwrite"] as const, "create", "mode");
  const storageOptions = Object.keys(parseStringMap(query.storage_options, "storage_options"));
  if (storageOptions.length) {
    throw invalidInput(
      `storage_options (${storageOptions.join(", ")}) are not taken: tables are written with the service's own storage settings (QUIVER_STORAGE_OPTIONS)`,
    );
  }
  const { entry, version } = await catalog.createTable(id, body, mode, parseStringMap(query.properties, "properties")).catch((err) => {
    // LanceDB's remote client recognizes a duplicate only as a 400 that says "already exists".
    if (remoteDialect(request) && err instanceof QuiverError && err.codeName === "TableAlreadyExists")
      throw new QuiverError("TableAlreadyExists", err.message, { status: 400 });
    throw err;
  });
  const location = catalog.location(entry);
  return json({ version, location, storage_options: await vendedStorageOptions(ctx, id, location, undefined), properties: entry.properties });
}

/** DeclareTable, and CreateEmptyTable: the name spec 0.4.4 gave it, which older clients still call. */
function declareRoute(operationId: string, path: string, summary: string) {
  return route({
    operationId,
    summary,
    group: "Tables",
    methods: ["POST"],
    path,
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({ ...requestBase, ...declareFields }),
    },
    response: declaredTable,
    handler: async (ctx) => {
      const { id, body, catalog } = ctx;
      const result = await catalog.declareTable(id, body.location ?? undefined, body.properties ?? {});
      return json(await declaredAnswer(ctx, id, result, body.vend_credentials));
    },
  });
}

/** The answer to a declare, alone or in a batch: the declarer may now write the table, with credentials if vended. */
export async function declaredAnswer(
  ctx: RouteContext<unknown, unknown>,
  id: string[],
  declared: { location: string; properties: Record<string, string> },
  vendCredentials: boolean | null | undefined,
) {
  await ctx.access.grantDeclarer(ctx.principal, ctx.database, id);
  const storageOptions = await vendedStorageOptions(ctx, id, declared.location, vendCredentials);
  return {
    location: declared.location,
    storage_options: storageOptions,
    properties: declared.properties,
    managed_versioning: isManagedVersioning(declared.properties),
  };
}

/** The answer to a deregister, alone or in a batch: grants on the table go with it. */
export async function deregisteredAnswer(ctx: RouteContext<unknown, unknown>, id: string[], location: string, properties: Record<string, string>) {
  await ctx.access.forgetTable(ctx.database, id);
  return { id, location, properties };
}

export const tableRoutes = [
  route({
    operationId: "ListAllTables",
    summary: "List every table of every namespace, as full identifiers",
    group: "Tables",
    methods: ["GET"],
    path: "/v1/table",
    access: { need: "authenticated" },
    ...listAll,
  }),
  declareRoute("DeclareTable", "/v1/table/{id}/declare", "Declare a table: record it and reserve its location without writing data"),
  declareRoute("CreateEmptyTable", "/v1/table/{id}/create-empty", "Spec 0.4.4's name for DeclareTable, for older clients"),
  route({
    operationId: "CreateTable",
    summary: "Create a table from an Arrow IPC stream (modes Create, ExistOk, Overwrite)",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/create",
    access: { need: "editor", on: "table" },
    query: createQuery,
    body: { kind: "arrow" },
    response: createResponse,
    commits: true,
    handler: createTable,
  }),
  route({
    operationId: "DescribeTable",
    summary: "Describe a table: location, version, schema, properties, state and statistics, at a version or tag",
    group: "Tables",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/describe",
    access: { need: "viewer", on: "table" },
    query: z.object({
      ...delimiterQuery,
      with_table_uri: qBool("Accepted; the location is always returned"),
      load_detailed_metadata: qBool("Accepted; details are always returned"),
      check_declared: qBool("Accepted; is_only_declared is always returned"),
    }),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        version: z.number().int().min(0).nullish(),
        tag: z.string().nullish(),
        branch: z.string().nullish(),
        with_table_uri: z.boolean().nullish(),
        load_detailed_metadata: z.boolean().nullish(),
        check_declared: z.boolean().nullish(),
        vend_credentials: z.boolean().nullish(),
      }),
    },
    response: tableDescription,
    handler: async (ctx) => {
      const { id, body, catalog, tables } = ctx;
      const d = await tables.describe(id, { version: body.version ?? undefined, tag: body.tag ?? undefined, branch: body.branch ?? undefined });
      const location = catalog.location(d.entry);
      return json({
        table: id[id.length - 1],
        namespace: id.slice(0, -1),
        location,
        table_uri: location,
        version: d.version,
        schema: d.schema,
        properties: d.entry.properties,
        is_only_declared: d.declaredOnly,
        storage_options: await vendedStorageOptions(ctx, id, location, body.vend_credentials),
        managed_versioning: isManagedVersioning(d.entry.properties),
        stats: d.stats && {
          num_fragments: d.stats.fragmentStats.numFragments,
          num_deleted_rows: d.deletedRows ?? 0,
          num_rows: d.stats.numRows,
          total_bytes: d.stats.totalBytes,
          num_indices: d.stats.numIndices,
        },
      });
    },
  }),
  route({
    operationId: "TableExists",
    summary: "Check that a table exists (404 when it does not)",
    group: "Tables",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/exists",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, version: z.number().int().min(0).nullish() }) },
    response: z.object({ context }),
    handler: async ({ id, body, tables }) => {
      const entry = await tables.resolve(id);
      if (body.version !== undefined && body.version !== null) await tables.readHandle(entry, { version: body.version });
      return json({});
    },
  }),
  route({
    operationId: "DropTable",
    summary: "Drop a table and delete its data (declared-only tables too)",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/drop",
    access: { need: "admin", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: deregisteredTable,
    handler: async ({ id, catalog, tables, access, database }) => {
      const { entry } = await catalog.dropTable(id);
      await Promise.all([access.forgetTable(database, id), forgetAuthors(tables.records, entry)]);
      return json({ id, location: catalog.location(entry), properties: entry.properties });
    },
  }),
  route({
    operationId: "UpdateTableProperties",
    summary: 'Quiver: set and remove a table\'s properties; `quiver.managed_versioning` ("true" or "false") switches whether the catalog manages its versions',
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/properties/update",
    access: { need: "admin", on: "table" },
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        updates: properties.nullish().describe("properties to set, by key"),
        removals: z.array(z.string().min(1)).nullish().describe("keys of properties to remove"),
      }),
    },
    response: updatedTableProperties,
    handler: async ({ id, body, catalog, auditDetail }) => {
      const { entry } = await catalog.updateTableProperties(id, body.updates ?? {}, body.removals ?? []);
      const managed = isManagedVersioning(entry.properties);
      const changed = [...Object.keys(body.updates ?? {}).map((key) => `set ${key}`), ...(body.removals ?? []).map((key) => `removed ${key}`)];
      auditDetail(`${changed.join(", ") || "nothing changed"}; versions ${managed ? "managed by the catalog" : "not managed"}`);
      return json({ properties: entry.properties, managed_versioning: managed });
    },
  }),
  route({
    operationId: "RegisterTable",
    summary: "Catalog an existing Lance dataset under the data root as a table (location relative to the root)",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/register",
    access: { need: "admin", on: "table" },
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({ ...requestBase, location: z.string().min(1), mode: z.string().nullish(), properties: properties.nullish() }),
    },
    response: z.object({ location: z.string(), properties, context }),
    handler: async ({ id, body, catalog, access, principal, database }) => {
      const mode = parseMode(body.mode ?? undefined, ["create", "overwrite"] as const, "create", "mode");
      const result = await catalog.registerTable(id, body.location, mode, body.properties ?? {});
      await access.grantDeclarer(principal, database, id);
      return json(result);
    },
  }),
  route({
    operationId: "DeregisterTable",
    summary: "Take a table out of the catalog and keep its files, to be registered again later",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/deregister",
    access: { need: "admin", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: deregisteredTable,
    handler: async (ctx) => {
      const { entry } = await ctx.catalog.deregisterTable(ctx.id);
      return json(await deregisteredAnswer(ctx, ctx.id, ctx.catalog.location(entry), entry.properties));
    },
  }),
  route({
    operationId: "ListTablesEnterprise",
    summary: "Enterprise edition: list tables",
    group: "Tables",
    methods: ["GET"],
    path: "/v1/tables",
    access: { need: "authenticated", apiKeyHeaderOnly: true },
    ...listAll,
  }),
  route({
    operationId: "CreateTableEnterprise",
    summary: "Enterprise edition: create a root-level table from an Arrow IPC stream",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/tables/{table_name}",
    access: { need: "editor", on: "table", apiKeyHeaderOnly: true },
    query: createQuery,
    body: { kind: "arrow" },
    response: createResponse,
    handler: async (ctx) => {
      if (ctx.id.length !== 1) throw invalidInput("the enterprise create endpoint makes root-level tables; give a plain table name");
      return createTable(ctx);
    },
  }),
  route({
    operationId: "GetTableStats",
    summary: "Size, rows, indices and fragment statistics",
    group: "Tables",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/stats",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...branchField }) },
    response: tableStatsAnswer,
    handler: async ({ id, body, tables }) => json(await tableStats(tables, id, body.branch ?? undefined)),
  }),
  route({
    operationId: "RenameTable",
    summary: "Rename a table, or move it to another child namespace",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/rename",
    access: { need: "admin", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, new_table_name: z.string().min(1), new_namespace_id: z.array(z.string()).nullish() }) },
    response: z.object({ context }),
    handler: async ({ id, body, catalog, access, principal, database }) => {
      let namespace: string[] | undefined;
      if (body.new_namespace_id) {
        namespace = identifierIn(body.new_namespace_id, "new_namespace_id");
        if ((await access.roleOn(principal, database, [...namespace, body.new_table_name])) !== "admin") {
          throw new QuiverError("PermissionDenied", "moving a table needs the admin role on the target namespace too");
        }
      }
      await catalog.renameTable(id, body.new_table_name, namespace);
      return json({});
    },
  }),
];
