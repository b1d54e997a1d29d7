/**
 * What a route of the API is: its operation, path, inputs, who may call it, its answer, and the handler that
 * makes the answer. The query parameter types every route shares are here too.
 */
import "server-only";
import { z } from "zod";
import type { Catalog } from "@/server/catalog/catalog";
import type { Tables } from "@/server/tables/tables";
import type { ArrowBody } from "@/server/lance/arrow-ipc";
import { IdentifierError, validateIdentifier } from "@/lib/identifiers";
import type { ArrowBodySpec, JsonBody, OperationSpec, ResponseSpec } from "@/lib/contract/operation";
import { invalidInput } from "../errors";
import { config } from "../config";
import type { Access } from "../auth/access";
import type { AuditEntry } from "../auth/audit";
import type { Principal, Role } from "../auth/model";
import type { Commit } from "@/server/tables/version-authors";
import type { Decided } from "@/server/tables/write-ledger";

export interface JsonReply<T = unknown> {
  kind: "json";
  body: T;
  status?: number;
  /** Answered as it is, without the `context` entries every other JSON object answer carries. */
  bare?: boolean;
}
export interface ArrowFileReply {
  kind: "arrow-file";
  body: Buffer;
}
/** An Arrow IPC stream, with headers of its own. */
export interface ArrowStreamReply {
  kind: "arrow-stream";
  body: Uint8Array;
  headers: Record<string, string>;
}
export interface IntegerReply {
  kind: "integer";
  value: number;
}
/** A stored value served as it is (an image, a sound): its own content type, and the headers that keep it inert. */
export interface MediaReply {
  kind: "media";
  body: Uint8Array;
  contentType: string;
  /** 206 for a byte range of the value. */
  status?: 200 | 206;
  headers: Record<string, string>;
}
export type Reply = JsonReply | ArrowFileReply | ArrowStreamReply | IntegerReply | MediaReply;

/** The body a JSON answer's schema describes, less the `context` the dispatcher adds to every object answer. */
type Answered<T> = T extends readonly unknown[] ? T : T extends object ? Omit<T, "context"> : T;

/**
 * What a handler must answer for a route that declares `RS`: so the type checker holds every handler to the
 * response schema the OpenAPI document publishes and the console's types are derived from.
 */
export type ReplyFor<RS extends ResponseSpec> = RS extends "arrow-file"
  ? ArrowFileReply
  : RS extends "arrow-stream"
    ? ArrowStreamReply | JsonReply<object>
    : RS extends "media"
      ? MediaReply
      : RS extends "integer"
        ? IntegerReply
        : RS extends "empty"
          ? JsonReply<Record<string, never>>
          : RS extends z.ZodType
            ? JsonReply<Answered<z.input<RS>>>
            : never;

export interface RouteContext<Q, B> {
  request: Request;
  requestId: string;
  principal: Principal;
  database: string;
  /** The catalog of the request's database: which namespaces and tables it holds. */
  catalog: Catalog;
  /** The tables of the request's database: what is done with one table's data. */
  tables: Tables;
  access: Access;
  /** The parsed `{id}` (namespace or table identifier), when the route has one. */
  id: string[];
  /** Other path parameters, percent-decoded. */
  params: Record<string, string>;
  delimiter: string;
  query: Q;
  body: B;
  /** For routes whose tables are named in the body: refuses (403) unless the caller has `need` on `table`. */
  requireTableRole: (need: Role, table: string[], operation: string) => Promise<void>;
  /**
   * Adds an entry to the audit log, stored in one write with the request's own entry before the answer leaves; if
   * it cannot be stored, the request answers 503 instead of what the handler answered.
   */
  audit: (entry: AuditEntry) => void;
  /** Says what the request did, in its own audit entry (`detail`). */
  auditDetail: (detail: string) => void;
  /** Says that the call committed a version of a table (for the record of who made each version of a managed table). */
  committed: (commit: Commit) => void;
  /**
   * Work that must end before the answer leaves but does not change it, run beside the writes of the request's audit
   * entry and version records (on a store 10-50 ms away, a round trip fewer in a row); it is given the records'
   * write, to wait for where it must follow it.
   */
  alongside: (work: (recorded: Promise<unknown>) => Promise<void>) => void;
}

