"use client";
/**
 * Upload Parquet, Arrow IPC (stream or file) and CSV files into a table: CSV is parsed in a worker with types inferred
 * and mapped onto the table's schema, Parquet is read a row group at a time in another, and the operator sees the
 * schema, the first rows and the rows that will not convert before anything is sent; then insert or merge with a
 * progress bar that can cancel.
 */
import Link from "next/link";
import { useEffect, useReducer, useRef, useState } from "react";
import { RecordBatchReader, tableFromIPC, type Table as ArrowTable } from "apache-arrow";
import { fieldToJson, type JsonSchema } from "@/lib/arrow-schema";
import { CSV_TYPES, mapColumns, type TargetColumn } from "@/lib/csv";
import { writeSchemaProblem } from "@/lib/schema-compat";
import { useInvalidateAfterWrite, useTable } from "@/lib/queries/catalog";
import { tableHref } from "@/lib/console-links";
import { sendArrow, writeUrl, type WriteOptions } from "@/lib/upload";
import { uploadable, uploadReducer, type ArrowPreview, type FileKind, type Staged } from "@/lib/upload-machine";
import type { ConversionReply, ReaderReply, ReaderRequest, WorkerReply, WorkerRequest } from "@/lib/upload-protocol";
import { Badge, Button, Select, TextInput } from "../ui/controls";
import { ErrorBanner, Loading } from "../ui/states";
import { formatBytes } from "./format";
import { joinIdentifier } from "@/lib/identifiers";

function kindOf(f: File): FileKind {
  if (/\.(csv|tsv|txt)$/i.test(f.name) || f.type === "text/csv") return "csv";
  if (/\.(parquet|parq|pq)$/i.test(f.name)) return "parquet";
  if (/\.(jsonl|ndjson)$/i.test(f.name) || f.type === "application/x-ndjson") return "jsonl";
  return "arrow";
}

const KIND_NAMES: Record<FileKind, string> = { csv: "CSV", parquet: "Parquet", jsonl: "JSON Lines", arrow: "Arrow" };

function display(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "bigint") return v.toString();
  return typeof v === "object" ? JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x)) : String(v);
}

type Preview = { preview: ArrowPreview; problems: string[] } | { error: Error };

async function previewArrow(file: File, tableSchema: JsonSchema | undefined): Promise<Preview> {
  const head = new Uint8Array(await file.slice(0, 6).arrayBuffer());
  const isFile = String.fromCharCode(...head) === "ARROW1";
  let table: ArrowTable | null = null;
  try {
    if (isFile) {
      if (file.size > 256 * 1024 * 1024)
        return { preview: { schema: [], rows: [], note: "Large Arrow file: no preview; the server checks it." }, problems: [] };
      table = tableFromIPC(new Uint8Array(await file.arrayBuffer()));
    } else {
      const reader = await RecordBatchReader.from(file.stream() as unknown as AsyncIterable<Uint8Array>);
      await reader.open();
      const first = await reader.next();
      const fields = reader.schema.fields.map(fieldToJson);
      const rows = first.done
        ? []
        : first.value
            .toArray()
            .slice(0, 10)
            .map((r) => r.toJSON());
      await reader.cancel();
      return compat(fields, tableSchema, { schema: fields.map((f) => `${f.name}: ${f.type.type}`), rows });
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/compression/i.test(message))
      return { preview: { schema: [], rows: [], note: "Compressed Arrow buffers: no preview in the browser; the server decompresses them." }, problems: [] };
    return { error: new Error(`not a readable Arrow IPC file: ${message}`) };
  }
  const fields = table.schema.fields.map(fieldToJson);
  return compat(fields, tableSchema, {
    schema: fields.map((f) => `${f.name}: ${f.type.type}`),
    rows: table
      .slice(0, 10)
      .toArray()
      .map((r) => r.toJSON()),
  });
}

function compat(
  fields: ReturnType<typeof fieldToJson>[],
  tableSchema: JsonSchema | undefined,
  preview: ArrowPreview,
): { preview: ArrowPreview; problems: string[] } {
  const problem = tableSchema ? writeSchemaProblem(tableSchema.fields, fields) : null;
  return { preview, problems: problem ? [problem] : [] };
}

