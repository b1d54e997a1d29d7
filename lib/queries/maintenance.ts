"use client";
/** A table's maintenance: its health, jobs (polled while one runs), compaction and version cleanup with its preview. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { z } from "zod";
import { apiCall } from "../api-client";
import type { Answer } from "../contract/common";
import type { cleanupPlanAnswer, maintenanceJob, maintenanceJobAnswer, maintenanceJobsAnswer, tableHealthAnswer } from "../contract/maintenance";
import { apiPath, type Id } from "./catalog";
import { queryKeys } from "./keys";

export type MaintenanceJob = z.output<typeof maintenanceJob>;
export type TableHealth = Answer<typeof tableHealthAnswer>;
export type CleanupPlan = Answer<typeof cleanupPlanAnswer>;

const POLL_MS = 1000;
const maintenanceKey = (database: string, id: Id) => [...queryKeys.table(database, id), "maintenance"] as const;

export const useTableHealth = (database: string, id: Id, enabled = true) =>
  useQuery({
    queryKey: [...maintenanceKey(database, id), "health"],
    queryFn: () => apiCall<TableHealth>(apiPath("table", id, "maintenance/health"), { database, json: {} }),
    // While a job runs, its progress and then its outcome show without a reload.
    refetchInterval: (query) => (query.state.data?.running_job ? POLL_MS : false),
    enabled,
  });

export const useMaintenanceJobs = (database: string, id: Id, enabled = true) =>
  useQuery({
    queryKey: [...maintenanceKey(database, id), "jobs"],
    queryFn: () => apiCall<Answer<typeof maintenanceJobsAnswer>>(`${apiPath("table", id, "maintenance/jobs/list")}?limit=20`, { database, json: {} }),
    refetchInterval: (query) => (query.state.data?.jobs.some((j) => j.status === "running") ? POLL_MS : false),
    enabled,
  });

/** Starting a job: the health and job list then poll until it has finished, and the table's other views refresh. */
function useStartJob<I>(database: string, id: Id, start: (input: I) => Promise<Answer<typeof maintenanceJobAnswer>>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: start,
    onSuccess: () => client.invalidateQueries({ queryKey: queryKeys.table(database, id) }),
  });
}

export const useCompact = (database: string, id: Id) =>
  useStartJob(database, id, () => apiCall(apiPath("table", id, "maintenance/compact"), { database, json: {} }));

export const useCleanup = (database: string, id: Id) =>
  useStartJob(database, id, (olderThanSeconds: number) =>
    apiCall(apiPath("table", id, "maintenance/cleanup"), { database, json: { older_than_seconds: olderThanSeconds } }),
  );

export const useCleanupPreview = (database: string, id: Id) =>
  useMutation({
    mutationFn: (olderThanSeconds: number) =>
      apiCall<CleanupPlan>(apiPath("table", id, "maintenance/cleanup"), { database, json: { older_than_seconds: olderThanSeconds, dry_run: true } }),
  });
