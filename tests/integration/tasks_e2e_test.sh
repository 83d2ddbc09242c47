#!/usr/bin/env bash
# End to end: the tasks extension (io.modelcontextprotocol/tasks) and the era
# and input round recorded with each message, against the real daemon and
# tools/modern-fixture (@modelcontextprotocol/server 2.x), driven through
# inspectorctl only. One case per run:
#
#   tasks_e2e_test.sh stdio|http
#
# A task-returning tool's call returns its final result; its status changes
# reach `inspectorctl watch --kind task`; its input request is a pending
# item answered with `inspectorctl respond`; a call whose task never ends
# is cancelled with `inspectorctl cancel --entry` (tasks/cancel goes out).
# A multi round-trip request's rounds are recorded with era and round, and
# the SQLite `requests` view ties every round to round 0.
#
# Environment: INSPECTORD, INSPECTORCTL (CTest sets them), NODE22 (the Node
# the 2.x SDK needs).
set -euo pipefail

CASE="${1:?usage: $(basename "$0") stdio|http}"
# SCRIPT, HERE, ROOT, STEP_TIMEOUT (30 s); die, note, ctl, wait_for_*,
# require_env, start_work, json_get, start_daemon, add_modern_fixture
. "$(dirname "$0")/e2e_helpers.sh"

require_env INSPECTORD INSPECTORCTL NODE22
start_work tasks-e2e

start_daemon
add_modern_fixture "$CASE" modern --max-seconds 300

# Watch task events for the whole run, as NDJSON.
"$INSPECTORCTL" --no-color watch --kind task --json >"$WORK/watch.ndjson" 2>"$WORK/watch.err" &
WATCH_PID=$!
# The watch is live once it shows an event: run instant tasks until one
# shows, then the one under test.
deadline=$((SECONDS + STEP_TIMEOUT))
until grep -q 'job done after 0 steps' "$WORK/watch.ndjson" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || die "watch showed no task event: $(cat "$WORK/watch.err")"
  out="$(ctl call fixture slow_job steps=0 2>&1)" || die "slow_job failed: $out"
  [ "$out" = "job done after 0 steps" ] || die "slow_job printed '$out'"
done
out="$(ctl call fixture slow_job steps=3 2>&1)" || die "slow_job failed: $out"
[ "$out" = "job done after 3 steps" ] || die "slow_job printed '$out'"
wait_for_line "$WORK/watch.ndjson" 'job done after 3 steps'
statuses="$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if not line: continue
    task = json.loads(line).get("task")
    if task: print(task["status"] + ": " + task.get("statusMessage", ""))
' "$WORK/watch.ndjson")"
note "slow_job in watch: $(tr '\n' '|' <<<"$statuses")"
for want in "working: started" "working: step 1 of 3" "working: step 3 of 3" \
  "completed: job done after 3 steps"; do
  grep -qxF "$want" <<<"$statuses" || die "watch did not show '$want': $statuses"
done

# Input through a pending item, answered with inspectorctl respond.
ctl call fixture approve_job action=deploy >"$WORK/call.out" 2>&1 &
CALL_PID=$!
deadline=$((SECONDS + STEP_TIMEOUT))
id=""
while [ -z "$id" ]; do
  [ "$SECONDS" -lt "$deadline" ] || die "approve_job's input request never became a pending item"
  kill -0 "$CALL_PID" 2>/dev/null || die "approve_job ended early: $(cat "$WORK/call.out")"
  id="$(ctl -o json pending | python3 -c '
import json, sys
data = json.load(sys.stdin) or {}
for item in data.get("pending", []):
    if "Approve deploy" in json.dumps(item):
        print(item["id"]); break')"
  [ -n "$id" ] || sleep 0.1
done
wait_for_line "$WORK/watch.ndjson" '"status": ?"input_required"'
ctl respond "$id" --json '{"action":"accept","content":{"name":"ada","ok":true}}' >&2 ||
  die "respond failed"
status=0
wait "$CALL_PID" || status=$?
CALL_PID=""
out="$(cat "$WORK/call.out")"
[ "$status" -eq 0 ] || die "approve_job failed: $out"
[ "$out" = "approved deploy for ada" ] || die "approve_job printed '$out'"
grep -q '"inputKeys": \?\["approve"\]' "$WORK/watch.ndjson" ||
  die "the input_required event does not name its input request: $(cat "$WORK/watch.ndjson")"
# History is committed within ~50 ms of the answer: wait for the row.
updates_of() {
  ctl -o json history --server fixture --method tasks/update | python3 -c '
import json, sys
entries = json.load(sys.stdin).get("entries", [])
print(len(entries), " ".join(e.get("target", "") for e in entries))'
}
deadline=$((SECONDS + STEP_TIMEOUT))
until [ "$(updates_of | cut -d" " -f1)" -ge 1 ]; do
  [ "$SECONDS" -lt "$deadline" ] || die "no tasks/update request in history"
  sleep 0.05
