/// <reference lib="webworker" />
/**
 * Parses CSV files off the main thread: a sample for type inference, then the whole file chunk by chunk, each
 * chunk becoming a record batch of one Arrow IPC stream. Rows that do not convert are counted and reported.
 */
import Papa from "papaparse";
import { ConvertedStream } from "@/lib/arrow-stream-parts";
import { inferColumns, rowsToBatch } from "@/lib/csv";
import type { WorkerReply, WorkerRequest } from "@/lib/upload-protocol";

const SAMPLE_ROWS = 1000;
const post = (reply: WorkerReply, transfer: Transferable[] = []) => (self as unknown as DedicatedWorkerGlobalScope).postMessage(reply, transfer);

function analyze(file: File) {
  Papa.parse<string[]>(file, {
    preview: SAMPLE_ROWS + 1,
    skipEmptyLines: true,
    complete: (result) => {
      const [header = [], ...sample] = result.data;
      post({ kind: "analyzed", header, inferred: inferColumns(header, sample), sample: sample.slice(0, 20) });
    },
    error: (err) => post({ kind: "failed", message: err.message }),
  });
}

function encode(request: Extract<WorkerRequest, { kind: "encode" }>) {
  const stream = new ConvertedStream();
  let line = 2;
  let headerSkipped = false;
  Papa.parse<string[]>(request.file, {
    skipEmptyLines: true,
    chunkSize: 4 * 1024 * 1024,
    chunk: (result) => {
      let data = result.data;
      if (!headerSkipped) {
        data = data.slice(1);
        headerSkipped = true;
      }
      stream.add(rowsToBatch(data, request.columns, request.indexes, line));
      line += data.length;
      post({ kind: "progress", bytes: result.meta.cursor, rows: stream.rows });
    },
    complete: () => {
      const encoded = stream.finish();
      post(
        { kind: "encoded", ...encoded },
        encoded.parts.map((p) => p.buffer),
      );
    },
    error: (err) => post({ kind: "failed", message: err.message }),
  });
}

self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  try {
    if (event.data.kind === "analyze") analyze(event.data.file);
    else encode(event.data);
  } catch (err) {
    post({ kind: "failed", message: err instanceof Error ? err.message : String(err) });
  }
};
