# SPDX-License-Identifier: BSD-3-Clause
"""docs_help: every command syntax that `help all` prints is documented.

edgegw runs a command file with `help all`; the first column of each help
line (printed as "  %-42s %s") is a command syntax, which must appear
verbatim, in backticks, in docs/usage.md. (Inside a Markdown table row the
form with escaped pipes, `a\\|b`, is accepted too, since GFM needs it there.)
`help` without a topic must list the same commands.

usage: test_docs_help.py EDGEGW DOCS/usage.md [app/edgegw/cli.c]
The cli.c argument is only used to split help lines whose syntax is 42
characters or longer (then the column has no padding to split on).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402

COL = 42


def table_syntaxes(cli_c):
    try:
        with open(cli_c) as f:
            src = f.read()
    except OSError:
        return []
    m = re.search(r"egw_cli_help_table\[\]\s*=\s*\{(.*?)\{NULL", src, re.S)
    if m is None:
        return []
    # adjacent string literals (clang-format splits long ones) are one string
    body = re.sub(r'"\s*\n\s*"', "", m.group(1))
    return re.findall(r'\{\s*"[^"]*",\s*"([^"]*)"', body)


def help_syntaxes(c, out, known):
    """The syntax of every help line. A syntax shorter than COL is padded to
    COL and followed by its text ("  %-42s %s"); a longer one stands alone on
    its line and its text follows on the next, indented past the column."""
    res = []
    out = out.split("edgegw: final statistics")[0]  # 'quit' prints the counters
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("  ") or line.startswith("   "):
            continue
        s = line[2:]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt.startswith(" " * (COL + 2)) and nxt.strip():
            syntax = s.rstrip()
            c.check(len(syntax) >= COL, "a syntax alone on its line is long", syntax)
            res.append(syntax)
        elif len(s) > COL and s[COL] == " ":
            res.append(s[:COL].rstrip())
    return res


def documented(doc, syntax):
    if ("`%s`" % syntax) in doc:
        return "verbatim"
    esc = "`%s`" % syntax.replace("|", "\\|")
    if "|" in syntax and any(line.lstrip().startswith("|") and esc in line
                             for line in doc.splitlines()):
        return "in a table, pipes escaped"
    return None


def main():
    binary, usage_md = sys.argv[1], sys.argv[2]
    known = table_syntaxes(sys.argv[3]) if len(sys.argv) > 3 else []
    c = egwtest.Checker("docs_help")
    egwtest.write_pcap(c.path("empty.pcap"), [])
    outs = {}
    for tag, text in (("all", "help all\nquit\n"), ("plain", "help\nquit\n")):
        path = c.path("%s.cmd" % tag)
        with open(path, "w") as f:
            f.write(text)
        rc, so, se = egwtest.run_edgegw(
            binary, egwtest.eal_args("docs_help") +
            ["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (c.path("empty.pcap"),
                                                           c.path("out.pcap"))],
            ["--cmdline-file", path], timeout=30)
        if not c.eq(rc, 0, "edgegw with '%s': exit status" % text.splitlines()[0]):
            egwtest.show_output(so, se)
        outs[tag] = so
    syn = help_syntaxes(c, outs["all"], known)
    print("  help all lists %d commands" % len(syn))
    c.check(len(syn) >= 10, "help all lists the commands", "%d found" % len(syn))
    c.eq(help_syntaxes(c, outs["plain"], known), syn,
         "'help' lists the same commands as 'help all'")
    if known:
        c.eq(sorted(syn), sorted(known), "help all prints every entry of egw_cli_help_table")

    if not c.check(os.path.isfile(usage_md), "docs/usage.md exists", usage_md):
        c.finish()
    with open(usage_md) as f:
        doc = f.read()
    for s in syn:
        how = documented(doc, s)
        c.check(how is not None, "docs/usage.md documents `%s`" % s,
                how or "not found in backticks")
    c.finish()


if __name__ == "__main__":
    main()