/** An operation of the contract (lib/contract/operations) as this service serves it: who may call, and the handler. */
export interface RouteDef<
  QS extends z.ZodType = z.ZodType,
  BS extends JsonBody | ArrowBodySpec | undefined = JsonBody | ArrowBodySpec | undefined,
  RS extends ResponseSpec = ResponseSpec,
> extends OperationSpec<QS, BS, RS> {
  /**
   * Who may call: a role on the table or namespace the path names (or its parent), only being able to see the
   * namespace (listings then filter what they show), any signed-in caller, a global admin, or one who may read the
   * service's metrics (a global admin or a key with the metrics role).
   */
  access: {
    need: Role | "visible" | "authenticated" | "global-admin" | "metrics-reader";
    /** `tables-in-body`: the handler checks the role on each table its body names, with `requireTableRole`. */
    on?: "table" | "namespace" | "parent" | "tables-in-body";
    /** Enterprise endpoints accept only the x-api-key header. */
    apiKeyHeaderOnly?: boolean;
  };
  /**
   * The call commits a version of the table its path names, on the branch its body or query names: the answer's
   * `version`, when this says the answer is of a commit (a write that changed nothing answers the version it found).
   */
  commits?: true | ((answer: RS extends z.ZodType ? Answered<z.output<RS>> : never, query: z.output<QS>) => boolean);
  /**
   * The call writes its table (or, `batch`, the tables its body names) at most once per request id: a repeat is
   * answered with the first's answer (server/tables/write-ledger.ts). `sameBody`: LanceDB's client retries this
   * call with a new request id, so a write of the same body whose instance stopped before answering is taken for
   * it. `decided` answers for a first attempt whose instance stopped after its commit, whose version (and what the
   * manifests say it counted) the table's versions told; a call without it (a batch) is never decided so.
   * `answeredByVersion`: `decided` gives the whole answer of a commit that names the request (an insert's version and
   * its body's rows), so none is recorded in the ledger: a repeat reads it from the version.
   */
  once?: {
    scope: "table" | "batch";
    sameBody?: true;
    answeredByVersion?: true;
    decided?: (
      decided: Decided,
      ctx: RouteContext<z.output<QS>, BS extends JsonBody ? z.output<BS["schema"]> : BS extends ArrowBodySpec ? ArrowBody : undefined>,
    ) => Promise<ReplyFor<RS>>;
  };
  /** Runs under admission control (Arrow bodies always do): queries, rewrites, index builds. */
  heavy?: boolean;
  /** Every call is in the audit log, whatever its outcome, with what the handler said it did (a SQL statement). */
  audited?: true;
  handler: (
    ctx: RouteContext<z.output<QS>, BS extends JsonBody ? z.output<BS["schema"]> : BS extends ArrowBodySpec ? ArrowBody : undefined>,
  ) => Promise<ReplyFor<RS>>;
}

export function route<QS extends z.ZodType, BS extends JsonBody | ArrowBodySpec | undefined, RS extends ResponseSpec>(def: RouteDef<QS, BS, RS>): RouteDef {
  return def;
}

export const json = <T>(body: T, status?: number): JsonReply<T> => ({ kind: "json", body, status });

/**
 * LanceDB's remote client (the enterprise dialect) calls paths with a trailing slash, and a few of its expectations
 * differ from the Lance Namespace spec: a duplicate create is a 400, the tag list is a bare map.
 */
export const remoteDialect = (request: Request) => new URL(request.url).pathname.endsWith("/");

/** An identifier a request gives in a field, checked as path identifiers are; refused (400) naming the field. */
export function identifierIn(raw: unknown, field: string): string[] {
  try {
    return validateIdentifier(raw);
  } catch (err) {
    if (err instanceof IdentifierError) throw invalidInput(`${field}: ${err.message}`);
    throw err;
  }
}

export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return config.maxPageSize;
  if (limit > config.maxPageSize) throw invalidInput(`limit ${limit} is above the maximum page size ${config.maxPageSize}`);
  return limit;
}
