"use client";
/**
 * The service at a glance: totals and charts over a chosen window, summed over every instance of the root or one of
 * them, and the instances with their processes and which of them holds the maintainer's and the catalog committer's
 * leases. The window, refresh and instance live in the address, so that a reload (or a link) shows the same view;
 * the figures themselves are kept by the server, so a reload loses none of them.
 */
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import type { ReactNode } from "react";
import { useOperations, type OperationsOverview } from "@/lib/queries/operations";
import { useDatabase } from "@/lib/use-database";
import { formatTime } from "../table/format";
import { Badge, Field, Select } from "../ui/controls";
import { FramedTable, framedRowClass } from "../ui/framed-table";
import { ErrorBanner, Loading } from "../ui/states";
import { formatValue, LineChart } from "./line-chart";
import { PolicySummary } from "./policy-summary";

const WINDOWS = [
  { seconds: 900, label: "last 15 minutes" },
  { seconds: 3600, label: "last hour" },
  { seconds: 10_800, label: "last 3 hours" },
];
const REFRESHES = [
  { ms: 5000, label: "every 5 s" },
  { ms: 10_000, label: "every 10 s" },
  { ms: 30_000, label: "every 30 s" },
  { ms: 60_000, label: "every minute" },
  { ms: 0, label: "off" },
];
const DEFAULT_WINDOW = 3600;
const DEFAULT_REFRESH = 10_000;

/** The view the address names, each setting checked against the choices offered (a hand-edited address falls back). */
function useView() {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const window = Number(params.get("window"));
  const refresh = Number(params.get("refresh"));
  const view = {
    window: WINDOWS.some((w) => w.seconds === window) ? window : DEFAULT_WINDOW,
    refresh: params.has("refresh") && REFRESHES.some((r) => r.ms === refresh) ? refresh : DEFAULT_REFRESH,
    instance: params.get("instance") || null,
  };
  const change = (next: Partial<typeof view>) => {
    const merged = new URLSearchParams(params);
    for (const [name, value] of Object.entries(next)) {
      if (value === null || value === "") merged.delete(name);
      else merged.set(name, String(value));
    }
    router.replace(`${pathname}?${merged}`, { scroll: false });
  };
  return { view, change };
}

