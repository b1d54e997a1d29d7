"use client";
/**
 * The map's points (point-map.ts draws them with WebGL, on a canvas of its own placed beneath the overlay): pan and
 * zoom with the mouse, a lasso in lasso mode or with shift held, a point under the cursor reported as it is hovered, a
 * click picking a point. Points are coloured by category; the selection is drawn in full and the rest faded.
 */
import { useEffect, useRef, useState } from "react";
import { PointMap } from "./point-map";

export interface PlotPoints {
  x: Float32Array;
  y: Float32Array;
  /** Each point's category: an index into `colors`. */
  category: Float32Array;
}

export function ScatterPlot({
  points,
  colors,
  selected,
  trails = null,
  lasso,
  onSelect,
  onHover,
}: {
  points: PlotPoints;
  colors: string[];
  /** Lines from where points were to where they are. */
  trails?: { index: Int32Array; x: Float32Array; y: Float32Array } | null;
  /** Indices of the selected points (null: none). */
  selected: number[] | null;
  lasso: boolean;
  onSelect: (indices: number[] | null) => void;
  onHover: (index: number | null) => void;
}) {
  const overlay = useRef<HTMLCanvasElement>(null);
  const [plot, setPlot] = useState<PointMap | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const handlers = useRef({ onSelect, onHover });
  useEffect(() => {
    handlers.current = { onSelect, onHover };
  });

  useEffect(() => {
    let made: PointMap;
    try {
      made = new PointMap(overlay.current!.parentElement!, overlay.current!, {
        hover: (i) => handlers.current.onHover(i),
        select: (indices) => handlers.current.onSelect(indices),
      });
    } catch (err) {
      // Set once, from the browser's answer: a machine without WebGL gets the reason instead of an empty box.
      // eslint-disable-next-line react-hooks/set-state-in-effect
      setFailed(err instanceof Error ? err.message : String(err));
      return;
    }
    const resize = new ResizeObserver(() => made.redraw());
    resize.observe(overlay.current!);
    setPlot(made);
    return () => {
      resize.disconnect();
      made.destroy();
    };
  }, []);

  useEffect(() => plot?.setPoints(points.x, points.y, points.category, colors), [plot, points, colors]);
  useEffect(() => plot?.setSelected(selected), [plot, selected]);
  useEffect(() => plot?.setTrails(trails), [plot, trails]);
  useEffect(() => plot?.setLasso(lasso), [plot, lasso]);

  return (
    <>
      <canvas ref={overlay} aria-hidden className="pointer-events-none absolute inset-0 h-full w-full" />
      {failed && <p className="absolute inset-0 m-auto h-fit text-center text-sm text-red-700 dark:text-red-300">The map cannot be drawn here: {failed}</p>}
    </>
  );
}
