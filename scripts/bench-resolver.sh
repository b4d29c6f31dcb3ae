#!/usr/bin/env bash
# Load comparison of the resolver, side by side in one run (wrk, 64 connections):
#   baseline  tools/bare302: a bare net/http handler answering 302 from a map
#   linoone   `linoone serve` in local mode: real Persist lookups (behind the hot
#             set) and every click's fact built and durably queued on the local bus
# Prints requests/s and CPU per request of each and their ratios against the targets
# (>= 0.75x the baseline's requests/s, <= 1.4x its CPU per request).
# Downstream consumption — the consumer ingesting facts into Persist, which production
# runs apart from the resolver — runs as `linoone consume` after the load, and its cost
# per fact is reported on its own. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${BENCH_DURATION:-10s}
conns=${BENCH_CONNECTIONS:-64}
ntokens=${BENCH_TOKENS:-200}

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/linoone" ./cmd/linoone
go build -o "$work/bare302" ./tools/bare302

export LINOONE_DATA_DIR="$work/data" LINOONE_RESOLVER_ADDR=127.0.0.1:18480 \
  LINOONE_MANAGEMENT_ADDR=127.0.0.1:18481 LINOONE_PERSIST_ADDR=127.0.0.1:18482 LINOONE_LOG_LEVEL=warn \
  LINOONE_CONSUMER=external
"$work/linoone" serve 2>"$work/serve.log" & pids+=($!); linoone_pid=$!
for _ in $(seq 100); do curl -fs http://127.0.0.1:18480/healthz >/dev/null 2>&1 && break; sleep 0.1; done
kill -0 "$linoone_pid" 2>/dev/null || { cat "$work/serve.log" >&2; echo "linoone serve did not start (ports 18480-18483 in use?)" >&2; exit 1; }

echo "issuing $ntokens short URLs…" >&2
: >"$work/tokens"
for i in $(seq "$ntokens"); do
  target="https://example.com/landing?message_id=msg_$i"
  url=$("$work/linoone" shorten "$target")
  echo "${url##*/} $target" >>"$work/tokens"
done
"$work/bare302" 127.0.0.1:18483 "$work/tokens" & pids+=($!); bare_pid=$!
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:18483/x && break; sleep 0.1; done

# wrk walks through every token.
{
  echo 'local paths = {'
  while read -r tok _; do echo "  \"/$tok\","; done <"$work/tokens"
  echo '}'
  echo 'local i = 0'
  echo 'request = function() i = i % #paths + 1; return wrk.format("GET", paths[i]) end'
} >"$work/paths.lua"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
measure() { # name pid port
  wrk -t2 -c"$conns" -d2s -s "$work/paths.lua" "http://127.0.0.1:$3" >/dev/null # warm up
  local before after out rps
  before=$(ticks "$2")
  out=$(wrk -t2 -c"$conns" -d"$duration" -s "$work/paths.lua" "http://127.0.0.1:$3")
  after=$(ticks "$2")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx or 3xx responses/ {print $5}' <<<"$out")
  reqs=$(awk '/requests in/ {print $1}' <<<"$out")
  cpu_us=$(awk -v t=$((after - before)) -v hz="$hz" -v n="$reqs" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')
  printf '%-9s %10s req/s  %7s µs CPU/request  %s errors\n' "$1" "$rps" "$cpu_us" "${non2xx:-0}" >&2
  echo "$rps $cpu_us"
}
read -r base_rps base_cpu < <(measure baseline "$bare_pid" 18483)
read -r lin_rps lin_cpu < <(measure linoone "$linoone_pid" 18480)

# Downstream: deliver everything the run queued into Persist, and what that costs.
before=$(ticks "$linoone_pid")
TIMEFORMAT='%R %U %S'
{ time "$work/linoone" consume --drain >"$work/consume.out" 2>>"$work/serve.log"; } 2>"$work/consume.time"
after=$(ticks "$linoone_pid")
read -r wall user sys <"$work/consume.time"
delivered=$(awk '{print $2}' "$work/consume.out" | tr -d ,)
awk -v n="$delivered" -v w="$wall" -v u="$user" -v s="$sys" -v t=$((after - before)) -v hz="$hz" 'BEGIN {
  printf "consumer  %d facts delivered into Persist in %.1fs (%.0f facts/s), %.1f µs CPU/fact (consumer %.1f + Persist ingest %.1f)\n",
    n, w, n / w, ((u + s) + t / hz) * 1e6 / n, (u + s) * 1e6 / n, t / hz * 1e6 / n
}' >&2

awk -v br="$base_rps" -v bc="$base_cpu" -v lr="$lin_rps" -v lc="$lin_cpu" 'BEGIN {
  rr = lr / br; cr = lc / bc
  printf "throughput ratio %.2fx (target >= 0.75x): %s\n", rr, (rr >= 0.75 ? "met" : "MISSED")
  printf "CPU/request ratio %.2fx (target <= 1.40x): %s\n", cr, (cr <= 1.40 ? "met" : "MISSED")
}'
