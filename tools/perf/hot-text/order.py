#!/usr/bin/env python3
"""Writes hot_text.ld: the linker script that places the code inspectord
runs next to each other (tools/perf/hot-text/regenerate.sh runs it and
puts the script in the build tree, where -DINSPECTOR_HOT_TEXT_LAYOUT=ON
links the daemon with it).

Why: the kernel maps a file-backed page together with its neighbours in
the same 64 KiB window ("fault-around"), so a daemon that runs one small
function in each of most 64 KiB windows of its 11 MB of code keeps nearly
all of it resident. Putting the input sections that hold executed code
first, in one block, leaves the rest of the code untouched and unmapped.

Input: the link map of inspectord (ld -Map), the binary it describes, and
callgrind outputs of the daemon at work (which functions ran), the most
common use first: what the first profile ran comes first, then what only
the second added, and so on, so that a daemon used as in the first
profile only touches the start of the block. An input
section is one function where the object was compiled with
-ffunction-sections or the function is an inline or template instance
(COMDAT), else the whole .text of its object file; either way it is listed
by archive member and section name. Startup code (.text.startup) and code
GCC marked cold (.text.unlikely) keep their places.

Usage: order.py MAP BINARY CALLGRIND_OUT... > hot_text.ld
"""
import bisect
import re
import subprocess
import sys


def executed_names(path):
    names = set()
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^c?fn=\(\d+\) (.+)$", line)
            if m:
                # callgrind marks recursion levels as name'2.
                names.add(re.sub(r"'\d+$", "", m.group(1).strip()))
    return names


def executed_addresses(binary, profiles):
    """{address: index of the first profile that ran the function}."""
    out = subprocess.run(["nm", "--defined-only", binary], check=True,
                         capture_output=True, text=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            symbols.append((int(parts[0], 16), parts[2]))
    demangled = subprocess.run(
        ["c++filt"], input="\n".join(s for _, s in symbols), check=True,
        capture_output=True, text=True).stdout.splitlines()
    first = {}
    for rank, path in enumerate(profiles):
        names = executed_names(path)
        for (address, symbol), plain in zip(symbols, demangled):
            if address not in first and (plain in names or symbol in names):
                first[address] = rank
    return first


def text_input_sections(map_path):
    """(address, size, section, object) of every input section of .text."""
    with open(map_path) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines)
                 if l.startswith("Linker script and memory map"))
    sections = []
    output = None
    pending = None
    for line in lines[start:]:
        m = re.match(r"^(\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)", line)
        if m:
            output = m.group(1)
            continue
        if re.match(r"^\S+\s*$", line):
            output = line.strip()
            continue
        m = re.match(r"^ (\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+) (.+)$", line)
        if m:
            if output in (".text", ".text.hot"):
                sections.append((int(m.group(2), 16), int(m.group(3), 16),
                                 m.group(1), m.group(4).strip()))
            pending = None
            continue
        m = re.match(r"^ (\S+)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+) (.+)$", line)
        if m and pending:
            if output in (".text", ".text.hot"):
                sections.append((int(m.group(1), 16), int(m.group(2), 16),
                                 pending, m.group(3).strip()))
            pending = None
    return sorted(s for s in sections if s[1] > 0)


def file_pattern(obj):
    m = re.match(r"^(?:.*/)?([^/(]+\.a)\((.+)\)$", obj)
    if m:
        return f"*{m.group(1)}:{m.group(2)}"
    return "*" + obj.rsplit("/", 1)[-1]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    map_path, binary, profiles = sys.argv[1], sys.argv[2], sys.argv[3:]
    first = executed_addresses(binary, profiles)
    sections = text_input_sections(map_path)
    starts = [s[0] for s in sections]
    hot = {}
    for address, rank in first.items():
        i = bisect.bisect_right(starts, address) - 1
        if i < 0:
            continue
        start, size, name, obj = sections[i]
        if not start <= address < start + size:
            continue
        if name.startswith((".text.unlikely", ".text.startup", ".text.exit")):
            continue
        key = (file_pattern(obj), name)
        order = (rank, start)
        if key not in hot or order < hot[key][0]:
            hot[key] = (order, size)
    print(f"order.py: {len(first)} executed functions in "
          f"{len(hot)} input sections, "
          f"{sum(size for _, size in hot.values()) // 1024} KiB",
          file=sys.stderr)
    print("/* Generated by tools/perf/hot-text/regenerate.sh: the input sections")
    print("   holding the code inspectord runs (start, Forward, history,")
    print("   idle, then the REST gateway's), placed first and together; see")
    print("   tools/perf/hot-text/order.py.")
    print("   A pattern that no longer matches anything is harmless; code")
    print("   added since keeps its ordinary place in .text. */")
    print("SECTIONS\n{\n  .text.hot :\n  {")
    for pattern, name in sorted(hot, key=lambda key: hot[key][0]):
        print(f"    {pattern}({name})")
    print("  }\n}\nINSERT BEFORE .text;")


if __name__ == "__main__":
    main()
