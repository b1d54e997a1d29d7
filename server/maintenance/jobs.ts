/**
 * Maintenance runs as jobs: a job is started by a request (or by the automatic policy), runs in the background of the
 * instance that started it, and outlives the request. Its record lives in the data root, so any instance answers
 * for it: `.quiver/maintenance/<table location>/jobs/<id>.json`, written only by the instance running it, which
 * refreshes it while it works. A record left "running" and not refreshed for a while belongs to an instance that
 * stopped: it is answered as abandoned.
 */
import "server-only";
import { log } from "@/server/log";
import { randomBytes } from "node:crypto";
import type { z } from "zod";
import type { maintenanceJob } from "@/lib/contract/maintenance";
import type { TableEntry } from "@/server/catalog/catalog-table";
import { QuiverError } from "@/server/errors";
import { failurepoint } from "@/server/failpoints";
import { metrics } from "@/server/metrics";
import { Lease } from "@/server/storage/lease";
import { cleanupVersions, compactTable } from "./operations";
import { recordCompaction } from "@/server/tables/version-authors";
import type { Tables } from "@/server/tables/tables";

export type MaintenanceJob = z.output<typeof maintenanceJob>;
type JobKind = MaintenanceJob["kind"];

const HEARTBEAT_MS = 5_000;
const ABANDONED_AFTER_MS = 60_000;

const tableLeaseMs = () => Number(process.env.QUIVER_MAINTENANCE_LEASE_MS) || 60_000;
const tableLeasePrefix = (location: string) => `.quiver/maintenance/${location}/lease/`;

/** The job that holds a table's maintenance now, or null. */
export const maintenanceHolder = (tables: Tables, entry: TableEntry) => Lease.holderOf(tables.records, tableLeasePrefix(entry.location), tableLeaseMs());

const jobsPrefix = (location: string) => `.quiver/maintenance/${location}/jobs/`;

/** A job's id: its start time first, so that a listing is in time order, then a random part. */
export const isJobId = (id: string) => /^\d{14}-[0-9a-f]{8}$/.test(id);

export interface JobRequest {
  kind: JobKind;
  trigger: MaintenanceJob["trigger"];
  requestedBy: string;
  /** For cleanup: versions made before this time go. */
  olderThan?: Date;
  /** Why the policy started it. */
  reason?: string;
}

/** Starts a job on the table; refused (409) while another job holds the table's maintenance. */
export async function startJob(
  tables: Tables,
  entry: TableEntry,
  request: JobRequest,
): Promise<{ job: MaintenanceJob; done: Promise<{ job: MaintenanceJob; failure: QuiverError | null }> }> {
  const store = tables.records;
  // Named by time first, so that a listing is in time order.
  const jobId = `${Date.now().toString().padStart(14, "0")}-${randomBytes(4).toString("hex")}`;
  const lease = await Lease.acquire(store, tableLeasePrefix(entry.location), jobId, tableLeaseMs());
  if (!lease) {
    const holder = await maintenanceHolder(tables, entry);
    throw new QuiverError("ConcurrentModification", `maintenance of table '${entry.objectId}' is already running${holder ? ` (job ${holder})` : ""}`);
  }
  const now = new Date().toISOString();
  const job: MaintenanceJob = {
    job_id: jobId,
    table: entry.id,
    kind: request.kind,
    trigger: request.trigger,
    requested_by: request.requestedBy,
    status: "running",
    progress: null,
    parameters: {
      ...(request.olderThan ? { older_than: request.olderThan.toISOString() } : {}),
      ...(request.reason ? { reason: request.reason } : {}),
    },
    created_at: now,
    updated_at: now,
    finished_at: null,
    compaction: null,
    cleanup: null,
    error: null,
  };
  const key = `${jobsPrefix(entry.location)}${jobId}.json`;
  const save = () => store.put(key, JSON.stringify({ ...job, updated_at: new Date().toISOString() }));
  try {
    await save();
  } catch (err) {
    await lease.release();
    throw err;
  }
  const heartbeat = setInterval(() => void save().catch(() => undefined), HEARTBEAT_MS);
  heartbeat.unref();
  const done = (async () => {
    let failure: QuiverError | null = null;
    try {
      failurepoint(
        "fail-maintenance",
        entry.objectId,
        () => new QuiverError("ServiceUnavailable", `the store failed during the ${request.kind} (a failure point of the tests)`),
      );
      if (request.kind === "compact") {
        job.compaction = await compactTable(tables, entry, () => metrics.maintenanceRetries.inc());
        const { version_before, version_after } = job.compaction;
        await recordCompaction(tables, entry, version_before, version_after, { id: jobId, requestedBy: request.requestedBy }).catch((err: unknown) =>
          log.warn({ err, job: jobId }, "recording the compaction's versions as the job's failed"),
        );
      } else {
        job.cleanup = await cleanupVersions(tables, entry, request.olderThan ?? new Date(), (done, total) => (job.progress = { done, total }));
      }
      job.status = "succeeded";
    } catch (err) {
      job.status = "failed";
      failure = err instanceof QuiverError ? err : new QuiverError("Internal", `${request.kind} failed`);
      if (!(err instanceof QuiverError)) log.error({ err, job: jobId, kind: request.kind, table: entry.objectId }, "maintenance job failed");
      job.error = { code: failure.code, message: failure.message };
    } finally {
      clearInterval(heartbeat);
      job.finished_at = new Date().toISOString();
      metrics.maintenanceRuns.inc({ kind: request.kind, trigger: request.trigger, outcome: job.status });
      await save().catch((err: unknown) => log.error({ err, job: jobId }, "maintenance job: its record could not be saved"));
      await lease.release();
    }
    return { job: { ...job }, failure };
  })();
  return { job: { ...job }, done };
}

