/**
 * The console's typed client for the Quiver API: same-origin calls with the session cookie, the selected
 * database as a header, and one error class that carries the API's error shape.
 */
import { errorCodeName, type ErrorCodeName } from "@/lib/contract/errors";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly code: number | null,
    readonly requestId: string | null,
  ) {
    super(detail || title);
    this.name = "ApiError";
  }

  /** The Lance error code by name (`TableNotFound`), when the answer carried one this contract knows. */
  get codeName(): ErrorCodeName | undefined {
    return errorCodeName(this.code);
  }
}

export interface CallOptions {
  method?: "GET" | "POST";
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  database?: string;
  signal?: AbortSignal;
  accept?: "json" | "arrow";
}

export async function apiCall<T>(path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.database) headers["x-quiver-database"] = options.database;
  let body = options.body;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.json);
  }
  const res = await fetch(path, { method: options.method ?? (body ? "POST" : "GET"), headers, body, signal: options.signal, credentials: "same-origin" });
  if (!res.ok) {
    let payload: { title?: string; detail?: string; code?: number } = {};
    try {
      payload = await res.json();
    } catch {
      // not the API's error shape: keep the status line
    }
    if (res.status === 401 && typeof window !== "undefined") {
      window.location.assign(`/signin?callbackUrl=${encodeURIComponent(window.location.pathname + window.location.search)}`);
    }
    throw new ApiError(res.status, payload.title ?? res.statusText, payload.detail ?? "", payload.code ?? null, res.headers.get("x-request-id"));
  }
  if (options.accept === "arrow") return (await res.arrayBuffer()) as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}
