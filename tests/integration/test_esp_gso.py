# SPDX-License-Identifier: BSD-3-Clause
"""esp_gso: ESP segmentation and fragmentation of super-packets (seed 002).

The seed (xfrm: software GSO for inner tunnels) is about TCP over an ipip or
ip6tnl tunnel sent through a transport-mode SA between the two outer hosts:
the broken path wrote the ESP header 4 bytes into the inner IP header and
encrypted from the TCP header on, leaving inner header bytes in clear. Here
edgegw gets such packets as 64 KB frames (<= 65,535 bytes on the wire, which
net_pcap delivers as multi-segment mbufs) and must segment them and encrypt
every segment. For every ESP packet on the uplink:

  - the SPI sits right at the end of the outer IP header, and the seed's own
    tcpdump test for the broken layout (ip6[56:2] = 0x4500 and ip6[60:4] =
    SPI; ip[36:2], ip[40:4] for ipip) matches nothing (tcpdump, and the same
    test in Python for the 6in6 and 6in4 shapes);
  - scapy decrypts it, and the decrypted payload starts right at the inner
    IP header (offset 0 after ESP header and IV); no byte run of the inner IP
    and TCP headers appears in clear in the frame;
  - ESP sequence numbers 1..N in order, IV = sequence number, outer IP packet
    no larger than the SA's mtu;
  - the inner IP header and TCP header are the original's but for lengths,
    checksums, IPv4 identification, sequence number and FIN/PSH (only on the
    last segment of each super-packet); lengths and checksums are valid
    (scapy recomputes them); TCP sequence numbers are contiguous and the
    inner TCP stream reassembles byte for byte.

Shapes: transport mode with ipip (4in4), ip6tnl (6in6), the seed's 4in6 and
6in4; plain TCP in tunnel mode over IPv4 and IPv6; plain TCP in transport
mode with a smaller SA mtu; IPv4 options, an IPv6 hop-by-hop header, TCP
over ipip inside a tunnel-mode SA. Then fragmentation in tunnel mode:
non-TCP IPv4 without DF is fragmented before encryption (each fragment its
own ESP packet, the fragments reassemble to the original, options without
the copied flag only in the first); with DF (tunnel and transport mode), and
IPv6, a packet too big is dropped (esp_too_big) and an ICMP
fragmentation-needed / ICMPv6 packet-too-big goes back out the access port
carrying the largest inner packet size that fits the SA's mtu; a packet of
exactly that size passes as one ESP packet that fills the mtu. Counters:
--stats-json identity with 'created', ESP totals, per-SA packets.

A second run feeds one SA from two worker lcores (two RX queues: 64 KB
super-packets on one, small packets on the other): no sequence number, hence
no GCM IV, may appear twice.

usage: test_esp_gso.py EDGEGW
       test_esp_gso.py --selfcheck   (no edgegw: scapy plays edgegw, to check
                                      the checks)
"""
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402
import esptest  # noqa: E402
from esptest import MAC0, EspFrame, Sa  # noqa: E402

from scapy.all import (ICMP, IP, TCP, UDP, ICMPv6EchoRequest, IPOption_Router_Alert,  # noqa: E402
                       IPOption_RR, IPv6, IPv6ExtHdrHopByHop, Raw, conf, raw)

NAME = "esp_gso"
SUB_MAC = "02:00:00:00:aa:02"
MAX_FRAME = 65535
TCP_OPTS = [("NOP", None), ("NOP", None), ("Timestamp", (123456, 654321))]


def mac(s):
    return bytes.fromhex(s.replace(":", ""))


def eth(dst, src, ip):
    return mac(dst) + mac(src) + struct.pack("!H", 0x0800 if ip[0] >> 4 == 4 else 0x86dd) + ip


def pattern(n, seed):
    return bytes((seed * 13 + i * 7 + (i >> 8)) & 0xff for i in range(n))


def ipcls(fam):
    return IP if fam == 4 else IPv6


def max_inner(sa, clear_hdr_len, outer_fam):
    """Largest clear IP packet whose ESP packet fits the SA's mtu (AEAD:
    block 1, ESP payload + trailer aligned to 4, 16-byte ICV)."""
    mtu = sa.mtu or 1500
    over = esptest.ESP_HDR + esptest.IV_LEN + esptest.ICV_LEN + (8 if sa.natt else 0)
    if sa.tunnel:
        room = mtu - (20 if outer_fam == 4 else 40) - over
        return (room & ~3) - 2
    room = mtu - clear_hdr_len - over
    return (room & ~3) - 2 + clear_hdr_len


class TcpCase:
    """Super-packets of one TCP stream through one SA.

    stack(j) gives the IP headers of super-packet j, outermost first (scapy
    layers without payload); TCP goes inside the last one. For a transport
    SA the first header is the one ESP goes after; for a tunnel SA the whole
    stack is the inner packet."""

    def __init__(self, k, label, sa, stack, sizes, policy):
        self.k, self.label, self.sa, self.policy_line = k, label, sa, policy
        self.name = "#%d %s (SA 0x%x %s %s%s)" % (k, label, sa.spi, sa.mode, sa.aead,
                                                  ", mtu %d" % sa.mtu if sa.mtu else "")
        self.isn = 0x10000000 * k + 1
        self.payload = b""
        self.frames, self.clear, self.bounds = [], [], []
        seq = self.isn
        for j, size in enumerate(sizes):
            flags = "FPA" if j == len(sizes) - 1 else "PA"
            data = pattern(size, k * 10 + j)
            pkt = None
            for h in stack(j):
                pkt = h if pkt is None else pkt / h
            pkt = pkt / TCP(sport=40000 + k, dport=5201, seq=seq, ack=0x55aa, flags=flags,
                            window=501, options=TCP_OPTS) / Raw(data)
            b = raw(pkt)
            f = eth(MAC0, SUB_MAC, b)
            assert len(f) <= MAX_FRAME, (label, len(f))
            self.frames.append(f)
            self.clear.append(b)
            self.bounds.append((seq, seq + size, flags))
            self.payload += data
            seq += size
        self.levels = len(ip_chain(self.clear[0])[0])

    def policy(self):
        return self.policy_line % self.sa.spi


