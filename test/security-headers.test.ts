/**
 * What the browser is told about every response: API answers are data that is never sniffed, rendered or framed;
 * console pages carry a per-request nonce Content-Security-Policy; session cookies are HttpOnly and SameSite, and
 * Secure (with the __Secure-/__Host- prefixes) when the console is served over HTTPS.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postAccessKey } from "./client";
import { startServer, type TestServer } from "./server";

let plain: TestServer;
let behindHttps: TestServer;

beforeAll(async () => {
  [plain, behindHttps] = await Promise.all([startServer(), startServer({ NEXTAUTH_URL: "https://quiver.example" })]);
});
afterAll(async () => {
  await Promise.all([plain?.stop(), behindHttps?.stop()]);
});

describe("response headers", () => {
  it("API answers, successes and errors alike, forbid sniffing, rendering and framing", async () => {
    for (const res of [
      await fetch(`${plain.url}/v1/namespace/list`, { headers: plain.auth }),
      await fetch(`${plain.url}/v1/table`),
      await fetch(`${plain.url}/v1/nowhere`),
    ]) {
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(res.headers.get("referrer-policy")).toBe("same-origin");
      expect(res.headers.get("x-powered-by")).toBeNull();
    }
  });

  it("console pages carry a fresh script nonce per request and no inline script allowance", async () => {
    const policies = await Promise.all([1, 2].map(() => fetch(`${plain.url}/signin`).then((r) => r.headers.get("content-security-policy")!)));
    for (const csp of policies) {
      expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{16,}' 'strict-dynamic'(;|$)/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("base-uri 'self'");
    }
    expect(policies[0]).not.toBe(policies[1]);
  });
});

describe("session cookies", () => {
  const attributes = (cookie: string) =>
    cookie
      .split(";")
      .slice(1)
      .map((a) => a.trim().toLowerCase());

  it("are HttpOnly and SameSite=Lax, and not Secure over plain HTTP", async () => {
    const cookies = (await postAccessKey(plain.url, plain.adminKey)).headers.getSetCookie();
    const session = cookies.find((c) => c.startsWith("next-auth.session-token="));
    expect(session).toBeDefined();
    expect(attributes(session!)).toEqual(expect.arrayContaining(["httponly", "samesite=lax", "path=/"]));
    expect(attributes(session!)).not.toContain("secure");
  });

  it("are Secure and prefixed when the console is served over HTTPS", async () => {
    const csrf = (await fetch(`${behindHttps.url}/api/auth/csrf`)).headers.getSetCookie();
    const csrfCookie = csrf.find((c) => c.startsWith("__Host-next-auth.csrf-token="));
    expect(csrfCookie).toBeDefined();
    expect(attributes(csrfCookie!)).toEqual(expect.arrayContaining(["httponly", "secure", "samesite=lax", "path=/"]));
    const cookies = (await postAccessKey(behindHttps.url, behindHttps.adminKey)).headers.getSetCookie();
    const session = cookies.find((c) => c.startsWith("__Secure-next-auth.session-token="));
    expect(session, cookies.join("\n")).toBeDefined();
    expect(attributes(session!)).toEqual(expect.arrayContaining(["httponly", "secure", "samesite=lax"]));
  });
});
