/** Configuration from the environment; nothing but the defaults is needed to run. */
import path from "node:path";

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return value;
}

export const config = {
  root: path.resolve(/*turbopackIgnore: true*/ process.env.QUIVER_ROOT || "./data"),
  /** The database a request without a database header uses. */
  defaultDatabase: process.env.QUIVER_DEFAULT_DATABASE || "default",
  /** Largest Arrow request body, in bytes (413 beyond). */
  maxArrowBodyBytes: intFromEnv("QUIVER_MAX_ARROW_BODY_BYTES", 2 * 1024 * 1024 * 1024 - 1),
  /** Largest JSON request body, in bytes. */
  maxJsonBodyBytes: intFromEnv("QUIVER_MAX_JSON_BODY_BYTES", 1024 * 1024),
  /** Largest `limit` of a list page; also the page size when a request gives none. */
  maxPageSize: intFromEnv("QUIVER_MAX_PAGE_SIZE", 1000),
  /** Largest number of rows one query may return. */
  maxQueryRows: intFromEnv("QUIVER_MAX_QUERY_ROWS", 1_000_000),
};
