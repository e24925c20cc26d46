# SPDX-License-Identifier: BSD-3-Clause
"""ip_kernel: edgegw routes between two Linux network namespaces.

edgegw runs the routed gateway on two net_tap ports; the kernel side of each
tap is moved into its own namespace (egwA: 203.0.113.2/24, 2001:db8:a::2/64;
egwB: 198.51.100.2/24, 2001:db8:b::2/64), each with edgegw as its default
router. The Linux kernel is the neighbour on both sides: it resolves edgegw
by ARP and ND, edgegw resolves it. Checked with the kernel's own tools:
ping and ping -6 of edgegw's addresses and through it, traceroute (UDP) that
shows edgegw as hop 1 (TTL expiry -> ICMP time exceeded from the ingress
address), a net unreachable for a destination without a route, tracepath
that finds the 1400-byte IP MTU edgegw routes with out of port 1 (`ip port
1 mtu 1400`, below the links' 1500: ICMP fragmentation needed / packet too
big), iperf3 TCP both ways across it, and TCP (IPv4 and IPv6) to a listener of the host's own stack
on edgegw's address through port 0's kernel exception path (egwx0), and
link-scope multicast (224.0.0.251, ff02::fb, as OSPF's hellos would be) both
ways through it. Then hostile frames from a namespace (scapy): TTL 0/1, martian
sources, the subnet broadcast, lying lengths, an ARP flood from random
senders: the counters explain every frame and the accounting identity holds.

usage: test_ip_kernel.py EDGEGW
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402

IF0, IF1 = "egwr0", "egwr1"
NSA, NSB = "egwA", "egwB"
# the kernel sides' own MACs (not the ports', which net_tap gives them)
KMAC = {IF0: "02:00:00:6b:00:01", IF1: "02:00:00:6b:00:02"}


def sh(*cmd, timeout=30):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace")


def ns(name, *cmd, timeout=30):
    # nsenter switches the network namespace only (ip netns exec remounts
    # /sys, which fails where / is not a mount point)
    return sh("nsenter", "--net=/run/netns/" + name, "--", *cmd, timeout=timeout)


def iperf3(extra):
    """A 2 s iperf3 TCP run from egwA to a one-off server in egwB: (rc, bit/s)."""
    srv = subprocess.Popen(["nsenter", "--net=/run/netns/" + NSB, "--", "iperf3", "-s", "-1",
                            "-B", "198.51.100.2"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    rc, o = ns(NSA, "iperf3", "-c", "198.51.100.2", "-t", "2", "-J", *extra, timeout=60)
    srv.wait(timeout=20)
    try:
        return rc, json.loads(o)["end"]["sum_received"]["bits_per_second"]
    except (ValueError, KeyError):
        return rc, 0


def cleanup():
    for n in (NSA, NSB):
        sh("ip", "netns", "del", n)


SCAPY_HOSTILE = r"""
import random, sys
from scapy.all import Ether, IP, UDP, ARP, Raw, sendp, get_if_hwaddr, conf
conf.verb = 0
iface, gwmac = sys.argv[1], sys.argv[2]
me = get_if_hwaddr(iface)
f = []
e = Ether(src=me, dst=gwmac)
for i in range(10):
    f.append(e / IP(src="203.0.113.2", dst="198.51.100.2", ttl=1) / UDP(dport=33434 + i))
    f.append(e / IP(src="203.0.113.2", dst="198.51.100.2", ttl=0) / UDP(dport=33534 + i))
for s in ("127.0.0.1", "0.1.2.3", "224.0.0.5", "240.0.0.1"):
    for i in range(5):
        f.append(e / IP(src=s, dst="198.51.100.2") / UDP(dport=9))
for i in range(5):
    f.append(e / IP(src="203.0.113.2", dst="203.0.113.255") / UDP(dport=9))
    # total length past the frame
    p = bytearray(bytes(e / IP(src="203.0.113.2", dst="198.51.100.2") / UDP(dport=9) / Raw(b"x" * 20)))
    p[16:18] = (1400).to_bytes(2, "big")
    p[24:26] = b"\0\0"
    f.append(Ether(bytes(p)))
# unsolicited replies about addresses nobody asked for (before the flood,
# which the input rate limit cuts)
for i in range(20):
    f.append(Ether(src=me, dst=gwmac) /
             ARP(op=2, hwsrc="02:66:66:66:66:%02x" % i, psrc="203.0.113.%d" % (200 + i),
                 hwdst=gwmac, pdst="203.0.113.1"))
