"use client";
/**
 * The SQL workspace: an editor with completion, run and cancel, the result as the data grid shows rows (media
 * included) or as a chart, export of the result, the person's saved queries (kept by the server) and history (kept
 * in this browser), and an error marked where it is in the text.
 */
import { useEffect, useMemo, useState, useSyncExternalStore } from "react";
import type { Table } from "apache-arrow";
import { ApiError } from "@/lib/api-client";
import { useWhoAmI } from "@/lib/queries/access";
import { runSql, useColumnsOf, useDeleteSavedQuery, useSavedQueries, useSaveQuery, useSqlVocabulary, WORKSPACE_ROWS, type SqlResult } from "@/lib/queries/sql";
import { resultArrowFile, resultCsv, resultParquet } from "@/lib/result-export";
import { useDatabase } from "@/lib/use-database";
import { Badge, Button, TextInput } from "../ui/controls";
import { Dialog } from "../ui/dialog";
import { ErrorBanner } from "../ui/states";
import { RowsGrid } from "../table/rows-grid";
import { ResultChart, chartableColumns } from "./result-chart";
import { SqlEditor, type EditorVocabulary } from "./sql-editor";

interface HistoryEntry {
  sql: string;
  at: string;
  rows: number | null;
  ms: number;
  error: string | null;
}

const HISTORY_LENGTH = 100;
/** The most tables whose columns are fetched for completion at once: those the text names. */
const COLUMN_TABLES = 20;

const HISTORY_CHANGED = "quiver-sql-history";
const subscribe = (changed: () => void) => {
  window.addEventListener(HISTORY_CHANGED, changed);
  window.addEventListener("storage", changed);
  return () => {
    window.removeEventListener(HISTORY_CHANGED, changed);
    window.removeEventListener("storage", changed);
  };
};

/** The person's history in this browser, per database (other tabs' runs included). */
function useHistory(key: string | null) {
  const raw = useSyncExternalStore(
    subscribe,
    () => (key ? localStorage.getItem(key) : null),
    () => null,
  );
  const entries = useMemo(() => {
    try {
      return JSON.parse(raw ?? "[]") as HistoryEntry[];
    } catch {
      return [];
    }
  }, [raw]);
  const write = (next: HistoryEntry[] | null) => {
    if (!key) return;
    if (next) localStorage.setItem(key, JSON.stringify(next));
    else localStorage.removeItem(key);
    window.dispatchEvent(new Event(HISTORY_CHANGED));
  };
  return {
    entries,
    add: (entry: HistoryEntry) => write([entry, ...entries.filter((e) => e.sql !== entry.sql)].slice(0, HISTORY_LENGTH)),
    clear: () => write(null),
  };
}

