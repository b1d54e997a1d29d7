/**
 * Sends an Arrow body to insert or merge-insert with upload progress and cancellation (fetch reports neither,
 * so this uses XMLHttpRequest), and answers the API's result or its error.
 */
import type { z } from "zod";
import { ApiError } from "./api-client";
import type { insertAnswer, mergeInsertAnswer } from "./contract/common";
import { encodeIdentifier } from "./identifiers";

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
  const id = encodeIdentifier(table);
  if (options.mode !== "merge") return `/v1/table/${id}/insert?mode=${options.mode}`;
  const params = new URLSearchParams();
  for (const key of options.on) params.append("on", key);
  if (options.whenMatchedUpdateAll) params.set("when_matched_update_all", "true");
  if (options.whenMatchedUpdateAllFilt) params.set("when_matched_update_all_filt", options.whenMatchedUpdateAllFilt);
  if (options.whenNotMatchedInsertAll) params.set("when_not_matched_insert_all", "true");
  if (options.whenNotMatchedBySourceDelete) params.set("when_not_matched_by_source_delete", "true");
  if (options.whenNotMatchedBySourceDeleteFilt) params.set("when_not_matched_by_source_delete_filt", options.whenNotMatchedBySourceDeleteFilt);
  return `/v1/table/${id}/merge_insert?${params}`;
}

export function sendArrow(
  url: string,
  body: Blob,
  database: string,
  onProgress: (sent: number, total: number) => void,
): { promise: Promise<WriteResult>; cancel: () => void } {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<WriteResult>((resolve, reject) => {
    xhr.open("POST", url);
    xhr.setRequestHeader("content-type", "application/vnd.apache.arrow.stream");
    xhr.setRequestHeader("x-quiver-database", database);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : body.size);
    xhr.onload = () => {
      let payload: Record<string, unknown> = {};
      try {
        payload = JSON.parse(xhr.responseText);
      } catch {
        // keep the status line
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(payload as unknown as WriteResult);
      else
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
