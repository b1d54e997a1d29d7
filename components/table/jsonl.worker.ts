/// <reference lib="webworker" />
/**
 * Reads JSON Lines files off the main thread: the first lines for the columns (inferred for a declared table) and the
 * preview, then the whole file as a stream of text, every 10,000 lines a record batch of one Arrow IPC stream. Lines
 * that do not convert are counted and reported.
 */
import { Table } from "apache-arrow";
import { fieldToJson, type JsonField } from "@/lib/arrow-schema";
import { ConvertedStream } from "@/lib/arrow-stream-parts";
import { cellText } from "@/lib/cell-format";
import { inferJsonColumns, jsonArrowType, jsonLinesToBatch, type JsonColumns } from "@/lib/jsonl";
import type { ReaderReply, ReaderRequest } from "@/lib/upload-protocol";

const SAMPLE_LINES = 1000;
const PREVIEW_ROWS = 10;
const BATCH_LINES = 10_000;
const post = (reply: ReaderReply, transfer: Transferable[] = []) => (self as unknown as DedicatedWorkerGlobalScope).postMessage(reply, transfer);

/** The file's lines in order, a chunk at a time, with how many bytes were read so far. */
async function* linesOf(file: File): AsyncGenerator<{ lines: string[]; bytes: number }> {
  const reader = file.stream().getReader();
  const decoder = new TextDecoder();
  let rest = "";
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      const text = rest + decoder.decode(value, { stream: true });
      const lines = text.split("\n");
      rest = lines.pop()!;
      yield { lines: lines.map((l) => l.replace(/\r$/, "")), bytes };
    }
    rest += decoder.decode();
    if (rest) yield { lines: [rest.replace(/\r$/, "")], bytes };
  } finally {
    await reader.cancel();
  }
}

async function firstLines(file: File): Promise<string[]> {
  const lines: string[] = [];
  for await (const chunk of linesOf(file)) {
    lines.push(...chunk.lines);
    if (lines.length >= SAMPLE_LINES) break;
  }
  return lines.slice(0, SAMPLE_LINES);
}

function parsedObjects(lines: string[]): unknown[] {
  return lines.flatMap((line) => {
    try {
      return line.trim() ? [JSON.parse(line)] : [];
    } catch {
      return [];
    }
  });
}

/**
 * The table's columns that JSON can fill (one it cannot is a problem only when the table requires it), or for a
 * declared table those the first lines have. `stray` says why a line's key has no column.
 */
function columnsFor(request: ReaderRequest, sample: string[]): JsonColumns & { stray: (key: string) => string } {
  if (!request.table) {
    const inferred = inferJsonColumns(parsedObjects(sample));
    if (inferred.fields.length === 0) inferred.problems.push("no line of the first ones is a JSON object with keys");
    const limit = SAMPLE_LINES.toLocaleString("en-US");
    return { ...inferred, stray: (key) => `'${key}' is in none of the first ${limit} lines, which decide the columns` };
  }
  const columns: JsonColumns = { fields: [], problems: [], notes: [] };
  const unfillable = new Map<string, string>();
  for (const f of request.table) {
    const type = jsonArrowType(f.type, f.name);
    if (typeof type !== "string") columns.fields.push(f);
    else if (f.nullable) unfillable.set(f.name, type);
    else columns.problems.push(`${type}, and the table requires it`);
  }
  if (unfillable.size) columns.notes.push(`left empty: ${[...unfillable.values()].join("; ")}`);
  return { ...columns, stray: (key) => unfillable.get(key) ?? `the table has no column '${key}'` };
}

async function inspect(request: ReaderRequest) {
  const sample = await firstLines(request.file);
  const columns = columnsFor(request, sample);
  const fields: JsonField[] = columns.fields;
  const preview = columns.problems.length ? null : jsonLinesToBatch(sample.slice(0, PREVIEW_ROWS), fields, 1, columns.stray);
  const rows = preview
    ? new Table(preview.batch).toArray().map((row: Record<string, unknown>) => Object.fromEntries(fields.map((f) => [f.name, cellText(row[f.name]).short])))
    : [];
  post({
    kind: "inspected",
    fields: preview ? preview.batch.schema.fields.map(fieldToJson) : fields,
    rows,
    summary: `columns from ${request.table ? "the table" : `the first ${Math.min(sample.length, SAMPLE_LINES).toLocaleString("en-US")} lines`}`,
    notes: columns.notes,
    problems: columns.problems,
  });
}

async function encode(request: ReaderRequest) {
  const { fields, problems, stray } = columnsFor(request, await firstLines(request.file));
  if (problems.length) throw new Error(problems.join("; "));
  const stream = new ConvertedStream();
  let pending: string[] = [];
  let line = 1;
  const flush = () => {
    stream.add(jsonLinesToBatch(pending, fields, line, stray));
    line += pending.length;
    pending = [];
  };
  for await (const chunk of linesOf(request.file)) {
    pending.push(...chunk.lines);
    if (pending.length >= BATCH_LINES) flush();
    post({ kind: "progress", bytes: chunk.bytes, rows: stream.rows });
  }
  flush();
  const encoded = stream.finish();
  post(
    { kind: "encoded", ...encoded },
    encoded.parts.map((p) => p.buffer),
  );
}

self.onmessage = (event: MessageEvent<ReaderRequest>) => {
  const work = event.data.kind === "inspect" ? inspect(event.data) : encode(event.data);
  work.catch((err: unknown) => post({ kind: "failed", message: `JSON Lines: ${err instanceof Error ? err.message : String(err)}` }));
};