def v4(src, dst, **kw):
    kw.setdefault("flags", "DF")
    kw.setdefault("ttl", 64)
    return IP(src=src, dst=dst, **kw)


def v6(src, dst, **kw):
    kw.setdefault("hlim", 64)
    return IPv6(src=src, dst=dst, **kw)


def build_tcp_cases():
    i4 = lambda j, a, b, **kw: v4(a, b, id=0x4000 + j, tos=0x28, ttl=63, **kw)  # noqa: E731
    i6 = lambda a, b: v6(a, b, hlim=63, tc=0x28, fl=0x12345)  # noqa: E731
    tr = "esp policy add out src %s dst %s protect %%d"
    trt = "esp policy add out src %s dst %s proto tcp protect %%d"
    c = []
    # transport SA between the outer hosts, TCP inside an IP tunnel (the seed)
    c.append(TcpCase(1, "TCP over ipip (4in4)", Sa(0x4001, "out", "aes-128-gcm", "transport"),
                     lambda j: [v4("192.0.2.1", "192.0.2.2", id=0x777),
                                i4(j, "10.9.0.1", "10.9.0.2")],
                     [65000 - 60, 20001], tr % ("192.0.2.1/32", "192.0.2.2/32")))
    c.append(TcpCase(2, "TCP over ip6tnl (6in6)", Sa(0x4002, "out", "aes-256-gcm", "transport"),
                     lambda j: [v6("2001:db8:a::1", "2001:db8:a::2"),
                                i6("fd00:9::1", "fd00:9::2")],
                     [65000 - 100, 7777], tr % ("2001:db8:a::1/128", "2001:db8:a::2/128")))
    c.append(TcpCase(3, "TCP over ip6tnl (4in6, the seed's)",
                     Sa(0x4003, "out", "chacha20-poly1305", "transport"),
                     lambda j: [v6("2001:db8:b::1", "2001:db8:b::2"),
                                i4(j, "10.9.1.1", "10.9.1.2")],
                     [65000 - 80, 12345], tr % ("2001:db8:b::1/128", "2001:db8:b::2/128")))
    c.append(TcpCase(4, "TCP over sit (6in4)", Sa(0x4004, "out", "aes-128-gcm", "transport"),
                     lambda j: [v4("192.0.2.5", "192.0.2.6", id=0x778),
                                i6("fd00:9:1::1", "fd00:9:1::2")],
                     [65000 - 80, 3000], tr % ("192.0.2.5/32", "192.0.2.6/32")))
    # plain TCP, tunnel mode
    c.append(TcpCase(5, "plain TCP, IPv4 in an IPv4 tunnel",
                     Sa(0x4005, "out", "aes-128-gcm", "tunnel", "192.0.2.1", "198.51.100.1"),
                     lambda j: [i4(j, "10.8.0.1", "10.8.0.2")], [65000, 40000],
                     trt % ("10.8.0.1/32", "10.8.0.2/32")))
    c.append(TcpCase(6, "plain TCP, IPv6 in an IPv6 tunnel",
                     Sa(0x4006, "out", "aes-256-gcm", "tunnel", "2001:db8:ffff::1",
                        "2001:db8:fffe::1"),
                     lambda j: [i6("fd00:8::1", "fd00:8::2")], [65000, 999],
                     trt % ("fd00:8::1/128", "fd00:8::2/128")))
    # plain TCP, transport mode, smaller mtu
    c.append(TcpCase(7, "plain TCP, IPv4 transport", Sa(0x4007, "out", "chacha20-poly1305",
                                                       "transport", mtu=1400),
                     lambda j: [i4(j, "10.8.1.1", "10.8.1.2")], [60000, 1],
                     trt % ("10.8.1.1/32", "10.8.1.2/32")))
    c.append(TcpCase(8, "plain TCP, IPv6 transport", Sa(0x4008, "out", "aes-128-gcm",
                                                       "transport", mtu=1280),
                     lambda j: [i6("fd00:8:1::1", "fd00:8:1::2")], [60000],
                     trt % ("fd00:8:1::1/128", "fd00:8:1::2/128")))
    # header variants: IPv4 options, an IPv6 extension header, and TCP over
    # ipip inside a tunnel-mode SA (three IP headers on the wire)
    c.append(TcpCase(9, "plain TCP, IPv4 with IP options, in an IPv6 tunnel",
                     Sa(0x4009, "out", "aes-128-gcm", "tunnel", "2001:db8:ffff::1",
                        "2001:db8:fffe::9"),
                     lambda j: [i4(j, "10.8.2.1", "10.8.2.2",
                                   options=[IPOption_RR(routers=["10.8.2.1"])])],
                     [64000], trt % ("10.8.2.1/32", "10.8.2.2/32")))
    c.append(TcpCase(10, "plain TCP, IPv6 with a hop-by-hop header, transport",
                     Sa(0x400a, "out", "aes-256-gcm", "transport"),
                     lambda j: [i6("fd00:8:3::1", "fd00:8:3::2") / IPv6ExtHdrHopByHop()],
                     [64000], trt % ("fd00:8:3::1/128", "fd00:8:3::2/128")))
    c.append(TcpCase(11, "TCP over ipip, in an IPv6 tunnel",
                     Sa(0x400b, "out", "chacha20-poly1305", "tunnel", "2001:db8:ffff::1",
                        "2001:db8:fffe::b"),
                     lambda j: [v4("192.0.2.7", "192.0.2.8", id=0x779),
                                i4(j, "10.9.3.1", "10.9.3.2")],
                     [64000, 5000], tr % ("192.0.2.7/32", "192.0.2.8/32")))
    return c


def ip_chain(b):
    """The IP headers of a packet's bytes, outermost first, as (offset,
    version, length with IPv6 extension headers, offset of the last
    next-header byte), with the protocol after the last one and its offset.
    Follows ipip / ip6tnl (protocols 4 and 41)."""
    out, off = [], 0
    while True:
        hl, nh_off, nh = esptest.ip_header_chain(b[off:])
        out.append((off, b[off] >> 4, hl, off + nh_off))
        off += hl
        if nh not in (4, 41) or off >= len(b):
            return out, nh, off


