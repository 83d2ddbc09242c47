#!/usr/bin/env bash
# The MCP client that @modelcontextprotocol/conformance's client scenarios
# test, built on inspectord and inspectorctl.
#
#   MCP_CONFORMANCE_SCENARIO=NAME INSPECTORD=... INSPECTORCTL=... client.sh URL
#
# The conformance runner starts a test server for the scenario, then runs this
# command with the server's URL as the last argument and the scenario's name
# in MCP_CONFORMANCE_SCENARIO. This script registers the URL as a server of
# an inspectord, connects to it and does what the scenario expects, every
# step through inspectorctl, so the checks grade the daemon's MCP client.
#
# The daemon: by default a new inspectord of its own (a temporary directory
# holding its database and token, listening on 127.0.0.1:0), stopped when the
# script ends however it ends. With CONFORMANCE_INSPECTOR_ADDR set, the daemon
# at that address is used instead (the token as inspectorctl finds it:
# $INSPECTOR_TOKEN, $INSPECTOR_TOKEN_FILE, ...), and only the server this
# script registered is removed at the end.
#
# Environment:
#   INSPECTORD, INSPECTORCTL    the binaries (CTest sets both)
#   MCP_CONFORMANCE_SCENARIO    set by the conformance runner
#   CONFORMANCE_INSPECTOR_ADDR  reuse this daemon instead of starting one
#   CONFORMANCE_STEP_TIMEOUT    seconds for one step (default 20)
#
# Exit status: 0 when every step did what it should; otherwise 1 with an
# "client.sh: ..." line on stderr saying which step failed (the runner shows
# the client's stderr, and the daemon's log is printed after it).
set -euo pipefail

readonly SCRIPT="client.sh"
STEP_TIMEOUT="${CONFORMANCE_STEP_TIMEOUT:-20}"

die() {
  echo "$SCRIPT: $*" >&2
  exit 1
}

note() {
  echo "$SCRIPT: $*" >&2
}

