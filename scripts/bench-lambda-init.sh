#!/usr/bin/env bash
# Reports each Lambda function's init duration under the AWS Lambda Runtime Interface
# Emulator: runs TestLambdasUnderRIE (lambdas/rie_test.go) RUNS times, each time with
# fresh emulator processes, and summarises the INIT REPORT durations it logs (the
# REPORT line's "Init Duration" is meaningless under the emulator). Host-arch
# bootstraps on this machine: compare ratios across changes, not absolutes with AWS.
#
# Usage: scripts/bench-lambda-init.sh [RUNS]   (default 10)
set -euo pipefail

runs="${1:-10}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/install-rie.sh >/dev/null

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! go test ./lambdas -run '^TestLambdasUnderRIE$' -count="$runs" -v >"$log" 2>&1; then
	cat "$log" >&2
	echo "bench-lambda-init: the RIE tests failed" >&2
	exit 1
fi

# Lines look like "    rie_test.go:155: issue: INIT REPORT init duration 21.66 ms".
# "issue (deployed configuration)" starts as Terraform configures it (SigV4 to Persist,
# the idempotency secret and the deny list from SSM in the background). "floor (bare
# aws-lambda-go)" is lambdas/internal/floor, lambda.Start and nothing else: the floor
# of the others on the same run, so over_floor_ms is what a function's own imports
# and setup add. Target: the median init at most 25 ms.
durations() {
	sed -n "s/.* ${1}: INIT REPORT init duration \([0-9.]*\) ms$/\1/p" "$log" | sort -n
}
floor="floor (bare aws-lambda-go)"
floor_med="$(durations "$floor" | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')"
printf '%-32s %5s %9s %9s %9s %9s %13s %s\n' function runs min_ms median_ms p90_ms max_ms over_floor_ms "median ≤ 25 ms"
for fn in "issue" "issue (deployed configuration)" "resolve" "replay" "$floor"; do
	durations "$fn" |
		awk -v fn="$fn" -v floor="$floor_med" -v isfloor="$([ "$fn" = "$floor" ] && echo 1)" '{ v[NR] = $1 }
			END {
				if (NR == 0) { printf "%-32s %5d (no INIT REPORT lines)\n", fn, 0; exit }
				p90 = int(NR * 0.9 + 0.999999); if (p90 > NR) p90 = NR
				med = v[int((NR + 1) / 2)]
				over = (isfloor || floor == "") ? "-" : sprintf("%.2f", med - floor)
				verdict = isfloor ? "-" : (med <= 25 ? "met" : "MISSED")
				printf "%-32s %5d %9.2f %9.2f %9.2f %9.2f %13s %s\n", fn, NR, v[1], med, v[p90], v[NR], over, verdict
			}'
done

# Each function's deployment zip against the 5 MB target (the Makefile's recipe).
printf '\n%-10s %12s %12s %s\n' function zip_bytes target verdict
for fn in issue resolve replay; do
	make -s "dist/$fn.zip" >/dev/null
	size=$(stat -c %s "dist/$fn.zip")
	verdict=met; [ "$size" -le 5000000 ] || verdict=MISSED
	printf '%-10s %12d %12d %s\n' "$fn" "$size" 5000000 "$verdict"
done
