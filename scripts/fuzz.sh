#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each (default 10s).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $target ($fuzztime)"
    log=$(mktemp)
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1 || { cat "$log"; rm -f "$log"; exit 1; }
    tail -n 1 "$log"
    rm -f "$log"
  done
done
