/**
 * The recent past of a process's own metrics, for the console's operations page, which must not need a Prometheus:
 * every STEP_MS the counters' increase since the step before and the gauges' values, kept for KEEP_MS. Only what
 * changed is kept, so an idle process keeps next to nothing. Server processes keep their own; `npm start`'s primary
 * keeps one of the read cache it runs for its workers (scripts/start.mjs), so this module is erasable TypeScript that
 * Node loads as it is there (see server/storage/read-cache/disk-cache.ts), and imports no server module.
 */
import type { MetricObjectWithValues, MetricValue, Registry } from "prom-client";

/** What every metric of a registry is (its listing types them as less). */
type Readable = { name: string; get(): Promise<MetricObjectWithValues<MetricValue<string> & { metricName?: string }>> };

/** One step: when it ended, each counter series' increase during it, each gauge series' value at its end (0s left out). */
export interface HistoryStep {
  t: number;
  c: Record<string, number>;
  g: Record<string, number>;
}

export const STEP_MS = 10_000;
export const KEEP_MS = 3 * 3_600_000;

/** A series' key: the metric's name and its labels, sorted, as `name|label=value|…` (the labels' values are ours, never a user's). */
export function seriesKey(name: string, labels: Record<string, string | number>): string {
  return [
    name,
    ...Object.keys(labels)
      .sort()
      .map((label) => `${label}=${labels[label]}`),
  ].join("|");
}

export function parseSeriesKey(key: string): { name: string; labels: Record<string, string> } {
  const [name, ...pairs] = key.split("|");
  const labels: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    labels[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { name, labels };
}

interface Reading {
  counters: Map<string, number>;
  gauges: Map<string, number>;
}

export class MetricHistory {
  private readonly steps: HistoryStep[] = [];
  private last: Reading = { counters: new Map(), gauges: new Map() };
  private ticking: Promise<void> | null = null;

  private readonly registry: Registry;
  private readonly include: (name: string) => boolean;

  /** `include` picks the metrics kept by name: the process's defaults (memory, CPU) have no place on the page. */
  constructor(registry: Registry, include: (name: string) => boolean) {
    this.registry = registry;
    this.include = include;
  }

  /** Takes a step now and every STEP_MS from now on. */
  start(): this {
    void this.tick();
    setInterval(() => void this.tick(), STEP_MS).unref();
    return this;
  }

  /** Takes a step: one at a time, so that two never count the same increase. */
  tick(): Promise<void> {
    this.ticking ??= this.step().finally(() => (this.ticking = null));
    return this.ticking;
  }

  /** The steps that ended after `after`, and the step under way (its increase so far) as the last. */
  async since(after: number): Promise<HistoryStep[]> {
    await this.ticking;
    const kept = this.steps.filter((step) => step.t > after);
    const now = Date.now();
    return [...kept, { t: now, ...this.difference(await this.read()) }];
  }

  private async step() {
    const reading = await this.read();
    const step = { t: Date.now(), ...this.difference(reading) };
    this.last = reading;
    this.steps.push(step);
    while (this.steps.length && this.steps[0].t < step.t - KEEP_MS) this.steps.shift();
  }

  private difference(reading: Reading): Omit<HistoryStep, "t"> {
    const c: Record<string, number> = {};
    for (const [key, value] of reading.counters) {
      // A counter below its last reading was reset (a collected counter whose source started again): all of it is new.
      const before = this.last.counters.get(key) ?? 0;
      const increase = value >= before ? value - before : value;
      if (increase !== 0) c[key] = increase;
    }
    const g: Record<string, number> = {};
    for (const [key, value] of reading.gauges) if (value !== 0) g[key] = value;
    return { c, g };
  }

  private async read(): Promise<Reading> {
    const reading: Reading = { counters: new Map(), gauges: new Map() };
    for (const metric of this.registry.getMetricsAsArray() as unknown as Readable[]) {
      if (!this.include(metric.name)) continue;
      const { type, values } = await metric.get();
      const into = String(type) === "gauge" ? reading.gauges : reading.counters;
      for (const value of values) {
        // A histogram's sum says nothing a chart needs; its buckets and count do.
        const name = value.metricName ?? metric.name;
        if (name.endsWith("_sum")) continue;
        into.set(seriesKey(name, value.labels as Record<string, string | number>), value.value);
      }
    }
    return reading;
  }
}

/** The metrics of Quiver's own, without the process's defaults that prom-client adds under the same prefix. */
export const quiverMetric = (name: string) => name.startsWith("quiver_") && !/^quiver_(process|nodejs)_/.test(name);
