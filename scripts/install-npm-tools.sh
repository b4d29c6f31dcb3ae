#!/usr/bin/env bash
# Installs the pinned npm tools of package-lock.json (the OpenAPI linters and
# playwright-core for the /docs browser test) into
# node_modules with npm ci. Idempotent: skipped when node_modules already matches
# the lock file. Needs node and npm (README prerequisites).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "npm is required (Node.js 20 or later) for the OpenAPI linters" >&2; exit 1; }
stamp=node_modules/.package-lock.json
if [ -f "$stamp" ] && [ "$stamp" -nt package-lock.json ] && [ "$stamp" -nt package.json ]; then
  exit 0
fi
npm ci --no-audit --no-fund --ignore-scripts >&2
