#!/usr/bin/env bash
# The heavy robustness tests, on the build npm test made: on local roots, then the ones that run on an object store
# on Azurite and on moto's S3 (many clients, two servers on one root, servers killed, the store going away).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phases.sh
need_moto

ON_OBJECT_STORES=(test/stress/two-processes.test.ts test/stress/crash.test.ts test/stress/exactly-once.test.ts test/stress/store-outage.test.ts test/stress/paused-instance.test.ts)
phase "stress tests (local roots)" npx vitest run --config vitest.stress.config.ts --exclude test/stress/store-outage.test.ts
phase "stress tests on Azure Blob (Azurite)" env QUIVER_TEST_STORE=azurite npx vitest run --config vitest.stress.config.ts "${ON_OBJECT_STORES[@]}"
phase "stress tests on S3 (moto)" env QUIVER_TEST_STORE=s3 npx vitest run --config vitest.stress.config.ts "${ON_OBJECT_STORES[@]}"