def masked_chain(b, tcp_seq_flags=True):
    """The header chain's bytes with what segmentation may change masked:
    IPv4 total length, identification and checksum, IPv6 payload length;
    TCP sequence number, FIN and PSH, checksum."""
    chain, _, l4 = ip_chain(b)
    m = bytearray(b[:l4 + (b[l4 + 12] >> 4) * 4 if l4 + 12 < len(b) else l4])
    for off, ver, hl, _ in chain:
        if ver == 4:
            m[off + 2:off + 6] = b"\0\0\0\0"
            m[off + 10:off + 12] = b"\0\0"
        else:
            m[off + 4:off + 6] = b"\0\0"
    if tcp_seq_flags and len(m) > l4 + 18:
        m[l4 + 4:l4 + 8] = b"\0\0\0\0"
        m[l4 + 13] &= ~0x09 & 0xff
        m[l4 + 16:l4 + 18] = b"\0\0"
    return bytes(m)


def chain_problems(b):
    """Lengths and checksums of every IP header of the chain and of the TCP
    segment inside."""
    chain, nh, l4 = ip_chain(b)
    probs = []
    for off, ver, hl, _ in chain:
        if ver == 4:
            ln = struct.unpack("!H", b[off + 2:off + 4])[0]
            if ln != len(b) - off:
                probs.append("IPv4 header at %d: total length %d, want %d" %
                             (off, ln, len(b) - off))
            if esptest.ip_checksum(b[off:off + hl]) != 0:
                probs.append("IPv4 header at %d: bad checksum" % off)
        else:
            ln = struct.unpack("!H", b[off + 4:off + 6])[0]
            if ln != len(b) - off - 40:
                probs.append("IPv6 header at %d: payload length %d, want %d" %
                             (off, ln, len(b) - off - 40))
    innermost = chain[-1][0]
    p = valid_lengths_checksums(b[innermost:])
    probs += ["innermost: " + x for x in p]
    return probs


def valid_lengths_checksums(ip):
    """Problems with the lengths and checksums of an IP packet and of its
    first transport header (TCP, UDP, ICMP, ICMPv6; not in a non-first
    fragment), found by letting scapy rebuild them."""
    p = ipcls(ip[0] >> 4)(ip)
    probs = []
    if isinstance(p, IP):
        if p.len != len(ip):
            probs.append("IPv4 total length %d, packet %d" % (p.len, len(ip)))
        del p.len, p.chksum
        whole = p.frag == 0 and not p.flags.MF
    else:
        if p.plen != len(ip) - 40:
            probs.append("IPv6 payload length %d, packet %d" % (p.plen, len(ip)))
        del p.plen
        whole = True
    l4 = p.payload
    while l4.name.startswith("IPv6 Extension Header"):
        l4 = l4.payload
    if whole:
        names = [f.name for f in l4.fields_desc]
        for fn in ("chksum", "cksum", "len"):
            if fn in names and not (fn == "len" and not isinstance(l4, UDP)):
                delattr(l4, fn)
    if raw(p) != ip:
        probs.append("lengths/checksums differ from scapy's recomputation")
    return probs


