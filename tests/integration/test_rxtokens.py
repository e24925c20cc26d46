# SPDX-License-Identifier: BSD-3-Clause
"""rxtokens: zero-copy delivery to consumers, edgegw on two net_pcap ports.

Port 0 (lan) is bound to a hugepage region; port 1 (uplink) is not. The
payloads are in egw-rxtok-consumer's test format ("EGWP", seq, length,
CRC32, byte i = (seq + i) & 0xff), 16..8000 bytes (up to three 4 KiB
pages), crafted with scapy over UDP/IPv4 and UDP/IPv6.

  delivery  an in-process (dump) consumer and an external consumer process
            at once, plus frames of no consumer's flow: every payload byte
            for byte (dump file parsed here, --verify and --count there),
            per-port accounting identity, delivered = payloads, forwarded
            frames unchanged on port 1, every region pool full at the end
  quota     a consumer that holds everything (--hold) with quota Q gets
            exactly Q one-page payloads; the rest drop as rxtok_quota
  steering  the flow of a consumer arriving on unbound port 1 drops as
            rxtok_steered and the consumer sees EPIPE (steered >= 1)
  detached  an external consumer no process attached to: rxtok_detached
  crash     edgegw driven through a FIFO (-i): a --hold consumer holding
            its quota is killed with SIGKILL while edgegw runs; its
            references are released (show rxtokens, then the JSON); then a
            second batch arrives (port 1 bound to the region: that restarts
            it and net_pcap reopens its rx_pcap, replaced meanwhile) and the
            consumer running all along gets every payload of both batches
  hostile   the socket checks its peers: a process of user nobody cannot
            attach root's consumer, and attaches its own (uid/gid 65534, on a
            region of its own: a region is one trust domain); 16 silent
            connections do not delay root's consumer's attach; both get
            every payload; show rxtokens and the JSON count the refusals
  commands  bad rxtokens commands fail with file:line and exit status 1
            (among them a quota that does not fit its region: 65536 on a
            2048-page one, and a consumer of another uid on a region)

Needs free 2 MiB hugepages (regions are hugepage memfds): skips (77)
without them.

usage: test_rxtokens.py EDGEGW EGW-RXTOK-CONSUMER
"""
import json
import os
import random
import re
import signal
import struct
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402

from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw  # noqa: E402

import socket  # noqa: E402

MAC0, MAC1 = "02:70:63:61:70:00", "02:70:63:61:70:01"  # net_pcap0, net_pcap1
PEER = "02:00:00:00:aa:01"
HUGE_DIR = "/sys/kernel/mm/hugepages/hugepages-2048kB"
REGION = "32M"       # 16 hugepages, 8192 tokens
HUGE_NEEDED = 48     # the region and EAL's own memory
PREFIX = "egwtest_rxtokens"
RESULT_RE = re.compile(r"consumer (\S+): payloads (\d+) bytes (\d+) bad (\d+) steered (\d+) "
                       r"returned (\d+) held (\d+)")


def payload(seq, length):
    """The consumer's test payload format (see app/rxtok-consumer/main.c)."""
    body = bytes((seq + i) & 0xff for i in range(16, length))
    return b"EGWP" + struct.pack(">III", seq, length, zlib.crc32(body)) + body


