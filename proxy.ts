/**
 * Runs before console pages: passes the requested address on to the server layout, so that sign-in can
 * return the operator to the page they asked for.
 */
import { NextResponse, type NextRequest } from "next/server";

export function proxy(request: NextRequest) {
  const headers = new Headers(request.headers);
  headers.set("x-quiver-path", request.nextUrl.pathname + request.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  matcher: ["/((?!v1|api|_next|favicon.ico).*)"],
};
