"use client";
/** A table's maintenance: its health, jobs (polled while one runs), compaction and version cleanup with its preview; all tables' jobs. */
import { useEffect, useRef } from "react";
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { z } from "zod";
import { call, type AnswerOf } from "../api-client";
import type { cleanupPlanAnswer, maintenanceJob } from "../contract/maintenance";
import type { Answer } from "../contract/common";
import type { Id } from "./catalog";
import { queryKeys } from "./keys";

export type MaintenanceJob = z.output<typeof maintenanceJob>;
export type TableHealth = AnswerOf<"DescribeTableHealth">;
export type CleanupPlan = Answer<typeof cleanupPlanAnswer>;

const POLL_MS = 1000;

export const useTableHealth = (database: string, id: Id, enabled = true) =>
  useQuery({
    queryKey: queryKeys.tableHealth(database, id),
    queryFn: () => call("DescribeTableHealth", { id, database, body: {} }),
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
    queryKey: queryKeys.maintenanceJobs(database, id),
    queryFn: () => call("ListMaintenanceJobs", { id, query: { limit: "20" }, database, body: {} }),
    refetchInterval: (query) => (query.state.data?.jobs.some((j) => j.status === "running") ? POLL_MS : false),
    enabled,
  });

/** Every table's maintenance jobs, newest first, filtered and paged; polled while one of those shown runs. */
export const useAllMaintenanceJobs = (database: string, filter: Record<string, string>) =>
  useInfiniteQuery({
    queryKey: queryKeys.allJobs(database, filter),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      call("ListAllMaintenanceJobs", {
        database,
        query: { ...Object.fromEntries(Object.entries(filter).filter(([, v]) => v)), limit: "50", page_token: pageParam },
      }),
    getNextPageParam: (last) => last.page_token,
    refetchInterval: (query) => (query.state.data?.pages.some((p) => p.jobs.some((j) => j.status === "running")) ? POLL_MS : false),
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for a job to end, asking for it by its id. */
async function jobEnded(database: string, id: Id, jobId: string): Promise<void> {
  for (;;) {
    const { job } = await call("DescribeMaintenanceJob", { id, database, body: { job_id: jobId } });
    if (job.status !== "running") return;
    await sleep(POLL_MS);
  }
}

/**
 * Starting a job: the health and job list then poll until it has finished, and the table's other views refresh, once
 * when it starts and once when it has ended. The end is followed by the job's id: a short job can end between two
 * looks at the table's health, which then never shows it running, and the views would keep what they read before it.
 */
function useStartJob<I>(database: string, id: Id, start: (input: I) => Promise<AnswerOf<"CompactTable">>) {
  const client = useQueryClient();
  const refresh = () => client.invalidateQueries({ queryKey: queryKeys.table(database, id) });
  return useMutation({
    mutationFn: start,
    onSuccess: ({ job }) => {
      void refresh();
      if (job.status === "running") void jobEnded(database, id, job.job_id).then(refresh, refresh);
    },
  });
}

export const useCompact = (database: string, id: Id) => useStartJob(database, id, () => call("CompactTable", { id, database, body: {} }));

/** CleanupTableVersions answers the plan for a dry run, and the job it started otherwise. */
const isPlan = (answer: AnswerOf<"CleanupTableVersions">): answer is CleanupPlan => "versions" in answer;

export const useCleanup = (database: string, id: Id) =>
  useStartJob(database, id, async (olderThanSeconds: number) => {
    const answer = await call("CleanupTableVersions", { id, database, body: { older_than_seconds: olderThanSeconds } });
    if (isPlan(answer)) throw new Error("the cleanup answered a plan where it was asked to start a job");
    return answer;
  });

export const useCleanupPreview = (database: string, id: Id) =>
  useMutation({
    mutationFn: async (olderThanSeconds: number) => {
      const answer = await call("CleanupTableVersions", { id, database, body: { older_than_seconds: olderThanSeconds, dry_run: true } });
      if (!isPlan(answer)) throw new Error("the cleanup preview started a job where it was asked for a plan");
      return answer;
    },
  });
