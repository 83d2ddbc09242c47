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

CASE="${1:?usage: $(basename "$0") stdio|http}"
# SCRIPT, HERE, ROOT, STEP_TIMEOUT (30 s); die, note, ctl, wait_for_*,
# require_env, start_work, json_get, start_daemon, add_modern_fixture
. "$(dirname "$0")/e2e_helpers.sh"

require_env INSPECTORD INSPECTORCTL NODE22
start_work listen-cache
FAILURE_LOG="$WORK/watch.out"

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

start_daemon --http 127.0.0.1:0
REST="$(sed -n 's/.* and REST on \([^ ]*:[0-9]*\) .*/\1/p' "$WORK/inspectord.log" | head -n 1)"
[ -n "$REST" ] || die "the daemon's log does not say where REST is served"

add_modern_fixture "$CASE" modern --ttl-ms 600000 --max-seconds 300

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
