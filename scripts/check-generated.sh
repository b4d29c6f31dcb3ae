#!/usr/bin/env bash
# Fails when api/ or the TypeScript client's types (clients/typescript/src/openapi.ts)
# are not what `make generate` produces from openapi.yaml, or when the capacity model's
# Terraform defaults or docs/capacity.md are not what it produces, or when
# docs/configuration.md is not what internal/app/config describes.
set -euo pipefail
cd "$(dirname "$0")/.."
go generate ./api/...
if ! git diff --exit-code --stat -- api/; then
  echo "api/ is out of date with openapi.yaml: run make generate and commit" >&2
  exit 1
fi
npm --prefix clients/typescript run --silent generate >/dev/null
if ! git diff --exit-code --stat -- clients/typescript/src/openapi.ts; then
  echo "clients/typescript/src/openapi.ts is out of date with openapi.yaml: run make generate and commit" >&2
  exit 1
fi
go generate ./internal/ops/capacity
if ! git diff --exit-code --stat -- internal/ops/capacity/terraform_gen.go docs/capacity.md; then
  echo "internal/ops/capacity or docs/capacity.md is out of date with terraform/envs or the model: run make generate and commit" >&2
  exit 1
fi
go generate ./internal/app/config
if ! git diff --exit-code --stat -- docs/configuration.md; then
  echo "docs/configuration.md is out of date with internal/app/config: run make generate and commit" >&2
  exit 1
fi
untracked=$(git ls-files --others --exclude-standard api/ clients/typescript/src/openapi.ts internal/ops/capacity/terraform_gen.go docs/capacity.md docs/configuration.md)
if [ -n "$untracked" ]; then
  echo "untracked generated files: $untracked" >&2
  exit 1
fi
