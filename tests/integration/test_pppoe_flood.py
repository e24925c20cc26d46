# SPDX-License-Identifier: BSD-3-Clause
"""pppoe_flood: a discovery flood does not drown the control path.

edgegw (the DUT) runs the gateway engine (xconnect) on two net_tap ports:
port 0 (egwflA) is a PPPoE access port, port 1 (egwflU) the uplink; PAP;
keepalive every second, a session closed after 3 unanswered echoes; the
flood guard at its defaults. The clients of pppoetest.py (pppoeflood.Sub)
bind 1,000 sessions, which answer every LCP Echo-Request and send one
numbered UDP/IPv4 frame a second upstream, while the uplink's kernel side
sends each of them one numbered frame a second downstream. Then a second
edgegw (pppoeflood.Generator) replays a capture of 1,000,000 PADI and PADR
frames from random MACs (half PADIs, four in ten PADRs with a made-up
AC-Cookie, one in ten without one), in a loop at FLOOD_PPS, through
net_af_packet into the access tap's kernel side, until it has sent at least
1,000,000 frames and four new clients, started 1 s into the flood and
retrying every 0.34 s (inside the per-MAC rate), have each got a session,
or 75 s have passed.

The clients' frames go through the same tap queue as the flood; they are
sent with PACKET_QDISC_BYPASS and sent again on ENOBUFS (pppoeflood), so
none is lost in the kernel and every loss counted below is edgegw's.
The clients run at nice -10, the DUT at 0 and the generator at 19 (0
again for its quit), so the flood takes the CPU time the others leave and
the clients, on 2 CPUs beside two busy-polling edgegws, still keep up; the
test's packet sockets have 64 MiB receive buffers (pppoetest.Port).

Checks:
  - sessions: at least the 1,000 bound every second of the flood (the
    command line, served by the control path's lcore, answers), all of them
    and the new ones bound after it, none closed (closed_echo_timeout and
    every other closed_* 0 until the quit); the AC's Echo-Requests kept
    their 1 s cadence (no gap above 2 s);
  - data: each numbered frame arrived exactly once at the other side, and
    each session's data counters in 'show pppoe sessions detail' (and in
    --stats-json) equal what was sent and received;
  - no PPP control or other control frame lost to a full ring
    (ctrl_ring_full_up, ctrl_ring_full_start, ctrl_ring_full 0);
  - the guard: PADIs and PADRs passed at most at 2,000/s (plus a second's
    burst) during the flood;
  - the flood's fate, from --stats-json at exit: the flood frames edgegw
    received on port 0 (the port's ethdev RX counter less the frames the
    clients sent and the kernel's own) equal the discovery frames edgegw
    counted (the worker's ctrl_ring_full_disc plus the control path's
    discovery class) less the clients' discovery frames, and are at most
    what the generator sent; every discovery frame the control path
    received has exactly one fate (PADO or PADS sent, or one disc_*
    reason); the PADOs sent to the flood's MACs are seen on the wire;
  - memory: edgegw's RSS grows by at most 16 MiB from before the flood to
    2 s after it (plus ASan's quarantine in a sanitizer build);
  - the new clients each get a session during the flood (the PADIs and
    PADRs they needed are printed).

usage: test_pppoe_flood.py EDGEGW
"""
import collections
import gc
import ipaddress
import os
import statistics
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402
import pppoeflood as pf  # noqa: E402
import pppoetest as pt  # noqa: E402
from pppoetest import MAC_A, MAC_U, PEER_MAC  # noqa: E402

