# SPDX-License-Identifier: BSD-3-Clause
"""afxdp: edgegw shares a veth with the kernel through net_af_xdp and its XDP
steering program (lib/xdp/egw_xdp.bpf.o).

One end of a veth pair stays in the root namespace with the kernel's address
10.78.0.1/24 and carries edgegw (port 0, access); the other end is in a
network namespace, 10.78.0.2/24. From the namespace:
  - rp-pppoe's `pppoe -A` gets a PADO from edgegw (PPPoE is steered);
  - ping and an iperf3 TCP connection to the kernel's 10.78.0.1 keep
    working, and edgegw never receives them: its port RX count equals the
    frames the program steered, while the program's kernel class grew by
    at least the pings and the TCP segments;
  - ESP in UDP (port 4500) and ESP (protocol 50) to the tunnel address
    10.78.0.50 go to the kernel until an inbound tunnel SA with that
    address is added at run time, then to edgegw, and to the kernel again
    once the SA is deleted; an SA with `natt dport 4501` has ESP in UDP to
    its port steered too. The maps are read independently with
    `bpftool map dump pinned /sys/fs/bpf/edgegw/<if>/...`;
  - routes: UDP to 10.79.0.0/24 (the namespace routes it through the
    veth) goes to the kernel until `ip route add 10.79.0.0/24 blackhole`,
    then to edgegw, and back after `ip route del`; with a default route
    through edgegw the pings and TCP to the kernel's 10.78.0.1 still reach
    the kernel, and an address the kernel gains inside a routed prefix
    (10.79.0.7) is the kernel's again (ping answered) without a restart;
    `ip route load` keeps the map in step, all or nothing;
  - sessions (pppoetest's client in the namespace): a local user's fixed
    address outside the pools is in egw_route4 while the session is bound
    (UDP to it steered), a pooled user's adds nothing, both gone after
    PADT; with egw_route4 full the fixed user's IPCP closes (bind_fail);
  - a full map (filled behind edgegw's back with bpftool) makes `ip
    address add`, `esp sa add` (also one whose NAT-T port map is full),
    `ip route add`, `ip route load` and `pppoe pool add` fail naming the
    map, and leaves edgegw's state as it was: the same command succeeds
    once there is room;
  - /edgegw/xdp on the telemetry socket gives what `show xdp` and bpftool
    give;
  - addresses per VLAN: with 10.78.5.1 on VLAN 100 of port 0 (made an
    uplink at the end), frames to it tagged 100 go to edgegw, untagged or
    tagged 200 to the kernel.
Interfaces and the namespace have unique names starting with xdp and are
removed at the end, with the pins and the program.

Skips (77) without root, AF_XDP, rp-pppoe's pppoe, iperf3 or bpftool.

usage: test_afxdp.py EDGEGW BPF_OBJECT
"""
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402
import pppoetest as pt  # noqa: E402

NAME = "afxdp"
TAG = "%d" % (os.getpid() % 100000)
IF, PEER, NS = "xdpe" + TAG, "xdpf" + TAG, "xdpns" + TAG
KADDR, PADDR, TUN = "10.78.0.1", "10.78.0.2", "10.78.0.50"
AC_NAME = "edgegw-afxdp"
SPI = 0x7001
KEY = "00112233445566778899aabbccddeeff01020304"
AF_XDP = 44  # linux/socket.h; Python's socket module has no name for it
STEERED = ("pppoe_disc", "pppoe_sess", "esp", "own", "pool", "rxtok", "route")
CLASSES = ["kernel", "malformed", "pppoe_disc", "pppoe_sess", "esp", "own", "pool", "rxtok",
           "route", "no_xsk"]
RNET, RKADDR = "10.79.0", "10.79.0.7"
VADDR = "10.78.5.1"
PIN = "/sys/fs/bpf/edgegw/"


def sh(*cmd, check=False):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if check and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stdout.decode().strip()))
    return r.returncode, r.stdout.decode(errors="replace")


def ns(*cmd):
    return ["nsenter", "--net=/run/netns/" + NS, "--"] + list(cmd)


def cleanup():
    sh("ip", "link", "del", IF)
    sh("ip", "netns", "del", NS)


def bpftool_dump(name):
    rc, out = sh("bpftool", "-j", "map", "dump", "pinned",
                 "/sys/fs/bpf/edgegw/%s/%s" % (IF, name))
    if rc != 0:
        return None
    return json.loads(out)


