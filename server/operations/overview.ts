/**
 * The operations page's figures, drawn from the server's own metrics without a Prometheus: every process of the root
 * (the roster) is asked for its recent past (history.ts), each `npm start`'s primary once for its read cache, and
 * their steps are summed into the page's charts and totals. A look costs the store one listing of the roster, the
 * two leases' current slots, and a read of each process's record the first time: nothing per table.
 */
import "server-only";
import { register } from "prom-client";
import type { OperationsOverview, PolicyReport, RequestActivity } from "@/lib/contract/operations-overview";
import { committerHolder } from "@/server/catalog/catalog-committer";
import { invalidInput } from "@/server/errors";
import { INSTANCE } from "@/server/instance";
import { maintainerHolder, policyReport } from "@/server/maintenance/scheduler";
import { callPeer, handlePeerCalls, reachable } from "@/server/peers/peer-link";
import { askPrimary, hasPrimary } from "@/server/peers/primary-call";
import { ownRecord, readRoster, recentlyTouched, START_ID, type RosterRecord } from "@/server/operations/roster";
import type { ObjectStore } from "@/server/storage/object-store";
import { requestActivity } from "./activity";
import { KEEP_MS, MetricHistory, quiverMetric, STEP_MS, type HistoryStep } from "./history";
import { figuresOf, instanceTotals, type Buckets } from "./charts";

const CALL = "operations-history";
const CALL_TIMEOUT_MS = 3_000;
/** Points a chart draws at most: a longer window sums several steps into one point. */
const MAX_POINTS = 360;

const made = globalThis as typeof globalThis & { quiverHistory?: MetricHistory };
/** This process's history, taken from its first use (the server's start) on. */
export const processHistory = () => (made.quiverHistory ??= new MetricHistory(register, quiverMetric).start());

/** What a process answers for the page: its steps since a time, its start's primary's, and the policy's if it is the maintainer. */
interface ProcessReport {
  instance: string;
  start: string;
  steps: HistoryStep[];
  machine: HistoryStep[];
  policy: PolicyReport | null;
  requests: ReturnType<typeof requestActivity>;
}

async function ownReport(since: number): Promise<ProcessReport> {
  return {
    instance: INSTANCE,
    start: START_ID,
    steps: await processHistory().since(since),
    // A primary that does not answer (it is stopping) costs the page the read cache's figures, not the page.
    machine: hasPrimary() ? await askPrimary<HistoryStep[]>("quiver:history", { since }, CALL_TIMEOUT_MS).catch(() => []) : [],
    policy: policyReport(),
    requests: requestActivity(),
  };
}

handlePeerCalls(CALL, async (body) => ownReport(Number((body as { since?: unknown })?.since) || 0));

type Reached = { record: RosterRecord & { touched: number }; report: ProcessReport | null; error: string | null };

