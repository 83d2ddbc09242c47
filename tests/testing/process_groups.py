"""Process groups of the tests' child processes, read from /proc: which
processes a group still has, and ending a whole group. Shared by the
conformance runners (tests/conformance, tests/conformance-server), which
start each suite run in a group of its own."""
import os
import signal
import time


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
