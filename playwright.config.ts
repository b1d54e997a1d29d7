import { defineConfig } from "@playwright/test";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const port = Number(process.env.E2E_PORT || 3210);
const root = process.env.E2E_ROOT || mkdtempSync(path.join(os.tmpdir(), "quiver-e2e-"));
process.env.E2E_ROOT = root;

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  timeout: 60_000,
  workers: 1,
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    },
  },
  webServer: {
    command: `node_modules/.bin/next start -p ${port} -H 127.0.0.1`,
    url: `http://127.0.0.1:${port}/v1/openapi.json`,
    env: { QUIVER_ROOT: root },
    reuseExistingServer: false,
    timeout: 60_000,
  },
});
