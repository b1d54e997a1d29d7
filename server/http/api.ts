/**
 * The API's HTTP plumbing: a route table of typed operations, and one dispatcher that matches a request, parses
 * and validates its inputs, runs the handler, and shapes every success and failure the same way.
 */
import { refusedOperation } from "./refused-operations";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { DEFAULT_DELIMITER, formatIdentifier, IdentifierError, parseIdentifier, sameIdentifier, validateIdentifier } from "@/lib/identifiers";
import { QuiverError, invalidInput, seedShape, unavailableStore } from "../errors";
import { parseArrowBody, type Catalog } from "../catalog";
import { FILE_ROOM, received, type ArrowBody, type ReceivedBody } from "../arrow-ipc";
import { config } from "../config";
import { bodyBudget, heavyRequests, slowDown } from "../admission";
import { bodySource } from "./body-source";
import { PhaseTimer } from "./phase-timer";
import { catalogFor, checkDatabaseName, DEFAULT_DATABASE } from "../catalogs";
import { access, type Access } from "../auth/access";
import { describePrincipal, roleRank, type Principal, type Role } from "../auth/model";
import { credentialsOf } from "./authenticate";
import { unknownFields } from "./unknown-fields";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

type JsonBody = { kind: "json"; schema: z.ZodType };
type ArrowBodySpec = { kind: "arrow" };

export type Reply =
  | { kind: "json"; body: unknown; status?: number; bare?: boolean }
  | { kind: "arrow-file"; body: Buffer }
  | { kind: "integer"; value: number };

export interface RouteContext<Q, B> {
  request: Request;
  requestId: string;
  principal: Principal;
  database: string;
  /** The catalog of the request's database. */
  catalog: Catalog;
  access: Access;
  /** The parsed `{id}` (namespace or table identifier), when the route has one. */
  id: string[];
  /** Other path parameters, percent-decoded. */
  params: Record<string, string>;
  delimiter: string;
  query: Q;
  body: B;
}

export interface RouteDef<QS extends z.ZodType = z.ZodType, BS extends JsonBody | ArrowBodySpec | undefined = JsonBody | ArrowBodySpec | undefined> {
  operationId: string;
  summary: string;
  group: string;
  methods: Method[];
  path: string;
  query?: QS;
  body?: BS;
  /**
   * Who may call: a role on the table or namespace the path names (or its parent), only being able to see the
   * namespace (listings then filter what they show), any signed-in caller, or a global admin.
   */
  access: {
    need: Role | "visible" | "authenticated" | "global-admin";
    on?: "table" | "namespace" | "parent";
    /** Enterprise endpoints accept only the x-api-key header. */
    apiKeyHeaderOnly?: boolean;
  };
  /** Runs under admission control (Arrow bodies always do): queries, rewrites, index builds. */
  heavy?: boolean;
  /** JSON schema of a successful response, or the special forms. */
  response: z.ZodType | "arrow-file" | "integer" | "empty";
  handler: (
    ctx: RouteContext<z.output<QS>, BS extends JsonBody ? z.output<BS["schema"]> : BS extends ArrowBodySpec ? ArrowBody : undefined>,
  ) => Promise<Reply>;
}

export function route<QS extends z.ZodType, BS extends JsonBody | ArrowBodySpec | undefined>(def: RouteDef<QS, BS>): RouteDef {
  return def as unknown as RouteDef;
}

export const json = (body: unknown, status?: number): Reply => ({ kind: "json", body, status });

/**
 * LanceDB's remote client (the enterprise dialect) calls paths with a trailing slash, and a few of its expectations
 * differ from the Lance Namespace spec: a duplicate create is a 400, the tag list is a bare map.
 */
export const remoteDialect = (request: Request) => new URL(request.url).pathname.endsWith("/");

// ---------------------------------------------------------------- query parameter types

const truthy = new Set(["true", "1", "yes", "on", ""]);
const falsy = new Set(["false", "0", "no", "off"]);

export const qBool = (description: string) =>
  z
    .string()
    .optional()
    .describe(description)
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const lower = v.toLowerCase();
      if (truthy.has(lower)) return true;
      if (falsy.has(lower)) return false;
      ctx.addIssue({ code: "custom", message: `'${v}' is not a boolean (use true or false)` });
      return z.NEVER;
    });

export const qInt = (description: string, min = 0) =>
  z
    .string()
    .optional()
    .describe(description)
    .transform((v, ctx) => {
      if (v === undefined || v === "") return undefined;
      if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < min) {
        ctx.addIssue({ code: "custom", message: `'${v}' is not an integer of at least ${min}` });
        return z.NEVER;
      }
      return Number(v);
    });

