"use client";
/**
 * Upload Parquet, Arrow IPC (stream or file), CSV and JSON Lines files into a table: each file is read in a worker
 * (use-upload-workers.ts) with its columns checked against the table's schema, and the operator sees the schema,
 * the first rows and the rows that will not convert before anything is sent; then insert or merge
 * (write-options.tsx) with a progress bar that can cancel (use-upload-queue.ts). Each file's state is the upload
 * state machine's (lib/upload-machine.ts).
 */
import { useReducer, useState } from "react";
import { joinIdentifier } from "@/lib/identifiers";
import { useTable } from "@/lib/queries/catalog";
import type { WriteOptions } from "@/lib/upload";
import { uploadable, uploadReducer } from "@/lib/upload-machine";
import { Button } from "../ui/controls";
import { Loading } from "../ui/states";
import { StagedFile } from "./staged-file";
import { useUploadQueue } from "./use-upload-queue";
import { useUploadWorkers } from "./use-upload-workers";
import { DEFAULT_OPTIONS, mergeInvalid, WriteOptionsForm } from "./write-options";

export function UploadTab({ database, table }: { database: string; table: string[] }) {
  const described = useTable(database, table);
  const [staged, dispatch] = useReducer(uploadReducer, []);
  const [options, setOptions] = useState<WriteOptions>(DEFAULT_OPTIONS);
  const [dragging, setDragging] = useState(false);
  const schema = described.data?.schema;
  const declaredOnly = described.data?.is_only_declared ?? false;
  const workers = useUploadWorkers(dispatch, { schema, declaredOnly });
  const queue = useUploadQueue(database, table, dispatch);

  const firstCsv = staged.map((s) => ("csv" in s ? s.csv : undefined)).find((csv) => csv !== undefined);
  const keyColumns = schema?.fields.map((f) => f.name) ?? firstCsv?.columns.map((c) => c.name) ?? [];
  const blocked = mergeInvalid(options);
  const ready = staged.filter(uploadable);

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
          workers.add(e.dataTransfer.files);
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
            onChange={(e) => e.target.files && workers.add(e.target.files)}
          />
        </label>
      </div>

      <WriteOptionsForm options={options} onChange={setOptions} keyColumns={keyColumns} />

      {ready.length > 1 && (
        <div className="flex flex-wrap items-center gap-3 rounded-lg bg-slate-50 p-3 text-sm dark:bg-slate-900">
          <Button onClick={() => queue.sendAll(staged, options)} disabled={blocked || staged.some((s) => s.phase === "uploading")}>
            {options.mode === "merge" ? "Merge" : options.mode === "overwrite" ? "Overwrite with" : "Insert"} all {ready.length} files
          </Button>
          <span className="text-slate-600 dark:text-slate-300">One after another, one version per file; stops at the first that fails.</span>
        </div>
      )}

      {staged.map((item) => (
        <StagedFile
          key={item.key}
          item={item}
          database={database}
          table={table}
          declaredOnly={declaredOnly}
          mode={options.mode}
          sendBlocked={blocked}
          actions={{
            chooseType: (index, columnType) => dispatch({ type: "columnTypeChosen", key: item.key, index, columnType }),
            convert: () => {
              if ("csv" in item && item.csv) workers.convertCsv(item.key, item.file, item.csv);
            },
            cancel: () => (item.phase === "uploading" ? queue.cancel(item.key) : workers.stop(item.key)),
            send: () => {
              if (item.phase === "ready") void queue.send(item, options);
            },
          }}
        />
      ))}
    </div>
  );
}
