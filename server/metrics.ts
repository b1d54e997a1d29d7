/**
 * The service's Prometheus metrics (GET /metrics). Each process counts its own; under `npm start` with several
 * workers, a scrape that reaches any worker asks the primary process for the sum over all of them (prom-client's
 * cluster aggregation), so one scrape of the port sees the whole service.
 */
import "server-only";
import cluster from "node:cluster";
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, register } from "prom-client";
import { askPrimary, hasPrimary } from "./peers/primary-call";

const PREFIX = "quiver_";

// Next may load this module more than once (one copy per route bundle); the metrics are made once per process.
const made = globalThis as typeof globalThis & { quiverMetrics?: ReturnType<typeof makeMetrics> };

function makeMetrics() {
  collectDefaultMetrics({ prefix: PREFIX });
  // Making one is what sets a cluster worker to answer the primary's requests for this process's metrics.
  if (cluster.isWorker) new AggregatorRegistry();
  return {
    requests: new Counter({
      name: `${PREFIX}http_requests_total`,
      help: "API requests answered, by operation and status",
      labelNames: ["operation", "status"],
    }),
    duration: new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: "Time to answer an API request, by operation",
      labelNames: ["operation"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    }),
    rowsWritten: new Counter({
      name: `${PREFIX}rows_written_total`,
      help: "Rows written by Arrow writes (insert, create, merge-insert), by operation",
      labelNames: ["operation"],
    }),
    bytesReceived: new Counter({ name: `${PREFIX}arrow_body_bytes_total`, help: "Bytes of Arrow request bodies received" }),
    heavyRunning: new Gauge({ name: `${PREFIX}heavy_requests_running`, help: "Heavy requests (Arrow writes, queries, rewrites) running now" }),
    heavyQueued: new Gauge({ name: `${PREFIX}heavy_requests_queued`, help: "Heavy requests waiting for a turn now" }),
    maintainer: new Gauge({
      name: `${PREFIX}maintainer`,
      help: "1 while this instance is the root's maintainer (it runs the automatic maintenance passes), else 0",
    }),
    catalogCommitter: new Gauge({
      name: `${PREFIX}catalog_committer`,
      help: "1 while this instance holds the lease of the catalog's committer (it commits the table rows of every instance of the root), else 0",
    }),
    catalogRows: new Counter({
      name: `${PREFIX}catalog_rows_total`,
      help: "Table rows of the catalog this instance had committed, by route: committed (by this instance, its own and those received), received (from another instance, to commit), handed (committed by the instance that holds the catalog's committer lease), fallback (committed here after that instance could not be reached or declined)",
      labelNames: ["route"],
    }),
    writeTurns: new Counter({
      name: `${PREFIX}write_turns_total`,
      help: "Write turns on a table that this worker of npm start was given by the primary, by which worker held the table's turn last: this_worker, or another_worker (whose commits this one then builds on)",
      labelNames: ["last_held_by"],
    }),
    refused: new Counter({
      name: `${PREFIX}requests_refused_total`,
      help: "Requests answered 503 (busy, store or engine unavailable, timeout), by operation",
      labelNames: ["operation"],
    }),
    conflicts: new Counter({
      name: `${PREFIX}commit_conflicts_total`,
      help: "Writes that lost a commit race and answered 409 ConcurrentModification, by operation",
      labelNames: ["operation"],
    }),
    repeats: new Counter({
      name: `${PREFIX}write_repeats_total`,
      help: "Write requests that found an earlier attempt of theirs in the write ledger, by operation and outcome (replayed: answered with its answer; decided: with the outcome the table's history gave; in_progress, undecidable, refused: answered 409, 409, 400)",
      labelNames: ["operation", "outcome"],
    }),
    commits: new Counter({
      name: `${PREFIX}commits_total`,
      help: "Table versions committed through the API, by operation and whether the table's versions are managed by the catalog",
      labelNames: ["operation", "managed"],
    }),
    authFailures: new Counter({
      name: `${PREFIX}auth_failures_total`,
      help: "Requests refused for their credentials (401) or their rights (403)",
      labelNames: ["status"],
    }),
    cacheLookups: new Counter({
      name: `${PREFIX}cache_lookups_total`,
      help: "Lookups in the server's caches, by cache and result (hit or miss)",
      labelNames: ["cache", "result"],
    }),
    maintenanceRuns: new Counter({
      name: `${PREFIX}maintenance_runs_total`,
      help: "Maintenance jobs finished, by kind (compact, cleanup), trigger (request, policy) and outcome",
      labelNames: ["kind", "trigger", "outcome"],
    }),
    storeRequests: new Counter({
      name: `${PREFIX}store_requests_total`,
      help: "Requests Quiver's own code made to the data root's store (the engine's are not counted), by kind (read, write, list, delete) and outcome (ok, error: the store failed or could not be reached)",
      labelNames: ["kind", "outcome"],
    }),
    mapLayouts: new Counter({
      name: `${PREFIX}map_layouts_total`,
      help: "Table maps laid out (not found in the root's cache), by stage (first: principal components; refined: UMAP; placed: a version's rows placed onto another's layout)",
      labelNames: ["stage"],
    }),
    maintenanceRetries: new Counter({
      name: `${PREFIX}maintenance_conflicts_retried_total`,
      help: "Compactions run again because a user's write committed first",
    }),
  };
}

export const metrics = (made.quiverMetrics ??= makeMetrics());

export const countLookup = (cache: string, hit: boolean) => metrics.cacheLookups.inc({ cache, result: hit ? "hit" : "miss" });

/** The metrics in Prometheus's text format: this process's, or under workers the sum over all of them. */
export async function metricsText(): Promise<{ text: string; contentType: string }> {
  const text = hasPrimary() ? await askPrimary<string>("quiver:metrics", {}, 10_000) : await register.metrics();
  return { text, contentType: register.contentType };
}
