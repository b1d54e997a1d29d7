/** Addresses of console pages: every namespace, table, tab, version and tag has its own. */
import { withDatabase } from "./use-database";

export const namespaceHref = (database: string, namespace: string[]) =>
  withDatabase(namespace.length ? `/browse/${namespace.map(encodeURIComponent).join("/")}` : "/", database);

export function tableHref(database: string, table: string[], tab = "overview", extra: Record<string, string | number | undefined> = {}) {
  const params = new URLSearchParams();
  if (tab !== "overview") params.set("tab", tab);
  for (const [k, v] of Object.entries(extra)) if (v !== undefined && v !== "") params.set(k, String(v));
  const query = params.toString();
  return withDatabase(`/tables/${table.map(encodeURIComponent).join("/")}${query ? `?${query}` : ""}`, database);
}
