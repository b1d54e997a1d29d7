"use client";
/**
 * A result's numbers as a chart: one column along the bottom (a name or a number), one or more number columns as
 * bars or a line, drawn as SVG like the operations page's charts. The first 500 rows are drawn, and the chart says so.
 */
import { useMemo, useState } from "react";
import { DataType, type Table } from "apache-arrow";
import { cellText } from "@/lib/cell-format";
import { Select } from "../ui/controls";
import { niceMax } from "../operations/line-chart";

const MAX_POINTS = 500;
const COLORS = ["#3b82f6", "#d97706", "#059669", "#ec4899", "#8b5cf6", "#0891b2"];
const WIDTH = 760;
const HEIGHT = 280;
const PAD = { left: 56, right: 12, top: 12, bottom: 56 };

const numberOf = (v: unknown): number | null => (typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : null);

export const chartableColumns = (table: Table) =>
  table.schema.fields.filter((f) => DataType.isInt(f.type) || DataType.isFloat(f.type) || DataType.isDecimal(f.type)).map((f) => f.name);

export function ResultChart({ table }: { table: Table }) {
  const numeric = chartableColumns(table);
  const names = table.schema.fields.map((f) => f.name);
  // Along the bottom: the first column that is not a number (a group's name), else the first column.
  const [x, setX] = useState(() => names.find((n) => !numeric.includes(n)) ?? names[0]);
  const [ys, setYs] = useState(() => numeric.filter((n) => n !== x).slice(0, 1));
  const [kind, setKind] = useState<"bar" | "line">("bar");
  const rows = Math.min(table.numRows, MAX_POINTS);
  const data = useMemo(() => {
    const xs = Array.from({ length: rows }, (_, r) => cellText(table.getChild(x)?.get(r)).short);
    const series = ys.map((y) => Array.from({ length: rows }, (_, r) => numberOf(table.getChild(y)?.get(r))));
    return { xs, series };
  }, [table, x, ys, rows]);
  const all = data.series.flat().filter((v): v is number => v !== null);
  const low = Math.min(0, ...all);
  const high = niceMax(Math.max(0, ...all));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const yOf = (v: number) => PAD.top + plotH - ((v - low) / (high - low || 1)) * plotH;
  const slot = plotW / Math.max(1, rows);
  const xOf = (i: number) => PAD.left + slot * (i + 0.5);
  const labelEvery = Math.max(1, Math.ceil(rows / 20));
  return (
    <figure className="flex flex-col gap-2" aria-label="Chart of the result" data-testid="result-chart">
      <div className="flex flex-wrap items-center gap-3 text-xs">
        <label className="flex items-center gap-1">
          Along the bottom
          <Select aria-label="Along the bottom" value={x} onChange={(e) => setX(e.target.value)}>
            {names.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </Select>
        </label>
        <span>Values</span>
        {numeric.map((n) => (
          <label key={n} className="flex items-center gap-1">
            <input type="checkbox" checked={ys.includes(n)} onChange={(e) => setYs(e.target.checked ? [...ys, n] : ys.filter((y) => y !== n))} />
            <span className="font-mono">{n}</span>
          </label>
        ))}
        <label className="flex items-center gap-1">
          As
          <Select aria-label="Chart kind" value={kind} onChange={(e) => setKind(e.target.value as "bar" | "line")}>
            <option value="bar">bars</option>
            <option value="line">a line</option>
          </Select>
        </label>
        {table.numRows > MAX_POINTS && (
          <span className="text-slate-500">
            the first {MAX_POINTS} of {table.numRows} rows
          </span>
        )}
      </div>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} className="w-full max-w-3xl text-slate-500" role="img" aria-label={`${ys.join(", ")} by ${x}`}>
        {[0, 0.25, 0.5, 0.75, 1].map((f) => {
          const v = low + (high - low) * f;
          return (
            <g key={f}>
              <line x1={PAD.left} x2={WIDTH - PAD.right} y1={yOf(v)} y2={yOf(v)} stroke="currentColor" strokeOpacity={0.2} />
              <text x={PAD.left - 6} y={yOf(v) + 3} textAnchor="end" fontSize={10} fill="currentColor">
                {cellText(Number(v.toPrecision(4))).short}
              </text>
            </g>
          );
        })}
        {data.xs.map((label, i) =>
          i % labelEvery === 0 ? (
            <text
              key={i}
              x={xOf(i)}
              y={HEIGHT - PAD.bottom + 12}
              fontSize={10}
              fill="currentColor"
              textAnchor="end"
              transform={`rotate(-35 ${xOf(i)} ${HEIGHT - PAD.bottom + 12})`}
            >
              {label.length > 14 ? `${label.slice(0, 13)}…` : label}
            </text>
          ) : null,
        )}
        {data.series.map((values, s) =>
          kind === "bar" ? (
            values.map((v, i) => {
              if (v === null) return null;
              const w = (slot * 0.8) / data.series.length;
              const top = yOf(Math.max(v, 0));
              return (
                <rect
                  key={`${s}-${i}`}
                  x={xOf(i) - slot * 0.4 + w * s}
                  y={top}
                  width={Math.max(1, w)}
                  height={Math.abs(yOf(v) - yOf(0))}
                  fill={COLORS[s % COLORS.length]}
                >
                  <title>{`${data.xs[i]}: ${ys[s]} ${v}`}</title>
                </rect>
              );
            })
          ) : (
            <polyline
              key={s}
              fill="none"
              stroke={COLORS[s % COLORS.length]}
              strokeWidth={2}
              points={values
                .map((v, i) => (v === null ? null : `${xOf(i)},${yOf(v)}`))
                .filter(Boolean)
                .join(" ")}
            />
          ),
        )}
      </svg>
      <figcaption className="flex flex-wrap gap-3 text-xs">
        {ys.map((y, s) => (
          <span key={y} className="flex items-center gap-1">
            <span className="inline-block h-2 w-3 rounded-sm" style={{ backgroundColor: COLORS[s % COLORS.length] }} />
            <span className="font-mono">{y}</span>
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