def udp_frame(seq, length, dport, v6, dst_mac=MAC0):
    ip = (IPv6(src="2001:db8::%x" % (seq % 200 + 1), dst="2001:db8:1::1") if v6 else
          IP(src="10.0.%d.%d" % (seq // 200, seq % 200 + 1), dst="192.0.2.1"))
    return bytes(Ether(src=PEER, dst=dst_mac) / ip / UDP(sport=40000 + seq % 1000, dport=dport) /
                 Raw(payload(seq, length)))


def eal(extra=()):
    """Hugepages (no --no-huge): the regions are hugepage memory."""
    return (["-l", "0,1", "--no-pci", "--huge-unlink", "--file-prefix", PREFIX,
             "--log-level=warning"] + list(extra))


def pcap_ports(c, tag, in0, in1):
    return ["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (in0, c.path(tag + "-out0.pcap")),
            "--vdev", "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (in1, c.path(tag + "-out1.pcap"))]


def setup_lines():
    return ["set fwd gateway xconnect", "port role 0 lan", "port role 1 uplink",
            "rxtokens region add r0 size %s" % REGION, "rxtokens bind r0 port 0 queue all shared"]


class Consumer:
    """egw-rxtok-consumer in the background."""

    def __init__(self, c, binary, sock, name, args):
        self.name = name
        self.out_path = c.path("consumer-%s.out" % name)
        self._out = open(self.out_path, "wb")
        cmd = [binary, "--socket", sock, "--consumer", name] + args
        print("  start: %s" % " ".join(cmd), flush=True)
        self.p = subprocess.Popen(cmd, stdout=self._out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        self.rc = None

    def output(self):
        with open(self.out_path, errors="replace") as f:
            return f.read()

    def attached(self):
        return "attached" in self.output()

    def wait(self, timeout):
        try:
            self.rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            print("  consumer %s still running after %d s: killed" % (self.name, timeout))
            self.p.kill()
            self.rc = self.p.wait()
        self._out.close()
        return self.rc

    def result(self):
        """{payloads, bytes, bad, steered, returned, held} from the final line, or None."""
        m = RESULT_RE.search(self.output())
        if m is None or m.group(1) != self.name:
            return None
        keys = ("payloads", "bytes", "bad", "steered", "returned", "held")
        return dict(zip(keys, (int(x) for x in m.groups()[1:])))


def show_consumer(c, con, what):
    out = con.output()
    print("  --- consumer %s output (%s)\n%s  ---" % (con.name, what, out[-2000:]), flush=True)


def rxt_consumer(js, name):
    for x in js["rxtokens"]["consumers"]:
        if x["name"] == name:
            return x
    return None


def check_pools_full(c, js, what):
    for r in js["rxtokens"]["regions"]:
        c.eq(r["pool_free"], r["pool_size"], "%s: region %s pool full again (pool_free = pool_size)"
             % (what, r["name"]))
        c.eq(r["tokens_out"], 0, "%s: region %s tokens_out" % (what, r["name"]))


def rxtok_drops(p):
    return {k: v for k, v in p["drops"].items() if k.startswith("rxtok_")}


def check_no_rejects(c, con, what):
    c.eq(sum(con["rejected"].values()), 0, "%s: consumer %s: no rejected return" %
         (what, con["name"]))


# --------------------------------------------------------------------------
def test_delivery(c, edgegw, consumer_bin):
    """a. dump consumer + external consumer at once, byte for byte."""
    print("\n== delivery: in-process (dump) and external consumers at once", flush=True)
    rnd = random.Random(5474)
    sizes = [16, 17, 64, 512, 1000, 1400, 1472, 2000, 3000, 3900, 4000, 4050, 4096, 4097,
             5000, 6000, 7000, 7999, 8000]
    sizes += [rnd.randint(16, 8000) for _ in range(21)]
    ext, dmp, fwd, frames = [], [], [], []
    dmp_ver = {}
    seq = 0
    for i, n in enumerate(sizes):
        for dport, lst in ((5000, ext), (6000, dmp)):
            v6 = (i + dport // 1000) % 2 == 1
            f = udp_frame(seq, n, dport, v6)
            lst.append(payload(seq, n))
            if dport == 6000:
                dmp_ver[lst[-1]] = 6 if v6 else 4
            frames.append(f)
            seq += 1
        if i % 3 == 0:
            # no consumer's flow: UDP to neighbouring ports, TCP to 5000
            other = [
                Ether(src=PEER, dst=MAC0) / IP(src="10.9.0.1", dst="192.0.2.9") /
                UDP(sport=5000, dport=5001) / Raw(b"a" * (n // 4)),
                Ether(src=PEER, dst=MAC0) / IPv6(src="2001:db8::99", dst="2001:db8:1::9") /
                UDP(sport=6000, dport=6001) / Raw(b"b" * (n // 2)),
                Ether(src=PEER, dst=MAC0) / IP(src="10.9.0.2", dst="192.0.2.9") /
                TCP(sport=1234, dport=5000, flags="A") / Raw(b"c" * 100),
            ][(i // 3) % 3]
            fwd.append(bytes(other))
            frames.append(bytes(other))
    n_ext, n_dmp = len(ext), len(dmp)
    print("  %d frames: %d payloads to udp 5000 (external), %d to udp 6000 (dump), "
          "%d of no consumer's flow; payload sizes %d..%d" %
          (len(frames), n_ext, n_dmp, len(fwd), min(sizes), max(sizes)), flush=True)
    inp, empty = c.path("a-in.pcap"), c.path("empty.pcap")
    egwtest.write_pcap(inp, frames)
    egwtest.write_pcap(empty, [])

    sock, dump, js = c.path("a.sock"), c.path("a-dump.bin"), c.path("a.json")
    cmd = c.path("a.cmd")
    with open(cmd, "w") as f:
        f.write("\n".join(setup_lines() + [
            "rxtokens consumer add ext region r0 match udp-dport 5000 quota 512",
            "rxtokens consumer add dmp region r0 match udp-dport 6000 dump %s" % dump,
            "rxtokens listen %s" % sock,
            "rxtokens wait ext 30",
            "show rxtokens",
        ]) + "\n")
    e = egwtest.Running(c, "a-edgegw", edgegw, eal(pcap_ports(c, "a", inp, empty)),
                        ["--cmdline-file", cmd, "--idle-exit", "1500", "--stats-json", js])
    egwtest.wait_for(lambda: os.path.exists(sock) or not e.alive(), 30)
    con = Consumer(c, consumer_bin, sock, "ext",
                   ["--count", str(n_ext), "--verify", "--timeout", "10"])
    crc = con.wait(60)
    try:
        rc = e.p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        rc = None
    e.stop()
    if not c.eq(rc, 0, "delivery: edgegw exit status"):
        egwtest.show_output(e.stdout(), e.stderr())
    if not c.eq(crc, 0, "delivery: egw-rxtok-consumer exit status (--count %d --verify)" % n_ext):
        show_consumer(c, con, "delivery")
    r = con.result()
    c.check(r is not None, "delivery: consumer printed its result line",
            con.output().strip().splitlines()[-1] if con.output().strip() else "(nothing)")
    if r is not None:
        print("  consumer: %s" % r)
        c.eq(r["payloads"], n_ext, "delivery: external consumer payloads")
        c.eq(r["bytes"], sum(len(p) for p in ext), "delivery: external consumer bytes")
        c.eq(r["bad"], 0, "delivery: external consumer bad payloads (--verify: CRC32, pattern)")
        c.eq(r["held"], 0, "delivery: external consumer gave every token back")
        c.eq(r["steered"], 0, "delivery: external consumer steered notices")

    # the dump file: 4-byte big-endian length + payload, in arrival order
    got = []
    try:
        with open(dump, "rb") as f:
            data = f.read()
        off = 0
        while off + 4 <= len(data):
            n = struct.unpack(">I", data[off:off + 4])[0]
            got.append(data[off + 4:off + 4 + n])
            off += 4 + n
        c.eq(off, len(data), "delivery: dump file parses to its end")
    except OSError as ex:
        c.check(False, "delivery: dump file readable", str(ex))
    c.eq(len(got), n_dmp, "delivery: dump consumer payloads")
    c.check(sorted(got) == sorted(dmp), "delivery: every dumped payload byte for byte",
            "%d missing, %d unexpected" % (len(set(dmp) - set(got)), len(set(got) - set(dmp))))
    # the gateway stages IPv4 and IPv6 of a burst as two batches: the order
    # is kept per IP version, not across them
    for ver in (4, 6):
        w = [p for p in dmp if dmp_ver[p] == ver]
        g = [p for p in got if dmp_ver.get(p) == ver]
        c.check(g == w, "delivery: dumped IPv%d payloads in arrival order" % ver,
                "%d payloads" % len(w))
    okcrc = all(len(g) >= 16 and g[:4] == b"EGWP" and
                struct.unpack(">I", g[12:16])[0] == zlib.crc32(g[16:]) for g in got)
    c.check(okcrc, "delivery: every dumped payload's CRC32 matches its header")

    s = egwtest.load_json(c, js)
    if s is None:
        return
    egwtest.check_identity(c, s)
    p0, p1 = egwtest.port_by_id(s, 0), egwtest.port_by_id(s, 1)
    c.eq(p0["rx"], len(frames), "delivery: port 0 rx = input frames")
    c.eq(p0["delivered"], n_ext + n_dmp, "delivery: port 0 delivered = payloads")
    c.eq(p0["tx"], len(fwd), "delivery: port 0 tx = frames of no consumer's flow")
    c.eq(p0["dropped"], 0, "delivery: port 0 dropped")
    c.eq(p1["tx_out"], len(fwd), "delivery: port 1 tx_out")
    out1 = egwtest.pcap_frames(c.path("a-out1.pcap"))
    egwtest.same_frame_set(c, out1, fwd,
                           "delivery: out1.pcap holds the forwarded frames, unchanged")
    c.eq(len(egwtest.pcap_frames(c.path("a-out0.pcap"))), 0, "delivery: out0.pcap is empty")
    rx = s["rxtokens"]
    check_pools_full(c, s, "delivery")
    ce, cd = rxt_consumer(s, "ext"), rxt_consumer(s, "dmp")
    if c.check(ce is not None and cd is not None, "delivery: JSON lists both consumers"):
        c.eq(ce["outstanding"], 0, "delivery: ext outstanding")
        c.eq(ce["held"], 0, "delivery: ext held")
        c.eq(ce["returned"], ce["read"], "delivery: ext returned = read (tokens)")
        c.check(ce["read"] > n_ext, "delivery: multi-page payloads gave more tokens than payloads",
                "%d tokens for %d payloads" % (ce["read"], n_ext))
        c.eq(ce["released"], 0, "delivery: ext released (nothing left behind)")
        c.eq(ce["attaches"], 1, "delivery: ext attaches")
        if r is not None:
            c.eq(r["returned"], ce["returned"], "delivery: tokens the consumer returned = JSON")
        c.eq(cd["dumped"], n_dmp, "delivery: dmp dumped")
        c.eq(cd["outstanding"], 0, "delivery: dmp outstanding")
        c.eq(cd["returned"], cd["read"], "delivery: dmp returned = read")
        check_no_rejects(c, ce, "delivery")
        check_no_rejects(c, cd, "delivery")
    pages = sum(x["pages"] for x in rx["regions"])
    print("  memory: bookkeeping_bytes %d for %d pages, 2 consumers (quota 512 and 256)" %
          (rx["bookkeeping_bytes"], pages))
    c.check(rx["bookkeeping_bytes"] >= 12 * pages, "delivery: bookkeeping >= 12 B per page",
            "%d bytes" % rx["bookkeeping_bytes"])


# --------------------------------------------------------------------------
def test_quota_steer_detached(c, edgegw, consumer_bin):
    """c, d, e in one run."""
    print("\n== quota, steering, detached", flush=True)
    Q, N_HOG, N_ST0, N_ST1, N_DET = 8, 20, 5, 3, 6
    f0, f1, seq = [], [], 1000
    st_payloads = []
    for i in range(max(N_HOG, N_ST0, N_DET)):
        if i < N_HOG:
            f0.append(udp_frame(seq, 100 + i, 7000, i % 2 == 1))   # one page each
            seq += 1
        if i < N_ST0:
            f0.append(udp_frame(seq, 300 + 700 * i, 5000, i % 2 == 0))
            st_payloads.append(payload(seq, 300 + 700 * i))
            seq += 1
        if i < N_DET:
            f0.append(udp_frame(seq, 200, 9000, i % 2 == 0))
            seq += 1
    for i in range(N_ST1):  # consumer st's flow on the uplink, not bound to r0
        f1.append(udp_frame(seq, 500, 5000, i % 2 == 1, dst_mac=MAC1))
        seq += 1
    in0, in1 = c.path("b-in0.pcap"), c.path("b-in1.pcap")
    egwtest.write_pcap(in0, f0)
    egwtest.write_pcap(in1, f1)
    sock, js, cmd = c.path("b.sock"), c.path("b.json"), c.path("b.cmd")
    with open(cmd, "w") as f:
        f.write("\n".join(setup_lines() + [
            "rxtokens consumer add hog region r0 match udp-dport 7000 quota %d" % Q,
            "rxtokens consumer add st region r0 match udp-dport 5000",
            "rxtokens consumer add det region r0 match udp-dport 9000",
            "rxtokens listen %s" % sock,
            "rxtokens wait hog 30",
            "rxtokens wait st 30",
        ]) + "\n")
    # the consumers end after 3 s without a record, before edgegw's idle exit,
    # so that the JSON shows what their close released
    e = egwtest.Running(c, "b-edgegw", edgegw, eal(pcap_ports(c, "b", in0, in1)),
                        ["--cmdline-file", cmd, "--idle-exit", "6000", "--stats-json", js])
    egwtest.wait_for(lambda: os.path.exists(sock) or not e.alive(), 30)
    hog = Consumer(c, consumer_bin, sock, "hog", ["--hold", "--verify", "--timeout", "3"])
    st = Consumer(c, consumer_bin, sock, "st", ["--verify", "--timeout", "3"])
    hrc, src = hog.wait(60), st.wait(60)
    try:
        rc = e.p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        rc = None
    e.stop()
    if not c.eq(rc, 0, "quota/steer: edgegw exit status"):
        egwtest.show_output(e.stdout(), e.stderr())
    c.eq(hrc, 0, "quota: hog consumer exit status") or show_consumer(c, hog, "quota")
    c.eq(src, 0, "steering: st consumer exit status") or show_consumer(c, st, "steering")
    hr, sr = hog.result(), st.result()
    print("  hog: %s\n  st:  %s" % (hr, sr))
    if c.check(hr is not None, "quota: hog printed its result line"):
        c.eq(hr["payloads"], Q, "quota: hog got exactly quota %d one-page payloads" % Q)
        c.eq(hr["held"], Q, "quota: hog holds them all (--hold)")
        c.eq(hr["returned"], 0, "quota: hog returned nothing")
        c.eq(hr["bad"], 0, "quota: hog payloads verify")
    if c.check(sr is not None, "steering: st printed its result line"):
        c.eq(sr["payloads"], N_ST0, "steering: st got its payloads from bound port 0")
        c.check(sr["steered"] >= 1, "steering: st saw the steered notice (EPIPE)",
                "steered %d" % sr["steered"])
        c.eq(sr["bad"], 0, "steering: st payloads verify")
        c.eq(sr["held"], 0, "steering: st gave every token back")

    s = egwtest.load_json(c, js)
    if s is None:
        return
    egwtest.check_identity(c, s)
    p0, p1 = egwtest.port_by_id(s, 0), egwtest.port_by_id(s, 1)
    print("  port 0 rxtok drops %s\n  port 1 rxtok drops %s" % (rxtok_drops(p0), rxtok_drops(p1)))
    c.eq(p0["rx"], len(f0), "quota: port 0 rx")
    c.eq(p0["delivered"], Q + N_ST0, "quota: port 0 delivered = quota + st's payloads")
    c.eq(p0["drops"]["rxtok_quota"], N_HOG - Q, "quota: port 0 rxtok_quota = the rest")
    c.eq(p0["drops"]["rxtok_detached"], N_DET, "detached: port 0 rxtok_detached")
    c.eq(p0["drops"]["rxtok_steered"], 0, "steering: port 0 rxtok_steered")
    c.eq(p0["dropped"], N_HOG - Q + N_DET,
         "quota: port 0 dropped = quota + detached drops")
    c.eq(p1["rx"], N_ST1, "steering: port 1 rx")
    c.eq(p1["drops"]["rxtok_steered"], N_ST1, "steering: port 1 rxtok_steered")
    c.eq(p1["delivered"], 0, "steering: port 1 delivered")
    c.eq(p1["tx"], 0, "steering: port 1 forwarded none of them")
    ch, cs, cd = rxt_consumer(s, "hog"), rxt_consumer(s, "st"), rxt_consumer(s, "det")
    if c.check(ch and cs and cd, "quota/steer: JSON lists hog, st and det"):
        c.eq(ch["read"], Q, "quota: hog read (tokens)")
        c.eq(ch["released"], Q, "quota: hog's held tokens released when it closed")
        c.eq(ch["outstanding"], 0, "quota: hog outstanding after close")
        c.eq(ch["attached"], False, "quota: hog detached")
        c.check(cs["steered"] >= 1, "steering: JSON st steered >= 1", str(cs["steered"]))
        c.eq(cs["outstanding"], 0, "steering: st outstanding")
        c.eq(cd["attaches"], 0, "detached: det never attached")
        c.eq(cd["read"], 0, "detached: det read nothing")
        for x in (ch, cs, cd):
            check_no_rejects(c, x, "quota/steer")
    check_pools_full(c, s, "quota/steer")


# --------------------------------------------------------------------------
def show_field(text, name, field):
    """Last 'show rxtokens consumers' line of consumer name: the field's value."""
    v = None
    for line in text.splitlines():
        w = line.split()
        if len(w) > 2 and w[0] == name and w[1] == "region" and field in w:
            v = int(w[w.index(field) + 1])
    return v


def pool_line(text):
    """Last '... pool F/S free' of region r0: (F, S, tokens out)."""
    v = None
    for m in re.finditer(r"^\s+r0 .* tokens out (\d+) pool (\d+)/(\d+) free", text, re.M):
        v = (int(m.group(2)), int(m.group(3)), int(m.group(1)))
    return v


def test_crash(c, edgegw, consumer_bin):
    """b. SIGKILL a consumer holding its quota while edgegw runs."""
    print("\n== crash: SIGKILL a consumer that holds tokens", flush=True)
    Q, N_V, N_O = 16, 48, 30
    frames, other = [], []
    seq = 2000
    sizes = [16, 1000, 4000, 4097, 8000, 2500]
    for i in range(max(N_V, N_O)):
        if i < N_V:
            frames.append(udp_frame(seq, 64 + i, 5000, i % 2 == 0))
            seq += 1
        if i < N_O:
            n = sizes[i % len(sizes)]
            frames.append(udp_frame(seq, n, 6000, i % 2 == 1))
            other.append(payload(seq, n))
            seq += 1
    # second batch, after the kill: on port 1, whose capture is empty until
    # then (see below); the victim's flow now finds no process attached
    batch2, other2 = [], []
    for i in range(12):
        n = sizes[(i + 3) % len(sizes)]
        batch2.append(udp_frame(seq, n, 6000, i % 2 == 0, dst_mac=MAC1))
        other2.append(payload(seq, n))
        seq += 1
        if i % 3 == 0:
            batch2.append(udp_frame(seq, 100, 5000, i % 2 == 1, dst_mac=MAC1))
            seq += 1
    n_v2 = len(batch2) - len(other2)
    inp, empty, in1 = c.path("c-in.pcap"), c.path("empty.pcap"), c.path("c-in1.pcap")
    egwtest.write_pcap(inp, frames)
    egwtest.write_pcap(in1, [])
    sock, js, cmd, fifo = c.path("c.sock"), c.path("c.json"), c.path("c.cmd"), c.path("c.fifo")
    with open(cmd, "w") as f:
        f.write("\n".join(setup_lines() + [
            "rxtokens consumer add victim region r0 match udp-dport 5000 quota %d" % Q,
            "rxtokens consumer add other region r0 match udp-dport 6000",
            "rxtokens listen %s" % sock,
        ]) + "\n")
    os.mkfifo(fifo)
    # O_RDWR: opening does not block, and the reader never sees EOF early
    fd = os.open(fifo, os.O_RDWR)
    stdin = open(fifo, "rb")
    e = egwtest.Running(c, "c-edgegw", edgegw, eal(pcap_ports(c, "c", inp, in1)),
                        ["-i", "--cmdline-file", cmd, "--stats-json", js], stdin=stdin)
    stdin.close()

    def send(line):
        c.log("edgegw <- %s" % line)
        os.write(fd, (line + "\n").encode())

    victim = other_c = None
    try:
        if not c.check(egwtest.wait_for(lambda: os.path.exists(sock) or not e.alive(), 30),
                       "crash: edgegw listens"):
            egwtest.show_output(e.stdout(), e.stderr())
            return
        victim = Consumer(c, consumer_bin, sock, "victim", ["--hold", "--verify"])
        other_c = Consumer(c, consumer_bin, sock, "other", ["--verify", "--timeout", "5"])
        send("rxtokens wait victim 30")
        send("rxtokens wait other 30")
        c.check(egwtest.wait_for(lambda: "consumer victim attached" in e.stdout() and
                                 "consumer other attached" in e.stdout(), 30),
                "crash: both consumers attached")
        send("start")
        # the capture is read in a few ms; the victim then holds its quota
        held = lambda: show_field(e.stdout(), "victim", "held")  # noqa: E731
        for _ in range(100):
            send("show rxtokens consumers")
            time.sleep(0.1)
            if held() == Q:
                break
        c.eq(held(), Q, "crash: the victim holds its quota before it dies")
        c.check(victim.p.poll() is None, "crash: the victim is still running")
        c.log("SIGKILL victim (pid %d)" % victim.p.pid)
        victim.p.send_signal(signal.SIGKILL)
        victim.wait(10)
        before = len(e.stdout())
        ok = False
        for _ in range(50):
            send("show rxtokens")
            time.sleep(0.1)
            t = e.stdout()[before:]
            if show_field(t, "victim", "released") == Q:
                ok = True
                break
        t = e.stdout()[before:]
        print("  --- show rxtokens after the kill\n%s  ---" %
              "\n".join(t.strip().splitlines()[-12:]))
        c.check(ok, "crash: show rxtokens: victim released = %d" % Q,
                "released %s" % show_field(t, "victim", "released"))
        c.eq(show_field(t, "victim", "outstanding"), 0, "crash: show rxtokens: victim outstanding")
        c.eq(show_field(t, "victim", "held"), 0, "crash: show rxtokens: victim held")
        pl = pool_line(t)
        c.check(pl is not None and pl[0] == pl[1] and pl[2] == 0,
                "crash: show rxtokens: pool full again, no token out",
                "pool free/size/tokens out %s" % (pl,))
        # a second batch while the other consumer still runs: binding port 1
        # stops and starts it, and net_pcap then opens its rx_pcap again,
        # which now holds batch 2
        c.check(other_c.p.poll() is None, "crash: the other consumer is still running")
        egwtest.write_pcap(in1 + ".new", batch2)
        os.rename(in1 + ".new", in1)
        before = len(e.stdout())
        send("stop")
        send("rxtokens bind r0 port 1 queue all shared")
        send("start")
        send("show rxtokens bindings")
        c.check(egwtest.wait_for(lambda: "port 1 queue 0 -> region r0" in e.stdout()[before:], 10),
                "crash: port 1 bound to r0 for the second batch")
        orc = other_c.wait(30)
        c.eq(orc, 0, "crash: other consumer exit status") or show_consumer(c, other_c, "crash")
        r = other_c.result()
        if c.check(r is not None, "crash: other consumer printed its result line"):
            print("  other: %s" % r)
            c.eq(r["payloads"], N_O + len(other2),
                 "crash: other got all its payloads, before and after the kill")
            c.eq(r["bytes"], sum(len(p) for p in other + other2), "crash: other's bytes")
            c.eq(r["bad"], 0, "crash: other's payloads verify")
            c.eq(r["held"], 0, "crash: other gave everything back")
        send("quit")
        try:
            rc = e.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            rc = None
    finally:
        for x in (victim, other_c):
            if x is not None and x.p.poll() is None:
                x.p.kill()
                x.wait(5)
        e.stop()
        os.close(fd)
    if not c.eq(rc, 0, "crash: edgegw exit status after quit"):
        egwtest.show_output(e.stdout(), e.stderr())
    s = egwtest.load_json(c, js)
    if s is None:
        return
    egwtest.check_identity(c, s)
    p0, p1 = egwtest.port_by_id(s, 0), egwtest.port_by_id(s, 1)
    c.eq(p0["delivered"], Q + N_O, "crash: port 0 delivered = victim's quota + other's payloads")
    c.eq(p0["drops"]["rxtok_quota"], N_V - Q, "crash: port 0 rxtok_quota")
    c.eq(p1["rx"], len(batch2), "crash: port 1 rx = second batch")
    c.eq(p1["delivered"], len(other2), "crash: port 1 delivered = other's second batch")
    c.eq(p1["drops"]["rxtok_detached"], n_v2,
         "crash: port 1 rxtok_detached = the dead victim's flow in the second batch")
    cv, co = rxt_consumer(s, "victim"), rxt_consumer(s, "other")
    if c.check(cv and co, "crash: JSON lists victim and other"):
        c.eq(cv["released"], Q, "crash: JSON victim released")
        c.eq(cv["outstanding"], 0, "crash: JSON victim outstanding")
        c.eq(cv["attached"], False, "crash: JSON victim detached")
        c.eq(co["returned"], co["read"], "crash: JSON other returned = read")
        c.eq(co["released"], 0, "crash: JSON other released nothing (it returned all)")
        check_no_rejects(c, cv, "crash")
        check_no_rejects(c, co, "crash")
    check_pools_full(c, s, "crash")


# --------------------------------------------------------------------------
NOBODY = 65534


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def test_hostile(c, edgegw, consumer_bin):
    """g. peer credentials, silent peers, one trust domain per region."""
    print("\n== hostile peers: credentials, silent connections", flush=True)
    if os.geteuid() != 0:
        print("  not root: a process of another uid cannot be started; hostile skipped")
        return
    f0, f1, p0s, p1s, seq = [], [], [], [], 3000
    for i in range(40):
        f0.append(udp_frame(seq, 200 + 37 * i, 5000, i % 2 == 0))
        p0s.append(payload(seq, 200 + 37 * i))
        seq += 1
        f1.append(udp_frame(seq, 300 + 53 * i, 6000, i % 2 == 1, dst_mac=MAC1))
        p1s.append(payload(seq, 300 + 53 * i))
        seq += 1
    in0, in1 = c.path("g-in0.pcap"), c.path("g-in1.pcap")
    egwtest.write_pcap(in0, f0)
    egwtest.write_pcap(in1, f1)
    sock_dir = c.path("g-sock")
    os.makedirs(sock_dir, exist_ok=True)
    os.chmod(sock_dir, 0o755)
    os.chmod(c.path(""), 0o755)
    sock, js, cmd = os.path.join(sock_dir, "g.sock"), c.path("g.json"), c.path("g.cmd")
    with open(cmd, "w") as f:
        f.write("\n".join(setup_lines() + [
            "rxtokens region add r1 size 8M",
            "rxtokens bind r1 port 1 queue all shared",
            "rxtokens consumer add rootc region r0 match udp-dport 5000",
            "rxtokens consumer add nob region r1 match udp-dport 6000 uid %d gid %d" %
            (NOBODY, NOBODY),
            "rxtokens listen %s" % sock,
            "rxtokens wait nob 30",
            "rxtokens wait rootc 30",
            "show rxtokens",
        ]) + "\n")
    e = egwtest.Running(c, "g-edgegw", edgegw, eal(pcap_ports(c, "g", in0, in1)),
                        ["--cmdline-file", cmd, "--idle-exit", "4000", "--stats-json", js])
    silent, nob, root = [], None, None
    try:
        egwtest.wait_for(lambda: os.path.exists(sock) or not e.alive(), 30)
        if not c.check(os.path.exists(sock), "hostile: edgegw listens"):
            egwtest.show_output(e.stdout(), e.stderr())
            return
        # the operator lets other users reach the socket; the peer check decides
        os.chmod(sock, 0o777)
        # nobody claims root's consumer: refused
        r = subprocess.run([consumer_bin, "--socket", sock, "--consumer", "rootc", "--count", "1",
                            "--timeout", "2"], preexec_fn=as_nobody, capture_output=True,
                           text=True, timeout=30)
        out = (r.stdout + r.stderr).strip()
        print("  nobody -> rootc: exit %d: %s" % (r.returncode, out.splitlines()[-1:]))
        c.check(r.returncode != 0 and "Permission denied" in out and "attached" not in out,
                "hostile: nobody cannot attach root's consumer", out[-300:])
        # nobody attaches its own consumer (on its own region)
        nob = subprocess.Popen([consumer_bin, "--socket", sock, "--consumer", "nob", "--verify",
                                "--count", str(len(p1s)), "--timeout", "10"],
                               preexec_fn=as_nobody, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        # 16 silent connections, then root's consumer: attached at once
        for _ in range(16):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(sock)
            silent.append(s)
        t0 = time.monotonic()
        root = Consumer(c, consumer_bin, sock, "rootc",
                        ["--verify", "--count", str(len(p0s)), "--timeout", "10"])
        egwtest.wait_for(lambda: root.attached() or root.p.poll() is not None, 30)
        dt = time.monotonic() - t0
        print("  rootc attached %.0f ms after 16 silent connections" % (dt * 1e3))
        c.check(root.attached() and dt < 1.0,
                "hostile: 16 silent connections do not delay an attach (< 1 s)",
                "%.3f s" % dt)
        rrc = root.wait(60)
        try:
            nout, _ = nob.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            nob.kill()
            nout, _ = nob.communicate()
        c.eq(rrc, 0, "hostile: rootc exit status (--verify --count)") or \
            show_consumer(c, root, "hostile")
        c.eq(nob.returncode, 0, "hostile: nob (user nobody) exit status (--verify --count)")
        # the same counters in telemetry, while edgegw still runs
        tel = None
        try:
            tel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            tel.settimeout(5)
            tel.connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % PREFIX)
            banner = json.loads(tel.recv(16384).decode())
            tel.send(b"/edgegw/rxtokens")
            tj = json.loads(tel.recv(banner.get("max_output_len", 16384)).decode())
            tc = tj.get("/edgegw/rxtokens", {})
            print("  telemetry /edgegw/rxtokens rootc: %s" % tc.get("rootc"))
            c.check(tc.get("rootc", {}).get("cred_refused") == 1 and
                    tc.get("nob", {}).get("uid") == NOBODY and
                    "rxtok_quota" in tc.get("rootc", {}),
                    "hostile: telemetry /edgegw/rxtokens: rootc cred_refused 1, nob uid, drops",
                    str(tc)[:300])
            # both regions are bound 'shared' (single-queue net_pcap ports)
            c.check(tc.get("rootc", {}).get("shared") == 1 and
                    tc.get("nob", {}).get("shared") == 1,
                    "hostile: telemetry says the consumers' regions are bound shared",
                    str(tc)[:300])
        except (OSError, ValueError) as ex:
            c.check(False, "hostile: telemetry /edgegw/rxtokens", str(ex))
        finally:
            if tel is not None:
                tel.close()
        m = RESULT_RE.search(nout or "")
        c.check(m is not None and int(m.group(2)) == len(p1s) and int(m.group(4)) == 0,
                "hostile: nobody's consumer got its %d payloads intact" % len(p1s),
                (nout or "").strip()[-300:])
        try:
            rc = e.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            rc = None
    finally:
        for s in silent:
            s.close()
        for x in (nob, root.p if root is not None else None):
            if x is not None and x.poll() is None:
                x.kill()
        e.stop()
    if not c.eq(rc, 0, "hostile: edgegw exit status"):
        egwtest.show_output(e.stdout(), e.stderr())
    c.check("cred-refused 1" in e.stdout() and "owner 65534:65534" in e.stdout(),
            "hostile: show rxtokens: rootc cred-refused 1, region r1 owner 65534:65534")
    js = egwtest.load_json(c, js)
    if js is None:
        return
    egwtest.check_identity(c, js)
    conn = js["rxtokens"]["connections"]
    print("  connections: %s" % conn)
    c.check(conn["cred_refused"] >= 1 and conn["accepted"] >= 18 and conn["hello_timeouts"] >= 0,
            "hostile: JSON connections count the refusal and the silent peers", str(conn))
    cr, cn = rxt_consumer(js, "rootc"), rxt_consumer(js, "nob")
    if c.check(cr and cn, "hostile: JSON lists rootc and nob"):
        c.eq(cr["cred_refused"], 1, "hostile: JSON rootc cred_refused")
        c.eq((cr["uid"], cr["gid"]), (0, 0), "hostile: JSON rootc uid, gid (edgegw's own)")
        c.eq((cn["uid"], cn["gid"]), (NOBODY, NOBODY), "hostile: JSON nob uid, gid")
        c.eq(sum(cr["drops"].values()), 0, "hostile: rootc lost nothing")
    regs = {r["name"]: r for r in js["rxtokens"]["regions"]}
    if c.check("r1" in regs, "hostile: JSON lists region r1"):
        c.eq((regs["r1"]["owner_uid"], regs["r1"]["owner_gid"]), (NOBODY, NOBODY),
             "hostile: JSON r1 owner")
        c.check(regs["r1"]["quota_sum"] + regs["r1"]["reserve"] <= regs["r1"]["pages"],
                "hostile: JSON r1 quotas + reserve <= pages", str(regs["r1"]))
    check_pools_full(c, js, "hostile")


# --------------------------------------------------------------------------
def test_bad_commands(c, edgegw):
    """f. each bad command fails with file:line, exit status 1."""
    print("\n== bad rxtokens commands", flush=True)
    empty = c.path("empty.pcap")
    egwtest.write_pcap(empty, [])
    base = ["set fwd gateway xconnect", "rxtokens region add r0 size %s" % REGION]
    cases = [
        ("bind-twice", base + ["rxtokens bind r0 port 0 queue 0 shared",
                               "rxtokens bind r0 port 0 queue 0 shared"], "already bound"),
        ("flow-twice", base + ["rxtokens bind r0 port 0 queue all shared",
                               "rxtokens consumer add a region r0 match udp-dport 5000",
                               "rxtokens consumer add b region r0 match udp-dport 5000"],
         "already taken"),
        ("size", ["rxtokens region add r0 size 3M"], "not a multiple"),
        ("size-k", ["rxtokens region add r0 size 5000K"], "not a multiple"),
        ("wait-nosuch", base + ["rxtokens wait nosuch"], "no consumer 'nosuch'"),
        # admission control: 65536 tokens of quota on a 2048-page region
        ("quota-region", ["set fwd gateway xconnect", "rxtokens region add r8 size 8M",
                          "rxtokens bind r8 port 0 queue all shared",
                          "rxtokens consumer add big region r8 match udp-dport 5000 "
                          "quota 65536"], "quota 65536 does not fit region r8"),
        ("quota-sum", base + ["rxtokens bind r0 port 0 queue all shared",
                              "rxtokens consumer add a region r0 match udp-dport 5000 "
                              "quota 4096",
                              "rxtokens consumer add b region r0 match udp-dport 5001 "
                              "quota 4096"], "quota 4096 does not fit region r0"),
        ("owner", base + ["rxtokens consumer add a region r0 match udp-dport 5000 uid 65534",
                          "rxtokens consumer add b region r0 match udp-dport 5001"],
         "region r0 belongs to uid 65534"),
        ("uid", base + ["rxtokens consumer add a region r0 match udp-dport 5000 uid x"],
         "uid 'x'"),
        ("gid", base + ["rxtokens consumer add a region r0 match udp-dport 5000 gid -1"],
         "gid '-1'"),
        ("dump-uid", base + ["rxtokens consumer add a region r0 match udp-dport 5000 "
                             "uid 65534 dump /dev/null"], "a dump consumer is edgegw itself"),
        ("unbind", base + ["rxtokens unbind r0 port 0 queue 0"], "is not bound to region r0"),
        # fail closed: a single-queue port (net_pcap) cannot keep other
        # frames off its bound queue; only 'shared' says that is fine
        ("unsteerable", base + ["rxtokens bind r0 port 0 queue 0"],
         "its 1 RX queue would all be bound"),
        ("shared-word", base + ["rxtokens bind r0 port 0 queue 0 share"], "unknown 'share'"),
    ]
    for tag, lines, msg in cases:
        cmd = c.path("f-%s.cmd" % tag)
        with open(cmd, "w") as f:
            f.write("\n".join(lines + ["show rxtokens"]) + "\n")
        rc, so, se = egwtest.run_edgegw(edgegw, eal(pcap_ports(c, "f-" + tag, empty, empty)),
                                        ["--cmdline-file", cmd], timeout=60)
        where = "%s:%d:" % (cmd, len(lines))
        both = so + se
        line = next((ln for ln in both.splitlines() if where in ln), "")
        print("  %s: %s" % (tag, line.strip() or "(no line with %s)" % where))
        c.eq(rc, 1, "commands %s: exit status" % tag)
        c.check(where in both and msg in line, "commands %s: fails at %s with '%s'" %
                (tag, where, msg), line.strip())
        c.check("stopped at the first error" in se, "commands %s: the file stops there" % tag)


def test_steering(c, edgegw):
    """g. bind steers the port or is refused, unless 'shared'.

    Every frame of a bound queue lands in region pages its owner can read.
    On a port edgegw cannot steer (net_null: no rte_flow; net_tap here:
    rte_flow, but the kernel refuses the TC rules) a bind is refused, with
    the driver's error, and accepted only with 'shared', which show, the
    JSON and telemetry then report."""
    print("\n== steering: bind refused where the port cannot steer, unless shared",
          flush=True)
    base = ["set fwd gateway xconnect", "rxtokens region add r0 size 8M"]
    null2 = ["--vdev", "net_null0", "--vdev", "net_null1"]

    def run(tag, vdevs, lines, extra=()):
        cmd, js = c.path("g-%s.cmd" % tag), c.path("g-%s.json" % tag)
        with open(cmd, "w") as f:
            f.write("\n".join(lines) + "\n")
        if os.path.exists(js):
            os.unlink(js)
        rc, so, se = egwtest.run_edgegw(edgegw, eal(vdevs),
                                        ["--rxq", "2", "--cmdline-file", cmd,
                                         "--stats-json", js] + list(extra), timeout=60)
        return rc, so + se, cmd, js

    def refused(tag, vdevs, lines, msgs, extra=()):
        rc, both, cmd, _ = run(tag, vdevs, lines, extra)
        where = "%s:%d:" % (cmd, len(lines))
        line = next((ln for ln in both.splitlines() if where in ln), "")
        print("  %s: %s" % (tag, line.strip() or "(no line with %s)" % where))
        c.eq(rc, 1, "steering %s: exit status" % tag)
        for m in msgs:
            c.check(m in line, "steering %s: the error says '%s'" % (tag, m), line.strip())
        return line

    # net_null: 2 RX queues, no rte_flow (it has an RSS table, and ignores it)
    refused("null", null2, base + ["rxtokens bind r0 port 0 queue 1"],
            ["port 0 (net_null) cannot steer only consumer flows",
             "the port has no rte_flow support", "rte_flow_validate",
             "readable by its owner", "say 'shared'"])
    # every queue bound: nothing left for the frames of no consumer
    refused("null-all", null2, base + ["rxtokens bind r0 port 0 queue all"],
            ["its 2 RX queues would all be bound"])
    # shared: accepted, and said everywhere
    rc, both, _, js = run("null-shared", null2, base + [
        "rxtokens bind r0 port 0 queue 1 shared",
        "rxtokens consumer add a region r0 match udp-dport 5000",
        "show rxtokens bindings", "quit"])
    c.eq(rc, 0, "steering null-shared: exit status")
    c.check("region r0 bound to port 0, 1 queue(s), shared: the region's owner may read "
            "every frame of these queues" in both, "steering null-shared: bind says shared")
    c.check("port 0 queue 1 -> region r0 shared (the region's owner may read every frame "
            "of this queue)" in both, "steering null-shared: show rxtokens says shared")
    try:
        with open(js) as f:
            b = json.load(f)["rxtokens"]["bindings"]
    except (OSError, ValueError, KeyError) as e:
        b = str(e)
    c.eq(b, [{"port": 0, "queue": 1, "region": "r0", "isolation": "shared"}],
         "steering null-shared: JSON bindings")
    # a shared port is one region's, and cannot be half steered
    refused("null-mixed", null2, base + [
        "rxtokens region add r1 size 8M", "rxtokens bind r0 port 0 queue 1 shared",
        "rxtokens bind r1 port 0 queue 0 shared"], ["a shared port carries one region's"])
    refused("null-mixed2", null2, base + [
        "rxtokens bind r0 port 0 queue 1 shared", "rxtokens bind r0 port 0 queue 0"],
        ["port 0 is bound shared"])

    # net_tap: rte_flow ops (TC flower); this kernel may refuse the rules
    if not os.path.exists("/dev/net/tun") or os.geteuid() != 0:
        print("  net_tap part skipped: needs root and /dev/net/tun")
        return
    tap = ["--vdev", "net_tap0,iface=stltap%d" % os.getpid(),
           "--vdev", "net_tap1,iface=stltbp%d" % os.getpid()]
    rc, both, _, _ = run("tap", tap, base + ["rxtokens bind r0 port 0 queue 1",
                                             "show rxtokens bindings", "quit"],
                         ["--txq", "2"])
    line = next((ln for ln in both.splitlines() if "rxtokens bind" in ln), "")
    print("  tap: %s" % line.strip())
    if rc == 0:
        # a kernel with cls_flower: the bind is steered
        c.check("steered (" in both and "catch-all" in both,
                "steering tap: accepted only with a catch-all rule in place", both[-2000:])
    else:
        c.eq(rc, 1, "steering tap: exit status")
        c.check("port 0 (net_tap) cannot steer only consumer flows" in line and
                "rte_flow_" in line, "steering tap: refused with the rte_flow error", line)


def hugepages_free():
    try:
        with open(os.path.join(HUGE_DIR, "free_hugepages")) as f:
            return int(f.read())
    except (OSError, ValueError):
        return 0


def main():
    edgegw, consumer_bin = sys.argv[1], sys.argv[2]
    c = egwtest.Checker("rxtokens")
    free = hugepages_free()
    if free < HUGE_NEEDED:
        c.skip("%d free 2 MiB hugepages, %d needed (regions are hugepage memory: "
               "echo N > /proc/sys/vm/nr_hugepages)" % (free, HUGE_NEEDED))
    with open("/proc/mounts") as f:
        if not any(len(ln.split()) > 2 and ln.split()[2] == "hugetlbfs" for ln in f):
            c.skip("no hugetlbfs mounted")
    if not os.access("/dev/hugepages", os.W_OK) and os.geteuid() != 0:
        c.skip("hugepages not writable (run as root)")
    print("  %d free 2 MiB hugepages; region size %s" % (free, REGION))
    only = os.environ.get("EGW_RXTOK_ONLY", "")
    tests = [("delivery", lambda: test_delivery(c, edgegw, consumer_bin)),
             ("quota", lambda: test_quota_steer_detached(c, edgegw, consumer_bin)),
             ("crash", lambda: test_crash(c, edgegw, consumer_bin)),
             ("hostile", lambda: test_hostile(c, edgegw, consumer_bin)),
             ("commands", lambda: test_bad_commands(c, edgegw)),
             ("steering", lambda: test_steering(c, edgegw))]
    for name, fn in tests:
        if not only or name in only.split(","):
            fn()
    c.finish()


if __name__ == "__main__":
    main()