[ $# -ge 1 ] || die "usage: MCP_CONFORMANCE_SCENARIO=NAME $SCRIPT SERVER_URL"
# The runner appends the URL after whatever the command line already holds.
URL="${!#}"
SCENARIO="${MCP_CONFORMANCE_SCENARIO:-}"
[ -n "$SCENARIO" ] || die "MCP_CONFORMANCE_SCENARIO is not set (the conformance runner sets it)"
if [ -z "${INSPECTORCTL:-}" ] || [ ! -x "$INSPECTORCTL" ]; then
  die "INSPECTORCTL must name the inspectorctl binary (got '${INSPECTORCTL:-}')"
fi

WORK="" # temporary directory: our daemon's files, a background call's output
DAEMON_PID=""
CALL_PID="" # an `inspectorctl call` running in the background
WATCH_PID="" # an `inspectorctl watch` recording the OAuth events
SERVER_NAME=""
SERVER_ID=""

# Stops what this script started: a background call, the server registered
# on a reused daemon, our own daemon (SIGTERM, then SIGKILL if it has not
# exited after 10 s) and its directory. Runs on every exit.
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [ -n "$CALL_PID" ]; then
    kill "$CALL_PID" 2>/dev/null || true
    wait "$CALL_PID" 2>/dev/null || true
  fi
  stop_watch
  if [ -z "$DAEMON_PID" ] && [ -n "$SERVER_NAME" ]; then
    "$INSPECTORCTL" --timeout 10 servers rm --force "$SERVER_NAME" >/dev/null 2>&1 || true
  fi
  if [ -n "$DAEMON_PID" ]; then
    if [ "$status" -ne 0 ] && [ -f "$WORK/inspectord.log" ]; then
      echo "---- inspectord log (last 60 lines) ----" >&2
      tail -n 60 "$WORK/inspectord.log" >&2 || true
    fi
    kill -TERM "$DAEMON_PID" 2>/dev/null || true
    local waited=0
    while kill -0 "$DAEMON_PID" 2>/dev/null && [ "$waited" -lt 100 ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    if kill -0 "$DAEMON_PID" 2>/dev/null; then
      echo "$SCRIPT: inspectord did not stop within 10 s of SIGTERM; killing it" >&2
      kill -KILL "$DAEMON_PID" 2>/dev/null || true
      status=1
    fi
    wait "$DAEMON_PID" 2>/dev/null || true
  fi
  if [ -n "$WORK" ]; then rm -rf "$WORK"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

ctl() {
  "$INSPECTORCTL" --no-color --timeout "$STEP_TIMEOUT" "$@"
}

# Reads one JSON document on stdin and prints the value at a dotted path
# (`id`, `a.b`), as JSON unless it is a string; nothing if absent.
json_get() {
  python3 -c '
import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1].split(".") if sys.argv[1] else []:
    value = value.get(key) if isinstance(value, dict) else None
if value is None:
    sys.exit(0)
print(value if isinstance(value, str) else json.dumps(value))
' "$1"
}

start_daemon() {
  if [ -z "${INSPECTORD:-}" ] || [ ! -x "$INSPECTORD" ]; then
    die "INSPECTORD must name the inspectord binary (got '${INSPECTORD:-}')"
  fi
  "$INSPECTORD" --listen 127.0.0.1:0 --db "$WORK/inspector.db" \
    --token-file "$WORK/token" --ready-file "$WORK/address" \
    --log-level debug </dev/null >"$WORK/inspectord.log" 2>&1 &
  DAEMON_PID=$!
  # The ready file is written (atomically) once the daemon serves.
  local deadline=$((SECONDS + STEP_TIMEOUT))
  while [ ! -s "$WORK/address" ]; do
    kill -0 "$DAEMON_PID" 2>/dev/null || {
      wait "$DAEMON_PID" 2>/dev/null || true
      DAEMON_PID=""
      cat "$WORK/inspectord.log" >&2
      die "inspectord exited before serving"
    }
    [ "$SECONDS" -lt "$deadline" ] || die "inspectord did not serve within ${STEP_TIMEOUT} s"
    sleep 0.05
  done
  INSPECTOR_ADDR="$(head -n 1 "$WORK/address")"
  export INSPECTOR_ADDR
  export INSPECTOR_TOKEN_FILE="$WORK/token"
  unset INSPECTOR_TOKEN # it would win over the token file
  note "inspectord $DAEMON_PID serving on $INSPECTOR_ADDR"
}

register_server() {
  local transport="$1"
  # Server names are unique per daemon; a reused daemon may hold others.
  SERVER_NAME="conformance-${SCENARIO//\//-}-$$"
  ctl servers add "$SERVER_NAME" --url "$URL" --transport "$transport" >&2 ||
    die "inspectorctl servers add $SERVER_NAME --url $URL failed"
  SERVER_ID="$(ctl -o json servers get "$SERVER_NAME" | json_get id)"
  [ -n "$SERVER_ID" ] || die "could not read the id of server $SERVER_NAME"
}

connect() {
  ctl connect "$SERVER_NAME" >&2 || die "inspectorctl connect $SERVER_NAME failed"
}

list_tools() {
  ctl tools "$SERVER_NAME" --all >&2 || die "inspectorctl tools $SERVER_NAME failed"
}

# Runs `inspectorctl call SERVER TOOL ARGS...` and prints the tool's output;
# fails unless it succeeded and printed text matching `expect` (a grep -E
# pattern).
call_tool() {
  local expect="$1"
  shift
  local out
  out="$(ctl call "$SERVER_NAME" "$@")" || {
    printf '%s\n' "$out" >&2
    die "inspectorctl call $SERVER_NAME $* failed"
  }
  printf '%s\n' "$out"
  grep -Eq -- "$expect" <<<"$out" ||
    die "inspectorctl call $SERVER_NAME $* printed '$out', expected /$expect/"
}

# The pending server-to-client requests of our server, one line each:
# ID<TAB>METHOD<TAB>PARAMS-JSON. Fails if inspectorctl cannot list them.
pending_items() {
  local raw
  raw="$(ctl -o json pending)" || return 1
  python3 -c '
import json, sys
data = json.loads(sys.argv[2] or "{}")
# proto3 JSON of ListPendingResponse: {"pending": [...]}, and {} when empty.
items = data.get("pending", []) if isinstance(data, dict) else data
for item in items or []:
    if item.get("serverId", item.get("server_id", sys.argv[1])) != sys.argv[1]:
        continue
    status = item.get("status", "PENDING")
    if status not in ("PENDING", "PENDING_STATUS_PENDING", 1):
        continue
    print("\t".join([item["id"], item.get("method", ""),
                     json.dumps(item.get("params", {}))]))
' "$SERVER_ID" "$raw"
}

# Answers one pending request the way the scenarios expect a cooperative
# user to: elicitation accepted with the schema's defaults, sampling with a
# fixed text, roots with none. Appends the method to ANSWERED, and the id to
# ANSWERED_IDS so that a listing taken before the answer took effect does not
# get it answered twice.
ANSWERED=""
ANSWERED_IDS=" "
answer_pending() {
  local id="$1" method="$2"
  case "$ANSWERED_IDS" in *" $id "*) return 0 ;; esac
  case "$method" in
    elicitation/create)
      ctl respond "$id" --accept-defaults >&2 ||
        die "inspectorctl respond $id --accept-defaults failed"
      ;;
    sampling/createMessage)
      ctl respond "$id" --text "This is a fixed answer from the conformance client." \
        --model conformance-fixed-text >&2 ||
        die "inspectorctl respond $id --text ... (sampling) failed"
      ;;
    roots/list)
      ctl respond "$id" --json '{"roots":[]}' >&2 ||
        die "inspectorctl respond $id (roots) failed"
      ;;
    *)
      die "pending request $id has a method this client does not answer: $method"
      ;;
  esac
  note "answered pending $method request $id"
  ANSWERED+="$method "
  ANSWERED_IDS+="$id "
}

