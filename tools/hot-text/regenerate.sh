#!/usr/bin/env bash
# Regenerates server/hot_text.ld, the order in which inspectord's code is
# laid out (tools/hot-text/order.py says why). Run it after changes that
# move much code in or out of the daemon's hot path, then rebuild and
# compare build/tools/bench/forward_bench's idle RSS.
#
# How: relinks build/server/inspectord with a link map, runs
# forward_bench (a short run: every scenario, both modes) against that
# daemon under callgrind to learn which functions run, and hands both to
# order.py. Needs valgrind (apt-get install valgrind) and a configured,
# built $BUILD_DIR (default ./build). Takes a few minutes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="$(cd "${BUILD_DIR:-$ROOT/build}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cmake --build "$BUILD_DIR" --target inspectord forward_bench floor_relay
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

python3 "$ROOT/tools/hot-text/order.py" "$work/inspectord.map" \
  "$work/inspectord" "$work"/callgrind.*.out >"$ROOT/server/hot_text.ld"
echo "wrote $ROOT/server/hot_text.ld" >&2