const DEFAULT_OPTIONS: WriteOptions = {
  mode: "append",
  on: [],
  whenMatchedUpdateAll: true,
  whenMatchedUpdateAllFilt: "",
  whenNotMatchedInsertAll: true,
  whenNotMatchedBySourceDelete: false,
  whenNotMatchedBySourceDeleteFilt: "",
};

export function UploadTab({ database, table }: { database: string; table: string[] }) {
  const described = useTable(database, table);
  const invalidate = useInvalidateAfterWrite(database, table);
  const [staged, dispatch] = useReducer(uploadReducer, []);
  const [options, setOptions] = useState<WriteOptions>(DEFAULT_OPTIONS);
  const [dragging, setDragging] = useState(false);
  const workers = useRef(new Map<string, Worker>());
  const cancels = useRef(new Map<string, () => void>());
  const schema = described.data?.schema;
  const declaredOnly = described.data?.is_only_declared ?? false;

  useEffect(() => () => workers.current.forEach((w) => w.terminate()), []);

  function workerFor(key: string, kind: FileKind): Worker {
    let worker = workers.current.get(key);
    if (!worker) {
      // Each worker is named by a literal, which is how the bundler finds it.
      worker =
        kind === "parquet"
          ? new Worker(new URL("./parquet.worker.ts", import.meta.url), { type: "module" })
          : kind === "jsonl"
            ? new Worker(new URL("./jsonl.worker.ts", import.meta.url), { type: "module" })
            : new Worker(new URL("./csv.worker.ts", import.meta.url), { type: "module" });
      workers.current.set(key, worker);
    }
    return worker;
  }

  /** Converts every row of a file to Arrow in its worker, reporting progress. */
  function convert(key: string, kind: FileKind, request: WorkerRequest | ReaderRequest) {
    const worker = workerFor(key, kind);
    dispatch({ type: "conversionStarted", key });
    worker.onmessage = (e: MessageEvent<ConversionReply>) => {
      const m = e.data;
      if (m.kind === "progress") dispatch({ type: "conversionProgress", key, bytes: m.bytes, rows: m.rows });
      else if (m.kind === "encoded") {
        const body = new Blob(m.parts as BlobPart[], { type: "application/vnd.apache.arrow.stream" });
        dispatch({ type: "converted", key, body, rows: m.rows, badCount: m.badCount, bad: m.bad });
      } else if (m.kind === "failed") dispatch({ type: "failed", key, error: new Error(m.message) });
    };
    worker.postMessage(request);
  }

  /** A conversion stops with its worker; nothing was sent. */
  function stopConversion(key: string) {
    workers.current.get(key)?.terminate();
    workers.current.delete(key);
    dispatch({ type: "failed", key, error: new Error("Conversion cancelled: nothing was sent.") });
  }

  function prepare(key: string, file: File, header: string[], columns: TargetColumn[], indexes: number[]) {
    convert(key, "csv", { kind: "encode", file, header, columns, indexes });
  }

  /**
   * Reads a Parquet or JSON Lines file's columns and first rows in its worker, checks them against the table, and when
   * they fit converts every row. Into a table with a schema, Parquet's plain lists become the table's vectors and JSON
   * values take the table's types.
   */
  function inspect(key: string, file: File, kind: "parquet" | "jsonl") {
    const worker = workerFor(key, kind);
    const table = declaredOnly ? undefined : schema?.fields;
    worker.onmessage = (e: MessageEvent<ReaderReply>) => {
      const m = e.data;
      if (m.kind === "failed") return dispatch({ type: "failed", key, error: new Error(m.message) });
      if (m.kind !== "inspected") return;
      const note = [m.summary, ...m.notes].join("; ");
      const checked = compat(m.fields, declaredOnly ? undefined : schema, { schema: m.fields.map((f) => `${f.name}: ${f.type.type}`), rows: m.rows, note });
      const problems = [...m.problems, ...checked.problems];
      dispatch({ type: "inspected", key, preview: checked.preview, problems });
      if (problems.length === 0) convert(key, kind, { kind: "encode", file, table } satisfies ReaderRequest);
    };
    worker.postMessage({ kind: "inspect", file, table } satisfies ReaderRequest);
  }

  /**
   * Reads a CSV file's header and a sample in its worker. Into a table with a schema, the columns are mapped by name
   * and, when they all fit, every row is converted at once; a declared table's types are chosen by the operator.
   */
  function analyze(key: string, file: File) {
    const worker = workerFor(key, "csv");
    worker.onmessage = (e: MessageEvent<WorkerReply>) => {
      const m = e.data;
      if (m.kind === "failed") return dispatch({ type: "failed", key, error: new Error(m.message) });
      if (m.kind !== "analyzed") return;
      const analyzed = { type: "analyzed", key, header: m.header, inferred: m.inferred, sample: m.sample } as const;
      if (schema && !declaredOnly) {
        const mapped = mapColumns(m.header, schema);
        dispatch({ ...analyzed, ...mapped });
        if (mapped.problems.length === 0) prepare(key, file, m.header, mapped.columns, mapped.indexes);
      } else {
        dispatch({ ...analyzed, columns: m.inferred, indexes: m.header.map((_, i) => i), problems: [] });
      }
    };
    worker.postMessage({ kind: "analyze", file } satisfies WorkerRequest);
  }

  function add(files: FileList | File[]) {
    const items = Array.from(files).map((file) => ({
      key: `${file.name}-${file.size}-${file.lastModified}-${Math.random()}`,
      file,
      kind: kindOf(file),
    }));
    dispatch({ type: "added", files: items });
    for (const { key, file, kind } of items) {
      if (kind === "csv") analyze(key, file);
      else if (kind === "parquet" || kind === "jsonl") inspect(key, file, kind);
      else
        void previewArrow(file, declaredOnly ? undefined : schema).then((preview) =>
          dispatch("error" in preview ? { type: "failed", key, error: preview.error } : { type: "previewed", key, ...preview }),
        );
    }
  }

  async function upload(item: Staged, how: WriteOptions = options): Promise<boolean> {
    if (!item.body) return false;
    const key = item.key;
    dispatch({ type: "sendStarted", key });
    const { promise, cancel } = sendArrow(writeUrl(table, how), item.body, database, (sent, total) => dispatch({ type: "sendProgress", key, sent, total }));
    cancels.current.set(item.key, cancel);
    try {
      const result = await promise;
      dispatch({ type: "written", key, result });
      await invalidate();
      return true;
    } catch (error) {
      dispatch({ type: "sendFailed", key, error });
      return false;
    } finally {
      cancels.current.delete(item.key);
    }
  }

  /** Files go one after another, one version each; an overwrite replaces the rows with the first file and appends the rest. */
  async function uploadAll() {
    const queue = staged.filter(uploadable);
    for (const [i, item] of queue.entries()) {
      const how = options.mode === "overwrite" && i > 0 ? { ...options, mode: "append" as const } : options;
      if (!(await upload(item, how))) break;
    }
  }

  const columnsForKeys = schema?.fields.map((f) => f.name) ?? staged.find((s) => s.columns)?.columns?.map((c) => c.name) ?? [];
  const mergeInvalid =
    options.mode === "merge" &&
    (options.on.length === 0 ||
      (!options.whenMatchedUpdateAll &&
        !options.whenMatchedUpdateAllFilt &&
        !options.whenNotMatchedInsertAll &&
        !options.whenNotMatchedBySourceDelete &&
        !options.whenNotMatchedBySourceDeleteFilt));

  if (described.isPending) return <Loading />;
  return (
    <div className="flex flex-col gap-5">
      <div
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          add(e.dataTransfer.files);
        }}
        className={`flex flex-col items-center gap-2 rounded-lg border-2 border-dashed px-6 py-8 text-center ${dragging ? "border-indigo-500 bg-indigo-50 dark:bg-indigo-950" : "border-slate-300 dark:border-slate-700"}`}
      >
        <p className="font-medium">Drop Parquet, Arrow IPC (stream or file), CSV or JSON Lines files here</p>
        <p className="text-sm text-slate-500">
          into <span className="font-mono">{joinIdentifier(table)}</span>
          {declaredOnly ? " (declared only: the first upload creates it)" : ""}
        </p>
        <label className="cursor-pointer rounded-md bg-indigo-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-700 focus-within:outline-2 focus-within:outline-indigo-500">
          Choose files
          <input
            type="file"
            multiple
            accept=".parquet,.parq,.pq,.csv,.tsv,.txt,.jsonl,.ndjson,.arrow,.arrows,.ipc,.feather"
            className="sr-only"
            aria-label="Choose files to upload"
            onChange={(e) => e.target.files && add(e.target.files)}
          />
        </label>
      </div>

      <fieldset className="flex flex-col gap-3 rounded-lg border border-slate-200 p-4 dark:border-slate-800">
        <legend className="px-1 text-sm font-semibold">How to write</legend>
        <div className="flex flex-wrap gap-4 text-sm" role="radiogroup" aria-label="Write mode">
          {(["append", "overwrite", "merge"] as const).map((m) => (
            <label key={m} className="flex items-center gap-1">
              <input type="radio" name="write-mode" value={m} checked={options.mode === m} onChange={() => setOptions({ ...options, mode: m })} />
              {m === "append" ? "Insert: append" : m === "overwrite" ? "Insert: overwrite all rows" : "Merge (upsert)"}
            </label>
          ))}
        </div>
        {options.mode === "merge" && (
          <div className="flex flex-col gap-3 text-sm">
            <div className="flex flex-wrap items-center gap-3" role="group" aria-label="Key columns">
              <span className="text-slate-600 dark:text-slate-300">Key columns:</span>
              {columnsForKeys.map((c) => (
                <label key={c} className="flex items-center gap-1">
                  <input
                    type="checkbox"
                    checked={options.on.includes(c)}
                    onChange={(e) => setOptions({ ...options, on: e.target.checked ? [...options.on, c] : options.on.filter((x) => x !== c) })}
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
                  onChange={(e) => setOptions({ ...options, whenMatchedUpdateAll: e.target.checked })}
                />
                Update matched rows
              </label>
              <TextInput
                aria-label="Update only where"
                placeholder="only where… e.g. target.ts < source.ts"
                value={options.whenMatchedUpdateAllFilt}
                onChange={(e) => setOptions({ ...options, whenMatchedUpdateAllFilt: e.target.value })}
              />
              <label className="flex items-center gap-2">
                <input
                  type="checkbox"
                  checked={options.whenNotMatchedInsertAll}
                  onChange={(e) => setOptions({ ...options, whenNotMatchedInsertAll: e.target.checked })}
                />
                Insert unmatched rows
              </label>
              <span />
              <label className="flex items-center gap-2">
                <input
                  type="checkbox"
                  checked={options.whenNotMatchedBySourceDelete}
                  onChange={(e) => setOptions({ ...options, whenNotMatchedBySourceDelete: e.target.checked })}
                />
                Delete table rows missing from the file
              </label>
              <TextInput
                aria-label="Delete only where"
                placeholder="only where… e.g. day < '2024-01-01'"
                value={options.whenNotMatchedBySourceDeleteFilt}
                onChange={(e) => setOptions({ ...options, whenNotMatchedBySourceDeleteFilt: e.target.value })}
              />
            </div>
            {mergeInvalid && <p className="text-xs text-amber-700 dark:text-amber-300">Choose at least one key column and one action.</p>}
          </div>
        )}
      </fieldset>

      {staged.filter(uploadable).length > 1 && (
        <div className="flex flex-wrap items-center gap-3 rounded-lg bg-slate-50 p-3 text-sm dark:bg-slate-900">
          <Button onClick={uploadAll} disabled={mergeInvalid || staged.some((s) => s.phase === "uploading")}>
            {options.mode === "merge" ? "Merge" : options.mode === "overwrite" ? "Overwrite with" : "Insert"} all {staged.filter(uploadable).length} files
          </Button>
          <span className="text-slate-600 dark:text-slate-300">One after another, one version per file; stops at the first that fails.</span>
        </div>
      )}

      {staged.map((item) => {
        const percent =
          item.phase === "preparing"
            ? Math.round(((item.parsed ?? 0) / item.file.size) * 100)
            : item.total
              ? Math.round(((item.sent ?? 0) / item.total) * 100)
              : 0;
        return (
          <section
            key={item.key}
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
            <ErrorBanner error={item.error} />
            {item.problems && item.problems.length > 0 && (
              <ul role="alert" className="list-disc pl-5 text-sm text-red-700 dark:text-red-300" data-testid="mapping-problems">
                {item.problems.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            )}
            {item.kind === "csv" && item.columns && (
              <div className="overflow-auto">
                <table className="text-left text-xs" data-testid="inferred-schema">
                  <thead>
                    <tr className="text-slate-500">
                      {item.columns.map((c) => (
                        <th key={c.name} className="px-2 py-1 font-mono">
                          {c.name}
                        </th>
                      ))}
                    </tr>
                    <tr>
                      {item.columns.map((c, i) => (
                        <th key={c.name} className="px-2 pb-1 font-normal">
                          {declaredOnly && item.phase === "review" ? (
                            <Select
                              aria-label={`Type of ${c.name}`}
                              value={c.type}
                              onChange={(e) => dispatch({ type: "columnTypeChosen", key: item.key, index: i, columnType: e.target.value })}
                            >
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
                    {item.sample?.slice(0, 8).map((row, r) => (
                      <tr key={r} className="border-t border-slate-100 dark:border-slate-800">
                        {item.indexes!.map((c, i) => (
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
            {item.preview && (
              <div className="text-xs">
                <p className="font-mono text-slate-600 dark:text-slate-300">{item.preview.schema.join(", ")}</p>
                {item.preview.note && <p className="text-slate-500">{item.preview.note}</p>}
                <pre className="mt-1 max-h-40 overflow-auto rounded bg-slate-50 p-2 dark:bg-slate-900">
                  {item.preview.rows.map((r) => JSON.stringify(r, (_, v) => (typeof v === "bigint" ? v.toString() : v))).join("\n")}
                </pre>
              </div>
            )}
            {item.kind === "csv" && item.phase === "review" && declaredOnly && (
              <div>
                <Button onClick={() => prepare(item.key, item.file, item.header!, item.columns!, item.indexes!)}>Check all rows</Button>
              </div>
            )}
            {(item.phase === "preparing" || item.phase === "uploading") && (
              <div className="flex items-center gap-3">
                <progress className="h-2 flex-1" max={100} value={percent} aria-label={item.phase === "preparing" ? "Parsing" : "Uploading"} />
                <span className="text-xs text-slate-500" data-testid="progress-text">
                  {item.phase === "preparing"
                    ? `parsed ${formatBytes(item.parsed ?? 0)}`
                    : `sent ${formatBytes(item.sent ?? 0)} of ${formatBytes(item.total ?? 0)}`}{" "}
                  ({percent}%)
                </span>
                <Button variant="secondary" onClick={() => (item.phase === "uploading" ? cancels.current.get(item.key)?.() : stopConversion(item.key))}>
                  Cancel
                </Button>
              </div>
            )}
            {item.kind !== "arrow" && item.rows !== undefined && item.phase !== "preparing" && (
              <p className="text-sm" data-testid="conversion-summary">
                {item.rows.toLocaleString()} rows ready
                {item.badCount ? `, ${item.badCount.toLocaleString()} rows will not convert and are left out` : ", every row converts"}.
              </p>
            )}
            {item.bad && item.bad.length > 0 && (
              <details className="text-xs" open>
                <summary className="cursor-pointer text-amber-800 dark:text-amber-300">Rows that will not convert</summary>
                <table className="mt-1 text-left" data-testid="bad-rows">
                  <tbody>
                    {item.bad.slice(0, 50).map((b, i) => (
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
                <Button onClick={() => upload(item)} disabled={!uploadable(item) || mergeInvalid}>
                  {options.mode === "merge" ? "Merge into table" : options.mode === "overwrite" ? "Overwrite table" : "Insert into table"}
                </Button>
              </div>
            )}
            {item.result && (
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
      })}
    </div>
  );
}
