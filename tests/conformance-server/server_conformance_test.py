#!/usr/bin/python3
"""Runs @modelcontextprotocol/conformance server scenarios against inspectord's
HTTP front door, with tools/conformance-server/server.mjs (stdio) behind it.

Two modes, one CTest case each:

  server_conformance_test.py --node-modules DIR
                             --suite release|next|modern|passthrough|reverse
                             --server-script server.mjs --scenario NAME
      Starts an inspectord of its own (temporary database and token, gRPC and
      --http on 127.0.0.1:0) with the stdio server configured as `conformance`,
      reads the HTTP port from the daemon's log, and runs the suite's `server`
      command for one scenario against
      http://127.0.0.1:PORT/servers/conformance/mcp. `release` is the pinned
      @modelcontextprotocol/conformance, `next` the pre-release pinned as
      conformance-next, for the scenarios `--requirements 2025-11-25` selects,
      each run alone with `--spec-version 2025-11-25`; `modern` is the same
      pre-release for the scenarios `--requirements 2026-07-28` selects, at
      that revision's wire (no initialize, no session: the front door
      translates for the handshake-era server.mjs); `passthrough` the same
      scenarios with `server.mjs --modern` (a 2026-07-28 server: the front
      door passes requests through); `reverse` the 2025-11-25 scenarios of
      `next` with `server.mjs --modern` (handshake-era requests translated
      for a 2026-07-28 server). Passes only if
      the CLI exits 0, its checks.json holds no FAILURE and at least one
      SUCCESS (unless the scenario list marks the scenario `report-only`: it
      only reports INFO and WARNING checks by design), and if the daemon
      stops by itself on SIGTERM leaving no process of its group behind.
      WARNING checks are printed, not failed: the suite reports SHOULDs so.
      With --url the scenario runs against that endpoint instead, and no
      daemon is started (by hand: a bridge fronting server.mjs, say).

  server_conformance_test.py --node-modules DIR --suite release|next|modern|passthrough|reverse
                             --check-list FILE
      Compares the checked-in scenario list with the server scenarios the
      installed package lists (release: `list --server`; next: `list --server
      --requirements 2025-11-25`, scored and reported ones; modern: the same
      for 2026-07-28), so that a new
      package version cannot add a scenario that no test runs.

A missing node_modules (tools/npm/install.sh not run) fails with a message
saying so. Every wait has a deadline; the CLI and the daemon run in process
groups of their own, killed at the end whatever happened.
"""
import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
import conformance_runner  # noqa: E402
from conformance_runner import check_scenario_list, fail, group_members, run_cli, stop_group  # noqa: E402

# The spec revision each suite of the pre-release is run for.
REQUIREMENTS = {"next": "2025-11-25", "modern": "2026-07-28",
                "passthrough": "2026-07-28", "reverse": "2025-11-25"}
SERVER_NAME = "conformance"
PACKAGES = {
    "release": os.path.join("@modelcontextprotocol", "conformance"),
    "next": "conformance-next",
    "modern": "conformance-next",
    "passthrough": "conformance-next",
    "reverse": "conformance-next",
}
# What server.mjs is started with, per suite: `passthrough` has it speak
# 2026-07-28 itself, so the front door passes requests through.
SERVER_ARGS = {"passthrough": ["--modern"], "reverse": ["--modern"]}
HTTP_ADDRESS = re.compile(r"and REST on (\S+:\d+)")


def read_scenario_file(path):
    """{name: flags} from lines `NAME [flag...]`; # comments and blanks skipped."""
    scenarios = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words:
                if words[0] in scenarios:
                    fail(f"{path}: {words[0]} is listed twice")
                scenarios[words[0]] = set(words[1:])
    return scenarios


class Installation(conformance_runner.Installation):
    """One of the two pinned conformance CLIs (`suite`: release or next)."""

    def __init__(self, node_modules, suite):
        super().__init__(node_modules, PACKAGES[suite])
        self.suite = suite

    def server_args(self):
        """What `server` needs besides --url and --scenario for this suite."""
        # The CLI refuses --scenario with --requirements; a requirement set
        # runs its scenarios at its revision's wire, which --spec-version
        # selects for one scenario.
        requirements = REQUIREMENTS.get(self.suite)
        return ["--spec-version", requirements] if requirements else []


