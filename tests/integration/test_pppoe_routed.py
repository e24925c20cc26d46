#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pppoe_routed: a PPPoE subscriber routed through edgegw to a Linux host.

edgegw runs the routed gateway (`set fwd gateway`) on two net_tap ports:
port 0 is the access port (the pppoetest client plays the subscriber on its
kernel side), port 1 the uplink, whose kernel side is moved into a network
namespace (egwPU: 198.51.100.2/24, 2001:db8:b::2/64, routes to the pools via
edgegw). The Linux kernel there is the upstream neighbour: edgegw resolves it
by ARP/ND, it resolves edgegw.
  - the subscriber (PAP) pings the kernel's address over IPv4 and IPv6: the
    echo replies come back inside the session, their TTL / hop limit
    decremented once by edgegw (routed both ways: the pool's prefix is a
    route of type pppoe);
  - the kernel pings an unbound pool address: dropped as ip_no_session,
    nothing on the access port;
  - plain IPv4 and IPv6 on the access port from a station without a session
    (to edgegw's uplink neighbour) never leave: access_not_session;
  - the subscriber's TCP to edgegw's own uplink address is dropped
    (ip_local_no_exception): subscribers never reach the host's stack
    through the port's exception path;
  - show ip route lists the pools as pppoe routes, and the bound session's
    address (/32) and /64 as subscriber routes to its session id (the FIB
    finds the session downstream); they go when the session ends, and the
    address's downstream traffic with them (ip_no_session).
At exit the accounting identity holds.

usage: test_pppoe_routed.py EDGEGW
"""
import ipaddress
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402
import pppoetest as pt  # noqa: E402

NAME = "pppoe_routed"
IF_A, IF_U = "egwra0", "egwru0"
NS = "egwPU"
POOL4 = ipaddress.IPv4Network("100.64.0.0/24")
POOL6 = ipaddress.IPv6Network("2001:db8:100::/48")
UP4, UP6 = "198.51.100.2", "2001:db8:b::2"

SETUP = [
    "set fwd gateway",
    "port role 0 access",
    "port role 1 uplink",
    "ip address add 198.51.100.1/24 port 1",
    "ip address add 2001:db8:b::1/64 port 1",
    "ip exception add port 1 name egwrx1",
    "pppoe pool add %s" % POOL4,
    "pppoe pool add %s" % POOL6,
    "ppp auth pap",
    "ppp user add alice alice-secret",
    "show ip route",
    "start",
]


def sh(*cmd, timeout=30):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace")


def ns(*cmd, timeout=30):
    return sh("nsenter", "--net=/run/netns/" + NS, "--", *cmd, timeout=timeout)


def host_sources(host):
    """Source addresses of the packets the exception path handed the host
    (read from host, an AF_PACKET socket on the tun; closed here)."""
    res = []
    while host is not None:
        try:
            b, a = host.recvfrom(65536)
        except (BlockingIOError, OSError):
            break
        if a[2] != socket.PACKET_OUTGOING and b:
            res.append(ipaddress.IPv4Address(b[12:16]) if b[0] >> 4 == 4 else
                       ipaddress.IPv6Address(b[8:24]))
    if host is not None:
        host.close()
    return res


def main():
    c = egwtest.Checker(NAME)
    binary = sys.argv[1]
    from scapy.all import IP, IPv6, ICMP, ICMPv6EchoRequest, ICMPv6EchoReply, UDP, TCP, Ether
    from scapy.all import Raw
    from scapy.all import conf
    conf.verb = 0
    pt.tap_env(c, (IF_A, IF_U))
    sh("ip", "netns", "del", NS)
    e, up = pt.start_edgegw(c, NAME, binary, IF_A, IF_U, SETUP)
    acc = None
    host = None
    try:
        if not up:
            return
        # what the exception path hands the host's stack (egwrx1, a tun:
        # raw IP), read at the end: nothing of the subscriber's may be there
        host = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        host.bind(("egwrx1", 0))
        host.setblocking(False)
        out = e.stdout()
        c.check("100.64.0.0/24 pppoe" in out and "2001:db8:100::/48 pppoe" in out,
                "show ip route: the pools are routes of type pppoe")
        sh("ip", "netns", "add", NS)
        for args in (["ip", "link", "set", IF_U, "netns", NS],):
            rc, o = sh(*args)
            if not c.check(rc == 0, " ".join(args), o.strip()):
                return
        # net_tap gives the kernel side the port's MAC: the kernel, the
        # uplink's router here, gets its own, as a real one has
        for args in (["ip", "link", "set", IF_U, "address", "02:00:00:6b:00:0b"],
                     ["ip", "link", "set", "lo", "up"],
                     ["ip", "addr", "add", UP4 + "/24", "dev", IF_U],
                     ["ip", "-6", "addr", "add", UP6 + "/64", "dev", IF_U, "nodad"],
                     ["ip", "link", "set", IF_U, "up"],
                     ["ip", "route", "add", str(POOL4), "via", "198.51.100.1"],
                     ["ip", "-6", "route", "add", str(POOL6), "via", "2001:db8:b::1"]):
            rc, o = ns(*args)
            if not c.check(rc == 0, "%s: %s" % (NS, " ".join(args)), o.strip()):
                return
        acc = pt.Port(IF_A)
        cl = pt.Client(acc, "02:00:00:00:0f:01", user="alice", secret="alice-secret",
                       name="alice")
        bad = cl.connect()
        if not c.check(not bad, "alice: session up (PAP, IPCP, IPv6CP)", str(bad)):
            return
        cl.wait(lambda: cl.ra_prefix() is not None, 5)
        ip4, gua6 = cl.ip4, cl.gua6()
        c.check(ip4 is not None and ipaddress.IPv4Address(ip4) in POOL4,
                "alice: IPv4 from the pool", str(ip4))

        # IPv4 echo to the kernel upstream: the first may wait for ARP
        got = []
        for i in range(5):
            n4 = len(cl.data4)
            cl.port.send(cl.ip_frame(IP(src=ip4, dst=UP4, ttl=64) /
                                     ICMP(type=8, id=0x4242, seq=i) / Raw(b"routed-%d" % i)))
            cl.wait(lambda: len(cl.data4) > n4, 2)
            got += [IP(d) for d in cl.data4[n4:]]
        rep = [p for p in got if ICMP in p and p[ICMP].type == 0 and p.src == UP4]
        c.check(len(rep) >= 4, "alice pings %s: echo replies inside the session" % UP4,
                "%d of 5" % len(rep))
        if rep:
            c.eq(rep[-1].ttl, 63, "reply TTL: the kernel's 64, decremented once by edgegw")
            c.eq(rep[-1].dst, ip4, "reply to alice's address")
        # IPv6
        got6 = []
        if gua6 is not None:
            for i in range(5):
                n6 = len(cl.data6)
                cl.port.send(cl.ip_frame(IPv6(src=gua6, dst=UP6, hlim=64) /
                                         ICMPv6EchoRequest(id=0x4343, seq=i)))
                cl.wait(lambda: len(cl.data6) > n6, 2)
                got6 += [IPv6(d) for d in cl.data6[n6:]]
        rep6 = [p for p in got6 if ICMPv6EchoReply in p and p.src == UP6]
        c.check(len(rep6) >= 4, "alice pings %s over IPv6: replies inside the session" % UP6,
                "%d of 5" % len(rep6))
        if rep6:
            c.eq(rep6[-1].hlim, 63, "IPv6 reply hop limit decremented once")

        # the session's own routes in the FIB
        sid = None
        rows = pt.sessions_from_text(e.run("show pppoe sessions"))
        if rows:
            sid = rows[0][0]
        rt = e.run("show ip route")
        want4 = "%s/32 subscriber session %s" % (ip4, sid)
        c.check(sid is not None and want4 in rt, "show ip route: " + want4, rt)
        if gua6 is not None:
            net6 = ipaddress.IPv6Network(gua6 + "/64", strict=False)
            want6 = "%s subscriber session %s" % (net6, sid)
            c.check(want6 in rt, "show ip route: " + want6, rt)
        one = e.run("show ip route %s" % ip4)
        c.check("subscriber session %s" % sid in one, "show ip route <addr>: the session's",
                one)

        # a subscriber's TCP to edgegw's own address never reaches the host's
        # stack through the exception path (echo does: edgegw answers it)
        for i in range(3):
            cl.port.send(cl.ip_frame(IP(src=ip4, dst="198.51.100.1") /
                                     TCP(sport=40000 + i, dport=22, flags="S")))
        # the kernel pings an address of the pool no session holds
        mark = acc.mark()
        rc, o = ns("ping", "-c", "2", "-i", "0.2", "-W", "1", "100.64.0.77")
        time.sleep(0.3)
        leaked = [f for f in acc.since(mark) if f.etype in (0x0800, 0x86DD)]
        c.check(rc != 0 and not leaked,
                "ping to an unbound pool address: no reply, nothing on the access port",
                "%d frames" % len(leaked))
        # plain IP on the access port from a station without a session
        mark_u = len(cl.data4)
        stranger = "02:00:00:00:0f:99"
        for i in range(4):
            acc.send(bytes(Ether(src=stranger, dst=pt.MAC_A) /
                           IP(src=str(POOL4[50]), dst=UP4) / UDP(sport=9, dport=9) /
                           Raw(b"no-session")))
            acc.send(bytes(Ether(src=stranger, dst=pt.MAC_A) /
                           IPv6(src=str(POOL6[50]), dst=UP6) / UDP(sport=9, dport=9)))
        time.sleep(0.5)
        c.eq(len(cl.data4), mark_u, "nothing came back for the plain frames")

        # the session ends: its routes go, its address is the pool's again
        cl.padt_send()
        gone = egwtest.wait_for(lambda: "subscriber" not in e.run("show ip route"), 5)
        c.check(gone, "session ended: no subscriber route left", e.run("show ip route"))
        mark = acc.mark()
        rc, o = ns("ping", "-c", "2", "-i", "0.2", "-W", "1", ip4)
        time.sleep(0.3)
        leaked = [f for f in acc.since(mark) if f.etype in (0x0800, 0x86DD, 0x8864)]
        c.check(rc != 0 and not leaked,
                "ping to the ended session's address: nothing on the access port",
                "%d frames" % len(leaked))
    finally:
        if acc is not None:
            acc.close()
        # before the stop, which takes egwrx1 away
        to_host = host_sources(host)
        rc = e.stop()
        sh("ip", "netns", "del", NS)
    c.eq(rc, 0, "edgegw exit status")
    s = egwtest.load_json(c, e.js)
    if s is None:
        c.finish()
    egwtest.check_identity(c, s)
    drops = s["ip"]["drops"]
    c.check(drops.get("access_not_session", 0) >= 8,
            "plain IP on the access port dropped as access_not_session",
            str(drops.get("access_not_session")))
    c.check(drops.get("ip_no_session", 0) >= 4,
            "unbound pool addresses (and the ended session's) dropped as ip_no_session",
            str(drops.get("ip_no_session")))
    c.check(drops.get("ip_local_no_exception", 0) >= 3,
            "subscriber TCP to edgegw's address: ip_local_no_exception",
            str(drops.get("ip_local_no_exception")))
    ex = s["ip"].get("exception", [])
    mine = [a for a in to_host if a in POOL4 or a in POOL6]
    c.check(len(ex) == 1 and ex[0]["to_host"] == len(to_host) and not mine,
            "nothing from the subscriber reached the host's stack (what did came from %s)"
            % sorted(set(str(a) for a in to_host)), repr(ex))
    c.check(s["ip"]["data_path"]["forwarded"] >= 16, "routed packets counted",
            str(s["ip"]["data_path"]["forwarded"]))
    c.finish()


if __name__ == "__main__":
    main()
