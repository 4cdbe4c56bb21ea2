#!/usr/bin/env python3
"""Keeps the code of a document equal to the examples it quotes.

    doc-snippets.py [--update] DOC...

In DOC, a line `<!-- snippet: examples/c/FILE.c TAG -->` followed by a
```c block quotes the lines of FILE.c between its `[TAG]` and `[/TAG]`
marker lines. Without --update: exits 1, naming the snippet, when a block
differs from the example (or the marker is missing); with --update:
rewrites the blocks from the examples.
"""
import os
import re
import sys

MARK = re.compile(r"^<!-- snippet: (\S+) (\S+) -->$")


def region(root, path, tag):
    lines = open(os.path.join(root, path)).read().split("\n")
    start = [i for i, l in enumerate(lines) if "[%s]" % tag in l]
    end = [i for i, l in enumerate(lines) if "[/%s]" % tag in l]
    if len(start) != 1 or len(end) != 1 or end[0] <= start[0]:
        raise ValueError("%s: no single [%s] ... [/%s]" % (path, tag, tag))
    return lines[start[0] + 1:end[0]]


def process(doc, update):
    root = os.path.dirname(os.path.dirname(os.path.abspath(doc)))
    lines = open(doc).read().split("\n")
    out, bad, n, i = [], [], 0, 0
    while i < len(lines):
        out.append(lines[i])
        m = MARK.match(lines[i])
        i += 1
        if not m:
            continue
        n += 1
        want = region(root, m.group(1), m.group(2))
        if i >= len(lines) or lines[i] != "```c":
            bad.append("%s %s: no ```c block after the marker" % m.groups())
            continue
        j = lines.index("```", i + 1)
        if lines[i + 1:j] != want:
            bad.append("%s %s differs from the example" % m.groups())
        out += ["```c"] + want + ["```"]
        i = j + 1
    if update:
        open(doc, "w").write("\n".join(out))
        return 0, n
    for b in bad:
        print("%s: %s" % (doc, b))
    return (1 if bad else 0), n


def main():
    update = "--update" in sys.argv
    rc = 0
    for doc in [a for a in sys.argv[1:] if a != "--update"]:
        r, n = process(doc, update)
        print("%s: %d snippets %s" % (doc, n, "written" if update else
                                     ("checked" if not r else "differ")))
        rc |= r
    return rc


if __name__ == "__main__":
    sys.exit(main())
