/** What a listing shows its caller: the namespaces and tables it may see. */
import type { Visible } from "@/server/catalog/catalog";
import type { RouteContext } from "@/server/http/route";

type Caller = Pick<RouteContext<unknown, unknown>, "access" | "principal" | "database">;

/** Listings show only the tables the caller may read. */
export function readableTables({ access, principal, database }: Caller): Visible {
  if (principal.admin) return () => true;
  return async (id) => (await access.roleOn(principal, database, id)) !== null;
}

/** Listings show the namespaces the caller may read or holds something inside. */
export function visibleNamespaces({ access, principal, database }: Caller): Visible {
  if (principal.admin) return () => true;
  return (id) => access.canSeeNamespace(principal, database, id);
}
