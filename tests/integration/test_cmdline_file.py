# SPDX-License-Identifier: BSD-3-Clause
"""cmdline_file: command files and app options, good and bad.

A bad line in a command file stops edgegw with a non-zero exit; stderr names
file:line and the problem; nothing the bad line said takes effect, and no
later line runs (the --stats-json written at exit shows the engine and port
role as the good line before it left them). A good file runs to exit 0.
Bad app options exit 2 with a message that names the option.

usage: test_cmdline_file.py EDGEGW
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402

# (bad line, what stderr must say about it)
BAD_LINES = [
    ("nosuchcommand 1 2", r"unknown command"),
    ("show port stats 9", r"port 9 does not exist"),
    ("set fwd nosuch", r"unknown engine 'nosuch'"),
    ("set fwd replay /nonexistent.pcap", r"replay: /nonexistent\.pcap"),
    ("set fwd io extra", r"takes no arguments"),
    ("help nosuchtopic", r"unknown topic 'nosuchtopic'"),
    ("show port stats abc", r"'abc' is not a port number"),
    ("show port xstats 7", r"port 7 does not exist"),
    ("port role 5 access", r"port 5 does not exist"),
    ("clear port stats 3", r"port 3 does not exist"),
    ("set fwd " + "x" * 592, r"longer than 511 characters"),
]

GOOD_FILE = """# a good command file: comments, blank lines, every read-only command
   # an indented comment

help
help ports
help all
show config
set fwd rxonly
show fwd stats
show port stats all
show port stats 0
show port xstats 0
clear port stats all
clear port stats 0
port role 0 uplink
port role 0 access
\tshow config
"""

BAD_OPTIONS = [
    (["--burst", "0"], r"--burst.*0.*range"),
    (["--burst", "500"], r"--burst.*500.*range"),
    (["--rxq", "abc"], r"--rxq.*'abc'.*not a number"),
    (["--nosuch"], r"--nosuch"),
    (["--idle-exit"], r"--idle-exit.*needs a value"),
    (["--stats-period", "-1"], r"--stats-period"),
    (["--forward-mode", "nosuch"], r"--forward-mode.*nosuch"),
]


def vdev(c, tag):
    return ["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (c.path("empty.pcap"),
                                                          c.path("out_%s.pcap" % tag))]


def run_file(c, binary, tag, text, extra=()):
    path = c.path("%s.cmd" % tag)
    with open(path, "w") as f:
        f.write(text)
    js = c.path("%s.json" % tag)
    rc, so, se = egwtest.run_edgegw(
        binary, egwtest.eal_args("cmdline_file") + vdev(c, tag),
        ["--cmdline-file", path, "--idle-exit", "100", "--stats-json", js] + list(extra),
        timeout=30)
    return path, rc, so, se, js


def state(c, js):
    s = egwtest.load_json(c, js)
    if s is None:
        return None, None
    return s["engine"], s["ports"][0]["role"]


def main():
    binary = sys.argv[1]
    c = egwtest.Checker("cmdline_file")
    egwtest.write_pcap(c.path("empty.pcap"), [])

    # 1. each bad line after a good one: exit != 0, file:2: and the problem, no change
    for i, (bad, want) in enumerate(BAD_LINES):
        print("- bad line %r" % (bad if len(bad) < 60 else bad[:40] + "...(%d chars)" % len(bad)))
        text = "set fwd rxonly\n%s\nport role 0 uplink\nset fwd mac\n" % bad
        path, rc, so, se, js = run_file(c, binary, "bad%d" % i, text)
        c.check(rc not in (0, None), "exit status is non-zero", "rc=%r" % rc)
        c.check((path + ":2:") in se, "stderr names %s:2:" % os.path.basename(path))
        c.check(re.search(want, se) is not None, "stderr says /%s/" % want)
        c.check(":3:" not in se and ":4:" not in se, "no later line ran (stderr)")
        c.check("Set rxonly packet forwarding mode" in so, "line 1 ran")
        eng, role = state(c, js)
        c.eq(eng, "rxonly", "engine after the bad line (JSON)")
        c.eq(role, "none", "port 0 role after the bad line (JSON)")
        if rc in (0, None) or not re.search(want, se):
            egwtest.show_output(so, se)

    # 2. a bad role keeps the role the previous line set
    print("- port role 0 access; port role 0 sideways")
    path, rc, so, se, js = run_file(c, binary, "role",
                                    "port role 0 access\nport role 0 sideways\nset fwd mac\n")
    c.check(rc not in (0, None), "exit status is non-zero", "rc=%r" % rc)
    c.check((path + ":2:") in se, "stderr names role.cmd:2:")
    c.check("sideways" in se, "stderr names the bad role 'sideways'")
    eng, role = state(c, js)
    c.eq(role, "access", "port 0 role is still access (JSON)")
    c.eq(eng, "io", "engine unchanged: line 3 did not run (JSON)")

    # the same file without the bad line, and 'show config' proves the role
    path, rc, so, se, js = run_file(c, binary, "role_ok",
                                    "port role 0 access\nshow config\n")
    c.eq(rc, 0, "port role 0 access; show config: exit status")
    c.check(re.search(r"port 0: .* role access", so) is not None,
            "show config says port 0 role access")

    # 3. a good file runs to the end and forwarding starts
    print("- good file")
    path, rc, so, se, js = run_file(c, binary, "good", GOOD_FILE)
    if not c.eq(rc, 0, "good command file: exit status"):
        egwtest.show_output(so, se)
    c.check("error" not in se, "good command file: no error on stderr", se.strip()[-300:])
    c.eq(so.count("edgegw configuration"), 2, "show config ran twice")
    c.check("set fwd replay <pcap>" in so and "port role <N>" in so, "help printed the commands")
    c.check("NIC statistics for port 0" in so, "show port stats printed")
    c.check("NIC extended statistics for port 0" in so, "show port xstats printed")
    c.check("Forwarding engine: rxonly" in so, "show fwd stats printed")
    c.check("forwarding started (engine rxonly)" in so, "forwarding started after the file")
    eng, role = state(c, js)
    c.eq(eng, "rxonly", "good file: engine (JSON)")
    c.eq(role, "access", "good file: port 0 role (JSON)")

    # 4. a missing command file
    rc, so, se = egwtest.run_edgegw(
        binary, egwtest.eal_args("cmdline_file") + vdev(c, "missing"),
        ["--cmdline-file", c.path("does-not-exist.cmd"), "--idle-exit", "100"], timeout=30)
    c.check(rc not in (0, None), "missing command file: exit status non-zero", "rc=%r" % rc)
    c.check("does-not-exist.cmd" in se, "missing command file: stderr names it")

    # 5. bad app options
    for opts, want in BAD_OPTIONS:
        rc, so, se = egwtest.run_edgegw(
            binary, egwtest.eal_args("cmdline_file") + vdev(c, "opt"), opts, timeout=30)
        c.eq(rc, 2, "option %s: exit status" % " ".join(opts))
        c.check(re.search(want, se) is not None,
                "option %s: stderr says /%s/" % (" ".join(opts), want),
                se.strip().splitlines()[-1] if se.strip() else "(empty stderr)")
    c.finish()


if __name__ == "__main__":
    main()
