#!/usr/bin/env bash
# End to end: inspectord speaking both protocol eras to real servers, driven
# through inspectorctl only. One case per run:
#
#   protocol_era_test.sh CASE
#
#   modern-stdio-auto, modern-stdio-modern, modern-http-auto,
#   modern-http-modern   tools/modern-fixture (@modelcontextprotocol/server
#                        2.x) with the protocol setting auto or modern: the
#                        era is modern; a tool's elicitation (a multi
#                        round-trip request) is a pending item answered with
#                        `inspectorctl respond`, and the call returns the
#                        final result; a requestState-only round, an intact
#                        requestState, an endless input_required loop
#                        (bounded error), and rpc --pass-input-required
#   modern-stdio-legacy, modern-http-legacy
#                        the same server with protocol legacy: the handshake
#   everything-auto      server-everything (handshake era) in auto: the probe
#                        falls back to initialize, with a log line
#   everything-modern    server-everything with protocol modern: the
#                        connection fails saying why
#   garbage-result, garbage-text, garbage-silent
#                        a server answering server/discover with a result
#                        that is no DiscoverResult, with text that is not
#                        JSON, or not at all: auto falls back and logs it
#
# Environment: INSPECTORD, INSPECTORCTL (CTest sets them), NODE22 (the Node
# the 2.x SDK needs), NODE_MODULES (tools/npm/node_modules).
set -euo pipefail

CASE="${1:?usage: $(basename "$0") CASE}"
# SCRIPT, HERE, ROOT, STEP_TIMEOUT (30 s); die, note, ctl, wait_for_*,
# require_env, start_work, json_get, start_daemon, add_modern_fixture
. "$(dirname "$0")/e2e_helpers.sh"

require_env INSPECTORD INSPECTORCTL NODE22 NODE_MODULES
start_work protocol-era

# Fails unless `status SERVER` reports protocol era $2.
expect_era() {
  local era
  era="$(ctl -o json status "$1" | json_get protocolEra)"
  [ "$era" = "$2" ] || die "protocol era of $1 is '${era:-none}', expected '$2'"
}

expect_call() {
  local expect="$1" out
  shift
  out="$(ctl call "$@" 2>&1)" || die "inspectorctl call $* failed: $out"
  grep -Eq -- "$expect" <<<"$out" || die "inspectorctl call $* printed '$out', expected /$expect/"
  note "call $2 -> $out"
}

# Runs `inspectorctl call ARGS` in the background and answers each pending
# elicitation of it with $ANSWER until the call ends; prints the call's
# output, and the number of items answered on fd 3.
ANSWERED=0
call_answering() {
  local answer="$1" out_file="$WORK/call.out"
  shift
  ANSWERED=0
  ctl call "$@" >"$out_file" 2>&1 &
  CALL_PID=$!
  local deadline=$((SECONDS + 120)) seen=" " ids id
  while kill -0 "$CALL_PID" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "inspectorctl call $* did not finish"
    ids="$(ctl -o json pending | python3 -c '
import json, sys
data = json.load(sys.stdin) or {}
for item in data.get("pending", []) if isinstance(data, dict) else data:
    if item.get("status", "PENDING") in ("PENDING", "PENDING_STATUS_PENDING"):
        print(item["id"])')" || die "inspectorctl pending failed"
    for id in $ids; do
      case "$seen" in *" $id "*) continue ;; esac
      seen+="$id "
      ctl respond "$id" --json "$answer" >&2 || true
      ANSWERED=$((ANSWERED + 1))
    done
    sleep 0.1
  done
  local status=0
  wait "$CALL_PID" || status=$?
  CALL_PID=""
  CALL_STATUS=$status
  CALL_OUTPUT="$(cat "$out_file")"
}

