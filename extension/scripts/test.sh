#!/usr/bin/env bash
# `make test` runs this: the extension's unit tests (vitest, mocked vscode), the type check
# (src/generated/protocol.ts against schemas/, and tsc), the contract test against the real
# server, and the end-to-end test in a real VS Code (skipped, loudly, where it cannot be
# installed). Each part ends with a plain `N passed, N failed` line.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
if ! command -v npm >/dev/null || ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
  echo "######################################################################"
  echo "## extension tests NOT RUN: Node.js 20+ with npm is needed          ##"
  echo "######################################################################"
  echo "0 passed, 1 failed"; exit 1
fi

count() {  # a vitest JSON report -> `N passed, N failed` (a suite that failed to load counts)
  node -e 'const r=require(require("path").resolve(process.argv[1]));const f=r.numFailedTests+(r.numFailedTestSuites>0&&r.numFailedTests===0?1:0);console.log(`${r.numPassedTests} passed, ${f} failed`)' "$1" 2>/dev/null \
    || echo "0 passed, 1 failed"
}

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error || { echo "extension: npm ci failed"; echo "0 passed, 1 failed"; exit 1; }
fi
rm -rf .test-results

echo "== extension: types against schemas/ and tsc"
if node scripts/gen-types.mjs --check && npx tsc --noEmit -p .; then
  echo "2 passed, 0 failed"
else
  echo "0 passed, 1 failed"; status=1
fi

echo "== extension: unit tests (vitest)"
npx vitest run || status=1
count .test-results/unit.json

echo "== extension: contract test (the real server over stdio)"
npx vitest run -c contract/vitest.config.mts || status=1
count .test-results/contract.json

echo "== extension: end-to-end in a real VS Code (code-server + Chromium)"
bash e2e/run.sh || status=1
exit $status
