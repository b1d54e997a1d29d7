/** The table routes: declare, create, describe, register, deregister, rename, drop, properties and stats. */
import { z } from "zod";
import { QuiverError, invalidInput } from "@/server/errors";
import { identifierIn, json, pageLimit, route, remoteDialect, type RouteContext } from "@/server/http/route";
import { tableStats } from "@/server/tables/indices";

import { isManagedVersioning } from "@/lib/contract/catalog";
import { formatIdentifier } from "@/lib/identifiers";
import { type ArrowBody } from "@/server/lance/arrow-ipc";
import { vendedStorageOptions } from "@/server/http/vending";
import { readableTables } from "./visibility";
import { createTableQuery, tableOperations as ops } from "@/lib/contract/operations/tables";
import { tableDeregistered, tableDropped, tableMade, tableRenamed } from "./table-access";

async function listAllTables(ctx: RouteContext<{ page_token?: string; limit?: number; include_declared?: boolean }, unknown>) {
  const { query, delimiter, catalog } = ctx;
  const page = await catalog.listAllTables(query.page_token, pageLimit(query.limit), query.include_declared ?? true, readableTables(ctx));
  return json({ tables: page.items.map((id) => formatIdentifier(id, delimiter)), page_token: page.pageToken });
}

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

async function createTable(ctx: RouteContext<z.output<typeof createTableQuery>, ArrowBody>) {
  const { catalog, id, body, query, request } = ctx;
  const mode = query.mode ?? "create";
  const storageOptions = Object.keys(parseStringMap(query.storage_options, "storage_options"));
  if (storageOptions.length) {
    throw new QuiverError(
      "Unsupported",
      `storage_options (${storageOptions.join(", ")}) are not taken: tables are written with the service's own storage settings (QUIVER_STORAGE_OPTIONS)`,
    );
  }
  const { entry, version, made } = await catalog.createTable(id, body, mode, parseStringMap(query.properties, "properties")).catch((err) => {
    // LanceDB's remote client recognizes a duplicate only as a 400 that says "already exists".
    if (remoteDialect(request) && err instanceof QuiverError && err.codeName === "TableAlreadyExists")
      throw new QuiverError("TableAlreadyExists", err.message, { status: 400 });
    throw err;
  });
  // Its maker becomes its admin, as a declare's does (writing into a declared table made nothing new).
  if (made) await tableMade(ctx, id);
  const location = catalog.location(entry);
  return json({ version, location, storage_options: await vendedStorageOptions(ctx, id, location, undefined), properties: entry.properties });
}

/** DeclareTable, and CreateEmptyTable: the name spec 0.4.4 gave it, which older clients still call. */
function declareRoute(operation: typeof ops.DeclareTable) {
  return route({
    ...operation,
    access: { need: "editor", on: "table" },
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
  await tableMade(ctx, id);
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
  await tableDeregistered(ctx, id);
  return { id, location, properties };
}

export const tableRoutes = [
  route({
    ...ops.ListAllTables,
    access: { need: "authenticated" },
    handler: listAllTables,
  }),
  declareRoute(ops.DeclareTable),
  declareRoute(ops.CreateEmptyTable),
  route({
    ...ops.CreateTable,
    access: { need: "editor", on: "table" },
    commits: true,
    handler: createTable,
  }),
  route({
    ...ops.DescribeTable,
    access: { need: "viewer", on: "table" },
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
        metadata: d.tableMetadata,
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
    ...ops.TableExists,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, body, tables }) => {
      const entry = await tables.resolve(id);
      if (body.version !== undefined && body.version !== null) await tables.readHandle(entry, { version: body.version });
      return json({});
    },
  }),
  route({
    ...ops.DropTable,
    access: { need: "admin", on: "table" },
    handler: async (ctx) => {
      const { id, catalog } = ctx;
      const { entry } = await catalog.dropTable(id);
      await tableDropped(ctx, id, entry);
      return json({ id, location: catalog.location(entry), properties: entry.properties });
    },
  }),
  route({
    ...ops.UpdateTableProperties,
    access: { need: "admin", on: "table" },
    handler: async ({ id, body, catalog, auditDetail }) => {
      const { entry } = await catalog.updateTableProperties(id, body.updates ?? {}, body.removals ?? []);
      const managed = isManagedVersioning(entry.properties);
      const changed = [...Object.keys(body.updates ?? {}).map((key) => `set ${key}`), ...(body.removals ?? []).map((key) => `removed ${key}`)];
      auditDetail(`${changed.join(", ") || "nothing changed"}; versions ${managed ? "managed by the catalog" : "not managed"}`);
      return json({ properties: entry.properties, managed_versioning: managed });
    },
  }),
  route({
    ...ops.RegisterTable,
    access: { need: "admin", on: "table" },
    handler: async (ctx) => {
      const { id, body, catalog } = ctx;
      const mode = body.mode ?? "create";
      const result = await catalog.registerTable(id, body.location, mode, body.properties ?? {});
      await tableMade(ctx, id);
      return json(result);
    },
  }),
  route({
    ...ops.DeregisterTable,
    access: { need: "admin", on: "table" },
    handler: async (ctx) => {
      const { entry } = await ctx.catalog.deregisterTable(ctx.id);
      return json(await deregisteredAnswer(ctx, ctx.id, ctx.catalog.location(entry), entry.properties));
    },
  }),
  route({
    ...ops.ListTablesEnterprise,
    access: { need: "authenticated", apiKeyHeaderOnly: true },
    handler: listAllTables,
  }),
  route({
    ...ops.CreateTableEnterprise,
    access: { need: "editor", on: "table", apiKeyHeaderOnly: true },
    handler: async (ctx) => {
      if (ctx.id.length !== 1) throw invalidInput("the enterprise create endpoint makes root-level tables; give a plain table name");
      return createTable(ctx);
    },
  }),
  route({
    ...ops.GetTableStats,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, body, tables }) => json(await tableStats(tables, id, body.branch ?? undefined)),
  }),
  route({
    ...ops.RenameTable,
    access: { need: "admin", on: "table" },
    handler: async (ctx) => {
      const { id, body, catalog, access, principal, database } = ctx;
      let namespace: string[] | undefined;
      if (body.new_namespace_id) {
        namespace = identifierIn(body.new_namespace_id, "new_namespace_id");
        if ((await access.roleOn(principal, database, [...namespace, body.new_table_name])) !== "admin") {
          throw new QuiverError("PermissionDenied", "moving a table needs the admin role on the target namespace too");
        }
      }
      const { id: renamed } = await catalog.renameTable(id, body.new_table_name, namespace);
      await tableRenamed(ctx, id, renamed);
      return json({});
    },
  }),
];
