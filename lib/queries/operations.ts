"use client";
/** The service at a glance (the operations page): its figures over a window, refreshed as the operator chose. */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { call, type AnswerOf } from "../api-client";
import { queryKeys } from "./keys";

export type OperationsOverview = AnswerOf<"DescribeOperations">;

/** `refreshMs` 0: only when asked. A refresh keeps the charts drawn meanwhile; the previous window's stay while the next loads. */
export const useOperations = (database: string, window: number, instance: string | null, refreshMs: number, enabled = true) =>
  useQuery({
    queryKey: queryKeys.operations(window, instance),
    queryFn: () => call("DescribeOperations", { database, query: { window: String(window), ...(instance ? { instance } : {}) } }),
    refetchInterval: refreshMs || false,
    placeholderData: keepPreviousData,
    enabled,
  });
