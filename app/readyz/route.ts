/**
 * Readiness for load balancers: whether this instance can reach the data root's store. Like /healthz it needs no
 * credentials, so it says only ready or not, never why; the server's log says why.
 */
import { storeAnswers } from "@/server/storage/readiness";
import { rootStore } from "@/server/storage/stores";
import { log } from "@/server/log";

export const dynamic = "force-dynamic";

const headers = { "cache-control": "no-store, no-transform" };

export async function GET() {
  const answer = await storeAnswers(rootStore(), 5_000);
  if (answer.ready) return Response.json({ status: "ready" }, { headers });
  log.warn({ reason: answer.reason }, "readyz: the data root's store is unavailable");
  return Response.json({ status: "unavailable" }, { status: 503, headers: { ...headers, "retry-after": "5" } });
}
