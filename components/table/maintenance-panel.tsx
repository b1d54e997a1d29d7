"use client";
/**
 * A table's health and housekeeping on its overview: what slows it (small fragments, deleted rows, old versions,
 * rows no index covers), what the automatic policy would do, "Compact" and "Clean up versions" (with a preview of
 * what would go), the running job's progress, and what maintenance did before.
 */
import { useState } from "react";
import { useCleanup, useCleanupPreview, useCompact, useMaintenanceJobs, useRunningJob, useTableHealth, type TableHealth } from "@/lib/queries/maintenance";
import { Badge, Button, Field, Select, TextInput } from "../ui/controls";
import { Dialog } from "../ui/dialog";
import { ErrorBanner, Loading } from "../ui/states";
import { formatBytes, formatTime } from "./format";
import { jobKindLabel, jobSummary, jobStatusTone } from "./job-summary";

const UNIT_SECONDS = { minutes: 60, hours: 3600, days: 86400 } as const;

function HealthFacts({ health }: { health: TableHealth }) {
  const facts: Array<[string, React.ReactNode]> = [
    ["Fragments", `${health.fragments.toLocaleString()} (${health.small_fragments.toLocaleString()} small)`],
    // An update marks the row's old copy deleted too: both still take room until a compaction.
    ["Rows marked deleted (by deletes and updates)", health.deleted_rows.toLocaleString()],
    ["Versions", `${health.versions.toLocaleString()}${health.oldest_version_time ? `, oldest ${formatTime(Date.parse(health.oldest_version_time))}` : ""}`],
    [
      "Unindexed rows",
      health.indices ? `${health.unindexed_rows.toLocaleString()} (${health.indices} ${health.indices === 1 ? "index" : "indexes"})` : "no indexes",
    ],
    [
      "Automatic",
      health.policy.enabled
        ? `on: compact at ${health.policy.compact_small_fragments} small fragments or ${Math.round(health.policy.compact_deleted_fraction * 100)}% deleted rows; keep versions ${Math.round(health.policy.retention_seconds / 3600).toLocaleString()} h`
        : "off",
    ],
    ["Due", health.due.compact ? `compaction: ${health.due.compact}` : health.due.cleanup ? "version cleanup" : "nothing"],
  ];
  return (
    <dl className="grid grid-cols-[max-content_1fr] gap-x-6 gap-y-2 text-sm" data-testid="table-health">
      {facts.map(([k, v]) => (
        <div key={k} className="contents">
          <dt className="text-slate-500">{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

function CleanupDialog({ database, table, open, onClose }: { database: string; table: string[]; open: boolean; onClose: () => void }) {
  const [amount, setAmount] = useState("7");
  const [unit, setUnit] = useState<keyof typeof UNIT_SECONDS>("days");
  const preview = useCleanupPreview(database, table);
  const cleanup = useCleanup(database, table);
  const seconds = Math.round(Number(amount) * UNIT_SECONDS[unit]);
  const valid = amount.trim() !== "" && Number.isFinite(seconds) && seconds >= 0;
  const plan = preview.data;
  const close = () => {
    preview.reset();
    cleanup.reset();
    onClose();
  };
  return (
    <Dialog open={open} onClose={close} title="Clean up old versions">
      <p className="mb-3 text-sm text-slate-600 dark:text-slate-300">
        Versions made before the time below go, with the files only they use. The latest version, tagged versions and the versions branches were made from are
        kept.
      </p>
      <div className="flex items-end gap-2">
        <Field label="Older than" htmlFor="cleanup-amount">
          <TextInput
            id="cleanup-amount"
            type="number"
            min={0}
            value={amount}
            onChange={(e) => {
              setAmount(e.target.value);
              preview.reset();
            }}
            className="w-24"
          />
        </Field>
        <Select
          aria-label="Unit"
          value={unit}
          onChange={(e) => {
            setUnit(e.target.value as keyof typeof UNIT_SECONDS);
            preview.reset();
          }}
        >
          {Object.keys(UNIT_SECONDS).map((u) => (
            <option key={u}>{u}</option>
          ))}
        </Select>
        <Button variant="secondary" disabled={!valid || preview.isPending} onClick={() => preview.mutate(seconds)}>
          Preview
        </Button>
      </div>
      {preview.isError && <ErrorBanner error={preview.error} />}
      {plan && (
        <div className="mt-4 flex flex-col gap-2 text-sm" data-testid="cleanup-preview">
          <p>
            {plan.versions.length === 0
              ? "No version is old enough to go."
              : `${plan.versions.length} versions would go (${plan.versions
                  .slice(0, 12)
                  .map((v) => `v${v.version}`)
                  .join(", ")}${plan.versions.length > 12 ? ", …" : ""}), freeing ${formatBytes(plan.bytes)} in ${plan.files} files.`}
          </p>
          {plan.kept.tagged.length > 0 && <p>Kept by tags: {plan.kept.tagged.map((t) => `${t.tag} (v${t.version})`).join(", ")}</p>}
          {plan.kept.branch_parents.length > 0 && <p>Kept for branches: {plan.kept.branch_parents.map((b) => `${b.branch} (v${b.version})`).join(", ")}</p>}
          <p className="text-slate-500">
            Also kept: the latest version v{plan.kept.latest} and {plan.kept.newer} newer versions.
          </p>
        </div>
      )}
      {cleanup.isError && <ErrorBanner error={cleanup.error} />}
      <div className="mt-5 flex justify-end gap-2">
        <Button variant="ghost" onClick={close}>
          Cancel
        </Button>
        <Button
          variant="danger"
          disabled={!plan || plan.versions.length === 0 || cleanup.isPending}
          onClick={() => cleanup.mutate(seconds, { onSuccess: close })}
        >
          {plan && plan.versions.length > 0 ? `Remove ${plan.versions.length} versions` : "Remove"}
        </Button>
      </div>
    </Dialog>
  );
}

export function MaintenancePanel({ database, table }: { database: string; table: string[] }) {
  const health = useTableHealth(database, table);
  const jobs = useMaintenanceJobs(database, table);
  const compact = useCompact(database, table);
  const [cleanupOpen, setCleanupOpen] = useState(false);
  const running = useRunningJob(database, table);
  const runningJob = jobs.data?.jobs.find((j) => j.job_id === running);
  return (
    <section aria-labelledby="maintenance" className="rounded-lg border border-slate-200 p-4 lg:col-span-2 dark:border-slate-800">
      <div className="mb-3 flex flex-wrap items-center justify-between gap-2">
        <h2 id="maintenance" className="font-semibold">
          Health and maintenance
        </h2>
        <div className="flex gap-2">
          <Button
            disabled={!!running || compact.isPending}
            onClick={() => compact.mutate(undefined)}
            title="Rewrites small fragments together, materialises deleted rows and indexes the rows written since each index was built"
          >
            Compact
          </Button>
          <Button variant="secondary" disabled={!!running} onClick={() => setCleanupOpen(true)}>
            Clean up versions…
          </Button>
        </div>
      </div>
      {health.isPending ? <Loading /> : health.isError ? <ErrorBanner error={health.error} /> : <HealthFacts health={health.data} />}
      {compact.isError && <ErrorBanner error={compact.error} />}
      {running && (
        <p role="status" className="mt-3 text-sm text-indigo-700 dark:text-indigo-300">
          {runningJob?.kind === "cleanup" ? "Cleaning up versions" : "Compacting"}
          {runningJob?.progress ? `: ${runningJob.progress.done} of ${runningJob.progress.total} steps` : "…"}
        </p>
      )}
      <h3 className="mb-2 mt-5 text-sm font-semibold">History</h3>
      {jobs.isPending ? (
        <Loading />
      ) : jobs.isError ? (
        <ErrorBanner error={jobs.error} />
      ) : jobs.data.jobs.length === 0 ? (
        <p className="text-sm text-slate-500">No maintenance has run on this table.</p>
      ) : (
        <ol className="flex flex-col gap-2 text-sm" aria-label="Maintenance history">
          {jobs.data.jobs.map((job) => (
            <li key={job.job_id} className="flex flex-wrap items-center gap-3">
              <span className="text-xs text-slate-500">{formatTime(Date.parse(job.created_at))}</span>
              <span className="font-medium">{jobKindLabel(job)}</span>
              <Badge tone={jobStatusTone[job.status]}>{job.status}</Badge>
              <span className="flex-1">{jobSummary(job)}</span>
              <span className="text-xs text-slate-500" title={job.parameters.reason ? String(job.parameters.reason) : undefined}>
                {job.trigger === "policy" ? "automatic" : job.requested_by}
              </span>
            </li>
          ))}
        </ol>
      )}
      <CleanupDialog database={database} table={table} open={cleanupOpen} onClose={() => setCleanupOpen(false)} />
    </section>
  );
}
