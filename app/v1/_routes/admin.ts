import { z } from "zod";
import { createDatabase, checkDatabaseName, listDatabases } from "@/server/databases";
import { QuiverError, invalidInput } from "@/server/errors";
import { identifierIn, json, pageQuery, qString, route } from "@/server/http/route";
import { publicKey } from "@/server/auth/api-keys";
import type { Principal, Scope } from "@/server/auth/model";
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
} from "@/lib/contract/access";
import { decodePageToken, encodePageToken } from "@/server/catalog/paging";
import { context, requestBase } from "@/lib/contract/common";

const globalAdmin = { need: "global-admin" } as const;

const scopeInput = z
  .object({
    database: z.string().nullish().describe("Limit to one database; all databases when absent"),
    kind: z.enum(["namespace", "table"]).default("namespace"),
    id: z.array(z.string()).default([]).describe("Namespace or table identifier; [] is everything"),
  })
  .describe("A namespace subtree or one table");

function toScope(input: z.output<typeof scopeInput>): Scope {
  const id = identifierIn(input.id, "scope.id");
  if (input.kind === "table" && id.length === 0) throw invalidInput("a table scope needs a table identifier");
  return { database: input.database ? checkDatabaseName(input.database) : null, kind: input.kind, id };
}

const who = (p: Principal) => `${p.kind}:${p.name}`;

export const adminRoutes = [
  route({
    operationId: "WhoAmI",
    summary: "The caller: who it is, whether it administers the service, and the database it addresses",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/whoami",
    access: { need: "authenticated" },
    response: whoAmIResponse,
    handler: async ({ principal, access, database }) =>
      json({ principal: { kind: principal.kind, id: principal.id, name: principal.name }, admin: await access.isGlobalAdmin(principal), database }),
  }),
  route({
    operationId: "ListApiKeys",
    summary: "List API keys (never the keys themselves)",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/admin/keys",
    access: globalAdmin,
    response: apiKeysResponse,
    handler: async ({ access }) => {
      const keys = (await access.keys.list()).map(publicKey).sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
      return json({ keys });
    },
  }),
  route({
    operationId: "CreateApiKey",
    summary: "Create an API key with a role, a scope and an optional expiry; the key is in this response only",
    group: "Admin",
    methods: ["POST"],
    path: "/v1/admin/keys/create",
    access: globalAdmin,
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
    handler: async ({ body, access, principal }) => {
      if (body.expires_at && Date.parse(body.expires_at) <= Date.now()) throw invalidInput("expires_at is in the past");
      const { key, record } = await access.keys.create({
        name: body.name,
        role: body.role,
        scope: toScope(body.scope ?? { kind: "namespace", id: [] }),
        expiresAt: body.expires_at ? new Date(body.expires_at).toISOString() : null,
        createdBy: who(principal),
      });
      return json({ key, record: publicKey(record) });
    },
  }),
  route({
    operationId: "RevokeApiKey",
    summary: "Revoke an API key",
    group: "Admin",
    methods: ["POST"],
    path: "/v1/admin/keys/{key_id}/revoke",
    access: globalAdmin,
    body: { kind: "json", schema: z.object(requestBase) },
    response: apiKeyResponse,
    handler: async ({ params, access }) => {
      const record = /^[0-9a-f]{16}$/.test(params.key_id) ? await access.keys.revoke(params.key_id) : null;
      if (!record) throw new QuiverError("InvalidInput", `API key '${params.key_id}' does not exist`, { status: 404 });
      return json({ record: publicKey(record) });
    },
  }),
  route({
    operationId: "ListGrants",
    summary: "List grants",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/admin/grants",
    access: globalAdmin,
    response: grantsResponse,
    handler: async ({ access }) => json({ grants: (await access.grants.list()).sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1)) }),
  }),
  route({
    operationId: "CreateGrant",
    summary: "Grant a role to a user, group or key on a namespace subtree or a table",
    group: "Admin",
    methods: ["POST"],
    path: "/v1/admin/grants/create",
    access: globalAdmin,
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
    handler: async ({ body, access, principal }) =>
      json({ grant: await access.grants.create({ principal: body.principal, role: body.role, scope: toScope(body.scope), createdBy: who(principal) }) }),
  }),
  route({
    operationId: "DeleteGrant",
    summary: "Remove a grant",
    group: "Admin",
    methods: ["POST"],
    path: "/v1/admin/grants/{grant_id}/delete",
    access: globalAdmin,
    body: { kind: "json", schema: z.object(requestBase) },
    response: z.object({ context }),
    handler: async ({ params, access }) => {
      if (!/^[0-9a-f]{16}$/.test(params.grant_id) || !(await access.grants.remove(params.grant_id))) {
        throw new QuiverError("InvalidInput", `grant '${params.grant_id}' does not exist`, { status: 404 });
      }
      return json({});
    },
  }),
  route({
    operationId: "ListAuditLog",
    summary: "Read the audit log, newest first, filtered and paged",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/admin/audit",
    access: globalAdmin,
    query: z.object({
      ...pageQuery,
      principal: qString("Principal name or id"),
      action: qString("Operation id, e.g. InsertIntoTable"),
      outcome: qString("ok, refused or failed"),
      target: qString("Identifier prefix, parts joined by $"),
      database: qString("Database name"),
    }),
    response: auditPageResponse,
    handler: async ({ query, access }) => {
      const { entries, next } = await access.audit.query(
        { principal: query.principal, action: query.action, outcome: query.outcome, target: query.target, database: query.database },
        Math.min(query.limit ?? 100, 1000),
        decodePageToken(query.page_token),
      );
      return json({ entries, page_token: next ? encodePageToken(next) : undefined });
    },
  }),
  route({
    operationId: "ListDatabases",
    summary: "List databases",
    group: "Admin",
    methods: ["GET"],
    path: "/v1/admin/databases",
    access: globalAdmin,
    response: databasesResponse,
    handler: async () => json({ databases: await listDatabases() }),
  }),
  route({
    operationId: "CreateDatabase",
    summary: "Create a database: a separate data root, selected with the x-quiver-database header",
    group: "Admin",
    methods: ["POST"],
    path: "/v1/admin/databases/create",
    access: globalAdmin,
    body: { kind: "json", schema: z.object({ ...requestBase, name: z.string().min(1) }) },
    response: createdDatabaseResponse,
    handler: async ({ body }) => json({ name: body.name, ...(await createDatabase(body.name)) }),
  }),
];
