/** The operations page's charts and totals, from the summed steps of the processes in view (overview.ts). */
import "server-only";
import type { OperationsChart, OperationsTotals } from "@/lib/contract/operations-overview";
import { parseSeriesKey } from "./history";

/** One point of the charts: the counters' increase during it and the gauges' values, summed over the processes. */
export type Buckets = Array<{ counters: Map<string, number>; gauges: Map<string, number> }>;

/** Operations a chart names one by one; the rest are summed as "other". */
const TOP = 6;

type Labels = Record<string, string>;
type Samples = Map<string, Array<[Labels, number]>>;
/** The points' samples by metric name, each series key parsed once: a chart reads only its metric's samples. */
type Points = Array<{ counters: Samples; gauges: Samples }>;

function pointsOf(buckets: Buckets): Points {
  const parsed = new Map<string, ReturnType<typeof parseSeriesKey>>();
  const byName = (values: Map<string, number>): Samples => {
    const out: Samples = new Map();
    for (const [key, value] of values) {
      let series = parsed.get(key);
      if (!series) parsed.set(key, (series = parseSeriesKey(key)));
      const samples = out.get(series.name) ?? [];
      samples.push([series.labels, value]);
      out.set(series.name, samples);
    }
    return out;
  };
  return buckets.map((bucket) => ({ counters: byName(bucket.counters), gauges: byName(bucket.gauges) }));
}

/** Per series name (what `by` makes of a sample's labels, null: left out), its value at each point. */
function series(points: Points, metric: string, by: (labels: Labels) => string | null, from: "counters" | "gauges" = "counters"): Map<string, number[]> {
  const out = new Map<string, number[]>();
  points.forEach((point, at) => {
    for (const [labels, value] of point[from].get(metric) ?? []) {
      const named = by(labels);
      if (named === null) continue;
      const values = out.get(named) ?? new Array<number>(points.length).fill(0);
      values[at] += value;
      out.set(named, values);
    }
  });
  return out;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const scaled = (values: number[], by: number) => values.map((v) => v * by);

/** The busiest names first, at most TOP of them, and "other" for the rest. */
function busiest(all: Map<string, number[]>): Map<string, number[]> {
  const ranked = [...all].sort((a, b) => sum(b[1]) - sum(a[1]));
  const kept = new Map(ranked.slice(0, TOP));
  const rest = ranked.slice(TOP);
  if (rest.length)
    kept.set(
      "other",
      rest[0][1].map((_, i) => sum(rest.map(([, values]) => values[i]))),
    );
  return kept;
}

/**
 * A quantile of a histogram's counts per bucket bound (`le`), as Prometheus's histogram_quantile makes it: linear
 * within the bucket the rank falls in; the highest finite bound when it falls beyond it. Null without observations.
 */
export function quantile(q: number, counts: Map<number, number>): number | null {
  const bounds = [...counts.keys()].sort((a, b) => a - b);
  const total = counts.get(Infinity) ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const bound of bounds) {
    const count = counts.get(bound)!;
    if (count >= rank) {
      if (bound === Infinity) return lower;
      return lower + ((bound - lower) * (rank - below)) / Math.max(count - below, 1e-12);
    }
    lower = bound;
    below = count;
  }
  return lower;
}

/** Per operation (or "all"), per point, the duration histogram's cumulative counts by bound. */
function histograms(points: Points, byOperation: boolean): Map<string, Array<Map<number, number>>> {
  const out = new Map<string, Array<Map<number, number>>>();
  points.forEach((point, at) => {
    for (const [labels, value] of point.counters.get("quiver_http_request_duration_seconds_bucket") ?? []) {
      const operation = byOperation ? labels.operation : "all";
      const counts = out.get(operation) ?? points.map(() => new Map<number, number>());
      const bound = labels.le === "+Inf" ? Infinity : Number(labels.le);
      counts[at].set(bound, (counts[at].get(bound) ?? 0) + value);
      out.set(operation, counts);
    }
  });
  return out;
}

const ms = (seconds: number | null) => (seconds === null ? null : Math.round(seconds * 100_000) / 100);
const chart = (id: string, title: string, unit: string, named: Map<string, Array<number | null>>): OperationsChart => ({
  id,
  title,
  unit,
  series: [...named].map(([name, values]) => ({ name, values })),
});

/** The page's charts and totals of the same points. */
export function figuresOf(buckets: Buckets, stepMs: number): { charts: OperationsChart[]; totals: OperationsTotals } {
  const points = pointsOf(buckets);
  return { charts: chartsOf(points, stepMs), totals: totalsOf(points, stepMs) };
}

/** The totals alone (an instance's own, in the instances table). */
export const instanceTotals = (buckets: Buckets, stepMs: number) => totalsOf(pointsOf(buckets), stepMs);

