#!/usr/bin/env bash
# Installs what the build needs on Debian bookworm (apt, with sudo when not
# root; with --for-tests also what only the tests need), then configures
# and builds everything into $BUILD_DIR (default: ./build). Re-running only
# installs what is missing and rebuilds what changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"

PACKAGES=(
  g++ cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libsqlite3-dev sqlite3 libcurl4-openssl-dev libssl-dev
  libgoogle-common-protos-java golang-github-gogo-googleapis-dev
  libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libre2-dev
  python3 python3-grpcio python3-protobuf
  curl clang libclang-rt-14-dev
  libncurses-dev
)
# With --for-tests (tools/test.sh), also what only the tests use: a real
# browser for tests/integration/browser_eventsource_test.mjs, tmux, the
# terminal that tests/integration/tui_e2e_test.cc drives `inspectorctl tui`
# in, and Prometheus, which tests/integration/metrics_e2e_test.cc starts
# on port 0 to scrape the daemon (the test runs its own; the package's
# service is not used).
if [ "${1:-}" = "--for-tests" ]; then
  PACKAGES+=(chromium tmux prometheus)
fi

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The npm peers download while the build compiles: one waits on the
# network, the other on the CPU. Their output comes after the build's.
npm_log="$(mktemp)"
"$ROOT/tools/npm/install.sh" >"$npm_log" 2>&1 &
npm_pid=$!
trap 'kill "$npm_pid" 2>/dev/null || true; rm -f "$npm_log"' EXIT

cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja \
  -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"

npm_status=0
wait "$npm_pid" || npm_status=$?
cat "$npm_log" >&2
exit "$npm_status"
