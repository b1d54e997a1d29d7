"use client";
/**
 * Sending the upload tab's files: each one's Arrow stream as one insert or merge-insert, with progress and a cancel;
 * several one after another, one version each, stopping at the first that fails.
 */
import { useRef, type Dispatch } from "react";
import { useInvalidateAfterWrite } from "@/lib/queries/catalog";
import { sendArrow, uploadKey, writeUrl, type WriteOptions } from "@/lib/upload";
import { uploadable, type Staged, type UploadEvent } from "@/lib/upload-machine";

type Ready = Extract<Staged, { phase: "ready" }>;

export function useUploadQueue(database: string, table: string[], dispatch: Dispatch<UploadEvent>) {
  const invalidate = useInvalidateAfterWrite(database, table);
  const cancels = useRef(new Map<string, () => void>());

  async function send(item: Ready, how: WriteOptions): Promise<boolean> {
    const key = item.key;
    dispatch({ type: "sendStarted", key });
    const url = writeUrl(table, how);
    // Sent again after a failure, the same file to the same place is the same request: applied once.
    const { promise, cancel } = sendArrow(url, item.body, database, (sent, total) => dispatch({ type: "sendProgress", key, sent, total }), uploadKey(key, url));
    cancels.current.set(key, cancel);
    try {
      const result = await promise;
      dispatch({ type: "written", key, result });
      await invalidate();
      return true;
    } catch (error) {
      dispatch({ type: "sendFailed", key, error });
      return false;
    } finally {
      cancels.current.delete(key);
    }
  }

  /** Files go one after another, one version each; an overwrite replaces the rows with the first file and appends the rest. */
  async function sendAll(staged: Staged[], options: WriteOptions) {
    for (const [i, item] of staged.filter(uploadable).entries()) {
      const how = options.mode === "overwrite" && i > 0 ? { ...options, mode: "append" as const } : options;
      if (!(await send(item, how))) break;
    }
  }

  return { send, sendAll, cancel: (key: string) => cancels.current.get(key)?.() };
}