done
read -r updates targets <<<"$(updates_of)"
[ "$updates" -eq 1 ] || die "$updates tasks/update requests in history, expected 1"
case "$targets" in
  task-*) ;;
  *) die "the tasks/update in history does not name its task: '$targets'" ;;
esac

# A task that never ends: the call is cancelled by its queue entry.
ctl call fixture endless_job >"$WORK/call.out" 2>&1 &
CALL_PID=$!
deadline=$((SECONDS + STEP_TIMEOUT))
entry=""
while [ -z "$entry" ]; do
  [ "$SECONDS" -lt "$deadline" ] || die "endless_job never showed in inflight"
  entry="$(ctl -o json inflight fixture | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("requests", []):
    if r.get("target") == "endless_job": print(r["id"]); break')"
  [ -n "$entry" ] || sleep 0.1
done
wait_for_line "$WORK/watch.ndjson" 'still working'
ctl cancel fixture --entry "$entry" >&2 || die "cancel failed"
status=0
wait "$CALL_PID" || status=$?
CALL_PID=""
out="$(cat "$WORK/call.out")"
[ "$status" -ne 0 ] || die "the cancelled endless_job succeeded: $out"
grep -qi 'cancel' <<<"$out" || die "the cancelled endless_job said '$out'"
deadline=$((SECONDS + STEP_TIMEOUT))
until ctl -o json history --server fixture --method tasks/cancel | grep -Eq '"success": ?true'; do
  [ "$SECONDS" -lt "$deadline" ] || die "no answered tasks/cancel in history"
  sleep 0.1
done

# Era and input round: confirm takes two rounds (its elicitation answered).
ctl call fixture confirm action=ship >"$WORK/call.out" 2>&1 &
CALL_PID=$!
deadline=$((SECONDS + STEP_TIMEOUT))
id=""
while [ -z "$id" ]; do
  [ "$SECONDS" -lt "$deadline" ] || die "confirm's elicitation never became a pending item"
  id="$(ctl -o json pending | python3 -c '
import json, sys
data = json.load(sys.stdin) or {}
for item in data.get("pending", []):
    if "Confirm ship" in json.dumps(item) and item.get("status", "PENDING") in ("PENDING", "PENDING_STATUS_PENDING"):
        print(item["id"]); break')"
  [ -n "$id" ] || sleep 0.1
done
ctl respond "$id" --json '{"action":"accept","content":{"name":"bo"}}' >&2 || die "respond failed"
wait "$CALL_PID" || die "confirm failed: $(cat "$WORK/call.out")"
CALL_PID=""
grep -qx 'confirmed ship for bo' "$WORK/call.out" || die "confirm printed '$(cat "$WORK/call.out")'"
ctl -o json history --server fixture --method tools/call --limit 100 >"$WORK/history.json"
python3 - "$WORK/history.json" <<'PY' || die "history does not pair confirm's rounds"
import json, sys
rows = [e for e in json.load(open(sys.argv[1]))["entries"]
        if '"ship"' in json.dumps(e.get("params", {}))]
rows.sort(key=lambda e: int(e["messageId"]))
assert len(rows) == 2, rows
first, retry = rows
assert first.get("era") == "modern" and retry.get("era") == "modern", rows
assert first.get("inputRound", 0) == 0 and retry.get("inputRound") == 1, rows
assert first["firstRoundId"] == first["messageId"], rows
assert retry["firstRoundId"] == first["messageId"], rows
PY
table="$(ctl history --server fixture --method tools/call --limit 100)"
grep -q 'modern round 1' <<<"$table" || die "inspectorctl history shows no round: $table"
# The view itself, read with SQLite.
python3 - "$WORK/inspector.db" <<'PY' || die "the requests view does not pair confirm's rounds"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA user_version").fetchone()[0] >= 9
rows = db.execute("""SELECT id, era, input_round, first_round_id, success
                     FROM requests WHERE target = 'confirm'
                     AND request_raw LIKE '%"ship"%' ORDER BY id""").fetchall()
assert len(rows) == 2, rows
(r0, e0, n0, f0, s0), (r1, e1, n1, f1, s1) = rows
assert (e0, n0, f0) == ("modern", 0, r0), rows
assert (e1, n1, f1) == ("modern", 1, r0), rows
assert s1 == 1, rows
# Answers carry their request's round too.
answers = db.execute("""SELECT input_round, first_round_id FROM messages
                        WHERE correlated_id = ? AND kind = 'response'""", (r1,)).fetchall()
assert answers == [(1, r0)], answers
PY
note "OK"
