"use client";
import { useState } from "react";
import { useCount, useRows, useTable } from "@/lib/queries/catalog";
import { Button, TextInput } from "../ui/controls";
import { Dialog } from "../ui/dialog";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { fromPicker, pickerValue, refOf, VersionPicker } from "./version-picker";
import { useTableAddress } from "./use-table-address";
import { cellText } from "@/lib/cell-format";

const PAGE = 50;
export function DataTab({ database, table }: { database: string; table: string[] }) {
  const address = useTableAddress();
  const at = refOf({ version: address.get("version"), tag: address.get("tag") });
  const filter = address.get("filter") ?? "";
  const offset = Number(address.get("offset") ?? 0);
  const selected = address.get("columns")?.split(",").filter(Boolean);
  const [draftFilter, setDraftFilter] = useState(filter);
  const [expanded, setExpanded] = useState<{ column: string; value: string } | null>(null);
  const described = useTable(database, table, at);
  const allColumns = described.data?.schema?.fields.map((f) => f.name) ?? [];
  const columns = selected && selected.length ? selected : undefined;
  const declaredOnly = described.data?.is_only_declared ?? false;
  const rows = useRows(database, table, { ...at, columns, filter, limit: PAGE, offset }, Boolean(described.data) && !declaredOnly);
  const count = useCount(database, table, { version: described.data?.version, filter }, Boolean(described.data) && !declaredOnly);

  if (described.isPending) return <Loading />;
  if (declaredOnly) return <Empty title="No data yet">This table is declared only. Upload a file or insert through the API to create it.</Empty>;
  const data = rows.data;
  const names = data?.schema.fields.map((f) => f.name) ?? [];
  return (
    <div className="flex flex-col gap-3">
      <div className="flex flex-wrap items-end gap-4">
        <VersionPicker
          database={database}
          table={table}
          id="data-at"
          label="Rows at"
          value={pickerValue(address.get("version"), address.get("tag"))}
          onChange={(v) => address.set({ ...fromPicker(v), offset: undefined })}
        />
        <form
          className="flex items-center gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            address.set({ filter: draftFilter, offset: undefined });
          }}
        >
          <TextInput
            aria-label="Filter expression"
            placeholder="SQL filter, e.g. id > 10 AND name LIKE 'a%'"
            value={draftFilter}
            onChange={(e) => setDraftFilter(e.target.value)}
            className="w-96"
          />
          <Button type="submit" variant="secondary">
            Apply
          </Button>
        </form>
      </div>
      <fieldset className="flex flex-wrap gap-3 text-sm">
        <legend className="mb-1 text-xs font-medium text-slate-600 dark:text-slate-300">Columns</legend>
        {allColumns.map((c) => (
          <label key={c} className="flex items-center gap-1">
            <input
              type="checkbox"
              checked={!columns || columns.includes(c)}
              onChange={(e) => {
                const base = columns ?? allColumns;
                const next = e.target.checked ? allColumns.filter((x) => base.includes(x) || x === c) : base.filter((x) => x !== c);
                address.set({ columns: next.length === allColumns.length ? undefined : next.join(","), offset: undefined });
              }}
            />
            <span className="font-mono">{c}</span>
          </label>
        ))}
      </fieldset>
      <ErrorBanner error={rows.error ?? count.error} />
      {rows.isPending ? (
        <Loading label="Reading rows…" />
      ) : data ? (
        <>
          <div className="overflow-auto rounded-md border border-slate-200 dark:border-slate-800">
            <table className="w-full text-left text-sm" data-testid="data-grid">
              <thead className="sticky top-0 bg-slate-50 text-xs dark:bg-slate-900">
                <tr>
                  {names.map((n) => (
                    <th key={n} className="whitespace-nowrap px-3 py-2 font-mono">
                      {n}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {data.toArray().map((row, r) => (
                  <tr key={r} className="border-t border-slate-100 dark:border-slate-800">
                    {names.map((n) => {
                      const { short, full } = cellText((row as Record<string, unknown>)[n]);
                      return (
                        <td key={n} className="max-w-xs overflow-hidden px-3 py-1 font-mono text-xs" data-testid="data-cell">
                          {short === full ? (
                            <span className="block truncate">{short}</span>
                          ) : (
                            <button
                              type="button"
                              className="block max-w-full truncate text-left hover:text-indigo-600 hover:underline"
                              title="Show the whole value"
                              onClick={() => setExpanded({ column: n, value: full })}
                            >
                              {short}
                            </button>
                          )}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="flex items-center justify-between text-sm">
            <span data-testid="data-range">
              {data.numRows === 0 ? "No rows" : `Rows ${offset + 1}–${offset + data.numRows}`} of {count.data?.toLocaleString() ?? "…"}
              {filter ? " matching" : ""}
            </span>
            <div className="flex gap-2">
              <Button variant="secondary" disabled={offset === 0} onClick={() => address.set({ offset: Math.max(0, offset - PAGE) || undefined })}>
                Previous
              </Button>
              <Button
                variant="secondary"
                disabled={count.data !== undefined ? offset + PAGE >= count.data : data.numRows < PAGE}
                onClick={() => address.set({ offset: offset + PAGE })}
              >
                Next
              </Button>
            </div>
          </div>
        </>
      ) : null}
      <Dialog open={expanded !== null} onClose={() => setExpanded(null)} title={`Value of ${expanded?.column ?? ""}`}>
        <pre className="max-h-96 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-100 p-3 font-mono text-xs dark:bg-slate-800">
          {expanded?.value}
        </pre>
        <div className="mt-3 flex justify-end">
          <Button variant="secondary" onClick={() => setExpanded(null)}>
            Close
          </Button>
        </div>
      </Dialog>
    </div>
  );
}
