/**
 * The one dispatcher of the API: matches a request to its route, reads who is calling, checks their role, parses
 * and validates the inputs (refusing fields the route does not take), runs the handler under admission control and
 * the request timeout, answers, and records mutating and refused calls in the audit log.
 */
import "server-only";
import { SpanStatusCode, type Span } from "@opentelemetry/api";
import { traced } from "@/server/tracing";
import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { DELIMITER, formatIdentifier, IdentifierError, parseIdentifier, sameIdentifier, joinIdentifier } from "@/lib/identifiers";
import { QuiverError, invalidInput } from "../errors";
import { ErrorCode } from "@/lib/contract/errors";
import { FILE_ROOM, type ArrowBody } from "@/server/lance/arrow-ipc";
import { metrics } from "@/server/metrics";
import { holdpoint } from "@/server/failpoints";
import { config } from "../config";
import { heavyRequests } from "./admission";
import { requestAdmitted, requestBegan, requestEnded } from "@/server/operations/activity";
import type { RequestActivity } from "@/lib/contract/operations-overview";
import { PhaseTimer } from "./phase-timer";
import { databaseFor, checkDatabaseName, DEFAULT_DATABASE, type Database } from "@/server/databases";
import { access } from "../auth/access";
import type { AuditEntry } from "../auth/audit";
import { describePrincipal, roleRank, type Principal, type Role } from "../auth/model";
import { principalOf } from "./authenticate";
import { fieldIssues, isPlainObject, refuseIssues, refuseUnknown, unknownFields } from "./unknown-fields";
import { refusedOperation } from "./refused-operations";
import { discardBody, parseArrowBody, readBody, readJsonBody, requestDeadline } from "./request-body";
import { whenAnswerSent } from "./body-source";
import { errorResponse, reply } from "./responses";
import { findRoute } from "./router";
import { identifierIn, type Reply, type RouteContext, type RouteDef } from "./route";
import type { JsonBody } from "@/lib/contract/operation";
import { log, logRequest } from "@/server/log";
import { recordCommits, rowsChanged, type Commit } from "@/server/tables/version-authors";
import type { WriteTicket } from "@/server/tables/write-ledger";
import { namedBranch, versionAt } from "@/server/tables/branch-name";
import { createHash } from "node:crypto";
import { ending, runOnce, writeTicket } from "./exactly-once";

function queryObject(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    out[key] = values.length === 1 ? values[0] : values;
  }
  return out;
}

/** Query parameters the route does not take; `delimiter` is every route's. */
function unknownQueryParameters(route: RouteDef, rawQuery: Record<string, unknown>): string[] {
  const rest = Object.fromEntries(Object.entries(rawQuery).filter(([name]) => name !== "delimiter"));
  if (!route.query) return Object.keys(rest).map((name) => `query.${name}`);
  return unknownFields(route.query, rest, "query");
}

