import { configDefaults, defineConfig } from "vitest/config";
import path from "node:path";

export default defineConfig({
  // Tests run server modules as the server does: where React's server condition makes `server-only` empty.
  resolve: { alias: { "@": path.resolve(__dirname), "server-only": path.resolve(__dirname, "node_modules/server-only/empty.js") } },
  test: {
    include: ["lib/**/*.test.ts", "server/**/*.test.ts", "test/**/*.test.ts"],
    // The stress tests take minutes and run on their own: npm run test:stress.
    exclude: [...configDefaults.exclude, "test/stress/**"],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup-store.ts", "test/setup-failures.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
