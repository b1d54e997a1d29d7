"use client";
/**
 * The maintenance jobs of every table of the database: running, finished and failed, newest first, filtered by
 * status, kind and table, each linking to its table, with what it did or why it failed; polled while one runs.
 */
import Link from "next/link";
import { useState } from "react";
import { tableHref } from "@/lib/console-links";
import { joinIdentifier } from "@/lib/identifiers";
import { useAllMaintenanceJobs, type MaintenanceJob } from "@/lib/queries/maintenance";
import { useDatabase } from "@/lib/use-database";
import { formatTime } from "../table/format";
import { jobKindLabel, jobStatusTone, jobSummary } from "../table/job-summary";
import { Badge, Button, Field, Select, TextInput } from "../ui/controls";
import { Empty, ErrorBanner, Loading } from "../ui/states";

/** How long a job ran, or has run so far. */
function duration(job: MaintenanceJob): string {
  const ms = Date.parse(job.finished_at ?? job.updated_at) - Date.parse(job.created_at);
  if (ms < 1000) return `${Math.max(0, ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function JobsPanel() {
  const database = useDatabase();
  const [draft, setDraft] = useState({ status: "", kind: "", table: "" });
  const [filter, setFilter] = useState(draft);
  const jobs = useAllMaintenanceJobs(database, filter);
  const shown = jobs.data?.pages.flatMap((p) => p.jobs) ?? [];
  return (
    <div className="flex flex-col gap-4">
      <form
        aria-label="Filter the jobs"
        className="grid grid-cols-2 gap-3 sm:grid-cols-5"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter(draft);
        }}
      >
        <Field label="Status" htmlFor="jobs-status">
          <Select id="jobs-status" value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.target.value })}>
            <option value="">any</option>
            {["running", "succeeded", "failed", "abandoned"].map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Kind" htmlFor="jobs-kind">
          <Select id="jobs-kind" value={draft.kind} onChange={(e) => setDraft({ ...draft, kind: e.target.value })}>
            <option value="">any</option>
            <option value="compact">compaction</option>
            <option value="cleanup">version cleanup</option>
          </Select>
        </Field>
        <Field label="Table" htmlFor="jobs-table">
          <TextInput id="jobs-table" placeholder="namespace$table" value={draft.table} onChange={(e) => setDraft({ ...draft, table: e.target.value.trim() })} />
        </Field>
        <div className="flex items-end">
          <Button type="submit">Filter</Button>
        </div>
      </form>
      <ErrorBanner error={jobs.error} />
      {jobs.isPending ? (
        <Loading label="Loading the jobs…" />
      ) : shown.length === 0 ? (
        <Empty title="No jobs match">Compactions and version cleanups, asked for or started by the automatic policy, appear here.</Empty>
      ) : (
        <table className="w-full text-left text-sm">
          <thead className="text-xs uppercase text-slate-500">
            <tr>
              <th className="py-2 pr-3">Started</th>
              <th className="pr-3">Table</th>
              <th className="pr-3">Job</th>
              <th className="pr-3">Status</th>
              <th className="pr-3">What it did</th>
              <th className="pr-3">Took</th>
              <th className="pr-3">By</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((job) => (
              <tr key={job.job_id} className="border-t border-slate-200 align-top dark:border-slate-800" data-testid="job-row">
                <td className="whitespace-nowrap py-1.5 pr-3">{formatTime(Date.parse(job.created_at))}</td>
                <td className="pr-3 font-mono text-xs">
                  <Link className="text-indigo-700 hover:underline dark:text-indigo-300" href={tableHref(database, job.table)}>
                    {joinIdentifier(job.table)}
                  </Link>
                </td>
                <td className="whitespace-nowrap pr-3">{jobKindLabel(job)}</td>
                <td className="pr-3">
                  <Badge tone={jobStatusTone[job.status]}>{job.status}</Badge>
                </td>
                <td className="max-w-md pr-3">
                  {jobSummary(job)}
                  {job.error && <span className="ml-1 font-mono text-xs text-slate-500">(code {job.error.code})</span>}
                </td>
                <td className="whitespace-nowrap pr-3">{duration(job)}</td>
                <td className="pr-3 text-xs text-slate-500" title={job.parameters.reason ? String(job.parameters.reason) : undefined}>
                  {job.trigger === "policy" ? "automatic" : job.requested_by}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {jobs.hasNextPage && (
        <Button variant="secondary" onClick={() => jobs.fetchNextPage()} disabled={jobs.isFetchingNextPage}>
          {jobs.isFetchingNextPage ? "Loading…" : "Load older jobs"}
        </Button>
      )}
    </div>
  );
}
