#!/usr/bin/env bash
# Installs the pinned npm packages of the two package-lock.json files with npm ci:
# the root's (the OpenAPI linters, playwright-core for the /docs browser test, the
# README's TypeScript check) and clients/typescript's (the @linoone/client package:
# its build, its tests and the type generator of make generate). Idempotent: a
# node_modules that already matches its lock file is left as it is. Needs node and
# npm (README prerequisites).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "npm is required (Node.js 20 or later) for the OpenAPI linters and the TypeScript client" >&2; exit 1; }
for dir in . clients/typescript; do
  stamp=$dir/node_modules/.package-lock.json
  if [ -f "$stamp" ] && [ "$stamp" -nt "$dir/package-lock.json" ] && [ "$stamp" -nt "$dir/package.json" ]; then
    continue
  fi
  (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts >&2)
done
