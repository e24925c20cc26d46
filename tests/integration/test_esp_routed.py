# SPDX-License-Identifier: BSD-3-Clause
"""esp_routed: an ESP tunnel through the routed gateway, against scapy's ESP.

edgegw routes (`set fwd gateway`): port 0 is the protected lan (10.0.0.1/24,
2001:db8:a::1/64; the lan host 10.0.0.5 / 2001:db8:a::5 a static
neighbour), port 1 the uplink (198.51.100.1/24; the next hop 198.51.100.2 a
static neighbour with its own MAC). The tunnel's far end 203.0.113.9 is not
on the uplink's network: `ip route add 203.0.113.0/24 via 198.51.100.2`.
Two tunnel SA pairs (4in4 and 6in4, aes-128-gcm), policies for
10.0.0.0/24 <-> 192.0.2.0/24 and 2001:db8:a::/64 <-> 2001:db8:c::/64.

Outbound (lan in -> uplink out), each checked byte by byte after scapy
decrypts it:
  - the outer packet is routed: it leaves with the next hop's MAC as its
    destination (not the frame's source MAC) and port 1's MAC as source;
  - the inner packet was forwarded: its TTL / hop limit is one less than it
    was sent with, its IPv4 header checksum right (RFC 1624 update);
  - TTL 1 and hop limit 1: nothing leaves by the uplink; an ICMP time
    exceeded (ICMPv6 type 3) goes back to the lan host, from the lan
    interface's address (10.0.0.1, 2001:db8:a::1), checksums right;
  - a DF packet too big for the SA's MTU: ICMP fragmentation needed back to
    the lan host from 10.0.0.1, the lan interface it leaves by (RFC 1812
    4.3.2.4), not from the tunnel's end.
Inbound (uplink in -> lan out): scapy's ESP from 203.0.113.9; the decrypted
packet is routed to the lan host's MAC with its TTL decremented once.
The drop counters say ttl_exceeded twice and esp too-big once, nothing else.

usage: test_esp_routed.py EDGEGW
Exit 77 (skip) without python3-cryptography.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402
import esptest  # noqa: E402
from esptest import MAC0, MAC1, EspFrame, Sa  # noqa: E402

from scapy.all import ARP, IP, UDP, ICMP, IPv6, Ether, ICMPv6ND_NA, Raw, raw  # noqa: E402
from scapy.layers.inet6 import ICMPv6TimeExceeded, in6_chksum  # noqa: E402

NAME = "esp_routed"
HOST_MAC = "02:00:00:00:aa:05"   # the lan host
NH_MAC = "02:00:00:00:bb:02"     # the uplink's next hop 198.51.100.2
LAN4, LAN6, UP4 = "10.0.0.1", "2001:db8:a::1", "198.51.100.1"
HOST4, HOST6 = "10.0.0.5", "2001:db8:a::5"
PEER = "203.0.113.9"
SA_MTU = 1300


def mac(s):
    return bytes.fromhex(s.replace(":", ""))


def ip4_sum_ok(ip):
    hl = (ip[0] & 15) * 4
    return esptest.ip_checksum(bytes(ip[:hl])) == 0


def main():
    c = egwtest.Checker(NAME)
    binary = sys.argv[1]
    try:
        import cryptography  # noqa: F401
    except ImportError:
        c.skip("python3-cryptography is missing (scapy's ESP needs it)")
    out4 = Sa(0x5101, "out", mode="tunnel", src=UP4, dst=PEER, mtu=SA_MTU)
    in4 = Sa(0x5102, "in", mode="tunnel", src=PEER, dst=UP4)
    out6 = Sa(0x5103, "out", mode="tunnel", src=UP4, dst=PEER)
    in6 = Sa(0x5104, "in", mode="tunnel", src=PEER, dst=UP4)
    esp_lines = [out4.command(), in4.command(), out6.command(), in6.command(),
                 "esp policy add out src 10.0.0.0/24 dst 192.0.2.0/24 protect %d" % out4.spi,
                 "esp policy add in src 192.0.2.0/24 dst 10.0.0.0/24 protect %d" % in4.spi,
                 "esp policy add out src 2001:db8:a::/64 dst 2001:db8:c::/64 protect %d" %
                 out6.spi,
                 "esp policy add in src 2001:db8:c::/64 dst 2001:db8:a::/64 protect %d" %
                 in6.spi]
    ip_lines = ["ip address add %s/24 port 0" % LAN4,
                "ip address add %s/64 port 0" % LAN6,
                "ip address add %s/24 port 1" % UP4,
                "ip neigh add %s %s port 0" % (HOST4, HOST_MAC),
                "ip neigh add %s %s port 0" % (HOST6, HOST_MAC),
                "ip neigh add 198.51.100.2 %s port 1" % NH_MAC,
                "ip route add 203.0.113.0/24 via 198.51.100.2",
                "show ip route"]

    def lan(pkt):
        return raw(Ether(src=HOST_MAC, dst=MAC0) / pkt)

    payload = Raw(b"routed-esp" * 4)
    sent4 = IP(src=HOST4, dst="192.0.2.7", ttl=64, id=0x1234) / UDP(sport=1111, dport=2222) / \
        payload
    sent6 = IPv6(src=HOST6, dst="2001:db8:c::7", hlim=64) / UDP(sport=1111, dport=2222) / payload
    ttl1 = IP(src=HOST4, dst="192.0.2.8", ttl=1) / UDP(sport=1, dport=2) / payload
    hl1 = IPv6(src=HOST6, dst="2001:db8:c::8", hlim=1) / UDP(sport=1, dport=2) / payload
    big = IP(src=HOST4, dst="192.0.2.9", ttl=64, flags="DF") / UDP(sport=3, dport=4) / \
        Raw(b"x" * (SA_MTU + 100))
    lan_in = [lan(sent4), lan(sent6), lan(ttl1), lan(hl1), lan(big)]
    inner_in = IP(src="192.0.2.7", dst=HOST4, ttl=64) / UDP(sport=2222, dport=1111) / payload
    up_in = [raw(Ether(src=NH_MAC, dst=MAC1, type=0x0800)) + in4.encrypt(inner_in, 1)]

    rc, so, se, s, lo, uo = esptest.gateway_run(c, binary, NAME, "routed", esp_lines, lan_in,
                                                up_in, extra_cmds=ip_lines, routed=True)
    if not c.check(rc == 0, "edgegw ran", "exit %d" % rc):
        c.finish()
    c.check("203.0.113.0/24 via 198.51.100.2 port 1" in so, "the tunnel's end is routed via "
            "the next hop")

    # ---- outbound: two ESP frames on the uplink, routed ----
    # (the gratuitous ARP and unsolicited NA of the addresses are not counted)
    esp = [ef for ef in (EspFrame(f) for f in uo) if ef.ok]
    c.eq(len(esp), 2, "ESP frames on the uplink (4in4 and 6in4; TTL 1, hop limit 1 and "
         "too big stay)")
    for ef, sa, sent in zip(esp, (out4, out6), (sent4, sent6)):
        what = "%s: " % ("4in4" if sent is sent4 else "6in4")
        if not c.check(ef.ok and ef.spi == sa.spi, what + "ESP frame of the SA",
                       "spi %s" % getattr(ef, "spi", None)):
            continue
        c.eq(ef.frame[0:6], mac(NH_MAC), what + "destination MAC: the next hop's")
        c.eq(ef.frame[6:12], mac(MAC1), what + "source MAC: the uplink's")
        outer = IP(ef.ip)
        c.check(outer.src == UP4 and outer.dst == PEER, what + "outer addresses",
                "%s > %s" % (outer.src, outer.dst))
        try:
            clear = sa.decrypt(ef, ef.seq)
        except Exception as e:  # noqa: BLE001
            c.check(False, what + "scapy decrypts it", str(e))
            continue
        want = bytearray(raw(sent))
        if sent is sent4:
            c.eq(clear[8], 63, what + "inner TTL decremented once")
            c.check(ip4_sum_ok(clear), what + "inner IPv4 header checksum right")
            want[8] = 63
            want[10:12] = b"\x00\x00"
            want[10:12] = struct.pack("!H", esptest.ip_checksum(bytes(want[:20])))
        else:
            c.eq(clear[7], 63, what + "inner hop limit decremented once")
            want[7] = 63
        c.eq(bytes(clear), bytes(want), what + "inner packet otherwise as sent")

    # ---- what came back to the lan host ----
    back = [p for p in (Ether(f) for f in lo)
            if ARP not in p and ICMPv6ND_NA not in p]
    te4 = [p for p in back if ICMP in p and p[ICMP].type == 11]
    te6 = [p for p in back if ICMPv6TimeExceeded in p]
    fn = [p for p in back if ICMP in p and p[ICMP].type == 3 and p[ICMP].code == 4]
    clear_in = [p for p in back if UDP in p and IP in p and p[IP].src == "192.0.2.7"]
    for lst, what in ((te4, "ICMP time exceeded for TTL 1"),
                      (te6, "ICMPv6 time exceeded for hop limit 1"),
                      (fn, "ICMP fragmentation needed for the DF packet")):
        if not c.eq(len(lst), 1, what):
            continue
        p = lst[0]
        c.eq(p.dst, HOST_MAC, what + ": to the lan host's MAC")
        c.eq(p.src, MAC0, what + ": from the lan port's MAC")
        if IP in p:
            c.eq(p[IP].src, LAN4, what + ": source is the lan interface's address")
            c.eq(p[IP].dst, HOST4, what + ": to the sender")
            ip = raw(p[IP])
            c.check(ip4_sum_ok(ip), what + ": IPv4 header checksum")
            ic = ip[(ip[0] & 15) * 4:]
            c.check(esptest.ip_checksum(ic) == 0, what + ": ICMP checksum")
        else:
            c.eq(p[IPv6].src, LAN6, what + ": source is the lan interface's address")
            c.eq(p[IPv6].dst, HOST6, what + ": to the sender")
            ic = raw(p[IPv6].payload)
            got = struct.unpack("!H", ic[2:4])[0]
            z = ic[:2] + b"\x00\x00" + ic[4:]
            c.eq(got, in6_chksum(58, p[IPv6], z), what + ": ICMPv6 checksum")
    if fn:
        mtu = fn[0][ICMP].nexthopmtu
        c.check(576 <= mtu < SA_MTU, "fragmentation needed: the inner MTU the SA leaves "
                "(below its %d)" % SA_MTU, str(mtu))

    # ---- inbound: decrypted, routed to the lan host ----
    if c.eq(len(clear_in), 1, "the tunnel's packet delivered on the lan"):
        p = clear_in[0]
        c.eq(p.dst, HOST_MAC, "inbound: to the lan host's MAC (its neighbour entry)")
        c.eq(p.src, MAC0, "inbound: from the lan port's MAC")
        c.eq(p[IP].ttl, 63, "inbound: inner TTL decremented once")
        c.check(ip4_sum_ok(raw(p[IP])), "inbound: IPv4 header checksum")
    c.eq(len(back), 4, "frames on the lan: 3 ICMP errors and the inbound packet")

    if s is not None:
        d0 = esptest.drops(s["ports"][0]) if "ports" in s else {}
        c.eq(d0.get("ip_ttl_exceeded", 0), 2, "lan port: ip_ttl_exceeded (TTL 1, hop limit 1)")
        c.check(sum(v for k, v in d0.items() if k.startswith("esp_") and "big" in k) == 1,
                "lan port: one ESP too-big drop", repr(d0))
        others = {k: v for k, v in d0.items()
                  if k != "ip_ttl_exceeded" and not (k.startswith("esp_") and "big" in k)}
        c.eq(others, {}, "lan port: no other drop")
        egwtest.check_identity(c, s)
    c.finish()


if __name__ == "__main__":
    main()
