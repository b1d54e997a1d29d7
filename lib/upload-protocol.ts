/** Messages between the upload tab and its CSV worker. */
import type { BadRow, TargetColumn } from "./csv";

export type WorkerRequest = { kind: "analyze"; file: File } | { kind: "encode"; file: File; header: string[]; columns: TargetColumn[]; indexes: number[] };

export type WorkerReply =
  | { kind: "analyzed"; header: string[]; inferred: TargetColumn[]; sample: string[][] }
  | { kind: "progress"; bytes: number; rows: number }
  | { kind: "encoded"; parts: Uint8Array[]; rows: number; badCount: number; bad: BadRow[] }
  | { kind: "failed"; message: string };
