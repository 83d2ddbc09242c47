#!/usr/bin/env bash
# Sets everything up (tools/setup.sh --for-tests), runs every test with
# CTest, then a short libFuzzer run of each parser of untrusted input
# (tools/fuzz.sh, FUZZ_SECONDS each, default 20). Extra arguments go to
# ctest (for example: -R daemon_test) and skip the fuzz run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
"$ROOT/tools/setup.sh" --for-tests
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
# A short libFuzzer run of every parser of untrusted input (clang build).
# Skipped when only some tests were asked for.
if (($# == 0)); then
  "$ROOT/tools/fuzz.sh" "${FUZZ_SECONDS:-20}"
fi
