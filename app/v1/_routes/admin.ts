/** The service's administration routes: who is calling, API keys, grants, the audit log, databases. */
import { z } from "zod";
import { createDatabase, checkDatabaseName, listDatabases } from "@/server/databases";
import { QuiverError, invalidInput } from "@/server/errors";
import { identifierIn, json, route } from "@/server/http/route";
import { publicKey } from "@/server/auth/api-keys";
import type { Principal, Scope } from "@/server/auth/model";
import { decodePageToken, encodePageToken } from "@/server/catalog/paging";
import { operationsOverview } from "@/server/operations/overview";
import { rootStore } from "@/server/storage/stores";

import { scopeInput, adminOperations as ops } from "@/lib/contract/operations/admin";

const globalAdmin = { need: "global-admin" } as const;

function toScope(input: z.output<typeof scopeInput>): Scope {
  const id = identifierIn(input.id, "scope.id");
  if (input.kind === "table" && id.length === 0) throw invalidInput("a table scope needs a table identifier");
  return { database: input.database ? checkDatabaseName(input.database) : null, kind: input.kind, id };
}

const who = (p: Principal) => `${p.kind}:${p.name}`;

export const adminRoutes = [
  route({
    ...ops.WhoAmI,
    access: { need: "authenticated" },
    handler: async ({ principal, access, database }) =>
      json({
        principal: { kind: principal.kind, id: principal.id, name: principal.name },
        admin: await access.isGlobalAdmin(principal),
        metrics: await access.canReadMetrics(principal),
        database,
      }),
  }),
  route({
    ...ops.ListApiKeys,
    access: globalAdmin,
    handler: async ({ access }) => {
      const keys = (await access.keys.list()).map(publicKey).sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
      return json({ keys });
    },
  }),
  route({
    ...ops.CreateApiKey,
    access: globalAdmin,
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
    ...ops.RevokeApiKey,
    access: globalAdmin,
    handler: async ({ params, access }) => {
      const record = /^[0-9a-f]{16}$/.test(params.key_id) ? await access.keys.revoke(params.key_id) : null;
      if (!record) throw new QuiverError("InvalidInput", `API key '${params.key_id}' does not exist`, { status: 404 });
      return json({ record: publicKey(record) });
    },
  }),
  route({
    ...ops.ListGrants,
    access: globalAdmin,
    handler: async ({ access }) => json({ grants: (await access.grants.list()).sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1)) }),
  }),
  route({
    ...ops.CreateGrant,
    access: globalAdmin,
    handler: async ({ body, access, principal }) =>
      json({ grant: await access.grants.create({ principal: body.principal, role: body.role, scope: toScope(body.scope), createdBy: who(principal) }) }),
  }),
  route({
    ...ops.DeleteGrant,
    access: globalAdmin,
    handler: async ({ params, access }) => {
      if (!/^[0-9a-f]{16}$/.test(params.grant_id) || !(await access.grants.remove(params.grant_id))) {
        throw new QuiverError("InvalidInput", `grant '${params.grant_id}' does not exist`, { status: 404 });
      }
      return json({});
    },
  }),
  route({
    ...ops.ListAuditLog,
    access: globalAdmin,
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
    ...ops.DescribeOperations,
    access: { need: "metrics-reader" },
    handler: async ({ query, access, principal }) =>
      json(await operationsOverview(rootStore(), query.window ?? 3600, query.instance ?? null, { catalog: await access.isGlobalAdmin(principal) })),
  }),
  route({
    ...ops.ListDatabases,
    access: globalAdmin,
    handler: async () => json({ databases: await listDatabases() }),
  }),
  route({
    ...ops.CreateDatabase,
    access: globalAdmin,
    handler: async ({ body }) => json({ name: body.name, ...(await createDatabase(body.name)) }),
  }),
];
