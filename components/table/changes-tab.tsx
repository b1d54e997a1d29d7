"use client";
/**
 * What changed between two versions or tags: rows before and after, what the manifests say was written and taken
 * out, the schema's changes, and on a table with stable row ids the rows inserted and updated, paged, each updated
 * cell marked with what it was.
 */
import { useState } from "react";
import type { Table as ArrowTable } from "apache-arrow";
import { cellText } from "@/lib/cell-format";
import { STABLE_ROW_IDS } from "@/lib/contract/catalog";
import { useChangedRows, useTableChanges, type TableChanges } from "@/lib/queries/changes";
import { Button } from "../ui/controls";
import { ErrorBanner, Loading } from "../ui/states";
import { isNumeric } from "./rows-grid";
import { fromPicker, pickerValue, refOf, VersionPicker } from "./version-picker";
import { useTableAddress } from "./use-table-address";

const PAGE = 50;
const ROW_ID = "_rowid";

function Figure({ label, value, testId }: { label: string; value: number | undefined; testId: string }) {
  return (
    <div className="rounded-md border border-slate-200 px-3 py-2 dark:border-slate-800">
      <dt className="text-xs text-slate-500">{label}</dt>
      <dd className="text-lg font-semibold tabular-nums" data-testid={testId}>
        {value === undefined ? "—" : value.toLocaleString()}
      </dd>
    </div>
  );
}

