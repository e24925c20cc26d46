# SPDX-License-Identifier: BSD-3-Clause
"""pppoe_session: PPPoE subscribers through edgegw, end to end on two taps.

edgegw runs the gateway engine on two net_tap ports: port 0 (egwpa0) is a
PPPoE access port, port 1 (egwpu0) the uplink. The scapy-side client of
pppoetest.py plays the subscribers on egwpa0's kernel side; the uplink's
kernel side injects downstream traffic and captures what edgegw forwards.

Subscribers (each its own MAC):
  alice  PAP, untagged, asks ACFC/ACCM (must be rejected) and DNS (RFC 1877)
  bob    CHAP-MD5, MRU 1400 (MSS clamp and too-big follow the session MRU)
  carol  CHAP, QinQ (802.1ad 100 + 802.1Q 200), static address
  dave   CHAP, 802.1Q 300
  erin   stops answering LCP echo requests: closed as echo_timeout
  frank, gina  wrong CHAP / PAP secret: failure message, PADT, auth_failed
For the bound ones: IPv4 and IPv6 both ways, several sizes, byte for byte
(upstream: the IP packet out of the uplink; downstream: the PPPoE frame on
the right session and tags), TCP SYN MSS clamped in both directions, RA with
a /64 of the pool and an answer to a Router Solicitation, downstream too big
for the session MRU dropped with ICMP / ICMPv6 too-big out of the uplink.
Discovery: AC-Name, Service-Name, Host-Uniq echoed, AC-Cookie; hostile
PADI/PADR (unknown service, bad / foreign / missing cookie, PADR to
broadcast, non-zero session id, truncated tag) each counted exactly.
Teardown: alice's PADT, erin's echo timeout, 'pppoe session clear all' (PADT
to bob, carol, dave). At exit the --stats-json counters must hold the exact
numbers and the accounting identity.

usage: test_pppoe_session.py EDGEGW
"""
import ipaddress
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402
import pppoetest as pt  # noqa: E402
from pppoetest import MAC_A, MAC_U, PEER_MAC  # noqa: E402

NAME = "pppoe_session"
IF_A, IF_U = "egwpa0", "egwpu0"
AC_NAME = "edgegw-test"
POOL4 = ipaddress.IPv4Network("100.64.0.0/24")
POOL6 = ipaddress.IPv6Network("2001:db8:100::/48")
AC_IP4 = "100.64.0.1"
DNS = ("192.0.2.53", "192.0.2.54")
CAROL_IP = "100.64.0.200"
REMOTE4, REMOTE6 = "203.0.113.10", "2001:db8:ffff::10"
SETUP = [
    "set fwd gateway xconnect",
    "port role 0 access",
    "port role 1 uplink",
    "pppoe ac-name %s" % AC_NAME,
    "pppoe service-name add internet",
    "pppoe service-name add iptv",
    "pppoe pool add %s" % POOL4,
    "pppoe pool add %s" % POOL6,
    "pppoe dns %s %s" % DNS,
    # every client answers echo requests at once; erin stops and must be
    # closed after 3 missed seconds
    "pppoe keepalive 1 3",
    "ppp auth pap",
    "ppp user add alice alice-secret",
    "ppp user add bob bob-secret",
    "ppp user add carol carol-secret address %s" % CAROL_IP,
    "ppp user add dave dave-secret",
    "ppp user add erin erin-secret",
    "ppp user add frank frank-secret",
    "ppp user add gina gina-secret",
    "start",
]


def flatten(d, out=None, prefix=""):
    """Leaf numbers of a JSON object by leaf name (and by dotted path)."""
    out = {} if out is None else out
    if isinstance(d, dict):
        for k, v in d.items():
            flatten(v, out, prefix + k + ".")
    elif isinstance(d, (int, float)) and not isinstance(d, bool):
        name = prefix[:-1]
        out[name] = d
        out.setdefault(name.rsplit(".", 1)[-1], d)
    return out


class Uplink:
    """The uplink's kernel side: injects downstream frames, returns upstream IP packets."""

    def __init__(self, port):
        self.port = port

    def ip_from(self, mark, src):
        """IP packets (bytes, trimmed to the IP length) out of the uplink with this source."""
        out = []
        for f in self.port.since(mark):
            p = ip_packet(f)
            if p is not None and ip_src(p) == src:
                out.append(p)
        return out

    def send(self, pkt):
        from scapy.all import Ether
        self.port.send(bytes(Ether(dst=MAC_U, src=PEER_MAC) / pkt))


def ip_packet(f):
    """The IP packet of an Ethernet frame (0x0800/0x86DD), trimmed to its length field."""
    d = f.l3
    if f.etype == 0x0800 and len(d) >= 20:
        return d[:struct.unpack_from("!H", d, 2)[0]]
    if f.etype == 0x86DD and len(d) >= 40:
        return d[:40 + struct.unpack_from("!H", d, 4)[0]]
    return None


