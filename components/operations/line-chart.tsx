"use client";
/**
 * A time series chart of a few lines, drawn as SVG without a charting library: the operations page draws a dozen of
 * them, of up to a thousand points each, refreshed every few seconds, and needs no more than lines, axes, a legend
 * that hides a line, and the values under the pointer.
 */
import { useEffect, useMemo, useRef, useState, type PointerEvent } from "react";

export interface ChartSeries {
  name: string;
  /** One value per time; null: no data there, and the line breaks. */
  values: (number | null)[];
}

export interface LineChartProps {
  /** Shown above the chart, and the figure's accessible name. */
  title: string;
  /** Of every series: "req/s", "ms", "%", "/min", "" for a plain count, or "B/s" (shown as KiB/s, MiB/s…). */
  unit: string;
  /** Milliseconds since the epoch, ascending; every series has one value per time. */
  times: number[];
  series: ChartSeries[];
  /** Shown in place of the lines when every value is null or 0. */
  empty?: string;
  height?: number;
}

// Each has a contrast of 3:1 or more both on white and on the dark theme's slate-950 (or a zinc-900 card).
const COLORS = ["#3b82f6", "#d97706", "#059669", "#ec4899", "#8b5cf6", "#0891b2", "#ef4444", "#64748b"];
const FONT_SIZE = 10;
// A generous width of one character of the axis labels, so that they get room enough whatever the font.
const CHAR_WIDTH = 6;

/** The smallest of 1, 2, 2.5 and 5 times a power of ten at or above `max` (1 when there is nothing above 0). */
export function niceMax(max: number): number {
  return niceScale(max).max;
}

/** The nice maximum, and how many equal steps split it into round values. */
function niceScale(max: number): { max: number; steps: number } {
  if (!(max > 0)) return { max: 1, steps: 4 };
  const power = 10 ** Math.floor(Math.log10(max));
  // The tolerance keeps a maximum that is already nice, give or take a rounding error, from going up a step.
  const mantissa = [1, 2, 2.5, 5].find((m) => m * power >= max * (1 - 1e-9)) ?? 10;
  return { max: mantissa * power, steps: mantissa === 2.5 || mantissa === 5 ? 5 : 4 };
}

const isBytes = (unit: string) => unit === "B" || unit.startsWith("B/");

/** Three significant digits, but every digit of a whole number: 1.23, 42.3, and 1023 KiB rather than 1020. */
const significant = (n: number) => (Math.abs(n) >= 100 ? Math.round(n) : Number(n.toPrecision(3)));

/** `value` as a few digits times a power of `base`, and the prefix that names that power. */
function shorten(value: number, base: number, prefixes: string[]): [string, string] {
  let power = 0;
  while (Math.abs(value) / base ** power >= base && power < prefixes.length - 1) power++;
  let digits = significant(value / base ** power);
  // Rounding may carry into the next power: 999.6k is 1M, not 1000k.
  if (Math.abs(digits) >= base && power < prefixes.length - 1) {
    power++;
    digits = significant(value / base ** power);
  }
  return [String(digits), prefixes[power]];
}

/** A figure with its unit, shortened: 1.23k req/s, 0.5 ms, 1.5 KiB/s, 42.3%, 12/min. */
export function formatValue(value: number, unit: string): string {
  if (isBytes(unit)) {
    const [digits, prefix] = shorten(value, 1024, ["", "Ki", "Mi", "Gi", "Ti", "Pi"]);
    return `${digits} ${prefix}${unit}`;
  }
  const [digits, prefix] = shorten(value, 1000, ["", "k", "M", "G", "T"]);
  if (unit === "") return `${digits}${prefix}`;
  return unit === "%" || unit.startsWith("/") ? `${digits}${prefix}${unit}` : `${digits}${prefix} ${unit}`;
}

/** The top of the y axis and its steps: for bytes, round in KiB, MiB…, not in thousands. */
function yScale(highest: number, unit: string): { max: number; steps: number } {
  const base = isBytes(unit) && highest >= 1024 ? 1024 ** Math.min(5, Math.floor(Math.log2(highest) / 10)) : 1;
  const scale = niceScale(highest / base);
  return { max: scale.max * base, steps: scale.steps };
}

// Steps from ten seconds to a day, so that labels fall on round local times: 14:15, 14:30, not 14:07, 14:22.
const TIME_STEPS = [10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400].map((s) => s * 1000);

/** Between 3 and `most` times from `first` to `last` to label, on round local times when some step gives that many. */
function timeTicks(first: number, last: number, most: number): number[] {
  if (!(last > first)) return [first];
  // Local time is UTC minus this offset: a tick is round where the local clock is, also half an hour off UTC.
  const offset = new Date(first).getTimezoneOffset() * 60_000;
  for (const step of TIME_STEPS) {
    const ticks: number[] = [];
    for (let t = Math.ceil((first - offset) / step) * step + offset; t <= last; t += step) ticks.push(t);
    if (ticks.length < 3) break;
    if (ticks.length <= most) return ticks;
  }
  return Array.from({ length: most }, (_, i) => first + ((last - first) * i) / (most - 1));
}

