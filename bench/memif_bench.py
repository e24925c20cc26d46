#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Helper of bench/memif_throughput.sh: its inputs (route table, captures,
l3fwd's route files), the rate sampler and the report.

  memif_bench.py version
  memif_bench.py table  <out.txt> <n> <gateway> <seed>
  memif_bench.py pcap   <out.pcap> <table.txt> <size> <frames> <dst-mac> <src-mac> <src-ip> <seed>
  memif_bench.py l3fwd-routes <out-v4.cfg> <out-v6.cfg> <table.txt> <max-routes> <max-long-blocks> <port> <seed>
  memif_bench.py sample <file-prefix> <warmup-s> <secs> <out.json>
  memif_bench.py report <outdir> <warmup-s> <secs> <sizes> <engines> <rounds> <max-runnable> <c2c-near-ns>

table: <n> IPv4 prefixes as bench/bench_ip.c makes them (gen4): 60% /24,
10% /22-/23, 25% /16-/21, 5% /25-/32, uniform over the unicast space, the
/25-/32s inside 12,000 random /24s (each /24 holding one takes a DIR24_8 tbl8
group), never inside the two connected networks of the benchmark
(192.0.2.0/24, 198.51.100.0/24); one line per prefix, "a.b.c.d/len via
<gateway>", the format of edgegw's `ip route load`.