modern_checks() {
  local server="$1"
  expect_era "$server" modern
  expect_call '^hello modern$' "$server" echo 'text=hello modern'
  # The elicitation arrives as a pending item; the retry carries the answer.
  call_answering '{"action":"accept","content":{"name":"ada","ok":true}}' \
    "$server" confirm action=deploy
  [ "$CALL_STATUS" -eq 0 ] || die "confirm failed: $CALL_OUTPUT"
  grep -q '^confirmed deploy for ada$' <<<"$CALL_OUTPUT" ||
    die "confirm printed '$CALL_OUTPUT'"
  [ "$ANSWERED" -eq 1 ] || die "confirm asked $ANSWERED times, expected once"
  # Each round is its own request in the history.
  local rounds
  rounds="$(ctl -o json history --server "$server" --method tools/call --limit 50 |
    python3 -c '
import json, sys
data = json.load(sys.stdin)
rows = data.get("entries", []) if isinstance(data, dict) else data
print(sum(1 for r in rows if "confirm" in json.dumps(r)))')"
  [ "$rounds" -ge 2 ] || die "history shows $rounds tools/call rows for confirm, expected 2 rounds"
  # Declining is an answer too.
  call_answering '{"action":"decline"}' "$server" confirm action=drop
  grep -q '^declined drop$' <<<"$CALL_OUTPUT" || die "declined confirm printed '$CALL_OUTPUT'"
  # requestState alone: retried at once, echoed exactly.
  expect_call '^state came back$' "$server" state_only
  expect_call '^state intact$' "$server" tamper_check
  # A server that never stops asking: a clear error after 10 rounds.
  call_answering '{"action":"accept","content":{"more":"x"}}' "$server" nag
  [ "$CALL_STATUS" -ne 0 ] || die "nag succeeded: $CALL_OUTPUT"
  grep -q 'after 10 rounds' <<<"$CALL_OUTPUT" || die "nag failed with '$CALL_OUTPUT'"
  [ "$ANSWERED" -eq 10 ] || die "nag was answered $ANSWERED times, expected 10"
  # Raw forwarding can hand back input_required untouched.
  local raw
  raw="$(ctl -o json rpc "$server" tools/call --pass-input-required \
    --params '{"name":"confirm","arguments":{"action":"peek"}}')" ||
    die "rpc --pass-input-required failed"
  grep -q '"input_required"' <<<"$raw" || die "rpc --pass-input-required printed '$raw'"
  grep -q 'modern-fixture-state-v1:peek' <<<"$raw" || die "requestState missing: '$raw'"
}

start_daemon
case "$CASE" in
  modern-stdio-auto | modern-stdio-modern | modern-stdio-legacy | \
  modern-http-auto | modern-http-modern | modern-http-legacy)
    mode="${CASE##*-}"
    transport="${CASE#modern-}"
    add_modern_fixture "${transport%-*}" "$mode" --max-seconds 300
    if [ "$mode" = legacy ]; then
      expect_era fixture legacy
      expect_call '^hello legacy$' fixture echo 'text=hello legacy'
    else
      modern_checks fixture
    fi
    ;;
  everything-auto)
    ctl servers add everything -- node \
      "$NODE_MODULES/@modelcontextprotocol/server-everything/dist/index.js" stdio >&2
    ctl connect everything >&2 || die "connect failed"
    expect_era everything legacy
    note="$(ctl -o json status everything | json_get protocolNote)"
    grep -q 'fell back to the initialize handshake' <<<"$note" ||
      die "the status does not say the probe fell back: '$note'"
    expect_call 'Echo: hi' everything echo message=hi
    logs="$(ctl logs --limit 200 2>&1)" || die "inspectorctl logs failed"
    grep -q 'fell back to the initialize handshake' <<<"$logs" ||
      die "no log line about the fallback"
    ;;
  everything-modern)
    ctl servers add everything --protocol modern -- node \
      "$NODE_MODULES/@modelcontextprotocol/server-everything/dist/index.js" stdio >&2
    if out="$(ctl connect everything 2>&1)"; then
      die "connecting in modern mode to a handshake-era server succeeded: $out"
    fi
    grep -q 'is not an MCP 2026-07-28 server' <<<"$out" || die "connect failed with '$out'"
    ;;
  garbage-result | garbage-text | garbage-silent)
    ctl servers add garbage --connection-timeout 9000 -- python3 \
      "$HERE/garbage_discover_server.py" "${CASE#garbage-}" >&2
    ctl connect garbage >&2 || die "connect failed"
    expect_era garbage legacy
    expect_call '^fine$' garbage echo text=fine
    logs="$(ctl logs --limit 200 2>&1)" || die "inspectorctl logs failed"
    grep -q 'fell back to the initialize handshake' <<<"$logs" ||
      die "no log line about the fallback"
    ;;
  *)
    die "unknown case"
    ;;
esac
note "OK"
