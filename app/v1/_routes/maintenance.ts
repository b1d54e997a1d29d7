import { z } from "zod";
import { json, pageLimit, qBool, qInt, route } from "@/server/http/route";
import { cleanupPreview, maintenanceOverview, startMaintenance, tableJob, tableJobs } from "@/server/maintenance/table-maintenance";
import { cleanupPlanAnswer, maintenanceJobAnswer, maintenanceJobsAnswer, tableHealthAnswer } from "@/lib/contract/maintenance";
import { delimiterQuery, requestBase } from "@/lib/contract/common";

const DAY_S = 24 * 60 * 60;

const waitQuery = { wait: qBool("Answer when the job has finished, instead of as soon as it started") };

export const maintenanceRoutes = [
  route({
    operationId: "DescribeTableHealth",
    summary: "Quiver: a table's health (fragments, small ones, deleted rows, versions, unindexed rows) and its last maintenance",
    group: "Maintenance",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/maintenance/health",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: tableHealthAnswer,
    handler: async ({ id, tables }) => json(await maintenanceOverview(tables, id)),
  }),
  route({
    operationId: "CompactTable",
    summary: "Quiver: compact a table's files, materialising deletions and indexing new rows, as a job",
    group: "Maintenance",
    methods: ["POST"],
    path: "/v1/table/{id}/maintenance/compact",
    access: { need: "admin", on: "table" },
    query: z.object({ ...delimiterQuery, ...waitQuery }),
    body: { kind: "json", schema: z.object(requestBase) },
    response: maintenanceJobAnswer,
    handler: async ({ id, tables, principal, query }) => {
      const job = await startMaintenance(tables, id, { kind: "compact", principal, wait: query.wait ?? false });
      return json({ job }, job.status === "running" ? 202 : 200);
    },
  }),
  route({
    operationId: "CleanupTableVersions",
    summary: "Quiver: remove versions older than a duration and the files only they use, keeping tagged versions and the latest; dry_run lists what would go",
    group: "Maintenance",
    methods: ["POST"],
    path: "/v1/table/{id}/maintenance/cleanup",
    access: { need: "admin", on: "table" },
    query: z.object({ ...delimiterQuery, ...waitQuery }),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        older_than_seconds: z.number().int().min(0).nullish().describe("Versions made longer ago than this go (default 7 days)"),
        dry_run: z.boolean().nullish().describe("Answer what would go, and remove nothing"),
      }),
    },
    response: z.union([maintenanceJobAnswer, cleanupPlanAnswer]),
    handler: async ({ id, tables, principal, query, body }) => {
      const olderThan = new Date(Date.now() - (body.older_than_seconds ?? 7 * DAY_S) * 1000);
      if (body.dry_run) return json(await cleanupPreview(tables, id, olderThan));
      const job = await startMaintenance(tables, id, { kind: "cleanup", principal, wait: query.wait ?? false, olderThan });
      return json({ job }, job.status === "running" ? 202 : 200);
    },
  }),
  route({
    operationId: "ListMaintenanceJobs",
    summary: "Quiver: a table's maintenance jobs, newest first: what each did, or is doing",
    group: "Maintenance",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/maintenance/jobs/list",
    access: { need: "viewer", on: "table" },
    query: z.object({ ...delimiterQuery, limit: qInt("How many, newest first (default 100)", 1) }),
    body: { kind: "json", schema: z.object(requestBase) },
    response: maintenanceJobsAnswer,
    handler: async ({ id, tables, query }) => json({ jobs: await tableJobs(tables, id, pageLimit(query.limit)) }),
  }),
  route({
    operationId: "DescribeMaintenanceJob",
    summary: "Quiver: one maintenance job of a table: its status, progress and result",
    group: "Maintenance",
    methods: ["POST"],
    path: "/v1/table/{id}/maintenance/jobs/describe",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, job_id: z.string().min(1) }) },
    response: maintenanceJobAnswer,
    handler: async ({ id, tables, body }) => json({ job: await tableJob(tables, id, body.job_id) }),
  }),
];
