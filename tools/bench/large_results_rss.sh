#!/bin/bash
# inspectord's RSS around large tool results, through gRPC (inspectorctl)
# and through the hosted REST gateway (POST /mcp): fresh, right after three
# 20 MB results from the fixture server (stdio), 11 s later with the session
# still open, and 11 s after a disconnect (the daemon trims its heap 10 s
# after the last history write; docs/performance.md). Prints figures only.
# Usage: tools/bench/large_results_rss.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
fixture="$source_dir/tools/fixture-server/server.mjs"
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

# Starts a daemon on a fresh database; extra arguments go to inspectord.
start() {
  rm -f "$dir"/*
  "$build/server/inspectord" --listen 127.0.0.1:0 --ready-file "$dir/addr" \
    --db "$dir/x.db" --token-file "$dir/token" "$@" 2>"$dir/stderr" &
  pid=$!
  for _ in $(seq 100); do [ -s "$dir/addr" ] && break; sleep 0.1; done
}
stop() { kill $pid; wait $pid 2>/dev/null || true; pid=; }
rss() { awk '/VmRSS/ {printf "%.1f MiB", $2 / 1024}' "/proc/$pid/status"; }
ctl() {
  "$build/clients/cli/inspectorctl" --addr "$(head -1 "$dir/addr")" \
    --token-file "$dir/token" "$@"
}
# Three large results, then the session left open, then disconnected.
# $1 makes one call; $2 disconnects.
measure() {
  echo "  fresh: $(rss)"
  ctl servers add fixture -- node "$fixture" stdio >/dev/null
  for i in 1 2 3; do "$1" "$i"; done
  echo "  after three 20 MB results: $(rss)"
  sleep 11
  echo "  11 s later, session still open: $(rss)"
  "$2"
  sleep 11
  echo "  11 s after disconnect: $(rss)"
}

grpc_call() { ctl call fixture large bytes=20000000 >/dev/null; }
grpc_disconnect() { ctl disconnect fixture >/dev/null; }
echo "gRPC (inspectorctl call):"
start
measure grpc_call grpc_disconnect
stop

rest() {
  local http
  http=$(grep -o "REST on [0-9.]*:[0-9]*" "$dir/stderr" | cut -d' ' -f3)
  curl -sSf -o /dev/null -H "Authorization: Bearer $(cat "$dir/token")" \
    -H 'Content-Type: application/json' "http://$http$1" -d "$2"
}
rest_call() {
  rest "/mcp?serverId=fixture" '{"jsonrpc": "2.0", "id": '"$1"', "method": "tools/call", "params": {"name": "large", "arguments": {"bytes": 20000000}}}'
}
rest_disconnect() { rest /api/servers/fixture/disconnect '{}'; }
echo "REST (POST /mcp on the hosted gateway):"
start --http 127.0.0.1:0
measure rest_call rest_disconnect
stop
