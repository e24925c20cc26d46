#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""What an XDP program costs the kernel's own traffic, native (driver) mode
against generic (SKB) mode, measured end to end in one run.

A veth pair: xdpaN in the root namespace with the kernel's 10.77.0.1/24,
xdpbN in a namespace with 10.77.0.2/24. The namespace sends to the kernel's
address (kernel-bound traffic, as on a NIC shared with edgegw), with one of
these on xdpaN, attached by `bench_xdp attach` (libbpf bpf_xdp_attach with
XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE):
  none            no program
  pass/native     egw_xdp_pass.bpf.o (XDP_PASS, nothing else), driver mode
  pass/generic    the same, generic mode
  steer/native    egw_xdp_steer taken over by lib/xdp, maps as bench_xdp's
                  "bng" (64+64 pools, 4+4 own addresses): the frames leave
                  at the pre-check
  steer/generic   the same, generic mode
  steer+route/... the same with a default route through edgegw: every IPv4
                  frame meets the address, pool and route lookups and the
                  kernel-address check
Two loads:
  UDP   64-byte IPv4/UDP frames sent at full speed from the namespace by
        `bench_xdp flood` (AF_PACKET, sendmmsg) pinned to CPU 0, FRAMES a
        run. A veth's receive path (XDP included) runs on the sending CPU,
        right after each send, so the run's length is send + receive; the
        figure is the frames the kernel's UDP layer took (InDatagrams +
        RcvbufErrors of the root namespace: a bound socket nobody reads)
        per second of the run. Other load on the machine only slows a run
        down, so the best of REPS runs is the figure, beside the median.
  TCP   iperf3 TCP for SECS seconds, client on CPU 0, server on CPU 1: the
        receiver's bit rate (median), noisy, for what GSO does (below).
ROUNDS rounds, the configurations interleaved in each (each round starting
at the next one). The ratio is the median over the rounds of a
configuration's figure over "none"'s in the same round (UDP: the best run
of each in the round), which holds while the machine's load drifts.

usage: sudo xdp_mode_bench.py BENCH_XDP EGW_XDP_BPF_O EGW_XDP_PASS_BPF_O [SECS] [ROUNDS]
       [FRAMES] [REPS]
"""
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

TAG = "%d" % (os.getpid() % 10000)
A, B, NS = "xdpa" + TAG, "xdpb" + TAG, "xdpmns" + TAG
KADDR, PADDR = "10.77.0.1", "10.77.0.2"
PORT = "5297"


def sh(*cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return r.returncode, r.stdout.decode(errors="replace")


def ns(*cmd):
    return ["nsenter", "--net=/run/netns/" + NS, "--"] + list(cmd)


def setup():
    cleanup()
    for cmd in (["ip", "netns", "add", NS],
                ["ip", "link", "add", A, "type", "veth", "peer", "name", B],
                ["ip", "link", "set", B, "netns", NS],
                ["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % A],
                ["ip", "addr", "add", KADDR + "/24", "dev", A],
                ["ip", "link", "set", A, "up"],
                ns("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % B),
                ns("ip", "addr", "add", PADDR + "/24", "dev", B),
                ns("ip", "link", "set", "lo", "up"),
                ns("ip", "link", "set", B, "up")):
        rc, out = sh(*cmd)
        if rc != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd), out.strip()))


def cleanup():
    sh("ip", "link", "del", A)
    sh("ip", "netns", "del", NS)


class Attached:
    def __init__(self, helper, obj, mode, route):
        args = [helper, "attach", A, obj, mode] + (["route"] if route else [])
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)
        line = self.p.stdout.readline().decode()
        if not line.startswith("attached"):
            rest = self.p.stdout.read().decode() if self.p.poll() is not None else ""
            raise RuntimeError("bench_xdp attach %s %s: %s%s" % (obj, mode, line, rest))

    def close(self):
        self.p.stdin.close()
        self.p.wait(10)


def iperf(udp, secs):
    srv = subprocess.Popen(["iperf3", "-s", "-1", "-B", KADDR, "-p", PORT, "-A", "1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    args = ["iperf3", "-c", KADDR, "-p", PORT, "-t", str(secs), "-A", "0", "-J"]
    if udp:
        args += ["-u", "-b", "0", "-l", "64"]
    rc, out = sh(*ns(*args))
    try:
        srv.wait(5)
    except subprocess.TimeoutExpired:
        srv.kill()
    try:
        end = json.loads(out)["end"]
        if udp:
            s = end["sum"]
            return (s["packets"] - s["lost_packets"]) / s["seconds"]
        return end["sum_received"]["bits_per_second"]
    except (ValueError, KeyError, ZeroDivisionError):
        return None


def udp_counters():
    """InDatagrams + RcvbufErrors of the root namespace's UDP."""
    with open("/proc/net/snmp") as f:
        lines = [ln.split() for ln in f if ln.startswith("Udp:")]
    d = dict(zip(lines[0][1:], (int(x) for x in lines[1][1:])))
    return d["InDatagrams"] + d["RcvbufErrors"]


