"use client";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type MouseEvent } from "react";
import { useCreateTag, useRestore, useTags, useVersions, type VersionRecord } from "@/lib/queries/catalog";
import { tableHref } from "@/lib/console-links";
import { Badge, Button, Field, TextInput } from "../ui/controls";
import { Dialog } from "../ui/dialog";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { formatBytes, formatTime } from "./format";

/**
 * Row count and size across versions, oldest to newest, as two lines on one chart that fills its width: rows read
 * against the left axis, size against the right, versions along the bottom. Each version is a column that names its
 * figures on hover and opens that version's data. The axes are HTML beside the drawing, which stretches to its width
 * and so cannot hold text.
 */
function HistoryChart({ database, table, versions }: { database: string; table: string[]; versions: VersionRecord[] }) {
  const router = useRouter();
  const points = [...versions].reverse();
  if (points.length < 2) return null;
  const W = 1000;
  const H = 100;
  const series = [
    { name: "rows", color: "#4f46e5", values: points.map((v) => Number(v.metadata.total_rows ?? 0)), label: (n: number) => n.toLocaleString(), unitBase: 10 },
    { name: "size", color: "#059669", values: points.map((v) => Number(v.metadata.total_files_size ?? 0)), label: formatBytes, unitBase: 1024 },
  ].map((s) => ({ ...s, top: niceCeiling(Math.max(...s.values), s.unitBase) }));
  const step = W / (points.length - 1);
  const x = (i: number) => i * step;
  const y = (v: number, top: number) => H - (v / top) * H;
  const ticks = versionTicks(points.length);
  const open = (href: string) => (e: MouseEvent) => {
    e.preventDefault();
    router.push(href);
  };
  const axis = (s: (typeof series)[number], side: "left" | "right") => (
    <div
      className={`flex h-36 flex-col justify-between font-mono text-xs ${side === "left" ? "text-right text-indigo-700 dark:text-indigo-300" : "text-emerald-700 dark:text-emerald-300"}`}
      data-testid={`chart-axis-${s.name}`}
      aria-hidden
    >
      {[s.top, s.top / 2, 0].map((v) => (
        <span key={v} className="-my-2 leading-4">
          {s.label(v)}
        </span>
      ))}
    </div>
  );
  return (
    <figure className="rounded-lg border border-slate-200 p-3 dark:border-slate-800" data-testid="history-chart">
      <div className="grid grid-cols-[auto_1fr_auto] gap-x-2">
        {axis(series[0], "left")}
        <svg
          viewBox={`0 0 ${W} ${H}`}
          preserveAspectRatio="none"
          className="h-36 w-full overflow-visible border-b border-l border-r border-slate-300 dark:border-slate-700"
          role="img"
          aria-label={`Rows and size across versions ${points[0].version} to ${points[points.length - 1].version}`}
        >
          {[0, H / 2].map((gy) => (
            <line
              key={gy}
              x1={0}
              x2={W}
              y1={gy}
              y2={gy}
              className="stroke-slate-200 dark:stroke-slate-800"
              strokeDasharray="4 4"
              vectorEffect="non-scaling-stroke"
            />
          ))}
          {series.map((s) => {
            const d = s.values.map((v, i) => `${i ? "L" : "M"}${x(i).toFixed(2)},${y(v, s.top).toFixed(2)}`).join(" ");
            return <path key={s.name} d={d} fill="none" stroke={s.color} strokeWidth={2} vectorEffect="non-scaling-stroke" />;
          })}
          {points.map((v, i) => {
            const href = tableHref(database, table, "data", { version: v.version });
            return (
              <a key={v.version} href={href} onClick={open(href)}>
                <rect x={Math.max(0, x(i) - step / 2)} y={0} width={step} height={H} className="fill-transparent hover:fill-slate-400/15">
                  <title>{`version ${v.version}: ${series[0].values[i].toLocaleString()} rows, ${formatBytes(series[1].values[i])}`}</title>
                </rect>
              </a>
            );
          })}
        </svg>
        {axis(series[1], "right")}
        <div />
        <div className="relative h-5 font-mono text-xs text-slate-600 dark:text-slate-300" data-testid="chart-axis-versions" aria-hidden>
          {ticks.map((i) => (
            <span
              key={i}
              className={`absolute top-1 ${i === 0 ? "" : i === points.length - 1 ? "-translate-x-full" : "-translate-x-1/2"}`}
              style={{ left: `${(x(i) / W) * 100}%` }}
            >
              v{points[i].version}
            </span>
          ))}
        </div>
      </div>
      <figcaption className="mt-1 flex flex-wrap items-center gap-4 text-xs text-slate-600 dark:text-slate-300">
        <span>
          <span className="mr-1 inline-block h-2 w-3 bg-indigo-600" />
          rows (left axis)
        </span>
        <span>
          <span className="mr-1 inline-block h-2 w-3 bg-emerald-600" />
          size (right axis)
        </span>
        <span>by version, oldest to newest; a click on a version opens its data</span>
      </figcaption>
    </figure>
  );
}

