#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""PPPoE sessions authenticated per second through FreeRADIUS, beside local
authentication, in the same run.

edgegw (xconnect, two net_tap ports radbA/radbU) and one FreeRADIUS
(`freeradius -f -X`-less: `-f` with the test's minimal configuration, on
127.0.0.1:18142/18143, detail accounting) on this machine. In each round,
in alternating order (AB, BA, ...):

  local   --clients new subscribers set up a session with `ppp auth pap`
          (the local table): PADI, PADR, LCP, PAP, IPCP open; a RADIUS
          server is configured, so each bound session still gets an
          Accounting Start and each cleared one a Stop;
  radius  the same with `ppp auth pap radius`: each PAP request becomes an
          Access-Request (Message-Authenticator, hidden password) too.

The subscribers are bench/pppoe_login_gen (C, one thread, one raw socket,
at most --inflight logins in progress at once; default all), or with
--gen python pppoeflood's Python clients, one thread each (their own limit
is a few hundred sessions/s). After each phase `pppoe session clear all`
and a wait until the table is empty and every Stop was answered. The
figure is sessions per second from the first PADI to the last IPCP open
(and, with the C generator, to the one that made 99 %); medians over
--rounds rounds. Each phase also prints the CPU edgegw, FreeRADIUS and the
clients used, the datagrams the kernel dropped at each process's UDP
sockets (full receive buffer) during set-up and during the clear, and
edgegw's RADIUS retransmissions: what limits the rate.

usage: radius_auth_rate.py EDGEGW [--clients N] [--rounds N] [--inflight K]
                          [--gen PATH|python]
(root, /dev/net/tun, freeradius; exit 77 without them).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import egwtest  # noqa: E402
import pppoeflood as pf  # noqa: E402
import pppoetest as pt  # noqa: E402
import test_radius as tr  # noqa: E402

IF_A, IF_U = "radbA", "radbU"
PORT = 18142


def cpu_s(pid):
    """User + system CPU seconds a process has used (/proc/PID/stat)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            w = f.read().rsplit(")", 1)[1].split()
        return (int(w[11]) + int(w[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def udp_rcvbuf_errors():
    """The kernel's count of UDP datagrams dropped for a full receive buffer."""
    with open("/proc/net/snmp") as f:
        rows = [ln.split() for ln in f if ln.startswith("Udp:")]
    return int(rows[1][rows[0].index("RcvbufErrors")])


def sock_drops(pids):
    """Datagrams dropped at each UDP socket of these processes (ss's skmem d)."""
    out = subprocess.run(["ss", "-uanmp"], stdout=subprocess.PIPE).stdout.decode()
    res = {}
    cur = None
    for ln in out.splitlines():
        m = re.search(r"pid=(\d+)", ln)
        if m:
            cur = int(m.group(1)) if int(m.group(1)) in pids else None
        d = re.search(r"skmem:\(.*\bd(\d+)\)", ln)
        if d and cur is not None:
            res[cur] = res.get(cur, 0) + int(d.group(1))
    return res


def radius_counts(e):
    cnt = pt.counters_from_text(e.run("show radius stats"))
    return {k: cnt.get(k, 0) for k in ("retransmits", "access_requests", "acct_requests")}


def clear_all(e, timeout):
    """End every session and wait until their Stops are answered."""
    e.run("pppoe session clear all")
    egwtest.wait_for(lambda: "0 sessions" in e.run("show pppoe sessions"), timeout)
    egwtest.wait_for(lambda: pt.counters_from_text(e.run("show radius stats")).get(
        "acct_stop_pending", 0) == 0, timeout)