const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
const clockSeconds = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });

/** The index of the value of ascending `xs` nearest to `x`. */
function nearest(xs: number[], x: number): number {
  let low = 0;
  let high = xs.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (xs[middle] < x) low = middle + 1;
    else high = middle;
  }
  return low > 0 && x - xs[low - 1] < xs[low] - x ? low - 1 : low;
}

function lastValue(values: (number | null)[]): number | null {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null) return values[i];
  return null;
}

const round = (n: number) => Math.round(n * 10) / 10;

/** Everything drawn, in pixels of a chart `width` wide: computed once per data, size or hidden series, not per pointer move. */
function layout(times: number[], series: ChartSeries[], hidden: ReadonlySet<string>, unit: string, width: number, height: number) {
  const visible = series.map((s, i) => ({ ...s, color: COLORS[i % COLORS.length] })).filter((s) => !hidden.has(s.name));
  let highest = 0;
  for (const s of visible) for (const v of s.values) if (v !== null && v > highest) highest = v;
  const { max, steps } = yScale(highest, unit);
  // Ticks carry the unit where it changes with the scale (KiB/s, MiB/s) or is a sign (%); otherwise it is said once above.
  const tickUnit = isBytes(unit) || unit === "%" ? unit : "";
  const unitLabel = tickUnit === "" && unit !== "" ? unit : null;
  const yLabels = Array.from({ length: steps + 1 }, (_, i) => ({ value: (max * i) / steps, label: formatValue((max * i) / steps, tickUnit) }));

  const left = Math.max(...yLabels.map((t) => t.label.length)) * CHAR_WIDTH + 6;
  const top = unitLabel ? 20 : 8;
  const right = 8;
  const plotWidth = Math.max(1, width - left - right);
  const plotHeight = Math.max(1, height - top - 18);
  const first = times[0] ?? 0;
  const span = (times.at(-1) ?? first) - first;
  const x = (t: number) => (span > 0 ? left + ((t - first) / span) * plotWidth : left + plotWidth / 2);
  const y = (v: number) => top + plotHeight - (v / max) * plotHeight;

  const withSeconds = span < 5 * 60_000;
  const labelWidth = (withSeconds ? 8 : 5) * CHAR_WIDTH;
  const most = Math.min(5, Math.max(3, Math.floor(plotWidth / (labelWidth + 24))));
  const xLabels = times.length
    ? timeTicks(first, first + span, most).map((t) => {
        const at = x(t);
        const anchor: "start" | "middle" | "end" = at + labelWidth / 2 > width ? "end" : at - labelWidth / 2 < 0 ? "start" : "middle";
        return { x: at, anchor, label: (withSeconds ? clockSeconds : clock).format(t) };
      })
    : [];

  const xs = times.map((t) => round(x(t)));
  const lines = visible.map((s) => {
    let d = "";
    const dots: Array<{ x: number; y: number }> = [];
    for (let i = 0; i < xs.length; i++) {
      const v = s.values[i] ?? null;
      if (v === null) continue;
      const joinsBefore = i > 0 && (s.values[i - 1] ?? null) !== null;
      const joinsAfter = (s.values[i + 1] ?? null) !== null;
      // A point between two gaps draws no line: it shows as a dot.
      if (!joinsBefore && !joinsAfter) dots.push({ x: xs[i], y: round(y(v)) });
      else d += `${joinsBefore ? "L" : "M"}${xs[i]} ${round(y(v))}`;
    }
    return { name: s.name, color: s.color, values: s.values, d, dots };
  });

  const nothing = series.every((s) => s.values.every((v) => v === null || v === 0));
  return { left, top, right, plotHeight, y, unitLabel, yLabels, xLabels, xs, lines, nothing };
}

