/**
 * Liveness for process supervisors and load balancers: answers while the server can serve requests. It says
 * nothing about the catalog or its data, so it needs no credentials.
 */
export const dynamic = "force-dynamic";

export function GET() {
  return Response.json({ status: "ok" }, { headers: { "cache-control": "no-store, no-transform" } });
}