def classes():
    """The program's per-class packet counts, summed over CPUs (bpftool)."""
    names = CLASSES
    d = bpftool_dump("egw_stats")
    if d is None:
        return None
    out = {}
    # -j gives the raw bytes and, from the BTF, the "formatted" fields
    for e in d:
        f = e["formatted"]
        out[names[f["key"]]] = sum(v["value"]["packets"] for v in f["values"])
    return out


def esp4_keys():
    d = bpftool_dump("egw_esp4") or []
    res = []
    for e in d:
        res.append(socket.inet_ntoa(bytes(int(b, 0) for b in e["key"])))
    return res


SEND_ESP = r"""
import socket, struct, sys
dst, n, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("0.0.0.0", 4500 if port == 4500 else 0))
r = socket.socket(socket.AF_INET, socket.SOCK_RAW, 50)
for i in range(n):
    esp = struct.pack("!II", 0x7001, i + 1) + bytes(32)
    u.sendto(esp, (dst, port))
    if port == 4500:
        r.sendto(esp, (dst, 0))
"""


def send_esp(n, port=4500):
    """n ESP-in-UDP (and on 4500 n ESP) packets from the namespace to the tunnel address."""
    rc, out = sh(*ns(sys.executable, "-c", SEND_ESP, TUN, str(n), str(port)))
    return rc == 0


SEND_UDP = r"""
import socket, sys
dst, n = sys.argv[1], int(sys.argv[2])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    u.sendto(b"x" * 32, (dst, 9))
"""


def send_udp(dst, n):
    rc, out = sh(*ns(sys.executable, "-c", SEND_UDP, dst, str(n)))
    return rc == 0


SEND_TAGGED = r"""
import sys
import threading
from scapy.all import Ether, Dot1Q, IP, UDP, Raw, sendp
iface, dmac, dst, vid, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
p = IP(src="10.78.5.2", dst=dst) / UDP(sport=1, dport=9) / Raw(b"v" * 20)
f = Ether(dst=dmac) / (Dot1Q(vlan=vid) / p if vid else p)
sendp([f] * n, iface=iface, verbose=False)
"""


def send_tagged(mac, dst, vid, n):
    """n UDP frames to dst from the namespace, tagged vid (0: untagged), raw (AF_PACKET)."""
    rc, out = sh(*ns(sys.executable, "-c", SEND_TAGGED, PEER, mac, dst, str(vid), str(n)))
    return rc == 0


def lpm_key(a, plen):
    """bpftool hex words of an LPM trie key: prefixlen (host order) and the address."""
    return ["%02x" % b for b in plen.to_bytes(4, "little") + bytes(a)]


def fill(name, keys):
    """Fill a pinned map of edgegw's with keys (lists of hex words) by bpftool batch:
    what a map full of someone else's entries looks like to edgegw."""
    path = "/tmp/egw-afxdp-fill-%s.txt" % TAG
    with open(path, "w") as f:
        for k in keys:
            f.write("map update pinned %s%s/%s key hex %s value hex 01 00 00 00\n" %
                    (PIN, IF, name, " ".join(k)))
    sh("bpftool", "batch", "file", path)
    os.unlink(path)


def unfill(name, keys):
    path = "/tmp/egw-afxdp-unfill-%s.txt" % TAG
    with open(path, "w") as f:
        for k in keys:
            f.write("map delete pinned %s%s/%s key hex %s\n" % (PIN, IF, name, " ".join(k)))
    sh("bpftool", "batch", "file", path)
    os.unlink(path)


def n_keys(name):
    d = bpftool_dump(name)
    return None if d is None else len(d)


def natt_steering(c, e):
    """An SA's own ESP-in-UDP port (natt dport 4501) on its tunnel address."""
    b0 = classes()
    c.check(send_esp(10, 4501), "ESP in UDP to port 4501 sent before the SA")
    time.sleep(0.3)
    b1 = classes()
    c.eq(b1["esp"] - b0["esp"], 0, "UDP 4501 not steered before an SA names it")
    out = e.run("esp sa add 0x7002 in aead aes-128-gcm key %s mode tunnel src %s dst %s "
                "natt dport 4501" % (KEY, PADDR, TUN))
    c.check("error" not in out and "added" in out, "inbound tunnel SA with natt dport 4501",
            out)
    c.check(send_esp(10, 4501), "ESP in UDP to port 4501 sent with the SA")
    time.sleep(0.3)
    b2 = classes()
    c.eq(b2["esp"] - b1["esp"], 10, "10 ESP in UDP to the SA's port 4501 steered to edgegw")
    c.eq(n_keys("egw_natt"), 1, "egw_natt holds the SA's port (bpftool)")
    out = e.run("esp sa del 0x7002 in")
    c.check("deleted" in out, "natt SA deleted", out)
    c.eq(n_keys("egw_natt"), 0, "egw_natt empty again (bpftool)")
    c.check(send_esp(10, 4501), "ESP in UDP to port 4501 sent after the SA")
    time.sleep(0.3)
    c.eq(classes()["esp"] - b2["esp"], 0, "UDP 4501 back to the kernel after the SA")


