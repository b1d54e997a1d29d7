"use client";
/** One file of the upload tab: what reading it found, its conversion and its send, each as its phase has them. */
import Link from "next/link";
import { CSV_TYPES } from "@/lib/csv";
import { tableHref } from "@/lib/console-links";
import type { WriteOptions } from "@/lib/upload";
import { uploadable, type Staged } from "@/lib/upload-machine";
import { Badge, Button, Select } from "../ui/controls";
import { ErrorBanner } from "../ui/states";
import { formatBytes } from "./format";
import { KIND_NAMES } from "./upload-preview";

function display(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "bigint") return v.toString();
  return typeof v === "object" ? JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x)) : String(v);
}

/** How far the file's conversion or send has come, in percent. */
function percentOf(item: Staged): number {
  if (item.phase === "preparing") return Math.round((item.parsed / item.file.size) * 100);
  if (item.phase === "uploading" && item.total) return Math.round((item.sent / item.total) * 100);
  return 0;
}

export interface StagedFileActions {
  chooseType: (index: number, columnType: string) => void;
  convert: () => void;
  cancel: () => void;
  send: () => void;
}

export function StagedFile({
  item,
  database,
  table,
  declaredOnly,
  mode,
  sendBlocked,
  actions,
}: {
  item: Staged;
  database: string;
  table: string[];
  declaredOnly: boolean;
  mode: WriteOptions["mode"];
  sendBlocked: boolean;
  actions: StagedFileActions;
}) {
  const percent = percentOf(item);
  const csv = "csv" in item ? item.csv : undefined;
  const preview = "preview" in item ? item.preview : undefined;
  const problems = "problems" in item ? item.problems : undefined;
  const error = "error" in item ? item.error : undefined;
  const rows = "body" in item ? item.rows : undefined;
  const bad = "body" in item ? item.bad : undefined;
  return (
    <section
      aria-label={`Upload ${item.file.name}`}
      className="flex flex-col gap-3 rounded-lg border border-slate-200 p-4 dark:border-slate-800"
      data-testid="staged-file"
    >
      <div className="flex flex-wrap items-center justify-between gap-2">
        <p className="font-medium">
          {item.file.name}{" "}
          <span className="text-sm text-slate-500">
            ({formatBytes(item.file.size)}, {KIND_NAMES[item.kind]})
          </span>
        </p>
        <Badge tone={item.phase === "done" ? "green" : item.phase === "failed" ? "red" : "slate"}>{item.phase}</Badge>
      </div>
      <ErrorBanner error={error} />
      {problems && problems.length > 0 && (
        <ul role="alert" className="list-disc pl-5 text-sm text-red-700 dark:text-red-300" data-testid="mapping-problems">
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      {item.kind === "csv" && csv && (
        <div className="overflow-auto">
          <table className="text-left text-xs" data-testid="inferred-schema">
            <thead>
              <tr className="text-slate-500">
                {csv.columns.map((c) => (
                  <th key={c.name} className="px-2 py-1 font-mono">
                    {c.name}
                  </th>
                ))}
              </tr>
              <tr>
                {csv.columns.map((c, i) => (
                  <th key={c.name} className="px-2 pb-1 font-normal">
                    {declaredOnly && item.phase === "review" ? (
                      <Select aria-label={`Type of ${c.name}`} value={c.type} onChange={(e) => actions.chooseType(i, e.target.value)}>
                        {CSV_TYPES.map((t) => (
                          <option key={t}>{t}</option>
                        ))}
                      </Select>
                    ) : (
                      <span className="font-mono text-indigo-700 dark:text-indigo-300">
                        {c.type}
                        {c.nullable ? "?" : ""}
                      </span>
                    )}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {csv.sample.slice(0, 8).map((row, r) => (
                <tr key={r} className="border-t border-slate-100 dark:border-slate-800">
                  {csv.indexes.map((c, i) => (
                    <td key={i} className="max-w-[12rem] truncate px-2 py-0.5 font-mono">
                      {row[c]}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {preview && (
        <div className="text-xs">
          <p className="font-mono text-slate-600 dark:text-slate-300">{preview.schema.join(", ")}</p>
          {preview.note && <p className="text-slate-500">{preview.note}</p>}
          <pre className="mt-1 max-h-40 overflow-auto rounded bg-slate-50 p-2 dark:bg-slate-900">
            {preview.rows.map((r) => JSON.stringify(r, (_, v) => (typeof v === "bigint" ? v.toString() : v))).join("\n")}
          </pre>
        </div>
      )}
      {item.kind === "csv" && item.phase === "review" && declaredOnly && (
        <div>
          <Button onClick={actions.convert}>Check all rows</Button>
        </div>
      )}
      {(item.phase === "preparing" || item.phase === "uploading") && (
        <div className="flex items-center gap-3">
          <progress className="h-2 flex-1" max={100} value={percent} aria-label={item.phase === "preparing" ? "Parsing" : "Uploading"} />
          <span className="text-xs text-slate-500" data-testid="progress-text">
            {item.phase === "preparing" ? `parsed ${formatBytes(item.parsed)}` : `sent ${formatBytes(item.sent)} of ${formatBytes(item.total)}`} ({percent}%)
          </span>
          <Button variant="secondary" onClick={actions.cancel}>
            Cancel
          </Button>
        </div>
      )}
      {item.kind !== "arrow" && rows !== undefined && (
        <p className="text-sm" data-testid="conversion-summary">
          {rows.toLocaleString()} rows ready
          {"badCount" in item && item.badCount ? `, ${item.badCount.toLocaleString()} rows will not convert and are left out` : ", every row converts"}.
        </p>
      )}
      {bad && bad.length > 0 && (
        <details className="text-xs" open>
          <summary className="cursor-pointer text-amber-800 dark:text-amber-300">Rows that will not convert</summary>
          <table className="mt-1 text-left" data-testid="bad-rows">
            <tbody>
              {bad.slice(0, 50).map((b, i) => (
                <tr key={i}>
                  <td className="pr-3 font-mono">line {b.line}</td>
                  <td className="pr-3 font-mono">{b.column}</td>
                  <td className="pr-3 font-mono">{display(b.value)}</td>
                  <td>{b.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
      {item.phase === "ready" && (
        <div>
          <Button onClick={actions.send} disabled={!uploadable(item) || sendBlocked}>
            {mode === "merge" ? "Merge into table" : mode === "overwrite" ? "Overwrite table" : "Insert into table"}
          </Button>
        </div>
      )}
      {item.phase === "done" && (
        <p role="status" className="text-sm text-emerald-700 dark:text-emerald-300" data-testid="upload-result">
          {item.result.num_inserted_rows.toLocaleString()} inserted
          {"num_updated_rows" in item.result &&
            `, ${item.result.num_updated_rows.toLocaleString()} updated, ${item.result.num_deleted_rows.toLocaleString()} deleted`}{" "}
          →{" "}
          <Link className="underline" href={tableHref(database, table, "data", { version: item.result.version })}>
            version {item.result.version}
          </Link>
        </p>
      )}
    </section>
  );
}