/**
 * An axis's top that reads as a round number: the smallest of 1, 2, 2.5 and 5 times a power of ten at or above n, in
 * the units n is read in (powers of 1024 for sizes: 2.5 MiB, not 2.4 MiB for 2,500,000).
 */
function niceCeiling(n: number, unitBase: number): number {
  if (n <= 0) return 1;
  const unit = unitBase ** Math.floor(Math.log(n) / Math.log(unitBase));
  const power = 10 ** Math.floor(Math.log10(n / unit));
  return [1, 2, 2.5, 5, 10].map((m) => m * power * unit).find((v) => v >= n)!;
}

/** Up to six evenly spread indexes of n points, the first and the last among them. */
function versionTicks(n: number): number[] {
  const count = Math.min(n, 6);
  return [...new Set(Array.from({ length: count }, (_, k) => Math.round((k * (n - 1)) / (count - 1))))];
}

export function VersionsTab({ database, table }: { database: string; table: string[] }) {
  const versions = useVersions(database, table);
  const tags = useTags(database, table);
  const createTag = useCreateTag(database, table);
  const restore = useRestore(database, table);
  const [tagging, setTagging] = useState<number | null>(null);
  const [restoring, setRestoring] = useState<number | null>(null);
  const [tagName, setTagName] = useState("");
  const list = versions.data?.pages.flatMap((p) => p.versions) ?? [];
  const tagsByVersion = new Map<number, string[]>();
  for (const [name, t] of Object.entries(tags.data?.tags ?? {})) tagsByVersion.set(t.version, [...(tagsByVersion.get(t.version) ?? []), name]);
  const latest = list[0]?.version;
  // Only a table whose versions the catalog manages has a record of who made each one.
  const managed = list.some((v) => v.committed_by !== undefined);

  if (versions.isPending) return <Loading label="Loading versions…" />;
  if (versions.isError) return <ErrorBanner error={versions.error} />;
  if (list.length === 0) return <Empty title="No versions yet">A declared-only table has no versions until data is written.</Empty>;
  return (
    <div className="flex flex-col gap-4">
      <HistoryChart database={database} table={table} versions={list} />
      <ErrorBanner error={restore.error} onDismiss={restore.reset} />
      {restore.data && (
        <p role="status" className="text-sm text-emerald-700 dark:text-emerald-300">
          Restored as version {restore.data.version}.
        </p>
      )}
      <table className="w-full text-left text-sm" data-testid="versions-table">
        <thead className="text-xs uppercase text-slate-500">
          <tr>
            <th className="py-2 pr-3">Version</th>
            <th className="pr-3">Time</th>
            <th className="pr-3">Operation</th>
            {managed && <th className="pr-3">By</th>}
            <th className="pr-3 text-right">Rows</th>
            <th className="pr-3 text-right">Size</th>
            <th className="pr-3">Tags</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.map((v) => (
            <tr key={v.version} className="border-t border-slate-100 dark:border-slate-800" data-testid={`version-row-${v.version}`}>
              <td className="py-1.5 pr-3 font-mono">
                {v.version}
                {v.version === latest && (
                  <span className="ml-2">
                    <Badge tone="green">latest</Badge>
                  </span>
                )}
              </td>
              <td className="pr-3 whitespace-nowrap">{formatTime(v.timestamp_millis)}</td>
              <td className="pr-3" data-testid="version-action">
                {v.action ?? "—"}
                {v.operation && <span className="ml-2 font-mono text-xs text-slate-500">{v.operation}</span>}
              </td>
              {managed && (
                <td className="pr-3" data-testid="version-author">
                  {v.committed_by ? (
                    <span title={`${v.committed_by.principal.kind} ${v.committed_by.principal.id}, through ${v.committed_by.operation}`}>
                      by {v.committed_by.principal.name}
                    </span>
                  ) : (
                    <span
                      className="text-slate-500"
                      title="no record of who: made before the table's versions were managed, or by a program that wrote the table's files directly"
                    >
                      —
                    </span>
                  )}
                </td>
              )}
              <td className="pr-3 text-right">{Number(v.metadata.total_rows ?? 0).toLocaleString()}</td>
              <td className="pr-3 text-right">{formatBytes(Number(v.metadata.total_files_size ?? 0))}</td>
              <td className="pr-3">
                {(tagsByVersion.get(v.version) ?? []).map((t) => (
                  <span key={t} className="mr-1">
                    <Badge tone="indigo">{t}</Badge>
                  </span>
                ))}
              </td>
              <td className="whitespace-nowrap">
                <Link className="mr-2 text-indigo-600 underline" href={tableHref(database, table, "data", { version: v.version })}>
                  data
                </Link>
                <Link className="mr-2 text-indigo-600 underline" href={tableHref(database, table, "schema", { version: v.version })}>
                  schema
                </Link>
                <Link
                  className="mr-2 text-indigo-600 underline"
                  href={tableHref(database, table, "changes", { to_version: v.version })}
                  aria-label={`What version ${v.version} changed`}
                >
                  changes
                </Link>
                <Button variant="ghost" onClick={() => setTagging(v.version)} aria-label={`Tag version ${v.version}`}>
                  Tag
                </Button>
                {v.version !== latest && (
                  <Button variant="ghost" onClick={() => setRestoring(v.version)} aria-label={`Restore version ${v.version}`}>
                    Restore
                  </Button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {versions.hasNextPage && (
        <Button variant="secondary" onClick={() => versions.fetchNextPage()} disabled={versions.isFetchingNextPage}>
          {versions.isFetchingNextPage ? "Loading…" : "Load older versions"}
        </Button>
      )}
      <Dialog open={tagging !== null} onClose={() => setTagging(null)} title={`Tag version ${tagging}`}>
        <form
          className="flex flex-col gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            createTag.mutateAsync({ tag: tagName, version: tagging! }).then(
              () => {
                setTagging(null);
                setTagName("");
              },
              () => undefined,
            );
          }}
        >
          <Field label="Tag name" htmlFor="new-tag-name">
            <TextInput id="new-tag-name" value={tagName} onChange={(e) => setTagName(e.target.value)} required autoFocus />
          </Field>
          <ErrorBanner error={createTag.error} />
          <div className="flex justify-end gap-2">
            <Button type="button" variant="secondary" onClick={() => setTagging(null)}>
              Cancel
            </Button>
            <Button type="submit" disabled={!tagName || createTag.isPending}>
              Create tag
            </Button>
          </div>
        </form>
      </Dialog>
      <Dialog open={restoring !== null} onClose={() => setRestoring(null)} title={`Restore version ${restoring}?`}>
        <p className="text-sm">
          The table's content returns to version {restoring} as a new version after {latest}. No history is lost.
        </p>
        <div className="mt-4 flex justify-end gap-2">
          <Button variant="secondary" onClick={() => setRestoring(null)}>
            Cancel
          </Button>
          <Button
            onClick={() =>
              restore.mutateAsync(restoring!).then(
                () => setRestoring(null),
                () => setRestoring(null),
              )
            }
            disabled={restore.isPending}
          >
            Restore
          </Button>
        </div>
      </Dialog>
    </div>
  );
}
