/**
 * The automatic policy at work: every instance looks at every table of every database now and then and runs the
 * maintenance a table is due for, one table after another. The lease makes sure only one instance works on a table
 * at a time: an instance that finds the table's maintenance running elsewhere goes on to the next table. Apart from
 * the policy, about once an hour each instance deletes the write ledger's records that have outlived the
 * idempotency window (server/tables/write-ledger.ts): one listing of them per database when there are none.
 */
import "server-only";
import { log } from "@/server/log";
import type { TableEntry } from "@/server/catalog/catalog-table";
import { databaseFor, listDatabases } from "@/server/databases";
import { ConfigError } from "@/server/config-error";
import { QuiverError } from "@/server/errors";
import { startJob, type JobRequest } from "./jobs";
import { manifestHealth, planCleanup } from "./operations";
import { cleanupDue, compactionDue, servicePolicy, tablePolicy, type MaintenancePolicy } from "./policy";
import type { Tables } from "@/server/tables/tables";

export const POLICY_PRINCIPAL = "quiver:policy";

const intervalMs = () => (Number(process.env.QUIVER_MAINTENANCE_INTERVAL_S) || 300) * 1000;
const LEDGER_SWEEP_MS = 3_600_000;

/** Deletes the write ledger's expired records in every database. */
export async function sweepLedgers(): Promise<number> {
  let swept = 0;
  for (const database of await listDatabases()) swept += await (await databaseFor(database)).tables.ledger.sweep();
  return swept;
}

/** Checks the service-wide policy (a setting that cannot be read stops the server) and starts the passes. */
export function startMaintenancePolicy(): void {
  const { policy, problems } = servicePolicy();
  if (problems.length) throw new ConfigError(problems.join("; "));
  let running = false;
  const pass = async () => {
    if (running) return;
    running = true;
    try {
      await maintainAll(policy);
    } catch (err) {
      log.error({ err }, "maintenance policy pass failed");
    } finally {
      running = false;
    }
  };
  // Instances started together should not look at the same table at the same moment: each starts at its own offset.
  const first = setTimeout(
    () => {
      void pass();
      setInterval(() => void pass(), intervalMs()).unref();
    },
    intervalMs() * (0.5 + Math.random() / 2),
  );
  first.unref();
  const sweep = () =>
    void sweepLedgers().then(
      (swept) => swept > 0 && log.info({ swept }, "deleted the write ledger's records older than the idempotency window"),
      (err: unknown) => log.error({ err }, "sweeping the write ledger failed"),
    );
  const firstSweep = setTimeout(() => {
    sweep();
    setInterval(sweep, LEDGER_SWEEP_MS).unref();
  }, LEDGER_SWEEP_MS * Math.random());
  firstSweep.unref();
}

async function maintainAll(service: MaintenancePolicy) {
  for (const database of await listDatabases()) {
    const { catalog, tables } = await databaseFor(database);
    const index = await catalog.index();
    for (const entry of [...index.tables.values()]) {
      const { policy } = tablePolicy(service, index, entry);
      if (!policy.enabled) continue;
      try {
        await maintainTable(tables, entry, policy);
      } catch (err) {
        // A table dropped meanwhile, or a store that failed: the next pass looks again.
        if (!(err instanceof QuiverError && err.codeName === "TableNotFound"))
          log.error({ err, table: entry.objectId, database }, "maintenance policy: a table could not be maintained");
      }
    }
  }
}

async function maintainTable(tables: Tables, entry: TableEntry, policy: MaintenancePolicy) {
  if (await tables.isDeclaredOnly(entry)) return;
  const health = await manifestHealth(tables.filesOf(entry));
  const reason = compactionDue(policy, health);
  if (reason) await runJob(tables, entry, { kind: "compact", reason });
  if (cleanupDue(policy, health)) {
    const olderThan = new Date(Date.now() - policy.retentionSeconds * 1000);
    const plan = await planCleanup(tables, entry, olderThan);
    if (plan.versions.length > 0) await runJob(tables, entry, { kind: "cleanup", olderThan, reason: `${plan.versions.length} versions past the retention` });
  }
}

async function runJob(tables: Tables, entry: TableEntry, request: Pick<JobRequest, "kind" | "olderThan" | "reason">) {
  try {
    const { done } = await startJob(tables, entry, { ...request, trigger: "policy", requestedBy: POLICY_PRINCIPAL });
    await done;
  } catch (err) {
    // Another instance holds the table's maintenance: it does the work.
    if (!(err instanceof QuiverError && err.codeName === "ConcurrentModification")) throw err;
  }
}
