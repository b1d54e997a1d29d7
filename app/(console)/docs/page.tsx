import { apiRoutes } from "@/app/v1/_routes";
import { openApiDocument } from "@/server/http/openapi";
import { SERVICE_VERSION } from "@/lib/service";
import { ApiReference } from "@/components/docs/api-reference";

export const metadata = { title: "Quiver API reference" };

export default function DocsPage() {
  return <ApiReference document={openApiDocument(apiRoutes, SERVICE_VERSION)} />;
}
