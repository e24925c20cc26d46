# SPDX-License-Identifier: BSD-3-Clause
"""esp_interop: edgegw's ESP against two independent peers, scapy and tshark.

One edgegw run (gateway engine, port 0 access, port 1 uplink, both net_pcap,
a fresh sequence-number state file) carries a matrix of SA pairs, one
outbound and one inbound SA per case, each with its own addresses:

  mode       transport (IPv4, IPv6, IPv6 with a hop-by-hop header) and tunnel
             (4in4, 6in6, 6in4, 4in6), each with aes-128-gcm, aes-256-gcm
             and chacha20-poly1305
  ESN        'seq 4294967290' so that the run crosses 2^32: the high word is
             in the ICV (scapy esn) and the IV is the whole 64-bit number
  NAT-T      UDP 4500 (and a NAT-mapped destination port) before ESP
  others     tunnel 'ttl', an 802.1Q-tagged flow

Outbound (access in -> uplink out): every ESP frame edgegw wrote is parsed
and decrypted with scapy's SecurityAssociation: SPI, sequence numbers 1..N in
order (seq..seq+N-1 for the ESN cases), IV = the 64-bit sequence number, ESP
header right after the outer IP header chain (after the UDP header with
NAT-T), outer header fields, same MACs, and the decrypted packet equals the
clear input byte for byte. tshark decrypts the same capture (AES-GCM SAs
without ESN: tshark 4.0 has neither ChaCha20-Poly1305 nor ESN) and must show
a correct ICV, the sequence number, the inner protocol and the same inner
bytes. Clear frames that match no policy pass unchanged: this run says
'esp policy default out|in bypass' (the default would discard them once a
direction has a policy). The transport SAs' ends are edgegw's addresses
('ip address add'): only ESP sent to one of them is edgegw's to decrypt.

Inbound (uplink in -> access out): scapy encrypts the same kind of matrix;
edgegw's access output must be the clear frames byte for byte (transport
IPv4: length and checksum as scapy builds them).

A second run sends hostile inbound traffic and checks the exact drop
counters of --stats-json, per port and per SA: unknown SPI, replay (also
inside one burst), older than the window, bad ICV (and that it does not move
the window), bad padding, truncated ESP, a clear packet matching an inbound
protect policy (esp_in_clear), outer source not the SA's peer, next header
unfit for the mode, a dummy packet (next header 59), an inner packet outside
the SA's policy, the first fragment of an ESP packet (esp_fragment), a clear
IPv6 packet no policy matches (the inbound default discards it:
esp_policy_default); an IKE message on UDP 4500 (non-ESP marker) passes in
clear through its bypass rule and ESP on UDP 4500 is decrypted. Outbound: a discard policy, a non-ESN SA
running out of sequence numbers at 2^32-1, a hard packet lifetime. The ESN
cases of the matrix also deliver 2^32-1 after 2^32 and 2^32+1 (the receiver
must infer the high word backwards across the wrap).

usage: test_esp_interop.py EDGEGW
       test_esp_interop.py --selfcheck   (no edgegw: scapy plays edgegw, to
                                          check the checks)
Exit 77 (skip) only without tshark or without python3-cryptography.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402
import esptest  # noqa: E402
from esptest import MAC0, MAC1, EspFrame, Sa  # noqa: E402

from scapy.all import (ICMP, IP, TCP, UDP, ICMPv6EchoRequest, IPv6,  # noqa: E402
                       IPv6ExtHdrHopByHop, Raw, conf, raw)

SUB_MAC = "02:00:00:00:aa:01"   # a subscriber behind the access port
PEER_MAC = "02:00:00:00:bb:01"  # the next hop behind the uplink
NAME = "esp_interop"
AEAD_LIST = ("aes-128-gcm", "aes-256-gcm", "chacha20-poly1305")
N_PKTS = 6
SIZES = (0, 1, 2, 3, 57, 333, 1000, 1201)
ESN_START = 4294967290  # 2^32 - 6: the run crosses the wrap of the low word


def mac(s):
    return bytes.fromhex(s.replace(":", ""))


def eth(dst, src, ethertype, vlan=None):
    h = mac(dst) + mac(src)
    if vlan is not None:
        h += struct.pack("!HH", 0x8100, vlan)
    return h + struct.pack("!H", ethertype)


def ethertype_of(ip):
    return 0x0800 if ip[0] >> 4 == 4 else 0x86dd


class Case:
    """One SA pair and its traffic."""

    def __init__(self, k, mode, outer, inner, aead, esn=False, natt=False, dport=None,
                 ttl=None, vlan=None, hbh=False, n=N_PKTS):
        self.k, self.mode, self.outer, self.inner, self.aead = k, mode, outer, inner, aead
        self.esn, self.natt, self.vlan, self.hbh, self.n = esn, natt, vlan, hbh, n
        tags = [mode if mode == "transport" else "tunnel%din%d" % (inner, outer), aead]
        if esn:
            tags.append("esn")
        if natt:
            tags.append("natt" + (" dport %d" % dport if dport else ""))
        if ttl:
            tags.append("ttl %d" % ttl)
        if vlan:
            tags.append("vlan %d" % vlan)
        if hbh:
            tags.append("hop-by-hop header")
        self.name = "#%d %s" % (k, " ".join(tags))
        if inner == 4:
            self.local, self.remote = "10.1.%d.2" % k, "10.2.%d.2" % k
            self.lpfx, self.rpfx = "10.1.%d.0/24" % k, "10.2.%d.0/24" % k
        else:
            self.local, self.remote = "2001:db8:1:%x::2" % k, "2001:db8:2:%x::2" % k
            self.lpfx, self.rpfx = "2001:db8:1:%x::/64" % k, "2001:db8:2:%x::/64" % k
        if mode == "tunnel":
            if outer == 4:
                gw, peer = "192.0.2.1", "198.51.100.%d" % k
            else:
                gw, peer = "2001:db8:ffff::1", "2001:db8:fffe::%x" % k
        else:
            gw = peer = None
        seq = ESN_START if esn else None
        self.out_sa = Sa(0x1000 + k, "out", aead, mode, gw, peer, esn=esn, natt=natt,
                         dport=dport, seq=seq, ttl=ttl)
        # inbound: src/dst describe the arriving packets (peer -> us); the
        # window top starts a little below the first number for ESN
        self.in_sa = Sa(0x2000 + k, "in", aead, mode, peer, gw, esn=esn, natt=natt,
                        seq=ESN_START - 5 if esn else None)
        self.out_first = ESN_START if esn else 1
        self.in_first = ESN_START if esn else 1

    def commands(self):
        # transport-mode ESP is edgegw's only when sent to an address of its
        # own; everything else is transit
        # (the IPv6 ones on port 0: a port holds 8 addresses)
        local = [] if self.mode == "tunnel" else [
            "ip address add %s/%d port %d" % ((self.local, 32, 1) if self.inner == 4
                                              else (self.local, 128, 0))]
        return local + [self.out_sa.command(), self.in_sa.command(),
                "esp policy add out src %s dst %s protect %d" % (self.lpfx, self.rpfx,
                                                                 self.out_sa.spi),
                "esp policy add in src %s dst %s protect %d" % (self.rpfx, self.lpfx,
                                                                self.in_sa.spi)]

    def clear(self, direction, i):
        """The i-th clear IP packet (scapy) of a direction."""
        src, dst = (self.local, self.remote) if direction == "out" else (self.remote, self.local)
        size = SIZES[(i + self.k) % len(SIZES)]
        pay = Raw(bytes((self.k * 31 + i * 7 + j) & 0xff for j in range(size)))
        kind = (i + self.k) % 3
        if self.inner == 4:
            l3 = IP(src=src, dst=dst, id=0x100 * self.k + i, ttl=60 + i % 4, tos=8 * (i % 3),
                    flags="DF" if i % 2 else 0)
            l4 = [UDP(sport=49000 + i, dport=50000 + self.k),
                  TCP(sport=51000 + i, dport=52000 + self.k, flags="PA", seq=1000 * i, ack=77),
                  ICMP(type=8, id=self.k, seq=i)][kind]
        else:
            l3 = IPv6(src=src, dst=dst, hlim=60 + i % 4, tc=8 * (i % 3), fl=self.k)
            if self.hbh:
                l3 = l3 / IPv6ExtHdrHopByHop()
            l4 = [UDP(sport=49000 + i, dport=50000 + self.k),
                  TCP(sport=51000 + i, dport=52000 + self.k, flags="PA", seq=1000 * i, ack=77),
                  ICMPv6EchoRequest(id=self.k, seq=i)][kind]
        return l3 / l4 / pay

    def l4name(self, i):
        kind = (i + self.k) % 3
        return ["udp", "tcp", "icmp" if self.inner == 4 else "icmpv6"][kind]


def build_cases():
    cases = []
    k = 0
    shapes = [("transport", None, 4), ("transport", None, 6), ("tunnel", 4, 4),
              ("tunnel", 6, 6), ("tunnel", 4, 6), ("tunnel", 6, 4)]
    for mode, outer, inner in shapes:
        for aead in AEAD_LIST:
            k += 1
            cases.append(Case(k, mode, outer, inner, aead))
    extra = [
        dict(mode="transport", outer=None, inner=6, aead="aes-128-gcm", hbh=True),
        dict(mode="transport", outer=None, inner=4, aead="aes-128-gcm", esn=True, n=12),
        dict(mode="tunnel", outer=6, inner=6, aead="chacha20-poly1305", esn=True, n=12),
        dict(mode="tunnel", outer=6, inner=4, aead="aes-256-gcm", esn=True, n=12),
        dict(mode="transport", outer=None, inner=4, aead="aes-128-gcm", natt=True),
        dict(mode="tunnel", outer=4, inner=4, aead="aes-256-gcm", natt=True, dport=31000),
        dict(mode="tunnel", outer=4, inner=6, aead="chacha20-poly1305", natt=True),
        dict(mode="tunnel", outer=6, inner=4, aead="aes-128-gcm", natt=True),
        dict(mode="tunnel", outer=4, inner=4, aead="aes-128-gcm", esn=True, natt=True, n=12),
        dict(mode="tunnel", outer=4, inner=4, aead="aes-128-gcm", ttl=17),
        dict(mode="tunnel", outer=6, inner=4, aead="aes-128-gcm", vlan=100),
    ]
    for e in extra:
        k += 1
        cases.append(Case(k, **e))
    return cases


def interleave(lists):
    out = []
    for i in range(max(len(x) for x in lists)):
        for x in lists:
            if i < len(x):
                out.append(x[i])
    return out


# ---------------------------------------------------------------- matrix run


def make_matrix(cases):
    """Frames and expectations of the matrix run."""
    out_lists, in_lists, exp_access = [], [], {}
    for cs in cases:
        cs.out_clear = [raw(cs.clear("out", i)) for i in range(cs.n)]
        cs.out_frames = [eth(MAC0, SUB_MAC, ethertype_of(p), cs.vlan) + p for p in cs.out_clear]
        cs.in_clear = [raw(cs.clear("in", i)) for i in range(cs.n)]
        cs.in_esp = [cs.in_sa.encrypt(IP(p) if cs.inner == 4 else IPv6(p), cs.in_first + i)
                     for i, p in enumerate(cs.in_clear)]
        cs.in_frames = [eth(MAC1, PEER_MAC, ethertype_of(e), cs.vlan) + e for e in cs.in_esp]
        cs.in_expect = [eth(MAC1, PEER_MAC, ethertype_of(p), cs.vlan) + p for p in cs.in_clear]
        if cs.esn:
            # 2^32-1 arrives after 2^32 and 2^32+1: the receiver must infer
            # high word 0 for it from a window whose top is already in 1
            order = [0, 1, 2, 3, 4, 6, 7, 5] + list(range(8, cs.n))
            assert cs.in_first + 5 == (1 << 32) - 1
            cs.in_frames = [cs.in_frames[j] for j in order]
            cs.in_expect = [cs.in_expect[j] for j in order]
        for f in cs.in_expect:
            exp_access[f] = cs
        out_lists.append(cs.out_frames)
        in_lists.append(cs.in_frames)
    # clear traffic that matches no policy: passes unchanged both ways
    byp_out = [eth(MAC0, SUB_MAC, 0x0800) + raw(IP(src="100.64.0.9", dst="203.0.113.9") /
                                                UDP(sport=9, dport=9) / Raw(b"bypass-out")),
               eth(MAC0, SUB_MAC, 0x86dd) + raw(IPv6(src="2001:db8:100::9", dst="2001:db8:200::9")
                                                / UDP(sport=9, dport=9) / Raw(b"bypass-out6"))]
    byp_in = [eth(MAC1, PEER_MAC, 0x0800) + raw(IP(src="203.0.113.9", dst="100.64.0.9") /
                                                UDP(sport=9, dport=9) / Raw(b"bypass-in"))]
    access_in = interleave(out_lists)
    access_in[len(access_in) // 2:len(access_in) // 2] = byp_out
    uplink_in = interleave(in_lists)
    uplink_in[len(uplink_in) // 3:len(uplink_in) // 3] = byp_in
    return access_in, uplink_in, byp_out, byp_in, exp_access


def simulate(cases, byp_out, byp_in):
    """--selfcheck: what a correct edgegw writes, made by scapy."""
    uo, ao = [], []
    for cs in cases:
        for i, p in enumerate(cs.out_clear):
            e = cs.out_sa.encrypt(IP(p) if cs.inner == 4 else IPv6(p), cs.out_first + i)
            uo.append(eth(MAC0, SUB_MAC, ethertype_of(e), cs.vlan) + e)
        ao += cs.in_expect
    return ao + byp_in, uo + byp_out


def check_outbound(c, cases, uplink_out, byp_out):
    by_spi = {}
    clear = []
    natt_ports = {p for cs in cases if cs.natt for p in cs.out_sa.udp_ports()}
    for idx, f in enumerate(uplink_out):
        ef = EspFrame(f, natt_ports)
        ef.index = idx + 1
        if ef.ok:
            by_spi.setdefault(ef.spi, []).append(ef)
        else:
            clear.append(f)
    known = {cs.out_sa.spi for cs in cases}
    stray = {hex(s): len(v) for s, v in by_spi.items() if s not in known}
    c.check(not stray, "uplink: every ESP frame has the SPI of an outbound SA", str(stray))
    egwtest.same_frame_set(c, clear, byp_out, "uplink: clear frames = the bypass frames, unchanged")
    for cs in cases:
        outs = by_spi.get(cs.out_sa.spi, [])
        if not c.eq(len(outs), cs.n, "%s out: ESP frames of SPI 0x%x" % (cs.name, cs.out_sa.spi)):
            continue
        err = {"seq": [], "hdr": [], "dec": [], "eth": []}
        for i, (ef, clr) in enumerate(zip(outs, cs.out_clear)):
            s64 = cs.out_first + i
            if ef.seq != s64 & 0xffffffff or ef.iv != struct.pack(">Q", s64):
                err["seq"].append("frame %d: seq %d iv %s, want %d iv %016x" %
                                  (i + 1, ef.seq, ef.iv.hex(), s64 & 0xffffffff, s64))
            ofam = cs.outer if cs.mode == "tunnel" else cs.inner
            e = esptest.outer_header_errors(ef, cs.out_sa, clr, ofam)
            if e:
                err["hdr"].append("frame %d: %s" % (i + 1, "; ".join(e)))
            cf = cs.out_frames[i]
            if ef.frame[:12] != cf[:12] or (cs.vlan and ef.frame[12:16] != cf[12:16]):
                err["eth"].append("frame %d: Ethernet %s, want %s" %
                                  (i + 1, ef.frame[:16].hex(), cf[:16].hex()))
            try:
                d = cs.out_sa.decrypt(ef, s64)
            except Exception as x:  # noqa: BLE001 -- IPSecIntegrityError and parse errors
                err["dec"].append("frame %d: scapy cannot decrypt: %s %s" %
                                  (i + 1, type(x).__name__, x))
                continue
            if d != clr:
                off = next((j for j in range(min(len(d), len(clr))) if d[j] != clr[j]),
                           min(len(d), len(clr)))
                err["dec"].append("frame %d: decrypted %d bytes, clear %d, first difference "
                                  "at %d" % (i + 1, len(d), len(clr), off))
        c.check(not err["seq"], "%s out: sequence numbers %d..%d in order, IV = 64-bit seq" %
                (cs.name, cs.out_first, cs.out_first + cs.n - 1), "; ".join(err["seq"][:3]))
        c.check(not err["hdr"], "%s out: outer headers, ESP offset%s" %
                (cs.name, ", UDP encapsulation" if cs.natt else ""), "; ".join(err["hdr"][:3]))
        c.check(not err["eth"], "%s out: same MACs%s" % (cs.name, ", same VLAN tag" if cs.vlan
                                                          else ""), "; ".join(err["eth"][:3]))
        c.check(not err["dec"], "%s out: scapy decrypts every frame to the clear input, "
                "byte for byte" % cs.name, "; ".join(err["dec"][:3]))
        cs.out_esp = outs
    return by_spi


def check_tshark_out(c, cases, pcap):
    uats, checked, not_checked = [], [], []
    for cs in cases:
        ofam = cs.outer if cs.mode == "tunnel" else cs.inner
        u = cs.out_sa.tshark_uat(ofam)
        if u is None:
            not_checked.append(cs.name)
        else:
            uats.append(u)
            checked.append(cs)
    print("  tshark 4.0 cannot decrypt ChaCha20-Poly1305 or ESN SAs; scapy alone checks: %s" %
          ", ".join(not_checked))
    tv, terr, trc = esptest.tshark_esp(pcap, uats)
    if not c.eq(trc, 0, "tshark reads %s" % os.path.basename(pcap)):
        print(terr)
        return
    c.check("UAT" not in terr and "rror" not in terr, "tshark takes the ESP SA records", terr[:300])
    for cs in checked:
        err = []
        for i, ef in enumerate(getattr(cs, "out_esp", [])):
            t = tv.get(ef.index)
            if t is None:
                err.append("frame %d missing" % ef.index)
                continue
            clr = cs.out_clear[i]
            hl, _, _ = esptest.ip_header_chain(clr)
            want_data = clr if cs.mode == "tunnel" else clr[hl:]
            inner = cs.l4name(i)
            if cs.mode == "tunnel":
                inner = ("ip:" if cs.inner == 4 else "ipv6:") + inner
            probs = []
            if t["esp.icv_good"] != "1" or t["esp.icv_bad"] not in ("0", ""):
                probs.append("ICV good=%r bad=%r" % (t["esp.icv_good"], t["esp.icv_bad"]))
            if t["esp.sequence"] != str(ef.seq):
                probs.append("sequence %r" % t["esp.sequence"])
            if ("esp:" + inner) not in t["frame.protocols"]:
                probs.append("protocols %s, want esp:%s" % (t["frame.protocols"], inner))
            if t["esp.contained_data"].replace(":", "") != want_data.hex():
                probs.append("decrypted data differs (%d hex chars, want %d)" %
                             (len(t["esp.contained_data"]), 2 * len(want_data)))
            if probs:
                err.append("frame %d: %s" % (ef.index, ", ".join(probs)))
        c.check(not err and getattr(cs, "out_esp", None),
                "%s out: tshark decrypts (ICV correct, seq, inner %s, same bytes)" %
                (cs.name, "IP packet" if cs.mode == "tunnel" else "payload"), "; ".join(err[:3]))


def check_tshark_in(c, cases, pcap):
    """The test's own inbound ESP (scapy) also decrypts in tshark: the two
    peers agree with each other, so a disagreement with edgegw is edgegw's."""
    uats = [u for u in (cs.in_sa.tshark_uat(cs.outer if cs.mode == "tunnel" else cs.inner)
                        for cs in cases) if u]
    tv, terr, trc = esptest.tshark_esp(pcap, uats)
    good = sum(1 for t in tv.values() if t["esp.icv_good"] == "1")
    want = sum(cs.n for cs in cases if cs.in_sa.tshark_uat(4))
    c.eq(good, want, "tshark verifies the ICV of every scapy-made inbound AES-GCM frame "
         "(test self-check)")


