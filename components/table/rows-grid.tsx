"use client";
/** Rows of an Arrow table as a grid: long values cut in their cell and shown whole on a click; an optional action per row. */
import { useState, type ReactNode } from "react";
import { DataType, type Field, type Table as ArrowTable } from "apache-arrow";
import { cellText } from "@/lib/cell-format";
import { Button } from "../ui/controls";
import { Dialog } from "../ui/dialog";

/** Numbers read right-aligned, digits under digits. */
const isNumeric = (field: Field) => DataType.isInt(field.type) || DataType.isFloat(field.type) || DataType.isDecimal(field.type);

export function RowsGrid({ data, rowAction, label }: { data: ArrowTable; rowAction?: (row: Record<string, unknown>) => ReactNode; label?: string }) {
  const [expanded, setExpanded] = useState<{ column: string; value: string } | null>(null);
  const names = data.schema.fields.map((f) => f.name);
  const numeric = new Set(data.schema.fields.filter(isNumeric).map((f) => f.name));
  return (
    <>
      <div className="overflow-auto rounded-md border border-slate-200 dark:border-slate-800">
        <table className="w-full text-left text-sm" data-testid="data-grid" aria-label={label}>
          <thead className="sticky top-0 bg-slate-50 text-xs dark:bg-slate-900">
            <tr>
              {rowAction && <th className="px-2 py-2" aria-label="Actions" />}
              {names.map((n) => (
                <th key={n} className={`whitespace-nowrap px-3 py-2 font-mono ${numeric.has(n) ? "text-right" : ""}`}>
                  {n}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.toArray().map((row, r) => {
              const values = row as Record<string, unknown>;
              return (
                <tr key={r} className="border-t border-slate-100 dark:border-slate-800">
                  {rowAction && <td className="px-2 py-1">{rowAction(values)}</td>}
                  {names.map((n) => {
                    const { short, full } = cellText(values[n]);
                    return (
                      <td
                        key={n}
                        className={`max-w-xs overflow-hidden px-3 py-1 font-mono text-xs ${numeric.has(n) ? "text-right tabular-nums" : ""}`}
                        data-testid="data-cell"
                      >
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
              );
            })}
          </tbody>
        </table>
      </div>
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
    </>
  );
}
