/** Messages between the upload tab and its workers: one for CSV, one for Parquet, one for JSON Lines. */
import type { JsonField } from "./arrow-schema";
import type { BadRow, TargetColumn } from "./csv";

export type WorkerRequest = { kind: "analyze"; file: File } | { kind: "encode"; file: File; header: string[]; columns: TargetColumn[]; indexes: number[] };

/** Progress, the encoded stream and failures are answered alike by both workers. */
export type ConversionReply =
  | { kind: "progress"; bytes: number; rows: number }
  | { kind: "encoded"; parts: Uint8Array[]; rows: number; badCount: number; bad: BadRow[] }
  | { kind: "failed"; message: string };

export type WorkerReply = { kind: "analyzed"; header: string[]; inferred: TargetColumn[]; sample: string[][] } | ConversionReply;

/**
 * The workers that read a file with its own types (Parquet, JSON Lines): first its schema and first rows, then every
 * row. The table's fields shape what the file cannot say (a vector column is a plain list in Parquet, JSON has one
 * kind of number); absent for a declared table, whose columns the file decides.
 */
export type ReaderRequest = { kind: "inspect"; file: File; table?: JsonField[] } | { kind: "encode"; file: File; table?: JsonField[] };

export type ReaderReply =
  { kind: "inspected"; fields: JsonField[]; rows: Record<string, string>[]; summary: string; notes: string[]; problems: string[] } | ConversionReply;