def phase_c(e, gen, clients, inflight, base, mode, srv):
    """The same with bench/pppoe_login_gen (C, one thread, raw socket)."""
    e.run("ppp auth pap" if mode == "local" else "ppp auth pap radius")
    u0, r0 = udp_rcvbuf_errors(), radius_counts(e)
    pids = {e.e.p.pid: "edgegw", srv.p.pid: "freeradius"}
    s0 = sock_drops(pids)
    c0 = (cpu_s(e.e.p.pid), cpu_s(srv.p.pid), os.times())
    t0 = time.monotonic()
    p = subprocess.run([gen, IF_A, str(clients), "--base", "%x" % base, "--inflight",
                        str(inflight), "--timeout", "60"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    t2 = time.monotonic()
    c1 = (cpu_s(e.e.p.pid), cpu_s(srv.p.pid), os.times())
    # the answers still on the way come in before the count
    time.sleep(0.5)
    sm, rm = sock_drops(pids), radius_counts(e)
    out = p.stdout.decode(errors="replace").strip()
    if os.environ.get("EGW_GEN_DEBUG"):
        print(out)
    m = re.search(r"bound (\d+) of \d+ in ([\d.]+) s \(([\d.]+)/s\); 99% in [\d.]+ s "
                  r"\(([\d.]+)/s\); first-PADI-to-bound median (\d+) ms, p99 (\d+) ms; "
                  r"resent (\d+)", out)
    wall = max(t2 - t0, 1e-9)
    cpu = {"edgegw": (c1[0] - c0[0]) / wall, "freeradius": (c1[1] - c0[1]) / wall,
           "clients": (c1[2][2] + c1[2][3] - c0[2][2] - c0[2][3]) / wall}
    clear_all(e, 30)
    if m is None:
        return 0, 0.0, cpu, [out[-200:]], None
    r1 = radius_counts(e)
    s1 = sock_drops(pids)
    by = "set-up: " + ", ".join("%s %d" % (pids[k], sm.get(k, 0) - s0.get(k, 0))
                                for k in pids) + "; clear: " + \
        ", ".join("%s %d" % (pids[k], s1.get(k, 0) - sm.get(k, 0)) for k in pids)
    extra = {"rate99": float(m.group(4)), "median_ms": int(m.group(5)),
             "p99_ms": int(m.group(6)), "resent": int(m.group(7)), "udp_drops": udp_rcvbuf_errors() - u0,
             "radius_retransmits": rm["retransmits"] - r0["retransmits"],
             "radius_retransmits_clear": r1["retransmits"] - rm["retransmits"], "by": by}
    return int(m.group(1)), float(m.group(3)), cpu, [] if p.returncode == 0 else [out], extra


def phase(e, acc, clients, base, mode, srv):
    e.run("ppp auth pap" if mode == "local" else "ppp auth pap radius")
    macs = ["02:00:%02x:%02x:%02x:%02x" % ((base + i) >> 24 & 0xff, (base + i) >> 16 & 0xff,
                                           (base + i) >> 8 & 0xff, (base + i) & 0xff)
            for i in range(clients)]
    cl = [pf.Sub(acc, m, name="b%d" % i, user="bench%d" % (i % 1000), secret="bench-pw")
          for i, m in enumerate(macs)]
    c0 = (cpu_s(e.e.p.pid), cpu_s(srv.p.pid), os.times())
    t0 = time.monotonic()
    res = pf.connect_many(cl, t0 + 60, threads=clients)
    t2 = time.monotonic()
    c1 = (cpu_s(e.e.p.pid), cpu_s(srv.p.pid), os.times())
    ok = [r for r in res.values() if r["ok"]]
    t1 = max(r["t_bound"] for r in ok) if ok else t0
    rate = len(ok) / (t1 - t0) if ok else 0.0
    wall = max(t2 - t0, 1e-9)
    # CPU used over the phase, as a share of one CPU: edgegw (its worker
    # lcore busy-polls: about 1.0 of it is that), FreeRADIUS, the clients
    cpu = {"edgegw": (c1[0] - c0[0]) / wall, "freeradius": (c1[1] - c0[1]) / wall,
           "clients": (c1[2][0] + c1[2][1] - c0[2][0] - c0[2][1]) / wall}
    clear_all(e, 20)
    with acc.lock:
        for c in cl:
            acc.clients.pop(c.mac, None)
    bad = [r["err"] for r in res.values() if not r["ok"]]
    return len(ok), rate, cpu, bad[:3], None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("edgegw")
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gen", default=None,
                    help="the C login generator (default: bench/pppoe_login_gen beside "
                    "EDGEGW's build); 'python' for pppoetest's clients, one thread each")
    ap.add_argument("--inflight", type=int, default=0,
                    help="C generator: most logins in progress at once (default: all)")
    a = ap.parse_args()
    if a.gen is None:
        a.gen = os.path.join(os.path.dirname(os.path.abspath(a.edgegw)), "..", "..", "bench",
                             "pppoe_login_gen")
    if a.gen != "python" and not os.access(a.gen, os.X_OK):
        print("no login generator at %s (build it, or --gen python)" % a.gen)
        sys.exit(77)
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
         "radius max-outstanding 8192",
         "start"]
    e, ok = pt.start_edgegw(c, "radius_bench", a.edgegw, IF_A, IF_U, setup)
    rates = {"local": [], "radius": []}
    cpus = {"local": [], "radius": []}
    rates99 = {"local": [], "radius": []}
    try:
        if ok:
            acc = pt.Port(IF_A) if a.gen == "python" else None
            base = 0x100000
            for r in range(a.rounds):
                order = ("local", "radius") if r % 2 == 0 else ("radius", "local")
                for mode in order:
                    if a.gen == "python":
                        n, rate, cpu, bad, extra = phase(e, acc, a.clients, base, mode, srv)
                    else:
                        n, rate, cpu, bad, extra = phase_c(e, a.gen, a.clients, a.inflight,
                                                           base, mode, srv)
                    base += 0x10000
                    print("round %d %-6s %d/%d bound, %.1f sessions/s; CPU (1.0 = one CPU "
                          "over the phase): edgegw %.2f, freeradius %.2f, clients %.2f%s%s" %
                          (r + 1, mode, n, a.clients, rate, cpu["edgegw"],
                           cpu["freeradius"], cpu["clients"],
                           "; 99%% of them at %.1f/s; login median %d ms, p99 %d ms, "
                           "resent %d; UDP receive buffer drops %d (%s); RADIUS "
                           "retransmissions: set-up %d, clear %d" %
                           (extra["rate99"], extra["median_ms"], extra["p99_ms"],
                            extra["resent"],
                            extra["udp_drops"], extra["by"], extra["radius_retransmits"],
                            extra["radius_retransmits_clear"])
                           if extra else "",
                           "; failed: %s" % bad if bad else ""), flush=True)
                    if n == a.clients:
                        rates[mode].append(rate)
                        cpus[mode].append(cpu)
                        if extra:
                            rates99[mode].append(extra["rate99"])
            if acc is not None:
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
        if rates99["local"] and rates99["radius"]:
            lo, ra = statistics.median(rates99["local"]), statistics.median(rates99["radius"])
            print("RESULT99 (to 99%% of the clients) local %.1f sessions/s, radius %.1f "
                  "sessions/s, radius/local %.2f" % (lo, ra, ra / lo))
        for m in ("local", "radius"):
            print("CPU %s (medians, share of one CPU): edgegw %.2f, freeradius %.2f, clients "
                  "%.2f" % (m, statistics.median(x["edgegw"] for x in cpus[m]),
                            statistics.median(x["freeradius"] for x in cpus[m]),
                            statistics.median(x["clients"] for x in cpus[m])))
    c.check(bool(rates["local"]) and bool(rates["radius"]), "every round bound every client")
    c.finish()


if __name__ == "__main__":
    main()
