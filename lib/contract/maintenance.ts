/**
 * The maintenance operations' answers: a table's health, what compaction and version cleanup did or would do, and
 * maintenance jobs. Route handlers are held to these schemas and the console reads its types from them.
 */
import { z } from "zod";
import { context, pageToken } from "./common";

export const tableHealth = z.object({
  version: z.number().int(),
  rows: z.number().int(),
  fragments: z.number().int(),
  small_fragments: z.number().int().describe("Fragments with fewer rows than compaction aims for (1,048,576)"),
  deleted_rows: z.number().int().describe("Rows deleted but still in data files (compaction rewrites them away)"),
  data_bytes: z.number().int(),
  versions: z.number().int(),
  oldest_version_time: z.string().nullable(),
  indices: z.number().int(),
  unindexed_rows: z.number().int().describe("Rows added since an index was built, summed over the indices"),
});

export const compactionResult = z.object({
  version_before: z.number().int(),
  version_after: z.number().int(),
  fragments_before: z.number().int(),
  fragments_after: z.number().int(),
  small_fragments_before: z.number().int(),
  small_fragments_after: z.number().int(),
  deleted_rows_before: z.number().int(),
  deleted_rows_after: z.number().int(),
  files_removed: z.number().int(),
  files_added: z.number().int(),
  unindexed_rows_before: z.number().int(),
  unindexed_rows_after: z.number().int(),
  conflicts_retried: z.number().int().describe("Times a user's write landed first and compaction ran again"),
});

export const cleanupPlan = z.object({
  older_than: z.string().describe("Versions made before this time go, unless kept"),
  versions: z.array(z.object({ version: z.number().int(), timestamp: z.string() })).describe("The versions that go"),
  kept: z.object({
    latest: z.number().int(),
    tagged: z.array(z.object({ tag: z.string(), version: z.number().int() })).describe("Old versions a tag keeps"),
    branch_parents: z.array(z.object({ branch: z.string(), version: z.number().int() })).describe("Old versions a branch was made from"),
    newer: z.number().int().describe("Versions made after older_than"),
  }),
  files: z.number().int().describe("Files removed: manifests, data, deletion, transaction and index files no kept version uses"),
  bytes: z.number().int(),
});

export const cleanupResult = cleanupPlan.extend({ versions_removed: z.number().int(), bytes_removed: z.number().int() });

export const JOB_KINDS = ["compact", "cleanup"] as const;
export const JOB_STATUSES = ["running", "succeeded", "failed", "abandoned"] as const;

export const maintenanceJob = z.object({
  job_id: z.string(),
  table: z.array(z.string()),
  kind: z.enum(JOB_KINDS),
  trigger: z.enum(["request", "policy"]).describe("Asked for by a caller, or started by the automatic policy"),
  requested_by: z.string(),
  status: z.enum(JOB_STATUSES).describe("abandoned: the instance running it stopped before it finished"),
  progress: z.object({ done: z.number().int(), total: z.number().int() }).nullable(),
  parameters: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  compaction: compactionResult.nullable(),
  cleanup: cleanupResult.nullable(),
  error: z.object({ code: z.number().int(), message: z.string() }).nullable(),
});

export const maintenanceJobAnswer = z.object({ job: maintenanceJob, context });
export const maintenanceJobsAnswer = z.object({ jobs: z.array(maintenanceJob), context });
export const maintenanceJobsPage = z.object({ jobs: z.array(maintenanceJob), page_token: pageToken, context });
export const maintenancePolicy = z.object({
  enabled: z.boolean(),
  compact_small_fragments: z.number().int(),
  compact_deleted_fraction: z.number(),
  retention_seconds: z.number().int(),
  problems: z.array(z.string()).describe("Properties of the table or its namespaces that could not be read, and were ignored"),
});

export const tableHealthAnswer = tableHealth.extend({
  running_job: z.string().nullable(),
  last_job: maintenanceJob.nullable(),
  policy: maintenancePolicy.describe("The automatic maintenance policy for this table: the service's, overridden by namespace and table properties"),
  due: z.object({ compact: z.string().nullable().describe("Why the policy would compact now"), cleanup: z.boolean() }),
  context,
});
export const cleanupPlanAnswer = cleanupPlan.extend({ context });
