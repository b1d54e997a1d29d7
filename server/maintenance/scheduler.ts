/**
 * The automatic policy at work. One instance at a time is the maintainer: it holds a lease in the store
 * (`.quiver/maintainer/lease/`, slots of QUIVER_MAINTAINER_LEASE_MS, 20 s), which another instance takes over within
 * two slots of its holder stopping; every instance asks for it twice a slot, one conditional write each. Each
 * QUIVER_MAINTENANCE_INTERVAL_S the maintainer looks at the tables any instance noted as written since its last pass
 * (server/tables/written-tables.ts), and at a slice of all tables so that every table is looked at once per
 * QUIVER_MAINTENANCE_SWEEP (a day) for writers that bypass Quiver: one listing of its versions, read further only when
 * a version is newer than a sweep or older than the retention. It runs the maintenance a table is due for, one table
 * after another; a table's own lease keeps a job started by a request and one of the policy's apart. About once an
 * hour it also deletes the write ledger's records that outlived the idempotency window, the roster's records of
 * processes that stopped (server/peers/roster.ts), and the tables' maps nobody opened within QUIVER_MAP_RETENTION
 * (server/maps/map-retention.ts). At rest, the root costs the
 * maintainer one listing of notes per database per pass, and a table one listing per sweep.
 */
import "server-only";
import { log } from "@/server/log";
import type { TableEntry } from "@/server/catalog/catalog-table";
import { databaseFor, listDatabases } from "@/server/databases";
import { ConfigError } from "@/server/config-error";
import { QuiverError } from "@/server/errors";
import { INSTANCE } from "@/server/instance";
import { metrics } from "@/server/metrics";
import { parseDuration } from "@/lib/durations";
import { rootStore } from "@/server/storage/stores";
import { pruneRoster } from "@/server/operations/roster";
import { pruneMaps } from "@/server/maps/map-retention";
import { config } from "@/server/config";
import { WrittenTables } from "@/server/tables/written-tables";
import { startJob, type JobRequest, type MaintenanceJob } from "./jobs";
import { access } from "@/server/auth/access";
import type { AuditEntry } from "@/server/auth/audit";
import { formatIdentifier } from "@/lib/identifiers";

import { STATUS_BY_CODE, type ErrorCodeValue } from "@/lib/contract/errors";
import { Candidacy, Lease } from "@/server/storage/lease";
import type { PolicyReport } from "@/lib/contract/operations-overview";
import { manifestHealth, planCleanup, type TableHealth } from "./operations";
import { cleanupDue, compactionDue, servicePolicy, tablePolicy, type MaintenancePolicy } from "./policy";
import type { Tables } from "@/server/tables/tables";

export const POLICY_PRINCIPAL = "quiver:policy";

const intervalMs = () => (Number(process.env.QUIVER_MAINTENANCE_INTERVAL_S) || 300) * 1000;
const maintainerSlotMs = () => Number(process.env.QUIVER_MAINTAINER_LEASE_MS) || 20_000;
const MAINTAINER_LEASE = ".quiver/maintainer/lease/";
const LEDGER_SWEEP_MS = 3_600_000;

/** How long the slow sweep takes to look at every table once (QUIVER_MAINTENANCE_SWEEP). */
export function sweepMs(): number {
  const raw = process.env.QUIVER_MAINTENANCE_SWEEP;
  if (raw === undefined || raw === "") return 24 * 3_600_000;
  const ms = parseDuration(raw);
  if (ms === null) throw new ConfigError(`QUIVER_MAINTENANCE_SWEEP must be a duration such as 6h or 24h, got '${raw}'`);
  return ms;
}

/** Deletes the write ledger's expired records in every database. */
export async function sweepLedgers(): Promise<number> {
  let swept = 0;
  for (const database of await listDatabases()) swept += await (await databaseFor(database)).tables.ledger.sweep();
  return swept;
}

/** Deletes the maps nobody opened within QUIVER_MAP_RETENTION in every database. */
async function pruneUnopenedMaps(): Promise<number> {
  let pruned = 0;
  for (const database of await listDatabases()) pruned += await pruneMaps((await databaseFor(database)).tables.records, config.mapRetentionMs);
  return pruned;
}

