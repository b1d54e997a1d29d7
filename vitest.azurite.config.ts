import { configDefaults, defineConfig } from "vitest/config";
import path from "node:path";

/**
 * The suites that hold for any data root, run again with every server's root on Azurite (a real Azure Blob server):
 * `npm test` runs them after the local run, as `QUIVER_TEST_STORE=azurite vitest run --config vitest.azurite.config.ts`.
 * The fuzz suite compares the root before and after each refused request through the blobs' ETags there. Path
 * safety is about a local directory (links, `..`, files beside the root) and stays in the local run.
 */
export default defineConfig({
  // Tests run server modules as the server does: where React's server condition makes `server-only` empty.
  resolve: { alias: { "@": path.resolve(__dirname), "server-only": path.resolve(__dirname, "node_modules/server-only/empty.js") } },
  test: {
    include: [
      "test/api-*.test.ts",
      "test/client-*.test.ts",
      "test/fuzz.test.ts",
      "test/object-store-root.test.ts",
      "test/catalog-committer.test.ts",
      "test/sql-on-stores.test.ts",
    ],
    exclude: [...configDefaults.exclude],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup-azurite.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
