# Helpers shared by the shell end-to-end tests of this directory. Source
# it after setting SCRIPT (the test's name), CASE and STEP_TIMEOUT
# (seconds); `ctl` runs $INSPECTORCTL.

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