def ip_src(p):
    if p[0] >> 4 == 4:
        return str(ipaddress.IPv4Address(p[12:16]))
    return str(ipaddress.IPv6Address(p[8:24]))


udp4, udp6 = pt.udp4, pt.udp6


def syn(v6, src, dst, mss, sport):
    """A TCP SYN with an MSS option (and others after it, which must stay as they are)."""
    from scapy.all import IP, IPv6, TCP
    l3 = IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst, id=sport)
    return bytes(l3 / TCP(sport=sport, dport=80, flags="S", seq=1000,
                          options=[("MSS", mss), ("NOP", None), ("WScale", 7),
                                   ("SAckOK", b"")]))


def mss_of(pkt):
    from scapy.all import IP, IPv6, TCP
    p = IP(pkt) if pkt[0] >> 4 == 4 else IPv6(pkt)
    if TCP not in p:
        return None
    for k, v in p[TCP].options:
        if k == "MSS":
            return v
    return None


def tcp_csum_ok(pkt):
    from scapy.all import IP, IPv6, TCP
    p = IP(pkt) if pkt[0] >> 4 == 4 else IPv6(pkt)
    got = p[TCP].chksum
    del p[TCP].chksum
    q = IP(bytes(p)) if pkt[0] >> 4 == 4 else IPv6(bytes(p))
    return got == q[TCP].chksum


