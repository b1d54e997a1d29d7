/**
 * Console sign-in with next-auth: an OpenID Connect provider configured by environment, and access keys.
 * Sessions are JWTs in an HttpOnly cookie; they carry who signed in, never a key or a token.
 */
import "server-only";
import { createHash } from "node:crypto";
import type { AuthOptions } from "next-auth";
import type { JWT } from "next-auth/jwt";
import { decodeJwt } from "jose";
import CredentialsProvider from "next-auth/providers/credentials";
import { access } from "./access";
import { groupsFrom, oidcConfigFromEnv } from "./tokens";
import type { Principal } from "./model";
import { sessionSecret } from "./session";

export const SESSION_MAX_AGE_SECONDS = 8 * 60 * 60;

const envKeyStamp = () =>
  createHash("sha256")
    .update(process.env.QUIVER_ADMIN_API_KEY ?? "")
    .digest("hex")
    .slice(0, 16);

export interface SessionClaims {
  kind: "user" | "key";
  sub: string;
  email?: string;
  groups?: string[];
  keyStamp?: string;
}

export async function authOptions(): Promise<AuthOptions> {
  const oidc = oidcConfigFromEnv();
  const providers: AuthOptions["providers"] = [];
  if (oidc?.clientId) {
    providers.push({
      id: "oidc",
      name: "OpenID Connect",
      type: "oauth",
      wellKnown: `${oidc.issuer}/.well-known/openid-configuration`,
      clientId: oidc.clientId,
      clientSecret: oidc.clientSecret ?? undefined,
      authorization: { params: { scope: "openid email profile" } },
      idToken: true,
      checks: ["pkce", "state"],
      userinfo: {
        // OIDC Core's default puts only `sub` in the ID token of a code flow and the rest in userinfo: a sign-in
        // that read only the ID token would lose the user's email and groups, and with them admin and grants.
        async request({ client, tokens }) {
          // The ID token was verified by the callback that received it.
          const fromIdToken: Record<string, unknown> = tokens.id_token ? decodeJwt(tokens.id_token) : {};
          const complete = typeof fromIdToken.email === "string" && fromIdToken[oidc.groupsClaim] !== undefined;
          if (complete || !tokens.access_token || !client.issuer.metadata.userinfo_endpoint) return fromIdToken;
          const fromUserinfo = await client.userinfo(tokens.access_token);
          // OIDC Core 5.3.2: userinfo about another subject than the ID token's must not be used.
          if (fromUserinfo.sub !== fromIdToken.sub) throw new Error("the OpenID provider's userinfo names another subject than its ID token");
          return { ...fromUserinfo, ...fromIdToken };
        },
      },
      profile(profile: Record<string, unknown>) {
        return {
          id: String(profile.sub),
          email: (profile.email as string) ?? null,
          name: (profile.name as string) ?? (profile.email as string) ?? String(profile.sub),
        };
      },
    });
  }
  providers.push(
    CredentialsProvider({
      id: "access-key",
      name: "Access key",
      credentials: { key: { label: "Access key", type: "password" } },
      async authorize(credentials) {
        const key = credentials?.key?.trim();
        if (!key) return null;
        const result = await access().authenticateKey(key);
        if ("refused" in result) return null;
        return { id: `key:${result.principal.id}`, name: result.principal.name };
      },
    }),
  );
  return {
    secret: await sessionSecret(),
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
    pages: { signIn: "/signin", error: "/signin" },
    providers,
    callbacks: {
      async jwt({ token, account, profile, user }) {
        if (account?.provider === "access-key" && user) {
          const keyId = user.id.slice("key:".length);
          Object.assign(token, { quiver: { kind: "key", sub: keyId, keyStamp: keyId === "admin" ? envKeyStamp() : undefined } satisfies SessionClaims });
        } else if (account?.provider === "oidc" && profile) {
          const claims = profile as Record<string, unknown>;
          Object.assign(token, {
            quiver: {
              kind: "user",
              sub: String(claims.sub),
              email: typeof claims.email === "string" ? claims.email : undefined,
              groups: groupsFrom(claims, oidc?.groupsClaim ?? "groups"),
            } satisfies SessionClaims,
          });
        }
        return token;
      },
      async session({ session, token }) {
        const claims = (token as JWT & { quiver?: SessionClaims }).quiver;
        return { ...session, principal: claims ? { kind: claims.kind, id: claims.sub } : null };
      },
    },
  };
}

/** The principal behind a session, re-checked now: a revoked or expired key ends the session's access too. */
export async function principalFromSession(token: JWT | null): Promise<Principal | null> {
  const claims = token?.quiver as SessionClaims | undefined;
  if (!claims) return null;
  if (claims.kind === "user") return access().userPrincipal({ sub: claims.sub, email: claims.email, groups: claims.groups ?? [] });
  if (claims.sub === "admin") {
    if (!process.env.QUIVER_ADMIN_API_KEY || claims.keyStamp !== envKeyStamp()) return null;
    return { kind: "key", id: "admin", name: "QUIVER_ADMIN_API_KEY", key: null, admin: true };
  }
  const record = await access().keys.read(claims.sub);
  if (!record || record.revokedAt || (record.expiresAt && Date.parse(record.expiresAt) <= Date.now())) return null;
  return { kind: "key", id: record.id, name: record.name, key: record, admin: false };
}
