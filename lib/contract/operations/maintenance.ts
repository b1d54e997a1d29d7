/** Keeping a table fast: its health, compaction and version cleanup, as jobs. */
import { z } from "zod";
import { delimiterQuery, pageQuery, qBool, qInt, qString, requestBase } from "../common";
import { defineOperation } from "../operation";
import {
  JOB_KINDS,
  JOB_STATUSES,
  cleanupPlanAnswer,
  maintenanceJobAnswer,
  maintenanceJobsAnswer,
  maintenanceJobsPage,
  tableHealthAnswer,
} from "../maintenance";

const waitQuery = { wait: qBool("Answer when the job has finished, instead of as soon as it started") };

export const maintenanceOperations = {
  DescribeTableHealth: defineOperation({
    operationId: "DescribeTableHealth",
    summary: "Quiver: a table's health (fragments, small ones, deleted rows, versions, unindexed rows) and its last maintenance",
    group: "Maintenance",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/maintenance/health",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: tableHealthAnswer,
  }),
  CompactTable: defineOperation({
    operationId: "CompactTable",
    summary: "Quiver: compact a table's files, materialising deletions and indexing new rows, as a job",
    group: "Maintenance",
    methods: ["POST"],
    path: "/v1/table/{id}/maintenance/compact",
    query: z.object({ ...delimiterQuery, ...waitQuery }),
    body: { kind: "json", schema: z.object(requestBase) },
    response: maintenanceJobAnswer,
  }),
  CleanupTableVersions: defineOperation({
    operationId: "CleanupTableVersions",
    summary: "Quiver: remove versions older than a duration and the files only they use, keeping tagged versions and the latest; dry_run lists what would go",
    group: "Maintenance",
    methods: ["POST"],
    path: "/v1/table/{id}/maintenance/cleanup",
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
  }),
  ListMaintenanceJobs: defineOperation({
    operationId: "ListMaintenanceJobs",
    summary: "Quiver: a table's maintenance jobs, newest first: what each did, or is doing",
    group: "Maintenance",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/maintenance/jobs/list",
    query: z.object({ ...delimiterQuery, limit: qInt("How many, newest first (default 100)", 1) }),
    body: { kind: "json", schema: z.object(requestBase) },
    response: maintenanceJobsAnswer,
  }),
  ListAllMaintenanceJobs: defineOperation({
    operationId: "ListAllMaintenanceJobs",
    summary: "Quiver: the maintenance jobs of every table of the database, newest first, filtered and paged (administrators)",
    group: "Maintenance",
    methods: ["GET"],
    path: "/v1/admin/jobs",
    query: z.object({
      ...pageQuery,
      status: z.enum(JOB_STATUSES).optional().describe("Only jobs in this state"),
      kind: z.enum(JOB_KINDS).optional().describe("Only jobs of this kind"),
      table: qString("Only the jobs of this table: its identifier, parts joined by $"),
    }),
    response: maintenanceJobsPage,
  }),
  DescribeMaintenanceJob: defineOperation({
    operationId: "DescribeMaintenanceJob",
    summary: "Quiver: one maintenance job of a table: its status, progress and result",
    group: "Maintenance",
    methods: ["POST"],
    path: "/v1/table/{id}/maintenance/jobs/describe",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, job_id: z.string().min(1) }) },
    response: maintenanceJobAnswer,
  }),
};
