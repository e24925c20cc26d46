# SPDX-License-Identifier: BSD-3-Clause
"""Discovery-flood helpers shared by tests/integration/test_pppoe_flood.py and
bench/pppoe_setup_rate.py (run with /usr/bin/python3).

Pieces:
  write_flood()   a capture of PADI and PADR frames from random client MACs,
                  written with struct (1,000,000 frames in about a second)
  LosslessPort    pppoetest.Port whose sends cannot be lost in the kernel:
                  the tap's queue is shared with the flood, so a plain
                  AF_PACKET send into a full queue would vanish before edgegw
                  sees it. With PACKET_QDISC_BYPASS the kernel hands the
                  frame straight to the tap and reports a full queue as
                  ENOBUFS, and the send is tried again. It counts every
                  frame sent, and the discovery frames among them.
  Sub             pppoetest.Client that keeps the time of every LCP
                  Echo-Request (the keepalive cadence under the flood)
  connect_retry() discovery with retries at the per-MAC rate, then LCP, PAP
                  and IPCP; what it took
  Generator       a second edgegw in `set fwd replay` mode on net_af_packet
                  bound to the kernel side of the access tap
"""
import errno
import os
import random
import re
import socket
import struct
import threading
import time

import egwtest
import pppoetest as pt

SOL_PACKET = 263
PACKET_QDISC_BYPASS = 20

# one flood frame in ten of each kind: 5 PADI, 4 PADR with a made-up
# AC-Cookie, 1 PADR without one
FLOOD_MIX = ("padi",) * 5 + ("padr_cookie",) * 4 + ("padr_no_cookie",)


