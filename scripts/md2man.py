#!/usr/bin/env python3
"""Render the project's Markdown pages that are also man pages.

    md2man.py           write docs/man/NAME.SECTION for every page in PAGES
    md2man.py --check   exit 1 if a committed page differs from what it
                        would be written as (tests/tools/docs.sh)

The Markdown is the source and the man page is made from it, so the two
never say different things.  Only what docs/lvm.md uses is understood: a
title (# ...), sections (## ...), paragraphs, indented code blocks, "- "
lists (continued by indented lines), `code` and [text](link).
"""
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# source, name, section, the NAME line's description
PAGES = [
    ("docs/lvm.md", "lvmbcache", "7",
     "the bcache segment type of LVM (dm-bcache.ko)"),
]


def inline(text):
    """Escape for groff, `code` in bold, *emphasis* in italics, links as
    their text."""
    parts = text.replace("\\", "\\e").split("`")
    for n, part in enumerate(parts):
        if n % 2:
            parts[n] = "\\fB" + part + "\\fR"
        else:
            part = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", part)
            parts[n] = re.sub(r"\*([^*\s][^*]*)\*", r"\\fI\1\\fR", part)
    return "".join(parts)


def line_out(text):
    """A text line; one starting with . or ' would be a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


def render(lines, name, section, description):
    out = ['.TH %s %s "2026-12" "dm-bcache" "System Administration"'
           % (name.upper(), section),
           ".SH NAME", "%s \\- %s" % (name, description),
           ".SH DESCRIPTION"]
    para = []
    i = 0

    def flush():
        if para:
            out.append(".PP")
            out.extend(line_out(inline(p)) for p in para)
            para.clear()

    while i < len(lines):
        ln = lines[i].rstrip("\n")
        if ln.startswith("# "):
            i += 1
            continue
        if ln.startswith("## "):
            flush()
            out.append(".SH " + inline(ln[3:]).upper())
        elif ln.startswith("    "):
            flush()
            block = []
            while i < len(lines) and (lines[i].startswith("    ") or
                                      not lines[i].strip()):
                block.append(lines[i].rstrip("\n")[4:])
                i += 1
            while block and not block[-1]:
                block.pop()
            out += [".PP", ".RS", ".nf"]
            out += [line_out(b.replace("\\", "\\e")) for b in block]
            out += [".fi", ".RE"]
            continue
        elif ln.startswith("- "):
            flush()
            item = [ln[2:]]
            while (i + 1 < len(lines) and lines[i + 1].startswith("  ") and
                   not lines[i + 1].startswith("    ")):
                i += 1
                item.append(lines[i].strip())
            out += [".IP \\(bu 2"] + [line_out(inline(t)) for t in item]
        elif not ln.strip():
            flush()
        else:
            para.append(ln)
        i += 1
    flush()
    return "\n".join(out) + "\n"


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        sys.exit(__doc__)
    bad = 0
    for src, name, section, description in PAGES:
        with open(os.path.join(TOP, src)) as f:
            page = render(f.readlines(), name, section, description)
        dst = os.path.join(TOP, "docs/man", "%s.%s" % (name, section))
        if check:
            try:
                with open(dst) as f:
                    same = f.read() == page
            except OSError:
                same = False
            print("%s tools/docs/md2man/%s.%s" %
                  ("PASS" if same else "FAIL", name, section) +
                  ("" if same else " differs from " + src +
                   " (run scripts/md2man.py)"))
            bad += not same
        else:
            with open(dst, "w") as f:
                f.write(page)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
