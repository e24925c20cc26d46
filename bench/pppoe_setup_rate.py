#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""PPPoE session set-up rate without and during a discovery flood, same run.

edgegw (the DUT) runs the gateway engine (xconnect) on two net_tap ports
(egwflbA access, egwflbU uplink), PAP, default flood guard (`pppoe limit
padi|padr 2000 3`, `pppoe limit starting 256`). In each round:

  baseline  --clients new subscribers (pppoetest's client, one thread each,
            all at once) set up a session: PADI, PADR, LCP, PAP, IPCP open.
            A client repeats its PADI (PADR) every 0.34 s until it is
            answered: inside the per-MAC rate of 3/s, so a client's own
            retries are never what refuses it.
  flood     the same with new clients, while a second edgegw replays a
            capture of 1,000,000 PADI and PADR frames from random MACs
            (tests/integration/pppoeflood.py: half PADIs, four in ten PADRs
            with a made-up AC-Cookie, one in ten without one) at full speed
            through net_af_packet into the access tap's kernel side, in a
            loop, from 1 s before the first client starts until the last one
            is bound.

After each phase `pppoe session clear all` and a wait until the table is
empty. The figure is sessions per second, from the first client's first
PADI to the last client's IPCP open; beside it the baseline of the same
round and the ratio flood/baseline; medians over --rounds rounds (phases in
the order AB, BA, AB, ... so that drift does not favour one). Also printed:
the flood rate offered (frames the generator sent per second), the median
time to a session and the median number of PADIs and PADRs a client needed.

CPU placement (2 CPUs): the DUT's worker on CPU 1, its main lcore (the
control path) and both generator lcores on CPU 0, the Python clients
wherever the kernel puts them.

usage: pppoe_setup_rate.py EDGEGW [--clients N] [--rounds N] [--cmd LINE]...
(root, /dev/net/tun; exit 77 without them). About 1.5 minutes with the
defaults (200 clients, 3 rounds).
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import egwtest  # noqa: E402
import pppoeflood as pf  # noqa: E402
import pppoetest as pt  # noqa: E402
from pppoetest import MAC_A  # noqa: E402

NAME = "pppoe_setup_rate"
IF_A, IF_U = "egwflbA", "egwflbU"
FLOOD_FRAMES = 1000000
PHASE_MAX_S = 90
USER, SECRET = "sub", "sub-secret"
SETUP = [
    "set fwd gateway xconnect",
    "port role 0 access",
    "port role 1 uplink",
    "pppoe pool add 100.64.0.0/16",
    "ppp auth pap",
    "ppp user add %s %s" % (USER, SECRET),
    "start",
]


