#!/usr/bin/env bash
# Installs tflint (built-in rules only) into GOBIN with the Go toolchain.
#
# The Terraform registry and GitHub releases are unreachable on our machines, so
# tflint is built from source through the Go module proxy, pinned to an exact
# version (the proxy refuses some @latest queries). Idempotent: when the pinned
# version is already installed nothing is rebuilt. Prints the installed version.
#
# Usage: scripts/install-tflint.sh
# Env:   TFLINT_VERSION (default v0.64.0), GOBIN (default "$(go env GOPATH)/bin").
set -euo pipefail

version="${TFLINT_VERSION:-v0.64.0}"
gobin="${GOBIN:-$(go env GOBIN)}"
if [ -z "$gobin" ]; then
	gobin="$(go env GOPATH)/bin"
fi
bin="$gobin/tflint"

installed=""
if [ -x "$bin" ]; then
	# First line looks like "TFLint version 0.64.0".
	installed="$("$bin" --version 2>/dev/null | sed -n '1s/^TFLint version \([^ ]*\).*$/v\1/p')"
fi

if [ "$installed" != "$version" ]; then
	echo "installing tflint $version into $gobin" >&2
	# Run outside any module so this never touches the project's go.mod/go.sum.
	(cd "$(mktemp -d)" && GOBIN="$gobin" GOFLAGS=-mod=mod go install "github.com/terraform-linters/tflint@$version")
fi

"$bin" --version
