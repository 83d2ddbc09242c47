#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (into $BUILD_DIR/fuzz) and runs
# each for SECONDS (default 20), as many at once as there are cores,
# starting from its seed corpus in tests/fuzz/corpus/<name>/ (copied, so new
# inputs do not dirty the tree).
# A crash, leak or timeout fails the run and leaves the input in
# $BUILD_DIR/fuzz/artifacts/. tools/test.sh runs this after the tests.
#
#   tools/fuzz.sh                 # every target, 20 s each
#   tools/fuzz.sh 300 http1_parser_fuzzer
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
FUZZ_DIR="$BUILD_DIR/fuzz"
SECONDS_EACH="${1:-20}"
shift || true
TARGETS=("$@")
if ((${#TARGETS[@]} == 0)); then
  TARGETS=(json_rpc_fuzzer sse_parser_fuzzer http1_parser_fuzzer
           path_template_fuzzer request_binder_fuzzer)
fi

if [ ! -f "$FUZZ_DIR/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$FUZZ_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$FUZZ_DIR" -j "$(nproc)" --target "${TARGETS[@]}"

mkdir -p "$FUZZ_DIR/artifacts"

# Runs one fuzzer; its verdict and figures go to stderr when it ends.
fuzz_one() {
  local target="$1" name="${1%_fuzzer}"
  local corpus="$FUZZ_DIR/corpus/$name"
  mkdir -p "$corpus"
  if [ -d "$ROOT/tests/fuzz/corpus/$name" ]; then
    cp -n "$ROOT/tests/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null || true
  fi
  if ! (cd "$FUZZ_DIR" && "./tests/fuzz/$target" -max_total_time="$SECONDS_EACH" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$FUZZ_DIR/artifacts/$name-" "$corpus" \
        >"$FUZZ_DIR/$name.log" 2>&1); then
    echo "fuzz: $target FAILED; see $FUZZ_DIR/$name.log and $FUZZ_DIR/artifacts/" >&2
    tail -n 40 "$FUZZ_DIR/$name.log" >&2
    return 1
  fi
  grep -E "stat::number_of_executed_units|cov:" "$FUZZ_DIR/$name.log" |
    tail -n 2 | sed "s/^/fuzz: $target: /" >&2
}

# One fuzzer per core at a time: each is single-threaded, so every one
# still gets a whole core for its SECONDS.
status=0
running=()
for target in "${TARGETS[@]}"; do
  echo "fuzz: $target for ${SECONDS_EACH}s" >&2
  fuzz_one "$target" &
  running+=("$!")
  if ((${#running[@]} >= $(nproc))); then
    for pid in "${running[@]}"; do wait "$pid" || status=1; done
    running=()
  fi
done
for pid in "${running[@]}"; do wait "$pid" || status=1; done
exit "$status"