export const qString = (description: string) => z.string().optional().describe(description);

export const pageQuery = {
  page_token: qString("Token from the previous response's page_token"),
  limit: qInt("Inclusive upper bound on the number of items returned", 1),
};

/** Mode strings are case-insensitive and accept PascalCase or snake_case. */
export function parseMode<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T, what: string): T {
  if (value === undefined || value === "") return fallback;
  const normalized = value.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  const found = allowed.find((a) => a === normalized);
  if (!found) throw invalidInput(`${what} '${value}' is not one of ${allowed.join(", ")}`);
  return found;
}

export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return config.maxPageSize;
  if (limit > config.maxPageSize) throw invalidInput(`limit ${limit} is above the maximum page size ${config.maxPageSize}`);
  return limit;
}

// ---------------------------------------------------------------- matching

interface Match {
  route: RouteDef;
  params: Record<string, string>;
}

function splitPath(pathname: string): string[] {
  const parts = pathname.split("/").slice(1);
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

function matchPath(template: string, segments: string[]): Record<string, string> | null {
  const pattern = splitPath(template);
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p.startsWith("{") && p.endsWith("}")) {
      try {
        params[p.slice(1, -1)] = decodeURIComponent(segments[i]);
      } catch {
        throw invalidInput(`path segment '${segments[i]}' is not valid percent-encoding`);
      }
    } else if (p !== segments[i]) return null;
  }
  return params;
}

function find(routes: RouteDef[], method: string, pathname: string): Match | { allowed: Method[] } | null {
  const segments = splitPath(pathname);
  const allowed: Method[] = [];
  for (const route of routes) {
    const params = matchPath(route.path, segments);
    if (!params) continue;
    if (route.methods.includes(method as Method)) return { route, params };
    allowed.push(...route.methods);
  }
  return allowed.length ? { allowed } : null;
}

// ---------------------------------------------------------------- dispatch

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

/** A field the service would not act on is refused by name, never dropped: the client would not know it was ignored. */
function refuseUnknown(paths: string[]) {
  if (paths.length === 0) return;
  const shown = paths.slice(0, 5).join(", ") + (paths.length > 5 ? ` and ${paths.length - 5} more` : "");
  throw invalidInput(`${shown}: not ${paths.length === 1 ? "a field" : "fields"} this operation takes; refused rather than ignored`);
}