NAME = "pppoe_flood"
IF_A, IF_U = "egwflA", "egwflU"
N_SESS = 1000          # bound sessions kept through the flood
N_NEW = 4              # clients that set up a session during the flood
FLOOD_MIN = 1000000    # flood frames at least
FLOOD_MAX_S = 75       # flood at most this long (the new clients' deadline)
# the flood's rate, 20 times the guard's 2,000 PADIs and PADRs a second: at
# full speed (66,000-82,000 frames/s here) the flood fills the access tap's
# queue, the clients' sends then wait behind it (ENOBUFS, tried again), and
# the reader thread, which answers each Echo-Request itself, fell so far
# behind that edgegw closed every session (2,273 of 5,998 Echo-Replies
# arrived in one run): the test's tap, not edgegw's control path
FLOOD_PPS = 40000
DATA_PERIOD = 1.0      # one numbered frame per session and direction
RSS_BOUND_KIB = 16 * 1024
PADI_RATE = 2000       # 'pppoe limit padi|padr' defaults (all clients, per s)
ECHO_GAP_MAX = 2.0     # keepalive 1 s: largest gap between two Echo-Requests
POOL4 = "100.64.0.0/16"
REMOTE4 = "203.0.113.10"
USER, SECRET = "sub", "sub-secret"
SETUP = [
    "set fwd gateway xconnect",
    "port role 0 access",
    "port role 1 uplink",
    "pppoe pool add %s" % POOL4,
    "pppoe keepalive 1 3",
    "ppp auth pap",
    "ppp user add %s %s" % (USER, SECRET),
    "start",
]
MARK = b"EGWF"

# discovery frames the control path drops before padi/padr/padt_input
DISC_EARLY = ("disc_not_access", "disc_too_long", "disc_short", "disc_bad_ver_type",
              "disc_bad_length", "disc_bad_src", "disc_unexpected_code", "disc_unknown_code")
# the fate of a discovery frame that reached padi/padr/padt_input: one of
# these, or a PADO/PADS sent (pado_tx, pads_tx, pads_resent) or a session
# closed by a PADT (closed_padt)
DISC_DROPS = ("disc_padi_bad_dst", "disc_padi_sid", "disc_auth_hold", "disc_padi_rate_mac",
              "disc_padi_rate", "disc_padr_bad_dst", "disc_padr_sid", "disc_padr_rate_mac",
              "disc_padr_rate", "disc_padt_bad_dst", "disc_tag_truncated", "disc_tag_duplicate",
              "disc_tag_bad_len", "disc_no_service", "disc_service_unknown", "disc_padi_full",
              "disc_padi_starting", "disc_no_cookie", "disc_bad_cookie", "disc_cookie_reused",
              "disc_cookie_table_full", "disc_padr_service_unknown", "disc_limit_sessions",
              "disc_limit_per_mac", "disc_limit_starting", "disc_padt_unknown",
              "disc_reply_too_long")
# causes no session may close by before the quit (which closes them all as
# closed_shutdown)
CLOSED = ("closed_echo_timeout", "closed_padt", "closed_lcp_terminate", "closed_lcp_failed",
          "closed_lcp_timeout", "closed_ncp_failed", "closed_auth_failed", "closed_admin",
          "closed_idle_timeout")
# the rings to the control path that must never overflow (discovery may)
RINGS = ("ctrl_ring_full_up", "ctrl_ring_full_start", "ctrl_ring_full")
# ports' drop reasons of frames that are not PPPoE (the kernel's own frames
# on the tap before its IPv6 is switched off)
NOT_PPPOE = ("access_not_session", "unhandled", "bad_frame", "otherhost")


def csum16(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def udp4(src, dst, idx, seq, way):
    """A 60-byte UDP/IPv4 packet carrying MARK, the session index, the
    sequence number and the direction (b'u' or b'd'); UDP checksum 0."""
    payload = MARK + struct.pack("!IIc", idx, seq, way) + bytes(19)
    udp = struct.pack("!HHHH", 5000, 9, 8 + len(payload), 0) + payload
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), idx & 0xFFFF, 0, 64, 17, 0,
                    ipaddress.IPv4Address(src).packed, ipaddress.IPv4Address(dst).packed)
    h = h[:10] + struct.pack("!H", csum16(h)) + h[12:]
    return h + udp


def marked(pkt):
    """(idx, seq, way) of a packet made by udp4(), or None."""
    if len(pkt) < 28 + 13 or pkt[9] != 17 or pkt[28:32] != MARK:
        return None
    return struct.unpack_from("!IIc", pkt, 32)


