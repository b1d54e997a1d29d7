import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: [".next/**", "node_modules/**", "data/**", "next-env.d.ts", "test-results/**", "playwright-report/**", "bench/results/**", "bench/.build/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly", fetch: "readonly",
        setTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", clearTimeout: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  { files: ["**/*.cjs", "next.config.js"], rules: { "@typescript-eslint/no-require-imports": "off" }, languageOptions: { globals: { module: "writable", require: "readonly" } } },
);