# Calls a tool that makes the server ask the client something: runs the call
# in the background and answers every request of our server that becomes
# pending until the call returns. Fails unless the call succeeded, printed
# text matching `expect`, and at least one request of method `asked` was
# answered first (a call that returned without asking means the daemon
# answered the server by itself).
call_tool_answering() {
  local expect="$1" asked="$2"
  shift 2
  local out_file="$WORK/call.out"
  ctl call "$SERVER_NAME" "$@" >"$out_file" 2>&1 &
  CALL_PID=$!
  local deadline=$((SECONDS + STEP_TIMEOUT)) id method items
  while kill -0 "$CALL_PID" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "inspectorctl call $* did not finish within ${STEP_TIMEOUT} s"
    items="$(pending_items)" ||
      die "inspectorctl pending failed: this scenario needs the daemon's pending client requests (ClientRequestsService) and the CLI's pending/respond commands"
    while IFS=$'\t' read -r id method _; do
      [ -n "$id" ] || continue
      answer_pending "$id" "$method"
    done <<<"$items"
    sleep 0.1
  done
  local status=0
  wait "$CALL_PID" || status=$?
  CALL_PID=""
  local out
  out="$(cat "$out_file")"
  printf '%s\n' "$out"
  [ "$status" -eq 0 ] || die "inspectorctl call $* exited $status: $out"
  case " $ANSWERED" in
    *" $asked "*) ;;
    *) die "inspectorctl call $* returned without a pending $asked request to answer (answered: ${ANSWERED:-none}); output: $out" ;;
  esac
  grep -Eq -- "$expect" <<<"$out" ||
    die "inspectorctl call $* printed '$out', expected /$expect/"
}