class T:
    def __init__(self, c, binary):
        self.c = c
        self.binary = binary
        self.acc = self.upl = None
        self.e = None
        self.clients = {}
        self.expect = {}  # control counters with the exact value we expect at exit

    def client(self, name, idx, **kw):
        cl = pt.Client(self.acc, "02:00:00:00:01:%02x" % idx, name=name, user=name,
                       secret=name + "-secret", **kw)
        self.clients[name] = cl
        return cl

    def sessions(self):
        out = self.e.run("show pppoe sessions")
        return out, {int(r[0]): r for r in pt.sessions_from_text(out)}

    # ---------------------------------------------------------------- flows
    def discovery_and_pap(self):
        c = self.c
        a = self.client("alice", 1)
        tl = a.discover(b"internet")
        if not c.check(tl is not None, "alice: PADI (service 'internet') answered by a PADO"):
            return None
        pado = a.pado[-1]
        c.eq(pado.src, MAC_A, "PADO from the access port's MAC")
        c.eq(pado.dst, a.mac, "PADO unicast to the client")
        c.eq(pado.sid, 0, "PADO session id 0")
        c.eq(pt.tag_get(tl, pt.TAG_AC_NAME), AC_NAME.encode(), "PADO AC-Name")
        c.eq(pt.tag_get(tl, pt.TAG_SERVICE), b"internet", "PADO Service-Name")
        c.eq(pt.tag_get(tl, pt.TAG_HOST_UNIQ), a.host_uniq, "PADO Host-Uniq echoed verbatim")
        c.check(a.cookie is not None and len(a.cookie) >= 8, "PADO carries an AC-Cookie",
                a.cookie.hex() if a.cookie else "none")
        # Relay-Session-Id echoed (RFC 2516 5.1), both in PADO and PADS
        relay = b"relay\x00\x01\x02"
        m = len(a.pado)
        a.padi(b"internet", extra=[(pt.TAG_RELAY_ID, relay)])
        a.wait(lambda: len(a.pado) > m, 2)
        rtl = pt.parse_tags(a.pado[-1].payload) if len(a.pado) > m else []
        c.eq(pt.tag_get(rtl, pt.TAG_RELAY_ID), relay, "PADO echoes Relay-Session-Id")
        # empty Service-Name: any service (RFC 2516 5.1)
        m = len(a.pado)
        a.padi(b"")
        c.check(a.wait(lambda: len(a.pado) > m, 2), "PADI with an empty Service-Name gets a PADO")
        stl = a.request(b"internet")
        if not c.check(stl is not None, "alice: PADR answered by a PADS"):
            return None
        c.check(0 < a.sid < 0xFFFF, "PADS session id is not 0 or 0xFFFF", "sid %d" % a.sid)
        c.eq(pt.tag_get(stl, pt.TAG_SERVICE), b"internet", "PADS Service-Name")
        c.eq(pt.tag_get(stl, pt.TAG_HOST_UNIQ), a.host_uniq, "PADS Host-Uniq echoed")
        # LCP: ACFC and ACCM must be rejected (RFC 2516 7)
        ok = a.lcp(extra=[(pt.LCP_ACCM, b"\x00\x00\x00\x00"), (pt.LCP_ACFC, b"")])
        c.check(ok, "alice: LCP opened (both Configure-Requests acked)")
        c.eq(sorted(t for t, _v in (a.lcp_rejected[0] if a.lcp_rejected else [])),
             [pt.LCP_ACCM, pt.LCP_ACFC], "AC's Configure-Reject names exactly ACCM and ACFC")
        if a.ac_lcp_req:
            o = dict(a.ac_lcp_req[-1][1])
            c.check(pt.LCP_MRU in o and struct.unpack("!H", o[pt.LCP_MRU])[0] == 1492,
                    "AC's LCP request: MRU 1492", str(o.get(pt.LCP_MRU)))
            c.check(pt.LCP_MAGIC in o and len(o[pt.LCP_MAGIC]) == 4 and
                    o[pt.LCP_MAGIC] != bytes(4), "AC's LCP request: non-zero Magic-Number")
            c.eq(o.get(pt.LCP_AUTH), b"\xc0\x23", "AC's LCP request: Auth-Protocol PAP")
        r = a.pap()
        c.check(r is not None and r[1] == 2, "alice: PAP Authenticate-Ack", str(r))
        if not c.check(a.ipcp(dns=True), "alice: IPCP opened"):
            return a
        nak = a.ipcp_nak[0] if a.ipcp_nak else {}
        c.check(pt.IPCP_ADDR in nak, "IPCP: our 0.0.0.0 was Nak'd with an address")
        addr = ipaddress.IPv4Address(a.ip4)
        c.check(addr in POOL4 and str(addr) not in (AC_IP4, str(POOL4.network_address),
                                                    str(POOL4.broadcast_address)),
                "alice's address from the pool, not the AC's own", a.ip4)
        c.eq(a.ac_ip4, AC_IP4, "AC's IPCP request: its own address (first host of the pool)")
        c.eq(tuple(a.dns), DNS, "IPCP: DNS servers given by Nak (RFC 1877)")
        if not c.check(a.ipv6cp_open(), "alice: IPv6CP opened"):
            return a
        c.check(a.ac_iid is not None and len(a.ac_iid) == 8 and a.ac_iid != bytes(8),
                "AC's IPv6CP request: a non-zero interface identifier",
                a.ac_iid.hex() if a.ac_iid else "none")
        self.check_ra(a)
        return a

    def check_ra(self, cl):
        c = self.c
        c.check(cl.wait(lambda: len(cl.ra) > 0, 5), "%s: a Router Advertisement after IPv6CP" %
                cl.name)
        p = cl.ra_prefix()
        if not c.check(p is not None and p[1] == 64, "%s: RA carries a /64 Prefix Information"
                       % cl.name, str(p)):
            return
        net = ipaddress.IPv6Network(p[0])
        c.check(net.subnet_of(POOL6) and net != next(POOL6.subnets(new_prefix=64)),
                "%s: the /64 is in the pool and not the AC's own (the first)" % cl.name, p[0])
        ra = cl.ra[-1]
        c.eq(ra[7], 255, "%s: RA hop limit 255" % cl.name)
        c.check(ra[8] == 0xFE and ra[9] == 0x80, "%s: RA from a link-local address" % cl.name,
                str(ipaddress.IPv6Address(ra[8:24])))
        # RFC 4861 10: MIN_DELAY_BETWEEN_RAS is 3 s, so a solicitation right
        # after the first RA may stay unanswered; wait it out
        time.sleep(max(0.0, cl.rx[-1].t + 3.2 - time.monotonic()) if cl.rx else 3.2)
        before = pt.counters_from_text(self.e.run("show pppoe stats"))
        n = len(cl.ra)
        cl.port.send(cl.ip_frame(pt.rs_packet(cl.ll6())))
        c.check(cl.wait(lambda: len(cl.ra) > n, 2), "%s: Router Solicitation answered by an RA" %
                cl.name)
        after = pt.counters_from_text(self.e.run("show pppoe stats"))
        c.eq((after.get("rs_rx", 0) - before.get("rs_rx", 0),
              after.get("ra_tx", 0) - before.get("ra_tx", 0)), (1, 1),
             "%s: rs_rx and ra_tx each grew by 1" % cl.name)
        if len(cl.ra) > n:
            c.eq(pt.ra_prefix(cl.ra[-1]), p, "%s: the solicited RA has the same prefix" % cl.name)

    def chap_client(self, name, idx, **kw):
        c = self.c
        cl = self.client(name, idx, **kw)
        bad = cl.connect(b"internet", auth="chap")
        c.check(not bad, "%s: CHAP session up (discovery, LCP, CHAP, IPCP, IPv6CP)" % name,
                str(bad))
        if cl.ac_lcp_req:
            c.eq(dict(cl.ac_lcp_req[-1][1]).get(pt.LCP_AUTH), b"\xc2\x23\x05",
                 "%s: AC's LCP request: Auth-Protocol CHAP with MD5" % name)
        c.check(len(cl.chap_challenge) >= 1 and len(cl.chap_challenge[0][1]) >= 8,
                "%s: CHAP challenge of at least 8 bytes" % name)
        if not bad:
            self.check_ra(cl)
        return cl

    def data(self, cl, sizes6=True):
        """IPv4/IPv6 both ways, byte for byte, and MSS clamping."""
        c = self.c
        tagged = "%s%s" % (cl.name, "" if not cl.vlans else " (VIDs %s)" %
                           [t & 0xFFF for _p, t in cl.vlans])
        gua = cl.gua6()
        # upstream
        mark = self.upl.port.mark()
        up4 = [udp4(cl.ip4, REMOTE4, n, b"up4-" + cl.name.encode()) for n in
               (28, 29, 64, 300, 1000, min(cl.mru, 1492))]
        up6 = [udp6(gua, REMOTE6, n, b"up6-" + cl.name.encode()) for n in
               (48, 49, 100, 777, min(cl.mru, 1492))] if gua else []
        for p in up4 + up6:
            cl.port.send(cl.ip_frame(p))
        self.upl.port.wait(mark, lambda f: ip_packet(f) is not None and
                           ip_src(ip_packet(f)) in (cl.ip4, gua), len(up4) + len(up6), 5)
        egwtest.same_frame_set(c, self.upl.ip_from(mark, cl.ip4), up4,
                               "%s: upstream IPv4 out of the uplink, byte for byte" % tagged)
        if gua:
            egwtest.same_frame_set(c, self.upl.ip_from(mark, gua), up6,
                                   "%s: upstream IPv6 out of the uplink, byte for byte" % tagged)
        frames = [f for f in self.upl.port.since(mark) if ip_packet(f) is not None and
                  ip_src(ip_packet(f)) == cl.ip4]
        c.check(frames and all(f.vlans == [] and f.etype == 0x0800 for f in frames),
                "%s: upstream frames leave untagged, ethertype 0x0800" % tagged)
        # downstream
        n4, n6 = len(cl.data4), len(cl.data6)
        dn4 = [udp4(REMOTE4, cl.ip4, n, b"dn4-" + cl.name.encode()) for n in
               (28, 100, 576, min(cl.mru, 1492))]
        other = None
        dn6 = []
        if gua:
            # any address of the session's /64 reaches it, not only the SLAAC one
            other = str(ipaddress.IPv6Address(ipaddress.IPv6Address(gua).packed[:8] +
                                              b"\x00\x00\x00\x00\x00\x00\x12\x34"))
            dn6 = [udp6(REMOTE6, gua, n, b"dn6-" + cl.name.encode()) for n in
                   (48, 300, min(cl.mru, 1492))] + [udp6(REMOTE6, other, 80, b"dn6-other")]
        from scapy.all import IP, IPv6
        for p in dn4:
            self.upl.send(IP(p))
        for p in dn6:
            self.upl.send(IPv6(p))
        cl.wait(lambda: len(cl.data4) >= n4 + len(dn4) and len(cl.data6) >= n6 + len(dn6), 5)
        egwtest.compare_frames(c, [bytes(x) for x in cl.data4[n4:]], dn4,
                               "%s: downstream IPv4 as PPPoE on the session" % tagged)
        if gua:
            egwtest.compare_frames(c, [bytes(x) for x in cl.data6[n6:]], dn6,
                                   "%s: downstream IPv6 (its /64) as PPPoE on the session" %
                                   tagged)
        got = [f for f in cl.rx if f.etype == pt.ETH_SESS and f.proto in (pt.PPP_IP, pt.PPP_IPV6)]
        c.check(got and all(f.src == MAC_A and f.sid == cl.sid and f.vlans == cl.vlans
                            and f.plen == len(f.payload) for f in got),
                "%s: downstream frames from the access MAC, on its session id, with its tags "
                "(TPIDs and TCIs), PPPoE length = payload" % tagged)
        # MSS clamping, both directions
        want4, want6 = min(cl.mru, 1492) - 40, min(cl.mru, 1492) - 60
        mark = self.upl.port.mark()
        s4 = syn(False, cl.ip4, REMOTE4, 1460, 31000 + cl.sid % 1000)
        s4lo = syn(False, cl.ip4, REMOTE4, 536, 32000 + cl.sid % 1000)
        cl.port.send(cl.ip_frame(s4))
        cl.port.send(cl.ip_frame(s4lo))
        ups = [s4, s4lo]
        if gua:
            s6 = syn(True, gua, REMOTE6, 1440, 33000 + cl.sid % 1000)
            cl.port.send(cl.ip_frame(s6))
            ups.append(s6)
        self.upl.port.wait(mark, lambda f: ip_packet(f) is not None and len(ip_packet(f)) > 20 and
                           ip_src(ip_packet(f)) in (cl.ip4, gua), len(ups), 5)
        out = self.upl.ip_from(mark, cl.ip4) + (self.upl.ip_from(mark, gua) if gua else [])
        c.eq([mss_of(p) for p in out], [want4, 536] + ([want6] if gua else []),
             "%s: upstream SYN MSS clamped to MRU-40 (IPv4) / MRU-60 (IPv6), a small MSS kept"
             % tagged)
        c.check(out and all(tcp_csum_ok(p) for p in out), "%s: TCP checksums right after the "
                "clamp" % tagged)
        want_pkts = [syn(False, cl.ip4, REMOTE4, want4, 31000 + cl.sid % 1000), s4lo]
        if gua:
            want_pkts.append(syn(True, gua, REMOTE6, want6, 33000 + cl.sid % 1000))
        egwtest.compare_frames(c, out, want_pkts, "%s: clamped SYNs are the SYNs with the MSS "
                               "rewritten, nothing else changed" % tagged)
        n4 = len(cl.data4)
        self.upl.send(IP(syn(False, REMOTE4, cl.ip4, 1460, 80)))
        cl.wait(lambda: len(cl.data4) > n4, 3)
        c.eq([mss_of(bytes(p)) for p in cl.data4[n4:]], [want4],
             "%s: downstream SYN MSS clamped to %d" % (tagged, want4))

    def too_big(self, cl):
        c = self.c
        from scapy.all import IP, IPv6, ICMP, UDP, Raw, ICMPv6PacketTooBig
        mru = min(cl.mru, 1492)
        n4, n6 = len(cl.data4), len(cl.data6)
        mark = self.upl.port.mark()
        big4 = IP(src=REMOTE4, dst=cl.ip4, flags="DF", id=77) / UDP(sport=7, dport=7) / Raw(
            bytes(mru + 1 - 28))
        self.upl.send(big4)
        fit4 = IP(src=REMOTE4, dst=cl.ip4, flags="DF", id=78) / UDP(sport=7, dport=7) / Raw(
            bytes(mru - 28))
        self.upl.send(fit4)
        big6 = None
        if cl.gua6():
            big6 = IPv6(src=REMOTE6, dst=cl.gua6()) / UDP(sport=7, dport=7) / Raw(
                bytes(mru + 1 - 48))
            self.upl.send(big6)
        cl.wait(lambda: len(cl.data4) > n4, 3)
        icmps = self.upl.port.wait(mark, lambda f: ip_packet(f) is not None and
                                   ip_src(ip_packet(f)) not in (REMOTE4, REMOTE6) and
                                   f.src != PEER_MAC and
                                   (ip_packet(f)[9:10] == b"\x01" or
                                    ip_packet(f)[6:7] == b"\x3a"), 2 if big6 else 1, 3)
        c.eq([len(bytes(p)) for p in cl.data4[n4:]], [mru],
             "%s: downstream %d-byte IPv4 delivered, %d-byte not" % (cl.name, mru, mru + 1))
        c.eq(len(cl.data6) - n6, 0, "%s: downstream too-big IPv6 not delivered" % cl.name)
        i4 = [IP(ip_packet(f)) for f in icmps if ip_packet(f)[0] >> 4 == 4]
        c.check(len(i4) == 1 and ICMP in i4[0] and i4[0][ICMP].type == 3 and
                i4[0][ICMP].code == 4 and i4[0][ICMP].nexthopmtu == mru and
                i4[0].dst == REMOTE4,
                "%s: ICMP fragmentation-needed, MTU %d, to the sender, out of the uplink" %
                (cl.name, mru), i4[0].summary() if i4 else "none")
        if i4:
            q = bytes(i4[0][ICMP].payload)
            c.check(q[:28] == bytes(big4)[:28], "%s: the ICMP error quotes the packet's IP and "
                    "UDP headers" % cl.name)
            c.eq(i4[0].src, AC_IP4, "%s: ICMP from the AC's own address" % cl.name)
        if big6 is not None:
            i6 = [IPv6(ip_packet(f)) for f in icmps if ip_packet(f)[0] >> 4 == 6]
            c.check(len(i6) == 1 and ICMPv6PacketTooBig in i6[0] and
                    i6[0][ICMPv6PacketTooBig].mtu == mru and i6[0].dst == REMOTE6,
                    "%s: ICMPv6 Packet Too Big, MTU %d, to the sender" % (cl.name, mru),
                    i6[0].summary() if i6 else "none")
        c.check(all(f.dst == PEER_MAC and f.src == MAC_U for f in icmps),
                "%s: ICMP errors go back to the sender's MAC from the uplink's" % cl.name,
                str([(f.src, f.dst) for f in icmps]))
        return 1, (1 if big6 is not None else 0)

    def hostile_discovery(self):
        """Each hostile PADI/PADR: no answer, its own counter (checked at exit)."""
        c = self.c
        h = self.client("hostile", 0x40)
        h.ac_mac = MAC_A

        def quiet(what, send, code):
            lst = h.pado if code == pt.PADO else h.pads
            n = len(lst)
            send()
            time.sleep(0.6)
            c.eq(len(lst) - n, 0, "%s: no %s" % (what, "PADO" if code == pt.PADO else "PADS"))

        quiet("PADI for service 'nope' (not served)", lambda: h.padi(b"nope"), pt.PADO)
        self.expect["disc_service_unknown"] = 1
        tl = h.discover(b"internet")
        c.check(tl is not None and h.cookie is not None, "hostile: a PADO with a cookie")
        good = h.cookie or b""
        bad = bytes([good[0] ^ 1]) + good[1:] if good else b"x"
        quiet("PADR with a cookie one bit off", lambda: h.padr(b"internet", cookie=bad), pt.PADS)
        alien = self.clients["alice"].cookie or b""
        quiet("PADR with another client's cookie", lambda: h.padr(b"internet", cookie=alien),
              pt.PADS)
        self.expect["disc_bad_cookie"] = 2
        h.cookie = None
        quiet("PADR without a cookie",
              lambda: h.port.send(h.disc_frame(pt.PADR, [(pt.TAG_SERVICE, b"internet"),
                                                         (pt.TAG_HOST_UNIQ, h.host_uniq)])),
              pt.PADS)
        self.expect["disc_no_cookie"] = 1
        quiet("PADR to the broadcast address",
              lambda: h.padr(b"internet", cookie=good, dst="ff:ff:ff:ff:ff:ff"), pt.PADS)
        self.expect["disc_padr_bad_dst"] = 1
        quiet("PADR with a non-zero session id",
              lambda: h.padr(b"internet", cookie=good, sid=0x1234), pt.PADS)
        self.expect["disc_padr_sid"] = 1
        quiet("PADI with a non-zero session id",
              lambda: h.port.send(pt.eth("ff:ff:ff:ff:ff:ff", h.mac, pt.ETH_DISC) + pt.pppoe(
                  pt.PADI, 7, pt.tags((pt.TAG_SERVICE, b""), (pt.TAG_HOST_UNIQ, b"x")))),
              pt.PADO)
        self.expect["disc_padi_sid"] = 1
        # a tag whose length runs 1 byte past the PPPoE payload
        quiet("PADI with a tag past the payload",
              lambda: h.port.send(pt.eth("ff:ff:ff:ff:ff:ff", h.mac, pt.ETH_DISC) + pt.pppoe(
                  pt.PADI, 0, pt.tags((pt.TAG_SERVICE, b"")) + struct.pack("!HH", 0x0103, 5) +
                  b"1234")), pt.PADO)
        self.expect["disc_tag_truncated"] = 1
        quiet("PADI whose PPPoE length runs past the frame",
              lambda: h.port.send(pt.eth("ff:ff:ff:ff:ff:ff", h.mac, pt.ETH_DISC) + pt.pppoe(
                  pt.PADI, 0, pt.tags((pt.TAG_SERVICE, b"")), length=200)), pt.PADO)
        self.expect["disc_bad_length"] = 1
        quiet("PADI with version/type 0x21",
              lambda: h.port.send(pt.eth("ff:ff:ff:ff:ff:ff", h.mac, pt.ETH_DISC) + pt.pppoe(
                  pt.PADI, 0, pt.tags((pt.TAG_SERVICE, b"")), ver_type=0x21)), pt.PADO)
        self.expect["disc_bad_ver_type"] = 1
        # PADR for a service not served, with a good cookie: PADS with
        # Service-Name-Error and session id 0 (RFC 2516 5.4)
        n = len(h.pads)
        h.padr(b"nope", cookie=good)
        h.wait(lambda: len(h.pads) > n, 2)
        ps = h.pads[n] if len(h.pads) > n else None
        c.check(ps is not None and ps.sid == 0 and
                pt.tag_get(pt.parse_tags(ps.payload), pt.TAG_SERVICE_ERR) is not None,
                "PADR for service 'nope': PADS with session id 0 and Service-Name-Error",
                "none" if ps is None else "sid %d tags %s" % (ps.sid, pt.parse_tags(ps.payload)))
        self.expect["disc_padr_service_unknown"] = 1
        # discovery counters the hostile frames must not have moved
        for k in ("disc_tag_duplicate", "disc_tag_bad_len", "disc_padi_full",
                  "disc_limit_sessions", "disc_limit_per_mac", "disc_reply_too_long"):
            self.expect[k] = 0

    def auth_failures(self):
        c = self.c
        # CHAP with a wrong secret (the reader thread answers with it)
        f = self.client("frank", 6)
        f.secret = "not-frank's"
        bad = f.connect(b"internet", auth="chap")
        r = f.auth_result
        c.check(r is not None and r[0] == "chap" and r[1] == 4,
                "frank (wrong CHAP secret): CHAP Failure", "%s %s" % (r, bad))
        c.check(f.wait(lambda: f.padt, 5), "frank: PADT after the failure")
        if f.padt:
            c.eq(f.padt[-1].sid, f.sid, "frank: PADT for his session id")
        self.e.run("ppp auth pap")
        g = self.client("gina", 7)
        if not c.check(g.discover(b"") is not None and g.request(b"") is not None and g.lcp(),
                       "gina: discovery and LCP"):
            return
        r = g.pap(secret="wrong")
        c.check(r is not None and r[0] == "pap" and r[1] == 3,
                "gina (wrong PAP secret): Authenticate-Nak", str(r))
        c.check(g.wait(lambda: g.padt, 5), "gina: PADT after the failure")
        self.expect["closed_auth_failed"] = 2

    def keepalive(self):
        c = self.c
        self.e.run("ppp auth chap")
        er = self.client("erin", 5)
        bad = er.connect(b"iptv", auth="chap", ipv6=False)
        if not c.check(not bad, "erin: session up (service 'iptv', IPv4 only)", str(bad)):
            return
        c.check(er.wait(lambda: er.echo_req >= 1, 4), "erin: LCP Echo-Request from the AC "
                "(keepalive 1 s), answered", "%d requests" % er.echo_req)
        er.answer_echo = False
        t0 = time.monotonic()
        n = er.echo_req
        c.check(er.wait(lambda: er.padt, 10), "erin stops answering: PADT within 10 s",
                "%.1f s, %d more echo requests" % (time.monotonic() - t0, er.echo_req - n))
        c.check(er.echo_req - n >= 3, "erin: at least 3 unanswered echo requests before the PADT",
                str(er.echo_req - n))
        self.expect["closed_echo_timeout"] = 1

    def run(self):
        c = self.c
        pt.tap_env(c, (IF_A, IF_U))
        from scapy.all import conf
        conf.verb = 0
        self.e, up = pt.start_edgegw(c, NAME, self.binary, IF_A, IF_U, SETUP)
        try:
            if up:
                self.acc = pt.Port(IF_A)
                self.upl = Uplink(pt.Port(IF_U))
                self.flows()
        finally:
            for p in (self.acc, self.upl.port if self.upl else None):
                if p is not None:
                    p.close()
            rc = self.e.stop()
            c.log("edgegw stopped")
        c.eq(rc, 0, "edgegw exit status")
        if rc != 0:
            egwtest.show_output(self.e.stdout(), self.e.e.stderr())
        self.final()

    def flows(self):
        c = self.c
        help_out = self.e.run("help pppoe")
        c.check("pppoe session clear" in help_out and "pppoe pool add" in help_out,
                "'help pppoe' lists the pppoe commands")
        a = self.discovery_and_pap()
        if a is None:
            return
        self.data(a)
        self.too_big(a)
        self.e.run("ppp auth chap")
        b = self.chap_client("bob", 2, mru=1400)
        self.data(b)
        self.too_big(b)
        cr = self.chap_client("carol", 3, vlans=[(pt.TPID_8021AD, 0x2064), (pt.TPID_8021Q, 200)])
        c.eq(cr.ip4, CAROL_IP, "carol: her static address")
        c.check(cr.pado and cr.pado[-1].vlans == cr.vlans and cr.pads[-1].vlans == cr.vlans,
                "carol: PADO and PADS on her QinQ tags (TPIDs, priority bits kept)",
                str(cr.pado[-1].vlans if cr.pado else None))
        self.data(cr)
        d = self.chap_client("dave", 4, vlans=[(pt.TPID_8021Q, 300)])
        self.data(d)
        self.hostile_discovery()
        self.auth_failures()
        self.keepalive()
        # exact PPP counters: alice PAP; bob, carol, dave, erin CHAP; frank
        # and gina refused; an RS from each of alice, bob, carol, dave; no
        # data frame ever reached the control path
        self.expect.update({"pap_ok": 1, "pap_fail": 1, "chap_ok": 4, "chap_fail": 1,
                            "ipcp_opened": 5, "ipv6cp_opened": 4, "echo_timeout": 1,
                            "rs_rx": 4, "rs_bad": 0, "ncp_not_open": 0, "handoff_discard": 0,
                            "bind_fail": 0, "lcp_loopback": 0})

        out, rows = self.sessions()
        print("  --- show pppoe sessions\n%s\n  ---" % out)
        live = {cl.sid: cl for cl in (a, b, cr, d)}
        c.check(all(s in rows for s in live), "show pppoe sessions lists alice, bob, carol, dave",
                "sids %s, rows %s" % (sorted(live), sorted(rows)))
        for s, cl in live.items():
            row = " ".join(rows.get(s, [])).lower()
            c.check(cl.mac in row and cl.ip4 in row and cl.name in row,
                    "session %d row shows %s's MAC, address and user" % (s, cl.name), row)
        det = self.e.run("show pppoe sessions detail")
        c.check(all(cl.gua6() is None or str(ipaddress.IPv6Network(cl.ra_prefix()[0])) in det
                    for cl in live.values()), "show pppoe sessions detail shows each /64")
        self.per_user_filter(a, b)
        # client PADT
        a.padt_send()
        c.check(egwtest.wait_for(lambda: a.sid not in self.sessions()[1], 5, 0.3),
                "alice's PADT: her session leaves 'show pppoe sessions'")
        self.expect["closed_padt"] = 1
        self.expect["padt_rx"] = 1
        # upstream on a closed session: dropped, nothing out of the uplink
        mark = self.upl.port.mark()
        a.port.send(a.ip_frame(udp4(a.ip4, REMOTE4, 100, b"after-padt")))
        time.sleep(0.5)
        c.eq(self.upl.ip_from(mark, a.ip4), [], "alice after PADT: nothing leaves the uplink")
        # administrative clear
        out = self.e.run("pppoe session clear all")
        for cl in (b, cr, d):
            c.check(cl.wait(lambda: any(f.sid == cl.sid for f in cl.padt), 5),
                    "'pppoe session clear all': %s gets a PADT for session %d" %
                    (cl.name, cl.sid))
            if cl.padt:
                c.eq(cl.padt[-1].vlans, cl.vlans, "%s: the PADT carries the session's tags" % cl.name)
        self.expect["closed_admin"] = 3
        c.check(egwtest.wait_for(lambda: not self.sessions()[1], 8, 0.5),
                "no session left after the clear")
        stats = pt.counters_from_text(self.e.run("show pppoe stats"))
        c.check(stats.get("closed_admin") == 3, "show pppoe stats: closed_admin 3",
                str({k: v for k, v in stats.items() if k.startswith("closed")}))

    def per_user_filter(self, a, b):
        """A pass filter for bob only, set and removed while both are bound."""
        from scapy.all import IP, UDP, Raw
        c = self.c
        out = self.e.run("pppoe filter pass user bob not udp port 7")
        c.check("pass filter of bob set" in out, "pppoe filter pass user bob: set", out)
        flt = self.e.run("show pppoe filters")
        c.check("bob" in flt and "not udp port 7" in flt, "show pppoe filters lists bob's", flt)

        def send_and_see():
            mark = self.upl.port.mark()
            for cl in (a, b):
                for dport in (7, 8):
                    cl.port.send(cl.ip_frame(bytes(IP(src=cl.ip4, dst=REMOTE4) /
                                                   UDP(sport=5555, dport=dport) /
                                                   Raw(b"filt"))))
            time.sleep(0.5)
            seen = {}
            for cl in (a, b):
                seen[cl.name] = sorted(IP(p)[UDP].dport for p in self.upl.ip_from(mark, cl.ip4)
                                       if UDP in IP(p) and bytes(IP(p)[UDP].payload)[:4] == b"filt")
            return seen

        seen = send_and_see()
        c.eq(seen.get("alice"), [7, 8], "alice (the default: no filter): both pass")
        c.eq(seen.get("bob"), [8], "bob's pass filter: his UDP to port 7 dropped, port 8 passes")
        c.check("pppoe_filtered" in self.e.run("show pppoe stats"),
                "show pppoe stats lists pppoe_filtered")
        self.e.run("pppoe filter pass user bob none")
        seen = send_and_see()
        c.eq(seen.get("bob"), [7, 8], "bob's filter removed: both pass again")
        n = len(self.e.e.stderr())
        self.e.run("pppoe filter pass udp port")
        bad = self.e.e.stderr()[n:]
        c.check("pppoe filter pass" in bad and "stays" in bad,
                "a filter that does not compile is refused with libpcap's error", bad)

    def final(self):
        c = self.c
        s = egwtest.load_json(c, self.e.js)
        if s is None:
            return
        egwtest.check_identity(c, s)
        if not c.check("pppoe" in s, "stats JSON has a 'pppoe' section"):
            return
        flat = flatten(s["pppoe"])
        print("  pppoe JSON: %s" % {k: v for k, v in flat.items() if "." not in k and v})
        for k, v in sorted(self.expect.items()):
            c.eq(flat.get(k), v, "stats JSON pppoe %s" % k)
        # sessions created: alice, bob, carol, dave, erin, frank, gina
        c.eq(flat.get("sessions_created"), 7, "stats JSON pppoe sessions_created")
        c.eq(flat.get("sessions_freed"), 7, "stats JSON pppoe sessions_freed (all gone at exit)")


def main():
    c = egwtest.Checker(NAME)
    T(c, sys.argv[1]).run()
    c.finish()


if __name__ == "__main__":
    main()