def check_tcp_case(c, cs, outs):
    """Every ESP frame of a TCP case: layout, decryption, segments."""
    sa = cs.sa
    clear0 = cs.clear[0]
    ofam = esptest.family(sa.src) if sa.tunnel else clear0[0] >> 4
    mtu = sa.mtu or 1500
    err = {k: [] for k in ("seq", "hdr", "mtu", "dec", "clear", "inner", "tcp", "flags")}
    stream = {}
    seg_sizes = []
    if not c.check(len(outs) > len(cs.frames), "%s: super-packets became more ESP packets" %
                   cs.name, "%d super-packets -> %d ESP packets" % (len(cs.frames), len(outs))):
        return
    ref_mask = masked_chain(clear0)
    chain0, _, l4_0 = ip_chain(clear0)
    # where ESP goes: transport, after the first header (chain); tunnel, the
    # whole chain is inside
    first_inner = 0 if sa.tunnel else chain0[0][2]
    for i, ef in enumerate(outs):
        n = i + 1
        s64 = 1 + i
        if ef.seq != s64 or ef.iv != struct.pack(">Q", s64):
            err["seq"].append("packet %d: seq %d iv %s" % (n, ef.seq, ef.iv.hex()))
        e = esptest.outer_header_errors(ef, sa, clear0, ofam, any_id=True)
        if e:
            err["hdr"].append("packet %d: %s" % (n, "; ".join(e)))
        if ef.ip_len > mtu:
            err["mtu"].append("packet %d: outer IP packet %d bytes > mtu %d" % (n, ef.ip_len, mtu))
        try:
            d = sa.decrypt(ef, s64)
        except Exception as x:  # noqa: BLE001
            err["dec"].append("packet %d: scapy cannot decrypt: %s %s" % (n, type(x).__name__, x))
            continue
        # the decrypted ESP payload must start with the header that followed
        # the ESP insertion point in the original: the next IP header of the
        # chain, or TCP
        payload = d[first_inner:]
        want_start = clear0[first_inner:first_inner + 1]
        if len(chain0) > (0 if sa.tunnel else 1):
            if not payload or payload[0] >> 4 != want_start[0] >> 4:
                err["dec"].append("packet %d: decrypted payload starts with %s, not the inner "
                                  "IP header" % (n, payload[:4].hex()))
                continue
        # nothing of what ESP covers in clear: the headers after the
        # insertion point (the inner IP headers and TCP)
        th = d[first_inner:l4_0 + 20]
        if ef.ct[:4] == th[:4]:
            err["clear"].append("packet %d: ciphertext starts with the inner header's bytes" % n)
        for w in range(0, max(0, len(th) - 11), 4):
            if th[w:w + 12] in ef.frame:
                err["clear"].append("packet %d: inner header bytes %d..%d in clear in the frame"
                                    % (n, w, w + 11))
                break
        probs = chain_problems(d)
        if probs:
            err["inner"].append("packet %d: %s" % (n, "; ".join(probs)))
        if masked_chain(d) != ref_mask:
            m = masked_chain(d)
            off = next((k for k in range(min(len(m), len(ref_mask))) if m[k] != ref_mask[k]),
                       min(len(m), len(ref_mask)))
            err["tcp"].append("packet %d: headers differ from the original beyond lengths, "
                              "ids, checksums, seq, FIN/PSH (first at byte %d)" % (n, off))
        chain, nh, l4 = ip_chain(d)
        if nh != 6 or len(d) < l4 + 20:
            err["tcp"].append("packet %d: no TCP after the IP headers" % n)
            continue
        t_seq = struct.unpack("!I", d[l4 + 4:l4 + 8])[0]
        t_off = (d[l4 + 12] >> 4) * 4
        flags = d[l4 + 13]
        data = d[l4 + t_off:]
        seg_sizes.append(len(data))
        stream[t_seq] = (data, flags, n)
    # stream, flags
    seqs = sorted(stream)
    pos, rebuilt, gaps, flag_err = cs.isn, b"", [], []
    for sq in seqs:
        data, flags, n = stream[sq]
        if sq != pos:
            gaps.append("packet %d: seq %d, want %d" % (n, sq, pos))
        end = sq + len(data)
        sup = next((bd for bd in cs.bounds if bd[0] <= sq < bd[1]), None)
        if sup is None:
            flag_err.append("packet %d: seq %d outside every super-packet" % (n, sq))
        else:
            last = end == sup[1]
            want = 0x10 | (0x08 if last else 0) | (0x01 if last and "F" in sup[2] else 0)
            if flags != want:
                flag_err.append("packet %d: flags 0x%02x, want 0x%02x%s" %
                                (n, flags, want, " (last of its super-packet)" if last else ""))
            if end > sup[1]:
                flag_err.append("packet %d: crosses the end of its super-packet" % n)
        rebuilt += data
        pos = end
    order = [stream[sq][2] for sq in seqs]
    c.check(not err["seq"], "%s: ESP sequence numbers 1..%d in order, IV = sequence number" %
            (cs.name, len(outs)), "; ".join(err["seq"][:3]))
    c.check(not err["hdr"], "%s: outer header%s, ESP header (SPI) right at its end" %
            (cs.name, " kept" if not sa.tunnel else "s from the SA"), "; ".join(err["hdr"][:3]))
    c.check(not err["mtu"], "%s: every ESP packet within mtu %d" % (cs.name, mtu),
            "; ".join(err["mtu"][:3]))
    c.check(not err["dec"], "%s: scapy decrypts every packet, the payload starts at the "
            "header after the ESP insertion point" % cs.name, "; ".join(err["dec"][:3]))
    c.check(not err["clear"], "%s: no inner header bytes in clear" % cs.name,
            "; ".join(err["clear"][:3]))
    c.check(not err["inner"], "%s: every IP header and TCP: lengths and checksums valid" %
            cs.name, "; ".join(err["inner"][:3]))
    c.check(not err["tcp"], "%s: IP headers (options, extension headers) and TCP header "
            "(ports, ack, window, options) as in the original" % cs.name,
            "; ".join(err["tcp"][:3]))
    c.check(not gaps and order == sorted(order), "%s: TCP sequence numbers contiguous, segments "
            "in order" % cs.name, "; ".join(gaps[:3]))
    c.check(not flag_err, "%s: FIN/PSH only on the last segment of each super-packet" % cs.name,
            "; ".join(flag_err[:3]))
    c.check(rebuilt == cs.payload, "%s: inner TCP stream reassembles byte for byte" % cs.name,
            "%d bytes, want %d" % (len(rebuilt), len(cs.payload)))
    if seg_sizes:
        sizes = sorted(set(seg_sizes))
        print("    %s: %d segments, payload sizes %s; largest ESP packet %d of mtu %d" %
              (cs.name, len(seg_sizes), sizes if len(sizes) < 6 else sizes[:3] + ["..."] +
               sizes[-2:], max(ef.ip_len for ef in outs), mtu))


def seed_shape(cs):
    """(outer family, inner family) of a seed-shaped case: a transport SA
    with TCP in an IP tunnel; None otherwise."""
    chain, _, _ = ip_chain(cs.clear[0])
    if cs.sa.tunnel or len(chain) < 2:
        return None
    return chain[0][1], chain[1][1]


def seed_tcpdump(c, pcap, cases):
    """The seed's tcpdump test for the broken layout, on edgegw's output."""
    tcpdump = shutil.which("tcpdump")
    if tcpdump is None:
        print("  tcpdump not installed: only the Python form of the seed's test runs")
        return
    for cs in cases:
        shape = seed_shape(cs)
        if shape is None:
            continue
        spi = "0x%x" % cs.sa.spi
        if shape[0] == 6:
            bad = "ip6 proto 50 and ip6[56:2] = 0x4500 and ip6[60:4] = %s" % spi
            good = "ip6 proto 50 and ip6[40:4] = %s" % spi
        else:
            bad = "ip proto 50 and ip[36:2] = 0x4500 and ip[40:4] = %s" % spi
            good = "ip proto 50 and ip[20:4] = %s" % spi
        res = {}
        for tag, flt in (("bad", bad), ("good", good)):
            p = subprocess.run([tcpdump, "-nr", pcap, flt], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=120)
            res[tag] = len(p.stdout.decode(errors="replace").splitlines()) \
                if p.returncode == 0 else -1
        c.eq(res["bad"], 0, "%s: tcpdump '%s' (the seed's malformed layout) matches nothing" %
             (cs.name, bad))
        c.eq(res["good"], cs.n_out, "%s: tcpdump '%s' matches every ESP packet" % (cs.name, good))


def seed_test_python(cs, outs):
    """The seed's test in Python, for any inner family: the inner IP header's
    first byte right after ESP header + IV, and the SPI 4 bytes further (the
    layout of the broken path). Returns the number of matching packets."""
    shape = seed_shape(cs)
    if shape is None:
        return 0
    bad = 0
    for ef in outs:
        off = ef.hdr_len + 16
        ip = ef.ip
        if off + 8 > len(ip):
            continue
        first = ip[off]
        if (first == 0x45 if shape[1] == 4 else first >> 4 == 6) and \
                ip[off + 4:off + 8] == struct.pack("!I", cs.sa.spi):
            bad += 1
    return bad


