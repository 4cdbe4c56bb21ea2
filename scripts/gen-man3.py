#!/usr/bin/env python3
"""Section 3 manual pages of the public API, written from the headers.

    gen-man3.py SRCDIR BUILDDIR OUTDIR VERSION

One page per exported function (BUILDDIR/ibmcast.syms and
ibmcast-sim.syms, the lists scripts/gen-exports.sh reads from the
headers): NAME, LIBRARY (which library and its pkg-config name),
SYNOPSIS (the header and the declaration as written there), DESCRIPTION
(the comment above the declaration, or above the group of declarations
it belongs to) and SEE ALSO (the other functions of the header). Prints
the counts (OUTDIR/report.txt also lists the functions without a comment
of their own: their page points at the header), and exits 1 when a
declaration was not found.
"""
import os
import re
import sys


def roff(text):
    """Text as roff body lines: no line starts with a control character."""
    out = []
    for line in text.split("\n"):
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def strip_comment(c):
    """The text of a /* ... */ comment, its decoration removed."""
    c = c[2:-2]
    lines = [re.sub(r"^\s*\* ?", "", l) for l in c.split("\n")]
    return "\n".join(lines).strip()


def declarations(path, names):
    """{name: (declaration, comment)} for the names declared in path."""
    text = open(path).read()
    found = {}
    for name in names:
        m = re.search(r"^(?![ \t]*[/*#])[^\n]*?\b%s\s*\(" % re.escape(name),
                      text, re.M)
        if not m:
            continue
        start = m.start()
        # The return type may stand on the line before.
        prev = text.rfind("\n", 0, start - 1)
        prev_line = text[prev + 1:start - 1] if start > 0 else ""
        if prev_line and re.match(r"^[A-Za-z_][\w \*]*$", prev_line) \
                and not prev_line.rstrip().endswith(";"):
            start = prev + 1
        end = text.index(";", m.end())
        decl = " ".join(text[start:end + 1].split())
        # The comment: the last one before the declaration within its
        # block (no blank line in between).
        block_start = text.rfind("\n\n", 0, start)
        block = text[block_start + 2 if block_start >= 0 else 0:start]
        comments = re.findall(r"/\*.*?\*/", block, re.S)
        comment = strip_comment(comments[-1]) if comments else ""
        found[name] = (decl, comment)
    return found


def page(name, decl, comment, header, lib, pc, version, others):
    see = ", ".join(r"\fB%s\fP(3)" % o for o in sorted(others) if o != name)
    return "\n".join([
        '.TH %s 3 "" "ibmcast %s" "ibmcast API"' % (name.upper(), version),
        ".SH NAME",
        "%s \\- %s" % (name, "function of <ibmcast/%s>" % header),
        ".SH LIBRARY",
        "%s (\\fIpkg-config --cflags --libs %s\\fP)" % (lib, pc),
        ".SH SYNOPSIS",
        ".nf",
        "\\fB#include <ibmcast/%s>\\fP" % header,
        "",
        roff(decl),
        ".fi",
        ".SH DESCRIPTION",
        ".nf",
        roff(comment),
        ".fi",
        ".SH SEE ALSO",
        (see + ", " if see else "") + "docs/library.md",
        "",
    ])


def main():
    src, build, out, version = sys.argv[1:5]
    inc = os.path.join(src, "include", "ibmcast")
    os.makedirs(out, exist_ok=True)
    libs = [("ibmcast.syms", "libibmcast", "ibmcast"),
            ("ibmcast-sim.syms", "libibmcast-sim", "ibmcast-sim")]
    headers = sorted(h for h in os.listdir(inc) if h.endswith(".h"))
    total = documented = 0
    missing = []
    lost = []
    for syms, lib, pc in libs:
        names = set(open(os.path.join(build, syms)).read().split())
        total += len(names)
        left = set(names)
        for h in headers:
            found = declarations(os.path.join(inc, h), left)
            for name, (decl, comment) in found.items():
                with open(os.path.join(out, name + ".3"), "w") as f:
                    f.write(page(name, decl, comment or
                                 "See <ibmcast/%s>." % h, h, lib, pc,
                                 version, found.keys()))
                if comment:
                    documented += 1
                else:
                    missing.append(name + " (no comment in %s)" % h)
            left -= set(found)
        lost += sorted(left)
    summary = ("pages %d, documented by a comment of their own %d, of %d "
               "exported functions" % (total - len(lost), documented, total))
    print(summary)
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write(summary + "\n")
        for m in missing:
            f.write("no comment: " + m + "\n")
        for m in lost:
            f.write("no declaration found: " + m + "\n")
            print("no declaration found: " + m)
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
