# SPDX-License-Identifier: BSD-3-Clause
"""access_rule: an access port carries PPPoE sessions only, in both directions.

edgegw's gateway engine on two net_pcap ports, port 0 access (a PPPoE pool,
no session) and port 1 uplink, routed (`set fwd gateway`, with an address
and a default route on the uplink) and unrouted (`set fwd gateway
xconnect`). The access input is plain IPv4 and IPv6 (to the port's MAC,
tagged and not, any source); the uplink input is what an upstream network
sends toward subscribers: unicast to a pool address without a session (a
just-closed one looks the same), limited and subnet broadcast, IPv4 and
IPv6 multicast, a Neighbor Solicitation for a pool address and a Router
Advertisement. None of it may leave on the access port, none of the access
input may leave on the uplink, and every frame has its drop reason (the
accounting identity holds).

usage: test_access_rule.py EDGEGW
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402

from scapy.all import (ICMPv6ND_NS, ICMPv6ND_RA, IP, UDP, Dot1Q, Ether,  # noqa: E402
                       IPv6, Raw)

MAC0 = MAC1 = None  # the ports' MACs, as edgegw reports them (port_macs)
SUB = "02:00:00:00:5b:01"
ROUTER = "02:00:00:00:00:fe"

SETUP = {
    "routed": ["set fwd gateway", "port role 0 access", "port role 1 uplink",
               "ip address add 198.51.100.1/24 port 1", "ip address add 2001:db8:b::1/64 port 1",
               "ip route add default via 198.51.100.254",
               "ip neigh add 198.51.100.254 " + ROUTER + " port 1"],
    "xconnect": ["set fwd gateway xconnect", "port role 0 access", "port role 1 uplink"],
}
COMMON = ["pppoe pool add 100.64.0.0/24", "pppoe pool add 2001:db8:100::/48"]


def access_frames():
    """Plain IP from the access side: never forwarded."""
    return [bytes(Ether(src=SUB, dst=MAC0) / IP(src=s, dst="203.0.113.5") / UDP() /
                  Raw(b"plain")) for s in ("100.64.0.2", "10.9.9.9", "203.0.113.77")] + [
        bytes(Ether(src=SUB, dst=MAC0) / Dot1Q(vlan=10) / IP(src="100.64.0.3",
                                                              dst="203.0.113.5") / UDP()),
        bytes(Ether(src=SUB, dst=MAC0) / IPv6(src="2001:db8:100::2", dst="2001:db8:b::9") /
              UDP() / Raw(b"plain6")),
        bytes(Ether(src=SUB, dst="ff:ff:ff:ff:ff:ff") / IP(src="100.64.0.2",
                                                            dst="255.255.255.255") / UDP()),
    ]


def uplink_frames():
    """What an upstream network sends toward subscribers."""
    return [
        bytes(Ether(src=ROUTER, dst=MAC1) / IP(src="203.0.113.5", dst="100.64.0.2") / UDP() /
              Raw(b"to an unbound pool address")),
        bytes(Ether(src=ROUTER, dst=MAC1) / IPv6(src="2001:db8:b::9", dst="2001:db8:100::5") /
              UDP() / Raw(b"to an unbound /64")),
        bytes(Ether(src=ROUTER, dst="ff:ff:ff:ff:ff:ff") / IP(src="198.51.100.254",
                                                              dst="255.255.255.255") / UDP()),
        bytes(Ether(src=ROUTER, dst="ff:ff:ff:ff:ff:ff") / IP(src="198.51.100.254",
                                                              dst="100.64.0.255") / UDP()),
        bytes(Ether(src=ROUTER, dst="01:00:5e:00:00:01") / IP(src="198.51.100.254",
                                                              dst="224.0.0.1") / UDP()),
        bytes(Ether(src=ROUTER, dst="33:33:00:00:00:01") / IPv6(src="fe80::fe", dst="ff02::1") /
              UDP()),
        bytes(Ether(src=ROUTER, dst="33:33:ff:00:00:05") /
              IPv6(src="fe80::fe", dst="ff02::1:ff00:5", hlim=255) /
              ICMPv6ND_NS(tgt="2001:db8:100::5")),
        bytes(Ether(src=ROUTER, dst="33:33:00:00:00:01") /
              IPv6(src="fe80::fe", dst="ff02::1", hlim=255) / ICMPv6ND_RA()),
    ]


def port_macs(c, binary):
    """Port MACs as edgegw reports them ('show config' in a command file)."""
    cmd, empty = c.path("probe.cmd"), c.path("empty.pcap")
    egwtest.write_pcap(empty, [])
    with open(cmd, "w") as f:
        f.write("show config\nquit\n")
    rc, so, se = egwtest.run_edgegw(
        binary, egwtest.eal_args("access_rule") +
        ["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (empty, c.path("probe0.pcap")),
         "--vdev", "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (empty, c.path("probe1.pcap"))],
        ["--cmdline-file", cmd], timeout=60)
    return dict((int(p), m) for p, m in re.findall(r"port (\d+): \S+ \(net_pcap\) mac (\S+)", so))


def run(c, binary, mode):
    tag = mode
    a_in, u_in = c.path(tag + "_a_in.pcap"), c.path(tag + "_u_in.pcap")
    a_out, u_out = c.path(tag + "_a_out.pcap"), c.path(tag + "_u_out.pcap")
    acc, upl = access_frames(), uplink_frames()
    egwtest.write_pcap(a_in, acc)
    egwtest.write_pcap(u_in, upl)
    cmd = c.path(tag + ".cmd")
    with open(cmd, "w") as f:
        f.write("\n".join(SETUP[mode] + COMMON) + "\n")
    js = c.path(tag + ".json")
    rc, so, se = egwtest.run_edgegw(
        binary, egwtest.eal_args("access_rule") +
        ["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (a_in, a_out),
         "--vdev", "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (u_in, u_out)],
        ["--cmdline-file", cmd, "--idle-exit", "500", "--stats-json", js], timeout=60)
    if not c.eq(rc, 0, "%s: edgegw exit status" % tag):
        egwtest.show_output(so, se)
        return
    s = egwtest.load_json(c, js)
    if s is None:
        return
    egwtest.check_identity(c, s)
    p0, p1 = egwtest.port_by_id(s, 0), egwtest.port_by_id(s, 1)
    c.eq(p0["rx"], len(acc), "%s: access rx" % tag)
    c.eq(p1["rx"], len(upl), "%s: uplink rx" % tag)
    # nothing of the uplink input reaches the access port, and nothing of
    # the access input the uplink: only frames edgegw makes itself may
    # leave (none here on the access port)
    aout = egwtest.pcap_frames(a_out)
    c.eq(len(aout), 0, "%s: nothing leaves on the access port (%s)" %
         (tag, [Ether(b).summary() for b in aout][:3]))
    uout = [Ether(b) for b in egwtest.pcap_frames(u_out)]
    leaked = [e for e in uout if bytes(e) in set(acc) or
              (IP in e and e[IP].src in ("100.64.0.2", "100.64.0.3", "10.9.9.9",
                                         "203.0.113.77")) or
              (IPv6 in e and e[IPv6].src == "2001:db8:100::2")]
    c.eq(len(leaked), 0, "%s: no access input leaves on the uplink" % tag)
    c.eq(p0["tx_out"], 0, "%s: access tx_out" % tag)
    d0 = p0["drops"]
    # the broadcast too: plain IP on an access port, whatever its destination
    c.eq(d0.get("access_not_session", 0), len(acc),
         "%s: plain IP on the access port, every frame: access_not_session (%s)" %
         (tag, {k: v for k, v in d0.items() if v}))
    d1 = {k: v for k, v in p1["drops"].items() if v}
    c.check(sum(d1.values()) + p1["queued"] + p1["tx"] == len(upl),
            "%s: every uplink frame dropped with a reason, or taken by the control path "
            "(%s, queued %d)" % (tag, d1, p1["queued"]))
    c.check(d1.get("ip_no_session", 0) >= 2,
            "%s: unicast to unbound pool addresses: ip_no_session" % tag, str(d1))


def main():
    binary = sys.argv[1]
    global MAC0, MAC1
    c = egwtest.Checker("access_rule")
    macs = port_macs(c, binary)
    if not c.check(0 in macs and 1 in macs, "port MACs from show config", str(macs)):
        c.finish()
    MAC0, MAC1 = macs[0], macs[1]
    for mode in ("routed", "xconnect"):
        run(c, binary, mode)
    c.finish()


if __name__ == "__main__":
    main()