def check_inbound(c, cases, access_out, byp_in, exp_access):
    per_case = {}
    unexpected = []
    got_bypass = []
    for f in access_out:
        cs = exp_access.get(f)
        if cs is not None:
            per_case.setdefault(cs.k, []).append(f)
        elif f in byp_in:
            got_bypass.append(f)
        else:
            unexpected.append(f)
    if not c.check(not unexpected, "access: every frame is an expected clear frame",
                   "%d unexpected" % len(unexpected)):
        for f in unexpected[:4]:
            ef = EspFrame(f)
            print("    unexpected: %d bytes, IPv%d proto %s: %s..." %
                  (len(f), ef.version, getattr(ef, "proto", "?"), f[:64].hex()))
            # which case does it look like? compare with the expected of the same length
            for cs in cases:
                for j, w in enumerate(cs.in_expect):
                    if len(w) == len(f) and w[14:30] == f[14:30]:
                        off = next(k for k in range(len(f)) if f[k] != w[k])
                        print("      like %s frame %d; first difference at byte %d: %s vs %s"
                              % (cs.name, j + 1, off, f[off:off + 8].hex(), w[off:off + 8].hex()))
    c.eq(got_bypass, byp_in, "access: the clear uplink frame matching no policy passes unchanged")
    for cs in cases:
        got = per_case.get(cs.k, [])
        c.check(got == cs.in_expect, "%s in: access output = the clear packets, byte for byte, "
                "in order" % cs.name, "%d of %d frames" % (len(got), cs.n))


