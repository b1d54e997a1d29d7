/** A table in a rounded frame that scrolls sideways on a narrow screen, under a shaded row of column names. */
import type { ReactNode } from "react";

export const framedRowClass = "border-t border-slate-200 align-top dark:border-slate-800";

export function FramedTable({ columns, children }: { columns: Array<{ label: string; numeric?: boolean }>; children: ReactNode }) {
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 dark:border-slate-800">
      <table className="w-full text-left text-sm">
        <thead className="bg-slate-50 text-xs text-slate-500 dark:bg-slate-900 dark:text-slate-400">
          <tr>
            {columns.map(({ label, numeric }) => (
              <th key={label} className={`px-3 py-2 font-medium ${numeric ? "text-right" : ""}`}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
