import { z } from "zod";
import { json, pageLimit, pageQuery, parseMode, qBool, route } from "@/server/http/route";
import { context, delimiterQuery, pageToken, properties, requestBase } from "@/lib/contract/common";
import { describeNamespaceResponse, entriesResponse, searchResponse } from "@/lib/contract/catalog";
import { readableTables, visibleNamespaces } from "./visibility";

export const namespaceRoutes = [
  route({
    operationId: "CreateNamespace",
    summary: "Create a namespace (modes Create, ExistOk, Overwrite)",
    group: "Namespaces",
    methods: ["POST"],
    path: "/v1/namespace/{id}/create",
    access: { need: "admin", on: "parent" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, mode: z.string().optional(), properties: properties.nullish() }) },
    response: describeNamespaceResponse,
    handler: async ({ id, body, catalog }) => {
      const mode = parseMode(body.mode ?? undefined, ["create", "exist_ok", "overwrite"] as const, "create", "mode");
      return json(await catalog.createNamespace(id, mode, body.properties ?? {}));
    },
  }),
  route({
    operationId: "ListNamespaces",
    summary: "List the child namespaces of a namespace",
    group: "Namespaces",
    methods: ["GET", "POST"],
    path: "/v1/namespace/{id}/list",
    access: { need: "visible", on: "namespace" },
    query: z.object({ ...delimiterQuery, ...pageQuery }),
    response: z.object({ namespaces: z.array(z.string()), page_token: pageToken, context }),
    handler: async (ctx) => {
      const { id, query, catalog } = ctx;
      const page = await catalog.listNamespaces(id, query.page_token, pageLimit(query.limit), visibleNamespaces(ctx));
      return json({ namespaces: page.items, page_token: page.pageToken });
    },
  }),
  route({
    operationId: "DescribeNamespace",
    summary: "Describe a namespace",
    group: "Namespaces",
    methods: ["POST", "GET"],
    path: "/v1/namespace/{id}/describe",
    access: { need: "visible", on: "namespace" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: describeNamespaceResponse,
    handler: async ({ id, catalog }) => json(await catalog.describeNamespace(id)),
  }),
  route({
    operationId: "NamespaceExists",
    summary: "Check that a namespace exists (404 when it does not)",
    group: "Namespaces",
    methods: ["POST", "GET"],
    path: "/v1/namespace/{id}/exists",
    access: { need: "visible", on: "namespace" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: z.object({ context }),
    handler: async ({ id, catalog }) => {
      await catalog.namespaceExists(id);
      return json({});
    },
  }),
  route({
    operationId: "DropNamespace",
    summary: "Drop a namespace (behavior Restrict or Cascade; mode Fail or Skip)",
    group: "Namespaces",
    methods: ["POST"],
    path: "/v1/namespace/{id}/drop",
    access: { need: "admin", on: "namespace" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, mode: z.string().optional(), behavior: z.string().optional() }) },
    response: z.object({ properties: properties.nullable(), context }),
    handler: async ({ id, body, catalog }) => {
      const mode = parseMode(body.mode, ["fail", "skip"] as const, "fail", "mode");
      const behavior = parseMode(body.behavior, ["restrict", "cascade"] as const, "restrict", "behavior");
      return json(await catalog.dropNamespace(id, mode, behavior));
    },
  }),
  route({
    operationId: "ListTables",
    summary: "List the tables of a namespace (names relative to it)",
    group: "Namespaces",
    methods: ["GET", "POST"],
    path: "/v1/namespace/{id}/table/list",
    access: { need: "visible", on: "namespace" },
    query: z.object({ ...delimiterQuery, ...pageQuery, include_declared: qBool("Include declared-only tables (default true)") }),
    response: z.object({ tables: z.array(z.string()), page_token: pageToken, context }),
    handler: async (ctx) => {
      const { id, query, catalog } = ctx;
      const page = await catalog.listTables(id, query.page_token, pageLimit(query.limit), query.include_declared ?? true, readableTables(ctx));
      return json({ tables: page.items, page_token: page.pageToken });
    },
  }),
  route({
    operationId: "ListNamespaceEntries",
    summary: "Quiver: one page of a namespace's child namespaces or tables, filtered by name, with each table's state",
    group: "Namespaces",
    methods: ["GET"],
    path: "/v1/namespace/{id}/entries",
    access: { need: "visible", on: "namespace" },
    query: z.object({
      ...delimiterQuery,
      ...pageQuery,
      kind: z.enum(["namespace", "table"]).default("table").describe("namespace or table"),
      filter: z.string().max(200).default("").describe("Case-insensitive substring of the name"),
    }),
    response: entriesResponse,
    handler: async (ctx) => {
      const { id, query, catalog } = ctx;
      const visible = query.kind === "namespace" ? visibleNamespaces(ctx) : readableTables(ctx);
      const page = await catalog.entries(id, query.kind, query.filter, query.page_token, pageLimit(query.limit), visible);
      return json({ entries: page.items, page_token: page.pageToken });
    },
  }),
  route({
    operationId: "SearchCatalog",
    summary: "Quiver: namespaces and tables whose identifier contains the query",
    group: "Namespaces",
    methods: ["GET"],
    path: "/v1/search",
    access: { need: "authenticated" },
    query: z.object({ q: z.string().min(1).max(200), limit: z.coerce.number().int().min(1).max(100).default(20) }),
    response: searchResponse,
    handler: async (ctx) => json(await ctx.catalog.search(ctx.query.q, ctx.query.limit, visibleNamespaces(ctx), readableTables(ctx))),
  }),
];
