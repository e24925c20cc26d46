#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""PPPoE subscribers behind ESP: a decapsulated packet goes through the ESP
stage like any other, and what ESP sends back reaches the subscriber inside
its session.

edgegw on two net_tap ports (access, uplink), one PAP subscriber, an outbound
tunnel-mode SA with MTU 1280 protecting the pool toward 203.0.113.0/24:
  - a small UDP packet from the subscriber leaves the uplink as ESP (SPI,
    outer addresses), not in clear;
  - a 1400-byte UDP packet with DF set does not fit the SA: ESP drops it
    (esp_too_big) and its ICMP fragmentation-needed (next-hop MTU from the
    SA) arrives at the subscriber as a PPPoE session frame of its session,
    not as a bare Ethernet frame on the access port;
  - the same for IPv6 (ICMPv6 Packet Too Big into the session; lib/esp
    never reports less than the IPv6 minimum MTU, 1280);
  - a packet from the far side through the inbound SA that is too big for
    the session (MRU 1400): PPPoE drops it and its ICMP
    fragmentation-needed leaves through the outbound SA (decrypted with
    scapy to check), never in clear;
  - the subscriber's own IPsec VPN is transit: its ESP and NAT-T to its VPN
    server leave the uplink unchanged, and ESP from the server to the
    subscriber - carrying the very SPI of edgegw's inbound SA - reaches the
    subscriber unchanged inside its session, not decrypted or dropped
    (only ESP to edgegw's own tunnel address is edgegw's); bypass rules
    let the subscriber's other traffic through (with policies in a
    direction, what no rule matches is discarded);
  - a make-before-break rekey under traffic: while alice sends a packet
    every millisecond, new SAs are added and 'esp sa replace in', 'esp sa
    replace out' and 'esp sa del' of the old outbound SA are typed at the
    command line: every packet leaves as ESP (old SPI, then new, never
    back), none in clear and none lost; inbound, packets of the old and the
    new SA both reach alice until the old one is deleted, then the old
    one's are dropped.
At exit the JSON counters hold the exact numbers and the accounting identity.

