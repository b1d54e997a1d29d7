/**
 * Sends an Arrow body to insert or merge-insert with upload progress and cancellation (fetch reports neither,
 * so this uses XMLHttpRequest), and answers the API's result or its error.
 */
import { ApiError, operationUrl } from "./api-client";
import { insertAnswer, mergeInsertAnswer } from "./contract/common";
import type { z } from "zod";

export interface WriteOptions {
  mode: "append" | "overwrite" | "merge";
  on: string[];
  whenMatchedUpdateAll: boolean;
  whenMatchedUpdateAllFilt: string;
  whenNotMatchedInsertAll: boolean;
  whenNotMatchedBySourceDelete: boolean;
  whenNotMatchedBySourceDeleteFilt: string;
}

/** What an insert or a merge-insert answers. */
export type WriteResult = z.output<typeof insertAnswer> | z.output<typeof mergeInsertAnswer>;

export function writeUrl(table: string[], options: WriteOptions): string {
  if (options.mode !== "merge") return operationUrl("InsertIntoTable", { id: table, query: { mode: options.mode } });
  return operationUrl("MergeInsertIntoTable", {
    id: table,
    query: {
      on: options.on,
      when_matched_update_all: options.whenMatchedUpdateAll ? "true" : undefined,
      when_matched_update_all_filt: options.whenMatchedUpdateAllFilt || undefined,
      when_not_matched_insert_all: options.whenNotMatchedInsertAll ? "true" : undefined,
      when_not_matched_by_source_delete: options.whenNotMatchedBySourceDelete ? "true" : undefined,
      when_not_matched_by_source_delete_filt: options.whenNotMatchedBySourceDeleteFilt || undefined,
    },
  });
}

/**
 * The Idempotency-Key of one file's write to one URL: sent again (after a lost connection, say), it is the same
 * request, which the server applies once; the same file written another way is another.
 */
export function uploadKey(file: string, url: string): string {
  // FNV-1a, 64 bits: a key needs no secrecy, only to differ between writes.
  let hash = 0xcbf29ce484222325n;
  for (const char of `${file}\n${url}`) hash = BigInt.asUintN(64, (hash ^ BigInt(char.codePointAt(0)!)) * 0x100000001b3n);
  return `upload-${hash.toString(16).padStart(16, "0")}`;
}

export function sendArrow(
  url: string,
  body: Blob,
  database: string,
  onProgress: (sent: number, total: number) => void,
  idempotencyKey: string,
): { promise: Promise<WriteResult>; cancel: () => void } {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<WriteResult>((resolve, reject) => {
    xhr.open("POST", url);
    xhr.setRequestHeader("content-type", "application/vnd.apache.arrow.stream");
    xhr.setRequestHeader("x-quiver-database", database);
    xhr.setRequestHeader("idempotency-key", idempotencyKey);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : body.size);
    xhr.onload = () => {
      let payload: Record<string, unknown> = {};
      try {
        payload = JSON.parse(xhr.responseText);
      } catch {
        // keep the status line
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        // Both answers as their operations' schemas say (a merge-insert's is the larger, so it is tried first).
        const parsed = mergeInsertAnswer.or(insertAnswer).safeParse(payload);
        if (parsed.success) resolve(parsed.data);
        else
          reject(new ApiError(xhr.status, "The answer is not what the API's contract says", parsed.error.message, null, xhr.getResponseHeader("x-request-id")));
      } else
        reject(
          new ApiError(
            xhr.status,
            String(payload.title ?? xhr.statusText),
            String(payload.detail ?? ""),
            (payload.code as number) ?? null,
            xhr.getResponseHeader("x-request-id"),
          ),
        );
    };
    xhr.onerror = () => reject(new Error("the upload failed: the connection was lost"));
    xhr.onabort = () => reject(new DOMException("the upload was cancelled", "AbortError"));
    xhr.send(body);
  });
  return { promise, cancel: () => xhr.abort() };
}
