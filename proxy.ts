/**
 * Runs before console pages: passes the requested address on to the server layout, so that sign-in can return the
 * operator to the page they asked for, and sets a Content-Security-Policy whose per-request nonce Next puts on its
 * own scripts, so no other inline script can run.
 *
 * It gives sign-in's own routes the scheme they were asked over (withForwardedProto).
 *
 * It also sees API paths with a percent sign that is not a plain ASCII escape. Next.js fails on a path it cannot
 * percent-decode with a bare 500 before the API is reached; such a path is rewritten with its stray `%` signs
 * escaped, so the API reads them as the literal characters they are and answers with its own error.
 */
import { NextResponse, type NextRequest } from "next/server";

export function contentSecurityPolicy(nonce: string, development: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ""}`,
    // React renders `style` attributes (virtualized rows, progress) into the server's HTML.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

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
  if (pathname.startsWith("/api/auth/")) return NextResponse.next({ request: { headers: withForwardedProto(request) } });
  if (pathname.startsWith("/v1/")) {
    const segments = pathname.split("/");
    if (segments.every(decodable)) return NextResponse.next();
    const url = request.nextUrl.clone();
    url.pathname = segments.map((s) => (decodable(s) ? s : s.replace(/%/g, "%25"))).join("/");
    return NextResponse.rewrite(url);
  }
  const nonce = btoa(crypto.randomUUID());
  const csp = contentSecurityPolicy(nonce, process.env.NODE_ENV !== "production");
  const headers = new Headers(request.headers);
  headers.set("x-quiver-path", pathname + request.nextUrl.search);
  headers.set("content-security-policy", csp);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", csp);
  return response;
}

/**
 * Sign-in's own routes learn the address the console was opened at from the request (server/startup.ts trusts it
 * when NEXTAUTH_URL is unset), its scheme from `X-Forwarded-Proto`, which next-auth otherwise takes to be https. A
 * proxy in front says what its clients used; without one, it is the scheme this request came in with.
 */
function withForwardedProto(request: NextRequest): Headers {
  const headers = new Headers(request.headers);
  if (!headers.has("x-forwarded-proto")) headers.set("x-forwarded-proto", request.nextUrl.protocol.replace(/:$/, ""));
  return headers;
}

export const config = {
  matcher: ["/((?!v1|api|_next|healthz$|readyz$|metrics$|favicon.ico).*)", "/v1/(.*%(?![0-7][0-9A-Fa-f]).*)", "/api/auth/:path*"],
};