/** A page of changed rows; with `previous`, the cells that differ from it are marked and say what they were. */
function ChangedRows({ rows, previous, label }: { rows: ArrowTable; previous?: ArrowTable; label: string }) {
  const names = rows.schema.fields.map((f) => f.name).filter((n) => n !== ROW_ID);
  const numeric = new Set(rows.schema.fields.filter(isNumeric).map((f) => f.name));
  const before = new Map((previous?.toArray() ?? []).map((r: Record<string, unknown>) => [String(r[ROW_ID]), r]));
  return (
    <div className="overflow-auto rounded-md border border-slate-200 dark:border-slate-800">
      <table className="w-full text-left text-xs" aria-label={label}>
        <thead className="bg-slate-50 dark:bg-slate-900">
          <tr>
            {names.map((n) => (
              <th key={n} className={`whitespace-nowrap px-3 py-2 font-mono ${numeric.has(n) ? "text-right" : ""}`}>
                {n}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.toArray().map((row: Record<string, unknown>) => {
            const old = before.get(String(row[ROW_ID]));
            return (
              <tr key={String(row[ROW_ID])} className="border-t border-slate-100 dark:border-slate-800" data-testid="changed-row">
                {names.map((n) => {
                  const now = cellText(row[n]);
                  const was = old && n in old ? cellText(old[n]) : null;
                  const changed = previous !== undefined && (was === null ? old !== undefined : was.full !== now.full);
                  return (
                    <td
                      key={n}
                      className={`max-w-xs truncate px-3 py-1 font-mono ${numeric.has(n) ? "text-right tabular-nums" : ""} ${changed ? "bg-amber-100 text-amber-950 dark:bg-amber-900/60 dark:text-amber-100" : ""}`}
                      title={changed ? `was ${was?.full ?? "not there"}` : undefined}
                      data-testid={changed ? "changed-cell" : undefined}
                    >
                      {now.short}
                      {changed && <span className="ml-2 text-[0.7rem] opacity-75 line-through">{was?.short ?? "—"}</span>}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function RowsSection({ database, table, changes, kind }: { database: string; table: string[]; changes: TableChanges; kind: "inserted" | "updated" }) {
  const [offset, setOffset] = useState(0);
  const ends = { from: changes.from_version, to: changes.to_version };
  const total = (kind === "inserted" ? changes.rows_inserted : changes.rows_updated) ?? 0;
  const rows = useChangedRows(database, table, ends, kind, { limit: PAGE, offset }, total > 0);
  const ids = rows.data ? Array.from({ length: rows.data.numRows }, (_, i) => String(rows.data.getChild(ROW_ID)!.get(i))) : [];
  const previous = useChangedRows(database, table, ends, "previous", { limit: ids.length, offset: 0, rowIds: ids }, kind === "updated" && ids.length > 0);
  const title = kind === "inserted" ? "Inserted rows" : "Updated rows";
  return (
    <section aria-labelledby={`changes-${kind}`} className="flex flex-col gap-2">
      <h3 id={`changes-${kind}`} className="font-semibold">
        {title} <span className="font-normal text-slate-500">({total.toLocaleString()})</span>
      </h3>
      {total === 0 ? (
        <p className="text-sm text-slate-500">None.</p>
      ) : rows.isPending || (kind === "updated" && previous.isPending) ? (
        <Loading label={`Reading ${title.toLowerCase()}…`} />
      ) : rows.error || previous.error ? (
        <ErrorBanner error={rows.error ?? previous.error} />
      ) : rows.data ? (
        <>
          <ChangedRows rows={rows.data} previous={kind === "updated" ? previous.data : undefined} label={title} />
          {total > PAGE && (
            <div className="flex items-center justify-between text-sm">
              <span>
                {offset + 1}–{Math.min(offset + PAGE, total)} of {total.toLocaleString()}
              </span>
              <div className="flex gap-2">
                <Button variant="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
                  Previous
                </Button>
                <Button variant="secondary" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>
                  Next
                </Button>
              </div>
            </div>
          )}
        </>
      ) : null}
    </section>
  );
}

/** The range's versions one by one: what made each, and how its row count moved; a compaction changes no row. */
function VersionSteps({ steps }: { steps: NonNullable<TableChanges["versions"]> }) {
  return (
    <section aria-labelledby="changes-versions">
      <h3 id="changes-versions" className="mb-1 font-semibold">
        Versions in the range
      </h3>
      <ol className="flex flex-col gap-0.5 text-sm" data-testid="changes-versions">
        {steps.map((step) => {
          const delta = step.rows_after - step.rows_before;
          return (
            <li key={step.version} data-testid="changes-version">
              <span className="font-mono">v{step.version}</span> {step.action ?? step.operation ?? "an unknown operation"}:{" "}
              {step.compaction ? (
                <span className="text-slate-500">files rewritten, no row changed</span>
              ) : (
                <span>
                  {step.rows_before.toLocaleString()} → {step.rows_after.toLocaleString()} rows
                  {delta !== 0 ? ` (${delta > 0 ? "+" : "−"}${Math.abs(delta).toLocaleString()})` : ""}
                </span>
              )}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

export function ChangesTab({ database, table }: { database: string; table: string[] }) {
  // One address for both ends, so that choosing one right after the other keeps both.
  const address = useTableAddress();
  const endOf = (end: "from" | "to") => ({ version: address.get(`${end}_version`), tag: address.get(`${end}_tag`) });
  const changes = useTableChanges(database, table, refOf(endOf("from")), refOf(endOf("to")));
  const data = changes.data;
  const picker = (end: "from" | "to", label: string, latestLabel?: string) => (
    <VersionPicker
      database={database}
      table={table}
      id={`changes-${end}`}
      label={label}
      value={pickerValue(endOf(end).version, endOf(end).tag)}
      onChange={(v) => {
        const picked = fromPicker(v);
        address.set({ [`${end}_version`]: picked.version, [`${end}_tag`]: picked.tag });
      }}
      latestLabel={latestLabel}
    />
  );
  return (
    <div className="flex flex-col gap-5">
      <div className="flex flex-wrap items-end gap-4">
        {picker("from", "From", "the version before")}
        {picker("to", "To")}
      </div>
      <ErrorBanner error={changes.error} />
      {changes.isPending ? (
        <Loading label="Comparing versions…" />
      ) : data ? (
        <>
          <p className="text-sm" data-testid="changes-range">
            {data.from_version === null ? `Version ${data.to_version}, the table's first` : `From version ${data.from_version} to version ${data.to_version}`}
          </p>
          <dl className="grid grid-cols-2 gap-3 sm:grid-cols-4 lg:grid-cols-5">
            <Figure label="Rows before" value={data.rows_before} testId="rows-before" />
            <Figure label="Rows after" value={data.rows_after} testId="rows-after" />
            {data.stable_row_ids ? (
              <>
                <Figure label="Inserted" value={data.rows_inserted} testId="rows-inserted" />
                <Figure label="Updated" value={data.rows_updated} testId="rows-updated" />
                <Figure label="Deleted" value={data.rows_deleted} testId="rows-deleted" />
              </>
            ) : (
              <>
                <Figure label="Rows written (inserts and updates)" value={data.rows_written} testId="rows-written" />
                <Figure label="Rows taken out (deletes and updates)" value={data.rows_removed} testId="rows-removed" />
              </>
            )}
          </dl>
          {data.versions && <VersionSteps steps={data.versions} />}
          <section aria-labelledby="changes-schema">
            <h3 id="changes-schema" className="mb-1 font-semibold">
              Schema
            </h3>
            {data.schema_changes.length === 0 ? (
              <p className="text-sm text-slate-500">No change.</p>
            ) : (
              <ul className="list-disc pl-5 text-sm" data-testid="schema-changes">
                {data.schema_changes.map((c) => (
                  <li key={`${c.kind}:${c.path.join(".")}`}>
                    <span className="font-mono">{c.path.join(".")}</span> {c.kind}
                    {c.kind === "renamed" && c.from ? ` from ${c.from}` : ""}
                    {c.what?.length ? `: ${c.what.join(", ")}` : ""} <span className="text-slate-500">({c.type})</span>
                  </li>
                ))}
              </ul>
            )}
          </section>
          {data.stable_row_ids ? (
            <>
              <RowsSection key={`i-${data.from_version}-${data.to_version}`} database={database} table={table} changes={data} kind="inserted" />
              <RowsSection key={`u-${data.from_version}-${data.to_version}`} database={database} table={table} changes={data} kind="updated" />
            </>
          ) : (
            <div
              role="note"
              className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
              data-testid="no-stable-row-ids"
            >
              <p className="font-medium">This table can say how many rows each version held and what made it, not which rows changed.</p>
              <p>
                Its rows were written without stable row ids (by a client that wrote its first version itself, or with{" "}
                <span className="font-mono">{STABLE_ROW_IDS}=false</span>), so they do not record the version that made or last changed them. Tables whose first
                version Quiver writes get them unless told otherwise, and then show the rows each range inserted, updated and deleted; an existing table cannot
                be given them: copy its rows into a new one.
              </p>
            </div>
          )}
        </>
      ) : null}
    </div>
  );
}
