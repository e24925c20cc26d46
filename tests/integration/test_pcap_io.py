# SPDX-License-Identifier: BSD-3-Clause
"""pcap_io: io engine on one net_pcap port (it loops back to itself).

A scapy-made capture with a mix of frame types and sizes goes in; the output
capture must hold exactly the same frames, in order, byte for byte. The
--stats-json counters must satisfy the accounting identity on every port and
queue, and count every input frame. tshark must decode the output.

usage: test_pcap_io.py EDGEGW
"""
import subprocess
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
import egwtest  # noqa: E402

from scapy.all import (ARP, IP, TCP, UDP, Dot1Q, Dot3, Ether, IPv6, LLC,  # noqa: E402
                       PPPoE, PPPoED, PPP, Raw, SNAP, wrpcap)

SRC = "02:00:00:00:aa:01"
DST = "02:00:00:00:bb:02"


def frames():
    f = []
    f.append(Ether(src=SRC, dst=DST) / IP(src="10.0.0.1", dst="10.0.0.2") /
             UDP(sport=1000, dport=2000) / Raw(b"udp-v4"))
    f.append(Ether(src=SRC, dst=DST) / IPv6(src="2001:db8::1", dst="2001:db8::2") /
             TCP(sport=40000, dport=80, flags="S"))
    f.append(Ether(src=SRC, dst="ff:ff:ff:ff:ff:ff") /
             ARP(op=1, hwsrc=SRC, psrc="10.0.0.1", pdst="10.0.0.2"))
    f.append(Ether(src=SRC, dst=DST) / Dot1Q(vlan=100) / IP(src="10.1.0.1", dst="10.1.0.2") /
             UDP(sport=53, dport=53) / Raw(b"vlan"))
    # QinQ: 802.1ad outer tag (0x88a8), 802.1Q inner tag
    f.append(Ether(src=SRC, dst=DST, type=0x88a8) / Dot1Q(vlan=10, type=0x8100) /
             Dot1Q(vlan=20) / IP(src="10.2.0.1", dst="10.2.0.2") / UDP() / Raw(b"qinq"))
    # PPPoE discovery (PADI) and a PPPoE session frame carrying IPv4
    f.append(Ether(src=SRC, dst="ff:ff:ff:ff:ff:ff") / PPPoED(code=0x09, sessionid=0) /
             Raw(bytes.fromhex("01010000")))
    f.append(Ether(src=SRC, dst=DST) / PPPoE(sessionid=0x1234) / PPP(proto=0x0021) /
             IP(src="100.64.0.1", dst="8.8.8.8") / UDP(sport=5000, dport=53) / Raw(b"pppoe"))
    # IEEE 802.3 / 802.2 LLC (STP-like) and SNAP
    f.append(Dot3(src=SRC, dst="01:80:c2:00:00:00") / LLC(dsap=0x42, ssap=0x42, ctrl=3) /
             Raw(b"\x00" * 35))
    f.append(Dot3(src=SRC, dst=DST) / LLC(dsap=0xaa, ssap=0xaa, ctrl=3) /
             SNAP(OUI=0, code=0x0800) / IP(src="10.3.0.1", dst="10.3.0.2") / Raw(b"snap"))
    # sizes: minimum, odd, 1514 (max standard frame without FCS), a jumbo
    for size in (60, 64, 127, 128, 1000, 1513, 1514, 9014):
        base = Ether(src=SRC, dst=DST) / IP(src="10.9.0.1", dst="10.9.0.2") / UDP(
            sport=size, dport=9)
        pad = size - len(base)
        f.append(base / Raw(bytes((i * 7 + size) & 0xff for i in range(pad))))
    return f


def main():
    binary = sys.argv[1]
    c = egwtest.Checker("pcap_io")
    inp, out, js = c.path("in.pcap"), c.path("out.pcap"), c.path("s.json")
    pkts = frames()
    wrpcap(inp, pkts)
    want = [bytes(p) for p in pkts]
    print("  input: %d frames, sizes %s" % (len(want), sorted({len(w) for w in want})))
    c.check(1514 in {len(w) for w in want}, "input holds a 1514-byte frame")

    rc, so, se = egwtest.run_edgegw(
        binary, egwtest.eal_args("pcap_io") +
        ["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, out)],
        ["--idle-exit", "500", "--stats-json", js], timeout=60)
    if not c.eq(rc, 0, "edgegw exit status"):
        egwtest.show_output(so, se)
        c.finish()

    got = egwtest.pcap_frames(out)
    egwtest.compare_frames(c, got, want, "out.pcap vs in.pcap")

    s = egwtest.load_json(c, js)
    if s is not None:
        c.eq(s["engine"], "io", "JSON engine")
        c.eq(len(s["ports"]), 1, "JSON: one port")
        egwtest.check_identity(c, s)
        p = egwtest.port_by_id(s, 0)
        c.eq(p["rx"], len(want), "port 0 rx = number of input frames")
        c.eq(p["tx"], len(want), "port 0 tx (io loops the single port to itself)")
        c.eq(p["dropped"], 0, "port 0 dropped")
        c.eq(p["rx_bytes"], sum(len(w) for w in want), "port 0 rx_bytes")
        c.eq(p["tx_bytes"], sum(len(w) for w in want), "port 0 tx_bytes")
        c.eq(p["tx_out"], len(want), "port 0 tx_out")
        c.eq(p["ethdev"]["ipackets"], len(want), "port 0 ethdev ipackets")
        c.eq(p["ethdev"]["opackets"], len(want), "port 0 ethdev opackets")

    # tshark: an independent decoder must recognise the protocols
    t = subprocess.run(["tshark", "-r", out, "-T", "fields", "-e", "frame.protocols"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    c.eq(t.returncode, 0, "tshark reads out.pcap")
    lines = t.stdout.decode().split()
    c.eq(len(lines), len(want), "tshark: number of decoded frames")
    protos = set()
    for line in lines:
        protos.update(line.split(":"))
    for proto in ("ip", "udp", "ipv6", "tcp", "arp", "vlan", "pppoed", "pppoes", "llc"):
        c.check(proto in protos, "tshark decodes '%s' in out.pcap" % proto)
    qinq = [line for line in lines if "ieee8021ad:ethertype:vlan" in line]
    c.eq(len(qinq), 1, "tshark: one 802.1ad+802.1Q (QinQ) frame")
    c.finish()


if __name__ == "__main__":
    main()
