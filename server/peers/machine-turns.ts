/**
 * A table's write turn across the workers of one `npm start`: the primary (scripts/start.mjs) hands each table's turn
 * to one worker at a time, in the order they asked. Without it, two workers committing to one table raced each other
 * for every version; under a burst of small inserts one of them could lose the engine's twenty retries in a row and
 * answer 409 to an append. With it, the workers of a machine commit in turn, each a group of what arrived meanwhile,
 * as one process does; instances on other machines still meet only in the store, where commits are atomic.
 */
import "server-only";
import cluster from "node:cluster";
import { metrics } from "@/server/metrics";

/** The messages between a worker and the primary. */
const ASK = "quiver:turn-ask";
const GRANTED = "quiver:turn-granted";
const DONE = "quiver:turn-done";

const waiting = new Map<number, (afterAnother: boolean) => void>();
let asked = 0;
let listening = false;

function listen() {
  if (listening) return;
  listening = true;
  process.on("message", (message: { type?: string; id?: number; afterAnother?: boolean }) => {
    if (message?.type !== GRANTED || message.id === undefined) return;
    const granted = waiting.get(message.id);
    waiting.delete(message.id);
    granted?.(message.afterAnother === true);
  });
}

/** Runs `work` holding the machine's turn for `key`; alone when this process is not a worker of `npm start`. */
export async function inMachineTurn<T>(key: string, work: () => Promise<T>): Promise<T> {
  if (!cluster.isWorker || !process.send) return work();
  listen();
  const id = ++asked;
  const afterAnother = await new Promise<boolean>((resolve) => {
    waiting.set(id, resolve);
    process.send!({ type: ASK, id, key });
  });
  metrics.writeTurns.inc({ last_held_by: afterAnother ? "another_worker" : "this_worker" });
  try {
    return await work();
  } finally {
    process.send({ type: DONE, id, key });
  }
}
