/** A small HTTP client for the tests: JSON and Arrow calls that return status and parsed body. */
import http from "node:http";
import type { Dispatcher } from "undici";
import { Float64, Int64, Table, tableFromIPC, tableToIPC, vectorFromArray, Utf8 } from "apache-arrow";

export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** `dispatcher` (an undici Agent) gives the calls a connection pool of their own instead of fetch's shared one. */
export function client(base: string, defaultHeaders: Record<string, string> = {}, dispatcher?: Dispatcher) {
  async function call<T>(method: string, path: string, body?: BodyInit | Uint8Array, headers: Record<string, string> = {}): Promise<Reply<T>> {
    const init = { method, body: body as BodyInit, headers: { ...defaultHeaders, ...headers }, dispatcher };
    const res = await fetch(base + path, init);
    const type = res.headers.get("content-type") ?? "";
    let parsed: unknown;
    if (type.includes("arrow")) parsed = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    else {
      const text = await res.text();
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }
  return {
    get: <T = Record<string, unknown>>(path: string, headers?: Record<string, string>) => call<T>("GET", path, undefined, headers),
    post: <T = Record<string, unknown>>(path: string, json?: unknown, headers?: Record<string, string>) =>
      call<T>("POST", path, json === undefined ? undefined : JSON.stringify(json), { "content-type": "application/json", ...headers }),
    raw: <T = Record<string, unknown>>(method: string, path: string, body?: BodyInit | Uint8Array, headers?: Record<string, string>) =>
      call<T>(method, path, body, headers),
    arrow: <T = Record<string, unknown>>(path: string, table: Table | Uint8Array, headers?: Record<string, string>) =>
      call<T>("POST", path, table instanceof Uint8Array ? table : tableToIPC(table, "stream"), {
        "content-type": "application/vnd.apache.arrow.stream",
        ...headers,
      }),
  };
}

/** Rows with an int64 `id`, a float64 `x` and a utf8 `s`, for ids in [from, to). */
export function rows(from: number, to: number, xOf: (i: number) => number = (i) => i * 1.5, sOf: (i: number) => string = (i) => `s${i}`) {
  const ids = Array.from({ length: to - from }, (_, k) => from + k);
  return new Table({
    id: vectorFromArray(ids.map(BigInt), new Int64()),
    x: vectorFromArray(ids.map(xOf), new Float64()),
    s: vectorFromArray(ids.map(sOf), new Utf8()),
  });
}

export const expectError = (reply: Reply, status: number, code: number) => {
  const body = reply.body;
  const ok =
    reply.status === status &&
    body.code === code &&
    body.status === status &&
    typeof body.type === "string" &&
    typeof body.title === "string" &&
    typeof body.detail === "string" &&
    typeof body.instance === "string" &&
    typeof body.error === "string";
  if (!ok) throw new Error(`expected ${status}/code ${code}, got ${reply.status}: ${JSON.stringify(body)}`);
};

/** Posts an access key to next-auth's credentials callback, as the console's sign-in page does. */
export async function postAccessKey(base: string, key: string): Promise<Response> {
  const csrf = await fetch(`${base}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const cookie = csrf.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  return fetch(`${base}/api/auth/callback/access-key`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ csrfToken, key, json: "true" }),
  });
}

/**
 * A JSON POST on a connection of its own, never a kept-alive one, so that a port shared by workers hands each call
 * to the next worker in turn. Answers the status and the body's text.
 */
export function postOnNewConnection(url: string, headers: Record<string, string>, body: unknown = {}): Promise<{ status: number; text: string }> {
  // Arrow IPC bytes go as they are, anything else as JSON.
  const arrow = body instanceof Uint8Array;
  const type = arrow ? "application/vnd.apache.arrow.stream" : "application/json";
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: "POST", agent: false, headers: { ...headers, "content-type": type } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    request.on("error", reject);
    request.setTimeout(20_000, () => request.destroy(new Error("no answer within 20 s")));
    request.end(arrow ? body : JSON.stringify(body));
  });
}

/** Polls `probe` every `everyMs` until `done` holds of its value, which it answers; throws, naming `what`, after `ms`. */
export async function until<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, ms: number, everyMs: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
