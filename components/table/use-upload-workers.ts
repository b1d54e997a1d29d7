"use client";
/**
 * The workers that read the upload tab's files, one per file while it is read: a CSV file's header and sample, then
 * every row; a Parquet or JSON Lines file's columns and first rows, then every row; each converted to an Arrow IPC
 * stream off the page's thread, reporting progress. Arrow files need no worker: they are previewed and sent as
 * they are. What the workers find is dispatched to the upload state machine.
 */
import { useEffect, useRef, type Dispatch } from "react";
import type { JsonSchema } from "@/lib/arrow-schema";
import { mapColumns } from "@/lib/csv";
import type { CsvLayout, FileKind, UploadEvent } from "@/lib/upload-machine";
import type { ConversionReply, ReaderReply, ReaderRequest, WorkerReply, WorkerRequest } from "@/lib/upload-protocol";
import { checkedPreview, kindOf, previewArrow } from "./upload-preview";

/** The table the files go into: its schema, unless it is declared only (its first upload then chooses the types). */
export interface UploadTarget {
  schema: JsonSchema | undefined;
  declaredOnly: boolean;
}

export function useUploadWorkers(dispatch: Dispatch<UploadEvent>, target: UploadTarget) {
  const workers = useRef(new Map<string, Worker>());
  useEffect(() => {
    const running = workers.current;
    return () => running.forEach((w) => w.terminate());
  }, []);
  const schema = target.declaredOnly ? undefined : target.schema;

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

  /** Converts every row of a CSV file as its layout says. */
  function convertCsv(key: string, file: File, { header, columns, indexes }: CsvLayout) {
    convert(key, "csv", { kind: "encode", file, header, columns, indexes });
  }

  /**
   * Reads a CSV file's header and a sample. Into a table with a schema, the columns are mapped by name and, when
   * they all fit, every row is converted at once; a declared table's types are chosen by the operator.
   */
  function analyze(key: string, file: File) {
    const worker = workerFor(key, "csv");
    worker.onmessage = (e: MessageEvent<WorkerReply>) => {
      const m = e.data;
      if (m.kind === "failed") return dispatch({ type: "failed", key, error: new Error(m.message) });
      if (m.kind !== "analyzed") return;
      const read = { header: m.header, inferred: m.inferred, sample: m.sample };
      if (schema) {
        const { columns, indexes, problems } = mapColumns(m.header, schema);
        dispatch({ type: "analyzed", key, ...read, columns, indexes, problems });
        if (problems.length === 0) convertCsv(key, file, { ...read, columns, indexes });
      } else {
        dispatch({ type: "analyzed", key, ...read, columns: m.inferred, indexes: m.header.map((_, i) => i), problems: [] });
      }
    };
    worker.postMessage({ kind: "analyze", file } satisfies WorkerRequest);
  }

  /**
   * Reads a Parquet or JSON Lines file's columns and first rows, checks them against the table, and when they fit
   * converts every row. Into a table with a schema, Parquet's plain lists become the table's vectors and JSON values
   * take the table's types.
   */
  function inspect(key: string, file: File, kind: "parquet" | "jsonl") {
    const worker = workerFor(key, kind);
    const table = schema?.fields;
    worker.onmessage = (e: MessageEvent<ReaderReply>) => {
      const m = e.data;
      if (m.kind === "failed") return dispatch({ type: "failed", key, error: new Error(m.message) });
      if (m.kind !== "inspected") return;
      const note = [m.summary, ...m.notes].join("; ");
      const checked = checkedPreview(m.fields, schema, { schema: m.fields.map((f) => `${f.name}: ${f.type.type}`), rows: m.rows, note });
      const problems = [...m.problems, ...checked.problems];
      dispatch({ type: "inspected", key, preview: checked.preview, problems });
      if (problems.length === 0) convert(key, kind, { kind: "encode", file, table } satisfies ReaderRequest);
    };
    worker.postMessage({ kind: "inspect", file, table } satisfies ReaderRequest);
  }

  /** Stages files and starts reading each as its kind is read. */
  function add(files: FileList | File[]) {
    const items = Array.from(files).map((file) => ({ key: `${file.name}-${file.size}-${file.lastModified}-${Math.random()}`, file, kind: kindOf(file) }));
    dispatch({ type: "added", files: items });
    for (const { key, file, kind } of items) {
      if (kind === "csv") analyze(key, file);
      else if (kind === "parquet" || kind === "jsonl") inspect(key, file, kind);
      else
        void previewArrow(file, schema).then((preview) =>
          dispatch("error" in preview ? { type: "failed", key, error: preview.error } : { type: "previewed", key, ...preview }),
        );
    }
  }

  /** A conversion stops with its worker; nothing was sent. */
  function stop(key: string) {
    workers.current.get(key)?.terminate();
    workers.current.delete(key);
    dispatch({ type: "failed", key, error: new Error("Conversion cancelled: nothing was sent.") });
  }

  return { add, convertCsv, stop };
}
