"use client";
/** How the upload tab writes: insert (append or overwrite) or merge-insert, with its key columns and actions. */
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
            <label className="flex items-center gap-2">
              <input
                type="checkbox"
                checked={options.whenMatchedUpdateAll}
                onChange={(e) => onChange({ ...options, whenMatchedUpdateAll: e.target.checked })}
              />
              Update matched rows
            </label>
            <TextInput
              aria-label="Update only where"
              placeholder="only where… e.g. target.ts < source.ts"
              value={options.whenMatchedUpdateAllFilt}
              onChange={(e) => onChange({ ...options, whenMatchedUpdateAllFilt: e.target.value })}
            />
            <label className="flex items-center gap-2">
              <input
                type="checkbox"
                checked={options.whenNotMatchedInsertAll}
                onChange={(e) => onChange({ ...options, whenNotMatchedInsertAll: e.target.checked })}
              />
              Insert unmatched rows
            </label>
            <span />
            <label className="flex items-center gap-2">
              <input
                type="checkbox"
                checked={options.whenNotMatchedBySourceDelete}
                onChange={(e) => onChange({ ...options, whenNotMatchedBySourceDelete: e.target.checked })}
              />
              Delete table rows missing from the file
            </label>
            <TextInput
              aria-label="Delete only where"
              placeholder="only where… e.g. day < '2024-01-01'"
              value={options.whenNotMatchedBySourceDeleteFilt}
              onChange={(e) => onChange({ ...options, whenNotMatchedBySourceDeleteFilt: e.target.value })}
            />
          </div>
          {mergeInvalid(options) && <p className="text-xs text-amber-700 dark:text-amber-300">Choose at least one key column and one action.</p>}
        </div>
      )}
    </fieldset>
  );
}