# ---------------------------------------------------------------- fragments

FRAG_SA = Sa(0x4010, "out", "aes-128-gcm", "tunnel", "192.0.2.1", "198.51.100.2")
V6_SA = Sa(0x4011, "out", "aes-256-gcm", "tunnel", "2001:db8:ffff::1", "2001:db8:fffe::2")
TR_SA = Sa(0x4012, "out", "aes-128-gcm", "transport")


def frag_inputs():
    """(label, clear IP bytes, fate, sa); fate 'frag', 'one' or 'icmp'."""
    mi4 = max_inner(FRAG_SA, 0, 4)
    mi6 = max_inner(V6_SA, 0, 6)
    mit = max_inner(TR_SA, 20, 4)

    def udp4(n, df, src="10.7.0.1", dst="10.7.1.1", i=0):
        return raw(IP(src=src, dst=dst, id=0x5100 + i, flags="DF" if df else 0, ttl=33) /
                   UDP(sport=7000 + i, dport=7001) / Raw(pattern(n - 28, 50 + i)))
    x = [
        ("UDP 4028 bytes, no DF", udp4(4028, False, i=1), "frag", FRAG_SA),
        ("UDP 4040 bytes, no DF, options router alert (copied) + record route (not copied)",
         raw(IP(src="10.7.0.1", dst="10.7.1.1", id=0x5180, ttl=33,
                options=[IPOption_Router_Alert(), IPOption_RR(routers=["10.7.0.1"])]) /
             UDP(sport=7010, dport=7001) / Raw(pattern(4000, 60))), "frag", FRAG_SA),
        ("ICMP echo 3000 bytes, no DF", raw(IP(src="10.7.0.1", dst="10.7.1.1", id=0x5200) /
                                            ICMP(id=9, seq=9) / Raw(pattern(2972, 9))),
         "frag", FRAG_SA),
        ("UDP 30000 bytes, no DF", udp4(30000, False, i=2), "frag", FRAG_SA),
        ("UDP %d bytes (largest that fits), DF" % mi4, udp4(mi4, True, i=3), "one", FRAG_SA),
        ("UDP %d bytes, DF" % (mi4 + 1), udp4(mi4 + 1, True, i=4), "icmp", FRAG_SA),
        ("UDPv6 %d bytes (largest that fits)" % mi6, raw(
            IPv6(src="fd00:7::1", dst="fd00:7:1::1") / UDP(sport=1, dport=2) /
            Raw(pattern(mi6 - 48, 5))), "one", V6_SA),
        ("UDPv6 2000 bytes", raw(IPv6(src="fd00:7::1", dst="fd00:7:1::1") / UDP(sport=1, dport=3)
                                 / Raw(pattern(1952, 6))), "icmp", V6_SA),
        ("ICMPv6 echo 1500 bytes", raw(IPv6(src="fd00:7::1", dst="fd00:7:1::1") /
                                       ICMPv6EchoRequest(id=1, seq=1) / Raw(pattern(1452, 7))),
         "icmp", V6_SA),
        # (without DF the ESP packet is fragmented: tests/unit/esp test_esp.c)
        ("transport: UDP %d bytes, DF" % (mit + 1), udp4(mit + 1, True, "10.6.0.1", "10.6.1.1",
                                                          i=5), "icmp", TR_SA),
        ("transport: UDP %d bytes (largest that fits), no DF" % mit,
         udp4(mit, False, "10.6.0.1", "10.6.1.1", i=6), "one", TR_SA),
    ]
    return x, {FRAG_SA.spi: mi4, V6_SA.spi: mi6, TR_SA.spi: mit}


def ip_options(ip):
    """The options of an IPv4 header (bytes of each), NOP and EOL left out."""
    hl = (ip[0] & 15) * 4
    o, i = [], 20
    while i < hl:
        t = ip[i]
        if t == 0:
            break
        if t == 1:
            i += 1
            continue
        ln = ip[i + 1] if i + 1 < hl else 0
        if ln < 2:
            o.append(ip[i:hl])
            break
        o.append(ip[i:i + ln])
        i += ln
    return o


def frag_policies():
    return [FRAG_SA.command(), V6_SA.command(), TR_SA.command(),
            "esp policy add out src 10.7.0.0/16 dst 10.7.0.0/16 protect %d" % FRAG_SA.spi,
            "esp policy add out src fd00:7::/32 dst fd00:7::/32 protect %d" % V6_SA.spi,
            "esp policy add out src 10.6.0.0/16 dst 10.6.0.0/16 protect %d" % TR_SA.spi]


