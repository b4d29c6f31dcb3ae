#!/usr/bin/env bash
# Installs the AWS Lambda Runtime Interface Emulator (aws-lambda-rie) into GOBIN with
# the Go toolchain, for the tests in lambdas/ that run each bootstrap under it.
#
# GitHub releases are unreachable on our machines, so the emulator is built from
# source through the Go module proxy, pinned to an exact pseudo-version (the proxy
# refuses some @latest queries). The binary prints no version, so the installed
# module version is read back from its build information (go version -m).
# Idempotent: when the pinned version is already installed nothing is rebuilt.
# Prints the installed binary's path.
#
# Usage: scripts/install-rie.sh
# Env:   RIE_VERSION (default v0.0.0-20261030222936-bef5c4ba774d),
#        GOBIN (default "$(go env GOPATH)/bin").
set -euo pipefail

module="github.com/aws/aws-lambda-runtime-interface-emulator"
version="${RIE_VERSION:-v0.0.0-20261030222936-bef5c4ba774d}"
gobin="${GOBIN:-$(go env GOBIN)}"
if [ -z "$gobin" ]; then
	gobin="$(go env GOPATH)/bin"
fi
bin="$gobin/aws-lambda-rie"

installed=""
if [ -x "$bin" ]; then
	# A line of `go version -m` looks like "	mod	<module>	<version>	<sum>".
	installed="$(go version -m "$bin" 2>/dev/null | awk -v m="$module" '$1 == "mod" && $2 == m { print $3 }')"
fi

if [ "$installed" != "$version" ]; then
	echo "installing aws-lambda-rie $version into $gobin" >&2
	# Run outside any module so this never touches the project's go.mod/go.sum.
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && GOBIN="$gobin" GOFLAGS=-mod=mod CGO_ENABLED=0 go install "$module/cmd/aws-lambda-rie@$version")
fi

echo "$bin"
