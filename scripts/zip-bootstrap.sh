#!/usr/bin/env bash
# Packs a Lambda bootstrap binary into a reproducible zip (see tools/zipbootstrap):
# one entry "bootstrap", mode 0755, fixed time 1980-01-01 00:00:00, Deflate, no
# extra fields. The same binary gives the same zip bytes, so Terraform's
# source_code_hash changes only when the code does. Needs only the Go toolchain, not
# the zip program. OUT is replaced atomically (temporary file and rename).
#
# Usage: scripts/zip-bootstrap.sh IN OUT   (e.g. dist/issue/bootstrap dist/issue.zip)
set -euo pipefail

if [ "$#" -ne 2 ]; then
	echo "usage: $0 IN OUT" >&2
	exit 2
fi

abs() {
	case "$1" in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s\n' "$PWD/$1" ;;
	esac
}
in="$(abs "$1")"
out="$(abs "$2")"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# go -C runs the tool from the module root whatever the caller's directory is.
go -C "$root" run ./tools/zipbootstrap "$in" "$out"
