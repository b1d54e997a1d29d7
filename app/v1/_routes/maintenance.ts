/** The maintenance routes: a table's health, compaction and version cleanup as jobs, the jobs, and all tables' jobs. */
import { invalidInput } from "@/server/errors";
import { identifierIn, json, pageLimit, route } from "@/server/http/route";
import { isJobId } from "@/server/maintenance/jobs";
import { DELIMITER } from "@/lib/identifiers";
import { cleanupPreview, jobsAcross, maintenanceOverview, startMaintenance, tableJob, tableJobs } from "@/server/maintenance/table-maintenance";

import { maintenanceOperations as ops } from "@/lib/contract/operations/maintenance";

const DAY_S = 24 * 60 * 60;

export const maintenanceRoutes = [
  route({
    ...ops.DescribeTableHealth,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, tables }) => json(await maintenanceOverview(tables, id)),
  }),
  route({
    ...ops.CompactTable,
    access: { need: "admin", on: "table" },
    handler: async ({ id, tables, principal, query }) => {
      const job = await startMaintenance(tables, id, { kind: "compact", principal, wait: query.wait ?? false });
      return json({ job }, job.status === "running" ? 202 : 200);
    },
  }),
  route({
    ...ops.CleanupTableVersions,
    access: { need: "admin", on: "table" },
    handler: async ({ id, tables, principal, query, body }) => {
      const olderThan = new Date(Date.now() - (body.older_than_seconds ?? 7 * DAY_S) * 1000);
      if (body.dry_run) return json(await cleanupPreview(tables, id, olderThan));
      const job = await startMaintenance(tables, id, { kind: "cleanup", principal, wait: query.wait ?? false, olderThan });
      return json({ job }, job.status === "running" ? 202 : 200);
    },
  }),
  route({
    ...ops.ListMaintenanceJobs,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, tables, query }) => json({ jobs: await tableJobs(tables, id, pageLimit(query.limit)) }),
  }),
  route({
    ...ops.ListAllMaintenanceJobs,
    access: { need: "global-admin" },
    handler: async ({ tables, catalog, query }) => {
      const after = query.page_token ?? null;
      if (after !== null && !isJobId(after)) throw invalidInput("page_token is not one a listing of jobs gave");
      const table = query.table ? identifierIn(query.table.split(DELIMITER), "table") : undefined;
      const { jobs, next } = await jobsAcross(tables, catalog, { status: query.status, kind: query.kind, table }, pageLimit(query.limit), after);
      return json({ jobs, page_token: next ?? undefined });
    },
  }),
  route({
    ...ops.DescribeMaintenanceJob,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, tables, body }) => json({ job: await tableJob(tables, id, body.job_id) }),
  }),
];
