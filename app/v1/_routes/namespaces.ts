/** The namespace routes: create, list, describe, drop, and the listings of their tables. */
import { json, pageLimit, route } from "@/server/http/route";
import { readableTables, visibleNamespaces } from "./visibility";
import { namespaceOperations as ops } from "@/lib/contract/operations/namespaces";
import { namespaceDropped } from "./table-access";

export const namespaceRoutes = [
  route({
    ...ops.CreateNamespace,
    access: { need: "admin", on: "parent" },
    handler: async ({ id, body, catalog }) => {
      const mode = body.mode ?? "create";
      return json(await catalog.createNamespace(id, mode, body.properties ?? {}));
    },
  }),
  route({
    ...ops.ListNamespaces,
    access: { need: "visible", on: "namespace" },
    handler: async (ctx) => {
      const { id, query, catalog } = ctx;
      const page = await catalog.listNamespaces(id, query.page_token, pageLimit(query.limit), visibleNamespaces(ctx));
      return json({ namespaces: page.items, page_token: page.pageToken });
    },
  }),
  route({
    ...ops.DescribeNamespace,
    access: { need: "visible", on: "namespace" },
    handler: async ({ id, catalog }) => json(await catalog.describeNamespace(id)),
  }),
  route({
    ...ops.NamespaceExists,
    access: { need: "visible", on: "namespace" },
    handler: async ({ id, catalog }) => {
      await catalog.namespaceExists(id);
      return json({});
    },
  }),
  route({
    ...ops.DropNamespace,
    access: { need: "admin", on: "namespace" },
    handler: async (ctx) => {
      const { id, body, catalog } = ctx;
      const { properties, dropped } = await catalog.dropNamespace(id, body.mode ?? "fail", body.behavior ?? "restrict");
      if (dropped) await namespaceDropped(ctx, id);
      return json({ properties });
    },
  }),
  route({
    ...ops.ListTables,
    access: { need: "visible", on: "namespace" },
    handler: async (ctx) => {
      const { id, query, catalog } = ctx;
      const page = await catalog.listTables(id, query.page_token, pageLimit(query.limit), query.include_declared ?? true, readableTables(ctx));
      return json({ tables: page.items, page_token: page.pageToken });
    },
  }),
  route({
    ...ops.ListNamespaceEntries,
    access: { need: "visible", on: "namespace" },
    handler: async (ctx) => {
      const { id, query, catalog } = ctx;
      const visible = { namespaces: visibleNamespaces(ctx), tables: readableTables(ctx) };
      const page = await catalog.entries(id, query.kind, query.filter, query.page_token, pageLimit(query.limit), visible);
      return json({ entries: page.items, page_token: page.pageToken });
    },
  }),
  route({
    ...ops.SearchCatalog,
    access: { need: "authenticated" },
    handler: async (ctx) => json(await ctx.catalog.search(ctx.query.q, ctx.query.limit, visibleNamespaces(ctx), readableTables(ctx))),
  }),
];