class Bench:
    def __init__(self, c, binary, clients, rounds, cmds=()):
        self.c = c
        self.cmds = list(cmds)
        self.binary = binary
        self.n = clients
        self.rounds = rounds
        self.e = self.gen = self.acc = None
        self.mac_seq = 0

    def clients(self):
        out = []
        for _ in range(self.n):
            i = self.mac_seq
            self.mac_seq += 1
            out.append(pf.Sub(self.acc, "02:00:30:%02x:%02x:%02x" % (i >> 16, (i >> 8) & 0xFF,
                                                                    i & 0xFF),
                              user=USER, secret=SECRET))
        return out

    def forget(self, subs):
        with self.acc.lock:
            for cl in subs:
                self.acc.clients.pop(cl.mac, None)
        self.acc.trim(lambda f: False)

    def clear(self):
        self.e.run("pppoe session clear all")
        ok = egwtest.wait_for(lambda: (pf.sessions_by_state(self.e) or (1,))[0] == 0, 20, 0.5)
        if not ok:
            print("warning: sessions left after 'pppoe session clear all': %s" %
                  (pf.sessions_by_state(self.e),), flush=True)
        # the guard's buckets refill in a second
        time.sleep(1.2)

    def phase(self, flood):
        subs = self.clients()
        g0 = gt0 = None
        if flood:
            g0 = self.gen.sent()
            self.gen.start()
            gt0 = time.monotonic()
            time.sleep(1.0)
        t0 = time.monotonic()
        res = pf.connect_many(subs, t0 + PHASE_MAX_S, threads=len(subs))
        rate_gen = None
        if flood:
            g1 = self.gen.sent()
            gt1 = time.monotonic()
            self.gen.stop()
            rate_gen = (g1 - g0) / (gt1 - gt0)
        ok = [r for r in res.values() if r["ok"]]
        bad = [r["err"] for r in res.values() if not r["ok"]]
        if ok:
            span = max(r["t_bound"] for r in ok) - min(r["t0"] for r in res.values())
        else:
            span = float("inf")
        out = {
            "ok": len(ok), "bad": bad, "rate": len(ok) / span if ok else 0.0,
            "t_med": statistics.median(r["t_bound"] - r["t0"] for r in ok) if ok else None,
            "padi_med": statistics.median(r["padi"] for r in ok) if ok else None,
            "padr_med": statistics.median(r["padr"] for r in ok) if ok else None,
            "padi_max": max(r["padi"] for r in ok) if ok else None,
            "padr_max": max(r["padr"] for r in ok) if ok else None,
            "gen_pps": rate_gen,
        }
        self.clear()
        self.forget(subs)
        return out

    def run(self):
        c = self.c
        pt.tap_env(c, (IF_A, IF_U))
        pcap = c.path("flood.pcap")
        pf.write_flood(pcap, FLOOD_FRAMES, MAC_A)
        setup = SETUP[:-1] + self.cmds + SETUP[-1:]
        self.e, up = pt.start_edgegw(c, NAME, self.binary, IF_A, IF_U, setup)
        rounds = []
        try:
            if not up:
                return 1
            self.acc = pf.LosslessPort(IF_A)
            self.gen = pf.Generator(c, self.binary, IF_A, pcap, "egw_bench_%s_gen" % NAME)
            if not c.check(self.gen.ok, "generator edgegw up"):
                return 1
            for r in range(self.rounds):
                order = (False, True) if r % 2 == 0 else (True, False)
                got = {}
                for flood in order:
                    got[flood] = self.phase(flood)
                    p = got[flood]
                    print("  round %d %-8s: %d/%d sessions, %.1f/s, median %.2f s to a session, "
                          "PADIs median %s max %s, PADRs median %s max %s%s" %
                          (r + 1, "flood" if flood else "baseline", p["ok"], self.n, p["rate"],
                           p["t_med"] or 0, p["padi_med"], p["padi_max"], p["padr_med"],
                           p["padr_max"], ", flood %.0f frames/s" % p["gen_pps"] if flood
                           else ""), flush=True)
                rounds.append(got)
        finally:
            if self.gen is not None:
                self.gen.quit()
            if self.acc is not None:
                self.acc.close()
            rc = self.e.stop()
        self.report(rounds)
        failed = [(i + 1, f) for i, got in enumerate(rounds) for f, p in got.items()
                  if p["ok"] != self.n]
        if failed or rc != 0:
            print("error: clients without a session (round, flood): %s; edgegw exit %s" %
                  (failed, rc))
            return 1
        return 0

    def report(self, rounds):
        if not rounds:
            return
        print()
        print("PPPoE session set-up rate (PADI to IPCP open, PAP), %d clients at once, "
              "retries every 0.34 s, %s" % (self.n, "; ".join(self.cmds) or
                                             "default flood guard"))
        print("%-7s %14s %14s %8s %16s %12s %12s" % ("round", "baseline /s", "flood /s",
                                                    "ratio", "flood frames/s",
                                                    "flood med s", "PADI+PADR"))
        for i, got in enumerate(rounds):
            b, f = got[False], got[True]
            print("%-7d %14.1f %14.1f %8.3f %16.0f %12.2f %12s" %
                  (i + 1, b["rate"], f["rate"], f["rate"] / b["rate"] if b["rate"] else 0,
                   f["gen_pps"], f["t_med"] or 0, "%s+%s" % (f["padi_med"], f["padr_med"])))
        mb = statistics.median(g[False]["rate"] for g in rounds)
        mf = statistics.median(g[True]["rate"] for g in rounds)
        mr = statistics.median(g[True]["rate"] / g[False]["rate"] for g in rounds
                               if g[False]["rate"])
        mg = statistics.median(g[True]["gen_pps"] for g in rounds)
        print("%-7s %14.1f %14.1f %8.3f %16.0f" % ("median", mb, mf, mr, mg))
        print("ratio = flood / baseline of the same round (median of the rounds' ratios); "
              "baseline: no flood, same clients, same run")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("edgegw")
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cmd", action="append", default=[],
                    help="a command for the DUT before 'start' (e.g. \"pppoe limit padr "
                    "1000000 3\"), repeatable")
    a = ap.parse_args()
    c = egwtest.Checker(NAME)
    from scapy.all import conf
    conf.verb = 0
    rc = Bench(c, a.edgegw, a.clients, a.rounds, a.cmd).run()
    if rc != 0:
        print("[%s] inputs and outputs kept in %s" % (NAME, c.tmp))
        sys.exit(rc)
    import shutil
    shutil.rmtree(c.tmp, ignore_errors=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
