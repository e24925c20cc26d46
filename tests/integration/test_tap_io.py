# SPDX-License-Identifier: BSD-3-Clause
"""tap_io: io forwarding between two net_tap ports, driven by the kernel side.

edgegw creates egwt0 and egwt1. Frames sent with scapy on egwt0 enter edgegw
on port 0, leave on port 1 and must be seen on egwt1 unchanged and in order
(a sniffer started before sending keeps only frames with the test's source
MAC, so kernel chatter is ignored). After SIGTERM the --stats-json counters
must satisfy the accounting identity. Skips (77) only without /dev/net/tun.

usage: test_tap_io.py EDGEGW
"""
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402

IF0, IF1 = "egwt0", "egwt1"
MARK_SRC = "02:00:00:ee:00:01"
N = 64


def frames():
    from scapy.all import IP, UDP, Dot1Q, Ether, IPv6, Raw, TCP, ARP
    out = []
    for i in range(N):
        size = [60, 64, 128, 512, 1000, 1514][i % 6]
        if i % 8 == 3:
            base = Ether(src=MARK_SRC, dst="02:00:00:ee:00:02") / IPv6(
                src="2001:db8::1", dst="2001:db8::2") / TCP(sport=1000 + i, dport=80)
        elif i % 8 == 5:
            base = Ether(src=MARK_SRC, dst="02:00:00:ee:00:02") / Dot1Q(vlan=42) / IP(
                src="10.42.0.1", dst="10.42.0.2") / UDP(sport=1000 + i, dport=9)
        elif i % 8 == 7:
            base = Ether(src=MARK_SRC, dst="ff:ff:ff:ff:ff:ff") / ARP(
                hwsrc=MARK_SRC, psrc="10.99.0.1", pdst="10.99.0.%d" % (i + 2))
        else:
            base = Ether(src=MARK_SRC, dst="02:00:00:ee:00:02") / IP(
                src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1000 + i, dport=9)
        payload = b"egw-tap-%03d-" % i
        pad = max(0, size - len(base) - len(payload))
        out.append(bytes(base / Raw(payload + bytes(j & 0xff for j in range(pad)))))
    return out


def sh(*cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        print("  (%s: %s)" % (" ".join(cmd), r.stdout.decode().strip()))
    return r.returncode


def main():
    binary = sys.argv[1]
    c = egwtest.Checker("tap_io")
    if not os.path.exists("/dev/net/tun"):
        c.skip("/dev/net/tun is missing: no net_tap")
    if os.geteuid() != 0:
        c.skip("net_tap needs root (CAP_NET_ADMIN)")
    for ifname in (IF0, IF1):
        if os.path.exists("/sys/class/net/" + ifname):
            c.check(False, "interface %s does not exist before the test" % ifname,
                    "left over by another run?")
            c.finish()

    from scapy.all import AsyncSniffer, conf
    conf.verb = 0
    want = frames()
    js = c.path("s.json")
    e = egwtest.Running(c, "edgegw", binary,
                        egwtest.eal_args("tap_io") +
                        ["--vdev", "net_tap0,iface=%s" % IF0, "--vdev", "net_tap1,iface=%s" % IF1],
                        ["--forward-mode", "io", "--stats-json", js])
    try:
        up = egwtest.wait_for(lambda: not e.alive() or "forwarding started" in e.stdout(), 20)
        c.log("edgegw up")
        if not c.check(up and e.alive(), "edgegw started forwarding on two taps"):
            egwtest.show_output(e.stdout(), e.stderr())
            c.finish()
        # net_tap verifies IPv4 header checksums: edgegw asks for that (its
        # IP and ESP stages then take the driver's verdict)
        tel = egwtest.Tel(egwtest.telemetry_path("tap_io"))
        for pid in (0, 1):
            info = tel.query("/ethdev/info,%d" % pid).get("/ethdev/info") or {}
            rxo = info.get("rx_offloads")
            rxo = int(rxo, 16) if isinstance(rxo, str) else rxo
            c.check(isinstance(rxo, int) and rxo & 0x2 != 0,
                    "port %d: RX IPv4 checksum offload enabled" % pid,
                    "/ethdev/info rx_offloads %r" % info.get("rx_offloads"))
        tel.close()
        for ifname in (IF0, IF1):
            c.check(os.path.exists("/sys/class/net/" + ifname),
                    "kernel interface %s exists" % ifname)
            with open("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % ifname, "w") as f:
                f.write("1\n")
            sh("ip", "link", "set", ifname, "up")
        c.check(egwtest.wait_for(lambda: all(
            open("/sys/class/net/%s/operstate" % i).read().strip() in ("up", "unknown")
            for i in (IF0, IF1)), 5), "both interfaces up")

        got = []
        started = threading.Event()
        sniffer = AsyncSniffer(iface=IF1, filter="ether src %s" % MARK_SRC, store=False,
                               prn=lambda p: got.append(bytes(p)),
                               started_callback=started.set)
        sniffer.start()
        c.check(started.wait(10), "sniffer on %s started" % IF1)
        c.log("sniffer started; sending")
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as tx:
            tx.bind((IF0, 0))
            for f in want:
                tx.send(f)
        egwtest.wait_for(lambda: len(got) >= N, 10)
        c.log("%d frames sniffed" % len(got))
        time.sleep(0.3)  # anything extra (duplicates) would show up now
        sniffer.stop()
        print("  sent %d frames on %s, sniffed %d on %s" % (len(want), IF0, len(got), IF1))
        egwtest.compare_frames(c, got, want, "%s -> edgegw io -> %s" % (IF0, IF1))
    finally:
        rc = e.stop()
        c.log("edgegw stopped")
    if not c.eq(rc, 0, "edgegw exit status after SIGTERM"):
        egwtest.show_output(e.stdout(), e.stderr())
    s = egwtest.load_json(c, js)
    if s is not None:
        egwtest.check_identity(c, s)
        p0, p1 = egwtest.port_by_id(s, 0), egwtest.port_by_id(s, 1)
        # the kernel may add frames of its own; ours are at least N
        c.check(p0["rx"] >= N, "port 0 rx >= %d" % N, "rx %d" % p0["rx"])
        c.eq(p0["tx"], p0["rx"] - p0["dropped"], "port 0: every frame not dropped went out")
        c.eq(p0["dropped"], 0, "port 0 dropped")
        c.eq(p1["tx_out"], p0["tx"], "port 1 tx_out = port 0 tx (io 0 -> 1)")
        c.eq(p0["tx_out"], p1["tx"], "port 0 tx_out = port 1 tx (io 1 -> 0)")
        c.check(p1["ethdev"]["opackets"] >= N, "port 1 ethdev opackets >= %d" % N,
                str(p1["ethdev"]["opackets"]))
    c.finish()


if __name__ == "__main__":
    main()
