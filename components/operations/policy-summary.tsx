"use client";
/** The automatic maintenance policy as its maintainer reports it: when it looks next, and what its last look found due. */
import Link from "next/link";
import { tableHref } from "@/lib/console-links";
import { joinIdentifier } from "@/lib/identifiers";
import type { OperationsOverview } from "@/lib/queries/operations";
import { useDatabase } from "@/lib/use-database";
import { formatTime } from "../table/format";
import { Badge } from "../ui/controls";

type Policy = NonNullable<OperationsOverview["policy"]>;

export function PolicySummary({ policy }: { policy: Policy }) {
  const database = useDatabase();
  const last = policy.last_pass;
  return (
    <section aria-labelledby="policy-heading" className="flex flex-col gap-2 rounded-lg border border-slate-200 p-3 text-sm dark:border-slate-800">
      <h2 id="policy-heading" className="text-sm font-semibold">
        Automatic maintenance
      </h2>
      <p>
        {policy.enabled ? "On for every table that does not turn it off. " : "Off, but for tables whose properties turn it on. "}
        Looks at the tables written since its last look every {policy.interval_seconds} s
        {policy.next_pass_at ? <>; next look at {formatTime(Date.parse(policy.next_pass_at))}</> : null}.
      </p>
      {last ? (
        <div>
          <p className="text-slate-600 dark:text-slate-300">
            Last look {formatTime(Date.parse(last.started_at))}
            {last.finished_at ? "" : " (under way)"}: {last.tables_looked_at} table{last.tables_looked_at === 1 ? "" : "s"} looked at,{" "}
            {last.due.length === 0 ? "nothing due." : `${last.due.length} job${last.due.length === 1 ? "" : "s"} due:`}
          </p>
          {last.due.length ? (
            <ul className="mt-1 flex flex-col gap-1" aria-label="Found due in the last look">
              {last.due.map((due) => (
                <li key={`${due.database}/${joinIdentifier(due.table)}/${due.kind}`} className="flex flex-wrap items-center gap-2">
                  <Badge tone={due.failed ? "red" : "slate"}>{due.kind === "compact" ? "compaction" : "version cleanup"}</Badge>
                  {due.database === database ? (
                    <Link className="font-mono text-indigo-700 hover:underline dark:text-indigo-300" href={tableHref(database, due.table)}>
                      {joinIdentifier(due.table)}
                    </Link>
                  ) : (
                    <span className="font-mono">
                      {due.database}: {joinIdentifier(due.table)}
                    </span>
                  )}
                  <span className="text-slate-600 dark:text-slate-400">{due.reason}</span>
                  {due.failed ? <span className="text-red-700 dark:text-red-400">failed: {due.failed}</span> : null}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : (
        <p className="text-slate-600 dark:text-slate-300">It has not looked yet since this instance became the maintainer.</p>
      )}
    </section>
  );
}