# Registers the scenario's server with its OAuth settings: the
# pre-registered client of MCP_CONFORMANCE_CONTEXT (client_id,
# client_secret), and for auth/basic-cimd the client ID metadata document
# URL the scenario expects. The extensions: auth/client-credentials-*
# use the client credentials grant (with private_key_pem, the key goes to
# a file of mode 0600 named by oauth.privateKeyFile, and private_key_jwt),
# a context naming an identity provider (idp_token_endpoint, idp_id_token)
# cross-app access (the ID token in a file named by oauth.idTokenFile).
register_auth_server() {
  SERVER_NAME="conformance-${SCENARIO//\//-}-$$"
  local file="$WORK/server.json"
  (umask 077 && python3 -c '
import json, os, sys
name, url, scenario, work = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5]
context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
oauth = {}
if context.get("client_id"):
    oauth["clientId"] = context["client_id"]
if context.get("client_secret"):
    oauth["clientSecret"] = context["client_secret"]
if scenario == "auth/basic-cimd":
    oauth["clientMetadataUrl"] = "https://conformance-test.local/client-metadata.json"
if scenario.startswith("auth/client-credentials-"):
    oauth["grantType"] = "client_credentials"
if context.get("private_key_pem"):
    key_file = os.path.join(work, "client-key.pem")
    with open(key_file, "w") as f:
        f.write(context["private_key_pem"])
    oauth["privateKeyFile"] = key_file
    oauth["tokenEndpointAuthMethod"] = "private_key_jwt"
    if context.get("signing_algorithm"):
        oauth["signingAlgorithm"] = context["signing_algorithm"]
if context.get("idp_token_endpoint"):
    oauth["grantType"] = "cross_app_access"
    oauth["idpTokenUrl"] = context["idp_token_endpoint"]
    if context.get("idp_client_id"):
        oauth["idpClientId"] = context["idp_client_id"]
    token_file = os.path.join(work, "id-token")
    with open(token_file, "w") as f:
        f.write(context.get("idp_id_token", ""))
    oauth["idTokenFile"] = token_file
server = {"name": name, "transport": "streamableHttp", "url": url}
if oauth:
    server["oauth"] = oauth
json.dump({"servers": [server]}, open(sys.argv[4], "w"))
' "$SERVER_NAME" "$URL" "$SCENARIO" "$file" "$WORK")
  ctl servers import "$file" >&2 || die "inspectorctl servers import $file failed"
  SERVER_ID="$(ctl -o json servers get "$SERVER_NAME" | json_get id)"
  [ -n "$SERVER_ID" ] || die "could not read the id of server $SERVER_NAME"
}

# Records the daemon's OAuth events (inspectorctl watch --kind oauth) from
# now until stop_watch, in $WORK/watch.ndjson.
start_watch() {
  [ -n "$DAEMON_PID" ] || return 0
  "$INSPECTORCTL" --no-color watch --kind oauth --kind config --json \
    >"$WORK/watch.ndjson" 2>"$WORK/watch.err" &
  WATCH_PID=$!
}

# Waits until the watch started by start_watch is subscribed: changes our
# server's configuration until the watch shows a configuration event.
wait_for_watch() {
  [ -n "$WATCH_PID" ] || return 0
  local deadline=$((SECONDS + STEP_TIMEOUT)) n=0
  until grep -q '"config"' "$WORK/watch.ndjson"; do
    kill -0 "$WATCH_PID" 2>/dev/null ||
      die "inspectorctl watch exited: $(cat "$WORK/watch.err")"
    [ "$SECONDS" -lt "$deadline" ] ||
      die "inspectorctl watch showed no configuration event within ${STEP_TIMEOUT} s"
    n=$((n + 1))
    ctl servers update "$SERVER_NAME" --request-timeout $((60000 + n)) >/dev/null ||
      die "inspectorctl servers update $SERVER_NAME failed"
    sleep 0.1 # the next probe, if this one's event is still on its way
  done
}

stop_watch() {
  [ -n "$WATCH_PID" ] || return 0
  kill "$WATCH_PID" 2>/dev/null || true
  wait "$WATCH_PID" 2>/dev/null || true
  WATCH_PID=""
}

