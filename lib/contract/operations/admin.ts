/** The service's administration: who is calling, API keys, grants, the audit log, databases. */
import { z } from "zod";
import { context, pageQuery, qInt, qString, requestBase } from "../common";
import { operationsOverview } from "../operations-overview";
import { defineOperation } from "../operation";
import {
  apiKeyResponse,
  apiKeysResponse,
  auditPageResponse,
  createdApiKeyResponse,
  createdDatabaseResponse,
  databasesResponse,
  grantResponse,
  grantsResponse,
  keyRole,
  role,
  whoAmIResponse,
} from "../access";

export const scopeInput = z
  .object({
    database: z.string().nullish().describe("Limit to one database; all databases when absent"),
    kind: z.enum(["namespace", "table"]).default("namespace"),
    id: z.array(z.string()).default([]).describe("Namespace or table identifier; [] is everything"),
  })
  .describe("A namespace subtree or one table");

export const adminOperations = {
  WhoAmI: defineOperation({
    operationId: "WhoAmI",
    summary: "The caller: who it is, whether it administers the service, and the database it addresses",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/whoami",
    response: whoAmIResponse,
  }),
  ListApiKeys: defineOperation({
    operationId: "ListApiKeys",
    summary: "List API keys (never the keys themselves)",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/admin/keys",
    response: apiKeysResponse,
  }),
  CreateApiKey: defineOperation({
    operationId: "CreateApiKey",
    summary: "Create an API key with a role, a scope and an optional expiry; the key is in this response only",
    group: "Admin",
    methods: ["POST"],
    path: "/v1/admin/keys/create",
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        name: z.string().min(1).max(100),
        role: keyRole,
        scope: scopeInput.optional(),
        expires_at: z.string().datetime({ offset: true }).nullish().describe("RFC 3339 time after which the key stops working"),
      }),
    },
    response: createdApiKeyResponse,
  }),
  RevokeApiKey: defineOperation({
    operationId: "RevokeApiKey",
    summary: "Revoke an API key",
    group: "Admin",
    methods: ["POST"],
    path: "/v1/admin/keys/{key_id}/revoke",
    body: { kind: "json", schema: z.object(requestBase) },
    response: apiKeyResponse,
  }),
  ListGrants: defineOperation({
    operationId: "ListGrants",
    summary: "List grants",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/admin/grants",
    response: grantsResponse,
  }),
  CreateGrant: defineOperation({
    operationId: "CreateGrant",
    summary: "Grant a role to a user, group or key on a namespace subtree or a table",
    group: "Admin",
    methods: ["POST"],
    path: "/v1/admin/grants/create",
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        principal: z.object({ type: z.enum(["user", "group", "key"]), name: z.string().min(1).max(200) }),
        role,
        scope: scopeInput,
      }),
    },
    response: grantResponse,
  }),
  DeleteGrant: defineOperation({
    operationId: "DeleteGrant",
    summary: "Remove a grant",
    group: "Admin",
    methods: ["POST"],
    path: "/v1/admin/grants/{grant_id}/delete",
    body: { kind: "json", schema: z.object(requestBase) },
    response: z.object({ context }),
  }),
  ListAuditLog: defineOperation({
    operationId: "ListAuditLog",
    summary: "Read the audit log, newest first, filtered and paged",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/admin/audit",
    query: z.object({
      ...pageQuery,
      principal: qString("Principal name or id"),
      action: qString("Operation id, e.g. InsertIntoTable"),
      outcome: qString("ok, refused or failed"),
      target: qString("Identifier prefix, parts joined by $"),
      database: qString("Database name"),
    }),
    response: auditPageResponse,
  }),
  DescribeOperations: defineOperation({
    operationId: "DescribeOperations",
    summary:
      "Quiver: the service at a glance: requests, latency, errors, store requests, writes, conflicts, repeats, caches and maintenance over a recent window, summed over every instance of the root (or one), and the instances themselves (administrators, and keys with the metrics role)",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/admin/operations",
    query: z.object({
      window: qInt("How far back, in seconds: 60 to 10800 (three hours, what each process keeps); 3600 when absent", 60).refine(
        (v) => v === undefined || v <= 10_800,
        "window is at most 10800 seconds (three hours, what each process keeps)",
      ),
      instance: qString("Only this instance's figures (an id of `instances`); every instance's when absent"),
    }),
    response: operationsOverview,
  }),
  ListDatabases: defineOperation({
    operationId: "ListDatabases",
    summary: "List databases",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/admin/databases",
    response: databasesResponse,
  }),
  CreateDatabase: defineOperation({
    operationId: "CreateDatabase",
    summary: "Create a database: a separate data root, selected with the x-quiver-database header",
    group: "Admin",
    methods: ["POST"],
    path: "/v1/admin/databases/create",
    body: { kind: "json", schema: z.object({ ...requestBase, name: z.string().min(1) }) },
    response: createdDatabaseResponse,
  }),
};
