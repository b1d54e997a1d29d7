/** The maintenance operations of one table as the API offers them: by table identifier, for a caller. */
import "server-only";
import type { Catalog, Id } from "@/server/catalog/catalog";
import { describePrincipal, type Principal } from "@/server/auth/model";
import { TableLease } from "./lease";
import { jobOf, jobsOf, startJob, type MaintenanceJob } from "./jobs";
import { indexCoverage, manifestHealth, planCleanup } from "./operations";
import { cleanupDue, compactionDue, servicePolicy, tablePolicy } from "./policy";

async function writtenTable(catalog: Catalog, id: Id, what: string) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, what);
  return entry;
}

export async function maintenanceOverview(catalog: Catalog, id: Id) {
  // Read while the catalog is checked, whose answer then also says which policy applies.
  const {
    entry,
    index,
    value: [health, coverage, holder, [last]],
  } = await catalog.resolveWith(id, (entry) =>
    catalog.onWritten(entry, "report its health", () =>
      Promise.all([
        manifestHealth(catalog.filesOf(entry)),
        indexCoverage(catalog, entry),
        TableLease.holderOf(catalog.store, entry.location),
        jobsOf(catalog, entry, 1),
      ]),
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

export async function cleanupPreview(catalog: Catalog, id: Id, olderThan: Date) {
  return planCleanup(catalog, await writtenTable(catalog, id, "have versions cleaned up"), olderThan);
}

export async function startMaintenance(
  catalog: Catalog,
  id: Id,
  request: { kind: MaintenanceJob["kind"]; principal: Principal; wait: boolean; olderThan?: Date },
): Promise<MaintenanceJob> {
  const entry = await writtenTable(catalog, id, request.kind === "compact" ? "be compacted" : "have versions cleaned up");
  const who = describePrincipal(request.principal);
  const { job, done } = await startJob(catalog, entry, {
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

export async function tableJobs(catalog: Catalog, id: Id, limit: number) {
  return jobsOf(catalog, await catalog.resolve(id), limit);
}

export async function tableJob(catalog: Catalog, id: Id, jobId: string) {
  return jobOf(catalog, await catalog.resolve(id), jobId);
}
