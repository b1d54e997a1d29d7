/**
 * The server's log: one JSON line per event (pino), or readable lines when the server runs in a terminal (or
 * QUIVER_LOG_FORMAT=pretty). Each API request is one line: request id, principal, operation, status, duration.
 * Nothing logged carries a credential: principals are named by kind, id and name, paths never carry keys (they
 * travel in headers), and errors are logged by message and stack.
 */
import "server-only";
import pino, { type Logger } from "pino";
import pretty from "pino-pretty";
import { ConfigError } from "./config-error";

const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function makeLogger(): Logger {
  const format = (process.env.QUIVER_LOG_FORMAT || (process.stdout.isTTY ? "pretty" : "json")).toLowerCase();
  if (format !== "json" && format !== "pretty") throw new ConfigError(`QUIVER_LOG_FORMAT must be 'json' or 'pretty', got '${format}'`);
  const level = (process.env.QUIVER_LOG_LEVEL || "info").toLowerCase();
  if (!LEVELS.includes(level)) throw new ConfigError(`QUIVER_LOG_LEVEL must be one of ${LEVELS.join(", ")}, got '${level}'`);
  const options = { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  if (format === "pretty") return pino(options, pretty({ colorize: true, singleLine: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid" }));
  // Written asynchronously: a synchronous write to a pipe whose reader is slow (a log shipper, a supervisor) spins
  // until the reader catches up, which cost more CPU than the request it logged. Pino flushes what is left on exit.
  return pino(options, pino.destination({ dest: 1, sync: false }));
}

// One logger per process, also when Next loads this module in more than one bundle.
const shared = globalThis as typeof globalThis & { quiverLogger?: Logger };
export const log = (shared.quiverLogger ??= makeLogger());

export interface RequestRecord {
  requestId: string;
  method: string;
  path: string;
  operation: string;
  status: number;
  code: number | null;
  durationMs: number;
  principal: string | null;
  database: string;
}

export function logRequest(r: RequestRecord) {
  const line = {
    request_id: r.requestId,
    method: r.method,
    path: r.path,
    operation: r.operation,
    status: r.status,
    ...(r.code !== null ? { code: r.code } : {}),
    duration_ms: Math.round(r.durationMs * 10) / 10,
    principal: r.principal,
    database: r.database,
  };
  if (r.status >= 500) log.error(line, "request");
  else if (r.status >= 400) log.warn(line, "request");
  else log.info(line, "request");
}
