/**
 * The data root setting: a server with a root it cannot use refuses to start with one line naming the setting,
 * never a stack trace or a hang; one that can answers its readiness probe, which checks the store.
 */
import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "./oidc";
import { azuriteStorageOptions, newAzuriteRoot, startAzurite, type Azurite } from "./azurite";
import { startMoto } from "./moto";
import type { StoreServer } from "./store-server";
import { startServer, type TestServer } from "./server";

async function startFailing(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const port = await freePort();
  const child = spawn("node_modules/.bin/next", ["start", "-p", String(port), "-H", "127.0.0.1"], {
    env: { ...process.env, NODE_ENV: "production", QUIVER_ADMIN_API_KEY: "k", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, output };
}

const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

describe("a root the server cannot use", () => {
  it.each([
    [{ QUIVER_ROOT: "ftp://host/data" }, /^quiver: QUIVER_ROOT 'ftp:\/\/host\/data': the scheme 'ftp:\/\/' is not supported/m],
    [{ QUIVER_ROOT: "s3://Bad_Bucket" }, /^quiver: QUIVER_ROOT 's3:\/\/Bad_Bucket': 'Bad_Bucket' is not a valid bucket name/m],
    [{ QUIVER_ROOT: "/tmp/x", QUIVER_STORAGE_OPTIONS: "{nope" }, /^quiver: QUIVER_STORAGE_OPTIONS is not valid JSON/m],
    [{ QUIVER_ROOT: "/tmp/x", QUIVER_MAX_PAGE_SIZE: "-1" }, /^quiver: QUIVER_MAX_PAGE_SIZE must be a positive integer, got '-1'$/m],
    [
      // Nothing listens there: the store is unreachable, and the server says so instead of waiting for it.
      {
        QUIVER_ROOT: "az://quiver/data",
        QUIVER_STORAGE_OPTIONS: JSON.stringify({
          azure_storage_account_name: "devstoreaccount1",
          azure_storage_account_key: "a2V5",
          azure_storage_endpoint: "http://127.0.0.1:9/devstoreaccount1",
        }),
      },
      /^quiver: QUIVER_ROOT az:\/\/quiver\/data: the store cannot be reached \(.+\); check its endpoint in QUIVER_STORAGE_OPTIONS$/m,
    ],
    [
      { QUIVER_ROOT: "/tmp/x", QUIVER_LOG_LEVEL: "loud" },
      /^quiver: QUIVER_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got 'loud'$/m,
    ],
    [{ QUIVER_ROOT: "/tmp/x", QUIVER_LOG_FORMAT: "xml" }, /^quiver: QUIVER_LOG_FORMAT must be 'json' or 'pretty', got 'xml'$/m],
    [{ QUIVER_ROOT: "/tmp/x", QUIVER_VEND_CREDENTIALS: "always" }, /^quiver: QUIVER_VEND_CREDENTIALS must be 'off', 'table' or 'container', got 'always'$/m],
    [{ QUIVER_ROOT: "/tmp/x", QUIVER_VEND_CREDENTIALS: "table" }, /^quiver: QUIVER_VEND_CREDENTIALS=table needs an object-store QUIVER_ROOT/m],
    // Settings that cannot vend are refused before the store is asked anything (no S3 answers here).
    [{ QUIVER_ROOT: "s3://lake/prod", QUIVER_VEND_CREDENTIALS: "container" }, /^quiver: QUIVER_VEND_CREDENTIALS=container is for az:\/\/ roots/m],
    [{ QUIVER_ROOT: "s3://lake/prod", QUIVER_VEND_CREDENTIALS: "table" }, /^quiver: QUIVER_VEND_CREDENTIALS=table on s3:\/\/ needs QUIVER_VEND_AWS_ROLE_ARN/m],
  ])("refuses to start with one line: %j", async (env, line) => {
    const { code, output } = await startFailing(env);
    expect(code).toBe(1);
    expect(output).toMatch(line);
    expect(output).not.toMatch(/^\s+at /m);
  });
});

describe("a store that answers, but not for this root", () => {
  const stores: StoreServer[] = [];
  afterAll(() => Promise.all(stores.map((s) => s.stop())));

  it("refuses a missing bucket, and credentials the store does not take, with one line naming the setting", async () => {
    const s3 = await startMoto();
    const checking = await startMoto({ checksKeys: true });
    const azurite = await startAzurite();
    stores.push(s3, checking, azurite);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { QUIVER_ROOT: "s3://no-such-bucket/prod", QUIVER_STORAGE_OPTIONS: JSON.stringify(s3.storageOptions) },
        /^quiver: QUIVER_ROOT s3:\/\/no-such-bucket\/prod: the bucket 'no-such-bucket' does not exist \(the store answered 404 NoSuchBucket: The specified bucket does not exist\)$/m,
      ],
      [
        { QUIVER_ROOT: "s3://lake/prod", QUIVER_STORAGE_OPTIONS: JSON.stringify({ ...checking.storageOptions, aws_access_key_id: "AKIANOTAKEYOFMOTOS" }) },
        /^quiver: QUIVER_STORAGE_OPTIONS: the store refused these credentials for s3:\/\/lake\/prod \(the store answered 403 InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records\.\)$/m,
      ],
      [
        {
          QUIVER_ROOT: "az://lake/prod",
          QUIVER_STORAGE_OPTIONS: JSON.stringify({ ...azuriteStorageOptions(azurite.endpoint), azure_storage_account_key: "bm90IHRoZSBrZXk=" }),
        },
        new RegExp(
          `^quiver: QUIVER_STORAGE_OPTIONS: the store refused these credentials for az://lake/prod \\(the store answered 403 AuthorizationFailure`,
          "m",
        ),
      ],
    ];
    for (const [env, line] of cases) {
      const { code, output } = await startFailing(env);
      expect(code, output).toBe(1);
      expect(output).toMatch(line);
      expect(output).not.toMatch(/^\s+at /m);
    }
  });
});

describe("vending on an Azure account without a hierarchical namespace", () => {
  let azurite: Azurite | undefined;
  afterAll(() => azurite?.stop());

  it("refuses table-scoped vending, which needs a directory SAS, and takes container-scoped vending", async () => {
    azurite = await startAzurite();
    const { env } = await newAzuriteRoot(azurite.endpoint);
    const { code, output } = await startFailing({ ...env, QUIVER_VEND_CREDENTIALS: "table" });
    expect(code).toBe(1);
    expect(output).toMatch(
      /^quiver: QUIVER_VEND_CREDENTIALS=table: account 'devstoreaccount1' has no hierarchical namespace, so a SAS cannot be limited to one table's directory; use 'container'/m,
    );
    const server = await startServer({ ...env, QUIVER_VEND_CREDENTIALS: "container" }, { root: env.QUIVER_ROOT });
    servers.push(server);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});

describe("the readiness probe", () => {
  it("answers ready without credentials while the store answers, and says nothing else", async () => {
    const server = await startServer();
    servers.push(server);
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready" });
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
  });
});