async function reach(record: RosterRecord & { touched: number }, since: number): Promise<Reached> {
  if (record.instance === INSTANCE) return { record, report: await ownReport(since), error: null };
  // A process that has not touched its record for two touches stopped: asking it would only wait for a timeout.
  if (!recentlyTouched(record.touched)) return { record, report: null, error: "it stopped writing its record in the roster" };
  if (!reachable(record.peer))
    return { record, report: null, error: `its peer address ${record.peer.url} is on another machine's loopback (set QUIVER_PEER_HOST)` };
  try {
    return { record, report: (await callPeer(record.peer, CALL, { since }, CALL_TIMEOUT_MS)) as ProcessReport, error: null };
  } catch (err) {
    return { record, report: null, error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The page's figures over the last `windowSeconds`, of every instance of the root or of one (`start`). Without
 * `catalog` (a metrics key's look, which may see no table), the requests and the tables the policy found due are left out.
 */
export async function operationsOverview(
  store: ObjectStore,
  windowSeconds: number,
  start: string | null,
  { catalog }: { catalog: boolean },
): Promise<OperationsOverview> {
  const now = Date.now();
  const windowMs = Math.min(windowSeconds * 1000, KEEP_MS);
  const stepMs = Math.max(STEP_MS, Math.ceil(windowMs / MAX_POINTS / STEP_MS) * STEP_MS);
  const from = now - windowMs;
  const [roster, maintainer, committer] = await Promise.all([readRoster(store), maintainerHolder(), committerHolder(store)]);
  // This process may not have written its record yet (it starts with the server): it answers anyway.
  const reached = await Promise.all(roster.map((record) => reach(record, from)));
  if (!reached.some(({ record }) => record.instance === INSTANCE)) reached.push(await reach({ ...(await ownRecord()), touched: now }, from));

  if (start !== null && !reached.some(({ record }) => record.start === start))
    throw invalidInput(`instance '${start}' is none of the root's instances now (GET /v1/admin/operations lists them)`);

  const times = Array.from({ length: Math.ceil(windowMs / stepMs) }, (_, i) => from + (i + 1) * stepMs);
  const bucketsOf = (reports: Array<{ steps: HistoryStep[] }>): Buckets => {
    const buckets: Buckets = times.map(() => ({ counters: new Map(), gauges: new Map() }));
    for (const { steps } of reports)
      for (const step of steps) {
        const at = Math.min(times.length - 1, Math.floor((step.t - from - 1) / stepMs));
        if (at < 0) continue;
        const bucket = buckets[at];
        for (const [key, value] of Object.entries(step.c)) bucket.counters.set(key, (bucket.counters.get(key) ?? 0) + value);
        for (const [key, value] of Object.entries(step.g)) bucket.gauges.set(key, Math.max(bucket.gauges.get(key) ?? 0, value));
      }
    return buckets;
  };
  const answered = reached.filter((r): r is Reached & { report: ProcessReport } => r.report !== null);
  // Each start's primary once, whichever of its workers brought it.
  const machines = new Map<string, HistoryStep[]>();
  for (const { report } of answered) if (report.machine.length && !machines.has(report.start)) machines.set(report.start, report.machine);
  const inScope = (s: string) => start === null || s === start;
  const buckets = bucketsOf([
    ...answered.filter(({ report }) => inScope(report.start)).map(({ report }) => report),
    ...[...machines].filter(([s]) => inScope(s)).map(([, steps]) => ({ steps })),
  ]);

  const byStart = new Map<string, Reached[]>();
  for (const r of reached) byStart.set(r.record.start, [...(byStart.get(r.record.start) ?? []), r]);
  const instances = [...byStart].map(([id, processes]) => {
    const own = instanceTotals(bucketsOf(processes.flatMap(({ report }) => (report ? [report] : []))), stepMs);
    return {
      id,
      machine: processes[0].record.machine,
      started_at: processes[0].record.started_at,
      version: processes[0].record.version,
      this_instance: id === START_ID,
      requests: own.requests,
      errors: own.errors,
      p99_ms: own.p99_ms,
      processes: processes.map(({ record, report, error }) => ({
        id: record.instance,
        pid: record.pid,
        state: report ? ("up" as const) : recentlyTouched(record.touched) ? ("unreachable" as const) : ("gone" as const),
        last_seen: new Date(report ? now : record.touched).toISOString(),
        maintainer: record.instance === maintainer,
        catalog_committer: record.instance === committer,
        error,
      })),
    };
  });
  instances.sort((a, b) => Number(b.this_instance) - Number(a.this_instance) || a.started_at.localeCompare(b.started_at));

  const policy = answered.find(({ report }) => report.policy)?.report.policy ?? null;
  const named = (holder: string | null) =>
    holder ? { process: holder, instance: reached.find(({ record }) => record.instance === holder)?.record.start ?? null } : null;
  return {
    now: new Date(now).toISOString(),
    window_seconds: windowMs / 1000,
    step_seconds: stepMs / 1000,
    instance: start,
    times,
    ...figuresOf(buckets, stepMs),
    instances: instances.filter((instance) => instance.processes.some((p) => p.state !== "gone") || instance.this_instance),
    maintainer: named(maintainer),
    catalog_committer: named(committer),
    policy: catalog ? policy : policy && { ...policy, last_pass: policy.last_pass && { ...policy.last_pass, due: [] } },
    requests: catalog ? gatherRequests(answered.filter(({ report }) => inScope(report.start))) : { running: [], finished: [] },
  };
}

/** Every process's heavy requests, named by process and instance: the longest running first, the newest finished first. */
function gatherRequests(answered: Array<{ report: ProcessReport }>): OperationsOverview["requests"] {
  const of = (pick: (r: ProcessReport["requests"]) => RequestActivity[]) =>
    answered.flatMap(({ report }) => pick(report.requests).map((a) => ({ ...a, process: report.instance, instance: report.start })));
  return {
    running: of((r) => r.running).sort((a, b) => a.started_at.localeCompare(b.started_at)),
    finished: of((r) => r.finished).sort((a, b) => b.started_at.localeCompare(a.started_at)),
  };
}