function chartsOf(points: Points, stepMs: number): OperationsChart[] {
  const perSecond = 1000 / stepMs;
  const perMinute = 60_000 / stepMs;
  const requests = busiest(series(points, "quiver_http_requests_total", (l) => l.operation));
  const shown = [...requests.keys()].filter((name) => name !== "other");
  const latency = histograms(points, true);
  const latencyChart = (q: number) =>
    new Map(shown.filter((op) => latency.has(op)).map((op) => [op, latency.get(op)!.map((counts) => ms(quantile(q, counts)))] as const));
  const errors = series(points, "quiver_http_requests_total", (l) => (Number(l.status) >= 400 ? l.status : null));
  const store = series(points, "quiver_store_requests_total", (l) => (l.outcome === "error" ? "errors" : l.kind));
  const events = new Map([
    ...series(points, "quiver_commit_conflicts_total", () => "commit conflicts"),
    ...series(points, "quiver_write_repeats_total", (l) => `repeats ${l.outcome.replace("_", " ")}`),
  ]);
  const lookups = series(points, "quiver_cache_lookups_total", (l) => `${l.cache} ${l.result}`);
  const readCacheHits = series(points, "quiver_read_cache_hits_total", () => "read cache hit");
  const readCacheMisses = series(points, "quiver_read_cache_misses_total", () => "read cache miss");
  const caches = new Set([...lookups.keys()].map((k) => k.replace(/ (hit|miss)$/, "")));
  const all = new Map([...lookups, ...readCacheHits, ...readCacheMisses]);
  if (readCacheHits.size || readCacheMisses.size) caches.add("read cache");
  const ratios = new Map(
    [...caches].sort().map((cache) => {
      const hits = all.get(`${cache} hit`) ?? [];
      const misses = all.get(`${cache} miss`) ?? [];
      return [
        cache,
        points.map((_, i) => ((hits[i] ?? 0) + (misses[i] ?? 0) === 0 ? null : (100 * (hits[i] ?? 0)) / ((hits[i] ?? 0) + (misses[i] ?? 0)))),
      ] as const;
    }),
  );
  const per = (values: Map<string, number[]>, by: number) => new Map([...values].map(([name, v]) => [name, scaled(v, by)] as const));
  return [
    chart("requests", "Requests per second by operation", "req/s", per(requests, perSecond)),
    chart("latency-p50", "Latency p50 by operation", "ms", latencyChart(0.5)),
    chart("latency-p99", "Latency p99 by operation", "ms", latencyChart(0.99)),
    chart("errors", "Errors and refusals per second by status", "req/s", per(errors, perSecond)),
    chart("store", "Store requests per second by kind", "req/s", per(store, perSecond)),
    chart(
      "rows",
      "Rows written per second",
      "rows/s",
      per(
        series(points, "quiver_rows_written_total", () => "rows"),
        perSecond,
      ),
    ),
    chart(
      "bytes",
      "Arrow bytes received per second",
      "B/s",
      per(
        series(points, "quiver_arrow_body_bytes_total", () => "bytes"),
        perSecond,
      ),
    ),
    chart("conflicts", "Commit conflicts and write repeats per minute", "/min", per(events, perMinute)),
    chart("caches", "Cache hits", "%", ratios),
    chart(
      "maintenance",
      "Maintenance jobs finished per minute",
      "/min",
      per(
        series(points, "quiver_maintenance_runs_total", (l) => `${l.kind} ${l.outcome}`),
        perMinute,
      ),
    ),
    chart(
      "heavy",
      "Heavy requests running and waiting",
      "",
      new Map([
        ...series(points, "quiver_heavy_requests_running", () => "running", "gauges"),
        ...series(points, "quiver_heavy_requests_queued", () => "waiting", "gauges"),
      ]),
    ),
  ];
}

function totalsOf(points: Points, stepMs: number): OperationsTotals {
  const total = (metric: string, by: (labels: Labels) => boolean = () => true) =>
    sum([...series(points, metric, (l) => (by(l) ? "x" : null)).values()].flatMap((v) => v));
  const merged = new Map<number, number>();
  for (const counts of histograms(points, false).get("all") ?? []) for (const [bound, n] of counts) merged.set(bound, (merged.get(bound) ?? 0) + n);
  const requests = total("quiver_http_requests_total");
  return {
    requests,
    requests_per_second: requests / ((points.length * stepMs) / 1000),
    errors: total("quiver_http_requests_total", (l) => Number(l.status) >= 400),
    refused: total("quiver_requests_refused_total"),
    p99_ms: ms(quantile(0.99, merged)),
    conflicts: total("quiver_commit_conflicts_total"),
    repeats: total("quiver_write_repeats_total"),
    store_requests: total("quiver_store_requests_total"),
    store_errors: total("quiver_store_requests_total", (l) => l.outcome === "error"),
    rows_written: total("quiver_rows_written_total"),
    bytes_received: total("quiver_arrow_body_bytes_total"),
    maintenance_succeeded: total("quiver_maintenance_runs_total", (l) => l.outcome !== "failed"),
    maintenance_failed: total("quiver_maintenance_runs_total", (l) => l.outcome === "failed"),
  };
}