export function OperationsPanel() {
  const database = useDatabase();
  const { view, change } = useView();
  const overview = useOperations(database, view.window, view.instance, view.refresh);
  const data = overview.data;
  return (
    <div className="flex flex-col gap-6">
      <form aria-label="What the page shows" className="grid grid-cols-1 items-end gap-3 sm:grid-cols-4" onSubmit={(e) => e.preventDefault()}>
        <Field label="Window" htmlFor="ops-window">
          <Select id="ops-window" value={view.window} onChange={(e) => change({ window: Number(e.target.value) })}>
            {WINDOWS.map((w) => (
              <option key={w.seconds} value={w.seconds}>
                {w.label}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Refresh" htmlFor="ops-refresh">
          <Select id="ops-refresh" value={view.refresh} onChange={(e) => change({ refresh: Number(e.target.value) })}>
            {REFRESHES.map((r) => (
              <option key={r.ms} value={r.ms}>
                {r.label}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Instance" htmlFor="ops-instance">
          <Select id="ops-instance" value={view.instance ?? ""} onChange={(e) => change({ instance: e.target.value || null })}>
            <option value="">all instances</option>
            {(data?.instances ?? []).map((instance) => (
              <option key={instance.id} value={instance.id}>
                {instanceName(instance)}
              </option>
            ))}
          </Select>
        </Field>
        <p className="text-xs text-slate-500 dark:text-slate-400" aria-live="polite">
          {data ? `Updated ${formatTime(Date.parse(data.now))}${overview.isFetching ? " · updating…" : ""}` : ""}
        </p>
      </form>
      {overview.error ? <ErrorBanner error={overview.error} onDismiss={view.instance ? () => change({ instance: null }) : undefined} /> : null}
      {!data ? (
        overview.isPending ? (
          <Loading label="Reading the service's figures…" />
        ) : null
      ) : (
        <>
          <Totals totals={data.totals} windowSeconds={data.window_seconds} />
          <Instances overview={data} />
          {data.policy ? <PolicySummary policy={data.policy} /> : null}
          <section aria-label="Charts" className="grid grid-cols-1 gap-4 lg:grid-cols-2">
            {data.charts.map((chart) => (
              <div key={chart.id} className="rounded-lg border border-slate-200 p-3 dark:border-slate-800" data-chart={chart.id}>
                <LineChart
                  title={chart.title}
                  unit={chart.unit}
                  times={data.times}
                  series={chart.series}
                  empty={`Nothing in the ${windowName(data.window_seconds)}`}
                />
              </div>
            ))}
          </section>
          <p className="text-xs text-slate-500 dark:text-slate-400">
            Each point sums {data.step_seconds} s. The same figures are at <code>GET /metrics</code> for a Prometheus;{" "}
            <Link className="text-indigo-700 hover:underline dark:text-indigo-300" href="/docs/operations#dashboards-and-alerts">
              the operations guide
            </Link>{" "}
            has a Grafana dashboard and alert rules to import.
          </p>
        </>
      )}
    </div>
  );
}

const windowName = (seconds: number) => WINDOWS.find((w) => w.seconds === seconds)?.label ?? `last ${Math.round(seconds / 60)} minutes`;
const instanceName = (instance: OperationsOverview["instances"][number]) =>
  `${instance.machine} · ${instance.id.slice(0, 8)}${instance.this_instance ? " (this one)" : ""}`;

function Tile({ label, value, tone, children }: { label: string; value: string; tone?: "red" | "amber"; children?: ReactNode }) {
  const color = tone === "red" ? "text-red-700 dark:text-red-400" : tone === "amber" ? "text-amber-700 dark:text-amber-400" : "";
  return (
    <div className="rounded-lg border border-slate-200 p-3 dark:border-slate-800" role="group" aria-label={label}>
      <div className="text-xs text-slate-500 dark:text-slate-400">{label}</div>
      <div className={`text-xl font-semibold tabular-nums ${color}`} data-testid={`total-${label}`}>
        {value}
      </div>
      {children ? <div className="text-xs text-slate-500 dark:text-slate-400">{children}</div> : null}
    </div>
  );
}

function Totals({ totals, windowSeconds }: { totals: OperationsOverview["totals"]; windowSeconds: number }) {
  const count = (n: number) => formatValue(n, "");
  return (
    <section aria-label={`Totals over the ${windowName(windowSeconds)}`} className="grid grid-cols-2 gap-3 sm:grid-cols-4 lg:grid-cols-8">
      <Tile label="Requests" value={count(totals.requests)}>
        {formatValue(totals.requests_per_second, "req/s")} on average
      </Tile>
      <Tile label="Errors" value={count(totals.errors)} tone={totals.errors ? "amber" : undefined}>
        {totals.requests ? `${((100 * totals.errors) / totals.requests).toFixed(1)}% of requests` : "no requests"}
      </Tile>
      <Tile label="Refused" value={count(totals.refused)} tone={totals.refused ? "red" : undefined}>
        answered 503
      </Tile>
      <Tile label="Latency p99" value={totals.p99_ms === null ? "—" : formatValue(totals.p99_ms, "ms")} />
      <Tile label="Store requests" value={count(totals.store_requests)} tone={totals.store_errors ? "red" : undefined}>
        {totals.store_errors ? `${count(totals.store_errors)} failed` : "none failed"}
      </Tile>
      <Tile label="Rows written" value={count(totals.rows_written)}>
        {formatValue(totals.bytes_received, "B")} received
      </Tile>
      <Tile label="Conflicts" value={count(totals.conflicts)} tone={totals.conflicts ? "amber" : undefined}>
        {count(totals.repeats)} write repeats
      </Tile>
      <Tile label="Maintenance failed" value={count(totals.maintenance_failed)} tone={totals.maintenance_failed ? "red" : undefined}>
        {count(totals.maintenance_succeeded)} succeeded
      </Tile>
    </section>
  );
}

const stateTone = { up: "green", unreachable: "amber", gone: "red" } as const;

function Instances({ overview }: { overview: OperationsOverview }) {
  const noMaintainer = overview.maintainer === null;
  return (
    <section aria-labelledby="instances-heading" className="flex flex-col gap-2">
      <h2 id="instances-heading" className="text-sm font-semibold">
        Instances of the root
      </h2>
      {noMaintainer ? (
        <p role="status" className="text-sm text-amber-700 dark:text-amber-400">
          No instance holds the maintainer&apos;s lease now: automatic maintenance does not run until one takes it.
        </p>
      ) : null}
      <FramedTable
        columns={[
          { label: "Instance" },
          { label: "Started" },
          { label: "Version" },
          { label: "Processes" },
          { label: "Requests", numeric: true },
          { label: "Errors", numeric: true },
          { label: "p99", numeric: true },
        ]}
      >
        {overview.instances.map((instance) => (
          <tr key={instance.id} className={framedRowClass} data-instance={instance.id}>
            <td className="px-3 py-2">
              <div className="font-medium">{instance.machine}</div>
              <div className="font-mono text-xs text-slate-500 dark:text-slate-400">{instance.id.slice(0, 8)}</div>
              {instance.this_instance ? <Badge tone="indigo">answered this page</Badge> : null}
            </td>
            <td className="px-3 py-2 whitespace-nowrap">{formatTime(Date.parse(instance.started_at))}</td>
            <td className="px-3 py-2">{instance.version}</td>
            <td className="px-3 py-2">
              <ul className="flex flex-col gap-1">
                {instance.processes.map((p) => (
                  <li key={p.id} className="flex flex-wrap items-center gap-1" title={p.error ?? undefined}>
                    <span className="font-mono text-xs">pid {p.pid}</span>
                    <Badge tone={stateTone[p.state]}>{p.state}</Badge>
                    {p.maintainer ? <Badge tone="indigo">maintainer</Badge> : null}
                    {p.catalog_committer ? <Badge tone="indigo">catalog committer</Badge> : null}
                    {p.state !== "up" ? (
                      <span className="text-xs text-slate-500 dark:text-slate-400">last seen {formatTime(Date.parse(p.last_seen))}</span>
                    ) : null}
                  </li>
                ))}
              </ul>
            </td>
            <td className="px-3 py-2 text-right tabular-nums">{formatValue(instance.requests, "")}</td>
            <td className="px-3 py-2 text-right tabular-nums">{formatValue(instance.errors, "")}</td>
            <td className="px-3 py-2 text-right tabular-nums">{instance.p99_ms === null ? "—" : formatValue(instance.p99_ms, "ms")}</td>
          </tr>
        ))}
      </FramedTable>
      <p className="text-xs text-slate-500 dark:text-slate-400">
        The catalog committer&apos;s lease is held only while tables are being made; at rest nobody holds it.
        {overview.catalog_committer ? null : " Nobody holds it now."}
      </p>
    </section>
  );
}
