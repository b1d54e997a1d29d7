import { serveMetrics } from "@/server/http/metrics-endpoint";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = (request: Request) => serveMetrics(request);
