"use client";
/** Queries and mutations for namespaces, tables, data, versions and tags, keyed per resource. */
import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { tableFromIPC, type Table as ArrowTable } from "apache-arrow";
import { call, type BodyOf } from "../api-client";
import type { CatalogEntry, TableDescription, TableVersion } from "../contract/catalog";
import { queryKeys } from "./keys";

export type Id = string[];

export type { CatalogEntry as Entry, TableDescription, TableVersion as VersionRecord };
export interface At {
  version?: number;
  tag?: string;
}

export function useEntries(database: string, namespace: Id, kind: "namespace" | "table", filter: string) {
  return useInfiniteQuery({
    queryKey: queryKeys.entriesPage(database, namespace, kind, filter),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam, signal }) =>
      call("ListNamespaceEntries", { id: namespace, query: { kind, filter, limit: "500", page_token: pageParam }, database, signal }),
    getNextPageParam: (last) => last.page_token,
    placeholderData: keepPreviousData,
  });
}

export const useNamespace = (database: string, namespace: Id) =>
  useQuery({
    queryKey: queryKeys.namespace(database, namespace),
    queryFn: () => call("DescribeNamespace", { id: namespace, body: {}, database }),
  });

export const useSearch = (database: string, q: string) =>
  useQuery({
    queryKey: queryKeys.catalogSearch(database, q),
    queryFn: ({ signal }) => call("SearchCatalog", { query: { q, limit: "20" }, database, signal }),
    enabled: q.trim().length > 0,
    placeholderData: keepPreviousData,
  });

export const useTable = (database: string, id: Id, at: At = {}) =>
  useQuery({
    queryKey: queryKeys.tableDescription(database, id, at),
    queryFn: () => call("DescribeTable", { id, body: { version: at.version, tag: at.tag }, database }),
  });

export function useVersions(database: string, id: Id, enabled = true) {
  return useInfiniteQuery({
    queryKey: queryKeys.versions(database, id),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      call("ListTableVersions", { id, query: { descending: "true", limit: "100", include_operations: "true", page_token: pageParam }, database }),
    getNextPageParam: (last) => last.page_token,
    enabled,
  });
}

export const useTags = (database: string, id: Id, enabled = true) =>
  useQuery({
    queryKey: queryKeys.tags(database, id),
    queryFn: () => call("ListTableTags", { id, database }),
    enabled,
  });

export interface RowsQuery extends At {
  columns?: string[];
  filter?: string;
  limit: number;
  offset: number;
  withRowId?: boolean;
  /** A column to order the rows by, ascending or descending (the engine's ordering). */
  sort?: { column: string; ascending: boolean };
}

export const useRows = (database: string, id: Id, q: RowsQuery, enabled = true) =>
  useQuery({
    queryKey: queryKeys.rows(database, id, q),
    queryFn: async (): Promise<ArrowTable> => {
      const buf = await call("QueryTable", {
        id,
        database,
        body: {
          version: q.version,
          tag: q.tag,
          columns: q.columns,
          filter: q.filter || undefined,
          limit: q.limit,
          offset: q.offset,
          with_row_id: q.withRowId || undefined,
          order_by: q.sort ? [{ column_name: q.sort.column, ascending: q.sort.ascending }] : undefined,
        },
      });
      return tableFromIPC(new Uint8Array(buf));
    },
    placeholderData: keepPreviousData,
    enabled,
  });

/** A query as QueryTable takes it. */
export type TableQuery = BodyOf<"QueryTable">;

/** A vector or full-text search: the query as QueryTable takes it; its rows carry `_distance` or `_score`. */
export const useTableQuery = (database: string, id: Id, query: TableQuery | null) =>
  useQuery({
    queryKey: queryKeys.tableSearch(database, id, query),
    queryFn: async (): Promise<ArrowTable> => tableFromIPC(new Uint8Array(await call("QueryTable", { id, database, body: query! }))),
    enabled: query !== null,
    retry: false,
  });

