/**
 * Runs before console pages: passes the requested address on to the server layout, so that sign-in can return the
 * operator to the page they asked for, and sets a Content-Security-Policy whose per-request nonce Next puts on its
 * own scripts, so no other inline script can run.
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

export function proxy(request: NextRequest) {
  const nonce = btoa(crypto.randomUUID());
  const csp = contentSecurityPolicy(nonce, process.env.NODE_ENV !== "production");
  const headers = new Headers(request.headers);
  headers.set("x-quiver-path", request.nextUrl.pathname + request.nextUrl.search);
  headers.set("content-security-policy", csp);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", csp);
  return response;
}

export const config = {
  matcher: ["/((?!v1|api|_next|favicon.ico).*)"],
};
