"use client";
/** Queries and mutations for namespaces, tables, data, versions and tags, keyed per resource. */
import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { tableFromIPC, type Table as ArrowTable } from "apache-arrow";
import { apiCall } from "../api-client";
import { encodeIdentifier } from "../identifiers";
import type { Answer, versionAnswer } from "../contract/common";
import type { updatedTableProperties } from "../contract/table-changes";
import type {
  CatalogEntry,
  declaredTable,
  describeNamespaceResponse,
  schemaMetadata,
  entriesResponse,
  searchResponse,
  TableDescription,
  tableDescription,
  tagsPage,
  TableVersion,
  versionsResponse,
} from "../contract/catalog";
import { queryKeys } from "./keys";

export type Id = string[];

export type { CatalogEntry as Entry, TableDescription, TableVersion as VersionRecord };
export interface At {
  version?: number;
  tag?: string;
}

const path = (kind: "namespace" | "table", id: Id, action: string) => `/v1/${kind}/${encodeIdentifier(id)}/${action}`;

export function useEntries(database: string, namespace: Id, kind: "namespace" | "table", filter: string) {
  return useInfiniteQuery({
    queryKey: [...queryKeys.entries(database, namespace), kind, filter],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam, signal }) => {
      const params = new URLSearchParams({ kind, filter, limit: "500" });
      if (pageParam) params.set("page_token", pageParam);
      return apiCall<Answer<typeof entriesResponse>>(`${path("namespace", namespace, "entries")}?${params}`, { database, signal });
    },
    getNextPageParam: (last) => last.page_token,
    placeholderData: keepPreviousData,
  });
}

export const useNamespace = (database: string, namespace: Id) =>
  useQuery({
    queryKey: queryKeys.namespace(database, namespace),
    queryFn: () => apiCall<Answer<typeof describeNamespaceResponse>>(path("namespace", namespace, "describe"), { database, json: {} }),
  });

export const useSearch = (database: string, q: string) =>
  useQuery({
    queryKey: [...queryKeys.database(database), "search", q],
    queryFn: ({ signal }) => apiCall<Answer<typeof searchResponse>>(`/v1/search?${new URLSearchParams({ q, limit: "20" })}`, { database, signal }),
    enabled: q.trim().length > 0,
    placeholderData: keepPreviousData,
  });

export const useTable = (database: string, id: Id, at: At = {}) =>
  useQuery({
    queryKey: [...queryKeys.table(database, id), "describe", at.version ?? null, at.tag ?? null],
    queryFn: () => apiCall<Answer<typeof tableDescription>>(path("table", id, "describe"), { database, json: { version: at.version, tag: at.tag } }),
  });

export function useVersions(database: string, id: Id, enabled = true) {
  return useInfiniteQuery({
    queryKey: [...queryKeys.table(database, id), "versions"],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => {
      const params = new URLSearchParams({ descending: "true", limit: "100", include_operations: "true" });
      if (pageParam) params.set("page_token", pageParam);
      return apiCall<Answer<typeof versionsResponse>>(`${path("table", id, "version/list")}?${params}`, { database, method: "POST" });
    },
    getNextPageParam: (last) => last.page_token,
    enabled,
  });
}

export const useTags = (database: string, id: Id, enabled = true) =>
  useQuery({
    queryKey: [...queryKeys.table(database, id), "tags"],
    queryFn: () => apiCall<Answer<typeof tagsPage>>(path("table", id, "tags/list"), { database, method: "POST" }),
    enabled,
  });

export interface RowsQuery extends At {
  columns?: string[];
  filter?: string;
  limit: number;
  offset: number;
  withRowId?: boolean;
}

export const useRows = (database: string, id: Id, q: RowsQuery, enabled = true) =>
  useQuery({
    queryKey: [...queryKeys.table(database, id), "rows", q],
    queryFn: async (): Promise<ArrowTable> => {
      const buf = await apiCall<ArrayBuffer>(path("table", id, "query"), {
        database,
        json: {
          version: q.version,
          tag: q.tag,
          columns: q.columns,
          filter: q.filter || undefined,
          limit: q.limit,
          offset: q.offset,
          with_row_id: q.withRowId || undefined,
        },
        accept: "arrow",
      });
      return tableFromIPC(new Uint8Array(buf));
    },
    placeholderData: keepPreviousData,
    enabled,
  });

/** A vector or full-text search: the query as QueryTable takes it; its rows carry `_distance` or `_score`. */
export const useTableQuery = (database: string, id: Id, query: Record<string, unknown> | null) =>
  useQuery({
    queryKey: [...queryKeys.table(database, id), "search", query],
    queryFn: async (): Promise<ArrowTable> =>
      tableFromIPC(new Uint8Array(await apiCall<ArrayBuffer>(path("table", id, "query"), { database, json: query, accept: "arrow" }))),
    enabled: query !== null,
    retry: false,
  });