/** The process that holds the maintainer's lease now, or null. */
export const maintainerHolder = () => Lease.holderOf(rootStore(), MAINTAINER_LEASE, maintainerSlotMs());

/** What the maintainer did and will do, for the operations page: kept by this process while it is the maintainer. */
interface PolicyState {
  maintainer: boolean;
  enabled: boolean;
  nextPassAt: number | null;
  lastPass: NonNullable<PolicyReport["last_pass"]> | null;
}
// One per process, though Next may load this module once per bundle: the page asks the copy a route loaded.
const policyState = ((globalThis as typeof globalThis & { quiverPolicy?: PolicyState }).quiverPolicy ??= {
  maintainer: false,
  enabled: false,
  nextPassAt: null,
  lastPass: null,
});

/** The policy as this process sees it, or null when it is not the maintainer. */
export function policyReport(): PolicyReport | null {
  if (!policyState.maintainer) return null;
  return {
    enabled: policyState.enabled,
    interval_seconds: intervalMs() / 1000,
    next_pass_at: policyState.nextPassAt === null ? null : new Date(policyState.nextPassAt).toISOString(),
    last_pass: policyState.lastPass,
  };
}

/** Checks the service-wide policy (a setting that cannot be read stops the server), and competes for the maintainer's lease. */
export function startMaintenancePolicy(): void {
  const { policy, problems } = servicePolicy();
  if (problems.length) throw new ConfigError(problems.join("; "));
  policyState.enabled = policy.enabled;
  const agenda = new Agenda(sweepMs());
  let running = false;
  let ledgerSwept = Date.now() - LEDGER_SWEEP_MS * Math.random();

  const lease = new Candidacy(rootStore(), MAINTAINER_LEASE, INSTANCE, maintainerSlotMs(), (holds) => {
    log.info(holds ? "this instance is now the maintainer: it runs the automatic maintenance passes" : "this instance is no longer the maintainer");
    metrics.maintainer.set(holds ? 1 : 0);
    policyState.maintainer = holds;
  });
  const pass = async () => {
    if (running || !lease.holds) return;
    running = true;
    const lastPass = { started_at: new Date().toISOString(), finished_at: null as string | null, tables_looked_at: 0, due: [] };
    policyState.lastPass = lastPass;
    try {
      await maintenancePass(policy, agenda, lastPass);
      lastPass.finished_at = new Date().toISOString();
      if (Date.now() - ledgerSwept >= LEDGER_SWEEP_MS) {
        ledgerSwept = Date.now();
        const swept = await sweepLedgers();
        if (swept > 0) log.info({ swept }, "deleted the write ledger's records older than the idempotency window");
        const gone = await pruneRoster(rootStore());
        if (gone > 0) log.info({ gone }, "deleted the roster's records of processes that stopped");
        const maps = await pruneUnopenedMaps();
        if (maps > 0) log.info({ maps }, "deleted the maps nobody opened within QUIVER_MAP_RETENTION");
      }
    } catch (err) {
      log.error({ err }, "maintenance policy pass failed");
    } finally {
      running = false;
    }
  };
  // A new maintainer starts its first pass within an interval, at an offset of its own.
  const offset = intervalMs() * (0.5 + Math.random() / 2);
  policyState.nextPassAt = Date.now() + offset;
  const first = setTimeout(() => {
    const every = () => {
      policyState.nextPassAt = Date.now() + intervalMs();
      void pass();
    };
    every();
    setInterval(every, intervalMs()).unref();
  }, offset);
  first.unref();
}

/**
 * What the maintainer keeps between passes: which tables the slow sweep looks at next (the next slice of each
 * database's tables, in name order, as much of it as the time since the last pass owes, so that every table comes
 * once per sweep), and when a table it looked at has versions coming past the retention (its cleanup is then due
 * without a new write). A new maintainer starts with none of it: the sweep covers what it did not see.
 */
