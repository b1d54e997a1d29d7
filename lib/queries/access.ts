"use client";
/** Queries and mutations for API keys, grants, the audit log and databases. */
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiCall } from "../api-client";
import { queryKeys } from "./keys";
import type { Answer } from "../contract/common";
import type {
  ApiKey,
  apiKeyResponse,
  apiKeysResponse,
  AuditEntry,
  auditPageResponse,
  createdApiKeyResponse,
  createdDatabaseResponse,
  databasesResponse,
  Grant,
  grantResponse,
  grantsResponse,
  KeyRole,
  Role,
  Scope,
  WhoAmI,
  whoAmIResponse,
} from "../contract/access";

export type { ApiKey, AuditEntry, Grant, KeyRole, Role, Scope, WhoAmI };

export const useWhoAmI = (database: string) =>
  useQuery({ queryKey: queryKeys.whoami(database), queryFn: () => apiCall<Answer<typeof whoAmIResponse>>("/v1/whoami", { database }) });

export const useApiKeys = () => useQuery({ queryKey: queryKeys.admin.apiKeys(), queryFn: () => apiCall<Answer<typeof apiKeysResponse>>("/v1/admin/keys") });

export function useCreateApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { name: string; role: KeyRole; scope: Scope; expires_at: string | null }) =>
      apiCall<Answer<typeof createdApiKeyResponse>>("/v1/admin/keys/create", { json: input }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.apiKeys() }),
  });
}

export function useRevokeApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiCall<Answer<typeof apiKeyResponse>>(`/v1/admin/keys/${id}/revoke`, { json: {} }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.apiKeys() }),
  });
}

export const useGrants = () => useQuery({ queryKey: queryKeys.admin.grants(), queryFn: () => apiCall<Answer<typeof grantsResponse>>("/v1/admin/grants") });

export function useCreateGrant() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { principal: Grant["principal"]; role: Role; scope: Scope }) =>
      apiCall<Answer<typeof grantResponse>>("/v1/admin/grants/create", { json: input }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.grants() }),
  });
}

export function useDeleteGrant() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiCall(`/v1/admin/grants/${id}/delete`, { json: {} }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.grants() }),
  });
}

export function useAuditLog(filter: Record<string, string>) {
  return useInfiniteQuery({
    queryKey: queryKeys.admin.audit(filter),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => {
      const params = new URLSearchParams({ ...Object.fromEntries(Object.entries(filter).filter(([, v]) => v)), limit: "50" });
      if (pageParam) params.set("page_token", pageParam);
      return apiCall<Answer<typeof auditPageResponse>>(`/v1/admin/audit?${params}`);
    },
    getNextPageParam: (last) => last.page_token,
  });
}

export const useDatabases = (enabled: boolean) =>
  useQuery({ queryKey: queryKeys.admin.databases(), queryFn: () => apiCall<Answer<typeof databasesResponse>>("/v1/admin/databases"), enabled });

export function useCreateDatabase() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => apiCall<Answer<typeof createdDatabaseResponse>>("/v1/admin/databases/create", { json: { name } }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.databases() }),
  });
}