# The secrets of the scenarios: their tokens start with "test-token", their
# client secrets end in "client-secret", and MCP_CONFORMANCE_CONTEXT may
# hold one more. None may show in the daemon's log, its recorded messages
# and logs, the flow it reports, or what Watch showed of the flows.
SECRET_PATTERN="test-token|cc-token|client-secret"
check_no_token_leak() {
  [ -n "$DAEMON_PID" ] || return 0
  local context_secret
  context_secret="$(json_get client_secret <<<"${MCP_CONFORMANCE_CONTEXT:-{\}}")"
  [ -z "$context_secret" ] || SECRET_PATTERN+="|$context_secret"
  if grep -Eq -- "$SECRET_PATTERN" "$WORK/inspectord.log"; then
    die "a token or client secret appears in inspectord's log"
  fi
  python3 -c '
import re, sqlite3, sys
pattern = re.compile(sys.argv[2])
db = sqlite3.connect(sys.argv[1])
for table, column in (("messages", "raw"), ("logs", "message"), ("logs", "data_json")):
    for (value,) in db.execute(f"SELECT {column} FROM {table}"):
        if value and pattern.search(value):
            sys.exit(f"a token or client secret appears in {table}.{column}")
' "$WORK/inspector.db" "$SECRET_PATTERN" || die "token leak check failed"
  if ctl -o json auth status "$SERVER_NAME" | grep -Eq -- "$SECRET_PATTERN"; then
    die "inspectorctl auth status shows a token or secret"
  fi
  if grep -Eq -- "$SECRET_PATTERN" <<<"${LOGIN_OUT:-}"; then
    die "inspectorctl auth login printed a token or secret"
  fi
  if [ -n "$WATCH_PID" ]; then
    stop_watch
    grep -q '"oauth"' "$WORK/watch.ndjson" ||
      die "inspectorctl watch --kind oauth showed no OAuth event during the login"
    if grep -Eq -- "$SECRET_PATTERN" "$WORK/watch.ndjson"; then
      die "a token or client secret appears in the OAuth events on Watch"
    fi
  fi
  check_no_context_secret_leak
}

# The context's secrets that are not plain words: the private key (its
# longest line of base64) and the identity provider's ID token. Neither may
# show in the daemon's log, its database, what the CLI printed (the login,
# `auth status`, `servers get -o json`, `servers export` in every format)
# or on Watch.
check_no_context_secret_leak() {
  local secrets
  secrets="$(python3 -c '
import json, os
context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
pem = context.get("private_key_pem") or ""
lines = [l for l in pem.splitlines() if l and not l.startswith("-----")]
if lines:
    print(max(lines, key=len))
if context.get("idp_id_token"):
    print(context["idp_id_token"])
')"
  [ -n "$secrets" ] || return 0
  local where=("$WORK/inspectord.log" "$WORK/inspector.db")
  [ ! -f "$WORK/inspector.db-wal" ] || where+=("$WORK/inspector.db-wal")
  [ ! -f "$WORK/watch.ndjson" ] || where+=("$WORK/watch.ndjson")
  local outputs="$WORK/cli-outputs.txt" format
  {
    printf '%s\n' "${LOGIN_OUT:-}"
    ctl -o json auth status "$SERVER_NAME" || true
    ctl -o json servers get "$SERVER_NAME" || true
    for format in inspector mcp-servers claude cursor vscode; do
      ctl servers export --format "$format" "$SERVER_NAME" ||
        die "inspectorctl servers export --format $format failed"
    done
  } >"$outputs" 2>&1
  where+=("$outputs")
  local secret file
  while IFS= read -r secret; do
    [ -n "$secret" ] || continue
    for file in "${where[@]}"; do
      if grep -qF -- "$secret" "$file"; then
        die "a private key or ID token of the scenario appears in ${file##*/}"
      fi
    done
  done <<<"$secrets"
  note "no private key or ID token in the log, database, CLI output, exports or Watch"
}

list_tools_once() {
  ctl tools "$SERVER_NAME" --all
}

call_test_tool() {
  ctl call "$SERVER_NAME" test-tool
}

# Runs a step; when it fails for want of a scope (403 insufficient_scope),
# or because the server no longer accepts the token (401: it moved to
# another authorization server, say), logs in again, as a person would,
# and runs it once more.
with_step_up() {
  local out
  if out="$("$@" 2>&1)"; then
    printf '%s\n' "$out" >&2
    return 0
  fi
  printf '%s\n' "$out" >&2
  if grep -q "insufficient_scope" <<<"$out"; then
    note "step up: $* needs more scopes; logging in again"
  elif grep -Eqi "401|invalid_token|unauthori[sz]ed" <<<"$out"; then
    note "$* was refused the token (401); logging in again"
  else
    return 1
  fi
  ctl auth login "$SERVER_NAME" --headless >&2 || return 1
  "$@" >&2
}