def check_fragments(c, inputs, by_spi):
    """Decrypt the ESP packets of the fragment SAs in order and match them
    to the inputs (fate 'frag': inner fragments, 'one': one packet)."""
    for sa in (FRAG_SA, V6_SA, TR_SA):
        outs = by_spi.get(sa.spi, [])
        want = [x for x in inputs if x[3] is sa and x[2] != "icmp"]
        dec, errs = [], []
        for i, ef in enumerate(outs):
            if ef.seq != i + 1 or ef.iv != struct.pack(">Q", i + 1):
                errs.append("packet %d: seq %d iv %s" % (i + 1, ef.seq, ef.iv.hex()))
            if ef.ip_len > (sa.mtu or 1500):
                errs.append("packet %d: %d bytes > mtu" % (i + 1, ef.ip_len))
            ofam = esptest.family(sa.src) if sa.tunnel else 4
            e = esptest.outer_header_errors(ef, sa, want[0][1] if want else b"\x45" + b"\0" * 19,
                                            ofam)
            if e:
                errs.append("packet %d: %s" % (i + 1, "; ".join(e)))
            try:
                dec.append(sa.decrypt(ef, i + 1))
            except Exception as x:  # noqa: BLE001
                errs.append("packet %d: scapy cannot decrypt: %s" % (i + 1, type(x).__name__))
                dec.append(None)
        c.check(not errs, "SA 0x%x: ESP sequence 1..%d, within mtu, outer headers, all decrypt" %
                (sa.spi, len(outs)), "; ".join(errs[:3]))
        # walk the decrypted packets through the expected inputs
        k = 0
        for label, clear, fate, _ in want:
            if fate == "one":
                got = dec[k] if k < len(dec) else None
                c.check(got == clear, "SA 0x%x: %s: one ESP packet, decrypts to the packet" %
                        (sa.spi, label), "got %s bytes" % (len(got) if got else None))
                if k < len(outs):
                    c.eq(outs[k].ip_len, sa.mtu or 1500, "SA 0x%x: %s: its ESP packet fills "
                         "the mtu exactly" % (sa.spi, label))
                k += 1
                continue
            ref = IP(clear)
            frags, probs = [], []
            while k < len(dec) and dec[k] is not None and dec[k][0] >> 4 == 4:
                f = IP(dec[k])
                if f.id != ref.id or f.src != ref.src or f.dst != ref.dst:
                    break
                frags.append(f)
                p = valid_lengths_checksums(dec[k])
                if p:
                    probs.append("fragment %d: %s" % (len(frags), "; ".join(p)))
                k += 1
                if not f.flags.MF:
                    break
            c.check(len(frags) > 1, "SA 0x%x: %s: fragmented before encryption" % (sa.spi, label),
                    "%d fragments, sizes %s" % (len(frags), [f.len for f in frags]))
            if not frags:
                continue
            off, data = 0, b""
            for j, f in enumerate(frags):
                last = j == len(frags) - 1
                if f.frag * 8 != off:
                    probs.append("fragment %d: offset %d, want %d" % (j + 1, f.frag * 8, off))
                if bool(f.flags.MF) == last or f.flags.DF:
                    probs.append("fragment %d: flags %s" % (j + 1, f.flags))
                if not last and len(bytes(f.payload)) % 8:
                    probs.append("fragment %d: %d data bytes, not a multiple of 8" %
                                 (j + 1, len(bytes(f.payload))))
                if (f.tos, f.ttl, f.proto) != (ref.tos, ref.ttl, ref.proto):
                    probs.append("fragment %d: tos/ttl/proto changed" % (j + 1))
                pay = raw(f)[f.ihl * 4:f.len]
                data += pay
                off += len(pay)
            c.check(not probs, "SA 0x%x: %s: %d fragments: offsets, MF, same id, lengths and "
                    "checksums" % (sa.spi, label, len(frags)), "; ".join(probs[:3]))
            if ref.ihl > 5:
                # RFC 791: the first fragment carries every option, the others
                # only those with the copied flag (NOP/EOL padding aside)
                allopts = ip_options(raw(ref))
                copied = [o for o in allopts if o[0] & 0x80]
                got = [ip_options(raw(f)) for f in frags]
                c.check(got[0] == allopts and all(g == copied for g in got[1:]),
                        "SA 0x%x: %s: first fragment has all the options, the others only "
                        "the copied ones" % (sa.spi, label),
                        "got %s, want %s then %s" % ([[o.hex() for o in g] for g in got[:3]],
                                                      [o.hex() for o in allopts],
                                                      [o.hex() for o in copied]))
            c.check(data == raw(ref)[ref.ihl * 4:], "SA 0x%x: %s: fragments reassemble to the "
                    "original" % (sa.spi, label), "%d bytes, want %d" %
                    (len(data), len(raw(ref)) - ref.ihl * 4))
        c.eq(k, len(outs), "SA 0x%x: no ESP packet left over" % sa.spi)


def check_icmp(c, inputs, mtus, access_out):
    want = [x for x in inputs if x[2] == "icmp"]
    c.eq(len(access_out), len(want), "access: one ICMP too-big message per packet too big")
    left = list(access_out)
    for label, clear, _, sa in want:
        # the message quoting this packet (IPv4 and IPv6 may come in either order)
        q = clear[:28] if clear[0] >> 4 == 4 else clear[:48]
        f = next((x for x in left if q in x), None)
        if not c.check(f is not None, "%s: an ICMP too-big quoting it on the access port" % label):
            continue
        left.remove(f)
        fam = clear[0] >> 4
        probs = []
        if f[:6] != mac(SUB_MAC) or f[6:12] != mac(MAC0):
            probs.append("Ethernet %s -> %s, want %s -> %s" % (f[6:12].hex(), f[:6].hex(),
                                                               MAC0, SUB_MAC))
        ip = f[14:]
        p = ipcls(ip[0] >> 4)(ip)
        ref = ipcls(fam)(clear)
        mtu = mtus[sa.spi]
        if fam == 4:
            if ICMP not in p or p[ICMP].type != 3 or p[ICMP].code != 4:
                probs.append("not ICMP fragmentation needed: %s" % p.summary())
            else:
                if p[ICMP].nexthopmtu != mtu:
                    probs.append("next-hop MTU %d, want %d" % (p[ICMP].nexthopmtu, mtu))
                q = bytes(p[ICMP].payload)
                if not q.startswith(clear[:28]):
                    probs.append("does not quote the IP header and 8 bytes of the packet")
        else:
            from scapy.layers.inet6 import ICMPv6PacketTooBig
            if ICMPv6PacketTooBig not in p:
                probs.append("not ICMPv6 packet too big: %s" % p.summary())
            else:
                if p[ICMPv6PacketTooBig].mtu != mtu:
                    probs.append("MTU %d, want %d" % (p[ICMPv6PacketTooBig].mtu, mtu))
                q = bytes(p[ICMPv6PacketTooBig].payload)
                if not q.startswith(clear[:48]):
                    probs.append("does not quote the packet's start")
                if len(ip) > 1280:
                    probs.append("ICMPv6 message of %d bytes > 1280" % len(ip))
        if p.dst != ref.src:
            probs.append("to %s, want the sender %s" % (p.dst, ref.src))
        probs += valid_lengths_checksums(ip[:(p.len if fam == 4 else 40 + p.plen)])
        if fam == 4 and len(ip) > 576:
            probs.append("ICMP message of %d bytes > 576" % len(ip))
        c.check(not probs, "%s: ICMP too-big back on the access port, MTU %d" % (label, mtu),
                "; ".join(probs))


# ---------------------------------------------------------------- two workers