/** The engine's plan for a query, without running it. */
export const useExplainPlan = (database: string, id: Id) =>
  useMutation({
    mutationFn: (query: Record<string, unknown>) => apiCall<string>(path("table", id, "explain_plan"), { database, json: { query, verbose: true } }),
  });

export const useCount = (database: string, id: Id, at: At & { filter?: string }, enabled = true) =>
  useQuery({
    queryKey: [...queryKeys.table(database, id), "count", at],
    queryFn: () => apiCall<number>(path("table", id, "count_rows"), { database, json: { version: at.version, predicate: at.filter || undefined } }),
    enabled,
  });

// ---------------------------------------------------------------- mutations

function invalidateNamespace(client: QueryClient, database: string, namespace: Id) {
  return Promise.all([
    client.invalidateQueries({ queryKey: queryKeys.entries(database, namespace) }),
    client.invalidateQueries({ queryKey: [...queryKeys.database(database), "search"] }),
  ]);
}

const invalidateTable = (client: QueryClient, database: string, id: Id) => client.invalidateQueries({ queryKey: queryKeys.table(database, id) });

export function useCreateNamespace(database: string, parent: Id) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { name: string; properties: Record<string, string> }) =>
      apiCall(path("namespace", [...parent, input.name], "create"), { database, json: { properties: input.properties } }),
    onSuccess: () => invalidateNamespace(client, database, parent),
  });
}

export function useDropNamespace(database: string, namespace: Id) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (cascade: boolean) => apiCall(path("namespace", namespace, "drop"), { database, json: { behavior: cascade ? "Cascade" : "Restrict" } }),
    onSuccess: () => invalidateNamespace(client, database, namespace.slice(0, -1)),
  });
}

export function useDeclareTable(database: string, namespace: Id) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { name: string; properties: Record<string, string> }) =>
      apiCall<Answer<typeof declaredTable>>(path("table", [...namespace, input.name], "declare"), { database, json: { properties: input.properties } }),
    onSuccess: () => invalidateNamespace(client, database, namespace),
  });
}

export function useDropTable(database: string, id: Id) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => apiCall(path("table", id, "drop"), { database, method: "POST" }),
    onSuccess: async () => {
      client.removeQueries({ queryKey: queryKeys.table(database, id) });
      await invalidateNamespace(client, database, id.slice(0, -1));
    },
  });
}

function useTableMutation<I, O>(database: string, id: Id, fn: (input: I) => Promise<O>, alsoNamespace = false) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: () => Promise.all([invalidateTable(client, database, id), alsoNamespace ? invalidateNamespace(client, database, id.slice(0, -1)) : null]),
  });
}

export const useCreateTag = (database: string, id: Id) =>
  useTableMutation(database, id, (input: { tag: string; version: number }) => apiCall(path("table", id, "tags/create"), { database, json: input }));
export const useUpdateTag = (database: string, id: Id) =>
  useTableMutation(database, id, (input: { tag: string; version: number }) => apiCall(path("table", id, "tags/update"), { database, json: input }));
export const useDeleteTag = (database: string, id: Id) =>
  useTableMutation(database, id, (tag: string) => apiCall(path("table", id, "tags/delete"), { database, json: { tag } }));
export const useRestore = (database: string, id: Id) =>
  useTableMutation(database, id, (version: number) => apiCall<Answer<typeof versionAnswer>>(path("table", id, "restore"), { database, json: { version } }));
/** Sets and removes the table's properties, among them whether the catalog manages its versions. */
export const useUpdateTableProperties = (database: string, id: Id) =>
  useTableMutation(database, id, (input: { updates?: Record<string, string>; removals?: string[] }) =>
    apiCall<Answer<typeof updatedTableProperties>>(path("table", id, "properties/update"), { database, json: input }),
  );
/** Sets keys of the schema's metadata; the answer is the whole metadata of the new version. */
export const useUpdateSchemaMetadata = (database: string, id: Id) =>
  useTableMutation(database, id, (changes: Record<string, string>) =>
    apiCall<Answer<typeof schemaMetadata>>(path("table", id, "schema_metadata/update"), { database, json: changes }),
  );
export const useAlterColumns = (database: string, id: Id) =>
  useTableMutation(database, id, (alterations: unknown[]) =>
    apiCall<Answer<typeof versionAnswer>>(path("table", id, "alter_columns"), { database, json: { alterations } }),
  );

/** After an upload the table, its versions and (for a first write) the namespace's table states change. */
export function useInvalidateAfterWrite(database: string, id: Id) {
  const client = useQueryClient();
  return () => Promise.all([invalidateTable(client, database, id), invalidateNamespace(client, database, id.slice(0, -1))]);
}

export { path as apiPath };
