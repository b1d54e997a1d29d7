"use client";
/** SQL in the console: the names a statement may use, a statement's run, and the caller's saved queries. */
import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { tableFromIPC, type Table } from "apache-arrow";
import type { SqlAnswerFacts } from "@/lib/contract/operations/sql";
import { call } from "../api-client";
import { queryKeys } from "./keys";

/** Rows the workspace asks for at most: the first ones of a larger answer, marked truncated. */
export const WORKSPACE_ROWS = 10_000;

export const useSqlVocabulary = (database: string) =>
  useQuery({
    queryKey: queryKeys.sqlVocabulary(database),
    queryFn: () => call("DescribeSqlVocabulary", { database }),
    staleTime: 60_000,
  });

/** The columns of the tables a statement names, for completion: each table's description, as the table pages read it. */
export const useColumnsOf = (database: string, tables: string[][]) =>
  useQueries({
    queries: tables.map((id) => ({
      queryKey: queryKeys.tableDescription(database, id, {}),
      queryFn: () => call("DescribeTable", { id, body: {}, database }),
      staleTime: 60_000,
    })),
    combine: (results) =>
      new Map(
        results.flatMap((r, i) =>
          r.data?.schema
            ? [[tables[i].join("."), r.data.schema.fields.map((f: { name: string; type: { type: string } }) => ({ name: f.name, type: f.type.type }))] as const]
            : [],
        ),
      ),
  });

export interface SqlResult {
  table: Table;
  facts: SqlAnswerFacts;
  /** Milliseconds from asking to the rows on hand, as the person waited. */
  elapsedMs: number;
}

/** Runs a statement; `signal` cancels it, and the server stops it. */
export async function runSql(database: string, sql: string, signal: AbortSignal): Promise<SqlResult> {
  const started = performance.now();
  const bytes = await call("RunSql", { database, body: { query: sql, max_rows: WORKSPACE_ROWS, truncate: true }, signal });
  const table = tableFromIPC(new Uint8Array(bytes));
  const facts = JSON.parse(table.schema.metadata.get("quiver.sql") ?? "{}") as SqlAnswerFacts;
  return { table, facts, elapsedMs: performance.now() - started };
}

export const useSavedQueries = (database: string) =>
  useQuery({ queryKey: queryKeys.savedQueries(database), queryFn: () => call("ListSavedQueries", { database }) });

export function useSaveQuery(database: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { id?: string; name: string; sql: string }) => call("SaveQuery", { database, body }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.savedQueries(database) }),
  });
}

export function useDeleteSavedQuery(database: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => call("DeleteSavedQuery", { database, body: { id } }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.savedQueries(database) }),
  });
}
