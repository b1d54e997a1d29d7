"use client";
/** How the upload tab writes: insert (append or overwrite) or merge-insert, with its key columns and actions. */
import { Fragment } from "react";
import { mergeProblem } from "@/lib/merge-insert";
import type { WriteOptions } from "@/lib/upload";
import { TextInput } from "../ui/controls";

export const DEFAULT_OPTIONS: WriteOptions = {
  mode: "append",
  on: [],
  whenMatchedUpdateAll: true,
  whenMatchedUpdateAllFilt: "",
  whenNotMatchedInsertAll: true,
  whenNotMatchedBySourceDelete: false,
  whenNotMatchedBySourceDeleteFilt: "",
};

/** A merge's actions, each a checkbox with, where the action takes one, the filter that narrows it. */
const MERGE_ACTIONS: Array<{
  flag: "whenMatchedUpdateAll" | "whenNotMatchedInsertAll" | "whenNotMatchedBySourceDelete";
  label: string;
  filter?: { field: "whenMatchedUpdateAllFilt" | "whenNotMatchedBySourceDeleteFilt"; label: string; placeholder: string };
}> = [
  {
    flag: "whenMatchedUpdateAll",
    label: "Update matched rows",
    filter: { field: "whenMatchedUpdateAllFilt", label: "Update only where", placeholder: "only where… e.g. target.ts < source.ts" },
  },
  { flag: "whenNotMatchedInsertAll", label: "Insert unmatched rows" },
  {
    flag: "whenNotMatchedBySourceDelete",
    label: "Delete table rows missing from the file",
    filter: { field: "whenNotMatchedBySourceDeleteFilt", label: "Delete only where", placeholder: "only where… e.g. day < '2024-01-01'" },
  },
];

/** A merge the server would refuse (no key column, or nothing to do) is not offered. */
export const mergeInvalid = (options: WriteOptions) => options.mode === "merge" && mergeProblem(options) !== null;

export function WriteOptionsForm({ options, onChange, keyColumns }: { options: WriteOptions; onChange: (next: WriteOptions) => void; keyColumns: string[] }) {
  return (
    <fieldset className="flex flex-col gap-3 rounded-lg border border-slate-200 p-4 dark:border-slate-800">
      <legend className="px-1 text-sm font-semibold">How to write</legend>
      <div className="flex flex-wrap gap-4 text-sm" role="radiogroup" aria-label="Write mode">
        {(["append", "overwrite", "merge"] as const).map((m) => (
          <label key={m} className="flex items-center gap-1">
            <input type="radio" name="write-mode" value={m} checked={options.mode === m} onChange={() => onChange({ ...options, mode: m })} />
            {m === "append" ? "Insert: append" : m === "overwrite" ? "Insert: overwrite all rows" : "Merge (upsert)"}
          </label>
        ))}
      </div>
      {options.mode === "merge" && (
        <div className="flex flex-col gap-3 text-sm">
          <div className="flex flex-wrap items-center gap-3" role="group" aria-label="Key columns">
            <span className="text-slate-600 dark:text-slate-300">Key columns:</span>
            {keyColumns.map((c) => (
              <label key={c} className="flex items-center gap-1">
                <input
                  type="checkbox"
                  checked={options.on.includes(c)}
                  onChange={(e) => onChange({ ...options, on: e.target.checked ? [...options.on, c] : options.on.filter((x) => x !== c) })}
                />
                <span className="font-mono">{c}</span>
              </label>
            ))}
          </div>
          <div className="grid gap-2 sm:grid-cols-2">
            {MERGE_ACTIONS.map(({ flag, label, filter }) => (
              <Fragment key={flag}>
                <label className="flex items-center gap-2">
                  <input type="checkbox" checked={options[flag]} onChange={(e) => onChange({ ...options, [flag]: e.target.checked })} />
                  {label}
                </label>
                {filter ? (
                  <TextInput
                    aria-label={filter.label}
                    placeholder={filter.placeholder}
                    value={options[filter.field]}
                    onChange={(e) => onChange({ ...options, [filter.field]: e.target.value })}
                  />
                ) : (
                  <span />
                )}
              </Fragment>
            ))}
          </div>
          {mergeInvalid(options) && <p className="text-xs text-amber-700 dark:text-amber-300">Choose at least one key column and one action.</p>}
        </div>
      )}
    </fieldset>
  );
}