def listed_server_scenarios(installation):
    args = ["list", "--server"]
    if installation.suite in REQUIREMENTS:
        args += ["--requirements", REQUIREMENTS[installation.suite]]
    result = subprocess.run(installation.command(*args), capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        fail(f"`conformance {' '.join(args)}` exited {result.returncode}:\n{result.stdout}{result.stderr}")
    names = []
    section = None
    for line in result.stdout.splitlines():
        if re.match(r"^\S", line):
            # "Server scenarios (...):", "Client scenarios (...):", "Run and reported, ...:"
            section = "server" if line.startswith("Server scenarios") else (
                "reported" if line.startswith("Run and reported") else "other")
            continue
        # "  - name [versions]" or, under "Run and reported", "    - name [server]"
        match = re.match(r"^\s+-\s+(\S+)(\s+\[(.*)\])?\s*$", line)
        if not match:
            continue
        if section == "server" or (section == "reported" and match.group(3) == "server"):
            names.append(match.group(1))
    if not names:
        fail(f"`conformance {' '.join(args)}` listed no server scenario; its output was:\n{result.stdout}")
    return names


def check_list(installation, scenario_file):
    expected = read_scenario_file(scenario_file)
    listed = listed_server_scenarios(installation)
    print(f"conformance {installation.version}: {len(listed)} server scenarios: {' '.join(listed)}")
    check_scenario_list(scenario_file, list(expected), listed, "server",
                        "update the file (and tools/conformance-server/server.mjs for new scenarios)")


class Daemon:
    """An inspectord of its own with the conformance server configured."""

    def __init__(self, work, node, server_script, server_args=()):
        self.work = work
        self.log_path = os.path.join(work, "inspectord.log")
        inspectord = os.environ.get("INSPECTORD", "")
        if not inspectord or not os.access(inspectord, os.X_OK):
            fail(f"$INSPECTORD must name the built binary (got {inspectord!r}); CTest sets it")
        config = os.path.join(work, "mcp.json")
        with open(config, "w", encoding="utf-8") as f:
            json.dump({"mcpServers": {SERVER_NAME: {"command": node,
                                                    "args": [server_script, *server_args]}}}, f)
        self.command = [inspectord, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
                        "--db", os.path.join(work, "inspector.db"),
                        "--token-file", os.path.join(work, "token"),
                        "--ready-file", os.path.join(work, "address"),
                        "--import", config, "--log-level", "debug"]
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.http_address = self._wait_for_http_address(deadline_s=30)

    def _wait_for_http_address(self, deadline_s):
        # The serving line (with the --http address) is logged once both
        # listeners are bound.
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                match = HTTP_ADDRESS.search(f.read())
            if match:
                return match.group(1)
            if self.proc.poll() is not None:
                self.print_log()
                fail(f"inspectord exited {self.proc.returncode} before serving")
            time.sleep(0.05)
        self.print_log()
        fail(f"inspectord did not log its HTTP address within {deadline_s} s")

    def print_log(self, last=80):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        print(f"---- inspectord log (last {last} lines) ----\n" + "\n".join(lines[-last:]), flush=True)

    def stop(self):
        """SIGTERM; problems (slow exit, bad status, leftovers) as a list."""
        problems = []
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                problems.append("inspectord did not exit within 15 s of SIGTERM")
                self.proc.kill()
                self.proc.wait()
        if self.proc.returncode not in (0, -signal.SIGKILL) and not problems:
            problems.append(f"inspectord exited {self.proc.returncode} on SIGTERM")
        leftovers = group_members(self.proc.pid)
        if leftovers:
            stop_group(self.proc.pid)
            problems.append("processes of the daemon's group were left running: " +
                            ", ".join(f"{pid} ({name})" for pid, name in leftovers))
        self.log.close()
        return problems


def run_scenario(installation, scenario, flags, server_script, timeout_s, url=None):
    if flags & {"needs-modern-server", "extension"}:
        fail(f"{scenario} is marked {' '.join(sorted(flags))} in the scenario "
             "list, which makes no case of it (see the list's header)")
    if not os.path.exists(server_script):
        fail(f"{server_script} is missing")
    with tempfile.TemporaryDirectory(prefix="conformance-server-") as work:
        daemon = None
        if url is None:
            daemon = Daemon(work, installation.node, server_script,
                            SERVER_ARGS.get(installation.suite, []))
            url = f"http://{daemon.http_address}/servers/{SERVER_NAME}/mcp"
        out_dir = os.path.join(work, "results")
        command = installation.command("server", "--url", url, "--scenario", scenario,
                                       *installation.server_args(), "--output-dir", out_dir)
        print(f"conformance {installation.version}, scenario {scenario}\nrunning: {' '.join(command)}",
              flush=True)
        started = time.monotonic()
        proc, output, timed_out = run_cli(command, work, timeout_s)
        elapsed = time.monotonic() - started
        stop_group(proc.pid)  # anything the CLI left behind

        problems = []
        if timed_out:
            problems.append(f"the conformance CLI did not finish within {timeout_s} s")
        elif proc.returncode != 0:
            problems.append(f"the conformance CLI exited {proc.returncode}")

        results = glob.glob(os.path.join(out_dir, "**", "checks.json"), recursive=True)
        checks = []
        if len(results) != 1:
            problems.append(f"expected one checks.json under the output directory, found {len(results)}")
        else:
            with open(results[0], encoding="utf-8") as f:
                checks = json.load(f)
        by_status = {}
        print(f"checks of {scenario} ({elapsed:.1f} s):")
        for check in checks:
            status = check.get("status")
            by_status.setdefault(status, []).append(check)
            line = f"  {status:<8} {check.get('id')}: {check.get('description', '')}"
            if check.get("errorMessage") and status in ("FAILURE", "WARNING"):
                line += f"\n           {check['errorMessage']}"
            print(line)
        if by_status.get("FAILURE"):
            problems.append(f"{len(by_status['FAILURE'])} check(s) failed: " +
                            ", ".join(check.get("id", "?") for check in by_status["FAILURE"]))
        if "report-only" in flags:
            if not checks:
                problems.append("the scenario reported no check")
        elif not by_status.get("SUCCESS"):
            problems.append("no check succeeded")

        if re.search(r"No endpoint \w+ /servers/", output + json.dumps(checks)):
            problems.append("this inspectord does not serve the MCP front door at "
                            f"/servers/{SERVER_NAME}/mcp (its HTTP listener answered NOT_FOUND)")
        if daemon:
            problems += daemon.stop()
        if problems:
            if daemon:
                daemon.print_log()
            fail(f"scenario {scenario}:\n  " + "\n  ".join(problems))
        warned = len(by_status.get("WARNING", []))
        print(f"OK: scenario {scenario}: {len(by_status.get('SUCCESS', []))} check(s) succeeded, "
              f"none failed{f', {warned} warned' if warned else ''}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--node-modules", required=True, help="tools/npm/node_modules")
    parser.add_argument("--suite", required=True, choices=sorted(PACKAGES))
    parser.add_argument("--scenario-file", required=True, help="the suite's scenario list")
    parser.add_argument("--server-script", help="tools/conformance-server/server.mjs")
    parser.add_argument("--scenario", help="the server scenario to run")
    parser.add_argument("--timeout", type=int, default=90, help="seconds the CLI may run")
    parser.add_argument("--url", help="run against this MCP endpoint instead of starting "
                        "inspectord (by hand, e.g. a bridge fronting server.mjs)")
    parser.add_argument("--check-list", action="store_true",
                        help="compare --scenario-file with the package's server scenarios")
    args = parser.parse_args()
    installation = Installation(os.path.abspath(args.node_modules), args.suite)
    if args.check_list:
        check_list(installation, args.scenario_file)
    elif args.scenario and args.server_script:
        scenarios = read_scenario_file(args.scenario_file)
        if args.scenario not in scenarios:
            fail(f"{args.scenario} is not in {args.scenario_file}")
        run_scenario(installation, args.scenario, scenarios[args.scenario],
                     os.path.abspath(args.server_script), args.timeout, args.url)
    else:
        parser.error("give --check-list, or --server-script and --scenario")


if __name__ == "__main__":
    main()
