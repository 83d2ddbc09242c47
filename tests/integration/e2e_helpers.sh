# Helpers shared by the shell end-to-end tests of this directory. Source
# it after `set -euo pipefail` and setting CASE; it sets SCRIPT (the test's
# name), HERE (this directory), ROOT (the source tree) and STEP_TIMEOUT
# (seconds, 30 unless set). `ctl` runs $INSPECTORCTL.

readonly SCRIPT="$(basename "$0")"
readonly HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly ROOT="$(cd "$HERE/../.." && pwd)"
STEP_TIMEOUT="${STEP_TIMEOUT:-30}"

die() {
  echo "$SCRIPT [$CASE]: FAIL: $*" >&2
  exit 1
}
note() { echo "$SCRIPT [$CASE]: $*" >&2; }

ctl() { "$INSPECTORCTL" --no-color --timeout "$STEP_TIMEOUT" "$@"; }

# Waits until FILE is not empty; WHAT names what should have written it.
wait_for_file() {
  local file="$1" what="$2" deadline=$((SECONDS + STEP_TIMEOUT))
  until [ -s "$file" ]; do
    [ "$SECONDS" -lt "$deadline" ] || die "$what did not start within ${STEP_TIMEOUT} s"
    sleep 0.05
  done
}

# Waits until `grep -Eq PATTERN FILE` holds.
wait_for_line() {
  local file="$1" pattern="$2" deadline=$((SECONDS + STEP_TIMEOUT))
  until grep -Eq -- "$pattern" "$file" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "no /$pattern/ in $(basename "$file"): $(cat "$file")"
    sleep 0.05
  done
}

# Fails unless each variable named is set (CTest sets them) and $NODE22
# (the Node the 2.x SDK needs) is there.
require_env() {
  local v
  for v in "$@"; do
    [ -n "${!v:-}" ] || die "\$$v is not set (CTest sets it)"
  done
  [ -x "$NODE22" ] || die "$NODE22 is missing; run tools/npm/install.sh"
}

# What a test starts in the background, each stopped by `cleanup`.
DAEMON_PID=""
HTTP_PID=""
CALL_PID=""
WATCH_PID=""
# A file whose tail `cleanup` shows too when the test fails.
FAILURE_LOG=""

# Creates the test's directory $WORK (named after $1) and arranges for
# `cleanup` to run on exit.
start_work() {
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
  trap cleanup EXIT
}

# Stops the call, the watch, the HTTP fixture and the daemon; on failure
# shows the end of the daemon's log (and of $FAILURE_LOG); removes $WORK.
cleanup() {
  local status=$?
  trap - EXIT
  set +e
  local pid
  for pid in $CALL_PID $WATCH_PID $HTTP_PID; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ -n "$DAEMON_PID" ]; then
    if [ "$status" -ne 0 ]; then
      echo "---- inspectord log (last 40 lines) ----" >&2
      tail -n 40 "$WORK/inspectord.log" >&2 || true
      if [ -n "$FAILURE_LOG" ]; then
        echo "---- $(basename "$FAILURE_LOG") (last 20 lines) ----" >&2
        tail -n 20 "$FAILURE_LOG" >&2 || true
      fi
    fi
    kill -TERM "$DAEMON_PID" 2>/dev/null || true
    wait "$DAEMON_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
  exit "$status"
}

# Prints the value at the dotted path $1 of the JSON on stdin ("" if none).
json_get() {
  python3 -c '
import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1].split("."):
    value = value.get(key) if isinstance(value, dict) else None
print("" if value is None else (value if isinstance(value, str) else json.dumps(value)))
' "$1"
}

# Starts inspectord on 127.0.0.1:0 in $WORK with debug logs and the flags
# given, and points `ctl` at it.
start_daemon() {
  "$INSPECTORD" --listen 127.0.0.1:0 --db "$WORK/inspector.db" \
    --token-file "$WORK/token" --ready-file "$WORK/address" \
    --log-level debug "$@" </dev/null >"$WORK/inspectord.log" 2>&1 &
  DAEMON_PID=$!
  wait_for_file "$WORK/address" inspectord
  export INSPECTOR_ADDR="$(head -n 1 "$WORK/address")"
  export INSPECTOR_TOKEN_FILE="$WORK/token"
  unset INSPECTOR_TOKEN
}

# Starts tools/modern-fixture over Streamable HTTP with the flags given (in
# this shell, so that cleanup can stop it) and sets FIXTURE_URL.
FIXTURE_URL=""
start_http_fixture() {
  "$NODE22" "$ROOT/tools/modern-fixture/server.mjs" --http "$@" \
    >"$WORK/fixture.out" 2>"$WORK/fixture.err" &
  HTTP_PID=$!
  local deadline=$((SECONDS + STEP_TIMEOUT))
  until grep -q '^listening on ' "$WORK/fixture.out" 2>/dev/null; do
    kill -0 "$HTTP_PID" 2>/dev/null || die "the fixture exited: $(cat "$WORK/fixture.err")"
    [ "$SECONDS" -lt "$deadline" ] || die "the HTTP fixture did not listen"
    sleep 0.05
  done
  FIXTURE_URL="$(sed -n 's/^listening on //p' "$WORK/fixture.out" | head -n 1)"
}

# Registers tools/modern-fixture as "fixture" with --protocol $2 and
# connects it: over stdio, or ($1 = http) started here over Streamable
# HTTP. The rest goes to the fixture.
add_modern_fixture() {
  local transport="$1" protocol="$2"
  shift 2
  case "$transport" in
    stdio)
      ctl servers add fixture --protocol "$protocol" -- "$NODE22" \
        "$ROOT/tools/modern-fixture/server.mjs" "$@" >&2
      ;;
    http)
      start_http_fixture "$@"
      ctl servers add fixture --url "$FIXTURE_URL" --transport streamableHttp \
        --protocol "$protocol" >&2
      ;;
    *) die "unknown transport $transport" ;;
  esac
  ctl connect fixture >&2 || die "connect failed"
}
