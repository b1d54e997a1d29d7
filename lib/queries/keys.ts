/**
 * Every query key of the console, per resource. Keys nest: a table's key is the prefix of everything read about the
 * table, so a mutation invalidates exactly what it changes by the shortest key that holds it.
 */
import { joinIdentifier } from "@/lib/identifiers";

type Id = string[];

const table = (database: string, id: Id) => ["db", database, "table", joinIdentifier(id)] as const;
const maintenance = (database: string, id: Id) => [...table(database, id), "maintenance"] as const;
const indexes = (database: string, id: Id) => [...table(database, id), "indexes"] as const;
const catalogSearches = (database: string) => ["db", database, "search"] as const;
const entries = (database: string, namespace: Id) => ["db", database, "entries", joinIdentifier(namespace)] as const;

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
  allJobs: (database: string, filter: Record<string, string>) => ["db", database, "jobs", filter] as const,
  operations: (window: number, instance: string | null) => ["operations", window, instance] as const,
  sqlVocabulary: (database: string) => ["db", database, "sql", "vocabulary"] as const,
  savedQueries: (database: string) => ["db", database, "sql", "saved"] as const,
  namespaces: (database: string, namespace: Id) => ["db", database, "namespaces", joinIdentifier(namespace)] as const,
  namespace: (database: string, namespace: Id) => ["db", database, "namespace", joinIdentifier(namespace)] as const,
  entries,
  entriesPage: (database: string, namespace: Id, kind: string, filter: string) => [...entries(database, namespace), kind, filter] as const,
  catalogSearches,
  catalogSearch: (database: string, q: string) => [...catalogSearches(database), q] as const,
  table,
  tableDescription: (database: string, id: Id, at: { version?: number; tag?: string }) =>
    [...table(database, id), "describe", at.version ?? null, at.tag ?? null] as const,
  versions: (database: string, id: Id) => [...table(database, id), "versions"] as const,
  tags: (database: string, id: Id) => [...table(database, id), "tags"] as const,
  rows: (database: string, id: Id, query: object) => [...table(database, id), "rows", query] as const,
  tableSearch: (database: string, id: Id, query: object | null) => [...table(database, id), "search", query] as const,
  count: (database: string, id: Id, at: object) => [...table(database, id), "count", at] as const,
  cells: (database: string, id: Id, version: number | undefined, columns: string[], rowIds: string[]) =>
    [...table(database, id), "cells", version, columns, rowIds] as const,
  changes: (database: string, id: Id, from: object, to: object) => [...table(database, id), "changes", from, to] as const,
  changedRows: (database: string, id: Id, ends: object, kind: string, page: object) => [...table(database, id), "changed-rows", ends, kind, page] as const,
  map: (database: string, id: Id, request: object) => [...table(database, id), "map", request] as const,
  indexes,
  indexStats: (database: string, id: Id, name: string) => [...indexes(database, id), "stats", name] as const,
  tableHealth: (database: string, id: Id) => [...maintenance(database, id), "health"] as const,
  maintenanceJobs: (database: string, id: Id) => [...maintenance(database, id), "jobs"] as const,
};
