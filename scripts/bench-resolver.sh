#!/usr/bin/env bash
# Load comparison of the resolver, side by side in one run (wrk, 64 connections):
#   baseline  tools/bare302: a bare net/http handler answering 302 from a map
#   linoone   `linoone serve` in local mode: real Persist lookups (behind the hot
#             set) and every click's fact built and queued on the local bus, once
#             with LINOONE_BUS_SYNC=each (fsync before each acknowledgement, shared by
#             the batch) and once with LINOONE_BUS_SYNC=interval (acknowledged when the
#             batch's write reached the kernel, fsync every 20 ms)
# Prints requests/s and CPU per request of each, and the ratios against the targets
# (>= 0.75x the baseline's requests/s, <= 1.4x its CPU per request).
# Downstream consumption — the consumer ingesting facts into Persist, which production
# runs apart from the resolver — runs as `linoone consume --drain` after the load; its
# cost per fact is reported on its own. Loopback only.
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

start_linoone() { # sync mode
  LINOONE_BUS_SYNC=$1 "$work/linoone" serve 2>>"$work/serve.log" &
  linoone_pid=$!
  pids+=("$linoone_pid")
  for _ in $(seq 100); do curl -fs http://127.0.0.1:18480/healthz >/dev/null 2>&1 && break; sleep 0.1; done
  kill -0 "$linoone_pid" 2>/dev/null || { cat "$work/serve.log" >&2; echo "linoone serve did not start (ports 18480-18482 in use?)" >&2; exit 1; }
}
stop_linoone() { kill -INT "$linoone_pid"; wait "$linoone_pid" || true; }

start_linoone each
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
measure() { # name pid port → "req/s µs-CPU/request"
  wrk -t2 -c"$conns" -d2s -s "$work/paths.lua" "http://127.0.0.1:$3" >/dev/null # warm up
  local before after out rps reqs errors cpu_us
  before=$(ticks "$2")
  out=$(wrk -t2 -c"$conns" -d"$duration" -s "$work/paths.lua" "http://127.0.0.1:$3")
  after=$(ticks "$2")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx or 3xx responses/ {print $5}' <<<"$out")
  reqs=$(awk '/requests in/ {print $1}' <<<"$out")
  cpu_us=$(awk -v t=$((after - before)) -v hz="$hz" -v n="$reqs" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')
  printf '%-17s %9s req/s  %7s µs CPU/request  %s errors\n' "$1" "$rps" "$cpu_us" "${errors:-0}" >&2
  echo "$rps $cpu_us"
}
ratios() { # name base_rps base_cpu rps cpu
  awk -v n="$1" -v br="$2" -v bc="$3" -v lr="$4" -v lc="$5" 'BEGIN {
    rr = lr / br; cr = lc / bc
    printf "%-17s throughput %.2fx (target >= 0.75x: %s), CPU/request %.2fx (target <= 1.40x: %s)\n",
      n, rr, (rr >= 0.75 ? "met" : "MISSED"), cr, (cr <= 1.40 ? "met" : "MISSED")
  }'
}

read -r base_rps base_cpu < <(measure baseline "$bare_pid" 18483)
read -r each_rps each_cpu < <(measure "linoone sync=each" "$linoone_pid" 18480)
stop_linoone
start_linoone interval
read -r int_rps int_cpu < <(measure "linoone sync=int." "$linoone_pid" 18480)

# Downstream: deliver everything the runs queued into Persist, and what that costs.
before=$(ticks "$linoone_pid")
TIMEFORMAT='%R %U %S'
{ time "$work/linoone" consume --drain >"$work/consume.out" 2>>"$work/serve.log"; } 2>"$work/consume.time"
after=$(ticks "$linoone_pid")
read -r wall user sys <"$work/consume.time"
delivered=$(awk '{print $2}' "$work/consume.out" | tr -d ,)
awk -v n="$delivered" -v w="$wall" -v u="$user" -v s="$sys" -v t=$((after - before)) -v hz="$hz" 'BEGIN {
  printf "consumer          %d facts delivered into Persist in %.1fs (%.0f facts/s), %.1f µs CPU/fact (consumer %.1f + Persist ingest %.1f)\n",
    n, w, n / w, ((u + s) + t / hz) * 1e6 / n, (u + s) * 1e6 / n, t / hz * 1e6 / n
}' >&2
ratios "linoone sync=each" "$base_rps" "$base_cpu" "$each_rps" "$each_cpu"
ratios "linoone sync=int." "$base_rps" "$base_cpu" "$int_rps" "$int_cpu"
