"use client";
import Link from "next/link";
import { useState } from "react";
import { MANAGED_VERSIONING } from "@/lib/contract/catalog";
import { useTable, useUpdateTableProperties, useVersions } from "@/lib/queries/catalog";
import { tableHref } from "@/lib/console-links";
import { Badge, Button } from "../ui/controls";
import { Dialog } from "../ui/dialog";
import { ErrorBanner, Loading } from "../ui/states";
import { PropertiesTable } from "../ui/properties-editor";
import { formatBytes, formatTime } from "./format";
import { MaintenancePanel } from "./maintenance-panel";

/**
 * Whether the catalog manages the table's versions, and the switch: clients that open the table afterwards commit
 * the new way, so the dialog says what changes and for whom.
 */
function Versioning({ database, table, managed }: { database: string; table: string[]; managed: boolean }) {
  const update = useUpdateTableProperties(database, table);
  const [asking, setAsking] = useState(false);
  const close = () => {
    setAsking(false);
    update.reset();
  };
  return (
    <span className="flex flex-wrap items-center gap-2" data-testid="versioning">
      {managed ? <Badge tone="indigo">managed by Quiver</Badge> : <span>each client commits its own</span>}
      <Button variant="secondary" className="px-2 py-0.5 text-xs" onClick={() => setAsking(true)}>
        {managed ? "Stop managing" : "Have Quiver manage them"}
      </Button>
      <Dialog open={asking} onClose={close} title={managed ? "Stop managing this table's versions?" : "Manage this table's versions in the catalog?"}>
        <p className="text-sm">
          {managed
            ? "Clients that open the table from now on commit to its files themselves: their versions are no longer authorised, audited and attributed one by one."
            : "Clients that open the table from now on commit every version through the catalog: each one authorised, audited and shown with who made it."}{" "}
          Clients that have it open keep committing as before until they open it again. No version is lost either way.
        </p>
        <ErrorBanner error={update.error} />
        <div className="mt-4 flex justify-end gap-2">
          <Button variant="secondary" onClick={close}>
            Cancel
          </Button>
          <Button
            onClick={() => update.mutateAsync({ updates: { [MANAGED_VERSIONING]: managed ? "false" : "true" } }).then(close, () => undefined)}
            disabled={update.isPending}
          >
            {managed ? "Stop managing" : "Manage"}
          </Button>
        </div>
      </Dialog>
    </span>
  );
}

export function OverviewTab({ database, table }: { database: string; table: string[] }) {
  const described = useTable(database, table);
  const versions = useVersions(database, table, described.data ? !described.data.is_only_declared : false);
  if (described.isPending) return <Loading />;
  if (described.isError) return <ErrorBanner error={described.error} />;
  const d = described.data;
  const recent = versions.data?.pages[0]?.versions.slice(0, 8) ?? [];
  const facts: Array<[string, React.ReactNode]> = [
    ["State", d.is_only_declared ? <Badge tone="amber">declared only</Badge> : <Badge tone="green">created</Badge>],
    ["Current version", d.version ?? "—"],
    ["Versions", <Versioning key="versioning" database={database} table={table} managed={d.managed_versioning ?? false} />],
    ["Rows", d.stats ? d.stats.num_rows.toLocaleString() : "—"],
    ["Size", d.stats ? formatBytes(d.stats.total_bytes) : "—"],
    ["Fragments", d.stats?.num_fragments ?? "—"],
    ["Indexes", d.stats?.num_indices ?? "—"],
  ];
  return (
    <div className="grid gap-6 lg:grid-cols-2">
      <section aria-labelledby="facts" className="rounded-lg border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="facts" className="mb-3 font-semibold">
          Table
        </h2>
        <dl className="grid grid-cols-[max-content_1fr] gap-x-6 gap-y-2 text-sm" data-testid="overview-facts">
          {facts.map(([k, v]) => (
            <div key={k} className="contents">
              <dt className="text-slate-500">{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
          <dt className="text-slate-500">Location</dt>
          <dd className="break-all font-mono text-xs">{d.location}</dd>
        </dl>
        <h3 className="mb-2 mt-5 text-sm font-semibold">Properties</h3>
        <PropertiesTable properties={d.properties} />
      </section>
      <section aria-labelledby="activity" className="rounded-lg border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="activity" className="mb-3 font-semibold">
          Latest activity
        </h2>
        {d.is_only_declared ? (
          <p className="text-sm text-slate-500">No data has been written yet. Insert or upload data to create version 1.</p>
        ) : versions.isPending ? (
          <Loading />
        ) : (
          <ol className="flex flex-col gap-2 text-sm">
            {recent.map((v) => (
              <li key={v.version} className="flex items-baseline justify-between gap-3">
                <Link
                  href={tableHref(database, table, "versions", { version: v.version })}
                  className="font-mono text-indigo-700 hover:underline dark:text-indigo-300"
                >
                  v{v.version}
                </Link>
                {/* Whole, wrapped between words: a line cut mid-word could not be read. */}
                <span className="min-w-0 flex-1 break-words" title={v.operation ?? undefined}>
                  {v.action ?? "commit"}
                </span>
                <span className="whitespace-nowrap text-slate-500">{Number(v.metadata.total_rows ?? 0).toLocaleString()} rows</span>
                <span className="whitespace-nowrap text-xs text-slate-500">{formatTime(v.timestamp_millis)}</span>
              </li>
            ))}
          </ol>
        )}
      </section>
      {!d.is_only_declared && <MaintenancePanel database={database} table={table} />}
    </div>
  );
}
