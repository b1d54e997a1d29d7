/** What a maintenance job did, or is doing, in a line: the table's own history and the jobs of all tables show it so. */
import type { MaintenanceJob } from "@/lib/queries/maintenance";
import { formatBytes } from "./format";

export const jobKindLabel = (job: MaintenanceJob) => (job.kind === "compact" ? "Compaction" : "Version cleanup");

export function jobSummary(job: MaintenanceJob): string {
  if (job.status === "failed") return job.error?.message ?? "failed";
  if (job.status === "abandoned") return "the instance running it stopped before it finished";
  if (job.compaction) {
    const c = job.compaction;
    const indexed = c.unindexed_rows_before - c.unindexed_rows_after;
    return [
      `${c.fragments_before} → ${c.fragments_after} fragments`,
      c.deleted_rows_before > c.deleted_rows_after ? `${c.deleted_rows_before - c.deleted_rows_after} deleted rows removed` : null,
      indexed > 0 ? `${indexed.toLocaleString()} rows indexed` : null,
      c.conflicts_retried ? `retried ${c.conflicts_retried}× after concurrent writes` : null,
    ]
      .filter(Boolean)
      .join(", ");
  }
  if (job.cleanup) return `${job.cleanup.versions_removed} versions removed, ${formatBytes(job.cleanup.bytes_removed)} freed`;
  return job.progress ? `${job.progress.done} of ${job.progress.total} steps` : "running";
}

export const jobStatusTone = { running: "indigo", succeeded: "green", failed: "red", abandoned: "amber" } as const;
