"use client";
/**
 * A time series chart of a few lines, drawn as SVG without a charting library: the operations page draws a dozen of
 * them, refreshed every few seconds, and needs no more than lines, axes, a legend that hides a line, and the values
 * under the pointer.
 */
import { useState } from "react";

export interface ChartSeries {
  name: string;
  /** One value per time; null: nothing to show there (the line breaks). */
  values: (number | null)[];
}

export interface LineChartProps {
  title: string;
  unit: string;
  times: number[];
  series: ChartSeries[];
  /** Shown instead of lines when no series has a value above 0. */
  empty?: string;
  height?: number;
}

// Readable on white and on the dark theme's slate-950.
const COLORS = ["#4f46e5", "#0891b2", "#d97706", "#db2777", "#16a34a", "#7c3aed", "#dc2626", "#64748b"];
const WIDTH = 600;
const PAD = { left: 44, right: 8, top: 8, bottom: 20 };

/** The smallest of 1, 2, 2.5 and 5 times a power of ten at or above `max` (1 for nothing). */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= max * (1 - 1e-9)) return step * power;
  return 10 * power;
}

const trim = (n: number) => String(Number(n.toPrecision(3)));

/** A figure with its unit, shortened: 1.23k req/s, 1.5 KiB/s, 42.3%. */
export function formatValue(value: number, unit: string): string {
  if (unit.startsWith("B")) {
    const units = ["", "Ki", "Mi", "Gi", "Ti"];
    let at = 0;
    let v = value;
    while (Math.abs(v) >= 1024 && at < units.length - 1) {
      v /= 1024;
      at++;
    }
    return `${trim(v)} ${units[at]}${unit}`;
  }
  const abs = Math.abs(value);
  const short = abs >= 1e9 ? `${trim(value / 1e9)}G` : abs >= 1e6 ? `${trim(value / 1e6)}M` : abs >= 1e3 ? `${trim(value / 1e3)}k` : trim(value);
  if (unit === "") return short;
  return unit === "%" || unit.startsWith("/") ? `${short}${unit}` : `${short} ${unit}`;
}

function timeLabel(ms: number, span: number): string {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", ...(span < 5 * 60_000 ? { second: "2-digit" } : {}) });
}

