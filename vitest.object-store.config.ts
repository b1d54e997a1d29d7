import { configDefaults, defineConfig } from "vitest/config";
import path from "node:path";

/**
 * The suites run again with every server's root on an object store: `npm test` runs this config after the local run,
 * with QUIVER_TEST_STORE=azurite (Azurite, Azure Blob's emulator) and QUIVER_TEST_STORE=s3 (moto's S3 server).
 *
 * On Azurite: every API and client suite, which hold for any data root, and the fuzz suite, which compares the root
 * before and after each refused request through the objects' ETags. On S3, the suites that exercise the store rather
 * than the API a third time: the store's contract through the server, the catalog committer, the write ledger with
 * instances killed or paused and the store answering 503 or cutting answers, both LanceDB clients with vended credentials,
 * tables registered and versioned, SQL, and the files that stand a proxy of their own in front of the
 * store (the read cache, the root's listing, a commit under a drop, one maintainer, the store failing a write's requests). Path safety is about a local
 * directory (links, `..`, files beside the root) and stays in the local run.
 */
const ON_AZURITE = [
  "test/api-*.test.ts",
  "test/client-*.test.ts",
  "test/fuzz.test.ts",
  "test/object-store-root.test.ts",
  "test/catalog-committer.test.ts",
  "test/sql-on-stores.test.ts",
  "test/paused-writes.test.ts",
];
const ON_S3 = [
  "test/object-store-root.test.ts",
  "test/catalog-committer.test.ts",
  "test/client-retries.test.ts",
  "test/api-idempotency.test.ts",
  "test/client-remote.test.ts",
  "test/client-rest-namespace.test.ts",
  "test/client-managed-versioning.test.ts",
  "test/api-register.test.ts",
  "test/api-history.test.ts",
  "test/sql-on-stores.test.ts",
  "test/read-cache.test.ts",
  "test/root-listing.test.ts",
  "test/commit-under-drop.test.ts",
  "test/maintainer.test.ts",
  "test/store-faults.test.ts",
  "test/paused-writes.test.ts",
];

export default defineConfig({
  // Tests run server modules as the server does: where React's server condition makes `server-only` empty.
  resolve: { alias: { "@": path.resolve(__dirname), "server-only": path.resolve(__dirname, "node_modules/server-only/empty.js") } },
  test: {
    include: process.env.QUIVER_TEST_STORE === "s3" ? ON_S3 : ON_AZURITE,
    exclude: [...configDefaults.exclude],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup-store.ts", "test/setup-failures.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
