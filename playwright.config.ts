import { defineConfig } from "@playwright/test";

const port = Number(process.env.E2E_PORT || 3210);

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  globalSetup: "./e2e/global-setup.ts",
  timeout: 60_000,
  workers: 1,
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        // A second name for this machine, to open the console at an address other than the one it was started with.
        "--host-resolver-rules=MAP quiver.test 127.0.0.1",
      ],
    },
  },
});
