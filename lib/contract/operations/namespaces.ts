/** Namespaces: create, list, describe, drop, and the listings of their tables. */
import { z } from "zod";
import { describeNamespaceResponse, entriesResponse, searchResponse } from "../catalog";
import { choice, context, delimiterQuery, pageQuery, pageToken, properties, qBool, requestBase } from "../common";
import { defineOperation } from "../operation";

export const namespaceOperations = {
  CreateNamespace: defineOperation({
    operationId: "CreateNamespace",
    summary: "Create a namespace (modes Create, ExistOk, Overwrite)",
    group: "Namespaces",
    methods: ["POST"],
    path: "/v1/namespace/{id}/create",
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        mode: choice(["create", "exist_ok", "overwrite"], "Create (default), ExistOk or Overwrite"),
        properties: properties.nullish(),
      }),
    },
    response: describeNamespaceResponse,
  }),
  ListNamespaces: defineOperation({
    operationId: "ListNamespaces",
    summary: "List the child namespaces of a namespace",
    group: "Namespaces",
    methods: ["GET", "POST"],
    path: "/v1/namespace/{id}/list",
    query: z.object({ ...delimiterQuery, ...pageQuery }),
    response: z.object({ namespaces: z.array(z.string()), page_token: pageToken, context }),
  }),
  DescribeNamespace: defineOperation({
    operationId: "DescribeNamespace",
    summary: "Describe a namespace",
    group: "Namespaces",
    methods: ["POST", "GET"],
    path: "/v1/namespace/{id}/describe",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: describeNamespaceResponse,
  }),
  NamespaceExists: defineOperation({
    operationId: "NamespaceExists",
    summary: "Check that a namespace exists (404 when it does not)",
    group: "Namespaces",
    methods: ["POST", "GET"],
    path: "/v1/namespace/{id}/exists",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: z.object({ context }),
  }),
  DropNamespace: defineOperation({
    operationId: "DropNamespace",
    summary: "Drop a namespace (behavior Restrict or Cascade; mode Fail or Skip)",
    group: "Namespaces",
    methods: ["POST"],
    path: "/v1/namespace/{id}/drop",
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        mode: choice(["fail", "skip"], "Fail (default) or Skip when the namespace does not exist"),
        behavior: choice(["restrict", "cascade"], "Restrict (default) or Cascade to what the namespace holds"),
      }),
    },
    response: z.object({ properties: properties.nullable(), context }),
  }),
  ListTables: defineOperation({
    operationId: "ListTables",
    summary: "List the tables of a namespace (names relative to it)",
    group: "Namespaces",
    methods: ["GET", "POST"],
    path: "/v1/namespace/{id}/table/list",
    query: z.object({ ...delimiterQuery, ...pageQuery, include_declared: qBool("Include declared-only tables (default true)") }),
    response: z.object({ tables: z.array(z.string()), page_token: pageToken, context }),
  }),
  ListNamespaceEntries: defineOperation({
    operationId: "ListNamespaceEntries",
    summary: "Quiver: one page of a namespace's child namespaces or tables, filtered by name, with each table's state",
    group: "Namespaces",
    methods: ["GET"],
    path: "/v1/namespace/{id}/entries",
    query: z.object({
      ...delimiterQuery,
      ...pageQuery,
      kind: z.enum(["namespace", "table"]).default("table").describe("namespace or table"),
      filter: z.string().max(200).default("").describe("Case-insensitive substring of the name"),
    }),
    response: entriesResponse,
  }),
  SearchCatalog: defineOperation({
    operationId: "SearchCatalog",
    summary: "Quiver: namespaces and tables whose identifier contains the query",
    group: "Namespaces",
    methods: ["GET"],
    path: "/v1/search",
    query: z.object({ q: z.string().min(1).max(200), limit: z.coerce.number().int().min(1).max(100).default(20) }),
    response: searchResponse,
  }),
};
