/**
 * The storage options a declare, create or describe answers with: credentials vended for the caller when the
 * operator turned vending on, read-write for those who may write the table and read-only for the rest, each vend
 * recorded in the audit log. A client that asks for none (`vend_credentials: false`) gets none.
 */
import "server-only";
import { formatIdentifier } from "@/lib/identifiers";
import { describePrincipal } from "../auth/model";
import { QuiverError } from "../errors";
import { credentialVendor } from "../storage/credentials";
import type { RouteContext } from "./route";

export async function vendedStorageOptions(
  ctx: Pick<RouteContext<unknown, unknown>, "access" | "audit" | "principal" | "database" | "request" | "requestId">,
  table: string[],
  location: string,
  requested: boolean | null | undefined,
): Promise<Record<string, string>> {
  const vendor = credentialVendor();
  if (requested === false || !vendor.available) return {};
  const role = await ctx.access.roleOn(ctx.principal, ctx.database, table);
  const access = role === "editor" || role === "admin" ? "write" : "read";
  const principal = describePrincipal(ctx.principal);
  const vended = await vendor.vend(location, access, principal.name).catch((err: unknown) => {
    // What was asked for has been done (a declare or create stays done): only the credentials are missing.
    throw new QuiverError(
      "ServiceUnavailable",
      `credentials for ${location} could not be vended (describe the table to try again): ${(err as Error).message.split("\n")[0].slice(0, 300)}`,
    );
  });
  if (!vended) return {};
  ctx.audit({
    time: new Date().toISOString(),
    requestId: ctx.requestId,
    principal,
    action: "VendCredentials",
    method: ctx.request.method,
    path: new URL(ctx.request.url).pathname,
    database: ctx.database,
    target: formatIdentifier(table),
    status: 200,
    code: null,
    outcome: "ok",
    detail: `${access} until ${new Date(vended.expiresAtMillis).toISOString()} on ${vended.scope}`,
  });
  return vended.storageOptions;
}
