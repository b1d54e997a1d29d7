/**
 * The upload tab's files as a state machine. Each staged file is in one phase; events move it on, and an event that
 * does not belong to the file's phase changes nothing (a worker's progress that arrives after a cancel, a second
 * click while a file is already sending).
 *
 *   analyzing ──analyzed──▶ review ──conversionStarted──▶ preparing ──converted──▶ ready ──sendStarted──▶ uploading
 *       │   ──inspected──▶   ▲ │                             │                     ▲                        │
 *       │     columnTypeChosen └─┘                           │ failed              └──────sendFailed────────┤
 *       ├──previewed (Arrow files) ──▶ ready                 ▼                        (an error or a cancel) │
 *       └──failed──▶ failed ◀────────────────────────────────┘                                   written ───▶ done
 *
 * CSV files are analyzed (header, inferred types, a sample) and reviewed (mapped onto the table's columns, or typed
 * by the operator for a declared table), then converted in full to Arrow in a worker; Parquet and JSON Lines files
 * are inspected (their columns as Arrow, checked against the table, and the first rows), then converted in a worker;
 * Arrow files are previewed and sent as they are. `done` and `failed` are final.
 */
import type { BadRow, TargetColumn } from "./csv";
import type { WriteResult } from "./upload";

export type FileKind = "csv" | "parquet" | "jsonl" | "arrow";

export type Phase = "analyzing" | "review" | "preparing" | "ready" | "uploading" | "done" | "failed";

export interface ArrowPreview {
  schema: string[];
  rows: Record<string, unknown>[];
  note?: string;
}

export interface Staged {
  key: string;
  file: File;
  kind: FileKind;
  phase: Phase;
  /** CSV: the header, the types inferred from a sample, and the sample. */
  header?: string[];
  inferred?: TargetColumn[];
  sample?: string[][];
  /** CSV: the columns written and, for each, the CSV column it is read from. */
  columns?: TargetColumn[];
  indexes?: number[];
  /** Why the file cannot be written as it is; it is not sent while there are any. */
  problems?: string[];
  preview?: ArrowPreview;
  /** The Arrow IPC stream that is sent. */
  body?: Blob;
  rows?: number;
  badCount?: number;
  bad?: BadRow[];
  /** Bytes of the CSV file converted so far. */
  parsed?: number;
  sent?: number;
  total?: number;
  result?: WriteResult;
  error?: unknown;
}

export type UploadEvent =
  | { type: "added"; files: Array<Pick<Staged, "key" | "file" | "kind">> }
  | {
      type: "analyzed";
      key: string;
      header: string[];
      inferred: TargetColumn[];
      sample: string[][];
      columns: TargetColumn[];
      indexes: number[];
      problems: string[];
    }
  | { type: "columnTypeChosen"; key: string; index: number; columnType: string }
  | { type: "conversionStarted"; key: string }
  | { type: "conversionProgress"; key: string; bytes: number; rows: number }
  | { type: "converted"; key: string; body: Blob; rows: number; badCount: number; bad: BadRow[] }
  | { type: "previewed"; key: string; preview: ArrowPreview; problems: string[] }
  | { type: "inspected"; key: string; preview: ArrowPreview; problems: string[] }
  | { type: "sendStarted"; key: string }
  | { type: "sendProgress"; key: string; sent: number; total: number }
  | { type: "written"; key: string; result: WriteResult }
  | { type: "sendFailed"; key: string; error: unknown }
  | { type: "failed"; key: string; error: unknown };

type FileEvent = Exclude<UploadEvent, { type: "added" }>;

/** The phases each event may happen in, and the phase it leads to. */
const TRANSITIONS: { [T in FileEvent["type"]]: { from: readonly Phase[]; to: Phase } } = {
  analyzed: { from: ["analyzing"], to: "review" },
  previewed: { from: ["analyzing"], to: "ready" },
  inspected: { from: ["analyzing"], to: "review" },
  columnTypeChosen: { from: ["review"], to: "review" },
  conversionStarted: { from: ["review"], to: "preparing" },
  conversionProgress: { from: ["preparing"], to: "preparing" },
  converted: { from: ["preparing"], to: "ready" },
  sendStarted: { from: ["ready"], to: "uploading" },
  sendProgress: { from: ["uploading"], to: "uploading" },
  written: { from: ["uploading"], to: "done" },
  sendFailed: { from: ["uploading"], to: "ready" },
  failed: { from: ["analyzing", "preparing"], to: "failed" },
};

function next(file: Staged, event: FileEvent): Staged {
  const phase = TRANSITIONS[event.type].to;
  switch (event.type) {
    case "analyzed":
      return {
        ...file,
        phase,
        header: event.header,
        inferred: event.inferred,
        sample: event.sample,
        columns: event.columns,
        indexes: event.indexes,
        problems: event.problems,
      };
    case "previewed":
      return { ...file, phase, preview: event.preview, problems: event.problems, body: file.file };
    case "inspected":
      return { ...file, phase, preview: event.preview, problems: event.problems };
    case "columnTypeChosen":
      return { ...file, columns: file.columns?.map((column, i) => (i === event.index ? { ...column, type: event.columnType } : column)) };
    case "conversionStarted":
      return { ...file, phase, parsed: 0 };
    case "conversionProgress":
      return { ...file, parsed: event.bytes, rows: event.rows };
    case "converted":
      return { ...file, phase, body: event.body, rows: event.rows, badCount: event.badCount, bad: event.bad };
    case "sendStarted":
      return { ...file, phase, sent: 0, total: file.body?.size ?? 0, error: undefined };
    case "sendProgress":
      return { ...file, sent: event.sent, total: event.total };
    case "written":
      return { ...file, phase, result: event.result };
    case "sendFailed":
    case "failed":
      return { ...file, phase, error: event.error };
  }
}

export function uploadReducer(files: Staged[], event: UploadEvent): Staged[] {
  if (event.type === "added") return [...files, ...event.files.map((f) => ({ ...f, phase: "analyzing" as const }))];
  const allowed = TRANSITIONS[event.type].from;
  return files.map((file) => (file.key === event.key && allowed.includes(file.phase) ? next(file, event) : file));
}

/** Whether a file can be sent now: converted or previewed, with nothing in the way and (a CSV) some rows. */
export const uploadable = (file: Staged) => file.phase === "ready" && !file.problems?.length && !(file.kind === "csv" && !file.rows);
