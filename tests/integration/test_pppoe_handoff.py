# SPDX-License-Identifier: BSD-3-Clause
"""pppoe_handoff: no frame lost, stranded or reordered when a session binds.

PPP control frames go to the control path in arrival order; IP frames never
do. A peer is Opened, and may send data, as soon as it has sent its IPCP
Configure-Ack; that Ack may still be on its way to the control path. So the
data path holds a session's IPv4 frames that arrive behind the peer's IPCP
Configure-Ack until the control path opens IPCP, then sends them first, in
order (egw_pppoe.h, "Handoff"). IP frames of an NCP not open that are not
behind such an Ack are discarded on the data path (RFC 1661), counted as
pppoe_ncp_not_open. This test proves it from the outside.

edgegw runs on two taps (port 0 access, port 1 uplink). Each round, a client
(pppoetest.py; IPv6CP protocol-rejected so that IPCP is the only NCP) does
discovery, LCP and PAP, then IPCP up to its last message, and holds that
message back. It sends PRE numbered IPv4/UDP frames (IPCP not open yet:
all must be discarded), then, in one burst, the held IPCP message followed at
once by BURST numbered frames, then keeps sending numbered frames for about
a second. Variants:
  client_ack_last  the client's own request is acked first; the held message
                   is the client's Configure-Ack of the AC's request (the
                   burst behind it is held on the data path)
  ac_ack_last      the client acks the AC's request first; the held message
                   is the client's Configure-Request with the Nak'd address,
                   so the AC's Configure-Ack is the last IPCP message: the
                   burst leaves the moment it arrives
Each variant runs ROUNDS times (new client MAC each time). Checks per round:
  - on the uplink capture, exactly the frames sent behind the held message,
    in order: nothing lost, reordered or stranded, none of the PRE;
  - the uplink's ethdev TX counter moved by exactly that many frames (a
    capture can lose frames on a loaded machine, the counter cannot);
  - the PRE frames, and only they, are counted as pppoe_ncp_not_open; the
    control path saw no data frame (ncp_not_open, handoff_discard unmoved);
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
PRE, BURST, ROUNDS = 5, 48, 5
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
# the data path's drop of IP frames of an NCP not open; the control path's
# two counters of data frames it received (none may reach it any more)
DP_DROP = "pppoe_ncp_not_open"
COUNTERS = (DP_DROP, "ncp_not_open", "handoff_discard")


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
    """The control counters and the data-path drops of 'show pppoe stats'."""
    import re
    text = e.run("show pppoe stats")
    out = pt.counters_from_text(text)
    for m in re.finditer(r"^\s*(pppoe_\w+)\s+(\d+)\s", text, re.M):
        out[m.group(1)] = int(m.group(2))
    return out


def uplink_tx(e):
    """TX-packets of port 1 from 'show port stats 1' (the ethdev counter)."""
    import re
    m = re.search(r"TX-packets:\s*(\d+)", e.run("show port stats 1"))
    return int(m.group(1)) if m else None


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
    tx_before = uplink_tx(e)
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
    if variant == "ac_ack_last":
        # the client opens when the AC acks this request (RFC 1661): the
        # burst goes the moment that Ack arrives
        acc.send(final)
        cl.wait(lambda: cl.ipcp_acked_ours, 3)
        burst = burst[1:]
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
    tx_after = uplink_tx(e)
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
            tag, "first inversion at %s" % (next(((a, b) for a, b in zip(got, got[1:])
                                                  if b <= a), None),))
    c.check(got == list(range(PRE, total)),
            "%s: exactly the %d frames sent behind the IPCP message came out, in order "
            "(nothing lost, nothing stranded, none of the %d before)" % (tag, total - PRE, PRE),
            "%d frames, first %s, last %s, missing %s" %
            (len(got), got[0] if got else None, got[-1] if got else None,
             sorted(set(range(PRE, total)) - set(got))[:10]))
    c.check(tx_before is not None and tx_after is not None and
            tx_after - tx_before == total - PRE,
            "%s: the uplink's ethdev TX counter moved by the %d frames behind the IPCP "
            "message" % (tag, total - PRE),
            "moved by %s" % (None if tx_before is None or tx_after is None
                             else tx_after - tx_before))
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in COUNTERS}
    c.eq(delta[DP_DROP], PRE, "%s: the %d frames before the IPCP message dropped on the data "
         "path as %s (deltas %s)" % (tag, PRE, DP_DROP, delta))
    c.eq(delta["ncp_not_open"] + delta["handoff_discard"], 0,
         "%s: no data frame reached the control path" % tag)
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
            c.check(DP_DROP in e.run("show pppoe stats"),
                    "show pppoe stats lists %s" % DP_DROP)
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
