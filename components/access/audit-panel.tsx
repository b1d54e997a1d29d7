"use client";
import { useState } from "react";
import { useAuditLog } from "@/lib/queries/access";
import { Badge, Button, Field, Select, TextInput } from "../ui/controls";
import { Empty, ErrorBanner, Loading } from "../ui/states";

const OUTCOME_TONE = { ok: "green", refused: "amber", failed: "red" } as const;

export function AuditPanel() {
  const [draft, setDraft] = useState({ principal: "", action: "", outcome: "", target: "", database: "" });
  const [filter, setFilter] = useState(draft);
  const log = useAuditLog(filter);
  const entries = log.data?.pages.flatMap((p) => p.entries) ?? [];
  return (
    <div className="flex flex-col gap-4">
      <form
        aria-label="Filter the audit log"
        className="grid grid-cols-2 gap-3 sm:grid-cols-6"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter(draft);
        }}
      >
        {(["principal", "action", "target", "database"] as const).map((name) => (
          <Field key={name} label={name[0].toUpperCase() + name.slice(1)} htmlFor={`audit-${name}`}>
            <TextInput id={`audit-${name}`} value={draft[name]} onChange={(e) => setDraft({ ...draft, [name]: e.target.value })} />
          </Field>
        ))}
        <Field label="Outcome" htmlFor="audit-outcome">
          <Select id="audit-outcome" value={draft.outcome} onChange={(e) => setDraft({ ...draft, outcome: e.target.value })}>
            <option value="">any</option>
            <option value="ok">ok</option>
            <option value="refused">refused</option>
            <option value="failed">failed</option>
          </Select>
        </Field>
        <div className="flex items-end">
          <Button type="submit">Filter</Button>
        </div>
      </form>
      <ErrorBanner error={log.error} />
      {log.isPending ? (
        <Loading label="Loading the audit log…" />
      ) : entries.length === 0 ? (
        <Empty title="No entries match">Mutating calls and refused calls appear here.</Empty>
      ) : (
        <table className="w-full text-left text-sm">
          <thead className="text-xs uppercase text-slate-500">
            <tr>
              <th className="py-2 pr-3">Time</th>
              <th className="pr-3">Principal</th>
              <th className="pr-3">Action</th>
              <th className="pr-3">Target</th>
              <th className="pr-3">Database</th>
              <th className="pr-3">Outcome</th>
              <th className="pr-3">Request</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={`${e.time}-${e.requestId}`} className="border-t border-slate-200 dark:border-slate-800" data-testid="audit-row">
                <td className="whitespace-nowrap py-1.5 pr-3">{new Date(e.time).toLocaleString()}</td>
                <td className="pr-3">{e.principal ? `${e.principal.kind}:${e.principal.name}` : "anonymous"}</td>
                <td className="pr-3">
                  <span className="font-mono text-xs">{e.action}</span>
                  {e.detail && <p className="max-w-md text-xs text-slate-500 dark:text-slate-400">{e.detail}</p>}
                </td>
                <td className="pr-3 font-mono text-xs">{e.target ?? "—"}</td>
                <td className="pr-3">{e.database}</td>
                <td className="pr-3">
                  <Badge tone={OUTCOME_TONE[e.outcome]}>
                    {e.outcome} {e.status}
                  </Badge>
                </td>
                <td className="pr-3 font-mono text-xs text-slate-500">{e.requestId}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {log.hasNextPage && (
        <Button variant="secondary" onClick={() => log.fetchNextPage()} disabled={log.isFetchingNextPage}>
          {log.isFetchingNextPage ? "Loading…" : "Load older entries"}
        </Button>
      )}
    </div>
  );
}
