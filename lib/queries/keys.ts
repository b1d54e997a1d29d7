/** Query keys, per resource: each mutation invalidates exactly the keys it changes. */
import { joinIdentifier } from "@/lib/identifiers";
export const queryKeys = {
  whoami: (database: string) => ["whoami", database] as const,
  admin: {
    all: ["admin"] as const,
    apiKeys: () => ["admin", "keys"] as const,
    grants: () => ["admin", "grants"] as const,
    audit: (filter: Record<string, string>) => ["admin", "audit", filter] as const,
    databases: () => ["admin", "databases"] as const,
  },
  database: (database: string) => ["db", database] as const,
  namespaces: (database: string, namespace: string[]) => ["db", database, "namespaces", joinIdentifier(namespace)] as const,
  namespace: (database: string, namespace: string[]) => ["db", database, "namespace", joinIdentifier(namespace)] as const,
  entries: (database: string, namespace: string[]) => ["db", database, "entries", joinIdentifier(namespace)] as const,
  table: (database: string, table: string[]) => ["db", database, "table", joinIdentifier(table)] as const,
};
