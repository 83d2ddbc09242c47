#!/usr/bin/env bash
# Sets everything up (tools/setup.sh --for-tests), runs every test with
# CTest, then a short libFuzzer run of each parser of untrusted input
# (tools/fuzz.sh, FUZZ_SECONDS each, default 20). Extra arguments go to
# ctest (for example: -R '^integration\.Daemon') and skip the fuzz run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
"$ROOT/tools/setup.sh" --for-tests
# Node 22 (the npm peers, the conformance suites) keeps the compiled code of
# the modules it loads here: the suites start Node some 500 times, and each
# start then takes a sixth less CPU. Debian's older Node ignores it.
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$BUILD_DIR/node-compile-cache}"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
# A short libFuzzer run of every parser of untrusted input (clang build).
# Skipped when only some tests were asked for.
if (($# == 0)); then
  "$ROOT/tools/fuzz.sh" "${FUZZ_SECONDS:-20}"
fi
