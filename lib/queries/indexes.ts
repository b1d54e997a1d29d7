"use client";
/** A table's indices: listed with their statistics, built, dropped. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiCall } from "../api-client";
import type { Answer } from "../contract/common";
import type { indexListAnswer, indexStatsAnswer } from "../contract/catalog";
import { apiPath, type Id } from "./catalog";
import { queryKeys } from "./keys";

export type IndexDescription = Answer<typeof indexListAnswer>["indexes"][number];
export type IndexStats = Answer<typeof indexStatsAnswer>;

const indexesKey = (database: string, id: Id) => [...queryKeys.table(database, id), "indexes"] as const;

export const useIndexes = (database: string, id: Id) =>
  useQuery({
    queryKey: indexesKey(database, id),
    queryFn: () => apiCall<Answer<typeof indexListAnswer>>(apiPath("table", id, "index/list"), { database, json: {} }),
  });

export const useIndexStats = (database: string, id: Id, name: string) =>
  useQuery({
    queryKey: [...indexesKey(database, id), "stats", name],
    queryFn: () => apiCall<IndexStats>(apiPath("table", id, `index/${encodeURIComponent(name)}/stats`), { database, json: {} }),
  });

/** Building or dropping an index changes the table's version and its description too. */
function useIndexMutation<I>(database: string, id: Id, fn: (input: I) => Promise<unknown>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: fn, onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.table(database, id) }) });
}

export const useCreateIndex = (database: string, id: Id) =>
  useIndexMutation(database, id, (request: Record<string, unknown>) => apiCall(apiPath("table", id, "create_index"), { database, json: request }));

export const useDropIndex = (database: string, id: Id) =>
  useIndexMutation(database, id, (name: string) => apiCall(apiPath("table", id, `index/${encodeURIComponent(name)}/drop`), { database, method: "POST" }));