def run2(e, line):
    """A command's output with its error lines (edgegw writes those on stderr)."""
    before = len(e.e.stderr())
    out = e.run(line)
    time.sleep(0.05)
    return out + e.e.stderr()[before:]


def ping_ok(dst, n=10):
    rc, out = sh(*ns("ping", "-c", str(n), "-i", "0.05", "-W", "2", dst))
    m = re.search(r"(\d+) received", out)
    return rc == 0 and m is not None and int(m.group(1)) == n, out


def route_steering(c, e):
    dst = RNET + ".5"
    b0 = classes()
    c.check(send_udp(dst, 20), "UDP to %s sent before the route" % dst)
    time.sleep(0.3)
    b1 = classes()
    c.eq(b1["route"] - b0["route"], 0, "UDP to %s.0/24 stays with the kernel before the route"
         % RNET)
    out = e.run("ip route add %s.0/24 blackhole" % RNET)
    c.check("added" in out and "error" not in out, "ip route add %s.0/24 blackhole" % RNET,
            out)
    c.eq(n_keys("egw_route4"), 1, "egw_route4 holds the route (bpftool)")
    c.check(send_udp(dst, 20), "UDP to %s sent with the route" % dst)
    time.sleep(0.3)
    b2 = classes()
    c.eq(b2["route"] - b1["route"], 20, "20 UDP to the routed prefix steered to edgegw")

    # a default route through edgegw: the kernel keeps its own traffic
    out = e.run("ip route add default blackhole")
    c.check("added" in out and "error" not in out, "ip route add default blackhole", out)
    ok, out = ping_ok(KADDR, 20)
    c.check(ok, "20 pings to the kernel's %s answered with a default route through edgegw"
            % KADDR, out)
    iperf = subprocess.Popen(["iperf3", "-s", "-1", "-B", KADDR, "-p", "5298"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    rc, out = sh(*ns("iperf3", "-c", KADDR, "-p", "5298", "-t", "2", "-J"))
    sent = 0
    try:
        sent = json.loads(out)["end"]["sum_sent"]["bytes"]
    except (ValueError, KeyError):
        pass
    if iperf.poll() is None:
        iperf.kill()
    c.check(rc == 0 and sent > 1000000, "iperf3 TCP to the kernel's %s with a default route "
            "through edgegw: %d bytes" % (KADDR, sent), out[-300:])
    b3 = classes()
    c.eq(b3["route"] - b2["route"], 0, "none of the kernel's pings and TCP taken by the "
         "default route")
    c.check(b3["kernel"] - b2["kernel"] >= 20 + 100, "the pings and TCP went to the kernel",
            "%d" % (b3["kernel"] - b2["kernel"]))

    # the kernel gains an address inside the routed prefix: it is the kernel's
    sh("ip", "addr", "add", RKADDR + "/32", "dev", IF)
    egwtest.wait_for(lambda: ping_ok(RKADDR, 1)[0], 5, 0.2)
    ok, out = ping_ok(RKADDR, 10)
    c.check(ok, "ping to %s, an address the kernel gained inside edgegw's route, answered "
            "by the kernel" % RKADDR, out)
    sh("ip", "addr", "del", RKADDR + "/32", "dev", IF)

    out = e.run("ip route del default")
    c.check("deleted" in out, "ip route del default", out)
    out = e.run("ip route del %s.0/24" % RNET)
    c.check("deleted" in out, "ip route del %s.0/24" % RNET, out)
    c.eq(n_keys("egw_route4"), 0, "egw_route4 empty again (bpftool)")
    b4 = classes()
    c.check(send_udp(dst, 20), "UDP to %s sent after the route" % dst)
    time.sleep(0.3)
    c.eq(classes()["route"] - b4["route"], 0, "UDP to the prefix back to the kernel")

    # ip route load: all lines or none, the map as edgegw's table
    good = c.path("routes.txt")
    with open(good, "w") as f:
        f.write("# three routes\n10.90.0.0/16 blackhole\n10.91.0.0/16 blackhole\n"
                "2001:db8:90::/48 blackhole\n")
    out = e.run("ip route load " + good)
    c.check("3 routes loaded" in out, "ip route load of three routes", out)
    c.eq((n_keys("egw_route4"), n_keys("egw_route6")), (2, 1),
         "egw_route4/6 hold the loaded routes (bpftool)")
    bad = c.path("routes-bad.txt")
    with open(bad, "w") as f:
        f.write("10.92.0.0/16 blackhole\n10.93.0.0/16 nonsense\n")
    out = run2(e, "ip route load " + bad)
    c.check("error" in out and "no route of the file was added" in out,
            "ip route load with a bad line fails", out)
    c.eq(n_keys("egw_route4"), 2, "egw_route4 unchanged by the failed load")
    for p in ("10.90.0.0/16", "10.91.0.0/16", "2001:db8:90::/48"):
        e.run("ip route del " + p)
    c.eq((n_keys("egw_route4"), n_keys("egw_route6")), (0, 0), "egw_route4/6 empty again")


SESSION = r"""
import sys
import threading
sys.path.insert(0, sys.argv[1])
import pppoetest as pt
port = pt.Port(sys.argv[2])
cls = [pt.Client(port, "02:00:00:00:07:0%d" % i, name=u, user=u, secret=u + "-pw")
       for i, u in enumerate(sys.argv[3:])]
for cl in cls:
    bad = cl.connect(auth="pap", ipv6=False)
    print("BOUND" if not bad else "FAIL", cl.name, cl.ip4, repr(bad), flush=True)
sys.stdin.readline()
for cl in cls:
    cl.padt_send()
print("PADT", flush=True)
"""


def routed(c, dst, want, what):
    """20 UDP frames from the namespace to dst: want of them steered as route."""
    b = classes()
    c.check(send_udp(dst, 20), "%s: sent" % what)
    time.sleep(0.3)
    c.eq(classes()["route"] - b["route"], want, what)


def sessions(*users):
    """The users' PPPoE sessions from the namespace (pppoetest's client in a
    process of its own there): the process, and a reader of its lines with a
    timeout (BOUND/FAIL per user, then PADT after a line on its stdin)."""
    p = subprocess.Popen(ns(sys.executable, "-c", SESSION, os.path.dirname(
        os.path.abspath(__file__)), PEER, *users), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    q = queue.Queue()
    threading.Thread(target=lambda: [q.put(ln.strip()) for ln in p.stdout], daemon=True).start()

    def line(t):
        try:
            return q.get(timeout=t)
        except queue.Empty:
            return ""
    return p, line


def session_steering(c, e):
    """A session's own address outside every pool (a local user's, as a
    RADIUS Framed-IP-Address) is steered while the session lasts; one from
    a pool adds nothing (the pool is steered)."""
    fixed = "10.80.0.7"
    for cmd in ("ppp user add fixed fixed-pw address " + fixed, "ppp user add pooled pooled-pw"):
        out = e.run(cmd)
        c.check("error" not in out.lower(), cmd, out)
    sh(*ns("ip", "route", "add", fixed + "/32", "via", KADDR), check=True)
    base = n_keys("egw_route4")
    routed(c, fixed, 0, "before its session: UDP to %s stays with the kernel" % fixed)
    p, line = sessions("fixed", "pooled")
    lines = [line(30), line(30)]
    c.check(len(lines) == 2 and lines[0].startswith("BOUND fixed " + fixed) and
            lines[1].startswith("BOUND pooled 100.66.0."),
            "two sessions bound over the veth: fixed %s, pooled from 100.66.0.0/24" % fixed,
            repr(lines))
    c.eq(n_keys("egw_route4") - base, 1, "egw_route4 holds the fixed address's /32 and "
         "nothing for the pooled one (bpftool)")
    routed(c, fixed, 20, "during the session: UDP to its fixed address steered to edgegw")
    try:
        p.stdin.write("\n")
        p.stdin.flush()
    except OSError:
        pass
    out = line(10)
    c.check(out == "PADT", "both sessions ended by PADT", out)
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        p.kill()
    c.check(egwtest.wait_for(lambda: n_keys("egw_route4") == base, 5),
            "the /32 left egw_route4 with its session (bpftool)")
    routed(c, fixed, 0, "after the session: UDP to %s back to the kernel" % fixed)

    # egw_route4 full: the session is refused, not bound unsteered
    n = 65536 - (n_keys("egw_route4") or 0)
    keys = [lpm_key(bytes([10, 200 + (i >> 16), (i >> 8) & 255, i & 255]), 32)
            for i in range(n)]
    fill("egw_route4", keys)
    c.eq(n_keys("egw_route4"), 65536, "egw_route4 filled behind edgegw's back (bpftool)")
    bf0 = pt.counters_from_text(e.run("show pppoe stats")).get("bind_fail", 0)
    p, line = sessions("fixed")
    line(30)  # IPCP opens on the client's side, then edgegw closes it
    c.check(egwtest.wait_for(lambda: pt.counters_from_text(e.run("show pppoe stats")).get(
        "bind_fail", 0) == bf0 + 1, 5), "fixed: IPCP closed as bind_fail while egw_route4 "
        "is full")
    rows = pt.sessions_from_text(e.run("show pppoe sessions"))
    c.check(not any(len(r) > 5 and r[5] == "fixed" and r[4] == "bound" for r in rows),
            "fixed: not bound", repr(rows))
    c.check(egwtest.wait_for(lambda: "PPPoE session" in e.e.stderr() and
                             "egw_route4" in e.e.stderr() and "not bound" in e.e.stderr(), 5),
            "edgegw says why: the map named", e.e.stderr()[-300:])
    p.kill()
    p.wait()
    unfill("egw_route4", keys)
    out = e.run("show ip route 10.80.0.7")
    c.check("subscriber" not in out, "no subscriber route left by the refused session", out)
    sh(*ns("ip", "route", "del", fixed + "/32"))
    for u in ("fixed", "pooled"):
        e.run("ppp user del " + u)


def full_maps(c, e):
    """Fill each map behind edgegw's back; the next command that needs room fails, names
    the map and changes nothing (the same command succeeds once there is room)."""
    # a tunnel address
    keys = [["0a", "c9", "%02x" % (i >> 8), "%02x" % (i & 255)] for i in range(1024)]
    fill("egw_esp4", keys)
    sa = ("esp sa add 0x7003 in aead aes-128-gcm key %s mode tunnel src %s dst 10.78.0.51" %
          (KEY, PADDR))
    out = run2(e, sa)
    c.check("egw_esp4" in out and "full" in out and "not added" in out,
            "esp sa add into a full egw_esp4 fails naming it", out)
    out = e.run("show esp sa")
    c.check("00007003" not in out, "the SA is not edgegw's after the failure", out)
    unfill("egw_esp4", keys)

    # an SA's NAT-T port: the tunnel address and the port, both or neither
    keys = [["04", "00", "%02x" % (0x20 + (i >> 8)), "%02x" % (i & 255), "0a", "ca", "00", "01"]
            + ["00"] * 12 for i in range(1024)]
    fill("egw_natt", keys)
    out = run2(e, sa + " natt dport 4502")
    c.check("egw_natt" in out and "full" in out and "not added" in out,
            "esp sa add with natt dport into a full egw_natt fails naming it", out)
    c.eq(esp4_keys(), [], "egw_esp4 without the tunnel address of the refused SA")
    out = e.run("show esp sa")
    c.check("00007003" not in out, "nor is the SA", out)
    unfill("egw_natt", keys)
    out = run2(e, sa)
    c.check("added" in out and "error" not in out, "the same SA added once there is room", out)
    e.run("esp sa del 0x7003 in")

    # a route: egw_route6 (16,384 prefixes) filled
    keys = [lpm_key([0x20, 0x01, 0x0d, 0xb8, 0x77, i >> 8, i & 255] + [0] * 9, 128)
            for i in range(16384)]
    fill("egw_route6", keys)
    c.eq(n_keys("egw_route6"), 16384, "egw_route6 filled by bpftool")
    out = run2(e, "ip route add 2001:db8:79::/48 blackhole")
    c.check("egw_route6" in out and "full" in out and "not added" in out,
            "ip route add into a full egw_route6 fails naming it", out)
    out = e.run("show ip route 2001:db8:79::/48")
    c.check("blackhole" not in out, "the route is not edgegw's after the failure", out)
    load = c.path("routes-full.txt")
    with open(load, "w") as f:
        f.write("10.94.0.0/16 blackhole\n2001:db8:79::/48 blackhole\n")
    out = run2(e, "ip route load " + load)
    c.check("egw_route6" in out and "no route of the file was added" in out,
            "ip route load into a full egw_route6 fails whole", out)
    c.eq(n_keys("egw_route4"), 0, "egw_route4 without the file's IPv4 route")
    out = e.run("show ip route 10.94.0.0/16")
    c.check("blackhole" not in out, "nor lib/ip's table", out)
    unfill("egw_route6", keys)
    out = run2(e, "ip route add 2001:db8:79::/48 blackhole")
    c.check("added" in out and "error" not in out, "the same route added once there is room",
            out)
    e.run("ip route del 2001:db8:79::/48")

    # a pool
    keys = [lpm_key([10, 0xcb, i >> 8, i & 255], 32)
            for i in range(1024 - (n_keys("egw_pool4") or 0))]
    fill("egw_pool4", keys)
    out = run2(e, "pppoe pool add 100.67.0.0/24")
    c.check("egw_pool4" in out and "full" in out and "not added" in out,
            "pppoe pool add into a full egw_pool4 fails naming it", out)
    unfill("egw_pool4", keys)
    out = run2(e, "pppoe pool add 100.67.0.0/24")
    c.check("added" in out and "error" not in out,
            "the same pool added once there is room (no half-added pool or route left)", out)
    e.run("pppoe pool del 100.67.0.0/24")


def telemetry(c, e):
    path = egwtest.telemetry_path(NAME)
    if not c.check(os.path.exists(path), "telemetry socket %s" % path):
        return
    tel = egwtest.Tel(path)
    try:
        r = tel.query("/").get("/") or []
        c.check("/edgegw/xdp" in r, "/edgegw/xdp is listed", str(r)[:300])
        before = classes()
        t = tel.query("/edgegw/xdp").get("/edgegw/xdp") or {}
        after = classes()
        p0 = t.get("port0") or {}
        out = e.run("show xdp")
        m = re.search(r"program egw_xdp_steer id (\d+)", out)
        c.check(p0.get("ifname") == IF and p0.get("mode") == "native" and m is not None and
                p0.get("prog_id") == int(m.group(1)),
                "/edgegw/xdp port0: interface, mode and program id as show xdp", str(p0)[:400])
        for k in ("pppoe_disc", "esp", "route"):
            c.check(before[k] <= p0.get(k + "_packets", -1) <= after[k],
                    "/edgegw/xdp %s_packets as bpftool reads egw_stats" % k,
                    "%s %s %s" % (before[k], p0.get(k + "_packets"), after[k]))
        c.check(all(k + "_packets" in p0 and k + "_bytes" in p0 for k in CLASSES) and
                "egw_route4_entries" in p0 and "egw_kern4_entries" in p0,
                "/edgegw/xdp: every class and map", str(sorted(p0))[:400])
        c.check(p0.get("egw_kern4_entries", 0) >= 1,
                "/edgegw/xdp: the kernel's addresses are in egw_kern4", str(p0)[:200])
    finally:
        tel.close()


def own_addresses(c, e, mac):
    """Port 0 made an uplink (addresses are on routed ports). A full egw_own4: `ip
    address add` fails and changes nothing. Then 10.78.5.1 on VLAN 100 of port 0:
    tagged 100 is edgegw's, untagged and VLAN 200 the kernel's."""
    for cmd in ("stop", "port role 0 uplink", "start"):
        e.run(cmd)
    keys = [["00", "00", "00", "00", "0a", "c8", "%02x" % (i >> 8), "%02x" % (i & 255)]
            for i in range(1024 - (n_keys("egw_own4") or 0))]
    fill("egw_own4", keys)
    c.eq(n_keys("egw_own4"), 1024, "egw_own4 filled to 1024 by bpftool")
    out = run2(e, "ip address add 10.78.6.1/24 port 0")
    c.check("egw_own4" in out and "full" in out and "not added" in out,
            "ip address add into a full egw_own4 fails naming it", out)
    out = e.run("show ip address")
    c.check("10.78.6.1" not in out, "the address is not edgegw's after the failure", out)
    unfill("egw_own4", keys)
    out = run2(e, "ip address add 10.78.6.1/24 port 0")
    c.check("added" in out and "error" not in out, "the same address added once there is room",
            out)
    e.run("ip address del 10.78.6.1/24 port 0")

    out = run2(e, "ip address add %s/24 port 0 vlan 100" % VADDR)
    c.check("added" in out and "error" not in out, "ip address add %s/24 port 0 vlan 100" %
            VADDR, out)
    for vid, want, what in ((100, "own", "tagged 100: edgegw's"),
                            (0, "kernel", "untagged: the kernel's"),
                            (200, "kernel", "tagged 200: the kernel's")):
        b0 = classes()
        c.check(send_tagged(mac, VADDR, vid, 10), "10 frames to %s sent %s" % (VADDR, what))
        time.sleep(0.3)
        b1 = classes()
        d = {k: b1[k] - b0[k] for k in ("own", "kernel")}
        c.check(d[want] >= 10 and (want == "kernel" or d["kernel"] < 10) and
                (want == "own" or d["own"] == 0),
                "frames to the VLAN 100 address %s" % what, str(d))
    e.run("ip address del %s/24 port 0 vlan 100" % VADDR)


def main():
    binary, obj = sys.argv[1], sys.argv[2]
    c = egwtest.Checker(NAME)
    if os.geteuid() != 0:
        c.skip("needs root (BPF, AF_XDP, namespaces)")
    for tool in ("pppoe", "iperf3", "bpftool", "nsenter"):
        if shutil.which(tool) is None and not os.path.exists("/usr/sbin/" + tool):
            c.skip("%s is not installed (scripts/test installs it)" % tool)
    try:
        socket.socket(AF_XDP, socket.SOCK_RAW, 0).close()
    except OSError as e:
        c.skip("no AF_XDP sockets: %s" % e)
    if not os.path.ismount("/sys/fs/bpf"):
        rc, out = sh("mount", "-t", "bpf", "bpf", "/sys/fs/bpf")
        if rc != 0:
            c.skip("/sys/fs/bpf is not mounted and cannot be: %s" % out.strip())

    e = None
    iperf = None
    try:
        cleanup()
        sh("ip", "netns", "add", NS, check=True)
        sh("ip", "link", "add", IF, "type", "veth", "peer", "name", PEER, check=True)
        sh("ip", "link", "set", PEER, "netns", NS, check=True)
        sh("ip", "addr", "add", KADDR + "/24", "dev", IF, check=True)
        sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % IF)
        sh("ip", "link", "set", IF, "up", check=True)
        sh(*ns("ip", "addr", "add", PADDR + "/24", "dev", PEER), check=True)
        sh(*ns("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % PEER))
        sh(*ns("ip", "link", "set", "lo", "up"), check=True)
        sh(*ns("ip", "link", "set", PEER, "up"), check=True)
        # the tunnel address is nobody's: the namespace sends to the veth's MAC
        mac = open("/sys/class/net/%s/address" % IF).read().strip()
        sh(*ns("ip", "neigh", "add", TUN, "lladdr", mac, "dev", PEER), check=True)
        # 10.79.0.0/24 is behind the veth for the namespace (edgegw routes it)
        sh(*ns("ip", "route", "add", RNET + ".0/24", "via", KADDR), check=True)
        c.check(sh(*ns("ping", "-c", "1", "-W", "2", KADDR))[0] == 0,
                "ping to the kernel's %s before edgegw" % KADDR)

        setup = ["set fwd gateway xconnect", "port role 0 access", "port role 1 uplink",
                 "pppoe ac-name " + AC_NAME, "pppoe pool add 100.66.0.0/24", "start"]
        e = pt.Edgegw(c, "edgegw", binary,
                      egwtest.eal_args(NAME) +
                      ["--vdev", "net_af_xdp0,iface=%s,xdp_prog=%s" % (IF, obj),
                       "--vdev", "net_null1"],
                      setup, extra_app=["--mbufs", "8192"])
        up = egwtest.wait_for(lambda: not e.alive() or
                              "forwarding started" in e.stdout().lower(), 30)
        if not c.check(up and e.alive(), "edgegw started on net_af_xdp (%s) with %s" %
                       (IF, os.path.basename(obj))):
            egwtest.show_output(e.stdout(), e.e.stderr())
            raise RuntimeError("edgegw did not start")
        c.check("XDP steering program attached" in e.stdout(), "edgegw took over the program",
                e.stdout()[-500:])
        out = e.run("show xdp")
        c.check(re.search(r"program egw_xdp_steer id \d+, native \(driver\) mode", out) is not
                None, "show xdp: the program id, native mode on veth", out)
        c.check("access port" in out, "show xdp: port 0 is an access port", out)
        c.check(os.path.exists("/sys/fs/bpf/edgegw/%s/egw_stats" % IF),
                "maps pinned under /sys/fs/bpf/edgegw/%s" % IF)
        base = classes()
        c.check(base is not None, "bpftool map dump of the pinned egw_stats")

        # PPPoE discovery: answered by edgegw
        rc, out = sh(*ns("pppoe", "-A", "-I", PEER, "-t", "3"))
        c.check(rc == 0 and ("Access-Concentrator: " + AC_NAME) in out,
                "pppoe -A: a PADO from edgegw (AC-Name %s)" % AC_NAME, out)

        # the kernel's own traffic on the same veth
        rc, out = sh(*ns("ping", "-c", "20", "-i", "0.05", "-W", "2", KADDR))
        m = re.search(r"(\d+) received", out)
        c.check(rc == 0 and m is not None and int(m.group(1)) == 20,
                "20 pings to the kernel's %s answered with edgegw on the veth" % KADDR, out)
        iperf = subprocess.Popen(["iperf3", "-s", "-1", "-B", KADDR, "-p", "5299"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        rc, out = sh(*ns("iperf3", "-c", KADDR, "-p", "5299", "-t", "2", "-J"))
        sent = 0
        try:
            sent = json.loads(out)["end"]["sum_sent"]["bytes"]
        except (ValueError, KeyError):
            pass
        c.check(rc == 0 and sent > 1000000, "iperf3 TCP to the kernel's %s: %d bytes" %
                (KADDR, sent), out[-300:])
        mid = classes()
        if base and mid:
            c.check(mid["kernel"] - base["kernel"] >= 20 + 100,
                    "the program passed the pings and TCP to the kernel",
                    "%d frames" % (mid["kernel"] - base["kernel"]))
            c.check(mid["pppoe_disc"] - base["pppoe_disc"] >= 1,
                    "the program steered the PADI to edgegw")

        # ESP to the tunnel address: the kernel's until an SA names it
        c.check(send_esp(10), "ESP sent before the SA")
        time.sleep(0.3)
        b1 = classes()
        c.eq(b1["esp"] - mid["esp"], 0, "no ESP steered before the SA")
        c.check(b1["kernel"] - mid["kernel"] >= 20, "ESP went to the kernel before the SA")
        out = e.run("esp sa add 0x%x in aead aes-128-gcm key %s mode tunnel src %s dst %s" %
                    (SPI, KEY, PADDR, TUN))
        c.check("error" not in out and "added" in out, "inbound tunnel SA added at run time",
                out)
        c.eq(esp4_keys(), [TUN], "egw_esp4 holds the tunnel address (bpftool)")
        c.check(send_esp(10), "ESP sent with the SA")
        time.sleep(0.3)
        b2 = classes()
        c.eq(b2["esp"] - b1["esp"], 20, "10 ESP in UDP and 10 ESP steered to edgegw")
        out = e.run("esp sa del 0x%x in" % SPI)
        c.check("deleted" in out, "SA deleted", out)
        c.eq(esp4_keys(), [], "egw_esp4 empty again (bpftool)")
        c.check(send_esp(10), "ESP sent after the SA")
        time.sleep(0.3)
        b3 = classes()
        c.eq(b3["esp"] - b2["esp"], 0, "no ESP steered after the SA's deletion")
        c.check(b3["kernel"] - b2["kernel"] >= 20, "ESP back to the kernel")
        out = e.run("show xdp")
        c.check(re.search(r"esp\s+%d\s" % b3["esp"], out) is not None,
                "show xdp counts the %d ESP frames" % b3["esp"], out)

        natt_steering(c, e)
        route_steering(c, e)
        session_steering(c, e)
        full_maps(c, e)
        telemetry(c, e)
        own_addresses(c, e, mac)
        final = classes()
        e.stop()
        js = egwtest.load_json(c, e.js)
        if js:
            p0 = egwtest.port_by_id(js, 0)
            steered = sum(final[k] for k in STEERED) - final["no_xsk"]
            c.check(p0 is not None and p0["ethdev"]["ipackets"] <= steered and
                    p0["ethdev"]["ipackets"] >= steered - 2,
                    "edgegw received only what the program steered (never the pings, TCP or "
                    "ESP without SA)", "ipackets %s, steered %d" %
                    (p0 and p0["ethdev"]["ipackets"], steered))
            x = js.get("xdp", [])
            c.check(len(x) == 1 and x[0]["ifname"] == IF and x[0]["mode"] == "native",
                    "--stats-json: xdp section for %s" % IF, str(x)[:300])
            if len(x) == 1:
                c.check(sorted(x[0]["classes"]) == sorted(CLASSES) and
                        "egw_route4" in x[0].get("maps", {}),
                        "--stats-json: xdp classes (route among them) and maps",
                        str(x)[:300])
        c.check(not os.path.exists("/sys/fs/bpf/edgegw/" + IF), "pins removed at exit")
        rc, out = sh("ip", "link", "show", IF)
        c.check(rc == 0 and "prog/xdp" not in out, "the program detached at exit", out)
    except RuntimeError as ex:
        c.check(False, "set-up", str(ex))
    finally:
        if iperf is not None and iperf.poll() is None:
            iperf.kill()
        if e is not None and e.alive():
            e.stop()
        cleanup()
    c.check(not os.path.exists("/run/netns/" + NS) and
            not os.path.exists("/sys/class/net/" + IF), "namespace and veth removed")
    c.finish()


if __name__ == "__main__":
    main()
