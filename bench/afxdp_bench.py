#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Frames per second into edgegw on net_af_xdp over a veth (with its XDP
steering program) beside net_tap, same run, same generator.

A second edgegw is the generator: `set fwd replay` of a capture at full speed
on a net_af_packet port (AF_PACKET on a kernel interface):
  af_xdp: generator on xdpgN -> veth -> xdpdN, where egw_xdp_steer redirects
          the frames to the DUT's AF_XDP socket (copy mode: veth has no
          zero-copy);
  tap:    generator on the kernel side of the DUT's tap xdptN -> net_tap.
The DUT runs the rxonly engine on an access port with a pool, so its figure
is what it receives: ethdev RX-packets sampled with `show port stats 0` over
SECS seconds after WARMUP. Traffic: PPPoE session frames (64 bytes on the
wire, IPv4/UDP inside) and plain IPv4/UDP to a pool address (64 bytes). The
DUT's worker runs on CPU 0, the generator's on CPU 1; the main lcores sleep.
ROUNDS rounds, the two drivers interleaved; the median and every round.

usage: sudo afxdp_bench.py EDGEGW EGW_XDP_BPF_O [SECS] [ROUNDS]
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
import egwtest  # noqa: E402
import pppoetest as pt  # noqa: E402

TAG = "%d" % (os.getpid() % 10000)
GEN, DUT, TAP = "xdpg" + TAG, "xdpd" + TAG, "xdpt" + TAG
WARMUP = 2


def sh(*cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).returncode


def captures(d):
    from scapy.all import Ether, IP, UDP, PPPoE, PPP, Raw, wrpcap
    dst = "02:00:00:00:dd:01"
    src = "02:00:00:00:aa:01"
    ppp, ip = [], []
    for i in range(256):
        f = Ether(dst=dst, src=src) / PPPoE(sessionid=1 + i % 16) / PPP(proto=0x0021) / IP(
            src="100.66.0.%d" % (2 + i % 200), dst="198.51.100.9") / UDP(sport=1000 + i, dport=9)
        ppp.append(f / Raw(bytes(max(0, 60 - len(f)))))
        g = Ether(dst=dst, src=src) / IP(src="198.51.100.9", dst="100.66.0.%d" % (2 + i % 200)) / \
            UDP(sport=1000 + i, dport=9)
        ip.append(g / Raw(bytes(max(0, 60 - len(g)))))
    paths = {"pppoe": os.path.join(d, "pppoe64.pcap"), "ipv4": os.path.join(d, "ipv4-64.pcap")}
    wrpcap(paths["pppoe"], ppp)
    wrpcap(paths["ipv4"], ip)
    return paths


class Quiet:
    def check(self, cond, what, detail=""):
        if not cond:
            print("  problem: %s %s" % (what, detail))
        return cond

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def log(self, m):
        pass


def port_count(e, what):
    out = e.run("show port stats 0")
    m = re.search(what + r":\s+(\d+)", out)
    return int(m.group(1)) if m else None


def one(binary, obj, driver, pcap, secs, d, k):
    c = Quiet()
    c.dir = tempfile.mkdtemp(dir=d)
    if driver == "af_xdp":
        sh("ip", "link", "add", GEN, "type", "veth", "peer", "name", DUT)
        for i in (GEN, DUT):
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % i)
            sh("ip", "link", "set", i, "up")
        dut_vdev = "net_af_xdp0,iface=%s,xdp_prog=%s" % (DUT, obj)
        gen_if = GEN
    else:
        dut_vdev = "net_tap0,iface=%s,mac=02:00:00:00:dd:01" % TAP
        gen_if = TAP
    dut = pt.Edgegw(c, "dut", binary,
                    ["-l", "0,1", "--main-lcore", "1", "--no-huge", "-m", "512", "--no-pci",
                     "--file-prefix", "egwbench_dut%s" % TAG, "--log-level=error",
                     "--vdev", dut_vdev],
                    ["set fwd rxonly", "port role 0 access", "pppoe pool add 100.66.0.0/24",
                     "start"], extra_app=["--mbufs", "16384"])
    gen = None
    rate = None
    try:
        if not egwtest.wait_for(lambda: not dut.alive() or "started" in dut.stdout().lower(), 20):
            print("  DUT did not start:\n" + dut.stdout()[-800:])
            return None
        if driver == "tap":
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % TAP)
            sh("ip", "link", "set", TAP, "up")
        gen = pt.Edgegw(c, "gen", binary,
                        ["-l", "1,0", "--main-lcore", "0", "--no-huge", "-m", "512", "--no-pci",
                         "--file-prefix", "egwbench_gen%s" % TAG, "--log-level=error",
                         "--vdev", "net_af_packet0,iface=%s" % gen_if],
                        ["set fwd replay %s port 0" % pcap, "start"])
        if not egwtest.wait_for(lambda: not gen.alive() or "started" in gen.stdout().lower(), 20):
            print("  generator did not start:\n" + gen.stdout()[-800:])
            return None
        time.sleep(WARMUP)
        ga, a, t0 = port_count(gen, "TX-packets"), port_count(dut, "RX-packets"), time.monotonic()
        time.sleep(secs)
        gb, b, t1 = port_count(gen, "TX-packets"), port_count(dut, "RX-packets"), time.monotonic()
        if None not in (a, b, ga, gb):
            rate = ((b - a) / (t1 - t0), (gb - ga) / (t1 - t0))
        if driver == "af_xdp":
            out = dut.run("show xdp")
            m = re.search(r"no_xsk\s+(\d+)", out)
            if m and int(m.group(1)) != 0:
                print("  note: %s frames found no socket" % m.group(1))
    finally:
        if gen is not None:
            gen.stop()
        dut.stop()
        sh("ip", "link", "del", GEN)
    return rate


def main():
    binary, obj = sys.argv[1], os.path.abspath(sys.argv[2])
    secs = float(sys.argv[3]) if len(sys.argv) > 3 else 5
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    if os.geteuid() != 0:
        print("SKIP: needs root")
        return 77
    d = tempfile.mkdtemp(prefix="egw-afxdp-bench-")
    caps = captures(d)
    res = {}
    for r in range(rounds):
        for traffic in ("pppoe", "ipv4"):
            for driver in (("af_xdp", "tap") if r % 2 == 0 else ("tap", "af_xdp")):
                rate = one(binary, obj, driver, caps[traffic], secs, d, r)
                res.setdefault((traffic, driver), []).append(rate)
                print("round %d %-6s %-7s %s" % (
                    r + 1, traffic, driver,
                    "DUT rx %.0f fps, generator tx %.0f fps" % rate if rate else "failed"),
                      flush=True)
    print("\nframes per second received by edgegw (rxonly), 64-byte frames, median of %d "
          "rounds (every round); the generator's transmit rate beside it" % rounds)
    for traffic in ("pppoe", "ipv4"):
        for driver in ("af_xdp", "tap"):
            v = [x for x in res[(traffic, driver)] if x]
            med = statistics.median([x[0] for x in v]) if v else 0
            gmed = statistics.median([x[1] for x in v]) if v else 0
            print("%-6s %-7s %10.0f  (%s)   generator %10.0f" % (
                traffic, driver, med, ", ".join("%.0f" % x[0] for x in v), gmed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