class Agenda {
  private readonly sweep = new Map<string, { at: number; owed: number; last: number }>();
  private readonly cleanups = new Map<string, Map<string, number>>();

  constructor(readonly sweepMs: number) {}

  swept(database: string, entries: TableEntry[]): TableEntry[] {
    if (entries.length === 0) return [];
    const sorted = [...entries].sort((a, b) => (a.objectId < b.objectId ? -1 : a.objectId > b.objectId ? 1 : 0));
    const now = Date.now();
    const state = this.sweep.get(database) ?? { at: Math.floor(Math.random() * sorted.length), owed: 0, last: now - intervalMs() };
    state.owed += (sorted.length * (now - state.last)) / this.sweepMs;
    state.last = now;
    const size = Math.min(sorted.length, Math.floor(state.owed));
    state.owed -= size;
    const start = state.at % sorted.length;
    state.at = start + size;
    this.sweep.set(database, state);
    return Array.from({ length: size }, (_, i) => sorted[(start + i) % sorted.length]);
  }

  /** The tables whose next cleanup has come. */
  cleanupsDue(database: string): Set<string> {
    const due = new Set<string>();
    for (const [location, at] of this.cleanups.get(database) ?? []) if (at <= Date.now()) due.add(location);
    return due;
  }

  /** After a look at a table: when its oldest version comes past the retention (none while it has one version). */
  looked(database: string, location: string, health: TableHealth | null, policy: MaintenancePolicy) {
    const table = this.cleanups.get(database) ?? new Map<string, number>();
    this.cleanups.set(database, table);
    const oldest = health?.oldest_version_time ? Date.parse(health.oldest_version_time) : NaN;
    if (!health || health.versions < 2 || Number.isNaN(oldest)) table.delete(location);
    else table.set(location, oldest + policy.retentionSeconds * 1000);
  }
}

type PassReport = NonNullable<PolicyReport["last_pass"]>;

async function maintenancePass(service: MaintenancePolicy, agenda: Agenda, report: PassReport) {
  for (const database of await listDatabases()) {
    const { catalog, tables } = await databaseFor(database);
    const written = await WrittenTables.read(tables.records);
    const index = await catalog.index();
    const entries = [...index.tables.values()];
    const due = new Set([...written.locations, ...agenda.cleanupsDue(database)]);
    const looks: Array<{ entry: TableEntry; swept: boolean }> = [
      ...entries.filter((entry) => due.has(entry.location)).map((entry) => ({ entry, swept: false })),
      ...agenda
        .swept(database, entries)
        .filter((entry) => !due.has(entry.location))
        .map((entry) => ({ entry, swept: true })),
    ];
    for (const { entry, swept } of looks) {
      const { policy } = tablePolicy(service, index, entry);
      if (!policy.enabled) continue;
      try {
        report.tables_looked_at++;
        if (swept && !(await changedOrAged(tables, entry, policy, agenda.sweepMs))) continue;
        agenda.looked(database, entry.location, await maintainTable(database, tables, entry, policy, report), policy);
      } catch (err) {
        // A table dropped meanwhile, or a store that failed: the next pass looks again.
        if (!(err instanceof QuiverError && err.codeName === "TableNotFound"))
          log.error({ err, table: entry.objectId, database }, "maintenance policy: a table could not be maintained");
      }
    }
    // The notes read are dealt with (a table that failed is noted again by its next write, or swept).
    await WrittenTables.forget(tables.records, written.notes);
  }
}

/**
 * Whether a table nobody noted as written needs a closer look, from one listing of its versions: a version newer than
 * a sweep (a writer that bypassed Quiver), or one older than the retention.
 */
async function changedOrAged(tables: Tables, entry: TableEntry, policy: MaintenancePolicy, periodMs: number): Promise<boolean> {
  const { sources } = await tables.filesOf(entry).versions(entry.location, { everyManifest: true });
  // No version: a declared table, nothing to maintain.
  if (sources.size === 0) return false;
  const times = [...sources.values()].map((source) => source.info?.modified).filter((t): t is number => t !== undefined);
  if (times.length < sources.size) return true;
  const now = Date.now();
  return Math.max(...times) > now - periodMs || (sources.size > 1 && Math.min(...times) < now - policy.retentionSeconds * 1000);
}

