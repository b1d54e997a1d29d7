import { z } from "zod";
import { route, type RouteDef } from "@/server/http/route";
import { openApiDocument } from "@/server/http/openapi";
import { SERVICE_VERSION } from "@/lib/service";
import { namespaceRoutes } from "./namespaces";
import { tableRoutes } from "./tables";
import { dataRoutes } from "./data";
import { mediaRoutes } from "./media";
import { historyRoutes } from "./history";
import { changeRoutes } from "./changes";
import { batchRoutes } from "./batch";
import { adminRoutes } from "./admin";
import { lancedbRoutes } from "./lancedb";
import { transactionRoutes } from "./transactions";
import { maintenanceRoutes } from "./maintenance";

const catalogRoutes: RouteDef[] = [
  ...namespaceRoutes,
  ...tableRoutes,
  ...dataRoutes,
  ...mediaRoutes,
  ...historyRoutes,
  ...changeRoutes,
  ...batchRoutes,
  ...lancedbRoutes,
  ...transactionRoutes,
  ...maintenanceRoutes,
  ...adminRoutes,
];

const openApiRoute = route({
  operationId: "GetOpenApi",
  summary: "This API's OpenAPI 3.1 description",
  group: "Service",
  methods: ["GET"],
  path: "/v1/openapi.json",
  access: { need: "authenticated" },
  response: z.object({ openapi: z.string() }).passthrough(),
  handler: async () => ({ kind: "json", body: openApiDocument(apiRoutes, SERVICE_VERSION) }),
});

export const apiRoutes: RouteDef[] = [openApiRoute, ...catalogRoutes];
