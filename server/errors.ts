/**
 * The one error class of the service. Each error carries a Lance Namespace error code; the HTTP status and the
 * seed's `type`/`title` follow from it, so a failure reads the same to the seed's clients and to Lance clients.
 */
import "server-only";
import { log } from "@/server/log";
import { ErrorCode, STATUS_BY_CODE, errorCodeName, type ErrorCodeName, type ErrorCodeValue } from "@/lib/contract/errors";

/** The seed's `type` and `title` per status; statuses the seed does not name follow the same pattern. */
const SEED_SHAPE: Record<number, { type: string; title: string }> = {
  400: { type: "/errors/bad-request", title: "Malformed request" },
  401: { type: "/errors/unauthorized-request", title: "No valid authentication credentials for the operation" },
  403: { type: "/errors/forbidden-request", title: "Not authorized to make this request" },
  404: { type: "/errors/not-found-error", title: "Not found Error" },
  405: { type: "/errors/method-not-allowed", title: "Method not allowed" },
  406: { type: "/errors/unsupported", title: "Unsupported operation" },
  408: { type: "/errors/request-timeout", title: "Request timeout" },
  409: { type: "/errors/conflict", title: "The namespace has been concurrently modified" },
  413: { type: "/errors/payload-too-large", title: "Request body too large" },
  429: { type: "/errors/too-many-requests", title: "Too many requests" },
  503: { type: "/errors/service-unavailable", title: "Slow down" },
  500: { type: "/errors/server-error", title: "Internal Server Error" },
};

export function seedShape(status: number) {
  return SEED_SHAPE[status] ?? SEED_SHAPE[status >= 500 ? 500 : 400];
}

export class QuiverError extends Error {
  readonly code: ErrorCodeValue;
  readonly status: number;
  /** Where in the request's text (a SQL statement) the failure is, as a character offset, when it is somewhere. */
  readonly position: number | undefined;

  constructor(code: ErrorCodeName, message: string, options: { status?: number; position?: number } = {}) {
    super(message);
    this.name = "QuiverError";
    this.code = ErrorCode[code];
    this.status = options.status ?? STATUS_BY_CODE[this.code];
    this.position = options.position;
  }

  get codeName(): ErrorCodeName {
    return errorCodeName(this.code)!;
  }
}

export const invalidInput = (message: string) => new QuiverError("InvalidInput", message);
export const unsupported = (message: string) => new QuiverError("Unsupported", message);

/**
 * Lance reports failures as plain errors with long messages that embed Rust source paths. The first line before
 * any "Caused by" is what a caller needs; this strips paths so no internals leak into a response.
 */
export function engineMessage(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  const first = raw.split(/\s+Caused by:/)[0];
  return first
    .replace(/,?\s*\/[\w./-]*\.rs:\d+:\d+/g, "")
    .replace(/\s*\/(?:usr|root|home|tmp|work)\/[^\s,'"]*/g, (m) => (m.includes(".lance") ? m : ""))
    .replace(/^lance error:\s*/i, "")
    .replace(/^Namespace error:\s*/i, "")
    .trim();
}

/** The store behind the data root did not answer: the caller may retry, and nothing was committed. */
const STORE_UNAVAILABLE =
  /timed out|timeout|error sending request|connection refused|connect error|connection reset|broken pipe|dns error|service unavailable|server busy/;

/** A failure of the store that reached the edge unclassified: still the caller's 503, not the service's 500. */
export function unavailableStore(err: unknown): QuiverError | null {
  if (!(err instanceof Error) || !STORE_UNAVAILABLE.test(err.message.toLowerCase())) return null;
  return new QuiverError("ServiceUnavailable", `the data root's store is unavailable: ${engineMessage(err)}`);
}

/** Classifies an engine failure into the Lance error it means. Unknown failures stay Internal. */
export function fromEngineError(err: unknown, what: string): QuiverError {
  if (err instanceof QuiverError) return err;
  const message = engineMessage(err);
  const lower = message.toLowerCase();
  const rules: Array<[RegExp, ErrorCodeName]> = [
    [/retryable commit conflict|commit conflict|preempted by concurrent|concurrent/, "ConcurrentModification"],
    [/ref conflict.*tag .* already exists|tag .* already exists/, "TableTagAlreadyExists"],
    [/ref not found.*tag|tag .* does not exist|tag .* not found/, "TableTagNotFound"],
    [/branch .* (does not exist|not found)/, "TableBranchNotFound"],
    [/branch .* already exists/, "TableBranchAlreadyExists"],
    // A branch that tags still point into cannot go: the tags would dangle.
    [/ref conflict.*referenced by tags/, "InvalidTableState"],
    [/_versions\/\d+\.manifest was not found|version not found|version .* does not exist/, "TableVersionNotFound"],
    // A version directory or latest manifest that vanished while the engine read it: the table was dropped meanwhile.
    [/not found: \S*\/_versions(\/\d+\.manifest)?(,|$)/, "TableNotFound"],
    [/not found.*version/, "TableVersionNotFound"],
    [/column .* does not exist|no field named|does not exist in schema|field .* not found|not found in schema/, "TableColumnNotFound"],
    [/cannot cast|cast .* not supported|unsupported cast/, "InvalidInput"],
    [
      /append with different schema|found field not in schema|schema mismatch|schema error|lanceerror\(schema\)|cannot contain `\.`|missing=|not nullable|contains null values/,
      "TableSchemaValidationError",
    ],
    [/already exists/, "TableAlreadyExists"],
    // The engine's refusal of the request itself, even where its reason says something is "not found".
    [/\binvalid input\b/, "InvalidInput"],
    [/was not found|not found/, "TableNotFound"],
    [/not supported|not implemented|unsupported/, "Unsupported"],
    [STORE_UNAVAILABLE, "ServiceUnavailable"],
    [/invalid|parser error|parse error|ipc|arrow error|ambiguous|must have|duplicate|prohibited|not configured|expected/, "InvalidInput"],
    // What the data cannot give (too few rows to train an index): the request, not the service, is at fault.
    [/^unprocessable:|not enough rows/, "InvalidInput"],
  ];
  for (const [pattern, code] of rules) {
    if (pattern.test(lower)) return new QuiverError(code, `${what}: ${message}`);
  }
  log.error({ err, what }, "unclassified engine failure");
  return new QuiverError("Internal", `${what} failed`);
}

/**
 * The engine's Arrow reader (arrow-rs 58) panics on some malformed data where it should refuse it. The binding
 * reports the panic as nothing but "Panic in async function", and merge_insert as the spill of its input being
 * dropped. In a call that reads a request's Arrow body, the body is the cause.
 */
const READER_PANIC = /^Panic in async function$|Spill has been dropped before reader has finish/;

export function fromArrowWriteError(err: unknown, what: string): QuiverError {
  if (err instanceof Error && READER_PANIC.test(err.message)) return invalidInput(`${what}: the engine could not read the Arrow data, which is malformed`);
  return fromEngineError(err, what);
}
