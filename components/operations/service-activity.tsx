"use client";
/**
 * Beside the maintenance jobs: the automatic policy's next look and what its last one found due, and the heavy
 * requests of every instance (Arrow writes, queries, index builds, column rewrites) waiting or running now, and
 * those that took a second or more or failed lately. Refreshed every few seconds.
 */
import Link from "next/link";
import { useState } from "react";
import { tableHref } from "@/lib/console-links";
import { parseIdentifier } from "@/lib/identifiers";
import { useOperations, type OperationsOverview } from "@/lib/queries/operations";
import { useDatabase } from "@/lib/use-database";
import { formatTime } from "../table/format";
import { Badge, Field, TextInput } from "../ui/controls";
import { FramedTable, framedRowClass } from "../ui/framed-table";
import { ErrorBanner } from "../ui/states";
import { formatValue } from "./line-chart";
import { PolicySummary } from "./policy-summary";

const REFRESH_MS = 5000;
type Activity = OperationsOverview["requests"]["running"][number];
const tone = { queued: "amber", running: "indigo", succeeded: "green", failed: "red" } as const;

export function ServiceActivity() {
  const database = useDatabase();
  const overview = useOperations(database, 900, null, REFRESH_MS);
  const [filter, setFilter] = useState("");
  if (overview.error) return <ErrorBanner error={overview.error} />;
  const data = overview.data;
  if (!data) return null;
  const needle = filter.trim().toLowerCase();
  const matching = (rows: Activity[]) =>
    needle ? rows.filter((row) => [row.operation, row.target ?? "", row.principal ?? "", row.state].some((v) => v.toLowerCase().includes(needle))) : rows;
  return (
    <div className="flex flex-col gap-4">
      {data.policy ? (
        <PolicySummary policy={data.policy} />
      ) : (
        <p className="text-sm text-amber-700 dark:text-amber-400">No instance holds the maintainer&apos;s lease now: the automatic policy does not run.</p>
      )}
      <Field label="Filter the requests" htmlFor="requests-filter" hint="by operation, table, caller or state">
        <TextInput
          id="requests-filter"
          className="max-w-sm"
          placeholder="InsertIntoTable, ops$events, failed…"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
      </Field>
      <Requests title="Heavy requests now" empty={needle ? "None matches." : "None is waiting or running."} rows={matching(data.requests.running)} />
      <Requests
        title="Long or failed requests lately"
        empty={needle ? "None matches." : "None took a second or more, and none failed, lately."}
        rows={matching(data.requests.finished)}
      />
    </div>
  );
}

function Requests({ title, empty, rows }: { title: string; empty: string; rows: Activity[] }) {
  const database = useDatabase();
  const id = title.toLowerCase().replace(/\W+/g, "-");
  return (
    <section aria-labelledby={id} className="flex flex-col gap-2">
      <h2 id={id} className="text-sm font-semibold">
        {title}
      </h2>
      {rows.length === 0 ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">{empty}</p>
      ) : (
        <FramedTable
          columns={[
            { label: "Operation" },
            { label: "Table" },
            { label: "State" },
            { label: "Started" },
            { label: "Duration", numeric: true },
            { label: "By" },
          ]}
        >
          {rows.map((row) => (
            <tr key={row.request_id} className={framedRowClass} data-testid="request-row">
              <td className="px-3 py-2 font-mono text-xs">{row.operation}</td>
              <td className="px-3 py-2">
                {row.target && row.database === database ? (
                  <Link className="font-mono text-indigo-700 hover:underline dark:text-indigo-300" href={tableHref(database, parseIdentifier(row.target))}>
                    {row.target}
                  </Link>
                ) : (
                  <span className="font-mono">{row.target ? `${row.database}: ${row.target}` : "—"}</span>
                )}
              </td>
              <td className="px-3 py-2">
                <Badge tone={tone[row.state]}>{row.status === null ? row.state : `${row.state} (${row.status})`}</Badge>
                {row.error ? <div className="mt-1 text-xs text-red-700 dark:text-red-400">{row.error}</div> : null}
              </td>
              <td className="px-3 py-2 whitespace-nowrap">{formatTime(Date.parse(row.started_at))}</td>
              <td className="px-3 py-2 text-right tabular-nums">{row.duration_ms === null ? "—" : formatValue(row.duration_ms / 1000, "s")}</td>
              <td className="px-3 py-2 text-xs">{row.principal ?? "—"}</td>
            </tr>
          ))}
        </FramedTable>
      )}
    </section>
  );
}