function answered(job: MaintenanceJob): MaintenanceJob {
  return job.status === "running" && Date.now() - Date.parse(job.updated_at) > ABANDONED_AFTER_MS ? { ...job, status: "abandoned" } : job;
}

export async function jobOf(tables: Tables, entry: TableEntry, jobId: string): Promise<MaintenanceJob> {
  const missing = () => new QuiverError("TransactionNotFound", `table '${entry.objectId}' has no maintenance job '${jobId}'`);
  if (!isJobId(jobId)) throw missing();
  const body = await tables.records.get(`${jobsPrefix(entry.location)}${jobId}.json`);
  if (!body) throw missing();
  return answered(JSON.parse(body.toString("utf8")) as MaintenanceJob);
}

/** The table's maintenance jobs, newest first. */
export async function jobsOf(tables: Tables, entry: TableEntry, limit: number): Promise<MaintenanceJob[]> {
  return (await jobsAcrossTables(tables, { location: entry.location }, limit, null, () => null)).jobs;
}

const JOB_KEY = /^\.quiver\/maintenance\/([^/]+)\/jobs\/([^/]+)\.json$/;
/** How many records are read at once while a filter skips those it does not keep. */
const READ_AHEAD = 32;

export interface JobsFilter {
  status?: MaintenanceJob["status"];
  kind?: JobKind;
  /** The table's location: its jobs only. */
  location?: string;
}

/**
 * The maintenance jobs of every table of the database, newest first, from one listing of their records (whatever the
 * number of tables) and a read of each record looked at: those the filter keeps, up to `limit`, after the job `after`
 * (a page's last). `tableAt` names a location's table now (it may have been renamed since the job), or null.
 */
export async function jobsAcrossTables(
  tables: Tables,
  filter: JobsFilter,
  limit: number,
  after: string | null,
  tableAt: (location: string) => string[] | null,
): Promise<{ jobs: MaintenanceJob[]; next: string | null }> {
  const listed = (await tables.records.list(filter.location ? jobsPrefix(filter.location) : ".quiver/maintenance/"))
    .map((key) => ({ key, match: JOB_KEY.exec(key) }))
    .filter((k): k is { key: string; match: RegExpExecArray } => k.match !== null && isJobId(k.match[2]))
    .map(({ key, match }) => ({ key, location: match[1], id: match[2] }))
    .filter((job) => after === null || job.id < after)
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const jobs: MaintenanceJob[] = [];
  let looked = 0;
  while (looked < listed.length && jobs.length < limit) {
    const batch = listed.slice(looked, looked + (filter.status || filter.kind ? READ_AHEAD : limit - jobs.length));
    looked += batch.length;
    const read = await Promise.all(batch.map(async (job) => ({ job, body: await tables.records.get(job.key) })));
    for (const { job, body } of read) {
      if (!body || jobs.length >= limit) continue;
      const record = answered(JSON.parse(body.toString("utf8")) as MaintenanceJob);
      if ((filter.status && record.status !== filter.status) || (filter.kind && record.kind !== filter.kind)) continue;
      jobs.push({ ...record, table: tableAt(job.location) ?? record.table });
    }
  }
  const last = jobs.at(-1);
  return { jobs, next: jobs.length === limit && last && listed.some((job) => job.id < last.job_id) ? last.job_id : null };
}