pcap: <frames> UDP/IPv4 frames of <size> bytes on the wire (FCS included, as
pktgen counts: the frame in the capture is 4 bytes shorter), each to a random
address inside a random prefix of the table (as bench_ip's dests_make), TTL
64, header checksum right, UDP checksum 0, source ports 1024..1087.

l3fwd-routes: route files for DPDK's examples/l3fwd --rule_ipv4/--rule_ipv6
(LPM and FIB modes; lines "R<prefix> <port>"). l3fwd 22.11 cannot hold the
whole table (its sizes are compiled in: LPM 1,024 rules and 256 tbl8 groups,
FIB 65,536 routes), so the file is the closest it can hold: 0.0.0.0/1 and
128.0.0.0/1 to <port> (every destination of the capture has a route), one
prefix of the table inside each of up to <max-long-blocks> of the /24s that
hold prefixes longer than /24 (those /24s take the second lookup level, as
in edgegw's FIB), then prefixes of the table in random order up to
<max-routes> in all. The IPv6 file has one route (l3fwd needs both files).

sample: reads the DUT's ethdev counters over DPDK telemetry
(/var/run/dpdk/<file-prefix>/dpdk_telemetry.v2, /ethdev/stats): waits (at
most 10 s) until both ports' links are up and (at most 20 s) until port 1
transmits, then <warmup-s> seconds, then one sample
a second for <secs> seconds; also samples the runnable tasks of
/proc/loadavg (the two busy workers and this sampler make 3). Exit 3 if no
traffic came.

report: the table of the runs of memif_throughput.sh and results.tsv.
"""
import json
import os
import random
import socket
import statistics
import struct
import sys
import time

INPUTS_VERSION = 1   # bump when table, pcap or l3fwd-routes make other files

LEN_W = [(16, 300), (17, 200), (18, 300), (19, 500), (20, 600), (21, 600),
         (22, 500), (23, 500), (24, 6000), (25, 50), (26, 50), (27, 50),
         (28, 50), (29, 100), (30, 100), (31, 20), (32, 80)]
LONG_BLOCKS = 12000
CONNECTED = (0xc0000200, 0xc6336400)   # 192.0.2.0/24, 198.51.100.0/24


def rand_unicast4(rng):
    while True:
        a = rng.getrandbits(32)
        top = a >> 24
        if top != 0 and top != 127 and top < 224 and (a & 0xffffff00) not in CONNECTED:
            return a


def mask(length):
    return (0xffffffff << (32 - length)) & 0xffffffff if length else 0


def ntoa(a):
    return socket.inet_ntoa(struct.pack("!I", a))


def gen_table(n, seed):
    rng = random.Random(seed)
    cum, acc = [], 0
    for length, w in LEN_W:
        acc += w
        cum.append((length, acc))
    blocks = [rand_unicast4(rng) & 0xffffff00 for _ in range(LONG_BLOCKS)]
    seen, table = set(), []
    while len(table) < n:
        w = rng.randrange(10000)
        length = next(ln for ln, upto in cum if w < upto)
        if length > 24:
            a = rng.choice(blocks) | rng.getrandbits(8)
        else:
            a = rand_unicast4(rng)
        a &= mask(length)
        key = (a << 6) | length
        if key in seen:
            continue
        seen.add(key)
        table.append((a, length))
    return table


def read_table(path):
    table = []
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            addr, length = line.split()[0].split("/")
            table.append((struct.unpack("!I", socket.inet_aton(addr))[0], int(length)))
    return table


def cmd_table(out, n, gw, seed):
    table = gen_table(int(n), int(seed))
    with open(out, "w") as f:
        f.write("# %d IPv4 prefixes, bench/memif_bench.py table (seed %s)\n" % (len(table), seed))
        for a, length in table:
            f.write("%s/%d via %s\n" % (ntoa(a), length, gw))


def csum(hdr):
    s = sum(struct.unpack("!10H", hdr))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def cmd_pcap(out, table_path, size, frames, dst_mac, src_mac, src_ip, seed):
    size, frames = int(size), int(frames)
    flen = size - 4
    if flen < 42 or flen > 2044:
        sys.exit("frame size %d out of range 46..2048 (mbuf data room)" % size)
    table = read_table(table_path)
    rng = random.Random(int(seed))
    eth = (bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", "")) +
           b"\x08\x00")
    src = socket.inet_aton(src_ip)
    ip_len = flen - 14
    pad = bytes(flen - 42)
    rec = struct.pack("<IIII", 0, 0, flen, flen)
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i in range(frames):
            while True:
                a, length = table[rng.randrange(len(table))]
                d = a | (rng.getrandbits(32) & ~mask(length) & 0xffffffff)
                if (d & 0xffffff00) not in CONNECTED:
                    break
            hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, i & 0xffff, 0, 64, 17, 0,
                              src, struct.pack("!I", d))
            hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
            udp = struct.pack("!HHHH", 1024 + i % 64, 9, ip_len - 20, 0)
            f.write(rec)
            f.write(eth + hdr + udp + pad)


def cmd_l3fwd_routes(out4, out6, table_path, max_routes, max_blocks, port, seed):
    max_routes, max_blocks = int(max_routes), int(max_blocks)
    table = read_table(table_path)
    rng = random.Random(int(seed))
    order = list(range(len(table)))
    rng.shuffle(order)
    chosen = [(0, 1), (0x80000000, 1)]
    taken, blocks = set(), set()
    for i in order:                       # one long prefix per /24 that has any
        a, length = table[i]
        if len(blocks) >= max_blocks or len(chosen) >= max_routes:
            break
        if length > 24 and (a >> 8) not in blocks:
            blocks.add(a >> 8)
            chosen.append((a, length))
            taken.add(i)
    for i in order:                       # then the table, in random order
        if len(chosen) >= max_routes:
            break
        if i not in taken:
            chosen.append(table[i])
    with open(out4, "w") as f:
        f.write("# l3fwd --rule_ipv4: %d routes (%d /24s holding longer prefixes) of the %d of "
                "%s, bench/memif_bench.py l3fwd-routes\n"
                % (len(chosen), len(blocks), len(table), os.path.basename(table_path)))
        for a, length in chosen:
            f.write("R%s/%d %s\n" % (ntoa(a), length, port))
    with open(out6, "w") as f:
        f.write("R2001:db8::/32 %s\n" % port)
    print("%d %d" % (len(chosen), len(blocks)))


# ---- telemetry sampler ----------------------------------------------------

class Telemetry:
    def __init__(self, prefix, timeout=10.0):
        path = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
        end = time.monotonic() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.monotonic() > end:
                    raise
                time.sleep(0.2)
        banner = json.loads(self.s.recv(16384).decode())
        self.max_len = banner.get("max_output_len", 16384)

    def get(self, cmd):
        self.s.send(cmd.encode())
        reply = json.loads(self.s.recv(self.max_len).decode())
        return reply[cmd.split(",")[0]]


def runnable():
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[0])


def cmd_sample(prefix, warmup, secs, out):
    warmup, secs = float(warmup), int(secs)
    try:
        tel = Telemetry(prefix)
    except OSError as e:
        sys.exit("sampler: no telemetry socket of %s: %s" % (prefix, e))

    def snap():
        p0, p1 = tel.get("/ethdev/stats,0"), tel.get("/ethdev/stats,1")
        return dict(t=time.monotonic(), rx0=p0["ipackets"], tx1=p1["opackets"],
                    tx0=p0["opackets"], miss0=p0["imissed"] + p0["ierrors"],
                    run=runnable())

    # both links up: with two zero-copy memif clients in one process DPDK
    # 22.11 can send a closed file descriptor for the second one (see
    # docs/perf.md), which then never comes up
    end = time.monotonic() + 10
    while True:
        links = [tel.get("/ethdev/link_status,%d" % p).get("status") for p in (0, 1)]
        if links == ["UP", "UP"]:
            break
        if time.monotonic() > end:
            print("sampler: DUT memif links not up after 10 s: port 0 %s, port 1 %s"
                  % tuple(links), file=sys.stderr)
            sys.exit(3)
        time.sleep(0.1)
    first = snap()
    end = first["t"] + 20
    while True:
        s = snap()
        if s["tx1"] > first["tx1"]:
            break
        if s["t"] > end:
            links = {}
            for p in (0, 1):
                try:
                    links[p] = tel.get("/ethdev/link_status,%d" % p)
                except (OSError, KeyError, ValueError):
                    links[p] = "?"
            print("sampler: no frame left the DUT's port 1 in 20 s (port 0 received %d); "
                  "DUT links: %s" % (s["rx0"], links), file=sys.stderr)
            sys.exit(3)
        time.sleep(0.1)
    start = s["t"] + warmup
    samples = []
    for k in range(secs + 1):
        delay = start + k - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        samples.append(snap())
    rates = [(b["tx1"] - a["tx1"]) / (b["t"] - a["t"]) for a, b in zip(samples, samples[1:])]
    a, b = samples[0], samples[-1]
    res = dict(samples=samples, rates=rates,
               mpps=(b["tx1"] - a["tx1"]) / (b["t"] - a["t"]) / 1e6,
               rx_mpps=(b["rx0"] - a["rx0"]) / (b["t"] - a["t"]) / 1e6,
               back0=b["tx0"] - a["tx0"], lost=(b["rx0"] - a["rx0"]) - (b["tx1"] - a["tx1"]) -
               (b["tx0"] - a["tx0"]), runnable_max=max(x["run"] for x in samples),
               runnable_median=statistics.median(x["run"] for x in samples))
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


# ---- report ---------------------------------------------------------------

def placement(path, near):
    """(before, after, state) of a run's core-to-core round trips."""
    try:
        v = [float(x) for x in open(path).read().split()]
    except (OSError, ValueError):
        v = []
    if len(v) != 2 or min(v) <= 0:
        return (v + [0, 0])[:2] + ["?"]
    if max(v) < near:
        return v + ["near"]
    if min(v) >= near:
        return v + ["far"]
    return v + ["mixed"]


def cmd_report(out, warmup, secs, sizes, engines, reps, max_runnable, near):
    secs, reps, max_runnable, near = int(secs), int(reps), int(max_runnable), float(near)
    sizes, engines = sizes.split(), engines.split()
    runs, bad = {}, False
    for size in sizes:
        for rnd in range(1, reps + 1):
            for eng in engines:
                tag = "%s-%s-%d" % (size, eng, rnd)
                try:
                    s = json.load(open("%s/%s.samples.json" % (out, tag)))
                except (OSError, ValueError) as e:
                    print("%s: no samples: %s" % (tag, e), file=sys.stderr)
                    bad = True
                    continue
                r = dict(size=size, engine=eng, round=rnd, mpps=s["mpps"], rx_mpps=s["rx_mpps"],
                         back0=s["back0"], lost=s["lost"], run_max=s["runnable_max"],
                         run_med=s["runnable_median"], busy=None,
                         c2c=placement("%s/%s.c2c" % (out, tag), near),
                         samples=" ".join("%.3f" % (v / 1e6) for v in s["rates"]))
                if len(s["rates"]) < secs:
                    print("%s: only %d of %d samples" % (tag, len(s["rates"]), secs),
                          file=sys.stderr)
                    bad = True
                fwd = s["mpps"] * 1e6 * secs
                if s["lost"] > 0.01 * fwd:
                    print("%s: %d frames received but not sent in the window (%.1f%%): the "
                          "DUT's TX ring was full, the generator's sink is what was measured"
                          % (tag, s["lost"], 100.0 * s["lost"] / fwd if fwd else 100.0),
                          file=sys.stderr)
                if s["back0"]:
                    print("%s: %d frames went back out of port 0 (no route to them)"
                          % (tag, s["back0"]), file=sys.stderr)
                    bad = True
                dpj = "%s/%s.dp.json" % (out, tag)
                if os.path.exists(dpj):
                    dp = json.load(open(dpj))
                    p0 = dp["ports"][0]
                    lc = dp["lcores"][0]
                    # frames per poll that found any: 32 (the burst) when
                    # the DUT is the bottleneck, less when it waits
                    r["busy"] = p0["rx"] / lc["busy_loops"] if lc["busy_loops"] else 0.0
                    drops = {k: v for k, v in p0["drops"].items() if v}
                    if any(k != "tx_full" for k in drops):
                        print("%s: unexpected drops on port 0: %s" % (tag, drops),
                              file=sys.stderr)
                        bad = True
                # the placement can change during a run: a run whose
                # one-second rates spread by more than 15% is "mixed"
                rates = s["rates"]
                if rates and (max(rates) - min(rates)) > 0.15 * statistics.median(rates):
                    r["c2c"][2] = "mixed"
                runs[(size, eng, rnd)] = r

    with open(out + "/results.tsv", "w") as f:
        f.write("size\tengine\tround\tmpps\tdut_rx_mpps\tlost_in_window\tback_out_port0\t"
                "dut_frames_per_busy_poll\trunnable_max\trunnable_median\tc2c_before_ns\t"
                "c2c_after_ns\tplacement\tsamples_mpps\n")
        for r in runs.values():
            f.write("%s\t%s\t%d\t%.3f\t%.3f\t%d\t%d\t%s\t%d\t%g\t%.0f\t%.0f\t%s\t%s\n" % (
                r["size"], r["engine"], r["round"], r["mpps"], r["rx_mpps"], r["lost"],
                r["back0"], "%.1f" % r["busy"] if r["busy"] is not None else "-",
                r["run_max"], r["run_med"], r["c2c"][0], r["c2c"][1], r["c2c"][2],
                r["samples"]))

    def cell(size, eng):
        return [runs[(size, eng, k)] for k in range(1, reps + 1) if (size, eng, k) in runs]

    print()
    print("DUT forwarded rate over net_memif (port 1 TX, ethdev opackets over telemetry), "
          "%d s after %s s of warm-up; median of %d round(s), every round in brackets"
          % (secs, warmup, reps))
    print()
    print("| frame (B, with FCS) | DUT        | Mpps (median) | rounds (Mpps)        | "
          "Gbit/s (L1) | DUT frames/poll | vs io |")
    print("|---------------------|------------|--------------:|----------------------|"
          "------------:|----------------:|------:|")
    med = {}
    for size in sizes:
        for eng in engines:
            rr = cell(size, eng)
            if not rr:
                continue
            med[(size, eng)] = statistics.median(r["mpps"] for r in rr)
            busy = [r["busy"] for r in rr if r["busy"] is not None]
            io = med.get((size, "io"))
            print("| %-19s | %-10s | %13.2f | %-20s | %11.2f | %15s | %5s |" % (
                size, eng, med[(size, eng)], " ".join("%.2f" % r["mpps"] for r in rr),
                med[(size, eng)] * (int(size) + 20) * 8 / 1000,
                "%.1f" % statistics.median(busy) if busy else "-",
                "%.2f" % (med[(size, eng)] / io) if io else "-"))
    print()

    def ratio(size, a, b, target):
        if (size, a) not in med or (size, b) not in med:
            return
        rr = ["%.2f" % (x["mpps"] / y["mpps"]) for x, y in zip(cell(size, a), cell(size, b))
              if y["mpps"] > 0]
        v = med[(size, a)] / med[(size, b)]
        print("%s B: %s / %s = %.3f (rounds: %s)%s" % (
            size, a, b, v, " ".join(rr),
            "" if target is None else "; target >= %.2f: %s" % (target,
                                                              "met" if v >= target else "MISSED")))

    for size in sizes:
        ratio(size, "gateway", "io", 0.90)
        ratio(size, "gateway", "l3fwd-lpm", 1.00)
        ratio(size, "gateway", "l3fwd-fib", 1.00)
        ratio(size, "l3fwd-lpm", "io", None)
        ratio(size, "l3fwd-fib", "io", None)
        ratio(size, "xconnect", "io", None)
    # the same by placement of the two vCPUs (core-to-core round trip before
    # and after each run): compare DUTs measured in the same one
    states = [st for st in ("far", "near") if any(r["c2c"][2] == st for r in runs.values())]
    if states:
        print()
        print("By placement of the two CPUs (core-to-core round trip before and after the run "
              "below %g ns: near, both above: far; runs with both, or whose one-second rates "
              "spread by more than 15%%, left out): median Mpps (runs)" % near)
        print()
        print("| frame | placement | " + " | ".join(engines) + " |")
        print("|-------|-----------|" + "|".join("-" * (len(e) + 2) for e in engines) + "|")
        for size in sizes:
            for st in states:
                cells = []
                for eng in engines:
                    v = [r["mpps"] for r in cell(size, eng) if r["c2c"][2] == st]
                    cells.append("%.2f (%d)" % (statistics.median(v), len(v)) if v else "-")
                print("| %s | %s | %s |" % (size, st, " | ".join(cells)))
        print()
        for size in sizes:
            for st in states:
                m = {}
                for eng in engines:
                    v = [r["mpps"] for r in cell(size, eng) if r["c2c"][2] == st]
                    if v:
                        m[eng] = statistics.median(v)
                pairs = [(a, b) for a, b in (("gateway", "io"), ("gateway", "l3fwd-lpm"),
                                             ("gateway", "l3fwd-fib"), ("l3fwd-lpm", "io"),
                                             ("l3fwd-fib", "io"), ("xconnect", "io"))
                         if a in m and b in m]
                if pairs:
                    print("%s B, %s: %s" % (size, st, "; ".join(
                        "%s / %s = %.3f" % (a, b, m[a] / m[b]) for a, b in pairs)))
        print()
    noisy = [r for r in runs.values() if r["run_max"] > max_runnable]
    if noisy:
        print()
        print("warning: other tasks were runnable during %d run(s) (runnable tasks > %d in a "
              "sample: %s): those figures are disturbed" % (
                  len(noisy), max_runnable, ", ".join("%s-%s-%d" % (r["size"], r["engine"], r["round"])
                                        for r in noisy)))
    print()
    print("results: %s/results.tsv; logs, telemetry samples and JSON: %s" % (out, out))
    return 1 if bad else 0


if __name__ == "__main__":
    cmds = {"version": (lambda: print(INPUTS_VERSION), 0), "table": (cmd_table, 4), "pcap": (cmd_pcap, 8),
            "l3fwd-routes": (cmd_l3fwd_routes, 7), "sample": (cmd_sample, 4),
            "report": (cmd_report, 8)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) != cmds[sys.argv[1]][1] + 2:
        sys.exit(__doc__)
    fn, _ = cmds[sys.argv[1]]
    sys.exit(fn(*sys.argv[2:]) or 0)
