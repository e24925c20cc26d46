#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""PPPoE sessions authenticated per second through FreeRADIUS, beside local
authentication, in the same run.

edgegw (xconnect, two net_tap ports radbA/radbU) and one FreeRADIUS
(`freeradius -f -X`-less: `-f` with the test's minimal configuration, on
127.0.0.1:18142/18143, detail accounting) on this machine. In each round,
in alternating order (AB, BA, ...):

  local   --clients new subscribers (pppoetest's client, one thread each,
          all at once) set up a session with `ppp auth pap` (the local
          table): PADI, PADR, LCP, PAP, IPCP open;
  radius  the same with `ppp auth pap radius`: each PAP request becomes an
          Access-Request (Message-Authenticator, hidden password), each
          bound session an Accounting Start, each cleared one a Stop.

After each phase `pppoe session clear all` and a wait until the table is
empty and every Stop was answered. The figure is sessions per second from
the first PADI to the last IPCP open; medians over --rounds rounds, and the
ratio radius/local of the same rounds.

usage: radius_auth_rate.py EDGEGW [--clients N] [--rounds N]
(root, /dev/net/tun, freeradius; exit 77 without them).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import egwtest  # noqa: E402
import pppoetest as pt  # noqa: E402
import test_radius as tr  # noqa: E402

IF_A, IF_U = "radbA", "radbU"
PORT = 18142


def phase(e, acc, clients, base, mode):
    e.run("ppp auth pap" if mode == "local" else "ppp auth pap radius")
    cl = [pt.Client(acc, "02:00:00:%02x:%02x:%02x" % (base >> 16 & 0xff, base >> 8 & 0xff,
                                                      (base + i) & 0xff),
                    name="b%d" % i, user="bench%d" % (i % 1000), secret="bench-pw")
          for i in range(clients)]
    res = [None] * clients
    t_end = [0.0] * clients

    def go(i):
        res[i] = cl[i].connect(auth="pap", ipv6=False)
        t_end[i] = time.monotonic()
    th = [threading.Thread(target=go, args=(i,)) for i in range(clients)]
    t0 = time.monotonic()
    for t in th:
        t.start()
    for t in th:
        t.join()
    ok = sum(1 for r in res if not r)
    rate = ok / (max(t_end) - t0) if ok else 0.0
    e.run("pppoe session clear all")
    egwtest.wait_for(lambda: "0 sessions" in e.run("show pppoe sessions"), 20)
    for c in cl:
        acc.clients.pop(c.mac, None)
    return ok, rate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("edgegw")
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    c = egwtest.Checker("radius_bench")
    pt.tap_env(c, (IF_A, IF_U))
    if shutil.which("freeradius") is None:
        c.skip("freeradius not installed")
    tr.USERS += "".join('bench%d Cleartext-Password := "bench-pw"\n' % i for i in range(1000))
    srv = tr.Radiusd(c, "bench", PORT)
    # -X logs every packet: the benchmark runs the server without it
    srv.p.kill()
    srv.p.wait()
    srv.p = subprocess.Popen(["freeradius", "-f", "-d", srv.dir], stdout=srv.out,
                             stderr=subprocess.STDOUT)
    time.sleep(2)
    setup = ["set fwd gateway xconnect", "port role 0 access", "port role 1 uplink",
             "pppoe pool add 100.64.0.0/16", "pppoe limit starting 4096",
             "pppoe limit padi 100000 10", "pppoe limit padr 100000 10",
             "pppoe keepalive 0 3"] + \
        ['ppp user add bench%d bench-pw' % i for i in range(1000)] + \
        ["radius server add 127.0.0.1:%d secret %s acct-port %d" % (PORT, tr.SECRET, PORT + 1),
         "start"]
    e, ok = pt.start_edgegw(c, "radius_bench", a.edgegw, IF_A, IF_U, setup)
    rates = {"local": [], "radius": []}
    try:
        if ok:
            acc = pt.Port(IF_A)
            base = 0x100000
            for r in range(a.rounds):
                order = ("local", "radius") if r % 2 == 0 else ("radius", "local")
                for mode in order:
                    n, rate = phase(e, acc, a.clients, base, mode)
                    base += a.clients
                    print("round %d %-6s %d/%d bound, %.1f sessions/s" %
                          (r + 1, mode, n, a.clients, rate), flush=True)
                    if n == a.clients:
                        rates[mode].append(rate)
            acc.close()
            print(e.run("show radius stats"))
    finally:
        e.stop()
        srv.stop()
        for i in (IF_A, IF_U):
            pt.sh("ip", "link", "del", i)
    if rates["local"] and rates["radius"]:
        lo, ra = statistics.median(rates["local"]), statistics.median(rates["radius"])
        print("RESULT clients %d rounds %d: local %.1f sessions/s, radius %.1f sessions/s, "
              "radius/local %.2f" % (a.clients, a.rounds, lo, ra, ra / lo))
    c.check(bool(rates["local"]) and bool(rates["radius"]), "every round bound every client")
    c.finish()


if __name__ == "__main__":
    main()
