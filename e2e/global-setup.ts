/**
 * Starts what the browser tests need: a real OpenID provider and the built Quiver server on a fresh data root,
 * both on loopback. Their addresses reach the tests through the environment.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startOidc } from "../test/oidc";

export const E2E_ADMIN_KEY = "e2e-admin-key-0123456789abcdef";

export default async function globalSetup() {
  const port = Number(process.env.E2E_PORT || 3210);
  const origin = `http://127.0.0.1:${port}`;
  const oidc = await startOidc(origin);
  const root = mkdtempSync(path.join(os.tmpdir(), "quiver-e2e-"));
  let log = "";
  const server = spawn("node_modules/.bin/next", ["start", "-p", String(port), "-H", "127.0.0.1"], {
    env: {
      ...process.env,
      ...oidc.env,
      QUIVER_ROOT: root,
      QUIVER_ADMIN_API_KEY: E2E_ADMIN_KEY,
      // Off for the service; a table that turns it on is looked at every second (the audit test's).
      QUIVER_MAINTENANCE: "off",
      QUIVER_MAINTENANCE_INTERVAL_S: "1",
      // The map test's sampled table has more rows than this; every other table's map holds all its rows.
      QUIVER_MAP_MAX_POINTS: "2000",
      QUIVER_ADMINS: "group:ops",
      // The jobs list's failed job: every maintenance job of this table fails as a broken store would make it.
      QUIVER_FAILPOINTS: "fail-maintenance:ops$broken",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout.on("data", (d) => (log += d));
  server.stderr.on("data", (d) => (log += d));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`Quiver exited:\n${log}`);
    const ok = await fetch(`${origin}/signin`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`Quiver did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  process.env.E2E_ORIGIN = origin;
  process.env.E2E_ROOT = root;
  process.env.E2E_ADMIN_KEY = E2E_ADMIN_KEY;
  return async () => {
    server.kill("SIGTERM");
    await oidc.stop();
    rmSync(root, { recursive: true, force: true });
  };
}
