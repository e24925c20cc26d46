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
    once the SA is deleted. The maps are read independently with
    `bpftool map dump pinned /sys/fs/bpf/edgegw/<if>/...`.
Interfaces and the namespace have unique names starting with xdp and are
removed at the end, with the pins and the program.

Skips (77) without root, AF_XDP, rp-pppoe's pppoe, iperf3 or bpftool.

usage: test_afxdp.py EDGEGW BPF_OBJECT
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
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
STEERED = ("pppoe_disc", "pppoe_sess", "esp", "own", "pool", "rxtok")


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
    names = ["kernel", "malformed", "pppoe_disc", "pppoe_sess", "esp", "own", "pool",
             "rxtok", "no_xsk"]
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
dst, n = sys.argv[1], int(sys.argv[2])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("0.0.0.0", 4500))
r = socket.socket(socket.AF_INET, socket.SOCK_RAW, 50)
for i in range(n):
    esp = struct.pack("!II", 0x7001, i + 1) + bytes(32)
    u.sendto(esp, (dst, 4500))
    r.sendto(esp, (dst, 0))
"""


def send_esp(n):
    """n ESP-in-UDP and n ESP packets from the namespace to the tunnel address."""
    rc, out = sh(*ns(sys.executable, "-c", SEND_ESP, TUN, str(n)))
    return rc == 0


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
        final = b3
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