def two_worker_run(c, binary):
    """One SA fed by two worker lcores (two RX queues on the access port):
    super-packets that become many segments on one queue, small packets on
    the other. Every ESP packet of the SA must have its own sequence number
    (= IV: a repeated GCM nonce under one key is the failure the design
    forbids 'even across GSO segments or queues')."""
    sa = Sa(0x4020, "out", "aes-128-gcm", "tunnel", "192.0.2.1", "198.51.100.20")
    src, dst = "10.20.0.1", "10.20.1.1"
    queues, n_udp, tcp_bytes = [[], []], 0, 0
    seq = 1000
    for q in range(2):
        for i in range(300 if q else 200):
            if i % (100 if q else 25) == 7:
                data = pattern(60000, i)
                p = IP(src=src, dst=dst, flags="DF") / TCP(sport=4000 + q, dport=80, seq=seq,
                                                          flags="PA") / Raw(data)
                seq += len(data)
                tcp_bytes += len(data)
            else:
                p = IP(src=src, dst=dst, id=i) / UDP(sport=5000 + q, dport=53) / \
                    Raw(b"queue %d packet %d" % (q, i))
                n_udp += 1
            queues[q].append(eth(MAC0, SUB_MAC, raw(p)))
    for q in range(2):
        egwtest.write_pcap(c.path("q%d_in.pcap" % q), queues[q])
    egwtest.write_pcap(c.path("q_empty.pcap"), [])
    cmd = c.path("q.cmd")
    with open(cmd, "w") as f:
        f.write("set fwd gateway xconnect\nport role 0 lan\nport role 1 uplink\n"
                "esp state-file %s create\n%s\n"
                "esp policy add out src 10.20.0.0/24 dst 10.20.1.0/24 protect %d\nshow config\n" %
                (c.path("q.state"), sa.command(), sa.spi))
    cpus = sorted(os.sched_getaffinity(0))
    # main lcore on the first CPU; the two workers on other CPUs where there
    # are, else sharing the last one (slow, but the numbers are what counts)
    w1, w2 = (cpus[1], cpus[2]) if len(cpus) > 2 else (cpus[-1], cpus[-1])
    eal = ["--lcores", "0@%d,1@%d,2@%d" % (cpus[0], w1, w2), "--no-huge", "-m", "512",
           "--no-pci", "--file-prefix", "egwtest_" + NAME + "_q", "--log-level=warning",
           "--vdev", "net_pcap0,rx_pcap=%s,rx_pcap=%s,tx_pcap=%s,tx_pcap=%s" % (
               c.path("q0_in.pcap"), c.path("q1_in.pcap"), c.path("qa0_out.pcap"),
               c.path("qa1_out.pcap")),
           "--vdev", "net_pcap1,rx_pcap=%s,rx_pcap=%s,tx_pcap=%s,tx_pcap=%s" % (
               c.path("q_empty.pcap"), c.path("q_empty.pcap"), c.path("qu0_out.pcap"),
               c.path("qu1_out.pcap"))]
    js = c.path("q.json")
    rc, so, se = egwtest.run_edgegw(binary, eal, ["--cmdline-file", cmd, "--idle-exit", "1000",
                                                  "--stats-json", js], timeout=240)
    if not c.eq(rc, 0, "two workers: edgegw exit status"):
        egwtest.show_output(so, se)
        return
    c.check("workers: 2" in so, "two workers: edgegw runs two workers", "show config")
    outs = [EspFrame(f) for q in range(2)
            for f in egwtest.pcap_frames(c.path("qu%d_out.pcap" % q))]
    seqs = [ef.seq for ef in outs if ef.ok]
    bad, udp, tcp = 0, 0, 0
    for ef in outs:
        try:
            if not ef.ok or ef.iv != struct.pack(">Q", ef.seq):
                raise ValueError("IV")
            d = IP(sa.decrypt(ef, ef.seq))
        except Exception:  # noqa: BLE001
            bad += 1
            continue
        if UDP in d:
            udp += 1
        elif TCP in d:
            tcp += len(bytes(d[TCP].payload))
    c.eq(bad, 0, "two workers: every ESP packet decrypts, IV = sequence number")
    c.eq((udp, tcp), (n_udp, tcp_bytes), "two workers: every UDP packet and every TCP byte "
         "came out")
    c.eq(len(set(seqs)), len(seqs), "two workers: no sequence number (IV) used twice in %d ESP "
         "packets of one SA" % len(seqs))
    c.check(sorted(seqs) == list(range(1, len(seqs) + 1)), "two workers: the numbers are 1..%d, "
            "none wasted" % len(seqs), "min %s max %s" % (min(seqs, default=None),
                                                        max(seqs, default=None)))
    s = egwtest.load_json(c, js)
    if s is not None:
        egwtest.check_identity(c, s)
        c.eq(esptest.drops(egwtest.port_by_id(s, 0)), {}, "two workers: port 0 no drops")


# ---------------------------------------------------------------- --selfcheck


