#!/usr/bin/env bash
# Writes $BUILD_DIR/server/hot_text.ld, the order in which inspectord's
# code is laid out (tools/perf/hot-text/order.py says why), for this build
# tree's objects and this machine's libraries, then reconfigures the build
# with -DINSPECTOR_HOT_TEXT_LAYOUT=ON and relinks inspectord with it. Run
# it again after changes that move much code in or out of the daemon's hot
# path (a stale layout is harmless, only less useful), and compare
# build/tools/bench/forward_bench's idle RSS. The default build does not
# use a layout; tools/perf/README.md has the figures.
#
# How: relinks build/server/inspectord with a link map, runs
# forward_bench (a short run: every scenario, both modes) against that
# daemon under callgrind to learn which functions run, then the daemon
# with the hosted REST gateway answering POST /mcp, and hands both to
# order.py. Needs valgrind (apt-get install valgrind) and a configured,
# built $BUILD_DIR (default ./build). Takes a few minutes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
BUILD_DIR="$(cd "${BUILD_DIR:-$ROOT/build}" && pwd)"
work="$(mktemp -d)"
daemon=
trap '[ -n "$daemon" ] && kill "$daemon" 2>/dev/null; rm -rf "$work"' EXIT

cmake --build "$BUILD_DIR" --target inspectord inspectorctl forward_bench
link="$(cd "$BUILD_DIR" && ninja -t commands server/inspectord | tail -n 1)"
link="${link/-o server\/inspectord/-o $work/inspectord -Wl,-Map=$work/inspectord.map}"
(cd "$BUILD_DIR" && bash -c "$link")
objcopy --strip-debug "$work/inspectord" "$work/inspectord.run"

cat >"$work/callgrind.sh" <<WRAP
#!/usr/bin/env bash
exec valgrind --tool=callgrind --callgrind-out-file=$work/callgrind.%p.out \\
  --fair-sched=yes $work/inspectord.run "\$@"
WRAP
chmod +x "$work/callgrind.sh"
"$BUILD_DIR/tools/bench/forward_bench" --requests 200 --concurrency 4 \
  --inspectord "$work/callgrind.sh" >"$work/bench.txt"
mkdir "$work/bench"
mv "$work"/callgrind.*.out "$work/bench/"

# The hosted REST gateway too (--http): the fixture registered, then
# POST /mcp calls and a few reads, as a browser or script would make.
"$work/callgrind.sh" --listen 127.0.0.1:0 --http 127.0.0.1:0 \
  --ready-file "$work/ready" --db "$work/rest.db" \
  --token-file "$work/token" 2>"$work/rest.stderr" &
daemon=$!
for _ in $(seq 600); do
  grep -q "REST on" "$work/rest.stderr" && [ -s "$work/ready" ] && break
  sleep 0.1
done
http=$(grep -o "REST on [0-9.]*:[0-9]*" "$work/rest.stderr" | cut -d' ' -f3)
"$BUILD_DIR/clients/cli/inspectorctl" --addr "$(head -1 "$work/ready")" \
  --token-file "$work/token" servers add fixture -- \
  node "$ROOT/tools/fixture-server/server.mjs" stdio >/dev/null
rest() {
  curl -sSf -o /dev/null -H "Authorization: Bearer $(cat "$work/token")" \
    -H 'Content-Type: application/json' "http://$http$1" "${@:2}"
}
call='{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params":'
call+=' {"name": "echo", "arguments": {"message": "hi"}}}'
for i in $(seq 50); do
  rest "/mcp?serverId=fixture" -d "$(printf "$call" "$i")"
done
for path in /health /config /api/history /api/servers/fixture/status \
    /api/servers/fixture/tools; do
  rest "$path"
done
kill "$daemon"
wait "$daemon" || true
daemon=

# forward_bench's daemons first: a daemon without --http then only
# touches the start of the block.
python3 "$ROOT/tools/perf/hot-text/order.py" "$work/inspectord.map" \
  "$work/inspectord" "$work"/bench/callgrind.*.out "$work"/callgrind.*.out \
  >"$work/hot_text.ld"
mv "$work/hot_text.ld" "$BUILD_DIR/server/hot_text.ld"
echo "wrote $BUILD_DIR/server/hot_text.ld" >&2
cmake -DINSPECTOR_HOT_TEXT_LAYOUT=ON "$BUILD_DIR" >/dev/null
cmake --build "$BUILD_DIR" --target inspectord