def flood(helper, mac, frames):
    """Frames the kernel took per second of one flood run."""
    c0 = udp_counters()
    rc, out = sh(*ns("taskset", "-c", "0", helper, "flood", B, mac, PADDR, KADDR, PORT,
                     str(frames)))
    c1 = udp_counters()
    m = re.match(r"(\d+) frames (\d+) ns", out)
    if rc != 0 or m is None or int(m.group(2)) == 0:
        return None
    return (c1 - c0) * 1e9 / int(m.group(2))


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    helper, steer, passobj = sys.argv[1:4]
    secs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    frames = int(sys.argv[6]) if len(sys.argv) > 6 else 200000
    reps = int(sys.argv[7]) if len(sys.argv) > 7 else 5
    if os.geteuid() != 0:
        print("SKIP: needs root (veth, namespaces, XDP)")
        return 77
    if sh("which", "iperf3")[0] != 0:
        print("SKIP: iperf3 is not installed")
        return 77
    configs = [("none", None, None, False),
               ("pass/native", passobj, "native", False),
               ("pass/generic", passobj, "generic", False),
               ("steer/native", steer, "native", False),
               ("steer/generic", steer, "generic", False),
               ("steer+route/native", steer, "native", True),
               ("steer+route/generic", steer, "generic", True)]
    res = {c[0]: {"udp": [], "tcp": []} for c in configs}
    # per round: best UDP run and the TCP figure of each configuration
    per = [dict() for _ in range(rounds)]
    sink = None
    try:
        setup()
        mac = open("/sys/class/net/%s/address" % A).read().strip()
        # the frames' destination: a socket nobody reads (its queue full,
        # the rest counted as RcvbufErrors, after the whole UDP input path)
        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sink.bind((KADDR, int(PORT)))
        for r in range(rounds):
            # each round starts at another configuration: no order bias
            for name, obj, mode, route in configs[r % len(configs):] + configs[:r % len(configs)]:
                a = Attached(helper, obj, mode, route) if obj else None
                try:
                    for _ in range(reps):
                        v = flood(helper, mac, frames)
                        if v is not None:
                            res[name]["udp"].append(v)
                    v = iperf(False, secs)
                    if v is not None:
                        res[name]["tcp"].append(v)
                    per[r][name] = (max(res[name]["udp"][-reps:] or [0]), v or 0)
                finally:
                    if a:
                        a.close()
                print("  round %d %-20s udp best %s tcp %s" % (
                    r + 1, name,
                    "%.0f pps" % max(res[name]["udp"][-reps:]) if res[name]["udp"] else "-",
                    "%.2f Gbit/s" % (res[name]["tcp"][-1] / 1e9) if res[name]["tcp"] else "-"),
                    flush=True)
    finally:
        if sink is not None:
            sink.close()
        cleanup()

    def med(v):
        return statistics.median(v) if v else 0.0

    def ratios(name, i):
        # a run that failed (0) is left out, not counted as a ratio of 0
        return [p[name][i] / p["none"][i] for p in per
                if name in p and "none" in p and p["none"][i] > 0 and p[name][i] > 0]

    print("kernel-bound traffic into a veth with an XDP program on its receiving end: UDP "
          "64 B, best and median of %d runs of %d frames; TCP median of %d runs of %d s "
          "(range); ratio: median over the %d rounds of the figure over no program's in the "
          "same round (range)" % (rounds * reps, frames, rounds, secs, rounds))
    print("%-20s %8s %8s %18s %8s %22s %18s" % ("program/mode", "UDP kpps", "median",
                                               "UDP ratio", "ns/frame", "TCP, Gbit/s",
                                               "TCP ratio"))
    for name, _, _, _ in configs:
        u, t = res[name]["udp"], res[name]["tcp"]
        ru, rt = ratios(name, 0), ratios(name, 1)
        mu = med(ru)
        best_none = max(res["none"]["udp"] or [0])
        print("%-20s %8.0f %8.0f %6.2f (%4.2f-%4.2f) %8.0f %6.2f (%5.2f-%5.2f) "
              "%6.2f (%4.2f-%4.2f)" % (
                  name, max(u or [0]) / 1e3, med(u) / 1e3, mu, min(ru or [0]), max(ru or [0]),
                  (1e9 / (best_none * mu) - 1e9 / best_none) if mu and best_none else 0,
                  med(t) / 1e9, min(t or [0]) / 1e9, max(t or [0]) / 1e9,
                  med(rt), min(rt or [0]), max(rt or [0])))
    print("ns/frame: what the program and its mode add to a frame's send + receive, from "
          "the UDP ratio and no program's best run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
