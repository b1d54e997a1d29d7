"use client";
/**
 * Rows of an Arrow table as a grid: long values cut in their cell and shown whole on a click, binary values by what
 * they hold (media-cell.tsx); each row opens whole in a detail view; an optional action per row.
 */
import { useState, type ReactNode } from "react";
import { DataType, Precision, type Field, type Table as ArrowTable } from "apache-arrow";
import { cellText, float32Text } from "@/lib/cell-format";
import { cellKey, type CellAddress, type CellSummary } from "@/lib/queries/media";
import { Button } from "../ui/controls";
import { Dialog } from "../ui/dialog";
import { InlineMedia, MediaCell, MediaValue } from "./media-cell";

/** Numbers read right-aligned, digits under digits. */
export const isNumeric = (field: Field) => DataType.isInt(field.type) || DataType.isFloat(field.type) || DataType.isDecimal(field.type);

const ROW_ID = "_rowid";

/** The binary columns of the rows, which the query left out: what each cell holds, and where its value is. */
export interface GridMedia {
  columns: string[];
  /** The columns in the order the table has them, media among them. */
  order: string[];
  cells: Map<string, CellSummary> | undefined;
  address: (column: string, rowId: string) => CellAddress;
}

/** The grid's order, when its columns can order it: the column it is ordered by, and what a header's click does. */
export interface GridSort {
  by: { column: string; ascending: boolean } | undefined;
  toggle: (column: string) => void;
}

/** What names a row to a person: a column called `id` (or ending in `_id`), else the first column. */
function keyColumn(names: string[]): string | undefined {
  return names.find((n) => n.toLowerCase() === "id") ?? names.find((n) => /(^|_)id$/i.test(n)) ?? names[0];
}

