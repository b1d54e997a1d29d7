"use client";
/** Queries and mutations for API keys, grants, the audit log and databases. */
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { call, type BodyOf } from "../api-client";
import { queryKeys } from "./keys";
import type { ApiKey, AuditEntry, Grant, KeyRole, Role, Scope, WhoAmI } from "../contract/access";

export type { ApiKey, AuditEntry, Grant, KeyRole, Role, Scope, WhoAmI };

export const useWhoAmI = (database: string) => useQuery({ queryKey: queryKeys.whoami(database), queryFn: () => call("WhoAmI", { database }) });

export const useApiKeys = () => useQuery({ queryKey: queryKeys.admin.apiKeys(), queryFn: () => call("ListApiKeys") });

export function useCreateApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: BodyOf<"CreateApiKey">) => call("CreateApiKey", { body: input }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.apiKeys() }),
  });
}

export function useRevokeApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => call("RevokeApiKey", { params: { key_id: id }, body: {} }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.apiKeys() }),
  });
}

export const useGrants = () => useQuery({ queryKey: queryKeys.admin.grants(), queryFn: () => call("ListGrants") });

export function useCreateGrant() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: BodyOf<"CreateGrant">) => call("CreateGrant", { body: input }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.grants() }),
  });
}

export function useDeleteGrant() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => call("DeleteGrant", { params: { grant_id: id }, body: {} }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.grants() }),
  });
}

export function useAuditLog(filter: Record<string, string>) {
  return useInfiniteQuery({
    queryKey: queryKeys.admin.audit(filter),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      call("ListAuditLog", { query: { ...Object.fromEntries(Object.entries(filter).filter(([, v]) => v)), limit: "50", page_token: pageParam } }),
    getNextPageParam: (last) => last.page_token,
  });
}

export const useDatabases = (enabled: boolean) => useQuery({ queryKey: queryKeys.admin.databases(), queryFn: () => call("ListDatabases"), enabled });

export function useCreateDatabase() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => call("CreateDatabase", { body: { name } }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.databases() }),
  });
}
