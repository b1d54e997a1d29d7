/** Whether the data root's store answers: a read of one small object, bounded in time. */
import "server-only";
import { withDeadline } from "./deadline";
import type { ObjectStore } from "./object-store";

const PROBE_KEY = ".quiver/ready";

export async function storeAnswers(store: ObjectStore, timeoutMs: number): Promise<{ ready: true } | { ready: false; reason: string }> {
  try {
    await withDeadline(store.head(PROBE_KEY), timeoutMs, `no answer within ${timeoutMs} ms`);
    return { ready: true };
  } catch (err) {
    return { ready: false, reason: (err instanceof Error ? err.message : String(err)).split("\n")[0].slice(0, 300) };
  }
}