def simulate(cases, finputs, mtus):
    """What a correct edgegw writes, made with scapy (--selfcheck: checks the
    checks without edgegw). Returns (access_out, uplink_out)."""
    from scapy.all import fragment
    from scapy.layers.inet6 import ICMPv6PacketTooBig
    up, acc = [], []

    def esp_len(sa, pkt_bytes):
        return len(sa.encrypt(ipcls(pkt_bytes[0] >> 4)(pkt_bytes), 1))

    for cs in cases:
        sa, seq = cs.sa, 1
        for clear in cs.clear:
            p = ipcls(clear[0] >> 4)(clear)
            t = p[TCP]
            data = bytes(t.payload)
            hdr_only = clear[:len(clear) - len(data)]
            room = (sa.mtu or 1500) - esp_len(sa, hdr_only)
            mss = room - 3  # worst-case padding
            pos, j = 0, 0
            while True:
                chunk = data[pos:pos + mss]
                last = pos + len(chunk) >= len(data)
                q = p.copy()
                ly = q
                while not isinstance(ly, TCP):
                    if isinstance(ly, IP):
                        del ly.len, ly.chksum
                        ly.id = (ly.id + j) & 0xffff
                    elif isinstance(ly, IPv6):
                        del ly.plen
                    ly = ly.payload
                ly.seq = t.seq + pos
                if not last:
                    ly.flags = t.flags.value & ~0x09
                del ly.chksum
                ly.remove_payload()
                ly.add_payload(Raw(chunk))
                b = raw(q)
                up.append(eth(MAC0, SUB_MAC, sa.encrypt(ipcls(b[0] >> 4)(b), seq)))
                seq += 1
                pos += len(chunk)
                j += 1
                if last:
                    break
    seqs = {}
    for label, clear, fate, sa in finputs:
        if fate == "icmp":
            mtu = mtus[sa.spi]
            if clear[0] >> 4 == 4:
                r = IP(clear)
                m = IP(src="192.0.2.1", dst=r.src) / ICMP(type=3, code=4, nexthopmtu=mtu) / \
                    Raw(clear[:548])
            else:
                r = IPv6(clear)
                m = IPv6(src="2001:db8:ffff::1", dst=r.src) / ICMPv6PacketTooBig(mtu=mtu) / \
                    Raw(clear[:1280 - 48])
            acc.append(mac(SUB_MAC) + mac(MAC0) + struct.pack(
                "!H", 0x0800 if clear[0] >> 4 == 4 else 0x86dd) + raw(m))
            continue
        pkts = [clear]
        if fate == "frag":
            fs = ((mtus[sa.spi] - (clear[0] & 15) * 4) // 8) * 8
            fr = fragment(IP(clear), fragsize=fs)
            for f in fr[1:]:  # RFC 791: only copied options after the first
                f.options = [o for o in f.options if o.copy_flag]
                del f.ihl, f.len, f.chksum
            pkts = [raw(f) for f in fr]
        for b in pkts:
            n = seqs.get(sa.spi, 1)
            seqs[sa.spi] = n + 1
            up.append(eth(MAC0, SUB_MAC, sa.encrypt(ipcls(b[0] >> 4)(b), n)))
    return acc, up


def main():
    selfcheck = sys.argv[1:] == ["--selfcheck"]
    binary = sys.argv[1]
    c = egwtest.Checker(NAME)
    if not conf.crypto_valid:
        c.skip("python3-cryptography is missing: scapy cannot do ESP")
    cases = build_tcp_cases()
    finputs, mtus = frag_inputs()
    lines = []
    for cs in cases:
        lines += [cs.sa.command(), cs.policy()]
    lines += frag_policies()
    access_in = []
    for j in range(2):
        for cs in cases:
            if j < len(cs.frames):
                access_in.append(cs.frames[j])
    access_in += [eth(MAC0, SUB_MAC, x[1]) for x in finputs]
    print("  access input: %d frames, sizes %s" % (len(access_in), [len(f) for f in access_in]))
    if selfcheck:
        access_out, uplink_out = simulate(cases, finputs, mtus)
        egwtest.write_pcap(c.path("gso_uplink_out.pcap"), uplink_out)
        s = None
    else:
        rc, so, se, s, access_out, uplink_out = esptest.gateway_run(
            c, binary, NAME, "gso", lines, access_in, [], timeout=240)
        if esptest.esp_unsupported(so, se):
            c.check(False, "edgegw accepts the esp commands", se.strip().splitlines()[-1])
            c.finish()
        if not c.eq(rc, 0, "edgegw exit status"):
            c.finish()
    by_spi = {}
    stray = 0
    for f in uplink_out:
        ef = EspFrame(f)
        if ef.ok:
            by_spi.setdefault(ef.spi, []).append(ef)
        else:
            stray += 1
    c.eq(stray, 0, "uplink: every frame is ESP")
    n_esp = len(uplink_out) - stray
    for cs in cases:
        outs = by_spi.get(cs.sa.spi, [])
        cs.n_out = len(outs)
        check_tcp_case(c, cs, outs)
        c.eq(seed_test_python(cs, outs), 0, "%s: the seed's test for the broken layout (Python, "
             "any inner family) matches nothing" % cs.name)
    seed_tcpdump(c, c.path("gso_uplink_out.pcap"), cases)
    check_fragments(c, finputs, by_spi)
    check_icmp(c, finputs, mtus, access_out)
    if s is not None:
        egwtest.check_identity(c, s)
        p0, p1 = egwtest.port_by_id(s, 0), egwtest.port_by_id(s, 1)
        n_icmp = sum(1 for x in finputs if x[2] == "icmp")
        c.eq(p0["rx"], len(access_in), "port 0 rx")
        esptest.check_drops(c, p0, {"esp_too_big": n_icmp}, "port 0")
        c.eq(p1["tx_out"], n_esp, "port 1 tx_out = ESP packets written")
        c.eq(p0["tx_out"], n_icmp, "port 0 tx_out = ICMP messages")
        c.eq(p0.get("created"), n_esp - (len(access_in) - n_icmp) + n_icmp,
             "port 0 created = segments and fragments beyond one per input, ICMP messages")
        tot = (s.get("esp") or {}).get("totals", {})
        n_seg = sum(cs.n_out - len(cs.frames) for cs in cases)
        n_frag = n_esp - sum(cs.n_out for cs in cases) - \
            sum(1 for x in finputs if x[2] != "icmp")
        c.eq((tot.get("out_packets"), tot.get("segments"), tot.get("fragments"),
              tot.get("icmp")), (n_esp, n_seg, n_frag, n_icmp),
             "--stats-json esp totals (out_packets, segments, fragments, icmp)")
        sas = {x["spi"]: x for x in (s.get("esp") or {}).get("sas", []) if x["dir"] == "out"}
        bad = []
        for spi, outs in sorted(by_spi.items()):
            j = sas.get(spi)
            got = None if j is None else (j["packets"], j["seq"])
            if got != (len(outs), len(outs) + 1):
                bad.append("SA 0x%x: (packets, next seq) %s, want %s" %
                           (spi, got, (len(outs), len(outs) + 1)))
        c.check(not bad, "--stats-json, every SA: packets = its ESP packets, next seq after "
                "them", "; ".join(bad[:3]))
    if not selfcheck:
        two_worker_run(c, binary)
    c.finish()


if __name__ == "__main__":
    main()
