/**
 * The storage options a declare, create or describe answers with: credentials vended for the caller when the
 * operator turned vending on, read-write for those who may write the table and read-only for the rest, each vend
 * recorded in the audit log. A client that asks for none (`vend_credentials: false`) gets none.
 */
import { formatIdentifier } from "@/lib/identifiers";
import { describePrincipal } from "../auth/model";
import type { RouteContext } from "./api";

export async function vendedStorageOptions(
  ctx: Pick<RouteContext<unknown, unknown>, "catalog" | "access" | "principal" | "database" | "request" | "requestId">,
  table: string[],
  requested: boolean | null | undefined,
): Promise<Record<string, string>> {
  if (requested === false || !ctx.catalog.credentials.available) return {};
  const role = await ctx.access.roleOn(ctx.principal, ctx.database, table);
  const access = role === "editor" || role === "admin" ? "write" : "read";
  const vended = ctx.catalog.credentials.vend(access);
  if (!vended) return {};
  await ctx.access.audit.record({
    time: new Date().toISOString(),
    requestId: ctx.requestId,
    principal: describePrincipal(ctx.principal),
    action: "VendCredentials",
    method: ctx.request.method,
    path: new URL(ctx.request.url).pathname,
    database: ctx.database,
    target: formatIdentifier(table, "$"),
    status: 200,
    code: null,
    outcome: "ok",
    detail: `${access} until ${new Date(vended.expiresAtMillis).toISOString()}`,
  });
  return vended.storageOptions;
}
