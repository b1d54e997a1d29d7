import js from "@eslint/js";
import next from "@next/eslint-plugin-next";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      ".next/**",
      "node_modules/**",
      "data/**",
      "next-env.d.ts",
      "test-results/**",
      "playwright-report/**",
      "bench/results/**",
      "bench/.build/**",
      "scratch/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  reactHooks.configs.flat.recommended,
  next.configs["core-web-vitals"],
  {
    // Rules that need the type checker: promises that are never awaited, awaits of non-promises, async callbacks
    // where a plain one is expected, switches that miss a case.
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { attributes: false } }],
      "@typescript-eslint/no-unnecessary-type-assertion": "error",
      "@typescript-eslint/switch-exhaustiveness-check": "error",
      "@typescript-eslint/only-throw-error": "error",
    },
  },
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        fetch: "readonly",
        setTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        clearTimeout: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // The data root may be an object store: server code reaches it only through the store (server/storage/), whose
    // local implementation is the one place that touches the file system.
    files: ["server/**/*.ts", "app/**/*.ts", "app/**/*.tsx", "lib/**/*.ts", "instrumentation.ts"],
    ignores: ["server/storage/local-store.ts", "**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: ["node:fs", "fs", "node:fs/promises", "fs/promises"].map((name) => ({
            name,
            message: "Data-root state goes through the store (server/storage/object-store.ts), which works on object stores too.",
          })),
        },
      ],
    },
  },
  {
    files: ["**/*.cjs", "next.config.js"],
    rules: { "@typescript-eslint/no-require-imports": "off" },
    languageOptions: { globals: { module: "writable", require: "readonly" } },
  },
);
