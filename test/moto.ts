/**
 * moto's S3 server (test/moto-s3.py, moto 5 in the machine's Python), started on a free loopback port: a real S3 server
 * with real conditional writes (If-None-Match, If-Match), multipart uploads, ListObjectsV2 and ranges, for the tests
 * that run Quiver and the engine on an `s3://` root. It checks no signature (the read cache's signing is checked
 * against AWS's own signer, server/storage/read-cache/aws-sigv4.test.ts), so any key reaches it.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { StoreServer } from "./store-server";

/** What the tests sign with: moto takes any key. */
const ACCESS_KEY_ID = "quiver-test";
const SECRET_ACCESS_KEY = "quiver-test-secret";
const REGION = "us-east-1";
/** The role whose sessions a server on moto vends (moto assumes any role). */
const VENDING_ROLE = "arn:aws:iam::123456789012:role/lance-writer";

function motoStorageOptions(endpoint: string): Record<string, string> {
  return {
    aws_access_key_id: ACCESS_KEY_ID,
    aws_secret_access_key: SECRET_ACCESS_KEY,
    aws_region: REGION,
    aws_endpoint: endpoint,
    allow_http: "true",
  };
}

/** Makes a bucket (moto answers 200 when it exists already). */
async function createBucket(endpoint: string, bucket: string): Promise<void> {
  const res = await fetch(`${endpoint}/${bucket}`, { method: "PUT", signal: AbortSignal.timeout(15_000) });
  if (!res.ok) throw new Error(`creating bucket '${bucket}' answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
}

async function newMotoRoot(endpoint: string, prefix = "quiver"): Promise<{ uri: string; env: Record<string, string> }> {
  const bucket = `t${randomBytes(6).toString("hex")}`;
  await createBucket(endpoint, bucket);
  const uri = `s3://${bucket}/${prefix}`;
  return { uri, env: { QUIVER_ROOT: uri, QUIVER_STORAGE_OPTIONS: JSON.stringify(motoStorageOptions(endpoint)) } };
}

/**
 * Starts moto's S3 server on a free port; with `checksKeys`, one that refuses every key it did not issue itself (it
 * then refuses even its own keys' listings by prefix: only for tests of refused credentials).
 */
export async function startMoto(options: { checksKeys?: boolean } = {}): Promise<StoreServer> {
  const env = { ...process.env, ...(options.checksKeys ? { INITIAL_NO_AUTH_ACTION_COUNT: "0" } : {}) };
  const child = spawn("python3", ["test/moto-s3.py", "127.0.0.1", "0"], { stdio: ["ignore", "pipe", "pipe"], env });
  let log = "";
  child.stderr.on("data", (d) => (log += d));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`moto did not start within 30 s:\n${log}`)), 30_000);
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const listening = /listening (\d+)/.exec(out);
      if (listening) {
        clearTimeout(timer);
        resolve(Number(listening[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`moto exited (${code}) before it listened; is moto installed (pip install 'moto[server]')?\n${log}`));
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    kind: "s3",
    port,
    endpoint,
    storageOptions: motoStorageOptions(endpoint),
    storageOptionsVia: motoStorageOptions,
    // STS sessions of a role, limited to one table's prefix by their policy: moto answers AssumeRole too.
    vending: { QUIVER_VEND_CREDENTIALS: "table", QUIVER_VEND_AWS_ROLE_ARN: VENDING_ROLE, AWS_ENDPOINT_URL_STS: endpoint },
    checksVendedScope: false,
    newRoot: (prefix) => newMotoRoot(endpoint, prefix),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}
