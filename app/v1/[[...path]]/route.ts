import { dispatch } from "@/server/http/dispatch";
import { apiRoutes } from "../_routes";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const handle = (request: Request) => dispatch(apiRoutes, request);

export { handle as GET, handle as POST, handle as PUT, handle as PATCH, handle as DELETE, handle as HEAD, handle as OPTIONS };
