"use client";
/** A table's indices: listed with their statistics, built, dropped. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { call, type AnswerOf, type BodyOf } from "../api-client";
import type { Id } from "./catalog";
import { queryKeys } from "./keys";

export type IndexDescription = AnswerOf<"ListTableIndices">["indexes"][number];
export type IndexStats = AnswerOf<"DescribeTableIndexStats">;

export const useIndexes = (database: string, id: Id) =>
  useQuery({
    queryKey: queryKeys.indexes(database, id),
    queryFn: () => call("ListTableIndices", { id, database, body: {} }),
  });

export const useIndexStats = (database: string, id: Id, name: string, enabled = true) =>
  useQuery({
    queryKey: queryKeys.indexStats(database, id, name),
    queryFn: () => call("DescribeTableIndexStats", { id, params: { index_name: name }, database, body: {} }),
    enabled,
  });

/** Building or dropping an index changes the table's version and its description too. */
function useIndexMutation<I>(database: string, id: Id, fn: (input: I) => Promise<unknown>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: fn, onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.table(database, id) }) });
}

export const useCreateIndex = (database: string, id: Id) =>
  useIndexMutation(database, id, (request: BodyOf<"CreateTableIndex">) => call("CreateTableIndex", { id, database, body: request }));

export const useDropIndex = (database: string, id: Id) =>
  useIndexMutation(database, id, (name: string) => call("DropTableIndex", { id, params: { index_name: name }, database, body: {} }));
