// What `npm start` prints: the workers' output passes through the primary, which shows Next.js's start banner once
// (every worker prints its own), turns the Lance engine's own log lines (written by its native code straight to
// stderr) into lines of the server's log at their level, and ends the start with where to sign in and, on a new
// root, the first admin key in a box.
import { stripVTControlCharacters } from "node:util";

/** Lines of Next.js's start banner (`next start` prints them in each worker). */
const BANNER = /^(▲ Next\.js|- (Local|Network|Environments|Experiments):|✓ (Ready in|Starting|Running next\.config)|\s+· )/;
/** env_logger's format, which the engine's native code uses: `[2026-11-26T20:07:16Z WARN  lance::dataset::scanner] text`. */
const ENGINE_LINE = /^\[(\d{4}-\d\d-\d\dT[\d:.]+Z) (ERROR|WARN|INFO|DEBUG|TRACE)\s+([^\]\s]+)\] ?(.*)$/;
const PINO_LEVELS = { TRACE: 10, DEBUG: 20, INFO: 30, WARN: 40, ERROR: 50 };

/** The log format the workers write in, decided here once: their own output is a pipe, not the terminal. */
export function settleLogFormat() {
  process.env.QUIVER_LOG_FORMAT ||= process.stdout.isTTY ? "pretty" : "json";
  // Next.js colours its lines only on a terminal; through the pipe it would not.
  if (process.stdout.isTTY) process.env.FORCE_COLOR ||= "1";
}

/**
 * An engine log line as the server's log writes one (JSON, or a readable line); empty when it lies below the
 * server's log level, null when the line is not the engine's.
 */
export function engineLogLine(pid, line) {
  const parsed = ENGINE_LINE.exec(line);
  if (!parsed) return null;
  const [, time, level, target, text] = parsed;
  const threshold = PINO_LEVELS[(process.env.QUIVER_LOG_LEVEL || "info").toUpperCase()] ?? PINO_LEVELS.INFO;
  if (PINO_LEVELS[level] < threshold) return "";
  if (process.env.QUIVER_LOG_FORMAT === "json") {
    return JSON.stringify({ level: PINO_LEVELS[level], time: new Date(time).toISOString(), pid, source: "engine", target, msg: text });
  }
  return `[${time.slice(11, 19)}] ${level}: ${text} (engine: ${target})`;
}

/**
 * Relays a worker's stdout and stderr. Stderr goes line by line for good (the engine writes there, seldom). Stdout,
 * where the server's log goes a line per request, goes line by line only until the worker has started (its banner is
 * behind it), then as it comes: read and split, each request's line cost the primary about as much CPU as the
 * request's own routing. `showsBanner` says whether this worker's banner is the one shown. Answers what to call when
 * the worker has started.
 */
export function relayWorkerOutput(worker, showsBanner) {
  const line = (text, out) => {
    const plain = stripVTControlCharacters(text);
    if (!showsBanner && BANNER.test(plain)) return;
    const engine = engineLogLine(worker.process.pid, plain);
    if (engine === null) out.write(text + "\n");
    else if (engine) process.stdout.write(engine + "\n");
  };
  const relay = (stream, out) => {
    let rest = "";
    let whole = false;
    const onData = (chunk) => {
      if (whole) return out.write(chunk);
      const lines = (rest + chunk).split("\n");
      rest = lines.pop();
      for (const text of lines) line(text, out);
    };
    stream?.setEncoding("utf8").on("data", onData);
    // The part of a line already read goes first, the rest of it follows as it comes.
    return () => {
      whole = true;
      if (rest) out.write(rest);
      rest = "";
    };
  };
  const stdoutWhole = relay(worker.process.stdout, process.stdout);
  relay(worker.process.stderr, process.stderr);
  return stdoutWhole;
}

/** The last lines of a start: where to sign in, and the first admin key when this start made it. */
export function readyLines(url, workers, key) {
  const where = `ready at ${url} (${workers} worker${workers === 1 ? "" : "s"})`;
  if (!key) return `quiver: ${where}\n`;
  const lines = [
    `Quiver is ${where}.`,
    "",
    `Sign in at ${url}/signin with this admin key,`,
    "or send it as the x-api-key header to the API:",
    "",
    `    ${key}`,
    "",
    "It is shown this once: only its hash is kept.",
  ];
  const width = Math.max(...lines.map((l) => l.length));
  const bar = "─".repeat(width + 2);
  return ["", `┌${bar}┐`, ...lines.map((l) => `│ ${l.padEnd(width)} │`), `└${bar}┘`, ""].join("\n") + "\n";
}
