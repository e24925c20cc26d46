# SPDX-License-Identifier: BSD-3-Clause
"""pdump: dpdk-dumpcap, a DPDK secondary process, captures an edgegw port.

edgegw (hugepages, its own --file-prefix: a multi-process primary) forwards
io between two taps and has called rte_pdump_init(). dpdk-dumpcap attaches
to port net_tap0 with a capture filter for the test's UDP port, frames are
sent on the kernel side of the tap, and the capture file must hold exactly
those frames, byte for byte. Skips (77) without dpdk-dumpcap (Debian
package dpdk-dev), /dev/net/tun, root or free hugepages.

usage: test_pdump.py EDGEGW
"""
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402

IF0, IF1 = "egwp0", "egwp1"
PREFIX = "egwtest_pdump"
N = 12
DPORT = 47123


def free_hugepages():
    try:
        with open("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages") as f:
            return int(f.read())
    except OSError:
        return 0


def main():
    binary = sys.argv[1]
    c = egwtest.Checker("pdump")
    dumpcap = shutil.which("dpdk-dumpcap")
    if dumpcap is None:
        c.skip("dpdk-dumpcap not installed (apt-get install dpdk-dev)")
    if not os.path.exists("/dev/net/tun") or os.geteuid() != 0:
        c.skip("net_tap needs /dev/net/tun and root")
    if free_hugepages() < 128:
        c.skip("fewer than 128 free 2 MiB hugepages: a pdump primary needs shared memory")

    from scapy.all import IP, UDP, Ether, Raw, rdpcap
    want = [bytes(Ether(src="02:00:00:dd:00:01", dst="02:00:00:dd:00:02") /
                  IP(src="10.7.0.1", dst="10.7.0.2") / UDP(sport=1000 + i, dport=DPORT) /
                  Raw(b"egw-pdump-%03d-" % i + bytes(range(i * 7 % 200))))
            for i in range(N)]
    js = c.path("s.json")
    out = c.path("cap.pcapng")
    # no --huge-unlink: the secondary maps the primary's hugepage files.
    # --base-virtaddr: the secondary must reserve the primary's virtual
    # addresses; left to mmap, the primary's (an ASan build's especially) can
    # land where dpdk-dumpcap's libraries already are ("Cannot get a virtual
    # area at requested address"). 0x200000000000 is above ASan's shadow and
    # far below where mmap places libraries.
    eal = ["-l", "0,1", "--no-pci", "--file-prefix", PREFIX, "--base-virtaddr=0x200000000000",
           "--log-level=warning", "--vdev", "net_tap0,iface=%s" % IF0,
           "--vdev", "net_tap1,iface=%s" % IF1]
    e = egwtest.Running(c, "edgegw", binary, eal, ["--forward-mode", "io", "--stats-json", js])
    dc = None
    try:
        up = egwtest.wait_for(lambda: not e.alive() or "forwarding started" in e.stdout(), 20)
        if not c.check(up and e.alive(), "edgegw started (multi-process primary)"):
            egwtest.show_output(e.stdout(), e.stderr())
            c.finish()
        c.check("pdump not available" not in e.stderr(), "rte_pdump_init() succeeded",
                e.stderr()[-300:])
        for ifname in (IF0, IF1):
            with open("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % ifname, "w") as f:
                f.write("1\n")
            subprocess.run(["ip", "link", "set", ifname, "up"], check=False)
        dc = subprocess.Popen([dumpcap, "--file-prefix=%s" % PREFIX, "-i", "net_tap0",
                               "-f", "udp dst port %d" % DPORT, "-c", str(N), "-w", out],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        # dumpcap says "Capturing on" once it is attached
        attached = egwtest.wait_for(lambda: os.path.exists(out) and os.path.getsize(out) > 0,
                                    15)
        c.check(attached, "dpdk-dumpcap attached and opened its file")
        time.sleep(0.5)
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as tx:
            tx.bind((IF0, 0))
            for f in want:
                tx.send(f)
        try:
            dout, _ = dc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            dc.kill()
            dout, _ = dc.communicate()
        print("  dpdk-dumpcap: " + dout.decode(errors="replace").strip().replace("\n", " | "))
        c.eq(dc.returncode, 0, "dpdk-dumpcap exit status (stopped after %d frames)" % N)
    finally:
        if dc is not None and dc.poll() is None:
            dc.kill()
        rc = e.stop()
    c.eq(rc, 0, "edgegw exit status after SIGTERM")
    got = [bytes(p) for p in rdpcap(out)] if os.path.exists(out) else []
    egwtest.compare_frames(c, got, want, "captured on net_tap0 by dpdk-dumpcap")
    s = egwtest.load_json(c, js)
    if s is not None:
        egwtest.check_identity(c, s)
    c.finish()


if __name__ == "__main__":
    main()
