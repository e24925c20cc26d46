# SPDX-License-Identifier: BSD-3-Clause
"""pppoe_handoff: no frame stranded or reordered when a session becomes bound.

Until a session's first NCP opens, every frame of the session goes to the
control path in arrival order; once IPCP opens, the control path publishes the
session as bound and IPv4 frames take the data path. egw_pppoe.h promises
that a data frame the control path receives is never forwarded by it, but
discarded and counted: ncp_not_open when IPCP was not open when the control
path read it, handoff_discard when it was queued before the data path saw the
session bound. This test proves it from the outside.

edgegw runs on two taps (port 0 access, port 1 uplink). Each round, a client
(pppoetest.py; IPv6CP protocol-rejected so that IPCP is the only NCP) does
discovery, LCP and PAP, then IPCP up to its last message, and holds that
message back. It sends PRE numbered IPv4/UDP frames (IPCP not open yet:
all must be discarded), then, in one burst, the held IPCP message followed at
once by BURST numbered frames, then keeps sending numbered frames for about
a second. Variants:
  client_ack_last  the client's own request is acked first; the held message
                   is the client's Configure-Ack of the AC's request
  ac_ack_last      the client acks the AC's request first; the held message
                   is the client's Configure-Request with the Nak'd address,
                   so the AC's Configure-Ack is the last IPCP message
Each variant runs ROUNDS times (new client MAC each time). Checks per round,
on the uplink capture:
  - the sequence numbers that came out are strictly increasing (no reorder);
  - they are exactly a suffix of what was sent (nothing lost after the first
    frame that passed, nothing stranded in between), and none of the PRE;
  - every frame sent 200 ms after the held message passed (bound for good);
  - frames missing = delta of ncp_not_open + handoff_discard in 'show pppoe
    stats' (every frame either out or counted, the sum exact);
and at exit the --stats-json totals equal the sums over the rounds.

usage: test_pppoe_handoff.py EDGEGW
"""
import ipaddress
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402
import pppoetest as pt  # noqa: E402

NAME = "pppoe_handoff"
IF_A, IF_U = "egwha0", "egwhu0"
REMOTE4 = "203.0.113.20"
DPORT = 5555
PRE, BURST, ROUNDS = 5, 48, 3
TAIL_S = 1.0  # keep sending numbered frames this long after the burst
SETUP = [
    "set fwd gateway xconnect",
    "port role 0 access",
    "port role 1 uplink",
    "pppoe ac-name edgegw-handoff",
    "pppoe pool add 100.65.0.0/24",
    "ppp auth pap",
    "ppp user add h h-secret",
    "start",
]
COUNTERS = ("ncp_not_open", "handoff_discard")


def numbered(src, rnd, seq):
    """IPv4/UDP with (round, sequence number) at the start of the payload."""
    from scapy.all import IP, UDP, Raw
    return bytes(IP(src=src, dst=REMOTE4, id=seq & 0xFFFF) / UDP(sport=6000 + rnd, dport=DPORT) /
                 Raw(struct.pack("!4sII", b"HOFF", rnd, seq) + bytes(seq % 64)))


def seq_of(f, rnd):
    """(round, seq) of a numbered frame out of the uplink, or None."""
    d = f.l3
    if f.etype != 0x0800 or len(d) < 40 or d[9] != 17:
        return None
    ihl = (d[0] & 0xF) * 4
    if struct.unpack_from("!H", d, ihl + 2)[0] != DPORT or d[ihl + 8:ihl + 12] != b"HOFF":
        return None
    r, s = struct.unpack_from("!II", d, ihl + 12)
    return s if r == rnd else None


def counters(e):
    return pt.counters_from_text(e.run("show pppoe stats"))