/**
 * Runs what a table is due for; answers its health as it then is (null: declared, nothing to maintain), or null
 * too when its cleanup was due and found nothing to remove (versions a tag or a branch keeps): nothing to come back for.
 */
async function maintainTable(database: string, tables: Tables, entry: TableEntry, policy: MaintenancePolicy, report: PassReport): Promise<TableHealth | null> {
  if (await tables.isDeclaredOnly(entry)) return null;
  const files = tables.filesOf(entry);
  const health = await manifestHealth(files);
  const reason = compactionDue(policy, health);
  if (reason) await runJob(database, tables, entry, { kind: "compact", reason }, report);
  if (!cleanupDue(policy, health)) return health;
  const olderThan = new Date(Date.now() - policy.retentionSeconds * 1000);
  const plan = await planCleanup(tables, entry, olderThan);
  if (plan.versions.length === 0) return null;
  await runJob(database, tables, entry, { kind: "cleanup", olderThan, reason: `${plan.versions.length} versions past the retention` }, report);
  return manifestHealth(files);
}

/** The most of what a pass found due that its report keeps. */
const DUE_KEPT = 100;

async function runJob(database: string, tables: Tables, entry: TableEntry, request: Pick<JobRequest, "kind" | "olderThan" | "reason">, report: PassReport) {
  const due = { database, table: entry.id, kind: request.kind, reason: request.reason ?? "", failed: null as string | null };
  if (report.due.length < DUE_KEPT) report.due.push(due);
  try {
    const { done } = await startJob(tables, entry, { ...request, trigger: "policy", requestedBy: POLICY_PRINCIPAL });
    const { job } = await done;
    due.failed = job.error?.message ?? null;
    await access()
      .audit.record(policyAuditEntry(database, job))
      .catch((err: unknown) => log.error({ err, job: job.job_id }, "the audit entry of a maintenance job could not be written"));
  } catch (err) {
    // Another instance holds the table's maintenance: it does the work.
    if (!(err instanceof QuiverError && err.codeName === "ConcurrentModification")) throw err;
  }
}

/** The policy's own change to a table, as the audit log holds every change: by whom, what it made, and why. */
function policyAuditEntry(database: string, job: MaintenanceJob): AuditEntry {
  const table = formatIdentifier(job.table);
  const why = job.parameters.reason ? `; why: ${job.parameters.reason}` : "";
  const failed = job.error ? `; failed: ${job.error.message}` : "";
  const compaction = job.compaction;
  const cleanup = job.cleanup;
  const made =
    compaction && compaction.version_after > compaction.version_before
      ? `made ${versionsText(compaction.version_before + 1, compaction.version_after)} (${compaction.fragments_before} fragments into ${compaction.fragments_after})`
      : cleanup
        ? `removed ${cleanup.versions_removed} old version${cleanup.versions_removed === 1 ? "" : "s"} (${cleanup.bytes_removed} bytes)`
        : "changed nothing";
  const operation = job.kind === "compact" ? "CompactTable" : "CleanupTableVersions";
  return {
    time: job.finished_at ?? new Date().toISOString(),
    requestId: `job:${job.job_id}`,
    principal: { kind: "service", id: POLICY_PRINCIPAL, name: "automatic maintenance policy" },
    action: operation,
    method: "POLICY",
    path: `/v1/table/${encodeURIComponent(table)}/maintenance/${job.kind}`,
    database,
    target: table,
    status: job.status === "succeeded" ? 200 : (STATUS_BY_CODE[job.error?.code as ErrorCodeValue] ?? 500),
    code: job.error?.code ?? null,
    outcome: job.status === "succeeded" ? "ok" : "failed",
    detail: `${job.kind === "compact" ? "compaction" : "cleanup"} ${made}${why}${failed}`,
  };
}

const versionsText = (from: number, to: number) => (from === to ? `version ${from}` : `versions ${from}-${to}`);
