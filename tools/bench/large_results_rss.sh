#!/bin/bash
# inspectord's RSS after large tool results: fresh, right after three
# 20 MB results from the fixture server (stdio, session left open), and 3 s
# later (the daemon trims its heap 500 ms after the last history write;
# README: Footprint). Usage: tools/bench/large_results_rss.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
"$build/server/inspectord" --listen 127.0.0.1:0 --ready-file "$dir/addr" \
  --db "$dir/x.db" --token-file "$dir/token" 2>"$dir/stderr" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -s "$dir/addr" ] && break; sleep 0.1; done
ctl() {
  "$build/clients/cli/inspectorctl" --addr "$(head -1 "$dir/addr")" \
    --token-file "$dir/token" "$@"
}
rss() { awk '/VmRSS/ {printf "%.1f MiB", $2 / 1024}' "/proc/$pid/status"; }
echo "fresh: $(rss)"
ctl servers add fixture -- node "$source_dir/tools/fixture-server/server.mjs" \
  stdio >/dev/null
for _ in 1 2 3; do ctl call fixture large bytes=20000000 >/dev/null; done
echo "after three 20 MB results: $(rss)"
sleep 3
echo "3 s later, session still open: $(rss)"
ctl disconnect fixture >/dev/null
sleep 3
echo "3 s after disconnect: $(rss)"
