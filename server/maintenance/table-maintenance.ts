/** The maintenance operations of one table as the API offers them (by table identifier, for a caller), and the jobs of all. */
import "server-only";
import type { Catalog, Id } from "@/server/catalog/catalog";
import { describePrincipal, type Principal } from "@/server/auth/model";
import { jobOf, jobsAcrossTables, jobsOf, maintenanceHolder, startJob, type MaintenanceJob } from "./jobs";
import { indexCoverage, manifestHealth, planCleanup } from "./operations";
import { cleanupDue, compactionDue, servicePolicy, tablePolicy } from "./policy";
import type { Tables } from "@/server/tables/tables";

async function writtenTable(tables: Tables, id: Id, what: string) {
  const entry = await tables.resolve(id);
  await tables.requireData(entry, what);
  return entry;
}

export async function maintenanceOverview(tables: Tables, id: Id) {
  // Read while the tables is checked, whose answer then also says which policy applies.
  const {
    entry,
    index,
    value: [health, coverage, holder, [last]],
  } = await tables.resolveWith(id, (entry) =>
    tables.onWritten(entry, "report its health", () =>
      Promise.all([manifestHealth(tables.filesOf(entry)), indexCoverage(tables, entry), maintenanceHolder(tables, entry), jobsOf(tables, entry, 1)]),
    ),
  );
  const { policy, problems } = tablePolicy(servicePolicy().policy, index, entry);
  return {
    ...health,
    ...coverage,
    running_job: holder,
    last_job: last ?? null,
    policy: {
      enabled: policy.enabled,
      compact_small_fragments: policy.compactSmallFragments,
      compact_deleted_fraction: policy.compactDeletedFraction,
      retention_seconds: policy.retentionSeconds,
      problems,
    },
    due: { compact: compactionDue(policy, health), cleanup: cleanupDue(policy, health) },
  };
}

export async function cleanupPreview(tables: Tables, id: Id, olderThan: Date) {
  return planCleanup(tables, await writtenTable(tables, id, "have versions cleaned up"), olderThan);
}

export async function startMaintenance(
  tables: Tables,
  id: Id,
  request: { kind: MaintenanceJob["kind"]; principal: Principal; wait: boolean; olderThan?: Date },
): Promise<MaintenanceJob> {
  const entry = await writtenTable(tables, id, request.kind === "compact" ? "be compacted" : "have versions cleaned up");
  const who = describePrincipal(request.principal);
  const { job, done } = await startJob(tables, entry, {
    kind: request.kind,
    trigger: "request",
    requestedBy: `${who.kind}:${who.name}`,
    olderThan: request.olderThan,
  });
  if (!request.wait) return job;
  const finished = await done;
  if (finished.failure) throw finished.failure;
  return finished.job;
}

export async function tableJobs(tables: Tables, id: Id, limit: number) {
  return jobsOf(tables, await tables.resolve(id), limit);
}

export async function tableJob(tables: Tables, id: Id, jobId: string) {
  return jobOf(tables, await tables.resolve(id), jobId);
}

/**
 * The maintenance jobs of every table of the database (or one table's), newest first, after the job a page ended
 * with; each named by its table's identifier now, where the catalog still holds it.
 */
export async function jobsAcross(
  tables: Tables,
  catalog: Catalog,
  filter: { status?: MaintenanceJob["status"]; kind?: MaintenanceJob["kind"]; table?: Id },
  limit: number,
  after: string | null,
) {
  const [index, location] = await Promise.all([catalog.index(), filter.table ? tables.resolve(filter.table).then((e) => e.location) : undefined]);
  const tableAt = (at: string) => {
    const key = index.atLocation.get(at);
    return key === undefined ? null : (index.tables.get(key)?.id ?? null);
  };
  return jobsAcrossTables(tables, { status: filter.status, kind: filter.kind, location }, limit, after, tableAt);
}