function zodMessage(error: z.ZodError, where: string): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${where}${i.path.length ? `.${i.path.join(".")}` : ""}: ${i.message}`)
    .join("; ");
}

/** A body held against the shared body budget; `release` gives its bytes back once the request is done. */
interface HeldBody {
  body: ReceivedBody;
  release: () => void;
}

/** A promise that fails with `error` once the request timeout has passed, unless cleared first. */
function requestDeadline(error: () => QuiverError): { expired: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), config.requestTimeoutMs);
  });
  expired.catch(() => undefined);
  return { expired, clear: () => clearTimeout(timer) };
}

const bodyDeadline = () =>
  requestDeadline(() => new QuiverError("InvalidInput", `the request body did not arrive within ${config.requestTimeoutMs} ms`, { status: 408 }));

/**
 * Past this many bytes, a refused body that can only be read through Next's web stream is cut off: reading it all
 * would cost the busy server as much as accepting it. Node's own request stream is drained instead, at no memory cost.
 */
const DISCARD_AT_MOST = 8 * 1024 * 1024;

/** Before refusing a request whose body was never read (a busy server), lets the body go by unread. */
async function discardBody(request: Request) {
  const source = bodySource(request);
  if (!source) return;
  const deadline = bodyDeadline();
  await source.drop(DISCARD_AT_MOST, deadline.expired);
  deadline.clear();
}

/**
 * Reads a whole body, within the size limit, the time limit and (for Arrow bodies) the shared budget of bodies
 * held in memory: a declared length is reserved before the first byte is read, an undeclared one as it arrives.
 * With `room`, the body lands in one buffer with that many spare bytes around it; a declared length is read
 * straight into place.
 */
async function readBody(request: Request, limit: number, budgeted: boolean, room = { before: 0, after: 0 }): Promise<HeldBody> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw tooLarge(limit);
  let reserved = 0;
  const release = () => {
    if (budgeted) bodyBudget.release(reserved);
    reserved = 0;
  };
  const reserveUpTo = (size: number) => {
    if (!budgeted || size <= reserved) return;
    if (!bodyBudget.reserve(size - reserved, reserved)) throw slowDown("too many request bodies are held in memory");
    reserved = size;
  };
  const source = bodySource(request);
  if (!source) return { body: received(Buffer.alloc(0)), release };
  let chunks: Buffer[] = [];
  let size = 0;
  let placed: Buffer | null = null;
  const deadline = bodyDeadline();
  try {
    reserveUpTo(Math.min(declared, limit));
    if (declared > 0 && (room.before > 0 || room.after > 0)) placed = Buffer.allocUnsafe(room.before + declared + room.after);
    await source.pump((value) => {
      size += value.byteLength;
      if (size > limit) throw tooLarge(limit);
      reserveUpTo(size);
      if (!placed) chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      else if (size <= declared) placed.set(value, room.before + size - value.byteLength);
      else throw invalidInput(`the request body is longer than its Content-Length of ${declared} bytes`);
    }, deadline.expired);
    if (placed && size !== declared) throw invalidInput(`the request body ended after ${size} of the ${declared} bytes its Content-Length declared`);
  } catch (err) {
    release();
    chunks = [];
    await source.drop(err instanceof QuiverError && err.status === 503 ? DISCARD_AT_MOST : 0, deadline.expired);
    throw err;
  } finally {
    deadline.clear();
  }
  if (placed) return { body: { whole: placed, start: room.before, length: size }, release };
  if (room.before === 0 && room.after === 0) return { body: received(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)), release };
  const whole = Buffer.allocUnsafe(room.before + size + room.after);
  let at = room.before;
  for (const chunk of chunks) at += chunk.copy(whole, at);
  return { body: { whole, start: room.before, length: size }, release };
}

function tooLarge(limit: number) {
  return new QuiverError("InvalidInput", `request body is larger than the limit of ${limit} bytes`, { status: 413 });
}

/** Reads a JSON body leniently: empty, `null` and `{}` are all "no fields"; malformed JSON is kept as an error. */
async function readJsonBody(request: Request): Promise<{ value: Record<string, unknown> } | { error: QuiverError }> {
  const { body } = await readBody(request, config.maxJsonBodyBytes, false);
  const text = body.whole.toString("utf8", body.start, body.start + body.length).trim();
  if (text === "" || text === "null") return { value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: invalidInput("request body is not valid JSON") };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: invalidInput("request body must be a JSON object") };
  return { value: value as Record<string, unknown> };
}

function responseHeaders(requestId: string, contentType: string): Record<string, string> {
  return { "content-type": contentType, "x-request-id": requestId, "cache-control": "no-store, no-transform" };
}

function contextOf(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [`header.${k}`, v]));
}

export function errorResponse(err: unknown, instance: string, requestId: string): Response {
  const error =
    err instanceof QuiverError
      ? err
      : (unavailableStore(err) ?? new QuiverError("Internal", "the service failed to complete the request; see the server log with this request id"));
  if (!(err instanceof QuiverError)) console.error(`[${requestId}]`, err);
  const headers = responseHeaders(requestId, "application/json");
  if (error.status === 401) headers["www-authenticate"] = `Bearer realm="quiver"`;
  if (error.status === 503) headers["retry-after"] = "1";
  const { type, title } = seedShape(error.status);
  const body = {
    type,
    title,
    status: error.status,
    detail: error.message,
    instance,
    code: error.code,
    error: error.message,
    context: contextOf(headers),
  };
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

function reply(result: Reply, requestId: string): Response {
  if (result.kind === "arrow-file") {
    return new Response(new Uint8Array(result.body), { status: 200, headers: responseHeaders(requestId, "application/vnd.apache.arrow.file") });
  }
  const headers = responseHeaders(requestId, "application/json");
  if (result.kind === "integer") return new Response(String(result.value), { status: 200, headers });
  const withContext = !result.bare && result.body && typeof result.body === "object" && !Array.isArray(result.body);
  const body = withContext ? { ...(result.body as object), context: contextOf(headers) } : result.body;
  return new Response(JSON.stringify(body), { status: result.status ?? 200, headers });
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
  if (need === "global-admin") {
    if (!(await auth.isGlobalAdmin(principal))) throw new QuiverError("PermissionDenied", `${route.operationId} needs an administrator of the whole service`);
    return;
  }
  const target = on === "parent" ? id.slice(0, -1) : id;
  const what = `${on === "table" ? "table" : "namespace"} '${target.length ? target.join("$") : "(root)"}' of database '${database}'`;
  if (need === "visible") {
    if (!(await auth.canSeeNamespace(principal, database, target))) throw new QuiverError("PermissionDenied", `no access to ${what}`);
    return;
  }
  const role = await auth.roleOn(principal, database, target);
  if (roleRank(role) < roleRank(need)) {
    throw new QuiverError("PermissionDenied", `${route.operationId} needs the ${need} role on ${what}${role ? `; the caller is ${role}` : ""}`);
  }
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

export async function dispatch(routes: RouteDef[], request: Request): Promise<Response> {
  const url = new URL(request.url);
  const given = request.headers.get("x-request-id");
  const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
  const database = request.headers.get("x-quiver-database") || request.headers.get("x-lancedb-database") || DEFAULT_DATABASE;
  let principal: Principal | null = null;
  let matched: RouteDef | null = null;
  let target: string | null = null;
  let errorCode: number | null = null;
  let response: Response;
  const releases: Array<() => void> = [];
  const timing = new PhaseTimer();
  try {
    const found = find(routes, request.method, url.pathname);
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
    const delimiter = delimiterRaw ?? DEFAULT_DELIMITER;

    let json: Awaited<ReturnType<typeof readJsonBody>> | undefined;
    if (route.body?.kind === "json") json = await timing.time("body", readJsonBody(request));
    const identity = json && "value" in json ? (json.value.identity as { api_key?: string; auth_token?: string } | null | undefined) : undefined;
    const credentials = await credentialsOf(request, { apiKeyHeaderOnly: route.access.apiKeyHeaderOnly === true, identity });
    if ("missing" in credentials) throw new QuiverError("Unauthenticated", credentials.missing);
    if ("refused" in credentials) throw new QuiverError("Unauthenticated", credentials.refused);
    if ("forbidden" in credentials) throw new QuiverError("PermissionDenied", credentials.forbidden);
    principal = credentials.principal;

    checkDatabaseName(database);
    const keyDatabase = access().keyDatabase(principal);
    if (keyDatabase !== null && keyDatabase !== database) {
      throw new QuiverError("PermissionDenied", `this API key is limited to database '${keyDatabase}'`);
    }
    const id = parseId(params, delimiter);
    target = id.length ? formatIdentifier(id, "$") : null;
    await authorize(route, principal, database, id);
    const catalog = await catalogFor(database);
    timing.mark("auth");
    if (route.heavy || route.body?.kind === "arrow") releases.push(await timing.time("queue", heavyRequests.enter()));

    refuseUnknown(unknownQueryParameters(route, rawQuery));
    let query: unknown = {};
    if (route.query) {
      const parsed = route.query.safeParse(rawQuery);
      if (!parsed.success) throw invalidInput(zodMessage(parsed.error, "query"));
      query = parsed.data;
    }
    let body: unknown = undefined;
    if (json) {
      if ("error" in json) throw json.error;
      refuseUnknown(unknownFields((route.body as JsonBody).schema, json.value, "body"));
      const parsed = (route.body as JsonBody).schema.safeParse(json.value);
      if (!parsed.success) throw invalidInput(zodMessage(parsed.error, "body"));
      body = parsed.data;
      const bodyId = (body as { id?: unknown }).id;
      if (bodyId !== undefined && bodyId !== null && (params.id !== undefined || params.table_name !== undefined)) {
        let parts: string[];
        try {
          parts = validateIdentifier(bodyId);
        } catch (err) {
          throw invalidInput(`body.id: ${(err as Error).message}`);
        }
        if (!sameIdentifier(parts, id)) throw invalidInput("the id in the body does not match the id in the path");
      }
    } else if (route.body?.kind === "arrow") {
      const held = await timing.time("body", readBody(request, config.maxArrowBodyBytes, true, FILE_ROOM));
      releases.push(held.release);
      body = parseArrowBody(held.body);
    }
    const work = route.handler({ request, requestId, principal, database, catalog, access: access(), id, params, delimiter, query, body } as never);
    // The work owns the admission from here: it is given back when the work ends, even if a timeout answered first.
    const owned = releases.splice(0);
    const done = work.finally(() => owned.forEach((release) => release()));
    const result = await timing.time("work", withinTimeout(route, done));
    response = reply(result, requestId);
  } catch (err) {
    errorCode = err instanceof QuiverError ? err.code : 18;
    if (err instanceof QuiverError && err.status === 503) await discardBody(request);
    response = errorResponse(err, url.pathname, requestId);
  }
  releases.splice(0).forEach((release) => release());
  if (matched && (mutating(matched) || response.status === 401 || response.status === 403)) {
    await access()
      .audit.record({
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
      })
      .catch((err) => console.error(`[${requestId}] audit log write failed`, err));
  }
  // Only a caller who proved who they are learns how long each phase took.
  if (principal) response.headers.set("server-timing", timing.header());
  return response;
}