class T:
    def __init__(self, c, binary):
        self.c = c
        self.binary = binary
        self.e = self.gen = None
        self.acc = self.upl = None
        self.subs = []
        self.new = []
        self.stop_data = threading.Event()
        self.up_sent = []
        self.dn_sent = []
        self.data_th = None
        self.reader_drops = 0  # frames the test's own sockets dropped
        self.t_flood = (0, 0)
        self.info = {}
        self.lag = Lag()

    # ---------------------------------------------------------------- data
    def data_loop(self):
        seq = 0
        while not self.stop_data.is_set():
            t0 = time.monotonic()
            for i, cl in enumerate(self.subs):
                self.acc.send(cl.ip_frame(udp4(cl.ip4, REMOTE4, i, seq, b"u")))
                self.up_sent[i] += 1
                self.upl.send(pt.eth(MAC_U, PEER_MAC, 0x0800) +
                              udp4(REMOTE4, cl.ip4, i, seq, b"d"))
                self.dn_sent[i] += 1
            seq += 1
            self.stop_data.wait(max(0.0, t0 + DATA_PERIOD - time.monotonic()))

    # ---------------------------------------------------------------- phases
    def bind_all(self):
        c = self.c
        self.subs = [pf.Sub(self.acc, "02:00:10:00:%02x:%02x" % (i >> 8, i & 0xFF),
                            user=USER, secret=SECRET, name="s%d" % i) for i in range(N_SESS)]
        t0 = time.monotonic()
        res = pf.connect_many(self.subs, t0 + 60, threads=32)
        dt = time.monotonic() - t0
        bad = [(cl.name, r["err"]) for cl, r in res.items() if not r["ok"]]
        c.check(not bad, "%d sessions bound before the flood" % N_SESS,
                "%.1f s (%.0f/s); failed: %s" % (dt, N_SESS / dt, bad[:5]))
        st = pf.sessions_by_state(self.e)
        c.eq(st, (N_SESS, 0, N_SESS, 0), "show pppoe stats: (total, negotiating, bound, "
             "closing) before the flood")
        return not bad

    def flood(self):
        """The flood, and new clients during it; returns the connect results."""
        c = self.c
        self.lag.start()
        self.gen.start()
        t0 = time.monotonic()
        time.sleep(1.0)
        res = {}
        new_th = threading.Thread(target=lambda: res.update(pf.connect_many(
            self.new, t0 + FLOOD_MAX_S, threads=len(self.new))), daemon=True)
        new_th.start()
        sent = 0
        cli = []  # (seconds the DUT took to answer, sessions bound)
        while True:
            time.sleep(1.0)
            sent = self.gen.sent()
            tq = time.monotonic()
            st = pf.sessions_by_state(self.e)
            cli.append((time.monotonic() - tq, st[2] if st else None))
            el = time.monotonic() - t0
            c.log("flood: %d frames sent in %.1f s; %s sessions bound (the command line "
                  "answered in %.2f s); new clients done: %d of %d" %
                  (sent, el, cli[-1][1], cli[-1][0], len(res), len(self.new)))
            if (sent >= FLOOD_MIN and not new_th.is_alive()) or el > FLOOD_MAX_S + 2:
                break
        self.gen.stop()
        self.info["lag"] = self.lag.stop()
        c.log("the test's own scheduling during the flood: a 50 ms sleep woke up to %.2f s "
              "late; CPU time stolen by the hypervisor %.1f s" % self.info["lag"])
        bound = [b for _t, b in cli]
        c.check(all(b is not None and b >= N_SESS for b in bound),
                "every second of the flood: at least the %d sessions bound "
                "(show pppoe stats, on the control path's lcore)" % N_SESS,
                "fewest %s over %d samples; slowest answer %.2f s" %
                (min(bound, key=lambda b: -1 if b is None else b), len(cli),
                 max(t for t, _b in cli)))
        self.info["cli_max_s"] = max(t for t, _b in cli)
        t1 = time.monotonic()
        new_th.join(5)
        self.t_flood = (t0, t1)
        self.info["gen_sent"] = self.gen.sent()
        self.info["flood_s"] = t1 - t0
        c.log("flood stopped: %d frames in %.1f s (%.0f frames/s offered)" %
              (self.info["gen_sent"], t1 - t0, self.info["gen_sent"] / (t1 - t0)))
        return res

    def run(self):
        c = self.c
        pt.tap_env(c, (IF_A, IF_U))
        pcap = c.path("flood.pcap")
        t0 = time.monotonic()
        mix = pf.write_flood(pcap, FLOOD_MIN, MAC_A)
        c.log("flood capture: %d frames %s, %.1f s" % (FLOOD_MIN, mix, time.monotonic() - t0))
        # the DUT at the default niceness, the test's clients above it (main())
        self.e, up = pt.start_edgegw(c, NAME, self.binary, IF_A, IF_U, SETUP, nice=0)
        try:
            if up:
                self.acc = pf.LosslessPort(IF_A)
                self.upl = pf.LosslessPort(IF_U)
                self.gen = pf.Generator(c, self.binary, IF_A, pcap, "egwtest_%s_gen" % NAME,
                                       pps=FLOOD_PPS)
                if c.check(self.gen.ok, "generator edgegw up (replay of %s)" % pcap):
                    self.flows()
        finally:
            self.stop_data.set()
            if self.data_th is not None:
                self.data_th.join(5)
            if self.gen is not None:
                tq = time.monotonic()
                self.gen.quit()
                c.log("generator stopped in %.1f s" % (time.monotonic() - tq))
            for p in (self.acc, self.upl):
                if p is not None:
                    self.reader_drops += p.socket_drops()
                    p.close()
            tq = time.monotonic()
            rc = self.e.stop()
            c.log("edgegw stopped in %.1f s" % (time.monotonic() - tq))
        c.eq(rc, 0, "edgegw exit status")
        if rc != 0:
            egwtest.show_output(self.e.stdout(), self.e.e.stderr())
        self.final()

    def flows(self):
        c = self.c
        if not self.bind_all():
            return
        self.up_sent = [0] * N_SESS
        self.dn_sent = [0] * N_SESS
        self.data_th = threading.Thread(target=self.data_loop, daemon=True)
        self.data_th.start()
        time.sleep(3.0)
        self.new = [pf.Sub(self.acc, "02:00:20:00:00:%02x" % i, user=USER, secret=SECRET,
                           name="new%d" % i) for i in range(N_NEW)]
        pid = self.e.e.p.pid
        rss0 = pf.rss_kib(pid)
        st0 = pt.counters_from_text(self.e.run("show pppoe stats", timeout=10))
        ts0 = time.monotonic()
        res = self.flood()
        time.sleep(2.0)
        rss1 = pf.rss_kib(pid)
        self.info.update(rss0=rss0, rss1=rss1)
        asan = pf.asan_quarantine_kib(pid)
        self.info["asan_kib"] = asan
        c.check(rss1 - rss0 <= RSS_BOUND_KIB + asan, "edgegw RSS before and after the flood "
                "within %d MiB%s" % (RSS_BOUND_KIB >> 10, " + %d MiB of ASan quarantine" %
                                     (asan >> 10) if asan else ""),
                "%d KiB -> %d KiB (%+d KiB)" % (rss0, rss1, rss1 - rss0))
        st1 = pt.counters_from_text(self.e.run("show pppoe stats", timeout=10))
        self.check_guard(st0, st1, time.monotonic() - ts0)
        # the new clients
        for cl in self.new:
            r = res.get(cl, {"ok": False, "err": "not run", "padi": 0, "padr": 0})
            c.check(r["ok"], "%s: a session during the flood" % cl.name,
                    "%d PADIs, %d PADRs, bound %.1f s after its first PADI%s" %
                    (r["padi"], r["padr"], r.get("t_bound", r["t0"]) - r["t0"] if "t0" in r
                     else 0, "" if r["ok"] else "; " + str(r["err"])))
        ok = [r for r in res.values() if r["ok"]]
        if ok:
            self.info["new"] = {
                "padi": sorted(r["padi"] for r in ok), "padr": sorted(r["padr"] for r in ok),
                "s": sorted(round(r["t_bound"] - r["t0"], 1) for r in ok)}
            c.log("new clients during the flood: PADIs %s, PADRs %s, seconds to bound %s" %
                  (self.info["new"]["padi"], self.info["new"]["padr"], self.info["new"]["s"]))
        # keepalive under the flood
        t0, t1 = self.t_flood
        gaps = []
        for cl in self.subs:
            ts = [t for t in cl.echo_t if t0 - 1.5 <= t <= t1 + 1.5]
            gaps += [b - a for a, b in zip(ts, ts[1:])]
        self.info["echo_gap"] = (max(gaps) if gaps else None,
                                 statistics.median(gaps) if gaps else None, len(gaps))
        c.check(gaps and max(gaps) <= ECHO_GAP_MAX,
                "Echo-Requests to the %d sessions kept their 1 s cadence during the flood" %
                N_SESS, "largest gap %.2f s, median %.2f s over %d gaps (bound %.1f s)" %
                (self.info["echo_gap"][0] or 0, self.info["echo_gap"][1] or 0, len(gaps),
                 ECHO_GAP_MAX))
        for k in CLOSED:
            c.eq(st1.get(k, 0) - st0.get(k, 0), 0, "during the flood: %s" % k)
        c.log("flood counters (show pppoe stats, during the flood): %s" %
              {k: st1.get(k, 0) - st0.get(k, 0) for k in
               ("padi_rx", "pado_tx", "padr_rx", "pads_tx", "disc_padi_rate_mac",
                "disc_padi_rate", "disc_padr_rate_mac", "disc_padr_rate", "disc_no_cookie",
                "disc_bad_cookie", "echo_tx", "echo_rx")})
        # data: stop, let the last frames arrive, count
        time.sleep(2.0)
        self.stop_data.set()
        self.data_th.join(10)
        time.sleep(1.5)
        self.check_data()
        st = pf.sessions_by_state(self.e)
        n_new = sum(1 for r in res.values() if r["ok"])
        c.eq(st, (N_SESS + n_new, 0, N_SESS + n_new, 0),
             "show pppoe stats: (total, negotiating, bound, closing) after the flood")
        self.info["done"] = True

    def check_guard(self, st0, st1, dt):
        """What passed the guard between two snapshots of 'show pppoe stats' dt
        seconds apart: at most the default 2,000/s of PADIs and of PADRs,
        plus one second's burst."""
        keys = ("padi_rx", "padr_rx", "pado_tx", "pads_tx", "disc_padi_rate_mac",
                "disc_padi_rate", "disc_padr_rate_mac", "disc_padr_rate", "disc_bad_cookie",
                "disc_no_cookie")
        d = {k: st1.get(k, 0) - st0.get(k, 0) for k in keys}
        most = int(PADI_RATE * dt) + PADI_RATE
        padi_pass = d["padi_rx"] - d["disc_padi_rate_mac"] - d["disc_padi_rate"]
        padr_pass = d["padr_rx"] - d["disc_padr_rate_mac"] - d["disc_padr_rate"]
        self.c.check(0 < padi_pass <= most and d["pado_tx"] <= padi_pass,
                     "PADIs through the guard during the flood at most %d/s + a burst" %
                     PADI_RATE, "%d of %d PADIs in %.1f s (at most %d), %d PADOs" %
                     (padi_pass, d["padi_rx"], dt, most, d["pado_tx"]))
        self.c.check(0 < padr_pass <= most, "PADRs through the guard during the flood at most "
                     "%d/s + a burst" % PADI_RATE, "%d of %d PADRs in %.1f s (at most %d): "
                     "%d bad cookie, %d no cookie, %d PADS" %
                     (padr_pass, d["padr_rx"], dt, most, d["disc_bad_cookie"],
                      d["disc_no_cookie"], d["pads_tx"]))

    def check_data(self):
        c = self.c
        up = {}
        for f in self.upl.since(0, lambda f: f.etype == 0x0800):
            m = marked(f.l3)
            if m is not None and m[2] == b"u":
                up[(m[0], m[1])] = up.get((m[0], m[1]), 0) + 1
        dn = {}
        dn_per = [0] * N_SESS
        for i, cl in enumerate(self.subs):
            for p in list(cl.data4):
                m = marked(p)
                if m is not None and m[2] == b"d" and m[0] == i:
                    dn[(i, m[1])] = dn.get((i, m[1]), 0) + 1
                    dn_per[i] += 1
        up_want = {(i, s) for i in range(N_SESS) for s in range(self.up_sent[i])}
        dn_want = {(i, s) for i in range(N_SESS) for s in range(self.dn_sent[i])}
        lost_up = sorted(up_want - set(up))
        lost_dn = sorted(dn_want - set(dn))
        c.check(not lost_up, "upstream: every numbered frame out of the uplink",
                "%d sent, %d lost %s" % (len(up_want), len(lost_up), lost_up[:5]))
        c.check(not lost_dn, "downstream: every numbered frame on its session",
                "%d sent, %d lost %s" % (len(dn_want), len(lost_dn), lost_dn[:5]))
        c.check(all(v == 1 for v in list(up.values()) + list(dn.values())) and
                set(up) <= up_want and set(dn) <= dn_want,
                "no data frame duplicated or made up, either way")
        self.info["data"] = (len(up_want), len(dn_want))
        # edgegw's per-session counters
        det = self.e.run("show pppoe sessions detail", timeout=30)
        cnt = session_counters(det)
        bad = []
        for i, cl in enumerate(self.subs):
            got = cnt.get(cl.sid)
            if got != (self.up_sent[i], dn_per[i]):
                bad.append((cl.sid, got, (self.up_sent[i], dn_per[i])))
        c.check(not bad, "show pppoe sessions detail: each session's data rx/tx packets equal "
                "the frames sent/received (%d sessions)" % N_SESS,
                "mismatches (sid, got, want): %s" % bad[:5])
        self.dn_per = dn_per

    def final(self):
        c = self.c
        js = egwtest.load_json(c, self.e.js)
        if js is None or "done" not in self.info:
            return
        # counted once the access port is closed: the clients answer echo
        # requests until then
        self.info["sent"] = self.acc.counts()
        self.info["pado_others"] = self.acc.pado_to_others()
        self.info["pado_mine"] = sum(len(cl.pado) for cl in self.subs + self.new)
        egwtest.check_identity(c, js)
        ctl = dict(js["pppoe"]["control"])
        p0 = egwtest.port_by_id(js, 0)
        drops0 = dict(p0["drops"])
        missing = [k for k in DISC_EARLY + DISC_DROPS + CLOSED + (
            "padi_rx", "padr_rx", "padt_rx", "pado_tx", "pads_tx", "pads_resent", "tx_nomem")
            if k not in ctl] + [k for k in NOT_PPPOE + RINGS if k not in drops0]
        c.check(not missing, "stats JSON has every counter this test reads", str(missing))
        # an older edgegw lacks some: count them as 0 and let the checks say
        ctl = collections.defaultdict(int, ctl)
        drops0 = collections.defaultdict(int, drops0)
        n_new = sum(1 for cl in self.new if cl.sid)
        # the quit closes every session (cause shutdown) before the JSON is
        # written; nothing else closed any
        c.eq(ctl["closed_shutdown"], N_SESS + n_new, "stats JSON: closed_shutdown (every "
             "session, at the quit)")
        for k in CLOSED:
            c.eq(ctl[k], 0, "stats JSON: %s" % k)
        for k in RINGS:
            c.eq(sum(p["drops"].get(k, 0) for p in js["ports"]), 0,
                 "stats JSON: %s (no PPP control frame lost to a full ring)" % k)
        # per-session counters at exit
        byid = {s["id"]: s for s in js["pppoe"]["sessions"]}
        bad = [(cl.sid, byid.get(cl.sid, {}).get("rx_pkts"), byid.get(cl.sid, {}).get("tx_pkts"))
               for i, cl in enumerate(self.subs)
               if byid.get(cl.sid, {}).get("rx_pkts") != self.up_sent[i] or
               byid.get(cl.sid, {}).get("tx_pkts") != self.dn_per[i]]
        c.check(not bad, "stats JSON: each session's rx_pkts/tx_pkts equal the frames sent/"
                "received", "mismatches: %s" % bad[:5])
        # the flood's fate
        sent, sent_disc, enobufs = self.info["sent"]
        rx0 = p0["ethdev"]["ipackets"]
        c.eq(rx0, p0["rx"], "port 0: ethdev ipackets = frames the worker received")
        not_pppoe = sum(drops0[k] for k in NOT_PPPOE)
        flood_by_rx = rx0 - sent - not_pppoe
        disc_in = drops0["ctrl_ring_full_disc"] + js["control"]["by_class"]["pppoe-discovery"]
        flood_by_class = disc_in - sent_disc
        c.eq(flood_by_class, flood_by_rx,
             "flood frames edgegw received: discovery counted (ctrl_ring_full_disc %d + to the "
             "control path %d - the clients' %d) = port 0 RX %d - the clients' frames %d - "
             "not PPPoE %d" % (drops0["ctrl_ring_full_disc"],
                              js["control"]["by_class"]["pppoe-discovery"], sent_disc, rx0, sent,
                              not_pppoe))
        gen = self.info["gen_sent"]
        c.check(0 < flood_by_class <= gen and flood_by_class >= FLOOD_MIN * 0.99,
                "flood frames received (%d) of those the generator sent (%d), at least %d" %
                (flood_by_class, gen, int(FLOOD_MIN * 0.99)),
                "%d not received (left in the generator's TX ring at its stop)" %
                (gen - flood_by_class))
        early = sum(ctl[k] for k in DISC_EARLY)
        c.eq(js["control"]["by_class"]["pppoe-discovery"],
             ctl["padi_rx"] + ctl["padr_rx"] + ctl["padt_rx"] + early,
             "control path: discovery frames = padi_rx + padr_rx + padt_rx + early drops")
        # (pads_tx counts the PADSs sent again for a repeated PADR too,
        # pads_resent only those)
        fates = {k: ctl[k] for k in DISC_DROPS + ("pado_tx", "pads_tx", "closed_padt")}
        c.eq(sum(fates.values()), ctl["padi_rx"] + ctl["padr_rx"] + ctl["padt_rx"],
             "every PADI/PADR/PADT has one fate: a PADO/PADS sent or one disc_* reason "
             "(%s)" % {k: v for k, v in fates.items() if v})
        c.eq((ctl["tx_nomem"], js["control"]["tx_drop"]), (0, 0),
             "control path: (tx_nomem, tx_drop): every PADO/PADS made was handed to a worker")
        pado_flood = ctl["pado_tx"] - self.info["pado_mine"]
        c.eq(self.info["pado_others"], pado_flood,
             "PADOs seen on the wire to the flood's MACs = pado_tx - the clients' PADOs")
        self.info.update(flood_rx=flood_by_rx, disc_in=disc_in, ring_full=drops0[
            "ctrl_ring_full_disc"], fates=fates, enobufs=enobufs, sent=sent,
            backpressure=js["control"]["tx_backpressure"])
        self.report(js)

    def report(self, js):
        i = self.info
        print("  --- flood report")
        print("  sessions kept through the flood: %d (keepalive 1 s x 3); new during it: %d" %
              (N_SESS, sum(1 for cl in self.new if cl.sid)))
        print("  flood: %d frames offered by the generator in %.1f s (%.0f frames/s); %d "
              "received by edgegw on port 0" % (i["gen_sent"], i["flood_s"],
                                                i["gen_sent"] / i["flood_s"], i["flood_rx"]))
        print("  discovery frames counted: %d = ctrl_ring_full_disc %d + control path %d" %
              (i["disc_in"], i["ring_full"], i["disc_in"] - i["ring_full"]))
        print("  fates: %s" % {k: v for k, v in i["fates"].items() if v})
        print("  control TX input paused (tx_backpressure): %d; slowest answer of the command "
              "line (same lcore as the control path) during the flood: %.2f s" %
              (i["backpressure"], i["cli_max_s"]))
        print("  data frames: %d up, %d down, none lost; clients' sends tried again on a full "
              "tap queue: %d" % (i["data"][0], i["data"][1], i["enobufs"]))
        print("  Echo-Request gaps during the flood: largest %.2f s, median %.2f s" %
              (i["echo_gap"][0] or 0, i["echo_gap"][1] or 0))
        print("  the test's own threads woke up to %.2f s late; %.1f s of CPU stolen" %
              i["lag"])
        print("  RSS: %d KiB before, %d KiB after (%+d KiB)" % (i["rss0"], i["rss1"],
                                                             i["rss1"] - i["rss0"]))
        if "new" in i:
            print("  new clients: PADIs %s, PADRs %s, seconds to bound %s" %
                  (i["new"]["padi"], i["new"]["padr"], i["new"]["s"]))
        print("  ---")