function zodMessage(error: z.ZodError, where: string): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${where}${i.path.length ? `.${i.path.join(".")}` : ""}: ${i.message}`)
    .join("; ");
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function parseId(params: Record<string, string>, delimiter: string): string[] {
  try {
    if (params.id !== undefined) return parseIdentifier(params.id, delimiter);
    if (params.table_name !== undefined) return parseIdentifier(params.table_name, delimiter);
    return [];
  } catch (err) {
    if (err instanceof IdentifierError) throw invalidInput(err.message);
    throw err;
  }
}

async function authorize(route: RouteDef, principal: Principal, database: string, id: string[]) {
  const auth = access();
  const { need, on } = route.access;
  if (need === "authenticated") return;
  if (on === "tables-in-body") {
    // The handler asks table by table, through requireTableRole; one who holds the role nowhere is refused at once.
    if (need !== "global-admin" && need !== "metrics-reader" && need !== "visible" && !(await auth.holdsAnywhere(principal, database, need))) {
      throw new QuiverError(
        "PermissionDenied",
        `${route.operationId} needs the ${need} role on the tables it names; the caller holds it on none in database '${database}'`,
      );
    }
    return;
  }
  if (need === "global-admin") {
    if (!(await auth.isGlobalAdmin(principal))) throw new QuiverError("PermissionDenied", `${route.operationId} needs an administrator of the whole service`);
    return;
  }
  if (need === "metrics-reader") {
    if (!(await auth.canReadMetrics(principal)))
      throw new QuiverError("PermissionDenied", `${route.operationId} needs an administrator of the whole service or a key with the metrics role`);
    return;
  }
  const target = on === "parent" ? id.slice(0, -1) : id;
  const what = `${on === "table" ? "table" : "namespace"} '${target.length ? joinIdentifier(target) : "(root)"}' of database '${database}'`;
  if (need === "visible") {
    if (!(await auth.canSeeNamespace(principal, database, target))) throw new QuiverError("PermissionDenied", `no access to ${what}`);
    return;
  }
  await requireRole(route.operationId, principal, database, need, target, what);
}

async function requireRole(operation: string, principal: Principal, database: string, need: Role, target: string[], what: string) {
  const role = await access().roleOn(principal, database, target);
  if (roleRank(role) < roleRank(need)) {
    throw new QuiverError("PermissionDenied", `${operation} needs the ${need} role on ${what}${role ? `; the caller is ${role}` : ""}`);
  }
}

function countRequest(operation: string, status: number, errorCode: number | null, seconds: number, arrowRows: number | null) {
  metrics.requests.inc({ operation, status });
  metrics.duration.observe({ operation }, seconds);
  if (status === 503) metrics.refused.inc({ operation });
  if (status === 401 || status === 403) metrics.authFailures.inc({ status });
  if (errorCode === ErrorCode.ConcurrentModification) metrics.conflicts.inc({ operation });
  if (status === 200 && arrowRows !== null) metrics.rowsWritten.inc({ operation }, arrowRows);
}

/** Mutating calls are audited whatever their outcome; every refused call is audited too. */
const mutating = (route: RouteDef) => ["editor", "admin", "global-admin"].includes(route.access.need) && !route.methods.includes("GET");

/**
 * A call that changes nothing answers 503 when it outruns the request timeout. A write is left to finish: its
 * answer must say whether it happened.
 */
function withinTimeout<T>(route: RouteDef, work: Promise<T>): Promise<T> {
  if (mutating(route)) return work;
  const late = requestDeadline(() => new QuiverError("ServiceUnavailable", `${route.operationId} did not finish within ${config.requestTimeoutMs} ms`));
  return Promise.race([work, late.expired]).finally(late.clear);
}

/**
 * The version a route that `commits` answered, when its answer is of a commit, with what it did as its audit entry
 * and record say it: the version and branch, and the rows the answer counts.
 */
function commitAnswered(route: RouteDef, result: { kind: string; body?: unknown }, id: string[], query: unknown, body: unknown): Commit | null {
  if (!route.commits || result.kind !== "json") return null;
  const answer = result.body as { version?: unknown };
  if (typeof answer.version !== "number") return null;
  if (route.commits !== true && !route.commits(answer, query)) return null;
  const branch = (body as { branch?: string | null } | undefined)?.branch ?? (query as { branch?: string }).branch;
  const rows = rowsChanged(answer);
  const detail = `${versionAt(answer.version, branch || undefined)}${rows ? `: ${rows}` : ""}`;
  return { table: id, version: answer.version, branch: branch || undefined, detail };
}

export function dispatch(routes: RouteDef[], request: Request): Promise<Response> {
  return traced(request.method, { "http.request.method": request.method }, (span) => handle(routes, request, span));
}

async function handle(routes: RouteDef[], request: Request, span: Span | undefined): Promise<Response> {
  const url = new URL(request.url);
  const given = request.headers.get("x-request-id");
  const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
  span?.setAttributes({ "url.path": url.pathname, "quiver.request_id": requestId });
  // A write is applied once per key: the caller's Idempotency-Key, or else its request id.
  const idempotencyKey = request.headers.get("idempotency-key");
  // A `database` query parameter is for elements that cannot send headers (an <img>); only routes that declare it take it.
  const namedDatabase = request.headers.get("x-quiver-database") || request.headers.get("x-lancedb-database");
  const queriedDatabase = url.searchParams.get("database");
  const database = namedDatabase || queriedDatabase || DEFAULT_DATABASE;
  let principal: Principal | null = null;
  let matched: RouteDef | null = null;
  let target: string | null = null;
  let errorCode: number | null = null;
  let response: Response;
  /** What the handler added to the audit log, stored with the request's own entry. */
  const handlerAudit: AuditEntry[] = [];
  let ownDetail: string | undefined;
  /** The versions the call committed, recorded with who made them once it succeeded. */
  const commits: Commit[] = [];
  const alongsides: Array<(recorded: Promise<unknown>) => Promise<void>> = [];
  let opened: Database | undefined;
  const releases: Array<() => void> = [];
  const timing = new PhaseTimer();
  const started = performance.now();
  let arrowRows: number | null = null;
  let ticket: WriteTicket | undefined;
  let result: Reply | null = null;
  let failure: unknown = null;
  let activity: RequestActivity | undefined;
  try {
    if (namedDatabase && queriedDatabase && namedDatabase !== queriedDatabase)
      throw invalidInput(`the database is named twice, differently: '${namedDatabase}' in the header and '${queriedDatabase}' in the query`);
    const found = findRoute(routes, request.method, url.pathname);
    if (!found) {
      const refused = refusedOperation(url.pathname);
      if (refused) throw new QuiverError("Unsupported", `${refused.operationId} is not supported by this service: ${refused.reason}`);
      const action = /^\/v1\/table\/[^/]+\/(.+?)\/?$/.exec(url.pathname)?.[1];
      if (action) throw new QuiverError("Unsupported", `table operation '${action}' is not supported by this service`);
      throw new QuiverError("Unsupported", `no API operation at ${url.pathname}`, { status: 404 });
    }
    if ("allowed" in found) {
      throw new QuiverError("Unsupported", `${request.method} is not allowed on ${url.pathname}; use ${[...new Set(found.allowed)].join(" or ")}`, {
        status: 405,
      });
    }
    const { route, params } = found;
    matched = route;
    const rawQuery = queryObject(url);
    const delimiterRaw = rawQuery.delimiter;
    if (Array.isArray(delimiterRaw)) throw invalidInput("delimiter is given more than once");
    const delimiter = delimiterRaw ?? DELIMITER;

    let json: Awaited<ReturnType<typeof readJsonBody>> | undefined;
    if (route.body?.kind === "json") json = await timing.time("body", () => readJsonBody(request));
    const identity = json && "value" in json ? (json.value.identity as { api_key?: string; auth_token?: string } | null | undefined) : undefined;
    principal = await principalOf(request, { apiKeyHeaderOnly: route.access.apiKeyHeaderOnly === true, identity });

    checkDatabaseName(database);
    const keyDatabase = access().keyDatabase(principal);
    if (keyDatabase !== null && keyDatabase !== database) {
      throw new QuiverError("PermissionDenied", `this API key is limited to database '${keyDatabase}'`);
    }
    const id = parseId(params, delimiter);
    target = id.length ? formatIdentifier(id) : null;
    await authorize(route, principal, database, id);
    opened = await databaseFor(database);
    timing.mark("auth");
    if (route.heavy || route.body?.kind === "arrow") {
      const who = describePrincipal(principal);
      activity = requestBegan({ request_id: requestId, operation: route.operationId, database, target, principal: `${who.kind}:${who.name}` });
      releases.push(await timing.time("queue", () => heavyRequests.enter()));
      requestAdmitted(activity);
    }

    refuseUnknown(unknownQueryParameters(route, rawQuery));
    let query: unknown = {};
    if (route.query) {
      const parsed = route.query.safeParse(rawQuery);
      if (!parsed.success) throw invalidInput(zodMessage(parsed.error, "query"));
      query = parsed.data;
    }
    let body: unknown = undefined;
    let bodyDigest: string | null = null;
    if (json) {
      if ("error" in json) throw json.error;
      refuseIssues(fieldIssues((route.body as JsonBody).schema, json.value, "body"));
      const parsed = (route.body as JsonBody).schema.safeParse(json.value);
      if (!parsed.success) throw invalidInput(zodMessage(parsed.error, "body"));
      body = parsed.data;
      const bodyId = (body as { id?: unknown }).id;
      if (bodyId !== undefined && bodyId !== null && (params.id !== undefined || params.table_name !== undefined)) {
        if (!sameIdentifier(identifierIn(bodyId, "body.id"), id)) throw invalidInput("the id in the body does not match the id in the path");
      }
      // Lance's RestNamespace sends the whole request as the body, path parameters included (DescribeTableIndexStats'
      // index_name): they must say what the path says.
      for (const [name, value] of Object.entries(params)) {
        const sent = (body as Record<string, unknown>)[name];
        if (name !== "id" && name !== "table_name" && sent !== undefined && sent !== null && sent !== value)
          throw invalidInput(`the ${name} in the body ('${String(sent)}') does not match the ${name} in the path ('${value}')`);
      }
    } else if (route.body?.kind === "arrow") {
      const held = await timing.time("body", () => readBody(request, config.maxArrowBodyBytes, true, FILE_ROOM));
      releases.push(held.release);
      if (route.once)
        bodyDigest = createHash("sha256")
          .update(held.body.whole.subarray(held.body.start, held.body.start + held.body.length))
          .digest("hex");
      body = parseArrowBody(held.body);
      arrowRows = (body as ArrowBody).rows;
      metrics.bytesReceived.inc((body as ArrowBody).file.byteLength);
    }
    const caller = principal;
    const requireTableRole = (need: Role, table: string[], operation: string) =>
      requireRole(operation, caller, database, need, table, `table '${formatIdentifier(table)}' of database '${database}'`);
    const audit = (entry: AuditEntry) => handlerAudit.push(entry);
    const auditDetail = (detail: string) => (ownDetail = detail);
    const committed = (commit: Commit) => commits.push(commit);
    if (route.once) {
      if (idempotencyKey !== null && !REQUEST_ID.test(idempotencyKey)) {
        throw invalidInput("Idempotency-Key must be 1 to 128 letters, digits or '.', '_', ':', '-'");
      }
      ticket = writeTicket(route, {
        principal,
        database,
        path: url.pathname,
        id,
        requestId: idempotencyKey ?? requestId,
        keyed: idempotencyKey !== null,
        query,
        body,
        bodyDigest,
        rows: arrowRows,
      });
    }
    const ctx: RouteContext<unknown, unknown> = {
      request,
      requestId,
      principal,
      database,
      catalog: opened.catalog,
      tables: opened.tables,
      access: access(),
      id,
      params,
      delimiter,
      query,
      body,
      requireTableRole,
      audit,
      auditDetail,
      committed,
      alongside: (work) => alongsides.push(work),
    };
    const ledger = opened.tables.ledger;
    result = await timing.time("work", () => {
      const work = ticket ? runOnce(route, ctx, ticket, ledger) : route.handler(ctx);
      // The work owns the admission from here: it is given back when the work ends, even if a timeout answered first.
      const owned = releases.splice(0);
      const done = work.finally(() => owned.forEach((release) => release()));
      return withinTimeout(route, done);
    });
    if (ticket?.landed && target) await holdpoint("hold-before-answer", target);
    // A write applied once per request id answers its id in the write ledger, where DescribeTransaction finds it.
    if (ticket && (ticket.claimed || ticket.replayed) && result.kind === "json" && isPlainObject(result.body))
      result = { ...result, body: { ...result.body, transaction_id: ticket.request.key } };
    const made = ticket?.replayed ? null : commitAnswered(route, result, id, query, body);
    if (made) {
      ownDetail ??= made.detail;
      commits.push({ ...made, detail: ownDetail });
    }
    if (ticket?.replayed) ownDetail = ticket.replayed;
    response = reply(result, requestId);
    if (ticket?.replayed) response.headers.set("idempotent-replayed", "true");
  } catch (err) {
    failure = err;
    errorCode = err instanceof QuiverError ? err.code : ErrorCode.Internal;
    // Whatever refused it, a body still arriving is let go by, so that its client reads the answer.
    await discardBody(request);
    response = errorResponse(err, url.pathname, requestId);
  }
  releases.splice(0).forEach((release) => release());
  const entries = response.ok ? [...handlerAudit] : [];
  if (matched && (mutating(matched) || matched.audited || response.status === 401 || response.status === 403)) {
    entries.push({
      time: new Date().toISOString(),
      requestId,
      principal: principal ? describePrincipal(principal) : null,
      action: matched.operationId,
      method: request.method,
      path: url.pathname,
      database,
      target,
      status: response.status,
      code: errorCode,
      outcome: response.status < 400 ? "ok" : response.status === 401 || response.status === 403 ? "refused" : "failed",
      ...(ownDetail !== undefined && (response.ok || matched.audited) ? { detail: ownDetail } : {}),
    });
  }
  // The records before the answer, started within the phase that times them (and holds their spans).
  await timing.time("record", () => {
    // The commit the ledger knows this request's by, so that the version's record names it.
    const claim = ticket?.claimed?.record;
    const commit = claim?.shape.commit;
    // The version the request's guarded commit made names its caller itself (COMMITTED_BY_PROPERTY): no record for it.
    const namesItsCaller = (c: Commit) =>
      Boolean(ticket?.landed && claim?.shape.named && c.version === ticket.admittedAt && namedBranch(c.branch) === claim.shape.branch);
    const recorded =
      response.ok && commits.length && principal && opened
        ? recordCommits(
            opened.tables,
            commits.map((c) => ({ commit, ...c, namesItsCaller: namesItsCaller(c) })),
            describePrincipal(principal),
            matched!.operationId,
          ).catch((err: unknown) =>
            // The versions are committed and the audit log names them: only the console's "by whom" lacks them.
            log.error({ request_id: requestId, err }, "recording who committed a version failed"),
          )
        : undefined;
    // How the write's attempt ended, for a repeat of it: recorded before the answer leaves, beside the audit entry.
    const answered =
      ticket && opened
        ? opened.tables.ledger
            .finish(ticket, ending(ticket, response.ok ? result : null, failure))
            .catch((err: unknown) => log.error({ request_id: requestId, err }, "recording a write's answer in the ledger failed"))
        : undefined;
    const besides = alongsides.map((work) =>
      work(recorded ?? Promise.resolve()).catch((err: unknown) => log.error({ request_id: requestId, err }, "finishing the request's work failed")),
    );
    // One store write for the request's entries: a declare that vends credentials records both at once.
    const audited = entries.length
      ? access()
          .audit.record(...entries)
          .catch((err: unknown) => {
            log.error({ request_id: requestId, err }, "audit log write failed");
            // What the handler recorded (credentials handed out) must be in the log before its answer leaves.
            if (response.ok && handlerAudit.length > 0) {
              errorCode = ErrorCode.ServiceUnavailable;
              const reason = (err as Error).message.split("\n")[0].slice(0, 300);
              response = errorResponse(
                new QuiverError(
                  "ServiceUnavailable",
                  `the request was carried out, but what its answer hands out could not be recorded in the audit log, so it is held back (ask again): ${reason}`,
                ),
                url.pathname,
                requestId,
              );
            }
          })
      : undefined;
    return Promise.all([audited, recorded, answered, ...besides]);
  });
  // A committed insert's marker among writes of its body (or that of the earlier attempt it was answered for) goes
  // once its answer is on its way: until then, a write of the same body is its client's retry.
  const sent = ticket;
  if (sent?.marker && response.ok && opened) {
    const ledger = opened.tables.ledger;
    whenAnswerSent(request, () => void ledger.answerSent(sent));
  }
  const durationMs = performance.now() - started;
  countRequest(matched?.operationId ?? "unmatched", response.status, errorCode, durationMs / 1000, arrowRows);
  if (activity) requestEnded(activity, response.status, response.ok ? null : failure instanceof Error ? failure.message : `answered ${response.status}`);
  const who = principal ? describePrincipal(principal) : null;
  logRequest({
    requestId,
    method: request.method,
    path: url.pathname,
    operation: matched?.operationId ?? "unmatched",
    status: response.status,
    code: errorCode,
    durationMs,
    principal: who ? `${who.kind}:${who.name}` : null,
    database,
  });
  // Only a caller who proved who they are learns how long each phase took.
  if (principal) response.headers.set("server-timing", timing.header());
  if (span) {
    span.updateName(`${request.method} ${matched?.operationId ?? "unmatched"}`);
    span.setAttributes({
      "http.response.status_code": response.status,
      "quiver.database": database,
      ...(matched ? { "quiver.operation": matched.operationId } : {}),
      ...(target ? { "quiver.target": target } : {}),
      ...(errorCode !== null ? { "quiver.error_code": errorCode } : {}),
    });
    if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }
  return response;
}
