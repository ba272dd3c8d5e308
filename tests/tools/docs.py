#!/usr/bin/env python3
"""The documentation's contracts, checked against the sources.

  render      docs/dm-bcache.rst renders with docutils without a warning
  ctr-errors  every error string the constructor can give (collected from
              dm-bcache/*.c, the option table and the core validation it
              passes through) is listed in the page's constructor section,
              and every string listed there exists in the source
  man         every tool has a man page naming each long option its --help
              lists, and an EXIT STATUS section

Prints "PASS|FAIL tools/docs/<case>" lines.
"""
import glob
import io
import os
import re
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RST = os.path.join(TOP, "docs", "dm-bcache.rst")
TOOLS = ["bcache_check", "bcache_dump", "bcache_export", "bcache_format",
         "bcache_probe", "bcache_tab", "bcache_writeback",
         "bcache_repair"]


def result(name, problems):
    if problems:
        for p in problems[:20]:
            print("FAIL tools/docs/%s %s" % (name, p))
        if len(problems) > 20:
            print("FAIL tools/docs/%s (%d more)" % (name, len(problems) - 20))
    else:
        print("PASS tools/docs/%s" % name)


def check_render():
    import docutils.core
    err = io.StringIO()
    docutils.core.publish_doctree(
        open(RST, encoding="utf-8").read(), source_path=RST,
        settings_overrides={"warning_stream": err, "report_level": 1,
                            "halt_level": 5})
    return [line for line in err.getvalue().splitlines() if line.strip()]


def literals(text):
    """The C string literals in @text, adjacent ones joined; a macro
    parameter between literals ("Invalid " n " value") becomes <option>."""
    text = re.sub(r'"\s+n\s+"', "<option>", text)
    return [m.replace('" "', "") for m in re.findall(r'"((?:[^"\\]|\\.)*)"', text)]


def source_errors():
    errs = set()
    for path in glob.glob(os.path.join(TOP, "dm-bcache", "*.c")):
        src = open(path, encoding="utf-8").read()
        # ti->error = ...; and *error = ...; (ternaries included)
        for m in re.finditer(r'(?:ti->error|\*error)\s*=\s*([^;]*);', src):
            errs.update(literals(m.group(1)))
        # parse_dev(..., "Error opening ... device")
        errs.update(re.findall(r'"(Error opening [a-z]+ device)"', src))
        # the damage classes' errors
        for m in re.finditer(r'\[BCH_DMG_[A-Z_]+\]\s*=\s*"([^"]*)"', src):
            errs.add(m.group(1))
        # the option table's errors
        for m in re.finditer(r'\.err_[a-z]+\s*=\s*([^,\n]*)', src):
            errs.update(literals(m.group(1)))
    # What the constructor passes through from the core: the superblock
    # validation (cache and origin) and the origin layout choice.
    for f in ("format/super.c", "format/origin.c"):
        src = open(os.path.join(TOP, "dm-bcache", "core", f),
                   encoding="utf-8").read()
        errs.update(re.findall(r'return "([^"]+)";', src))
    return {e for e in errs if e}


def documented_errors():
    text = open(RST, encoding="utf-8").read()
    start = text.index("compares the list with the source):")
    end = text.index("\n", text.index("Status\n======"))
    return set(re.findall(r"``([^`]+)``", text[start:end]))


def check_ctr_errors():
    src, doc = source_errors(), documented_errors()
    problems = ["not documented: %r" % e for e in sorted(src - doc)]
    # Literals in that section that are not errors (option names in the
    # prose) are allowed only if they appear nowhere as a string at all.
    prose = {d for d in doc if re.fullmatch(r"[a-z_]+", d)}
    problems += ["documented but not in the source: %r" % d
                 for d in sorted(doc - src - prose)]
    return problems, len(src)


def check_man():
    problems = []
    for tool in TOOLS:
        page = os.path.join(TOP, "docs", "man", tool + ".8")
        if not os.path.exists(page):
            problems.append("%s: no man page" % tool)
            continue
        man = open(page, encoding="utf-8").read().replace("\\-", "-")
        usage = subprocess.run(
            [os.path.join(TOP, "build", "user", tool), "--help"],
            capture_output=True, text=True).stdout
        for opt in sorted(set(re.findall(r"--[a-z][a-z_-]+", usage))):
            if opt not in man:
                problems.append("%s: %s is not in the man page" % (tool, opt))
        if ".SH EXIT STATUS" not in man:
            problems.append("%s: no EXIT STATUS section" % tool)
    return problems


def main():
    result("render", check_render())
    problems, n = check_ctr_errors()
    if n < 60:
        problems.append("only %d constructor errors found in the source" % n)
    result("ctr-errors", problems)
    result("man", check_man())


if __name__ == "__main__":
    sys.exit(main())