def not_nd(frames):
    """frames without the ARP and IPv6 neighbour discovery (ICMPv6 133-137)
    edgegw sends for its own addresses."""
    def nd(f):
        et = struct.unpack("!H", f[12:14])[0]
        return et == 0x0806 or (et == 0x86dd and len(f) > 54 and f[20] == 58 and
                                133 <= f[54] <= 137)
    return [f for f in frames if not nd(f)]


def matrix_run(c, binary, selfcheck):
    cases = build_cases()
    access_in, uplink_in, byp_out, byp_in, exp_access = make_matrix(cases)
    print("  matrix: %d cases, %d frames in on access, %d on the uplink" %
          (len(cases), len(access_in), len(uplink_in)))
    # this run checks that what no policy matches passes in clear: say so
    # (with a policy in a direction, its default would discard it)
    lines = ["esp policy default out bypass", "esp policy default in bypass"]
    for cs in cases:
        lines += cs.commands()
    if selfcheck:
        access_out, uplink_out = simulate(cases, byp_out, byp_in)
        upcap = c.path("matrix_uplink_out.pcap")
        egwtest.write_pcap(upcap, uplink_out)
        egwtest.write_pcap(c.path("matrix_uplink_in.pcap"), uplink_in)
        s = None
    else:
        rc, so, se, s, access_out, uplink_out = esptest.gateway_run(
            c, binary, NAME, "matrix", lines, access_in, uplink_in)
        # the addresses of the transport SAs' ends are announced (ARP, ND)
        access_out, uplink_out = not_nd(access_out), not_nd(uplink_out)
        if esptest.esp_unsupported(so, se):
            c.check(False, "edgegw accepts the esp commands", se.strip().splitlines()[-1])
            return
        if not c.eq(rc, 0, "matrix run: edgegw exit status"):
            return
        upcap = c.path("matrix_uplink_out.pcap")
        # tshark reads the file: without the ARP/ND frames, as checked here
        egwtest.write_pcap(upcap, uplink_out)
    if s is not None:
        egwtest.check_identity(c, s)
        j = s.get("esp") or {}
        c.eq((j.get("policy_default_out"), j.get("policy_default_in")), ("bypass", "bypass"),
             "--stats-json: the policy defaults as set")
        p0, p1 = egwtest.port_by_id(s, 0), egwtest.port_by_id(s, 1)
        n_out = sum(cs.n for cs in cases)
        c.eq(p0["rx"], len(access_in), "port 0 rx")
        c.eq(p0["tx"], n_out + len(byp_out), "port 0 tx (ESP + bypass, to the uplink)")
        c.eq(p1["tx_out"], n_out + len(byp_out), "port 1 tx_out")
        c.eq(p1["rx"], len(uplink_in), "port 1 rx")
        c.eq(p1["tx"], len(uplink_in), "port 1 tx (decrypted + bypass, to access)")
        c.eq(p0["tx_out"], len(uplink_in), "port 0 tx_out")
        c.eq(esptest.drops(p0), {}, "port 0: no drops")
        c.eq(esptest.drops(p1), {}, "port 1: no drops")
        sas = {(x["spi"], x["dir"]): x for x in (s.get("esp") or {}).get("sas", [])}
        bad = []
        for cs in cases:
            for sa, want_seq in ((cs.out_sa, cs.out_first + cs.n),
                                 (cs.in_sa, cs.in_first + cs.n - 1)):
                j = sas.get((sa.spi, sa.dir))
                got = None if j is None else (j["packets"], j["seq"], j["drops"])
                if got != (cs.n, want_seq, {}):
                    bad.append("SA 0x%x %s: (packets, seq, drops) %s, want %s" %
                               (sa.spi, sa.dir, got, (cs.n, want_seq, {})))
        c.check(not bad, "--stats-json, every SA: packets, seq (out: next; in: window top), no "
                "drops", "; ".join(bad[:4]))
    check_outbound(c, cases, uplink_out, byp_out)
    check_tshark_out(c, cases, upcap)
    check_tshark_in(c, cases, c.path("matrix_uplink_in.pcap"))
    check_inbound(c, cases, access_out, byp_in, exp_access)
    if not selfcheck:
        restart_run(c, binary, cases[0])