usage: test_pppoe_esp.py EDGEGW
"""
import ipaddress
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402
import pppoetest as pt  # noqa: E402

NAME = "pppoe_esp"
IF_A, IF_U = "egwea0", "egweu0"
POOL4 = ipaddress.IPv4Network("100.64.0.0/24")
POOL6 = ipaddress.IPv6Network("2001:db8:100::/48")
REMOTE4, REMOTE6 = "203.0.113.10", "2001:db8:200::10"
VPN4 = "198.18.0.1"  # the subscriber's own VPN server, beyond the uplink
SPI, SPI_IN = 0x1000, 0x2000
TUN_SRC, TUN_DST = "192.0.2.1", "198.51.100.1"
SA_MTU = 1280
KEY_OUT, KEY_IN = "11" * 20, "22" * 20  # AES-128 key + 4-byte salt, test only
SPI2, SPI_IN2 = 0x1001, 0x2001           # the SAs of the rekey
KEY_OUT2, KEY_IN2 = "33" * 20, "44" * 20
CLIENT_MRU = 1400


def setup(state):
    return [
        "set fwd gateway xconnect",
        "port role 0 access",
        "port role 1 uplink",
        "pppoe pool add %s" % POOL4,
        "pppoe pool add %s" % POOL6,
        "ppp auth pap",
        "ppp user add alice alice-secret",
        "esp state-file %s create" % state,
        "esp sa add 0x%x out aead aes-128-gcm key %s mode tunnel src %s dst %s mtu %d" %
        (SPI, KEY_OUT, TUN_SRC, TUN_DST, SA_MTU),
        "esp sa add 0x%x in aead aes-128-gcm key %s mode tunnel src %s dst %s" %
        (SPI_IN, KEY_IN, TUN_DST, TUN_SRC),
        "esp policy add out src %s dst 203.0.113.0/24 protect 0x%x" % (POOL4, SPI),
        "esp policy add out src %s dst 2001:db8:200::/64 protect 0x%x" % (POOL6, SPI),
        "esp policy add in src 203.0.113.0/24 dst %s protect 0x%x" % (POOL4, SPI_IN),
        # the subscribers' other traffic (their own VPN too) passes in clear
        "esp policy add out src %s dst 0.0.0.0/0 bypass" % POOL4,
        "esp policy add in src 0.0.0.0/0 dst %s bypass" % POOL4,
        "start",
    ]


def main():
    c = egwtest.Checker(NAME)
    binary = sys.argv[1]
    from scapy.all import IP, IPv6, UDP, ICMP, Raw, ICMPv6PacketTooBig, conf
    conf.verb = 0
    pt.tap_env(c, (IF_A, IF_U))
    e, up = pt.start_edgegw(c, NAME, binary, IF_A, IF_U, setup(c.path("esp.state")))
    acc = upl = None
    try:
        if up:
            acc, upl = pt.Port(IF_A), pt.Port(IF_U)
            cl = pt.Client(acc, "02:00:00:00:0e:01", user="alice", secret="alice-secret",
                           mru=CLIENT_MRU, name="alice")
            bad = cl.connect()
            c.check(not bad, "alice: session up (PAP, IPCP, IPv6CP)", str(bad))
            if not bad:
                flows(c, cl, upl, IP, IPv6, UDP, ICMP, Raw, ICMPv6PacketTooBig)
                through_tunnel(c, cl, upl)
                subscriber_vpn(c, cl, upl)
                rekey(c, e, cl, upl)
    finally:
        for p in (acc, upl):
            if p is not None:
                p.close()
        rc = e.stop()
    c.eq(rc, 0, "edgegw exit status")
    if rc != 0:
        egwtest.show_output(e.stdout(), e.e.stderr())
    final(c, e.js)
    c.finish()


def flows(c, cl, upl, IP, IPv6, UDP, ICMP, Raw, ICMPv6PacketTooBig):
    # the router advertisement follows IPv6CP's opening
    cl.wait(lambda: cl.ra_prefix() is not None, 5)
    ip4, gua6 = cl.ip4, cl.gua6()
    c.check(ip4 is not None and ipaddress.IPv4Address(ip4) in POOL4, "alice: IPv4 from the pool",
            str(ip4))
    c.check(gua6 is not None and ipaddress.IPv6Address(gua6) in POOL6,
            "alice: IPv6 address in the pool by SLAAC", str(gua6))

    # a small packet: protected, out of the uplink as ESP from the tunnel source
    mark = upl.mark()
    cl.port.send(cl.ip_frame(IP(src=ip4, dst=REMOTE4) / UDP(sport=1000, dport=2000) /
                             Raw(b"esp-small")))
    esp = upl.wait(mark, lambda f: is_esp4(f), 1, 3)
    c.check(len(esp) == 1, "small packet: one ESP packet out of the uplink")
    if esp:
        p = IP(pt_ip(esp[0]))
        c.check(p.src == TUN_SRC and p.dst == TUN_DST and
                struct.unpack("!I", bytes(p.payload)[:4])[0] == SPI,
                "small packet: tunnel addresses and SPI 0x%x" % SPI, p.summary())
    clear = [f for f in upl.since(mark) if pt_ip(f) is not None and b"esp-small" in f.raw]
    c.eq(len(clear), 0, "small packet: never in clear on the uplink")

    # too big for the SA with DF: ICMP fragmentation-needed into the session
    n4 = len(cl.data4)
    mark_a = cl.port.mark()
    big4 = IP(src=ip4, dst=REMOTE4, flags="DF") / UDP(sport=1000, dport=2000) / Raw(bytes(1372))
    cl.port.send(cl.ip_frame(big4))
    cl.wait(lambda: len(cl.data4) > n4, 3)
    got = [IP(d) for d in cl.data4[n4:]]
    c.check(len(got) == 1 and ICMP in got[0] and got[0][ICMP].type == 3 and
            got[0][ICMP].code == 4 and got[0].dst == ip4,
            "IPv4 too big for the SA: ICMP fragmentation-needed inside alice's session",
            got[0].summary() if got else "none")
    if got:
        mtu = got[0][ICMP].nexthopmtu
        c.check(0 < mtu < SA_MTU, "ICMP next-hop MTU %d leaves room for ESP in the SA's %d" %
                (mtu, SA_MTU))
        c.check(bytes(got[0][ICMP].payload)[:28] == bytes(big4)[:28],
                "ICMP quotes the packet's IP and UDP headers")
    bare = [f for f in cl.port.since(mark_a)
            if f.etype in (0x0800, 0x86DD) and f.raw[:6] == pt.mac_bytes(cl.mac)]
    c.eq(len(bare), 0, "no bare Ethernet ICMP to alice's MAC on the access port")

    n6 = len(cl.data6)
    big6 = IPv6(src=gua6, dst=REMOTE6) / UDP(sport=1000, dport=2000) / Raw(bytes(1352))
    cl.port.send(cl.ip_frame(big6))
    cl.wait(lambda: len(cl.data6) > n6, 3)
    got6 = [IPv6(d) for d in cl.data6[n6:]]
    c.check(len(got6) == 1 and ICMPv6PacketTooBig in got6[0] and got6[0].dst == gua6 and
            1280 <= got6[0][ICMPv6PacketTooBig].mtu <= SA_MTU,
            "IPv6 too big for the SA: ICMPv6 Packet Too Big inside alice's session",
            "%s mtu %d" % (got6[0].summary(), got6[0][ICMPv6PacketTooBig].mtu) if got6 else "none")


def peer_sa(spi, key_hex, src, dst):
    """scapy's end of one of the test's AES-128-GCM tunnel SAs."""
    from scapy.all import IP
    from scapy.layers.ipsec import ESP, SecurityAssociation
    return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-GCM",
                               crypt_key=bytes.fromhex(key_hex), crypt_icv_size=16,
                               tunnel_header=IP(src=src, dst=dst))


def through_tunnel(c, cl, upl):
    """A packet from REMOTE4 through the inbound SA, too big for alice's
    session: it is dropped, and the ICMP fragmentation-needed for REMOTE4
    goes back through the outbound SA, never in clear."""
    from scapy.all import IP, UDP, ICMP, Raw, Ether
    sa_in = peer_sa(SPI_IN, KEY_IN, TUN_DST, TUN_SRC)
    sa_out = peer_sa(SPI, KEY_OUT, TUN_SRC, TUN_DST)
    n4 = len(cl.data4)
    fit = IP(src=REMOTE4, dst=cl.ip4, flags="DF", id=5) / UDP(sport=7, dport=7) / Raw(
        bytes(CLIENT_MRU - 28))
    big = IP(src=REMOTE4, dst=cl.ip4, flags="DF", id=6) / UDP(sport=7, dport=7) / Raw(
        bytes(CLIENT_MRU + 1 - 28))
    mark = upl.mark()
    for p in (fit, big):
        upl.send(bytes(Ether(dst=pt.MAC_U, src=pt.PEER_MAC) / sa_in.encrypt(p)))
    cl.wait(lambda: len(cl.data4) > n4, 3)
    c.eq([bytes(d) for d in cl.data4[n4:]], [bytes(fit)],
         "through the tunnel: the %d-byte packet reaches alice byte for byte, the %d-byte "
         "one does not" % (CLIENT_MRU, CLIENT_MRU + 1))
    esp = upl.wait(mark, lambda f: is_esp4(f) and IP(pt_ip(f)).src == TUN_SRC, 1, 3)
    icmp = []
    for f in esp:
        try:
            inner = sa_out.decrypt(IP(pt_ip(f)))
        except Exception as ex:  # noqa: BLE001 - a failed decryption is the finding
            c.check(False, "ESP out of the uplink decrypts with the outbound SA", repr(ex))
            continue
        if ICMP in inner:
            icmp.append(inner)
    c.check(len(icmp) == 1 and icmp[0][ICMP].type == 3 and icmp[0][ICMP].code == 4 and
            icmp[0][ICMP].nexthopmtu == CLIENT_MRU and icmp[0].dst == REMOTE4,
            "the ICMP fragmentation-needed (MTU %d) for %s leaves through the outbound SA" %
            (CLIENT_MRU, REMOTE4), icmp[0].summary() if icmp else "none")
    clear = [f for f in upl.since(mark) if pt_ip(f) is not None and pt_ip(f)[0] >> 4 == 4 and
             pt_ip(f)[9] == 1]
    c.eq(len(clear), 0, "no ICMP in clear on the uplink")


def subscriber_vpn(c, cl, upl):
    """The subscriber's own IPsec (ESP and NAT-T with its VPN server) is
    transit: forwarded both ways unchanged, even with an SPI edgegw uses."""
    from scapy.all import IP, UDP, Raw, Ether
    esp_up = IP(src=cl.ip4, dst=VPN4, proto=50, id=21) / Raw(
        struct.pack("!II", SPI_IN, 1) + bytes(range(40)))
    natt_up = IP(src=cl.ip4, dst=VPN4, id=22) / UDP(sport=4500, dport=4500) / Raw(
        struct.pack("!II", SPI_IN, 2) + bytes(40))
    mark = upl.mark()
    cl.port.send(cl.ip_frame(esp_up))
    cl.port.send(cl.ip_frame(natt_up))
    got = upl.wait(mark, lambda f: pt_ip(f) is not None and pt_ip(f)[0] >> 4 == 4 and
                   IP(pt_ip(f)).dst == VPN4, 2, 3)
    # what follows the IP header leaves as the subscriber sent it
    c.eq(sorted(bytes(IP(pt_ip(f)).payload) for f in got),
         sorted(bytes(p.payload) for p in (esp_up, natt_up)),
         "subscriber VPN: its ESP and NAT-T to its server leave the uplink unchanged")
    n4 = len(cl.data4)
    esp_down = IP(src=VPN4, dst=cl.ip4, proto=50, id=23) / Raw(
        struct.pack("!II", SPI_IN, 3) + bytes(range(48)))
    natt_down = IP(src=VPN4, dst=cl.ip4, id=24) / UDP(sport=4500, dport=4500) / Raw(
        struct.pack("!II", SPI_IN, 4) + bytes(48))
    for p in (esp_down, natt_down):
        upl.send(bytes(Ether(dst=pt.MAC_U, src=pt.PEER_MAC) / p))
    cl.wait(lambda: len(cl.data4) >= n4 + 2, 3)
    c.eq(sorted(bytes(IP(d).payload) for d in cl.data4[n4:]),
         sorted(bytes(p.payload) for p in (esp_down, natt_down)),
         "subscriber VPN: ESP and NAT-T from its server with SPI 0x%x (edgegw's inbound SA's) "
         "reach it unchanged in its session" % SPI_IN)


def rekey(c, e, cl, upl):
    """Make-before-break rekey under traffic (esp sa replace)."""
    import threading
    import time
    from scapy.all import IP, UDP, Raw, Ether
    out = e.run("esp sa add 0x%x out aead aes-128-gcm key %s mode tunnel src %s dst %s mtu %d" %
                (SPI2, KEY_OUT2, TUN_SRC, TUN_DST, SA_MTU))
    out += e.run("esp sa add 0x%x in aead aes-128-gcm key %s mode tunnel src %s dst %s" %
                 (SPI_IN2, KEY_IN2, TUN_DST, TUN_SRC))
    c.check("error" not in out, "rekey: new SAs 0x%x and 0x%x added" % (SPI2, SPI_IN2), out)
    n_pkts = 400
    mark = upl.mark()

    def send():
        for i in range(n_pkts):
            cl.port.send(cl.ip_frame(IP(src=cl.ip4, dst=REMOTE4, id=i) /
                                     UDP(sport=3000, dport=3000) / Raw(b"rekey %04d" % i)))
            time.sleep(0.001)
    t = threading.Thread(target=send)
    t.start()
    time.sleep(0.1)
    out = e.run("esp sa replace in 0x%x 0x%x" % (SPI_IN, SPI_IN2))
    time.sleep(0.05)
    out += e.run("esp sa replace out 0x%x 0x%x" % (SPI, SPI2))
    time.sleep(0.05)
    out += e.run("esp sa del 0x%x out" % SPI)
    t.join()
    c.check("error" not in out, "rekey: replace in, replace out, delete the old outbound SA",
            out)
    esp = upl.wait(mark, lambda f: is_esp4(f) and IP(pt_ip(f)).src == TUN_SRC, n_pkts, 5)
    spis = [struct.unpack("!I", bytes(IP(pt_ip(f)).payload)[:4])[0] for f in esp]
    switch = spis.index(SPI2) if SPI2 in spis else len(spis)
    c.eq(len(esp), n_pkts, "rekey: every packet sent during the rekey leaves as ESP")
    c.check(0 < switch < len(spis) and set(spis[:switch]) == {SPI} and
            set(spis[switch:]) == {SPI2},
            "rekey: SPI 0x%x, then 0x%x, never back" % (SPI, SPI2),
            "%d with the old SPI, %d after" % (switch, len(spis) - switch))
    clear = [f for f in upl.since(mark) if pt_ip(f) is not None and b"rekey " in f.raw]
    c.eq(len(clear), 0, "rekey: no packet in clear on the uplink")
    # inbound: both SAs accepted until the old one goes
    old = peer_sa(SPI_IN, KEY_IN, TUN_DST, TUN_SRC)
    new = peer_sa(SPI_IN2, KEY_IN2, TUN_DST, TUN_SRC)

    def down(sa, i, seq):
        p = IP(src=REMOTE4, dst=cl.ip4, id=100 + i) / UDP(sport=9, dport=9) / Raw(b"down %d" % i)
        upl.send(bytes(Ether(dst=pt.MAC_U, src=pt.PEER_MAC) / sa.encrypt(p, seq_num=seq)))
        return bytes(p)
    n4 = len(cl.data4)
    # the old SA's numbers continue above those through_tunnel used
    want = [down(old, 1, 100), down(new, 2, 1)]
    cl.wait(lambda: len(cl.data4) >= n4 + 2, 3)
    c.eq(sorted(bytes(d) for d in cl.data4[n4:]), sorted(want),
         "rekey: inbound, packets of the old and the new SA both reach alice")
    out = e.run("esp sa del 0x%x in" % SPI_IN)
    c.check("error" not in out, "rekey: the old inbound SA deletes (policies drop it)", out)
    n4 = len(cl.data4)
    want = [down(new, 3, 2)]
    down(old, 4, 101)
    cl.wait(lambda: len(cl.data4) >= n4 + 1, 3)
    time.sleep(0.2)
    c.eq([bytes(d) for d in cl.data4[n4:]], want,
         "rekey: after the delete only the new SA's packets reach alice")


def is_esp4(f):
    p = pt_ip(f)
    return p is not None and p[0] >> 4 == 4 and p[9] == 50


def pt_ip(f):
    """The IPv4/IPv6 packet of an untagged Ethernet frame, else None."""
    if f.etype not in (0x0800, 0x86DD):
        return None
    return f.raw[14:]


def final(c, path):
    js = egwtest.load_json(c, path)
    if js is None:
        return
    egwtest.check_identity(c, js)
    drops = {}
    for port in js.get("ports", []):
        for k, v in port.get("drops", {}).items():
            drops[k] = drops.get(k, 0) + v
    c.eq(drops.get("esp_too_big", 0), 2, "esp_too_big: the two packets too big for the SA")
    c.eq(drops.get("pppoe_too_big", 0), 1, "pppoe_too_big: the packet from the tunnel")
    c.eq(sum(v for k, v in drops.items() if k.startswith("pppoe_") and k != "pppoe_too_big"),
         0, "no other PPPoE data-path drop (the ICMP messages fit the session)")


if __name__ == "__main__":
    main()