class Lag:
    """How late the test's own threads ran during the flood: the largest
    oversleep of a 50 ms sleep, and the CPU time the hypervisor stole
    (/proc/stat), for the log: a stalled test explains its clients' misses."""

    def __init__(self):
        self.done = threading.Event()
        self.worst = 0.0
        self.th = None
        self.steal0 = 0

    @staticmethod
    def steal_s():
        with open("/proc/stat") as f:
            w = f.readline().split()
        return int(w[8]) / os.sysconf("SC_CLK_TCK") if len(w) > 8 else 0.0

    def loop(self):
        while not self.done.is_set():
            t = time.monotonic()
            time.sleep(0.05)
            self.worst = max(self.worst, time.monotonic() - t - 0.05)

    def start(self):
        self.steal0 = self.steal_s()
        self.th = threading.Thread(target=self.loop, daemon=True)
        self.th.start()

    def stop(self):
        """(largest oversleep in s, seconds stolen)"""
        self.done.set()
        self.th.join(1)
        return self.worst, self.steal_s() - self.steal0


def session_counters(text):
    """{sid: (data rx packets, data tx packets)} from 'show pppoe sessions detail'."""
    out = {}
    sid = None
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 5 and w[0].isdigit() and w[1].isdigit() and w[3].count(":") == 5:
            sid = int(w[0])
        elif sid is not None and len(w) >= 8 and w[0] == "data" and w[1] == "rx":
            out[sid] = (int(w[2]), int(w[7]))
            sid = None
    return out


