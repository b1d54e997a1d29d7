/**
 * The console's typed client for the Quiver API: each call names an operation of the contract
 * (lib/contract/operations), whose schemas type its query, its body and its answer, and the answer is checked
 * against the operation's schema when it arrives. Same-origin calls with the session cookie, the selected
 * database as a header, and one error class that carries the API's error shape.
 */
import type { z } from "zod";
import { errorCodeName, type ErrorCodeName } from "@/lib/contract/errors";
import type { ResponseSpec } from "@/lib/contract/operation";
import { operations, type OperationId, type Operations } from "@/lib/contract/operations";
import { encodeIdentifier } from "@/lib/identifiers";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly code: number | null,
    readonly requestId: string | null,
    /** Where in the request's text (a SQL statement) the failure is, when the answer says. */
    readonly position: number | null = null,
  ) {
    super(detail || title);
    this.name = "ApiError";
  }

  /** The Lance error code by name (`TableNotFound`), when the answer carried one this contract knows. */
  get codeName(): ErrorCodeName | undefined {
    return errorCodeName(this.code);
  }
}

type Spec<K extends OperationId> = Operations[K];

/** What an operation's query takes, as the client sends it (strings, before the server parses them). */
export type QueryOf<K extends OperationId> = Spec<K> extends { query?: infer Q } ? (Q extends z.ZodType ? Partial<z.input<Q>> : never) : never;

/** What an operation's body takes: its JSON request, or the bytes of an Arrow body. */
export type BodyOf<K extends OperationId> =
  Spec<K> extends { body?: infer B }
    ? B extends { kind: "json"; schema: infer S extends z.ZodType }
      ? z.input<S>
      : B extends { kind: "arrow" }
        ? BodyInit
        : never
    : never;

/** What an operation answers: its schema's output, the bytes of an Arrow file, a count, or a stored value. */
export type AnswerOf<K extends OperationId> =
  Spec<K> extends { response: infer R }
    ? R extends z.ZodType
      ? z.output<R>
      : R extends "arrow-file" | "arrow-stream"
        ? ArrayBuffer
        : R extends "integer"
          ? number
          : R extends "media"
            ? Blob
            : Record<string, never>
    : never;

export interface CallInput<K extends OperationId> {
  /** The `{id}` of the path: a namespace or table identifier. */
  id?: string[];
  /** The path's other parameters (`{key_id}`, `{index_name}`, …). */
  params?: Record<string, string>;
  query?: QueryOf<K>;
  body?: BodyOf<K>;
  database?: string;
  signal?: AbortSignal;
}

/** The URL of an operation: its path with the identifier and parameters filled in, and its query. */
export function operationUrl<K extends OperationId>(operationId: K, input: Pick<CallInput<K>, "id" | "params" | "query"> = {}): string {
  const path = operations[operationId].path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === "id") return encodeIdentifier(input.id ?? []);
    const value = input.params?.[name];
    if (value === undefined) throw new Error(`${operationId}: the path parameter ${name} is missing`);
    return encodeURIComponent(value);
  });
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(input.query ?? {})) {
    for (const one of Array.isArray(value) ? value : [value]) if (one !== undefined) query.append(key, String(one));
  }
  const search = query.toString();
  return search ? `${path}?${search}` : path;
}

/** The API's error answer as an ApiError (or the status line, when the answer is not the API's error shape). */
export async function apiErrorOf(res: Response): Promise<ApiError> {
  let payload: { title?: string; detail?: string; code?: number; position?: number } = {};
  try {
    payload = await res.json();
  } catch {
    // not the API's error shape: keep the status line
  }
  return new ApiError(
    res.status,
    payload.title ?? res.statusText,
    payload.detail ?? "",
    payload.code ?? null,
    res.headers.get("x-request-id"),
    payload.position ?? null,
  );
}

/** Calls an operation of the API and answers what it answered, checked against the operation's answer schema. */
export async function call<K extends OperationId>(operationId: K, input: CallInput<K> = {}): Promise<AnswerOf<K>> {
  const spec: Operations[OperationId] = operations[operationId];
  const headers: Record<string, string> = {};
  if (input.database) headers["x-quiver-database"] = input.database;
  let body: BodyInit | undefined;
  if (spec.body?.kind === "arrow") {
    headers["content-type"] = "application/vnd.apache.arrow.stream";
    body = input.body as BodyInit | undefined;
  } else if (spec.body?.kind === "json") {
    headers["content-type"] = "application/json";
    body = JSON.stringify(input.body ?? {});
  }
  const method = body !== undefined && spec.methods.includes("POST") ? "POST" : spec.methods[0];
  const res = await fetch(operationUrl(operationId, input), { method, headers, body, signal: input.signal, credentials: "same-origin" });
  if (!res.ok) {
    const error = await apiErrorOf(res);
    if (res.status === 401 && typeof window !== "undefined") {
      window.location.assign(`/signin?callbackUrl=${encodeURIComponent(window.location.pathname + window.location.search)}`);
    }
    throw error;
  }
  return (await answerOf(spec, res)) as AnswerOf<K>;
}

/** The answer in the form the operation declares; a JSON answer must parse with the operation's schema. */
async function answerOf(spec: Operations[OperationId], res: Response): Promise<unknown> {
  const form: ResponseSpec = spec.response;
  if (form === "arrow-file" || form === "arrow-stream") return res.arrayBuffer();
  if (form === "media") return res.blob();
  const text = await res.text();
  const value: unknown = text ? JSON.parse(text) : {};
  if (form === "integer") return Number(value);
  if (typeof form === "string") return {};
  const parsed = form.safeParse(value);
  if (!parsed.success)
    throw new ApiError(res.status, "The answer is not what the API's contract says", parsed.error.message, null, res.headers.get("x-request-id"));
  return parsed.data;
}