# ---------------------------------------------------------------- restart


def restart_run(c, binary, cs):
    """edgegw again with the matrix run's state file and the same outbound
    SA (SPI and key): its sequence numbers, hence its GCM IVs, must go on
    above every number the first run used."""
    state = c.path("matrix.state")
    if not c.check(os.path.exists(state), "the matrix run left its state file"):
        return
    lines = [cs.out_sa.command(), cs.commands()[-2]]
    rc, so, se, s, _, uplink_out = esptest.gateway_run(
        c, binary, NAME, "restart", lines, cs.out_frames[:3], [], state_file=state)
    if not c.eq(rc, 0, "restart run: edgegw exit status"):
        return
    outs = [ef for ef in (EspFrame(f) for f in uplink_out) if ef.ok and ef.spi == cs.out_sa.spi]
    seqs = [ef.seq for ef in outs]
    c.check(len(seqs) == 3 and seqs[0] > cs.n and seqs == list(range(seqs[0], seqs[0] + 3)),
            "restart: %s goes on above the %d numbers of the first run" % (cs.name, cs.n),
            "sequence numbers %s" % seqs)
    bad = []
    for ef, clr in zip(outs, cs.out_clear):
        try:
            ok = ef.iv == struct.pack(">Q", ef.seq) and cs.out_sa.decrypt(ef, ef.seq) == clr
        except Exception:  # noqa: BLE001
            ok = False
        if not ok:
            bad.append(ef.seq)
    c.check(outs and not bad, "restart: IV = sequence number, scapy decrypts to the input",
            "bad: %s" % bad)