ATTEMPTS = 3
# the longest stall of the test's own threads (a 50 ms sleep's oversleep
# during the flood) an attempt may have and still count: sessions close
# after 3 Echo-Requests 1 s apart go unanswered
LAG_MAX = 1.0


def main():
    # No cyclic garbage collection: the readers keep every frame they get
    # (hundreds of thousands in a long flood), and each full collection
    # walks them all, stalling the clients' threads, which must answer
    # edgegw's Echo-Requests within 3 s. Frames are freed by reference
    # counting; nothing here makes cycles worth collecting.
    gc.disable()
    # The clients (this process's threads, made after this) run above the
    # DUT (nice 0) and the flood's generator (nice 19, pppoeflood): on 2
    # CPUs beside two busy-polling edgegws they must still answer each
    # Echo-Request and read every frame, or the run says nothing of edgegw.
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -10)
    except OSError as e:
        print("[%s] could not raise the test's priority (%s): it may fall behind" % (NAME, e))
    # What edgegw did can only be judged from what the test saw: a run in
    # which the test's own sockets dropped frames, or its own threads
    # stalled for longer than LAG_MAX (its Python clients, on 2 CPUs beside
    # two busy-polling edgegws, fell behind: one CI run's threads all woke
    # 13.6 s late, while edgegw kept its Echo-Requests' 1 s cadence and so
    # closed every session), is discarded and run again, said so in the
    # log; the last attempt counts whatever it saw.
    for attempt in range(1, ATTEMPTS + 1):
        c = egwtest.Checker(NAME)
        t = T(c, sys.argv[1])
        t.run()
        lag = t.info.get("lag", (0.0, 0.0))
        if (t.reader_drops == 0 and lag[0] <= LAG_MAX) or attempt == ATTEMPTS:
            c.eq(t.reader_drops, 0, "the test's sockets dropped no frame (attempt %d of %d)" %
                 (attempt, ATTEMPTS))
            c.check(lag[0] <= LAG_MAX, "the test's own threads stalled at most %.1f s during "
                    "the flood (attempt %d of %d)" % (LAG_MAX, attempt, ATTEMPTS),
                    "a 50 ms sleep woke up to %.2f s late" % lag[0])
            c.finish()
        print("[%s] attempt %d discarded: the test's own sockets dropped %d frames, and "
              "during the flood its threads woke up to %.2f s late (%.1f s of CPU stolen): "
              "its clients fell behind, so what they saw says nothing of edgegw; %d checks "
              "had failed; outputs kept in %s; again" % (NAME, attempt, t.reader_drops, lag[0],
                                                         lag[1], c.failed, c.tmp), flush=True)


if __name__ == "__main__":
    main()
