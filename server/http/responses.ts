/** Every answer of the API: the same headers, and each failure in the seed's shape with the Lance error code. */
import "server-only";
import { log } from "@/server/log";
import { QuiverError, seedShape, unavailableStore } from "../errors";
import type { Reply } from "./route";

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
  if (!(err instanceof QuiverError)) log.error({ request_id: requestId, err }, "unexpected failure");
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
    ...(error.position !== undefined ? { position: error.position } : {}),
    context: contextOf(headers),
  };
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

export function reply(result: Reply, requestId: string): Response {
  if (result.kind === "arrow-file") {
    return new Response(new Uint8Array(result.body), { status: 200, headers: responseHeaders(requestId, "application/vnd.apache.arrow.file") });
  }
  if (result.kind === "arrow-stream") {
    return new Response(result.body as Uint8Array<ArrayBuffer>, {
      status: 200,
      headers: { ...responseHeaders(requestId, "application/vnd.apache.arrow.stream"), ...result.headers },
    });
  }
  if (result.kind === "media") {
    return new Response(result.body as Uint8Array<ArrayBuffer>, {
      status: result.status ?? 200,
      headers: { ...responseHeaders(requestId, result.contentType), ...result.headers },
    });
  }
  const headers = responseHeaders(requestId, "application/json");
  if (result.kind === "integer") return new Response(String(result.value), { status: 200, headers });
  const withContext = !result.bare && result.body && typeof result.body === "object" && !Array.isArray(result.body);
  const body = withContext ? { ...(result.body as object), context: contextOf(headers) } : result.body;
  return new Response(JSON.stringify(body), { status: result.status ?? 200, headers });
}
