/**
 * The heavy requests of this process (Arrow writes, queries, index builds, column rewrites), for the jobs page: the
 * ones waiting for their turn or running now, and the last LONG_KEPT that took at least LONG_MS or failed. In memory
 * only; a look at the page gathers every process's (overview.ts).
 */
import "server-only";
import type { RequestActivity } from "@/lib/contract/operations-overview";

const LONG_MS = 1000;
const LONG_KEPT = 50;
const RUNNING_SHOWN = 100;

interface ActivityState {
  running: Set<RequestActivity>;
  finished: RequestActivity[];
}
// One per process, though Next may load this module once per bundle.
const state = ((globalThis as typeof globalThis & { quiverActivity?: ActivityState }).quiverActivity ??= { running: new Set(), finished: [] });

export function requestBegan(request: Pick<RequestActivity, "request_id" | "operation" | "database" | "target" | "principal">): RequestActivity {
  const activity: RequestActivity = { ...request, state: "queued", started_at: new Date().toISOString(), duration_ms: null, status: null, error: null };
  state.running.add(activity);
  return activity;
}

export function requestAdmitted(activity: RequestActivity) {
  activity.state = "running";
}

export function requestEnded(activity: RequestActivity, status: number, error: string | null) {
  state.running.delete(activity);
  const duration = Date.now() - Date.parse(activity.started_at);
  if (duration < LONG_MS && status < 500) return;
  state.finished.push({ ...activity, state: status < 400 ? "succeeded" : "failed", duration_ms: duration, status, error });
  if (state.finished.length > LONG_KEPT) state.finished.shift();
}

export function requestActivity(): { running: RequestActivity[]; finished: RequestActivity[] } {
  const now = Date.now();
  const running = [...state.running].slice(0, RUNNING_SHOWN).map((a) => ({ ...a, duration_ms: now - Date.parse(a.started_at) }));
  return { running, finished: [...state.finished] };
}