function download(name: string, type: string, data: BlobPart) {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The forms a result is saved in, each made from the rows on screen. */
const EXPORTS: Array<{ label: string; file: string; type: string; bytes: (table: Table) => BlobPart }> = [
  { label: "CSV", file: "result.csv", type: "text/csv", bytes: resultCsv },
  { label: "Parquet", file: "result.parquet", type: "application/vnd.apache.parquet", bytes: resultParquet },
  { label: "Arrow", file: "result.arrow", type: "application/vnd.apache.arrow.file", bytes: (table) => resultArrowFile(table) as Uint8Array<ArrayBuffer> },
];

const tableName = (id: string[]) => id.map((p) => (/^[a-z_][a-z0-9_]*$/.test(p) ? p : `"${p.replace(/"/g, '""')}"`)).join(".");

export function SqlWorkspace() {
  const database = useDatabase();
  const whoami = useWhoAmI(database);
  const vocabulary = useSqlVocabulary(database);
  const saved = useSavedQueries(database);
  const save = useSaveQuery(database);
  const remove = useDeleteSavedQuery(database);
  const principal = whoami.data?.principal;
  const history = useHistory(principal ? `quiver.sql.history.${principal.kind}:${principal.id}.${database}` : null);

  const [text, setText] = useState("");
  const [result, setResult] = useState<SqlResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [running, setRunning] = useState<{ controller: AbortController; started: number } | null>(null);
  const [elapsed, setElapsed] = useState(0);
  const [view, setView] = useState<"grid" | "chart">("grid");
  const [current, setCurrent] = useState<{ id: string; name: string } | null>(null);
  const [saving, setSaving] = useState(false);
  const [saveName, setSaveName] = useState("");

  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setElapsed(performance.now() - running.started), 100);
    return () => clearInterval(timer);
  }, [running]);

  const tables = useMemo(() => vocabulary.data?.tables ?? [], [vocabulary.data]);
  const named = useMemo(() => {
    const lower = text.toLowerCase();
    return tables.filter((id) => lower.includes(id[id.length - 1].toLowerCase())).slice(0, COLUMN_TABLES);
  }, [tables, text]);
  const columns = useColumnsOf(database, named);
  const editorVocabulary: EditorVocabulary = useMemo(
    () => ({ tables, columns, functions: vocabulary.data?.functions ?? [] }),
    [tables, columns, vocabulary.data],
  );

  const run = async () => {
    const statement = text.trim();
    if (!statement || running) return;
    const controller = new AbortController();
    setRunning({ controller, started: performance.now() });
    setElapsed(0);
    setError(null);
    const started = performance.now();
    try {
      const answer = await runSql(database, statement, controller.signal);
      setResult(answer);
      if (!chartableColumns(answer.table).length) setView("grid");
      history.add({ sql: statement, at: new Date().toISOString(), rows: answer.table.numRows, ms: Math.round(answer.elapsedMs), error: null });
    } catch (err) {
      const cancelled = controller.signal.aborted;
      setError(cancelled ? null : err);
      history.add({
        sql: statement,
        at: new Date().toISOString(),
        rows: null,
        ms: Math.round(performance.now() - started),
        error: cancelled ? "cancelled" : err instanceof ApiError ? err.detail : String(err),
      });
    } finally {
      setRunning(null);
    }
  };
  const cancel = () => running?.controller.abort();

  const apiError = error instanceof ApiError ? error : null;
  const editorError = apiError && apiError.position !== null ? { message: apiError.detail, position: apiError.position } : null;
  const facts = result?.facts;

  const saveAs = async (asNew: boolean) => {
    const answer = await save.mutateAsync({ id: asNew ? undefined : current?.id, name: saveName.trim(), sql: text });
    setCurrent({ id: answer.id, name: answer.name });
    setSaving(false);
  };

  return (
    <div className="grid gap-4 lg:grid-cols-[15rem_minmax(0,1fr)]">
      <aside className="flex flex-col gap-4 text-sm" aria-label="Tables, saved queries and history">
        <section>
          <h2 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">Tables</h2>
          <ul className="max-h-48 overflow-auto" data-testid="sql-tables">
            {tables.map((id) => (
              <li key={id.join(".")}>
                <button
                  type="button"
                  className="w-full truncate text-left font-mono text-xs hover:text-indigo-600"
                  title={`Add ${tableName(id)} to the statement`}
                  onClick={() => setText((t) => (t.trim() ? `${t} ${tableName(id)}` : `SELECT * FROM ${tableName(id)} LIMIT 100`))}
                >
                  {tableName(id)}
                </button>
              </li>
            ))}
            {vocabulary.isSuccess && tables.length === 0 && <li className="text-xs text-slate-500">No table you may read.</li>}
          </ul>
        </section>
        <section>
          <h2 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">Saved</h2>
          <ul className="max-h-56 overflow-auto" data-testid="sql-saved">
            {saved.data?.queries.map((q) => (
              <li key={q.id} className="group flex items-center gap-1">
                <button
                  type="button"
                  className={`min-w-0 flex-1 truncate text-left text-xs hover:text-indigo-600 ${current?.id === q.id ? "font-semibold" : ""}`}
                  title={q.sql}
                  onClick={() => {
                    setText(q.sql);
                    setCurrent({ id: q.id, name: q.name });
                  }}
                >
                  {q.name}
                </button>
                <button
                  type="button"
                  className="text-xs text-slate-400 hover:text-red-600"
                  aria-label={`Delete saved query ${q.name}`}
                  onClick={() => {
                    if (current?.id === q.id) setCurrent(null);
                    remove.mutate(q.id);
                  }}
                >
                  ✕
                </button>
              </li>
            ))}
            {saved.isSuccess && saved.data.queries.length === 0 && <li className="text-xs text-slate-500">Save a query to keep it here.</li>}
          </ul>
        </section>
        <section>
          <div className="mb-1 flex items-center justify-between">
            <h2 className="text-xs font-semibold uppercase tracking-wide text-slate-500">History</h2>
            {history.entries.length > 0 && (
              <button type="button" className="text-xs text-slate-500 underline" onClick={history.clear}>
                Clear
              </button>
            )}
          </div>
          <ol className="max-h-72 overflow-auto" data-testid="sql-history">
            {history.entries.map((h) => (
              <li key={h.at}>
                <button type="button" className="w-full text-left text-xs hover:text-indigo-600" title={h.sql} onClick={() => setText(h.sql)}>
                  <span className="block truncate font-mono">{h.sql}</span>
                  <span className={`block ${h.error ? "text-red-600 dark:text-red-400" : "text-slate-500"}`}>
                    {h.error ? (h.error === "cancelled" ? "cancelled" : "failed") : `${h.rows} rows`} · {h.ms} ms
                  </span>
                </button>
              </li>
            ))}
          </ol>
        </section>
      </aside>

      <section className="flex min-w-0 flex-col gap-3" aria-label="Statement and result">
        <SqlEditor value={text} onChange={setText} onRun={() => void run()} vocabulary={editorVocabulary} error={editorError} />
        <div className="flex flex-wrap items-center gap-2">
          <Button onClick={() => void run()} disabled={!!running || !text.trim()} title="Run the statement (Ctrl+Enter)">
            Run
          </Button>
          {running && (
            <Button variant="danger" onClick={cancel}>
              Cancel
            </Button>
          )}
          <Button
            variant="secondary"
            disabled={!text.trim()}
            onClick={() => {
              setSaveName(current?.name ?? "");
              setSaving(true);
            }}
          >
            Save…
          </Button>
          {current && <span className="text-xs text-slate-500">{current.name}</span>}
          <span className="text-xs text-slate-500" role="status" aria-live="polite">
            {running ? `Running… ${(elapsed / 1000).toFixed(1)} s` : result ? `${result.table.numRows} rows · ${Math.round(result.elapsedMs)} ms` : ""}
          </span>
          {result && !running && (
            <span className="ml-auto flex gap-1" aria-label="Export the result">
              {EXPORTS.map((e) => (
                <Button
                  key={e.label}
                  variant="ghost"
                  className="text-xs"
                  aria-label={`Export as ${e.label}`}
                  onClick={() => download(e.file, e.type, e.bytes(result.table))}
                >
                  {e.label}
                </Button>
              ))}
            </span>
          )}
        </div>

        <ErrorBanner error={error} onDismiss={() => setError(null)} />

        {result && facts && (
          <>
            {facts.truncated && (
              <p className="rounded-md bg-amber-50 px-3 py-2 text-xs text-amber-900 dark:bg-amber-950 dark:text-amber-100" role="note">
                The statement answers more rows: these are the first {WORKSPACE_ROWS.toLocaleString()}. Add a LIMIT, or ask the API for more (POST /v1/sql).
              </p>
            )}
            <details className="text-xs text-slate-600 dark:text-slate-400">
              <summary>
                Read {facts.sources.length} table{facts.sources.length === 1 ? "" : "s"} in {facts.read_ms} ms, ran in {facts.run_ms} ms (opened in{" "}
                {facts.open_ms} ms, planned in {facts.plan_ms} ms)
              </summary>
              <ul className="mt-1 flex flex-col gap-1" data-testid="sql-sources">
                {facts.sources.map((s) => (
                  <li key={`${s.table.join(".")}@${s.version}`} className="font-mono">
                    {s.table.join(".")} v{s.version}: {s.rows} rows of {s.columns.join(", ")}
                    {s.filter ? ` where ${s.filter}` : ""}
                    {s.search ? ` (${s.search})` : s.limit !== null ? ` limit ${s.limit}` : ""}
                  </li>
                ))}
              </ul>
            </details>
            <div className="flex gap-1" role="tablist" aria-label="Result as">
              {(["grid", "chart"] as const).map((v) => (
                <button
                  key={v}
                  type="button"
                  role="tab"
                  aria-selected={view === v}
                  disabled={v === "chart" && !chartableColumns(result.table).length}
                  title={v === "chart" && !chartableColumns(result.table).length ? "The result has no number column to chart" : undefined}
                  className={`rounded-md px-3 py-1 text-sm disabled:opacity-40 ${view === v ? "bg-slate-200 font-medium dark:bg-slate-800" : "hover:bg-slate-100 dark:hover:bg-slate-900"}`}
                  onClick={() => setView(v)}
                >
                  {v === "grid" ? "Rows" : "Chart"}
                </button>
              ))}
              {facts.truncated && <Badge tone="amber">first {result.table.numRows.toLocaleString()} rows</Badge>}
            </div>
            {view === "grid" ? <RowsGrid data={result.table} label="Result" inlineMedia /> : <ResultChart table={result.table} />}
          </>
        )}
      </section>

      <Dialog open={saving} onClose={() => setSaving(false)} title={current ? `Save ${current.name}` : "Save the query"}>
        <form
          className="flex flex-col gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            void saveAs(!current);
          }}
        >
          <label className="flex flex-col gap-1 text-sm">
            Name
            <TextInput value={saveName} onChange={(e) => setSaveName(e.target.value)} required maxLength={200} autoFocus />
          </label>
          <ErrorBanner error={save.error} />
          <div className="flex justify-end gap-2">
            <Button type="button" variant="secondary" onClick={() => setSaving(false)}>
              Close
            </Button>
            {current && (
              <Button type="button" variant="secondary" disabled={!saveName.trim() || save.isPending} onClick={() => void saveAs(true)}>
                Save as new
              </Button>
            )}
            <Button type="submit" disabled={!saveName.trim() || save.isPending}>
              Save
            </Button>
          </div>
        </form>
      </Dialog>
    </div>
  );
}
