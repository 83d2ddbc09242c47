#!/usr/bin/env python3
"""Checks that every relative link in README.md and docs/**/*.md resolves.

Usage: tools/check-doc-links.py [SOURCE_DIR]   (default: this file's repo)

A relative link is one without a scheme (http:, mailto:, ...). Its path,
taken from the linking file's directory, must name a file or directory of
the source tree, and a `#anchor` on a Markdown file (or a bare `#anchor`,
on the linking file itself) must be one of that file's headings, made into
an anchor by GitHub's rules: the heading's text as rendered, lower-cased,
every character that is not a letter, digit, space, hyphen or underscore
dropped, spaces made hyphens, and a repeated anchor suffixed -1, -2, ...
Links inside code (fenced blocks, `spans`) are not links and are skipped.

Prints one line per broken link (FILE:LINE: target: why) and exits 1 if
there is any, else prints how many links it checked and exits 0.
"""

import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def strip_code_spans(line):
    """The line with every `code span` blanked out."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def prose_lines(text):
    """(line number, line) for every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if match:
            marker = match.group(1)
            if fence is None:
                fence = marker
                continue
            if marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
                continue
        if fence is None:
            yield number, line


def slug(heading):
    """GitHub's anchor for a heading's Markdown text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    kept = "".join(c for c in text if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def anchors(path, cache={}):
    """Every anchor a Markdown file defines."""
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found = set()
        seen = {}
        for _, line in prose_lines(text):
            match = HEADING.match(line)
            if match:
                base = slug(match.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else "%s-%d" % (base, count))
            for name in HTML_ANCHOR.findall(line):
                found.add(name)
        cache[path] = found
    return cache[path]


def links(text):
    """(line number, target) for every link of a Markdown text."""
    for number, line in prose_lines(text):
        prose = strip_code_spans(line)
        for match in LINK.finditer(prose):
            yield number, match.group(1)
        match = REFERENCE.match(prose)
        if match:
            yield number, match.group(1)


def check(root):
    files = []
    if os.path.isfile(os.path.join(root, "README.md")):
        files.append(os.path.join(root, "README.md"))
    for directory, _, names in os.walk(os.path.join(root, "docs")):
        files.extend(os.path.join(directory, n) for n in sorted(names)
                     if n.endswith(".md"))
    if not files:
        print("no README.md or docs/ under %s" % root)
        return 1
    broken = 0
    checked = 0
    for path in sorted(files):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        shown = os.path.relpath(path, root)
        for number, target in links(text):
            if SCHEME.match(target) or target.startswith("//"):
                continue
            checked += 1
            file_part, _, anchor = target.partition("#")
            if file_part:
                resolved = os.path.normpath(
                    os.path.join(os.path.dirname(path), file_part))
                inside = os.path.relpath(resolved, root)
                if inside.startswith(".."):
                    problem = "points outside the source tree"
                elif not os.path.exists(resolved):
                    problem = "no such file or directory"
                else:
                    problem = None
            else:
                resolved = path
                problem = None
            if problem is None and anchor and resolved.endswith(".md") \
                    and os.path.isfile(resolved):
                if anchor not in anchors(resolved):
                    problem = "no heading with anchor #%s in %s" % (
                        anchor, os.path.relpath(resolved, root))
            if problem:
                broken += 1
                print("%s:%d: %s: %s" % (shown, number, target, problem))
    if broken:
        print("%d broken link(s) of %d checked in %d file(s)" %
              (broken, checked, len(files)))
        return 1
    print("%d relative links in %d files resolve" % (checked, len(files)))
    return 0


if __name__ == "__main__":
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.exit(check(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else here)))