# ---------------------------------------------------------------- hostile run

HOSTILE_WINDOW = 64


def hostile_run(c, binary, selfcheck):
    """Inbound SA 0x3001 (tunnel 4in4, aes-128-gcm, window 64) and hostile
    frames with known fates; outbound discard policy, sequence-number
    exhaustion and a hard lifetime."""
    gw, peer = "192.0.2.1", "198.51.100.200"
    sa = Sa(0x3001, "in", "aes-128-gcm", "tunnel", peer, gw, window=HOSTILE_WINDOW)
    other = Sa(0x3999, "in", "aes-128-gcm", "tunnel", peer, gw)  # edgegw does not know it
    sa_tr = Sa(0x3002, "in", "chacha20-poly1305", "transport")
    sa_natt = Sa(0x3003, "in", "aes-256-gcm", "tunnel", "198.51.100.201", gw, natt=True)
    out_exhaust = Sa(0x3101, "out", "aes-128-gcm", "tunnel", gw, peer, seq=4294967293)
    out_life = Sa(0x3102, "out", "aes-256-gcm", "tunnel", gw, peer,
                  extra="lifetime packets 2 4")
    lines = ["ip address add 10.11.0.7/32 port 1",  # the transport SA's end
             # IKE to the gateway passes in clear: a bypass rule, as RFC 4301
             # wants (what no rule matches is discarded)
             "esp policy add in src 198.51.100.201/32 dst %s/32 proto udp bypass" % gw,
             sa.command(), sa_tr.command(), sa_natt.command(), out_exhaust.command(),
             out_life.command(),
             "esp policy add in src 10.20.0.0/16 dst 10.10.0.0/16 protect %d" % sa.spi,
             "esp policy add in src 10.22.0.0/16 dst 10.12.0.0/16 protect %d" % sa_natt.spi,
             "esp policy add in src 10.21.0.0/16 dst 10.11.0.0/16 protect %d" % sa_tr.spi,
             "esp policy add out src 10.10.0.0/16 dst 10.20.0.0/16 discard",
             "esp policy add out src 10.12.0.0/16 dst 10.22.0.0/16 protect %d" % out_exhaust.spi,
             "esp policy add out src 10.13.0.0/16 dst 10.23.0.0/16 protect %d" % out_life.spi,
             # first match wins: rules put in front of the protect rules
             "esp policy add out pos 0 src 10.12.0.9/32 dst 10.22.0.0/16 bypass",
             "esp policy add out pos 0 src 10.13.0.0/16 dst 10.23.0.0/16 proto tcp discard"]

    def inner(i, src="10.20.0.5", dst="10.10.0.5"):
        return IP(src=src, dst=dst, id=i) / UDP(sport=5000 + i, dport=53) / Raw(b"hostile %d" % i)

    def esp_frame(s, seq, i, **kw):
        e = s.encrypt(inner(i, **kw), seq)
        return eth(MAC1, PEER_MAC, 0x0800) + e

    def clear_frame(p, d=MAC1, s=PEER_MAC):
        p = raw(p)
        return eth(d, s, ethertype_of(p)) + p

    frames = []  # (frame, fate, clear frame expected on access or None)

    def good(seq, i):
        frames.append((esp_frame(sa, seq, i), "ok", clear_frame(inner(i))))

    good(1, 1)
    good(2, 2)
    good(3, 3)
    frames.append((esp_frame(other, 4, 4), "esp_unknown_spi", None))
    frames.append((frames[1][0], "esp_replay", None))              # seq 2 again
    bad = bytearray(esp_frame(sa, 1000, 5))
    bad[14 + 20 + 16 + 3] ^= 0x10                                  # a ciphertext bit
    frames.append((bytes(bad), "esp_bad_icv", None))
    good(4, 6)       # the bad ICV at 1000 must not have moved the window
    good(200, 7)
    frames.append((esp_frame(sa, 100, 8), "esp_outside_window", None))  # 200 - 100 >= 64
    good(150, 9)     # 200 - 150 < 64: inside the window, not seen yet
    frames.append((esp_frame(sa, 150, 9), "esp_replay", None))
    # padding bytes must be 1, 2, 3...: these are zeros (length still aligned)
    body = raw(inner(10))
    padlen = (-(len(body) + 2)) % 4 + 4
    frames.append((eth(MAC1, PEER_MAC, 0x0800) + sa.encrypt_plain(
        IP(src=peer, dst=gw), body, 4, 201, b"\x00" * padlen), "esp_bad_padding", None))
    good(202, 11)
    # truncated: header, IV and 4 bytes (less than the ICV); and a bare SPI
    frames.append((eth(MAC1, PEER_MAC, 0x0800) + raw(IP(src=peer, dst=gw, proto=50) / Raw(
        struct.pack("!II", sa.spi, 203) + struct.pack(">Q", 203) + b"abcd")),
        "esp_truncated", None))
    frames.append((eth(MAC1, PEER_MAC, 0x0800) + raw(IP(src=peer, dst=gw, proto=50) / Raw(
        struct.pack("!I", sa.spi))), "esp_truncated", None))
    # in clear but an inbound policy says protect
    frames.append((clear_frame(inner(12)), "esp_in_clear", None))
    # matches no policy: the inbound default discards it (RFC 4301 5)
    frames.append((clear_frame(IPv6(src="2001:db8:9::1", dst="2001:db8:8::1") / UDP() /
                               Raw(b"no policy")), "esp_policy_default", None))
    # transport SA, IPv4, chacha20: two good, one replayed in the same burst
    tr = [IP(src="10.21.0.7", dst="10.11.0.7", id=70 + i) / TCP(sport=7, dport=7, seq=i) /
          Raw(b"t" * (i * 5)) for i in range(3)]
    for i, p in enumerate(tr[:2]):
        frames.append((eth(MAC1, PEER_MAC, 0x0800) + sa_tr.encrypt(p, 10 + i), "ok",
                       clear_frame(p)))
    frames.append((frames[-1][0], "esp_replay", None))
    good(203, 13)
    # right key, wrong outer source: not the SA's peer
    e = bytearray(esp_frame(sa, 204, 14))
    e[14 + 12:14 + 16] = bytes([198, 51, 100, 99])
    e[14 + 10:14 + 12] = b"\x00\x00"
    e[14 + 10:14 + 12] = struct.pack("!H", esptest.ip_checksum(bytes(e[14:34])))
    frames.append((bytes(e), "esp_sa_mismatch", None))
    # tunnel SA, next header UDP (a transport-mode payload)
    body = raw(UDP(sport=1, dport=2) / Raw(b"transport payload in a tunnel SA"))
    frames.append((eth(MAC1, PEER_MAC, 0x0800) + sa.encrypt_plain(
        IP(src=peer, dst=gw), body, 17, 205, bytes(range(1, (-(len(body) + 2)) % 4 + 1))),
        "esp_bad_next_header", None))
    # dummy packet (next header 59, RFC 4303 traffic flow confidentiality)
    frames.append((eth(MAC1, PEER_MAC, 0x0800) + sa.encrypt_plain(
        IP(src=peer, dst=gw), b"\x00" * 22, 59, 206, b""), "esp_dummy", None))
    # decrypts fine, but the inner packet is not one the SA's policy covers
    frames.append((esp_frame(sa, 207, 15, src="10.30.0.1"), "esp_policy_mismatch", None))
    good(208, 16)
    # the first fragment of an ESP packet (outer IPv4 MF): not reassembled
    e = bytearray(esp_frame(sa, 209, 18))
    e[14 + 6] |= 0x20
    e[14 + 10:14 + 12] = b"\x00\x00"
    e[14 + 10:14 + 12] = struct.pack("!H", esptest.ip_checksum(bytes(e[14:34])))
    frames.append((bytes(e), "esp_fragment", None))
    # NAT-T SA: an IKE message (non-ESP marker: 4 zero bytes) on UDP 4500 is
    # not ESP and passes in clear; ESP on UDP 4500 is decrypted
    frames.append((clear_frame(IP(src="198.51.100.201", dst=gw) / UDP(sport=4500, dport=4500) /
                               Raw(b"\x00\x00\x00\x00" + b"IKEv2 message" + b"\x00" * 15)),
                   "ok", "same"))
    p = inner(17, src="10.22.0.5", dst="10.12.0.5")
    frames.append((eth(MAC1, PEER_MAC, 0x0800) + sa_natt.encrypt(p, 1), "ok", clear_frame(p)))
    uplink_in = [f for f, _, _ in frames]

    def n_ok(x):
        return sum(1 for f, fate, _ in frames if fate == "ok" and EspFrame(f).ok and
                   EspFrame(f).spi == x.spi)
    expect_access = [(f if x == "same" else x) for f, fate, x in frames if fate == "ok"]
    want_p1 = {}
    for _, fate, _ in frames:
        if fate != "ok":
            want_p1[fate] = want_p1.get(fate, 0) + 1

    # outbound side (access in)
    acc = []
    acc.append(clear_frame(IP(src="10.10.0.1", dst="10.20.0.1") / UDP() / Raw(b"discard me"),
                           MAC0, SUB_MAC))
    ex = [IP(src="10.12.0.1", dst="10.22.0.1", id=i) / UDP(sport=i, dport=9) / Raw(b"x%d" % i)
          for i in range(5)]
    acc += [clear_frame(p, MAC0, SUB_MAC) for p in ex]
    lf = [IP(src="10.13.0.1", dst="10.23.0.1", id=i) / UDP(sport=i, dport=9) / Raw(b"y%d" % i)
          for i in range(6)]
    acc += [clear_frame(p, MAC0, SUB_MAC) for p in lf]
    bypassed = clear_frame(IP(src="10.12.0.9", dst="10.22.0.1") / UDP(sport=9, dport=9) /
                           Raw(b"bypass: a rule at position 0"), MAC0, SUB_MAC)
    acc.insert(3, bypassed)
    acc.insert(8, clear_frame(IP(src="10.13.0.1", dst="10.23.0.1") / TCP(sport=9, dport=9) /
                              Raw(b"discard: tcp rule at position 0"), MAC0, SUB_MAC))
    # 4294967293..4294967295 go out, then the counter would cycle: 2 drops;
    # lifetime packets 2 4: 4 go out, 2 drop
    want_p0 = {"esp_policy_discard": 2, "esp_seq_overflow": 2, "esp_lifetime_expired": 2}

    print("  hostile uplink input (SA 0x%x window %d):" % (sa.spi, HOSTILE_WINDOW))
    for i, (f, fate, _) in enumerate(frames):
        ef = EspFrame(f)
        print("    %2d %-20s %s" % (i + 1, fate, ("spi 0x%x seq %d" % (ef.spi, ef.seq)) if ef.ok
                                     else "%d bytes" % len(f)))
    if selfcheck:
        return
    rc, so, se, s, access_out, uplink_out = esptest.gateway_run(
        c, binary, NAME, "hostile", lines, acc, uplink_in)
    access_out, uplink_out = not_nd(access_out), not_nd(uplink_out)
    if esptest.esp_unsupported(so, se):
        c.check(False, "edgegw accepts the esp commands", se.strip().splitlines()[-1])
        return
    if not c.eq(rc, 0, "hostile run: edgegw exit status") or s is None:
        return
    egwtest.check_identity(c, s)
    p0, p1 = egwtest.port_by_id(s, 0), egwtest.port_by_id(s, 1)
    c.eq(p1["rx"], len(uplink_in), "hostile: port 1 rx")
    c.eq(p1["tx"], len(expect_access), "hostile: port 1 tx (accepted, to access)")
    esptest.check_drops(c, p1, want_p1, "hostile: port 1")
    egwtest.same_frame_set(c, access_out, expect_access,
                           "hostile: access output = the accepted frames, in clear")
    # decrypted frames keep their arrival order (clear frames that pass form
    # another group of the burst, and IPv6 another class)
    dec = [x for f, fate, x in frames if fate == "ok" and x != "same"]
    c.check([f for f in access_out if f in dec] == dec,
            "hostile: decrypted frames leave in arrival order", "%d frames" % len(dec))
    sas = {(x["spi"], x["dir"]): x for x in (s.get("esp") or {}).get("sas", [])}
    per_sa = [(sa, "in", n_ok(sa), {"esp_replay": 2, "esp_bad_icv": 1, "esp_outside_window": 1,
                                   "esp_bad_padding": 1, "esp_sa_mismatch": 1,
                                   "esp_bad_next_header": 1, "esp_dummy": 1,
                                   "esp_policy_mismatch": 1}),
              (sa_tr, "in", 2, {"esp_replay": 1}), (sa_natt, "in", 1, {}),
              (out_exhaust, "out", 3, {"esp_seq_overflow": 2}),
              (out_life, "out", 4, {"esp_lifetime_expired": 2})]
    for x, d, pk, dr in per_sa:
        j = sas.get((x.spi, d))
        if not c.check(j is not None, "hostile: --stats-json has SA 0x%x %s" % (x.spi, d)):
            continue
        c.eq(j["packets"], pk, "hostile: SA 0x%x %s packets" % (x.spi, d))
        got = {k: v for k, v in j["drops"].items() if k in dr or v}
        got.pop("esp_truncated", None)  # a truncated packet may or may not name its SA
        c.eq(got, dr, "hostile: SA 0x%x %s drops" % (x.spi, d))
    c.eq(p0["rx"], len(acc), "hostile: port 0 rx")
    esptest.check_drops(c, p0, want_p0, "hostile: port 0")
    seqs = {}
    for f in uplink_out:
        ef = EspFrame(f)
        if ef.ok:
            seqs.setdefault(ef.spi, []).append(ef.seq)
    c.eq(seqs.get(out_exhaust.spi), [4294967293, 4294967294, 4294967295],
         "hostile: SA 0x%x (no ESN) sends up to 2^32-1, never wraps" % out_exhaust.spi)
    c.eq(seqs.get(out_life.spi), [1, 2, 3, 4],
         "hostile: SA 0x%x (lifetime packets 2 4) sends 4 packets" % out_life.spi)
    c.eq(sum(len(v) for v in seqs.values()), 7, "hostile: uplink output: 3 + 4 ESP frames")
    c.eq([f for f in uplink_out if not EspFrame(f).ok], [bypassed],
         "hostile: the frame a bypass rule at position 0 lets through leaves in clear")


def main():
    selfcheck = sys.argv[1:] == ["--selfcheck"]
    binary = None if selfcheck else sys.argv[1]
    c = egwtest.Checker(NAME)
    if not conf.crypto_valid:
        c.skip("python3-cryptography is missing: scapy cannot do ESP (apt-get install "
               "python3-cryptography)")
    no_tshark = esptest.tshark_path() is None
    if no_tshark:
        c.skip("tshark is not installed (apt-get install tshark): it is one of the two "
               "independent ESP peers")
    matrix_run(c, binary, selfcheck)
    hostile_run(c, binary, selfcheck)
    c.finish()


if __name__ == "__main__":
    main()
