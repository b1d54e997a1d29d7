"use client";
/** Queries and mutations for API keys, grants, the audit log and databases. */
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiCall } from "../api-client";
import { queryKeys } from "./keys";
import type { AuditEntry } from "../audit-entry";

export type { AuditEntry };

export type Role = "viewer" | "editor" | "admin";
export interface Scope {
  database: string | null;
  kind: "namespace" | "table";
  id: string[];
}
export interface ApiKey {
  id: string;
  name: string;
  role: Role;
  scope: Scope;
  createdAt: string;
  createdBy: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}
export interface Grant {
  id: string;
  principal: { type: "user" | "group" | "key"; name: string };
  role: Role;
  scope: Scope;
  createdAt: string;
  createdBy: string;
}
export interface WhoAmI {
  principal: { kind: string; id: string; name: string };
  admin: boolean;
  database: string;
}

export const useWhoAmI = (database: string) =>
  useQuery({ queryKey: queryKeys.whoami(database), queryFn: () => apiCall<WhoAmI>("/v1/whoami", { database }) });

export const useApiKeys = () => useQuery({ queryKey: queryKeys.admin.apiKeys(), queryFn: () => apiCall<{ keys: ApiKey[] }>("/v1/admin/keys") });

export function useCreateApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { name: string; role: Role; scope: Scope; expires_at: string | null }) =>
      apiCall<{ key: string; record: ApiKey }>("/v1/admin/keys/create", { json: input }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.apiKeys() }),
  });
}

export function useRevokeApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiCall<{ record: ApiKey }>(`/v1/admin/keys/${id}/revoke`, { json: {} }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.apiKeys() }),
  });
}

export const useGrants = () => useQuery({ queryKey: queryKeys.admin.grants(), queryFn: () => apiCall<{ grants: Grant[] }>("/v1/admin/grants") });

export function useCreateGrant() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { principal: Grant["principal"]; role: Role; scope: Scope }) => apiCall<{ grant: Grant }>("/v1/admin/grants/create", { json: input }),
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
      return apiCall<{ entries: AuditEntry[]; page_token?: string }>(`/v1/admin/audit?${params}`);
    },
    getNextPageParam: (last) => last.page_token,
  });
}

export const useDatabases = (enabled: boolean) =>
  useQuery({ queryKey: queryKeys.admin.databases(), queryFn: () => apiCall<{ databases: string[] }>("/v1/admin/databases"), enabled });

export function useCreateDatabase() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => apiCall<{ name: string; created: boolean }>("/v1/admin/databases/create", { json: { name } }),
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.admin.databases() }),
  });
}
