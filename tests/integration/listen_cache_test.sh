#!/usr/bin/env bash
# End to end: inspectord's daemon session with an MCP 2026-07-28 server
# (tools/modern-fixture) keeps a subscriptions/listen stream open; its
# list_changed and resources/updated notifications reach Watch as in the
# handshake era, `inspectorctl subscribe/unsubscribe` change the stream's
# filter, and the typed list RPCs serve from the daemon's cache while the
# server's ttlMs says a list is fresh (--refresh asks anyway; list_changed
# invalidates). Driven through inspectorctl only, against the real daemon
# and the real fixture. One case per run:
#
#   listen_cache_test.sh stdio|http
#
# Environment: INSPECTORD, INSPECTORCTL (CTest sets them), NODE22 (the Node
# the 2.x SDK needs).
set -euo pipefail

readonly SCRIPT="listen_cache_test.sh"
readonly HERE="$(cd "$(dirname "$0")" && pwd)"
readonly ROOT="$(cd "$HERE/../.." && pwd)"
CASE="${1:?usage: $SCRIPT stdio|http}"
STEP_TIMEOUT=30
# die, note, ctl, wait_for_file, wait_for_line
. "$HERE/e2e_helpers.sh"

for v in INSPECTORD INSPECTORCTL NODE22; do
  [ -n "${!v:-}" ] || die "\$$v is not set (CTest sets it)"
done
[ -x "$NODE22" ] || die "$NODE22 is missing; run tools/npm/install.sh"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/listen-cache.XXXXXX")"
DAEMON_PID=""
HTTP_PID=""
WATCH_PID=""
cleanup() {
  local status=$?
  trap - EXIT
  set +e
  local pid
  for pid in $WATCH_PID $HTTP_PID; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ -n "$DAEMON_PID" ]; then
    if [ "$status" -ne 0 ]; then
      echo "---- inspectord log (last 40 lines) ----" >&2
      tail -n 40 "$WORK/inspectord.log" >&2 || true
      echo "---- watch (last 20 lines) ----" >&2
      tail -n 20 "$WORK/watch.out" >&2 || true
    fi
    kill -TERM "$DAEMON_PID" 2>/dev/null || true
    wait "$DAEMON_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT

json_get() {
  python3 -c '
import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1].split("."):
    value = value.get(key) if isinstance(value, dict) else None
print("" if value is None else (value if isinstance(value, str) else json.dumps(value)))
' "$1"
}

# Waits until the watch output has more than $1 lines matching $2.
wait_for_events() {
  local count="$1" pattern="$2" what="$3" deadline=$((SECONDS + STEP_TIMEOUT))
  until [ "$(grep -c -- "$pattern" "$WORK/watch.out" || true)" -gt "$count" ]; do
    [ "$SECONDS" -lt "$deadline" ] || die "Watch did not show $what"
    sleep 0.05
  done
}
count_events() { grep -c -- "$1" "$WORK/watch.out" || true; }

# Lists `tools` as JSON; prints "cache" or "server" then the tool names.
tools_from() {
  ctl -o json tools fixture "$@" | python3 -c '
import json, sys
data = json.load(sys.stdin)
print("cache" if data.get("fromCache") else "server",
      " ".join(sorted(t["name"] for t in data.get("tools", []))))'
}

"$INSPECTORD" --listen 127.0.0.1:0 --db "$WORK/inspector.db" \
  --token-file "$WORK/token" --ready-file "$WORK/address" --http 127.0.0.1:0 \
  --log-level debug </dev/null >"$WORK/inspectord.log" 2>&1 &
DAEMON_PID=$!
wait_for_file "$WORK/address" inspectord
REST="$(sed -n 's/.* and REST on \([^ ]*:[0-9]*\) .*/\1/p' "$WORK/inspectord.log" | head -n 1)"
[ -n "$REST" ] || die "the daemon's log does not say where REST is served"
export INSPECTOR_ADDR="$(head -n 1 "$WORK/address")"
export INSPECTOR_TOKEN_FILE="$WORK/token"
unset INSPECTOR_TOKEN