export function LineChart({ title, unit, times, series, empty, height = 160 }: LineChartProps) {
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const [hover, setHover] = useState<number | null>(null);
  const shown = series.map((s, i) => ({ ...s, color: COLORS[i % COLORS.length] })).filter((s) => !hidden.has(s.name));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom;
  const first = times[0] ?? 0;
  const span = Math.max(1, (times.at(-1) ?? 1) - first);
  const x = (t: number) => PAD.left + ((t - first) / span) * plotW;
  const top = niceMax(Math.max(0, ...shown.flatMap((s) => s.values.filter((v): v is number => v !== null))));
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const nothing = series.every((s) => s.values.every((v) => v === null || v === 0));

  const paths = shown.map((s) => {
    let d = "";
    let pen = false;
    const dots: Array<[number, number]> = [];
    s.values.forEach((v, i) => {
      if (v === null) {
        pen = false;
        return;
      }
      const isolated = (i === 0 || s.values[i - 1] === null) && (i === s.values.length - 1 || s.values[i + 1] === null);
      if (isolated) dots.push([x(times[i]), y(v)]);
      d += `${pen ? "L" : "M"}${x(times[i]).toFixed(1)},${y(v).toFixed(1)}`;
      pen = true;
    });
    return { name: s.name, color: s.color, d, dots };
  });

  const xTicks = times.length ? [0, 0.25, 0.5, 0.75, 1].map((f) => first + f * span) : [];
  const latest = (values: (number | null)[]) => [...values].reverse().find((v) => v !== null) ?? null;
  const pointAt = (clientX: number, rect: DOMRect) => {
    const t = first + ((((clientX - rect.left) / rect.width) * WIDTH - PAD.left) / plotW) * span;
    let best = 0;
    times.forEach((time, i) => {
      if (Math.abs(time - t) < Math.abs(times[best] - t)) best = i;
    });
    return times.length ? best : null;
  };

  return (
    <figure aria-label={title} className="flex flex-col gap-1">
      <figcaption className="text-sm font-medium">{title}</figcaption>
      <div className="relative">
        <svg
          viewBox={`0 0 ${WIDTH} ${height}`}
          className="w-full text-slate-400 dark:text-slate-500"
          role="img"
          aria-label={`${title}${nothing && empty ? `: ${empty}` : ""}`}
          onPointerMove={(e) => setHover(pointAt(e.clientX, e.currentTarget.getBoundingClientRect()))}
          onPointerLeave={() => setHover(null)}
        >
          {[0, 0.25, 0.5, 0.75, 1].map((f) => (
            <g key={f}>
              <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(f * top)} y2={y(f * top)} stroke="currentColor" strokeOpacity={f === 0 ? 0.6 : 0.2} />
              <text x={PAD.left - 4} y={y(f * top) + 3} textAnchor="end" fontSize="10" fill="currentColor">
                {formatValue(f * top, unit === "%" ? "%" : "")}
              </text>
            </g>
          ))}
          {xTicks.map((t, i) => (
            <text key={i} x={x(t)} y={height - 5} textAnchor={i === 0 ? "start" : i === xTicks.length - 1 ? "end" : "middle"} fontSize="10" fill="currentColor">
              {timeLabel(t, span)}
            </text>
          ))}
          {nothing && empty ? (
            <text x={PAD.left + plotW / 2} y={PAD.top + plotH / 2} textAnchor="middle" fontSize="12" fill="currentColor">
              {empty}
            </text>
          ) : (
            paths.map((p) => (
              <g key={p.name}>
                <path d={p.d} fill="none" stroke={p.color} strokeWidth={1.5} strokeLinejoin="round" />
                {p.dots.map(([cx, cy], i) => (
                  <circle key={i} cx={cx} cy={cy} r={2} fill={p.color} />
                ))}
              </g>
            ))
          )}
          {hover !== null && !nothing ? (
            <line x1={x(times[hover])} x2={x(times[hover])} y1={PAD.top} y2={PAD.top + plotH} stroke="currentColor" strokeOpacity={0.6} />
          ) : null}
        </svg>
        {hover !== null && !nothing ? (
          <div
            role="tooltip"
            className="pointer-events-none absolute top-1 rounded border border-slate-200 bg-white/95 px-2 py-1 text-xs shadow-sm dark:border-slate-700 dark:bg-slate-900/95"
            style={x(times[hover]) > WIDTH / 2 ? { right: `${(1 - x(times[hover]) / WIDTH) * 100 + 1}%` } : { left: `${(x(times[hover]) / WIDTH) * 100 + 1}%` }}
          >
            <div className="font-medium">{new Date(times[hover]).toLocaleTimeString()}</div>
            {shown.map((s) => (
              <div key={s.name} className="flex items-center gap-1 whitespace-nowrap">
                <span className="inline-block h-2 w-2 rounded-full" style={{ background: s.color }} />
                {s.name}: {s.values[hover] === null ? "—" : formatValue(s.values[hover], unit)}
              </div>
            ))}
          </div>
        ) : null}
      </div>
      {series.length ? (
        <ul className="flex flex-wrap gap-x-3 gap-y-1 text-xs" aria-label={`${title}: series`}>
          {series.map((s, i) => {
            const value = latest(s.values);
            const off = hidden.has(s.name);
            return (
              <li key={s.name}>
                <button
                  type="button"
                  aria-pressed={!off}
                  className={`flex items-center gap-1 rounded px-1 focus-visible:outline-2 focus-visible:outline-indigo-500 ${off ? "opacity-40" : ""}`}
                  onClick={() =>
                    setHidden((before) => {
                      const next = new Set(before);
                      if (next.has(s.name)) next.delete(s.name);
                      else next.add(s.name);
                      return next;
                    })
                  }
                >
                  <span className="inline-block h-2 w-3 rounded-sm" style={{ background: COLORS[i % COLORS.length] }} />
                  <span>{s.name}</span>
                  <span className="tabular-nums text-slate-500 dark:text-slate-400">{value === null ? "—" : formatValue(value, unit)}</span>
                </button>
              </li>
            );
          })}
        </ul>
      ) : null}
    </figure>
  );
}
