/** The operations page's answer: the service's recent figures over all its instances (or one), and the instances. */
import { z } from "zod";

const chartSeries = z.object({
  name: z.string(),
  values: z.array(z.number().nullable()).describe("One value per time of `times`; null where there is nothing to show (no lookups, no requests)"),
});

export const operationsChart = z.object({
  id: z.string(),
  title: z.string(),
  unit: z.string(),
  series: z.array(chartSeries),
});

export const operationsTotals = z.object({
  requests: z.number(),
  requests_per_second: z.number(),
  errors: z.number().describe("Requests answered 4xx or 5xx"),
  refused: z.number().describe("Requests answered 503 (busy, store or engine unavailable, timeout)"),
  p99_ms: z.number().nullable(),
  conflicts: z.number(),
  repeats: z.number(),
  store_requests: z.number(),
  store_errors: z.number(),
  rows_written: z.number(),
  bytes_received: z.number(),
  maintenance_succeeded: z.number(),
  maintenance_failed: z.number(),
});

const leaseHolder = z
  .object({ process: z.string(), instance: z.string().nullable().describe("The instance the process belongs to, when it is in the roster") })
  .nullable();

export const operationsProcess = z.object({
  id: z.string(),
  pid: z.number().int(),
  state: z.enum(["up", "unreachable", "gone"]).describe("up: it answered now; unreachable: it did not, but wrote its record within two touches; gone: neither"),
  last_seen: z.string(),
  maintainer: z.boolean(),
  catalog_committer: z.boolean(),
  error: z.string().nullable().describe("Why it could not be asked, when it could not"),
});

export const operationsInstance = z.object({
  id: z.string().describe("The `npm start` (or lone server process) whose worker processes these are"),
  machine: z.string(),
  started_at: z.string(),
  version: z.string(),
  this_instance: z.boolean().describe("The instance that answered this request"),
  requests: z.number(),
  errors: z.number(),
  p99_ms: z.number().nullable(),
  processes: z.array(operationsProcess),
});

export const policyReport = z.object({
  enabled: z.boolean().describe("Whether the service's policy maintains tables; a table's own properties may turn it on or off for that table"),
  interval_seconds: z.number(),
  next_pass_at: z.string().nullable(),
  last_pass: z
    .object({
      started_at: z.string(),
      finished_at: z.string().nullable(),
      tables_looked_at: z.number().int(),
      due: z.array(
        z.object({ database: z.string(), table: z.array(z.string()), kind: z.enum(["compact", "cleanup"]), reason: z.string(), failed: z.string().nullable() }),
      ),
    })
    .nullable(),
});

export const requestActivity = z.object({
  request_id: z.string(),
  operation: z.string(),
  database: z.string(),
  target: z.string().nullable().describe("The table or namespace the request names, parts joined by $"),
  principal: z.string().nullable(),
  state: z.enum(["queued", "running", "succeeded", "failed"]).describe("queued: waiting for a turn among the heavy requests"),
  started_at: z.string(),
  duration_ms: z.number().nullable().describe("How long it ran, or has run so far"),
  status: z.number().int().nullable(),
  error: z.string().nullable(),
});

const requestActivityOf = requestActivity.extend({ process: z.string(), instance: z.string() });

export const operationsOverview = z.object({
  now: z.string(),
  window_seconds: z.number(),
  step_seconds: z.number().describe("Each point of the charts covers this many seconds before its time"),
  instance: z.string().nullable().describe("The one instance the charts and totals are of; null: all"),
  times: z.array(z.number()).describe("Each point's end, in milliseconds since the epoch"),
  charts: z.array(operationsChart),
  totals: operationsTotals,
  instances: z.array(operationsInstance),
  maintainer: leaseHolder,
  catalog_committer: leaseHolder,
  policy: policyReport
    .nullable()
    .describe(
      "The automatic maintenance policy, as its maintainer reports it (to a metrics key, without the tables found due); null when no maintainer answered",
    ),
  requests: z
    .object({
      running: z
        .array(requestActivityOf)
        .describe("Heavy requests (Arrow writes, queries, index builds, column rewrites) waiting or running now, longest first"),
      finished: z
        .array(requestActivityOf)
        .describe("Heavy requests that took at least a second or failed with a 5xx, newest first (each process keeps its last 50)"),
    })
    .describe("Of the instances in view; none for a key with the metrics role, which sees no table"),
});

export type OperationsOverview = z.infer<typeof operationsOverview>;
export type OperationsChart = z.infer<typeof operationsChart>;
export type OperationsTotals = z.infer<typeof operationsTotals>;
export type PolicyReport = z.infer<typeof policyReport>;
export type RequestActivity = z.infer<typeof requestActivity>;
