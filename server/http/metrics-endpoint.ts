/**
 * GET /metrics: the Prometheus text for a scraper with an administrator's credential or a key with the metrics role
 * (as a bearer token or `x-api-key`), with no query parameters. Refusals answer in the API's error shape and are counted like the API's.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { QuiverError } from "../errors";
import { access } from "../auth/access";
import { metrics, metricsText } from "../metrics";
import { principalOf } from "./authenticate";
import { errorResponse } from "./responses";
import { refuseUnknown } from "./unknown-fields";

export async function serveMetrics(request: Request): Promise<Response> {
  const requestId = randomUUID();
  try {
    const principal = await principalOf(request, { apiKeyHeaderOnly: false });
    if (!(await access().canReadMetrics(principal)))
      throw new QuiverError("PermissionDenied", "the metrics need an administrator of the whole service or a key with the metrics role");
    // A scraper's `params` would otherwise be ignored without a word; the metrics take none.
    refuseUnknown([...new URL(request.url).searchParams.keys()].map((name) => `query.${name}`));
    const { text, contentType } = await metricsText();
    return new Response(text, { headers: { "content-type": contentType, "cache-control": "no-store, no-transform", "x-request-id": requestId } });
  } catch (err) {
    const response = errorResponse(err, "/metrics", requestId);
    if (response.status === 401 || response.status === 403) metrics.authFailures.inc({ status: response.status });
    return response;
  }
}