export function LineChart({ title, unit, times, series, empty, height = 160 }: LineChartProps) {
  const [hidden, setHidden] = useState<ReadonlySet<string>>(() => new Set());
  const [hover, setHover] = useState<number | null>(null);
  const [width, setWidth] = useState(0);
  const box = useRef<HTMLDivElement>(null);

  // Drawn at the width it is shown at, so that labels keep their size and number from a phone to a wide screen.
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry.contentRect.width)));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const chart = useMemo(() => (width > 0 ? layout(times, series, hidden, unit, width, height) : null), [times, series, hidden, unit, width, height]);
  const blank = chart !== null && chart.nothing && empty !== undefined;
  const at = chart && !blank && hover !== null && hover < chart.xs.length ? hover : null;

  const point = (event: PointerEvent<SVGSVGElement>) => {
    if (!chart || chart.xs.length === 0) return;
    const rect = event.currentTarget.getBoundingClientRect();
    setHover(nearest(chart.xs, ((event.clientX - rect.left) / rect.width) * width));
  };
  const toggle = (name: string) =>
    setHidden((before) => {
      const next = new Set(before);
      if (!next.delete(name)) next.add(name);
      return next;
    });

  return (
    <figure aria-label={title} className="flex flex-col gap-1.5">
      <figcaption className="text-sm font-medium">{title}</figcaption>
      <div ref={box} className="relative">
        <svg
          className="block w-full touch-pan-y select-none text-slate-500 dark:text-slate-400"
          height={height}
          viewBox={chart ? `0 0 ${width} ${height}` : undefined}
          fontSize={FONT_SIZE}
          aria-hidden
          onPointerMove={point}
          onPointerDown={point}
          onPointerLeave={() => setHover(null)}
        >
          {chart && (
            <>
              {chart.unitLabel && (
                <text x={0} y={FONT_SIZE} fill="currentColor">
                  {chart.unitLabel}
                </text>
              )}
              {chart.yLabels.map((tick) => (
                <g key={tick.value}>
                  {/* The empty text sits across the middle gridline: with nothing drawn, the baseline is axis enough. */}
                  {(!blank || tick.value === 0) && (
                    <line
                      x1={chart.left}
                      x2={width - chart.right}
                      y1={round(chart.y(tick.value))}
                      y2={round(chart.y(tick.value))}
                      stroke="currentColor"
                      strokeOpacity={tick.value === 0 ? 0.6 : 0.2}
                    />
                  )}
                  <text x={chart.left - 6} y={chart.y(tick.value) + 3} textAnchor="end" fill="currentColor">
                    {tick.label}
                  </text>
                </g>
              ))}
              {chart.xLabels.map((tick) => (
                <text key={tick.x} x={tick.x} y={height - 4} textAnchor={tick.anchor} fill="currentColor">
                  {tick.label}
                </text>
              ))}
              {!blank &&
                chart.lines.map((line) => (
                  <g key={line.name} stroke={line.color} fill={line.color}>
                    <path d={line.d} fill="none" strokeWidth={1.5} strokeLinejoin="round" strokeLinecap="round" />
                    {line.dots.map((dot) => (
                      <circle key={dot.x} cx={dot.x} cy={dot.y} r={2} stroke="none" />
                    ))}
                  </g>
                ))}
              {at !== null && (
                <g>
                  <line x1={chart.xs[at]} x2={chart.xs[at]} y1={chart.top} y2={chart.top + chart.plotHeight} stroke="currentColor" strokeOpacity={0.7} />
                  {chart.lines.map((line) => {
                    const v = line.values[at] ?? null;
                    return v === null ? null : (
                      <circle
                        key={line.name}
                        cx={chart.xs[at]}
                        cy={chart.y(v)}
                        r={3}
                        fill={line.color}
                        strokeWidth={1.5}
                        className="stroke-white dark:stroke-slate-950"
                      />
                    );
                  })}
                </g>
              )}
            </>
          )}
        </svg>
        {chart && blank && (
          <div
            className="absolute flex items-center justify-center px-2 text-center text-sm text-slate-500 dark:text-slate-400"
            style={{ left: chart.left, right: chart.right, top: chart.top, height: chart.plotHeight }}
          >
            {empty}
          </div>
        )}
        {chart && at !== null && (
          <div
            role="tooltip"
            className="pointer-events-none absolute z-10 max-w-64 rounded-md border border-slate-200 bg-white/95 px-2 py-1 text-xs text-slate-900 shadow-sm dark:border-slate-700 dark:bg-slate-900/95 dark:text-slate-100"
            style={{ top: chart.top, ...(chart.xs[at] > width / 2 ? { right: width - chart.xs[at] + 8 } : { left: chart.xs[at] + 8 }) }}
          >
            <div className="font-medium tabular-nums">{clockSeconds.format(times[at])}</div>
            {chart.lines.map((line) => {
              const v = line.values[at] ?? null;
              return (
                <div key={line.name} className="flex items-center gap-1.5">
                  <span className="h-2 w-2 shrink-0 rounded-full" style={{ background: line.color }} />
                  <span className="truncate">{line.name}</span>
                  <span className="ml-auto pl-2 tabular-nums">{v === null ? "—" : formatValue(v, unit)}</span>
                </div>
              );
            })}
          </div>
        )}
      </div>
      {series.length > 0 && (
        <ul className="flex flex-wrap gap-x-2 gap-y-1 text-xs" aria-label={`${title}: series`}>
          {series.map((s, i) => {
            const color = COLORS[i % COLORS.length];
            const shown = !hidden.has(s.name);
            const latest = lastValue(s.values);
            return (
              <li key={s.name}>
                <button
                  type="button"
                  aria-pressed={shown}
                  title={shown ? "Hide this line" : "Show this line"}
                  onClick={() => toggle(s.name)}
                  className="flex items-center gap-1.5 rounded px-1.5 py-0.5 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500 dark:hover:bg-slate-800"
                >
                  <span className="h-2.5 w-2.5 shrink-0 rounded-sm border-2" style={{ borderColor: color, background: shown ? color : "transparent" }} />
                  <span className={shown ? "" : "text-slate-400 line-through dark:text-slate-500"}>{s.name}</span>
                  <span className="tabular-nums text-slate-500 dark:text-slate-400">{latest === null ? "—" : formatValue(latest, unit)}</span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </figure>
  );
}