def one_round(c, e, acc, upl, rnd, variant):
    tag = "round %d (%s)" % (rnd, variant)
    cl = pt.Client(acc, "02:00:00:00:02:%02x" % rnd, user="h", secret="h-secret",
                   name="h%d" % rnd)
    # IPCP must be the first and only NCP: refuse IPv6CP (RFC 1661 Protocol-Reject)
    cl.ipv6cp = False
    if variant == "client_ack_last":
        cl.ack_ipcp = False
    else:
        cl.renak_ipcp = False
    if not c.check(cl.discover(b"") is not None and cl.request(b"") is not None and cl.lcp(),
                   "%s: discovery and LCP" % tag):
        return None
    r = cl.pap()
    if not c.check(r is not None and r[1] == 2, "%s: PAP accepted" % tag, str(r)):
        return None
    cl.send_ipcp_req()
    if variant == "client_ack_last":
        # our request: 0.0.0.0, Nak, the address again, Ack; the AC's request waits
        ok = cl.wait(lambda: cl.ipcp_acked_ours and cl.ipcp_req, 6)
    else:
        # Nak for our 0.0.0.0 and the AC's request acked; our second request waits
        ok = cl.wait(lambda: cl.ipcp_nak and cl.ipcp_acked_theirs, 6)
    if not c.check(ok, "%s: IPCP up to its last message" % tag,
                   "acked ours %s, AC requests %d, naks %d" %
                   (cl.ipcp_acked_ours, len(cl.ipcp_req), len(cl.ipcp_nak))):
        return None
    addr = cl.ip4
    c.check(addr != "0.0.0.0" and ipaddress.IPv4Address(addr) in
            ipaddress.IPv4Network("100.65.0.0/24"), "%s: address from the Nak" % tag, addr)
    before = counters(e)
    # the held message
    if variant == "client_ack_last":
        ident, o = cl.ipcp_req[-1]
        final = cl.sess_frame(pt.PPP_IPCP, pt.ppp_ctl(pt.CONF_ACK, ident, pt.opts(*o)))
    else:
        cl.ids["ipcp"] = cl.ident()
        final = cl.sess_frame(pt.PPP_IPCP, pt.ppp_ctl(
            pt.CONF_REQ, cl.ids["ipcp"], pt.opts((pt.IPCP_ADDR,
                                                  ipaddress.IPv4Address(addr).packed))))
    mark = upl.mark()
    seq = 0
    pre = []
    for _ in range(PRE):
        pre.append(cl.ip_frame(numbered(addr, rnd, seq)))
        seq += 1
    acc.send_many(pre)
    time.sleep(0.2)  # the PRE frames reach the control path while IPCP is not open
    burst = [final]
    for _ in range(BURST):
        burst.append(cl.ip_frame(numbered(addr, rnd, seq)))
        seq += 1
    t_final = time.monotonic()
    acc.send_many(burst)
    sent_at = {}
    end = t_final + TAIL_S
    while time.monotonic() < end:
        sent_at[seq] = time.monotonic()
        acc.send(cl.ip_frame(numbered(addr, rnd, seq)))
        seq += 1
        time.sleep(0.002)
    total = seq
    upl.wait(mark, lambda f: seq_of(f, rnd) == total - 1, 1, 3)
    time.sleep(0.3)
    got = [s for s in (seq_of(f, rnd) for f in upl.since(mark)) if s is not None]
    after = counters(e)
    if variant == "client_ack_last":
        opened = True
    else:
        opened = cl.wait(lambda: cl.ipcp_acked_ours, 1)
    c.check(opened, "%s: IPCP opened on the client's side" % tag)
    print("  %s: sent %d (PRE %d, burst %d, tail %d); out %d, first out %s; "
          "counters before %s after %s" %
          (tag, total, PRE, BURST, total - PRE - BURST, len(got), got[0] if got else None,
           {k: before.get(k) for k in COUNTERS}, {k: after.get(k) for k in COUNTERS}))
    c.check(all(b > a for a, b in zip(got, got[1:])), "%s: uplink order strictly increasing" %
            tag, "first inversion at %s" % next(((a, b) for a, b in zip(got, got[1:])
                                                 if b <= a), None))
    c.check(got and got == list(range(got[0], total)),
            "%s: what passed is exactly a suffix of what was sent (nothing stranded)" % tag,
            "%d frames, first %s, last %s" % (len(got), got[0] if got else None,
                                              got[-1] if got else None))
    c.check(not got or got[0] >= PRE, "%s: none of the %d frames sent before the handoff "
            "passed" % (tag, PRE))
    late = [s for s, t in sent_at.items() if t - t_final >= 0.2]
    c.check(late and all(s in set(got) for s in late),
            "%s: every frame sent 200 ms after the IPCP message passed" % tag,
            "%d late frames" % len(late))
    missing = total - len(set(got))
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in COUNTERS}
    c.eq(sum(delta.values()), missing,
         "%s: frames not out = ncp_not_open + handoff_discard (deltas %s)" % (tag, delta))
    c.check(delta["ncp_not_open"] >= PRE, "%s: the %d frames before the handoff counted as "
            "ncp_not_open" % (tag, PRE), str(delta))
    cl.padt_send()
    cl.wait(lambda: False, 0.3)
    return delta


def main():
    binary = sys.argv[1]
    c = egwtest.Checker(NAME)
    pt.tap_env(c, (IF_A, IF_U))
    from scapy.all import conf
    conf.verb = 0
    e, up = pt.start_edgegw(c, NAME, binary, IF_A, IF_U, SETUP)
    acc = upl = None
    sums = {k: 0 for k in COUNTERS}
    rounds_ok = 0
    try:
        if up:
            acc, upl = pt.Port(IF_A), pt.Port(IF_U)
            c.check("handoff_discard" in e.run("show pppoe stats"),
                    "show pppoe stats lists handoff_discard")
            rnd = 1
            for variant in ("client_ack_last", "ac_ack_last"):
                for _ in range(ROUNDS):
                    d = one_round(c, e, acc, upl, rnd, variant)
                    rnd += 1
                    if d is not None:
                        rounds_ok += 1
                        for k in COUNTERS:
                            sums[k] += d[k]
    finally:
        for p in (acc, upl):
            if p is not None:
                p.close()
        rc = e.stop()
    c.eq(rc, 0, "edgegw exit status")
    c.eq(rounds_ok, 2 * ROUNDS, "rounds completed")
    s = egwtest.load_json(c, e.js)
    if s is not None:
        egwtest.check_identity(c, s)
        p = s.get("pppoe", {})
        flat = {}

        def walk(d):
            for k, v in d.items():
                if isinstance(v, dict):
                    walk(v)
                elif isinstance(v, int):
                    flat.setdefault(k, v)
        walk(p)
        for k in COUNTERS:
            c.eq(flat.get(k), sums[k], "stats JSON pppoe %s = sum over the rounds" % k)
        c.eq(flat.get("sessions_created"), 2 * ROUNDS, "stats JSON sessions_created")
        c.eq(flat.get("ipcp_opened"), 2 * ROUNDS, "stats JSON ipcp_opened")
    c.finish()


if __name__ == "__main__":
    main()
