"use client";
/** A table's maintenance: its health, jobs (polled while one runs), compaction and version cleanup with its preview. */
import { useEffect, useRef } from "react";
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

/** The table's running maintenance job, if any; when it finishes, what it changed (versions, fragments, indexed rows) shows everywhere. */
export function useRunningJob(database: string, id: Id): string | null {
  const health = useTableHealth(database, id);
  const client = useQueryClient();
  const running = health.data?.running_job ?? null;
  const wasRunning = useRef<string | null>(null);
  useEffect(() => {
    if (wasRunning.current && !running) void client.invalidateQueries({ queryKey: queryKeys.table(database, id) });
    wasRunning.current = running;
  }, [running, client, database, id]);
  return running;
}

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
