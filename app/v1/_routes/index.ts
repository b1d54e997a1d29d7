/** The route table: every route of the API, by resource, and the OpenAPI document made from it. */
import { route, type RouteDef } from "@/server/http/route";
import { openApiDocument } from "@/server/http/openapi";
import { SERVICE_VERSION } from "@/lib/service";
import { serviceOperations } from "@/lib/contract/operations/service";
import { namespaceRoutes } from "./namespaces";
import { tableRoutes } from "./tables";
import { dataRoutes } from "./data";
import { columnRoutes } from "./columns";
import { versionRoutes } from "./versions";
import { indexRoutes } from "./indexes";
import { batchRoutes } from "./batch";
import { maintenanceRoutes } from "./maintenance";
import { transactionRoutes } from "./transactions";
import { adminRoutes } from "./admin";
import { sqlRoutes } from "./sql";
import { mapRoutes } from "./maps";

const catalogRoutes: RouteDef[] = [
  ...namespaceRoutes,
  ...tableRoutes,
  ...dataRoutes,
  ...columnRoutes,
  ...versionRoutes,
  ...indexRoutes,
  ...batchRoutes,
  ...maintenanceRoutes,
  ...transactionRoutes,
  ...adminRoutes,
  ...sqlRoutes,
  ...mapRoutes,
];

const openApiRoute = route({
  ...serviceOperations.GetOpenApi,
  access: { need: "authenticated" },
  handler: async () => ({ kind: "json", body: openApiDocument(apiRoutes, SERVICE_VERSION) }),
});

export const apiRoutes: RouteDef[] = [openApiRoute, ...catalogRoutes];
