/**
 * The access operations' answers: API keys, grants, the audit log and the caller. Route handlers are held to these
 * schemas by the type checker, the OpenAPI document publishes them, and the console's types are read from them.
 */
import { z } from "zod";
import { context, pageToken } from "./common";

export const ROLES = ["viewer", "editor", "admin"] as const;
export const role = z.enum(ROLES);

/** A key's role: a role on data, or `metrics`, which scrapes GET /metrics and reads nothing else. */
export const KEY_ROLES = [...ROLES, "metrics"] as const;
export const keyRole = z.enum(KEY_ROLES);

export const scope = z
  .object({
    database: z.string().nullable().describe("The one database it covers; all databases when null"),
    kind: z.enum(["namespace", "table"]),
    id: z.array(z.string()).describe("Namespace or table identifier; [] is everything"),
  })
  .describe("A namespace subtree or one table");

const principalRef = z.object({ kind: z.string(), id: z.string(), name: z.string() });

export const apiKey = z
  .object({
    id: z.string(),
    name: z.string(),
    role: keyRole,
    scope,
    createdAt: z.string(),
    createdBy: z.string(),
    expiresAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    lastUsedAt: z.string().nullable(),
  })
  .describe("An API key's record; never the key itself");

export const grant = z.object({
  id: z.string(),
  principal: z.object({ type: z.enum(["user", "group", "key"]), name: z.string() }),
  role,
  scope,
  createdAt: z.string(),
  createdBy: z.string(),
});

export const auditEntry = z.object({
  time: z.string(),
  requestId: z.string(),
  principal: principalRef.nullable(),
  action: z.string(),
  method: z.string(),
  path: z.string(),
  database: z.string(),
  target: z.string().nullable(),
  status: z.number().int(),
  code: z.number().int().nullable(),
  outcome: z.enum(["ok", "refused", "failed"]),
  detail: z.string().optional().describe("What an entry adds to its action: for vended credentials, their access and expiry"),
});

export const whoAmIResponse = z.object({
  principal: principalRef,
  admin: z.boolean(),
  metrics: z.boolean().describe("Whether the caller may read the service's metrics and its operations page (an administrator, or a key with the metrics role)"),
  database: z.string(),
  context,
});
export const apiKeysResponse = z.object({ keys: z.array(apiKey), context });
export const createdApiKeyResponse = z.object({ key: z.string().describe("The key: shown in this answer only"), record: apiKey, context });
export const apiKeyResponse = z.object({ record: apiKey, context });
export const grantsResponse = z.object({ grants: z.array(grant), context });
export const grantResponse = z.object({ grant, context });
export const auditPageResponse = z.object({ entries: z.array(auditEntry), page_token: pageToken, context });
export const databasesResponse = z.object({ databases: z.array(z.string()), context });
export const createdDatabaseResponse = z.object({ name: z.string(), created: z.boolean().describe("False when it already existed"), context });

export type Role = z.output<typeof role>;
export type KeyRole = z.output<typeof keyRole>;
export type Scope = z.output<typeof scope>;
export type ApiKey = z.output<typeof apiKey>;
export type Grant = z.output<typeof grant>;
export type AuditEntry = z.output<typeof auditEntry>;
export type WhoAmI = z.output<typeof whoAmIResponse>;
