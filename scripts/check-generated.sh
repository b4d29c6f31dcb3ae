#!/usr/bin/env bash
# Fails when api/ is not what `make generate` produces from openapi.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
go generate ./api/...
if ! git diff --exit-code --stat -- api/; then
  echo "api/ is out of date with openapi.yaml: run make generate and commit" >&2
  exit 1
fi
untracked=$(git ls-files --others --exclude-standard api/)
if [ -n "$untracked" ]; then
  echo "untracked generated files: $untracked" >&2
  exit 1
fi
