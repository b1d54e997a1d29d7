/** Whether the data root's store answers: a read of one small object, bounded in time. */
import type { ObjectStore } from "./object-store";

const PROBE_KEY = ".quiver/ready";

export async function storeAnswers(store: ObjectStore, timeoutMs: number): Promise<{ ready: true } | { ready: false; reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([store.head(PROBE_KEY), timeout]);
    return { ready: true };
  } catch (err) {
    return { ready: false, reason: (err instanceof Error ? err.message : String(err)).split("\n")[0].slice(0, 300) };
  } finally {
    clearTimeout(timer);
  }
}