/** The engine's plan for a query, without running it. */
export const useExplainPlan = (database: string, id: Id) =>
  useMutation({
    mutationFn: (query: TableQuery) => call("ExplainTableQueryPlan", { id, database, body: { query, verbose: true } }),
  });

export const useCount = (database: string, id: Id, at: At & { filter?: string }, enabled = true) =>
  useQuery({
    queryKey: queryKeys.count(database, id, at),
    queryFn: () => call("CountTableRows", { id, database, body: { version: at.version, predicate: at.filter || undefined } }),
    enabled,
  });

// ---------------------------------------------------------------- mutations

function invalidateNamespace(client: QueryClient, database: string, namespace: Id) {
  return Promise.all([
    client.invalidateQueries({ queryKey: queryKeys.entries(database, namespace) }),
    client.invalidateQueries({ queryKey: queryKeys.catalogSearches(database) }),
  ]);
}

const invalidateTable = (client: QueryClient, database: string, id: Id) => client.invalidateQueries({ queryKey: queryKeys.table(database, id) });

export function useCreateNamespace(database: string, parent: Id) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { name: string; properties: Record<string, string> }) =>
      call("CreateNamespace", { id: [...parent, input.name], database, body: { properties: input.properties } }),
    onSuccess: () => invalidateNamespace(client, database, parent),
  });
}

export function useDropNamespace(database: string, namespace: Id) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (cascade: boolean) => call("DropNamespace", { id: namespace, database, body: { behavior: cascade ? "Cascade" : "Restrict" } }),
    onSuccess: () => invalidateNamespace(client, database, namespace.slice(0, -1)),
  });
}

export function useDeclareTable(database: string, namespace: Id) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { name: string; properties: Record<string, string> }) =>
      call("DeclareTable", { id: [...namespace, input.name], database, body: { properties: input.properties } }),
    onSuccess: () => invalidateNamespace(client, database, namespace),
  });
}

export function useDropTable(database: string, id: Id) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => call("DropTable", { id, database, body: {} }),
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
  useTableMutation(database, id, (input: BodyOf<"CreateTableTag">) => call("CreateTableTag", { id, database, body: input }));
export const useUpdateTag = (database: string, id: Id) =>
  useTableMutation(database, id, (input: BodyOf<"UpdateTableTag">) => call("UpdateTableTag", { id, database, body: input }));
export const useDeleteTag = (database: string, id: Id) =>
  useTableMutation(database, id, (tag: string) => call("DeleteTableTag", { id, database, body: { tag } }));
export const useRestore = (database: string, id: Id) =>
  useTableMutation(database, id, (version: number) => call("RestoreTable", { id, database, body: { version } }));
/** Sets and removes the table's properties, among them whether the catalog manages its versions. */
export const useUpdateTableProperties = (database: string, id: Id) =>
  useTableMutation(database, id, (input: BodyOf<"UpdateTableProperties">) => call("UpdateTableProperties", { id, database, body: input }));
/** Sets keys of the schema's metadata; the answer is the whole metadata of the new version. */
export const useUpdateSchemaMetadata = (database: string, id: Id) =>
  useTableMutation(database, id, (changes: BodyOf<"UpdateTableSchemaMetadata">) => call("UpdateTableSchemaMetadata", { id, database, body: changes }));
export const useAlterColumns = (database: string, id: Id) =>
  useTableMutation(database, id, (alterations: BodyOf<"AlterTableAlterColumns">["alterations"]) =>
    call("AlterTableAlterColumns", { id, database, body: { alterations } }),
  );

/** After an upload the table, its versions and (for a first write) the namespace's table states change. */
export function useInvalidateAfterWrite(database: string, id: Id) {
  const client = useQueryClient();
  return () => Promise.all([invalidateTable(client, database, id), invalidateNamespace(client, database, id.slice(0, -1))]);
}