FIXTURE_ARGS=(--ttl-ms 600000 --max-seconds 300)
case "$CASE" in
  stdio)
    ctl servers add fixture --protocol modern -- "$NODE22" \
      "$ROOT/tools/modern-fixture/server.mjs" "${FIXTURE_ARGS[@]}" >&2
    ;;
  http)
    "$NODE22" "$ROOT/tools/modern-fixture/server.mjs" --http "${FIXTURE_ARGS[@]}" \
      >"$WORK/fixture.out" 2>"$WORK/fixture.err" &
    HTTP_PID=$!
    deadline=$((SECONDS + STEP_TIMEOUT))
    until grep -q '^listening on ' "$WORK/fixture.out" 2>/dev/null; do
      kill -0 "$HTTP_PID" 2>/dev/null || die "the fixture exited: $(cat "$WORK/fixture.err")"
      [ "$SECONDS" -lt "$deadline" ] || die "the HTTP fixture did not listen"
      sleep 0.05
    done
    url="$(sed -n 's/^listening on //p' "$WORK/fixture.out" | head -n 1)"
    ctl servers add fixture --url "$url" --transport streamableHttp --protocol modern >&2
    ;;
  *) die "unknown case" ;;
esac
ctl connect fixture >&2 || die "connect failed"

# Watch, and make sure it is live: a call it sees.
ctl watch --server fixture --json >"$WORK/watch.out" 2>"$WORK/watch.err" &
WATCH_PID=$!
deadline=$((SECONDS + STEP_TIMEOUT))
n=0
until grep -q 'watch-ready' "$WORK/watch.out" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || die "watch saw nothing: $(cat "$WORK/watch.err")"
  n=$((n + 1))
  ctl call fixture echo "text=watch-ready-$n" >/dev/null || die "echo failed"
done

# --- the list cache -------------------------------------------------------
first="$(tools_from)"
[ "${first%% *}" = server ] || die "the first tools list came from '${first%% *}'"
second="$(tools_from)"
[ "$second" = "cache ${first#* }" ] || die "the second tools list is '$second', expected it from the cache"
human="$(ctl tools fixture)"
grep -q '^from cache' <<<"$human" || die "inspectorctl tools does not say it came from the cache: $human"
refreshed="$(tools_from --refresh)"
[ "$refreshed" = "server ${first#* }" ] || die "tools --refresh gave '$refreshed'"
# Private lists are cached too (for the same caller).
ctl -o json resources fixture | grep -q fixture://config || die "resources lists no fixture://config"
ctl -o json resources fixture | grep -q '"fromCache": *true' ||
  die "the second resources list did not come from the cache"
# REST: the same cache; ?refresh=true asks the server.
rest_source() {
  curl -sf -H "Authorization: Bearer $(cat "$WORK/token")" \
    "http://$REST/api/servers/fixture/tools$1" |
    python3 -c 'import json, sys; print("cache" if json.load(sys.stdin).get("fromCache") else "server")'
}
[ "$(rest_source "")" = cache ] || die "GET .../tools did not come from the cache"
[ "$(rest_source "?refresh=true")" = server ] || die "GET .../tools?refresh=true came from the cache"
note "cache: $first / $second / $refreshed"

# --- list_changed reaches Watch and invalidates the cache -------------------
before="$(count_events '"listChanged"')"
ctl call fixture add_tool >&2 || die "add_tool failed"
wait_for_events "$before" '"list": *"tools"' "tools list_changed"
after_change="$(tools_from)"
[ "${after_change%% *}" = server ] || die "after list_changed the tools came from the cache: $after_change"
grep -q 'extra_1' <<<"$after_change" || die "the new tool is missing: $after_change"
[ "$(tools_from)" = "cache ${after_change#* }" ] || die "the new list is not cached"

# --- subscribe / resources/updated / unsubscribe ----------------------------
ctl subscribe fixture fixture://config >&2 || die "subscribe failed"
before="$(count_events '"resourceUpdated"')"
ctl call fixture touch_config >&2 || die "touch_config failed"
wait_for_events "$before" '"uri": *"fixture://config"' "resources/updated for fixture://config"
grep '"resourceUpdated"' "$WORK/watch.out" | grep -q '"serverId"' || die "the update names no server"
ctl unsubscribe fixture fixture://config >&2 || die "unsubscribe failed"
updates="$(count_events '"resourceUpdated"')"
ctl call fixture touch_config >&2 || die "touch_config failed"
# The stream keeps its order: once the next list_changed is seen, an update
# sent before it would have been seen too.
before="$(count_events '"list": *"tools"')"
ctl call fixture add_tool >&2 || die "add_tool failed"
wait_for_events "$before" '"list": *"tools"' "the second tools list_changed"
[ "$(count_events '"resourceUpdated"')" = "$updates" ] ||
  die "an update arrived after unsubscribing"

# History has the listen stream and the notifications it carried.
ctl -o json history --server fixture --method subscriptions/listen --limit 20 |
  grep -q 'subscriptions/listen' || die "history has no subscriptions/listen"
note "OK"
