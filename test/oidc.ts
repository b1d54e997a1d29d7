/** A real OpenID provider for the tests (the `oidc-provider` package), with keys the tests hold. */
import type { Server } from "node:http";
import { createServer } from "node:net";
import Provider from "oidc-provider";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from "jose";

export const AUDIENCE = "https://quiver.test/api";

export interface TestOidc {
  issuer: string;
  /** Env for a Quiver server that trusts this provider. */
  env: Record<string, string>;
  clientCredentialsToken(opaque?: boolean): Promise<string>;
  /** Signs a JWT with the provider's own key (or another one), to craft expired, misaddressed or forged tokens. */
  sign(claims: JWTPayload, options?: { foreignKey?: boolean; kid?: string }): Promise<string>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

export async function startOidc(consoleOrigin: string): Promise<TestOidc> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const foreign = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: "test-signing-key", use: "sig", alg: "RS256" };
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: "quiver-console",
        client_secret: "console-secret",
        grant_types: ["authorization_code"],
        response_types: ["code"],
        redirect_uris: [`${consoleOrigin}/api/auth/callback/oidc`],
      },
      { client_id: "machine", client_secret: "machine-secret", grant_types: ["client_credentials"], response_types: [], redirect_uris: [] },
    ],
    jwks: { keys: [jwk] },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({
        sub,
        email: `${sub}@example.com`,
        name: sub,
        groups: sub.startsWith("analyst") ? ["analysts"] : sub.startsWith("ops-") ? ["ops"] : [],
      }),
    }),
    claims: { openid: ["sub"], email: ["email"], profile: ["name", "groups"] },
    scopes: ["openid", "email", "profile", "api"],
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: true, allowedPolicy: async () => true },
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          audience: resource,
          scope: "api",
          accessTokenFormat: resource === AUDIENCE ? "jwt" : "opaque",
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
    extraTokenClaims: async (_ctx, token) =>
      token.kind === "ClientCredentials" ? { email: `${token.clientId}@example.com`, groups: ["machines"] } : undefined,
    pkce: { required: () => false },
  });
  const server: Server = provider.listen(port);
  const basic = `Basic ${Buffer.from("machine:machine-secret").toString("base64")}`;
  return {
    issuer,
    env: {
      QUIVER_OIDC_ISSUER: issuer,
      QUIVER_OIDC_CLIENT_ID: "quiver-console",
      QUIVER_OIDC_CLIENT_SECRET: "console-secret",
      QUIVER_OIDC_AUDIENCE: AUDIENCE,
      NEXTAUTH_SECRET: "test-session-secret-of-some-length-0123456789",
    },
    async clientCredentialsToken(opaque = false) {
      const body = new URLSearchParams({ grant_type: "client_credentials", scope: "api" });
      if (!opaque) body.set("resource", AUDIENCE);
      const res = await fetch(`${issuer}/token`, { method: "POST", body, headers: { authorization: basic } });
      const json = (await res.json()) as { access_token: string };
      return json.access_token;
    },
    async sign(claims, options = {}) {
      const key: CryptoKey = options.foreignKey ? foreign.privateKey : privateKey;
      return new SignJWT({ iss: issuer, aud: AUDIENCE, ...claims })
        .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: options.kid ?? "test-signing-key" })
        .sign(key);
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
