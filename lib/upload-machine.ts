/**
 * The upload tab's files as a state machine. Each staged file is in one phase, and holds what that phase has and
 * nothing else; events move it on, and an event that does not belong to the file's phase changes nothing (a
 * worker's progress that arrives after a cancel, a second click while a file is already sending).
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

export interface ArrowPreview {
  schema: string[];
  rows: Record<string, unknown>[];
  note?: string;
}

/** How a CSV file is read: its header, the types inferred from a sample, the sample, and the columns written with, for each, the CSV column it is read from. */
export interface CsvLayout {
  header: string[];
  inferred: TargetColumn[];
  sample: string[][];
  columns: TargetColumn[];
  indexes: number[];
}

interface Added {
  key: string;
  file: File;
  kind: FileKind;
}

/** What analysis or inspection found: a CSV's layout or a preview of the rows, and why the file cannot be written as it is (it is not sent while there are any). */
interface Found {
  csv?: CsvLayout;
  preview?: ArrowPreview;
  problems: string[];
}

/** The Arrow IPC stream that is sent, and for a converted file how many rows it holds and which rows were left out. */
interface Converted {
  body: Blob;
  rows?: number;
  badCount?: number;
  bad?: BadRow[];
}

export type Staged =
  | (Added & { phase: "analyzing" })
  | (Added & Found & { phase: "review" })
  /** `parsed`: bytes of the file converted so far. */
  | (Added & Found & { phase: "preparing"; parsed: number; rows: number })
  /** `error`: why the last send failed (or that it was cancelled). */
  | (Added & Found & Converted & { phase: "ready"; error?: unknown })
  | (Added & Found & Converted & { phase: "uploading"; sent: number; total: number })
  | (Added & Found & Converted & { phase: "done"; result: WriteResult })
  | (Added & Partial<Found> & { phase: "failed"; error: unknown });

export type Phase = Staged["phase"];

export type UploadEvent =
  | { type: "added"; files: Added[] }
  | ({ type: "analyzed"; key: string; problems: string[] } & CsvLayout)
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

const added = ({ key, file, kind }: Added): Added => ({ key, file, kind });
const found = ({ csv, preview, problems }: Found): Found => ({ csv, preview, problems });
const converted = ({ body, rows, badCount, bad }: Converted): Converted => ({ body, rows, badCount, bad });

/** The file after `event`, or the file as it was when the event does not belong to its phase. */
function next(file: Staged, event: FileEvent): Staged {
  switch (event.type) {
    case "analyzed": {
      if (file.phase !== "analyzing") return file;
      const { header, inferred, sample, columns, indexes, problems } = event;
      return { ...added(file), phase: "review", csv: { header, inferred, sample, columns, indexes }, problems };
    }
    case "inspected":
      return file.phase === "analyzing" ? { ...added(file), phase: "review", preview: event.preview, problems: event.problems } : file;
    case "previewed":
      return file.phase === "analyzing" ? { ...added(file), phase: "ready", preview: event.preview, problems: event.problems, body: file.file } : file;
    case "columnTypeChosen":
      if (file.phase !== "review" || !file.csv) return file;
      return { ...file, csv: { ...file.csv, columns: file.csv.columns.map((c, i) => (i === event.index ? { ...c, type: event.columnType } : c)) } };
    case "conversionStarted":
      return file.phase === "review" ? { ...added(file), ...found(file), phase: "preparing", parsed: 0, rows: 0 } : file;
    case "conversionProgress":
      return file.phase === "preparing" ? { ...file, parsed: event.bytes, rows: event.rows } : file;
    case "converted":
      return file.phase === "preparing" ? { ...added(file), ...found(file), ...converted(event), phase: "ready" } : file;
    case "sendStarted":
      return file.phase === "ready" ? { ...added(file), ...found(file), ...converted(file), phase: "uploading", sent: 0, total: file.body.size } : file;
    case "sendProgress":
      return file.phase === "uploading" ? { ...file, sent: event.sent, total: event.total } : file;
    case "written":
      return file.phase === "uploading" ? { ...added(file), ...found(file), ...converted(file), phase: "done", result: event.result } : file;
    case "sendFailed":
      return file.phase === "uploading" ? { ...added(file), ...found(file), ...converted(file), phase: "ready", error: event.error } : file;
    case "failed":
      if (file.phase === "analyzing") return { ...added(file), phase: "failed", error: event.error };
      return file.phase === "preparing" ? { ...added(file), ...found(file), phase: "failed", error: event.error } : file;
  }
}

export function uploadReducer(files: Staged[], event: UploadEvent): Staged[] {
  if (event.type === "added") return [...files, ...event.files.map((f) => ({ ...added(f), phase: "analyzing" as const }))];
  return files.map((file) => (file.key === event.key ? next(file, event) : file));
}

/** Whether a file can be sent now: converted or previewed, with nothing in the way and (a CSV) some rows. */
export const uploadable = (file: Staged): file is Extract<Staged, { phase: "ready" }> =>
  file.phase === "ready" && file.problems.length === 0 && !(file.kind === "csv" && !file.rows);