def write_flood(path, n, ac_mac, seed=1):
    """n discovery frames from random locally administered unicast MACs:
    PADI to the broadcast address, PADR to ac_mac (FLOOD_MIX); each with an
    empty Service-Name and a random 8-byte Host-Uniq. Returns {kind: count}."""
    rng = random.Random(seed)
    ac = pt.mac_bytes(ac_mac)
    counts = {k: 0 for k in FLOOD_MIX}
    svc = struct.pack("!HH", pt.TAG_SERVICE, 0)
    with open(path, "wb") as f:
        # pcap file header: microsecond timestamps, Ethernet
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(n):
            kind = FLOOD_MIX[i % len(FLOOD_MIX)]
            counts[kind] += 1
            src = bytes([(rng.getrandbits(8) & 0xFC) | 0x02]) + rng.getrandbits(40).to_bytes(
                5, "big")
            tl = svc + struct.pack("!HH", pt.TAG_HOST_UNIQ, 8) + rng.getrandbits(64).to_bytes(
                8, "big")
            if kind == "padi":
                dst, code = b"\xff" * 6, pt.PADI
            else:
                dst, code = ac, pt.PADR
                if kind == "padr_cookie":
                    tl += struct.pack("!HH", pt.TAG_COOKIE, 21) + rng.getrandbits(168).to_bytes(
                        21, "big")
            fr = dst + src + struct.pack("!H", pt.ETH_DISC) + pt.pppoe(code, 0, tl)
            fr += bytes(max(0, 60 - len(fr)))
            f.write(struct.pack("<IIII", i // 1000000, i % 1000000, len(fr), len(fr)) + fr)
    return counts


class LosslessPort(pt.Port):
    """The kernel side of a tap, lossless on send (see the top)."""

    def __init__(self, ifname):
        super().__init__(ifname)
        self.s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
        self.cnt = threading.Lock()
        self.sent = 0
        self.sent_disc = 0
        self.enobufs = 0

    def send(self, frame):
        b = bytes(frame)
        while True:
            try:
                self.s.send(b)
                break
            except socket.timeout:
                pass
            except OSError as e:
                if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                    raise
            with self.cnt:
                self.enobufs += 1
            time.sleep(0.0002)
        etype = struct.unpack_from("!H", b, 12)[0]
        off = 12
        while etype in pt.VLAN_TPIDS and off + 6 <= len(b):
            off += 4
            etype = struct.unpack_from("!H", b, off)[0]
        with self.cnt:
            self.sent += 1
            if etype == pt.ETH_DISC:
                self.sent_disc += 1

    def send_many(self, frames):
        for f in frames:
            self.send(f)

    def counts(self):
        with self.cnt:
            return self.sent, self.sent_disc, self.enobufs

    def pado_to_others(self):
        """PADOs edgegw sent to MACs of no client of this port (the flood's)."""
        with self.lock:
            fl = list(self.frames)
            mine = set(self.clients)
        return sum(1 for f in fl if f.etype == pt.ETH_DISC and f.code == pt.PADO and
                   f.dst not in mine)

    def trim(self, keep_pred):
        """Forget received frames that keep_pred rejects (memory of long runs)."""
        with self.lock:
            self.frames = [f for f in self.frames if keep_pred(f)]


class Sub(pt.Client):
    """A subscriber that keeps the time of each Echo-Request from the AC."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.echo_t = []
        self.rx_t = 0.0
        self.ipv6cp = False  # IPv4 only: IPv6CP is Protocol-Rejected

    def _rx(self, f):
        # The AC's first LCP Configure-Request follows its PADS at once: take
        # the session id here, in the reader thread, or that request arrives
        # while sid is still 0, is ignored, and LCP waits for the AC's 3 s
        # restart timer (pppoetest.Client.request() sets sid in the test
        # thread, after the PADS)
        if f.etype == pt.ETH_DISC and f.code == pt.PADS and f.sid and self.sid == 0:
            with self.cv:
                self.sid = f.sid
        self.rx_t = f.t
        super()._rx(f)

    def _lcp(self, code, ident, body):
        if code == pt.ECHO_REQ:
            # the frame's arrival in the kernel, not when this thread read it
            self.echo_t.append(self.rx_t)
        super()._lcp(code, ident, body)


def connect_retry(cl, deadline, interval=0.34, service=b""):
    """PADI every interval until a PADO, PADR every interval until a PADS
    (0.34 s: inside the default per-MAC rate of 3/s, so a client's own
    retries are never what refuses it), then LCP, PAP and IPCP. Returns a
    dict: ok, padi, padr (frames sent), t0, t_pado, t_pads, t_bound, err."""
    r = {"ok": False, "padi": 0, "padr": 0, "t0": time.monotonic(), "err": None}
    while True:
        n0 = len(cl.pado)
        cl.padi(service)
        r["padi"] += 1
        if cl.wait(lambda: len(cl.pado) > n0, interval):
            break
        if time.monotonic() > deadline:
            r["err"] = "no PADO"
            return r
    r["t_pado"] = time.monotonic()
    f = cl.pado[-1]
    cl.ac_mac = f.src
    cl.cookie = pt.tag_get(pt.parse_tags(f.payload), pt.TAG_COOKIE)
    while True:
        n0 = len(cl.pads)
        cl.padr(service)
        r["padr"] += 1
        if cl.wait(lambda: len(cl.pads) > n0, interval):
            break
        if time.monotonic() > deadline:
            r["err"] = "no PADS"
            return r
    r["t_pads"] = time.monotonic()
    with cl.cv:
        cl.sid = cl.pads[-1].sid
    if cl.sid == 0:
        r["err"] = "PADS refused: %s" % pt.parse_tags(cl.pads[-1].payload)
        return r
    # each phase as long as a real client keeps trying (RFC 1661 4.6:
    # Restart timer 3 s, Max-Configure 10): under the flood this process's
    # own readers share the CPUs with the one that negotiates
    if not cl.lcp(timeout=30.0):
        r["err"] = "LCP did not open"
        return r
    a = cl.pap(timeout=30.0)
    if a is None or a[1] != 2:
        r["err"] = "PAP: %s" % (a,)
        return r
    if not cl.ipcp(timeout=30.0):
        r["err"] = "IPCP did not open"
        return r
    r["t_bound"] = time.monotonic()
    r["ok"] = True
    return r


def connect_many(clients, deadline, threads=32, interval=0.34):
    """connect_retry() for every client, threads at a time; {client: result}."""
    res = {}
    todo = list(clients)
    lk = threading.Lock()

    def work():
        while True:
            with lk:
                if not todo:
                    return
                cl = todo.pop()
            r = connect_retry(cl, deadline, interval)
            with lk:
                res[cl] = r

    th = [threading.Thread(target=work, daemon=True) for _ in range(min(threads, len(todo)))]
    for t in th:
        t.start()
    for t in th:
        t.join()
    return res


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def asan_quarantine_kib(pid):
    """0 for a process without AddressSanitizer; else the most freed heap it
    may hold back (ASAN_OPTIONS quarantine_size_mb, default 256 MiB), with
    its shadow (1/8). OpenSSL's one-shot HMAC() makes 13 allocations per
    call (every PADO and every cookie checked), so under ASan a flood fills
    the quarantine: RSS that is no leak."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            if "libasan" not in f.read():
                return 0
    except OSError:
        return 0
    mb = 256
    for opt in os.environ.get("ASAN_OPTIONS", "").replace(",", ":").split(":"):
        if opt.startswith("quarantine_size_mb="):
            mb = int(opt.split("=", 1)[1])
    return mb * 1024 * 9 // 8


def sessions_by_state(e):
    """(total, negotiating, bound, closing) from 'show pppoe stats'."""
    m = re.search(r"PPPoE sessions: (\d+) \(negotiating (\d+), bound (\d+), closing (\d+)\)",
                  e.run("show pppoe stats", timeout=10))
    return tuple(int(x) for x in m.groups()) if m else None


class Generator:
    """A second edgegw that replays the flood capture into ifname (the kernel
    side of the DUT's access tap) through net_af_packet, in a loop at full
    speed (or pps frames/s). Its two lcores share CPU 0 with the DUT's main
    lcore (the control path); the DUT's worker keeps CPU 1. A frame the
    tap's full queue refuses stays in the PMD's TX ring and the kernel tries
    it again, so the generator offers what the DUT's worker reads; at
    stop() a few hundred it counted as sent may be left in that ring.
    Loaded at once, started by start(). It runs at nice 19: it takes what
    CPU the DUT and the test's clients leave (on 2 CPUs that is still tens
    of thousands of frames a second), so a flood never starves the clients
    whose view of the DUT the test judges."""

    def __init__(self, c, binary, ifname, pcap, prefix, pps=None, lcores="0@0,1@0", nice=19):
        eal = ["--lcores", lcores, "--no-huge", "-m", "1024", "--no-pci",
               "--file-prefix", prefix, "--log-level=warning",
               "--vdev", "net_af_packet0,iface=%s" % ifname]
        self.e = pt.Edgegw(c, "generator", binary, eal,
                           ["set fwd replay %s%s port 0" % (pcap, " %d" % pps if pps else "")],
                           nice=nice)
        self.ok = egwtest.wait_for(lambda: not self.e.alive() or
                                   self.PROMPT_RE.search(self.e.stdout()) is not None, 30)
        self.ok = self.ok and self.e.alive()

    PROMPT_RE = re.compile(re.escape(pt.Edgegw.PROMPT))

    def start(self):
        return self.e.run("start")

    def stop(self):
        return self.e.run("stop", timeout=10)

    def sent(self):
        """Frames the replay engine handed to the port (gen_tx)."""
        m = re.search(r"Generated \(replay\): (\d+) sent", self.e.run("show fwd stats"))
        return int(m.group(1)) if m else 0

    def quit(self):
        """Quit, at nice 0: at nice 19 beside the busy DUT and the test's
        clients its exit (unmapping the 1 GiB it touched) took tens of
        seconds of wall time, longer than the quit's wait."""
        renice(self.e.e.p.pid, 0)
        return self.e.stop()


def renice(pid, nice):
    """Every thread of process pid to niceness nice (Linux: a thread's own)."""
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, int(tid), nice)
        except OSError:
            pass
