/**
 * Reads credentials from a request: `x-api-key`, `Authorization: Bearer` (an API key or an OAuth access token),
 * `identity` in a JSON body, or the console's session cookie, which is honoured only from the same origin.
 */
import "server-only";
import { getToken } from "next-auth/jwt";
import { QuiverError } from "../errors";
import { access, type Authenticated } from "../auth/access";
import type { Principal } from "../auth/model";
import { principalFromSession } from "../auth/next-auth";
import { sessionSecret } from "../auth/session";

export type Credentials = Authenticated | { missing: string } | { forbidden: string };

/** A cookie value that is not valid percent-encoding is kept as written: it is some other site's cookie, or junk. */
function decodeCookie(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function cookiesOf(request: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) out[part.slice(0, eq).trim()] = decodeCookie(part.slice(eq + 1).trim());
  }
  return out;
}

/** Cookies ride along on cross-site requests; only same-origin use of the session counts. */
function sameOrigin(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site) return site === "same-origin" || (site === "none" && request.method === "GET");
  const origin = request.headers.get("origin");
  if (origin) return origin === new URL(request.url).origin || origin === `${new URL(request.url).protocol}//${request.headers.get("host")}`;
  return request.method === "GET";
}

export async function credentialsOf(
  request: Request,
  options: { apiKeyHeaderOnly: boolean; identity?: { api_key?: string | null; auth_token?: string | null } | null },
): Promise<Credentials> {
  const auth = access();
  const apiKey = request.headers.get("x-api-key");
  if (apiKey) return auth.authenticateKey(apiKey);
  if (options.apiKeyHeaderOnly) return { missing: "this endpoint requires an API key in the x-api-key header" };
  const authorization = request.headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) return { refused: "the Authorization header must be 'Bearer <token>'" };
    return auth.authenticateBearer(match[1]);
  }
  if (options.identity?.api_key) return auth.authenticateKey(options.identity.api_key);
  if (options.identity?.auth_token) return auth.authenticateBearer(options.identity.auth_token);
  const cookies = cookiesOf(request);
  if (Object.keys(cookies).some((name) => name.includes("next-auth.session-token"))) {
    if (!sameOrigin(request)) return { forbidden: "cross-site requests cannot use the console session" };
    const token = await getToken({ req: { cookies, headers: {} } as never, secret: await sessionSecret() });
    const principal = await principalFromSession(token);
    return principal ? { principal } : { refused: "the console session has expired or its key was revoked; sign in again" };
  }
  return { missing: "credentials are required: an API key (x-api-key) or a bearer token" };
}

/** The caller a request's credentials prove, or the API's 401/403 when they prove none. */
export async function principalOf(request: Request, options: Parameters<typeof credentialsOf>[1]): Promise<Principal> {
  const credentials = await credentialsOf(request, options);
  if ("missing" in credentials) throw new QuiverError("Unauthenticated", credentials.missing);
  if ("refused" in credentials) throw new QuiverError("Unauthenticated", credentials.refused);
  if ("forbidden" in credentials) throw new QuiverError("PermissionDenied", credentials.forbidden);
  return credentials.principal;
}