# Fails unless the daemon's status of our server names protocol era `era`.
expect_era() {
  local era
  era="$(ctl -o json status "$SERVER_NAME" | json_get protocolEra)"
  [ "$era" = "$1" ] || die "expected protocol era '$1' for $SERVER_NAME, the daemon reports '${era:-none}'"
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/inspector-conformance.XXXXXX")"
if [ -n "${CONFORMANCE_INSPECTOR_ADDR:-}" ]; then
  export INSPECTOR_ADDR="$CONFORMANCE_INSPECTOR_ADDR"
  ctl status >&2 || die "no usable inspectord at $INSPECTOR_ADDR"
else
  start_daemon
fi

note "scenario $SCENARIO against $URL"
case "$SCENARIO" in
  initialize)
    # The handshake is the whole test: protocol version and clientInfo.
    register_server streamableHttp
    connect
    ;;
  tools_call)
    register_server streamableHttp
    connect
    list_tools
    call_tool '^The sum of 5 and 3 is 8$' add_numbers a=5 b=3
    ;;
  sse-retry)
    # The server ends the tool call's SSE stream after a priming event with
    # `retry: 500`; the daemon must resume it with a GET carrying
    # Last-Event-ID after that delay, and the answer arrives there.
    register_server streamableHttp
    connect
    list_tools
    call_tool '^Reconnection test completed successfully$' test_reconnection
    ;;
  elicitation-sep1034-client-defaults)
    # The tool's elicitation/create omits every answer; accepting with
    # defaults must fill each field from the schema's `default`.
    register_server streamableHttp
    connect
    list_tools
    call_tool_answering '^Elicitation completed: ' elicitation/create \
      test_client_elicitation_defaults
    ;;
  # MCP 2026-07-28 (the next suite at its wire). The server is added with
  # the default protocol setting, auto: server/discover finds the era.
  request-metadata)
    # The first request is refused with UnsupportedProtocolVersion naming
    # 2026-07-28; the daemon selects it again. Every request carries _meta
    # and MCP-Protocol-Version.
    register_server streamableHttp
    connect
    list_tools
    expect_era modern
    ;;
  sep-2322-client-request-state)
    # Multi round-trip requests: the elicitation a tool asks for becomes a
    # pending item, answered like any other; the daemon retries with the
    # answer and the server's requestState (echoed exactly, only when
    # sent), under a new JSON-RPC id. A call made meanwhile carries
    # neither; a result without resultType is complete.
    register_server streamableHttp
    connect
    list_tools
    expect_era modern
    call_tool_answering '^echo-state-ok$' elicitation/create test_mrtr_echo_state
    call_tool_answering '^no-state-ok$' elicitation/create test_mrtr_no_state
    call_tool '^unrelated-ok$' test_mrtr_unrelated
    call_tool '^no-result-type-test-ok$' test_mrtr_no_result_type
    ;;
  http-standard-headers)
    # Mcp-Method on every POST, Mcp-Name on tools/call, resources/read and
    # prompts/get (Base64 when the value is not plain ASCII).
    register_server streamableHttp
    connect
    list_tools
    call_tool 'Headers test completed' test_headers
    call_tool 'Headers test completed' my-hyphenated-tool
    ctl resources "$SERVER_NAME" >&2 || die "inspectorctl resources failed"
    ctl read "$SERVER_NAME" 'file:///path/to/file%20name.txt' >&2 ||
      die "inspectorctl read (file URI) failed"
    ctl read "$SERVER_NAME" 'https://example.com/resource?id=123' >&2 ||
      die "inspectorctl read (https URI) failed"
    ctl prompts "$SERVER_NAME" >&2 || die "inspectorctl prompts failed"
    for prompt in $(ctl -o json prompts "$SERVER_NAME" --all | python3 -c '
import json, sys
data = json.load(sys.stdin)
for p in data.get("prompts", []) if isinstance(data, dict) else data:
    print(p["name"])'); do
      ctl prompt "$SERVER_NAME" "$prompt" >&2 ||
        die "inspectorctl prompt $SERVER_NAME $prompt failed"
    done
    ;;
  http-custom-headers)
    # Tool parameters annotated with x-mcp-header are mirrored into
    # Mcp-Param-{Name} headers (Base64 for values that are not plain
    # ASCII); null and absent ones are left out, unannotated ones too.
    register_server streamableHttp
    connect
    list_tools
    call_tool '.' test_custom_headers region=us-west1 priority=7 verbose=true \
      debug=false method_val=GET float_val=3.5 'non_ascii_val=Hello, 世界' \
      'whitespace_val= padded ' 'leading_space_val= lead' \
      'trailing_space_val=trail ' 'internal_space_val=in side' \
      "control_char_val=bell$(printf '\a')here" \
      "crlf_val=line1$(printf '\r\n')line2" "tab_val=$(printf '\t')tabbed" \
      query=plain
    call_tool '.' test_custom_headers_null --json '{"verbose": null}'
    ;;
  http-invalid-tool-headers)
    # Tools whose x-mcp-header annotations break the rules are left out of
    # the list; this client then calls every tool it was given.
    register_server streamableHttp
    connect
    tools_json="$(ctl -o json tools "$SERVER_NAME" --all)" ||
      die "inspectorctl tools $SERVER_NAME failed"
    for tool in $(python3 -c '
import json, sys
data = json.loads(sys.argv[1])
for t in data.get("tools", []) if isinstance(data, dict) else data:
    print(t["name"])' "$tools_json"); do
      call_tool '.' "$tool" region=us-east1
    done
    ;;
  json-schema-ref-no-deref)
    # A tool schema's network $ref is never fetched.
    register_server streamableHttp
    connect
    list_tools
    ;;
  auth/*)
    # The scenario's MCP server answers 401 until the daemon holds a token;
    # its authorization server approves at once, so `auth login --headless`
    # (the daemon GETs the authorization URL and follows the redirect to
    # its callback) runs the whole flow without a browser.
    start_watch
    register_auth_server
    wait_for_watch
    if ! LOGIN_OUT="$(ctl auth login "$SERVER_NAME" --headless 2>&1)"; then
      printf '%s\n' "$LOGIN_OUT" >&2
      # Scenarios whose authorization server misbehaves (a wrong or missing
      # iss, metadata naming another issuer) pass when the login is refused
      # before the code is redeemed; the daemon must say why.
      case "$SCENARIO" in
        auth/iss-supported-missing | auth/iss-wrong-issuer | auth/iss-unexpected | \
          auth/iss-normalized | auth/metadata-issuer-mismatch)
          grep -Eq "iss|issuer" <<<"$LOGIN_OUT" ||
            die "inspectorctl auth login $SERVER_NAME failed without naming the issuer"
          check_no_token_leak
          note "login refused as the scenario expects"
          exit 0
          ;;
      esac
      die "inspectorctl auth login $SERVER_NAME --headless failed"
    fi
    printf '%s\n' "$LOGIN_OUT" >&2
    ctl auth status "$SERVER_NAME" >&2 || die "inspectorctl auth status $SERVER_NAME failed"
    connect
    # A 403 insufficient_scope is a step up: log in again (the daemon
    # starts from the 403's challenge and its scopes), at most once per
    # operation, then retry it once.
    with_step_up list_tools_once || die "inspectorctl tools $SERVER_NAME failed"
    with_step_up call_test_tool || die "inspectorctl call $SERVER_NAME test-tool failed"
    # The scenario's tokens start with "test-token": none may show in the
    # daemon's log, its recorded messages and logs, or the flow it reports.
    check_no_token_leak
    ;;
  *)
    die "unknown scenario '$SCENARIO': teach tests/conformance/client.sh what it expects"
    ;;
esac
note "scenario $SCENARIO done"
