/**
 * OAuth 2.0 bearer tokens from the configured OpenID provider: JWT access tokens are verified against the
 * issuer's JWKS (jose); opaque tokens are checked with its token introspection endpoint (RFC 7662). Discovery and
 * introspection go through oauth4webapi, which also checks that the provider's metadata names the configured issuer.
 */
import "server-only";
import { LRUCache } from "lru-cache";
import { createHash } from "node:crypto";
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import * as oauth from "oauth4webapi";

export interface OidcConfig {
  issuer: string;
  audience: string | null;
  clientId: string | null;
  clientSecret: string | null;
  groupsClaim: string;
}

export interface TokenSubject {
  sub: string;
  email?: string;
  groups: string[];
}

const CLOCK_SKEW_SECONDS = 30;
const INTROSPECTION_CACHE_MS = 30_000;

export function oidcConfigFromEnv(): OidcConfig | null {
  const issuer = process.env.QUIVER_OIDC_ISSUER;
  if (!issuer) return null;
  return {
    issuer: issuer.replace(/\/$/, ""),
    audience: process.env.QUIVER_OIDC_AUDIENCE || null,
    clientId: process.env.QUIVER_OIDC_CLIENT_ID || null,
    clientSecret: process.env.QUIVER_OIDC_CLIENT_SECRET || null,
    groupsClaim: process.env.QUIVER_OIDC_GROUPS_CLAIM || "groups",
  };
}

export function groupsFrom(claims: Record<string, unknown>, claim: string): string[] {
  const value = claims[claim];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === "string");
  if (typeof value === "string") return value.split(/[\s,]+/).filter(Boolean);
  return [];
}

export class TokenVerifier {
  private discovery?: Promise<oauth.AuthorizationServer>;
  private jwks?: ReturnType<typeof createRemoteJWKSet>;
  /** Introspection answers by token digest, each kept until the token expires or for at most INTROSPECTION_CACHE_MS. */
  private readonly introspected = new LRUCache<string, { result: TokenSubject | { refused: string } }>({ max: 10_000 });

  constructor(private readonly config: OidcConfig) {}

  /** The provider's metadata by OpenID discovery; the issuer it names must be the one configured. */
  private metadata(): Promise<oauth.AuthorizationServer> {
    const issuer = new URL(this.config.issuer);
    // A provider on plain HTTP is only reachable when the operator configured it so (a local or test provider).
    const options = { algorithm: "oidc" as const, [oauth.allowInsecureRequests]: issuer.protocol === "http:" };
    this.discovery ??= oauth.discoveryRequest(issuer, options).then((res) => oauth.processDiscoveryResponse(issuer, res));
    this.discovery.catch(() => (this.discovery = undefined));
    return this.discovery;
  }

  /** The subject, or for a client-credentials token without one, the client it was issued to. */
  private subject(claims: JWTPayload | Record<string, unknown>): TokenSubject | { refused: string } {
    const sub = typeof claims.sub === "string" && claims.sub ? claims.sub : typeof claims.client_id === "string" ? claims.client_id : null;
    if (!sub) return { refused: "the token has no subject" };
    return {
      sub,
      email: typeof claims.email === "string" ? claims.email : undefined,
      groups: groupsFrom(claims, this.config.groupsClaim),
    };
  }

  async verify(token: string): Promise<TokenSubject | { refused: string }> {
    return token.split(".").length === 3 ? this.verifyJwt(token) : this.introspect(token);
  }

  private async verifyJwt(token: string): Promise<TokenSubject | { refused: string }> {
    const meta = await this.metadata();
    if (!meta.jwks_uri) return { refused: "the provider publishes no keys (jwks_uri) to verify a JWT with" };
    this.jwks ??= createRemoteJWKSet(new URL(meta.jwks_uri));
    try {
      const { payload } = await jwtVerify(token, this.jwks, {
        issuer: this.config.issuer,
        audience: this.config.audience ?? undefined,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ["exp"],
      });
      return this.subject(payload);
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { refused: "the token has expired" };
      if (err instanceof joseErrors.JWTClaimValidationFailed) return { refused: `the token's '${err.claim}' claim is not valid here` };
      if (err instanceof joseErrors.JWKSNoMatchingKey) return { refused: "the token is signed with an unknown key" };
      if (err instanceof joseErrors.JWSSignatureVerificationFailed) return { refused: "the token's signature is not valid" };
      if (err instanceof joseErrors.JOSEError) return { refused: "the token is not valid" };
      throw err;
    }
  }

  private async introspect(token: string): Promise<TokenSubject | { refused: string }> {
    const cacheKey = createHash("sha256").update(token).digest("hex");
    const cached = this.introspected.get(cacheKey);
    if (cached) return cached.result;
    const meta = await this.metadata();
    if (!meta.introspection_endpoint || !this.config.clientId) return { refused: "opaque tokens cannot be checked: no introspection is configured" };
    const client: oauth.Client = { client_id: this.config.clientId };
    const insecure = { [oauth.allowInsecureRequests]: new URL(meta.introspection_endpoint).protocol === "http:" };
    const res = await oauth.introspectionRequest(meta, client, oauth.ClientSecretBasic(this.config.clientSecret ?? ""), token, insecure);
    const claims: Record<string, unknown> = { ...(await oauth.processIntrospectionResponse(meta, client, res)) };
    let result: TokenSubject | { refused: string };
    const audiences = Array.isArray(claims.aud) ? claims.aud : claims.aud ? [claims.aud] : [];
    if (claims.active !== true) result = { refused: "the token is not active" };
    else if (claims.iss && claims.iss !== this.config.issuer) result = { refused: "the token's 'iss' claim is not valid here" };
    else if (this.config.audience && audiences.length > 0 && !audiences.includes(this.config.audience))
      result = { refused: "the token's 'aud' claim is not valid here" };
    else result = this.subject(claims);
    const exp = typeof claims.exp === "number" ? claims.exp * 1000 : Date.now() + INTROSPECTION_CACHE_MS;
    const ttl = Math.min(exp - Date.now(), INTROSPECTION_CACHE_MS);
    if (ttl > 0) this.introspected.set(cacheKey, { result }, { ttl });
    return result;
  }
}
