/**
 * A question from a worker of `npm start` to its primary (scripts/start.mjs), answered over the cluster's IPC: the
 * metrics summed over all workers, the machine's read cache's recent past. The primary answers `${type}-answer` with
 * the question's id and either its answer or an error.
 */
import "server-only";
import cluster from "node:cluster";
import { randomUUID } from "node:crypto";

/** Whether this process is a worker of `npm start`, with a primary to ask. */
export const hasPrimary = () => cluster.isWorker && process.send !== undefined;

export function askPrimary<T>(type: string, body: Record<string, unknown>, timeoutMs: number): Promise<T> {
  const id = randomUUID();
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => (process.off("message", listen), reject(new Error(`the primary process did not answer ${type} within ${timeoutMs} ms`))),
      timeoutMs,
    );
    const listen = (message: { type?: string; id?: string; answer?: T; error?: string }) => {
      if (message?.type !== `${type}-answer` || message.id !== id) return;
      clearTimeout(timer);
      process.off("message", listen);
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.answer as T);
    };
    process.on("message", listen);
    process.send!({ ...body, type, id });
  });
}