random.seed(7)
for i in range(300):
    ip = "203.0.113.%d" % random.randint(3, 250)
    mac = "02:00:%02x:%02x:%02x:%02x" % tuple(random.randint(0, 255) for _ in range(4))
    f.append(Ether(src=mac, dst="ff:ff:ff:ff:ff:ff") /
             ARP(op=1, hwsrc=mac, psrc=ip, pdst="203.0.113.1"))
sendp(f, iface=iface, inter=0.001)
print("sent", len(f))
"""


LISTENER = r'''
import socket, sys
s = socket.socket(getattr(socket, sys.argv[1]), socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[2], 2222))
s.listen(1)
s.settimeout(10)
c, a = s.accept()
d = c.recv(100)
c.sendall(b"reply:" + d)
c.close()
print("served", a[0])
'''

CONNECTOR = r'''
import socket, sys
s = socket.create_connection((sys.argv[2], 2222), timeout=5)
s.sendall(b"edgegw-exception-test")
print(s.recv(100).decode())
'''


# link-scope multicast (as OSPF hellos are): a receiver joined to a group on
# an interface, and a sender with TTL / hop limit 1 out of one
MCAST_RX = r'''
import socket, struct, sys
fam, group, ifname, src = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
idx = socket.if_nametoindex(ifname)
if fam == "4":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((group, 5353))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 socket.inet_aton(group) + struct.pack("=II", 0, idx))
else:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((group, 5353, 0, idx))
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                 socket.inet_pton(socket.AF_INET6, group) + struct.pack("=I", idx))
s.settimeout(8)
print("ready", flush=True)
while True:
    d, a = s.recvfrom(200)
    if d.startswith(b"edgegw-mcast"):
        print("got", d.decode(), "from", a[0], flush=True)
        break
'''

MCAST_TX = r'''
import socket, struct, sys, time
fam, group, ifname, src = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
idx = socket.if_nametoindex(ifname)
if fam == "4":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF,
                 struct.pack("=4sII", socket.inet_aton(src), 0, idx))
    dst = (group, 5353)
else:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, idx)
    if src != "-":
        s.bind((src, 0, 0, idx))
    dst = (group, 5353, 0, idx)
for i in range(10):
    s.sendto(b"edgegw-mcast-%d" % i, dst)
    time.sleep(0.3)
'''


def mcast(c, rx_ns, tx_ns, fam, group, rx_if, tx_if, src, what):
    """A receiver (in rx_ns, None: the host) joined to group on rx_if gets a
    datagram that a sender (in tx_ns) sends to the group out of tx_if."""
    def cmd(n, script):
        base = ["/usr/bin/python3", "-c", script, fam, group]
        return (["nsenter", "--net=/run/netns/" + n, "--"] if n else []) + base
    rx = subprocess.Popen(cmd(rx_ns, MCAST_RX) + [rx_if, src], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    time.sleep(0.7)
    tx = subprocess.run(cmd(tx_ns, MCAST_TX) + [tx_if, src], stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, timeout=30)
    try:
        o = rx.communicate(timeout=15)[0].decode(errors="replace")
    except subprocess.TimeoutExpired:
        rx.kill()
        o = rx.communicate()[0].decode(errors="replace")
    c.check("got edgegw-mcast" in o, what, (o.strip() + " / " + tx.stdout.decode(
        errors="replace").strip())[-200:])


def main():
    binary = sys.argv[1]
    c = egwtest.Checker("ip_kernel")
    if not os.path.exists("/dev/net/tun"):
        c.skip("/dev/net/tun is missing: no net_tap")
    if os.geteuid() != 0:
        c.skip("needs root (net_tap, network namespaces)")
    for tool in ("ping", "traceroute", "tracepath", "iperf3", "nsenter"):
        if shutil.which(tool) is None:
            c.skip("%s is not installed (scripts/test installs it)" % tool)
    for ifname in (IF0, IF1):
        if os.path.exists("/sys/class/net/" + ifname):
            c.check(False, "interface %s does not exist before the test" % ifname)
            c.finish()
    cleanup()
    js = c.path("s.json")
    cmd = c.path("routed.cmd")
    with open(cmd, "w") as f:
        f.write("\n".join([
            "set fwd gateway",
            "port role 0 uplink",
            "port role 1 uplink",
            "ip address add 203.0.113.1/24 port 0",
            "ip address add 2001:db8:a::1/64 port 0",
            "ip address add 198.51.100.1/24 port 1",
            "ip address add 2001:db8:b::1/64 port 1",
            "ip exception add port 0",
            "ip port 1 mtu 1400",
            "show ip address",
            "show ip route",
        ]) + "\n")
    e = egwtest.Running(c, "edgegw", binary,
                        egwtest.eal_args("ip_kernel") +
                        ["--vdev", "net_tap0,iface=%s" % IF0, "--vdev", "net_tap1,iface=%s" % IF1],
                        ["--cmdline-file", cmd, "--auto-start", "--stats-json", js])
    try:
        up = egwtest.wait_for(lambda: not e.alive() or (
            "forwarding started" in e.stdout() and os.path.exists("/sys/class/net/" + IF1)), 30)
        if not c.check(up and e.alive(), "edgegw up with both taps"):
            egwtest.show_output(e.stdout(), e.stderr())
            return
        out = e.stdout()
        c.check(re.search(r"203\.0\.113\.0/24 connected port 0", out) is not None,
                "show ip route: connected route of port 0", "")
        c.check(re.search(r"fe80::[0-9a-f:]+/64 \(link-local\)", out) is not None,
                "show ip address: an EUI-64 link-local address")
        # net_tap gives its kernel side the port's MAC: edgegw's own, read
        # here; the kernel neighbours then get MACs of their own, so a frame
        # edgegw addressed to itself (not to the neighbour it resolved)
        # would not be taken by the kernel
        mac0 = open("/sys/class/net/%s/address" % IF0).read().strip()
        for n, ifn, a4, a6, gw4, gw6 in ((NSA, IF0, "203.0.113.2/24", "2001:db8:a::2/64",
                                         "203.0.113.1", "2001:db8:a::1"),
                                        (NSB, IF1, "198.51.100.2/24", "2001:db8:b::2/64",
                                         "198.51.100.1", "2001:db8:b::1")):
            sh("ip", "netns", "add", n)
            rc, o = sh("ip", "link", "set", ifn, "netns", n)
            if not c.check(rc == 0, "move %s into namespace %s" % (ifn, n), o.strip()):
                return
            for args in (["ip", "link", "set", ifn, "address", KMAC[ifn]],
                         ["ip", "link", "set", "lo", "up"],
                         ["ip", "addr", "add", a4, "dev", ifn],
                         ["ip", "-6", "addr", "add", a6, "dev", ifn, "nodad"],
                         ["ip", "link", "set", ifn, "up"],
                         ["ip", "route", "add", "default", "via", gw4],
                         ["ip", "-6", "route", "add", "default", "via", gw6]):
                rc, o = ns(n, *args)
                if rc != 0:
                    c.check(False, "%s: %s" % (n, " ".join(args)), o.strip())
                    return
        time.sleep(1)
        # the kernel resolves edgegw, edgegw answers its own addresses
        rc, o = ns(NSA, "ping", "-c", "3", "-i", "0.2", "-W", "2", "203.0.113.1")
        c.check(rc == 0 and " 0% packet loss" in o, "ping 203.0.113.1 (edgegw) from egwA",
                o.strip().splitlines()[-2] if o.strip() else "")
        rc, o = ns(NSA, "ping", "-6", "-c", "3", "-i", "0.2", "-W", "2", "2001:db8:a::1")
        c.check(rc == 0 and " 0% packet loss" in o, "ping -6 2001:db8:a::1 (edgegw) from egwA",
                o.strip().splitlines()[-2] if o.strip() else "")
        # through edgegw: it resolves egwB by ARP/ND and rewrites MACs
        rc, o = ns(NSA, "ping", "-c", "5", "-i", "0.2", "-W", "2", "198.51.100.2")
        c.check(rc == 0 and re.search(r" [0-2]0?% packet loss", o) is not None,
                "ping 198.51.100.2 (egwB) through edgegw",
                o.strip().splitlines()[-2] if o.strip() else "")
        m = re.search(r"ttl=(\d+)", o)
        c.check(m is not None and int(m.group(1)) == 63, "reply TTL 63: one router on the path",
                m.group(0) if m else "no reply")
        rc, o = ns(NSA, "ping", "-6", "-c", "5", "-i", "0.2", "-W", "2", "2001:db8:b::2")
        c.check(rc == 0 and re.search(r" [0-2]0?% packet loss", o) is not None,
                "ping -6 2001:db8:b::2 (egwB) through edgegw",
                o.strip().splitlines()[-2] if o.strip() else "")
        m = re.search(r"ttl=(\d+)", o)
        c.check(m is not None and int(m.group(1)) == 63, "IPv6 reply hop limit 63",
                m.group(0) if m else "no reply")
        # traceroute: hop 1 is edgegw (time exceeded from its ingress address)
        rc, o = ns(NSA, "traceroute", "-n", "-q", "1", "-w", "2", "-m", "4", "198.51.100.2",
                   timeout=60)
        hops = re.findall(r"^\s*(\d+)\s+(\S+)", o, re.M)
        c.check(("1", "203.0.113.1") in hops, "traceroute: hop 1 is 203.0.113.1", repr(hops))
        c.check(("2", "198.51.100.2") in hops, "traceroute: hop 2 is 198.51.100.2", repr(hops))
        rc, o = ns(NSA, "traceroute", "-6", "-n", "-q", "1", "-w", "2", "-m", "4",
                   "2001:db8:b::2", timeout=60)
        hops = re.findall(r"^\s*(\d+)\s+(\S+)", o, re.M)
        c.check(("1", "2001:db8:a::1") in hops, "traceroute -6: hop 1 is 2001:db8:a::1",
                repr(hops))
        c.check(("2", "2001:db8:b::2") in hops, "traceroute -6: hop 2 is 2001:db8:b::2",
                repr(hops))
        # no route: ICMP net unreachable from edgegw
        rc, o = ns(NSA, "ping", "-c", "1", "-W", "2", "192.0.2.99")
        c.check("203.0.113.1" in o and "Unreachable" in o,
                "ping 192.0.2.99: Destination Net Unreachable from 203.0.113.1",
                o.strip().splitlines()[1] if len(o.strip().splitlines()) > 1 else o.strip())
        # path MTU: port 1's IP MTU is 1400, below the links' 1500
        for fam, dst in (("-4", "198.51.100.2"), ("-6", "2001:db8:b::2")):
            rc, o = ns(NSA, "tracepath", fam, "-n", "-m", "4", dst, timeout=60)
            m = re.search(r"pmtu (\d+)", o.split("Resume:")[-1]) if "Resume:" in o else None
            c.check(m is not None and int(m.group(1)) == 1400,
                    "tracepath %s %s finds the path MTU 1400 (edgegw's too-big)" % (fam, dst),
                    (o.strip().splitlines() or [""])[-1])
        # TCP both ways, across the smaller path MTU
        for extra, what in (([], "egwA -> egwB"), (["-R"], "egwB -> egwA (-R)")):
            rc, bps = iperf3(extra)
            c.check(rc == 0 and bps > 1e6, "iperf3 TCP %s through edgegw" % what,
                    "%.1f Mbit/s" % (bps / 1e6))
        # the exception path: a TCP service of the host's own stack on
        # edgegw's address (as sshd or a BGP daemon would be)
        for fam, addr in (("AF_INET", "203.0.113.1"), ("AF_INET6", "2001:db8:a::1")):
            lsn = subprocess.Popen(["/usr/bin/python3", "-c", LISTENER, fam, addr],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            time.sleep(0.5)
            rc, o = ns(NSA, "/usr/bin/python3", "-c", CONNECTOR, fam, addr, timeout=30)
            try:
                lo = lsn.communicate(timeout=15)[0].decode(errors="replace")
            except subprocess.TimeoutExpired:
                lsn.kill()
                lo = lsn.communicate()[0].decode(errors="replace")
            c.check(rc == 0 and "reply:edgegw-exception-test" in o,
                    "TCP from egwA to the host's listener on %s:2222 through the exception path"
                    % addr, (o.strip() + " / " + lo.strip())[-200:])
        # link-scope multicast through the exception path, both ways (as
        # OSPF's hellos to 224.0.0.5 / ff02::5 would go): mDNS's groups here
        mcast(c, None, NSA, "4", "224.0.0.251", "egwx0", IF0, "203.0.113.2",
              "IPv4 link-scope multicast from egwA reaches the host's socket on egwx0")
        mcast(c, NSA, None, "4", "224.0.0.251", IF0, "egwx0", "203.0.113.1",
              "IPv4 link-scope multicast from the host (egwx0) reaches egwA")
        mcast(c, None, NSA, "6", "ff02::fb", "egwx0", IF0, "-",
              "IPv6 link-scope multicast from egwA reaches the host's socket on egwx0")
        ll = re.search(r"(fe80::[0-9a-f:]+)/64 \(link-local\)", out)
        if c.check(ll is not None, "edgegw's link-local address of port 0"):
            mcast(c, NSA, None, "6", "ff02::fb", IF0, "egwx0", ll.group(1),
                  "IPv6 link-scope multicast from the host (edgegw's link-local) reaches egwA")
            # the TUN's only link-local is the port's: a daemon that lets
            # the kernel choose the source (MLD, OSPFv3) speaks from it
            rc, o = sh("ip", "-6", "-o", "addr", "show", "dev", "egwx0", "scope", "link")
            lls = re.findall(r"inet6 (fe80::[0-9a-f:]+)/", o)
            c.check(lls == [ll.group(1)], "egwx0's only link-local address is edgegw's %s"
                    % ll.group(1), repr(lls))
        # hostile frames from egwA
        script = c.path("hostile.py")
        with open(script, "w") as f:
            f.write(SCAPY_HOSTILE)
        rc, o = ns(NSA, "/usr/bin/python3", script, IF0, mac0, timeout=120)
        c.check(rc == 0, "hostile frames sent from egwA", o.strip()[-200:])
        time.sleep(1)
        c.check(e.alive(), "edgegw still running after the hostile frames")
    finally:
        rc = e.stop()
        cleanup()
    c.eq(rc, 0, "edgegw exit status")
    s = egwtest.load_json(c, js)
    if s is None:
        c.finish()
    egwtest.check_identity(c, s)
    # between the kernel's frames the control path sleeps, and the worker
    # that hands it an ARP or ND frame wakes it (no 1 ms poll)
    c.check(s.get("control", {}).get("woken", 0) > 0,
            "the control path was woken by the workers",
            str(s.get("control", {}).get("woken")))
    ip = s.get("ip", {})
    dp, ctl, drops = ip.get("data_path", {}), ip.get("control", {}), ip.get("drops", {})
    c.check(dp.get("forwarded", 0) > 100, "IP forwarded packets", str(dp.get("forwarded")))
    for where, key, least, what in (
            (dp, "echo_replies", 6, "echo replies made on the worker"),
            (dp, "icmp_errors", 3, "ICMP errors sent (traceroute, unreachable)"),
            (drops, "ip_ttl_exceeded", 20, "TTL 0/1 dropped as ip_ttl_exceeded"),
            (drops, "ip_martian_source", 20, "martian sources dropped"),
            (drops, "ip_broadcast", 5, "subnet broadcast dropped"),
            (drops, "ip_too_big", 2, "too big for port 1's MTU: ip_too_big"),
            (drops, "ip_bad_header", 5, "lying total length dropped"),
            (ctl, "arp_request_answered", 1, "ARP requests answered"),
            (ctl, "arp_unsolicited", 20, "unsolicited ARP replies counted")):
        c.check(where.get(key, 0) >= least, what, str(where.get(key)))
    c.check(ctl.get("arp_request_answered", 0) + ctl.get("input_ratelimited", 0) >= 300,
            "ARP flood: every request answered or cut by the input rate limit",
            "%s answered, %s rate limited" % (ctl.get("arp_request_answered"),
                                              ctl.get("input_ratelimited")))
    c.check(ctl.get("nd_ns_answered", 0) >= 1, "neighbour solicitations answered",
            str(ctl.get("nd_ns_answered")))
    nb = {(n["addr"], n["port"]): n for n in ip.get("neighbours", [])}
    for a, p in (("203.0.113.2", 0), ("198.51.100.2", 1), ("2001:db8:b::2", 1)):
        n = nb.get((a, p))
        c.check(n is not None and n["state"] in ("reachable", "stale", "delay", "probe"),
                "neighbour %s on port %u resolved" % (a, p), n["state"] if n else "missing")
        want = KMAC[IF0 if p == 0 else IF1]
        c.check(n is not None and n["mac"].lower() == want,
                "neighbour %s: the kernel's own MAC %s" % (a, want), n["mac"] if n else "")
    ex = ip.get("exception", [])
    c.check(len(ex) == 1 and ex[0]["to_host"] >= 6 and ex[0]["from_host"] >= 6,
            "exception path of port 0 carried both ways", repr(ex))
    fake = [n for n in ip.get("neighbours", []) if n["mac"].startswith("02:66:66")]
    c.check(not fake, "unsolicited replies created no neighbour", str(len(fake)))
    c.finish()


if __name__ == "__main__":
    main()