export function RowsGrid({
  data,
  rowAction,
  label,
  media,
  sort,
  inlineMedia = false,
}: {
  data: ArrowTable;
  rowAction?: (row: Record<string, unknown>) => ReactNode;
  label?: string;
  media?: GridMedia;
  sort?: GridSort;
  /** Binary values came with the rows (a SQL result): each shown by what its own bytes hold. */
  inlineMedia?: boolean;
}) {
  const [expanded, setExpanded] = useState<{ column: string; value: string } | null>(null);
  const [opened, setOpened] = useState<number | null>(null);
  const dataNames = data.schema.fields.map((f) => f.name).filter((n) => n !== ROW_ID);
  const isMedia = (n: string) => media?.columns.includes(n) ?? false;
  const inlineBinary = new Set(
    inlineMedia ? data.schema.fields.filter((f) => DataType.isBinary(f.type) || DataType.isLargeBinary(f.type)).map((f) => f.name) : [],
  );
  const inline = (row: Record<string, unknown>, n: string, r: number | null) => {
    const bytes = row[n];
    return bytes instanceof Uint8Array ? <InlineMedia bytes={bytes} label={`${n} of row ${r === null ? "" : r + 1}`} full={r === null} /> : <span>null</span>;
  };
  const names = media ? [...media.order.filter((n) => isMedia(n) || dataNames.includes(n)), ...dataNames.filter((n) => !media.order.includes(n))] : dataNames;
  const numeric = new Set(data.schema.fields.filter(isNumeric).map((f) => f.name));
  // A 32-bit float reads at its own precision (_distance 0.06414019, not 0.0641401857138).
  const float32 = new Set(data.schema.fields.filter((f) => DataType.isFloat(f.type) && f.type.precision === Precision.SINGLE).map((f) => f.name));
  const valueOf = (row: Record<string, unknown>, n: string) => {
    const value = row[n];
    return float32.has(n) && typeof value === "number" ? Number(float32Text(value)) : value;
  };
  const rows = data.toArray() as Array<Record<string, unknown>>;
  const rowIdOf = (row: Record<string, unknown>) => String(row[ROW_ID]);
  const openedRow = opened === null ? null : rows[opened];
  const key = keyColumn(dataNames);
  const rowTitle = (row: Record<string, unknown>) => (key ? `Row ${key} ${cellText(row[key]).short}` : "Row");
  return (
    <>
      <div className="overflow-auto rounded-md border border-slate-200 dark:border-slate-800">
        <table className="w-full text-left text-sm" data-testid="data-grid" aria-label={label}>
          <thead className="sticky top-0 bg-slate-50 text-xs dark:bg-slate-900">
            <tr>
              <th className="px-2 py-2" aria-label="Actions" />
              {names.map((n) => {
                const sorted = sort?.by?.column === n ? (sort.by.ascending ? "ascending" : "descending") : undefined;
                return (
                  <th
                    key={n}
                    aria-sort={sort ? (sorted ?? "none") : undefined}
                    className={`whitespace-nowrap px-3 py-2 font-mono ${numeric.has(n) ? "text-right" : ""}`}
                  >
                    {sort && !isMedia(n) ? (
                      <button type="button" className="font-mono hover:underline" title={`Order the rows by ${n}`} onClick={() => sort.toggle(n)}>
                        {n}
                        {sorted ? (sorted === "ascending" ? " ▲" : " ▼") : ""}
                      </button>
                    ) : (
                      n
                    )}
                  </th>
                );
              })}
              {/* Takes the width the values do not need, so that each column is as wide as its values. */}
              <th className="w-full" role="presentation" />
            </tr>
          </thead>
          <tbody>
            {rows.map((values, r) => (
              <tr key={r} className="border-t border-slate-100 dark:border-slate-800">
                <td className="whitespace-nowrap px-2 py-1">
                  <Button variant="ghost" className="px-1 py-0 text-xs" title="Show every value of this row whole" onClick={() => setOpened(r)}>
                    Open
                  </Button>
                  {rowAction?.(values)}
                </td>
                {names.map((n) => {
                  if (isMedia(n) && media) {
                    const rowId = rowIdOf(values);
                    return (
                      <td key={n} className="px-3 py-1 text-xs" data-testid="data-cell">
                        <MediaCell summary={media.cells?.get(cellKey(rowId, n))} at={media.address(n, rowId)} onOpen={() => setOpened(r)} />
                      </td>
                    );
                  }
                  if (inlineBinary.has(n))
                    return (
                      <td key={n} className="px-3 py-1 text-xs" data-testid="data-cell">
                        {inline(values, n, r)}
                      </td>
                    );
                  const { short, full } = cellText(valueOf(values, n));
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
                          className={`block max-w-full truncate hover:text-indigo-600 hover:underline ${numeric.has(n) ? "ml-auto text-right" : "text-left"}`}
                          title="Show the whole value"
                          onClick={() => setExpanded({ column: n, value: full })}
                        >
                          {short}
                        </button>
                      )}
                    </td>
                  );
                })}
                <td role="presentation" />
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Dialog open={expanded !== null} onClose={() => setExpanded(null)} title={`Value of ${expanded?.column ?? ""}`}>
        <pre className="max-h-96 overflow-auto whitespace-pre-wrap rounded bg-slate-100 p-3 font-mono text-xs [overflow-wrap:anywhere] dark:bg-slate-800">
          {expanded?.value}
        </pre>
        <div className="mt-3 flex justify-end">
          <Button variant="secondary" onClick={() => setExpanded(null)}>
            Close
          </Button>
        </div>
      </Dialog>
      <Dialog wide open={openedRow !== null} onClose={() => setOpened(null)} title={openedRow ? rowTitle(openedRow) : "Row"}>
        {openedRow && (
          <dl className="grid max-h-[70vh] grid-cols-[minmax(6rem,auto)_1fr] gap-x-4 gap-y-3 overflow-auto text-sm" data-testid="row-detail">
            {names.map((n) => (
              <div key={n} className="contents">
                <dt className="font-mono text-xs text-slate-500">{n}</dt>
                <dd className="min-w-0">
                  {isMedia(n) && media ? (
                    <MediaValue summary={media.cells?.get(cellKey(rowIdOf(openedRow), n))} at={media.address(n, rowIdOf(openedRow))} />
                  ) : inlineBinary.has(n) ? (
                    inline(openedRow, n, null)
                  ) : (
                    <pre className="whitespace-pre-wrap font-mono text-xs [overflow-wrap:anywhere]">{cellText(valueOf(openedRow, n)).full}</pre>
                  )}
                </dd>
              </div>
            ))}
          </dl>
        )}
        <div className="mt-3 flex justify-end">
          <Button variant="secondary" onClick={() => setOpened(null)}>
            Close
          </Button>
        </div>
      </Dialog>
    </>
  );
}
