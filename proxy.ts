/**
 * Runs before console pages: passes the requested address on to the server layout, so that sign-in can
 * return the operator to the page they asked for.
 *
 * It also sees API paths with a percent sign that is not a plain ASCII escape. Next.js fails on a path it cannot
 * percent-decode with a bare 500 before the API is reached; such a path is rewritten with its stray `%` signs
 * escaped, so the API reads them as the literal characters they are and answers with its own error.
 */
import { NextResponse, type NextRequest } from "next/server";

function decodable(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

export function proxy(request: NextRequest) {
  const { pathname } = request.nextUrl;
  if (pathname.startsWith("/v1/")) {
    const segments = pathname.split("/");
    if (segments.every(decodable)) return NextResponse.next();
    const url = request.nextUrl.clone();
    url.pathname = segments.map((s) => (decodable(s) ? s : s.replace(/%/g, "%25"))).join("/");
    return NextResponse.rewrite(url);
  }
  const headers = new Headers(request.headers);
  headers.set("x-quiver-path", pathname + request.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  matcher: ["/((?!v1|api|_next|favicon.ico).*)", "/v1/(.*%(?![0-7][0-9A-Fa-f]).*)"],
};
