/** Durations such as `500ms`, `30s`, `5m`, `1h`, `30d` (a bare number is seconds), in milliseconds. */
const UNITS: Record<string, number> = { ms: 1, s: 1000, sec: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|sec|m|min|h|d)?\s*$/i.exec(text);
  if (!match) return null;
  const ms = Number(match[1]) * UNITS[(match[2] ?? "s").toLowerCase()];
  return Number.isFinite(ms) && ms > 0 ? Math.round(ms) : null;
}
