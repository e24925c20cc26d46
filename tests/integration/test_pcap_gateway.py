# SPDX-License-Identifier: BSD-3-Clause
"""pcap_gateway: the gateway engine on two net_pcap ports (0 access, 1 uplink).

The access input is crafted so that the fate of every frame is known: plain
IP on the access port never leaves (only PPPoE sessions enter there), it
drops as access_not_session, tagged or not; unicast to
another MAC drops as otherhost; truncated frames and lying 802.3 lengths drop
as bad_frame; LLC, raw 802.3, too many VLAN tags and unknown ethertypes drop
as unhandled; PPPoE and ARP are queued to the control path (lib/pppoe and
lib/ip take them), which counts them by class.

usage: test_pcap_gateway.py EDGEGW
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402

from scapy.all import (ARP, IP, TCP, UDP, Dot1Q, Dot3, Ether, IPv6, LLC,  # noqa: E402
                       PPP, PPPoE, PPPoED, Raw)

PEER = "02:00:00:00:aa:01"
OTHER = "02:00:00:00:99:99"
BCAST = "ff:ff:ff:ff:ff:ff"


def port_macs(c, binary):
    """Port MACs as edgegw reports them ('show config' in a command file)."""
    cmd = c.path("probe.cmd")
    empty = c.path("empty.pcap")
    egwtest.write_pcap(empty, [])
    with open(cmd, "w") as f:
        f.write("show config\nquit\n")
    rc, so, se = egwtest.run_edgegw(
        binary, egwtest.eal_args("pcap_gateway") +
        ["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (empty, c.path("probe0.pcap")),
         "--vdev", "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (empty, c.path("probe1.pcap"))],
        ["--cmdline-file", cmd], timeout=60)
    macs = dict((int(p), m) for p, m in re.findall(r"port (\d+): \S+ \(net_pcap\) mac (\S+)", so))
    if not c.check(rc == 0 and 0 in macs and 1 in macs, "show config names both port MACs",
                   str(macs)):
        egwtest.show_output(so, se)
        c.finish()
    return macs


def craft(mac0):
    """(frame bytes, expected fate) in input order."""
    ip4 = lambda n: (Ether(src=PEER, dst=mac0) / IP(src="10.0.0.%d" % n, dst="192.0.2.1") /
                     UDP(sport=1000 + n, dport=53) / Raw(b"v4-%d" % n))
    ip6 = lambda n: (Ether(src=PEER, dst=mac0) / IPv6(src="2001:db8::%d" % n, dst="2001:db8:1::1") /
                     TCP(sport=2000 + n, dport=443, flags="S"))
    eth_hdr = lambda dst, t: (bytes.fromhex(dst.replace(":", "")) +
                              bytes.fromhex(PEER.replace(":", "")) + t.to_bytes(2, "big"))
    f = [
        (ip4(1), "access_not_session"),
        (Ether(src=PEER, dst=BCAST) / PPPoED(code=0x09) / Raw(bytes.fromhex("01010000")),
         "ctrl:pppoe-discovery"),
        (ip6(1), "access_not_session"),
        (Ether(src=PEER, dst=OTHER) / IP(dst="192.0.2.9") / UDP() / Raw(b"other"), "otherhost"),
        (bytes(range(10)), "bad_frame"),                      # 10 bytes: no Ethernet header
        (Ether(src=PEER, dst=BCAST) / ARP(op=1, hwsrc=PEER, psrc="10.0.0.1", pdst="10.0.0.254"),
         "ctrl:arp"),
        # 802.3 frame whose length field says 100 but carries 20 bytes
        (eth_hdr(mac0, 100) + b"\x42\x42\x03" + b"\x00" * 17, "bad_frame"),
        (Dot3(src=PEER, dst=mac0) / LLC(dsap=0x42, ssap=0x42, ctrl=3) / Raw(b"\x00" * 35),
         "unhandled"),
        (ip4(2), "access_not_session"),
        (Ether(src=PEER, dst=mac0, type=0x88b5) / Raw(b"local experimental ethertype"),
         "unhandled"),
        (Ether(src=PEER, dst=OTHER) / ARP(op=2, hwsrc=PEER, psrc="10.0.0.1", pdst="10.0.0.2"),
         "otherhost"),
        (Ether(src=PEER, dst=mac0) / Dot1Q(vlan=7) / IP(src="10.7.0.1", dst="192.0.2.7") /
         UDP(sport=7, dport=7) / Raw(b"tagged"), "access_not_session"),
        (eth_hdr(mac0, 0x8100) + b"\x00", "bad_frame"),         # VLAN tag cut short
        (Dot3(src=PEER, dst="01:80:c2:00:00:00") / LLC(dsap=0x42, ssap=0x42, ctrl=3) /
         Raw(b"\x00" * 35), "unhandled"),                        # STP: LLC to a group address
        (ip6(2), "access_not_session"),
        # port 0 is a PPPoE access port: a session frame of no session
        (Ether(src=PEER, dst=mac0) / PPPoE(sessionid=0x11) / PPP(proto=0x0021) /
         IP(src="100.64.0.2", dst="192.0.2.1") / UDP() / Raw(b"sess"), "pppoe_unknown_session"),
        (eth_hdr(mac0, 1) + b"\xff\xff" + b"\x00" * 44, "bad_frame"),  # length 1 < 2
        (eth_hdr(mac0, 40) + b"\xff\xff" + b"\x00" * 38, "unhandled"),  # raw 802.3 (IPX)
        (Ether(src=PEER, dst=mac0) / Dot1Q(vlan=1, type=0x8100) / Dot1Q(vlan=2, type=0x8100) /
         Dot1Q(vlan=3) / IP() / Raw(b"deep"), "unhandled"),      # three tags
        (Ether(src=PEER, dst=BCAST) / PPPoED(code=0x09) / Raw(bytes.fromhex("01010000")),
         "ctrl:pppoe-discovery"),
        (Ether(src=PEER, dst=OTHER) / PPPoE(sessionid=0x12) / PPP(proto=0x0021) / IP() /
         Raw(b"x"), "otherhost"),
        (ip4(3), "access_not_session"),
        (Ether(src=PEER, dst=BCAST) / ARP(op=1, hwsrc=PEER, psrc="10.0.0.3", pdst="10.0.0.254"),
         "ctrl:arp"),
        (Ether(src=PEER, dst=mac0) / IPv6(src="2001:db8::3", dst="2001:db8:1::1") /
         UDP(sport=3, dport=3) / Raw(b"x" * 1400), "access_not_session"),
    ]
    return [(bytes(p), fate) for p, fate in f]


def run_once(c, binary, frames, fates, ctrl_classes, n_ctrl, fwd, inp, empty, mac0, tag, extra):
    cmd = c.path("gw%s.cmd" % tag)
    with open(cmd, "w") as f:
        f.write("# gateway between port 0 (access) and port 1 (uplink)\n"
                "set fwd gateway xconnect\nport role 0 access\nport role 1 uplink\n")
    js = c.path("s%s.json" % tag)
    rc, so, se = egwtest.run_edgegw(
        binary, egwtest.eal_args("pcap_gateway") +
        ["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, c.path("access_out%s.pcap" % tag)),
         "--vdev", "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (empty, c.path("uplink_out%s.pcap" % tag))],
        ["--cmdline-file", cmd, "--idle-exit", "500", "--stats-json", js] + extra, timeout=60)
    if not c.eq(rc, 0, "edgegw exit status"):
        egwtest.show_output(so, se)
        return

    s = egwtest.load_json(c, js)
    if s is None:
        return
    c.eq(s["engine"], "gateway", "JSON engine")
    egwtest.check_identity(c, s)
    p0, p1 = egwtest.port_by_id(s, 0), egwtest.port_by_id(s, 1)
    c.eq(p0["role"], "access", "port 0 role")
    c.eq(p1["role"], "uplink", "port 1 role")
    c.eq(p0["rx"], len(frames), "port 0 rx = input frames")
    c.eq(p0["tx"], len(fwd), "port 0 tx (forwarded to the uplink)")
    c.eq(p0["queued"], n_ctrl, "port 0 queued (to the control path)")
    c.eq(p0["delivered"], 0, "port 0 delivered")
    for reason in p0["drops"]:
        c.eq(p0["drops"][reason], fates.get(reason, 0), "port 0 drop %s" % reason)
    c.eq(p1["rx"], 0, "port 1 rx")
    c.eq(p1["tx_out"], len(fwd), "port 1 tx_out (frames sent on the uplink)")
    c.eq(p0["tx_out"], 0, "port 0 tx_out (nothing comes back to access)")
    c.eq(p1["ethdev"]["opackets"], len(fwd), "port 1 ethdev opackets")

    ctl = s["control"]
    c.eq(ctl["rx"], n_ctrl, "control rx")
    for cls, n in ctl["by_class"].items():
        c.eq(n, ctrl_classes.get(cls, 0), "control by_class %s" % cls)
    # ARP goes to lib/ip (no address here: none is for edgegw), PPPoE
    # discovery to lib/pppoe: no control drop
    for reason, n in ctl["drops"].items():
        c.eq(n, 0, "control drop %s" % reason)
    c.eq(s["ip"]["control"]["arp_rx"], ctrl_classes.get("arp", 0),
         "lib/ip received every ARP frame")

    out = egwtest.pcap_frames(c.path("uplink_out%s.pcap" % tag))
    egwtest.same_frame_set(c, out, fwd,
                           "uplink_out.pcap holds exactly the forwarded frames, unchanged")
    # Per class (IPv4, IPv6) the order must be kept. Across classes it may
    # not be: the engine stages each class of a burst as one batch.
    for is_cls, name in ((lambda b: IP in Ether(b) and IPv6 not in Ether(b), "IPv4"),
                         (lambda b: IPv6 in Ether(b), "IPv6")):
        g, w = [b for b in out if is_cls(b)], [b for b in fwd if is_cls(b)]
        c.check(g == w, "uplink_out.pcap keeps the order of the %s frames" % name,
                "%d frames" % len(w))
    print("  note: uplink order %s the input order across classes" %
          ("keeps" if out == fwd else "differs from"))
    # the access concentrator answers each PADI with a PADO from the port's
    # MAC (control-path frames: not in tx_out)
    back = [Ether(b) for b in egwtest.pcap_frames(c.path("access_out%s.pcap" % tag))]
    n_padi = ctrl_classes.get("pppoe-discovery", 0)
    c.eq(len(back), n_padi, "access_out.pcap holds one PADO per PADI")
    for e in back:
        c.check(e.type == 0x8863 and bytes(e.payload)[1] == 0x07 and
                e.src == mac0 and e.dst == PEER,
                "PADO from port 0 to the client", e.summary())


def main():
    binary = sys.argv[1]
    c = egwtest.Checker("pcap_gateway")
    macs = port_macs(c, binary)
    mac0 = macs[0]
    print("  port 0 MAC %s, port 1 MAC %s" % (mac0, macs[1]))

    frames = craft(mac0)
    inp = c.path("access_in.pcap")
    empty = c.path("empty.pcap")
    egwtest.write_pcap(inp, [b for b, _ in frames])
    c.check(egwtest.pcap_frames(inp) == [b for b, _ in frames],
            "access_in.pcap holds the crafted bytes", egwtest.frames_summary(frames))

    fates = {}
    for _, fate in frames:
        fates[fate] = fates.get(fate, 0) + 1
    print("  expected fates: %s" % fates)
    ctrl_classes = {k.split(":", 1)[1]: v for k, v in fates.items() if k.startswith("ctrl:")}
    n_ctrl = sum(ctrl_classes.values())
    fwd = [b for b, fate in frames if fate == "fwd"]

    # as edgegw runs by default (each burst held a poll while its FIB
    # lines load), and with --no-rx-hold (each burst at once): the same
    # verdicts either way
    for tag, extra in (("", []), ("-nohold", ["--no-rx-hold"])):
        print("  run%s: %s" % (tag, " ".join(extra) or "default options"))
        run_once(c, binary, frames, fates, ctrl_classes, n_ctrl, fwd, inp, empty, mac0, tag,
                 extra)
    c.finish()


if __name__ == "__main__":
    main()
