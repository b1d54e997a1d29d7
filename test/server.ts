/** Starts the real built server on a free port against a fresh temporary data root. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { freePort } from "./oidc";
import os from "node:os";
import path from "node:path";

export interface TestServer {
  url: string;
  root: string;
  /** The admin key the server was started with, and the headers that present it. */
  adminKey: string;
  auth: Record<string, string>;
  output: () => string;
  stop: () => Promise<void>;
}


export const TEST_ADMIN_KEY = "test-admin-key-0123456789";

export async function startServer(env: Record<string, string> = {}, options: { port?: number } = {}): Promise<TestServer> {
  const root = mkdtempSync(path.join(os.tmpdir(), "quiver-test-"));
  const adminKey = env.QUIVER_ADMIN_API_KEY ?? TEST_ADMIN_KEY;
  const port = options.port ?? (await freePort());
  let log = "";
  const child: ChildProcess = spawn("node_modules/.bin/next", ["start", "-p", String(port), "-H", "127.0.0.1"], {
    env: { ...process.env, QUIVER_ROOT: root, NODE_ENV: "production", QUIVER_ADMIN_API_KEY: adminKey, NEXTAUTH_URL: `http://127.0.0.1:${port}`, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${log}`);
    try {
      const res = await fetch(`${url}/v1/openapi.json`);
      if (res.status === 401 || res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    root,
    adminKey,
    auth: adminKey ? { "x-api-key": adminKey } : {},
    output: () => log,
    stop: async () => {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once("exit", r)));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
