#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpus of fuzz_pppoe_fast (tests/fuzz/corpus/pppoe_fast): valid frames
for the sessions fuzz_pppoe_fast.c binds, in its input layout (see the
comment at the top of that file). Built from the RFCs with struct only:
RFC 2516 (PPPoE), RFC 1661 (PPP, PFC), RFC 791 / RFC 8200 (IPv4, IPv6 and
its extension headers), RFC 9293 (TCP options: MSS, SACK-permitted,
timestamps, window scale), RFC 4861 (Router Solicitation). Checksums are
computed here.

Usage: gen_corpus_pppoe_fast.py [DIR]   (default: corpus/pppoe_fast next to it)
"""
import os
import struct
import sys

PORT_MAC = [bytes([2, 0xAC, 0, 0, 0, 1]), bytes([2, 0xAC, 0, 0, 0, 2])]
UPLINK = bytes([2, 0xEE, 0, 0, 0, 1])
SERVER4 = bytes([198, 51, 100, 7])
SERVER6 = bytes.fromhex("20010db8ff0000000000000000000007")

# the sessions of fuzz_pppoe_fast.c: id, client MAC, tags, IPv4, /64
SESS = {
    "A": (1, bytes([2, 0, 0, 0, 0, 0x0A]), [], bytes([100, 64, 0, 2]),
          bytes.fromhex("20010db800010002")),
    "B": (2, bytes([2, 0, 0, 0, 0, 0x0B]), [(0x8100, 0x2064)], bytes([100, 64, 0, 3]), None),
    "C": (3, bytes([2, 0, 0, 0, 0, 0x0C]), [(0x88A8, 0x00C8), (0x8100, 0x612C)],
          bytes([100, 64, 0, 4]), bytes.fromhex("20010db800010004")),
    "D": (4, bytes([2, 0, 0, 0, 0, 0x0D]), [], None, bytes.fromhex("20010db800010005")),
    "E": (5, bytes([2, 0, 0, 0, 0, 0x0E]), [], bytes([100, 64, 0, 6]),
          bytes.fromhex("20010db800010006")),
    "N": (6, bytes([2, 0, 0, 0, 0, 0x0F]), [], bytes([100, 64, 0, 7]),
          bytes.fromhex("20010db800010007")),
    "X": (7, bytes([2, 0, 0, 0, 0, 0x10]), [], bytes([100, 64, 0, 8]), None),  # closing
}


def csum(data):
    if len(data) & 1:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def tcp_syn(src, dst, v6, opts, data=b"", flags=0x02):
    opts += b"\0" * (-len(opts) % 4)
    hdr = struct.pack("!HHIIBBHHH", 40001, 443, 1000, 0, (20 + len(opts)) // 4 << 4, flags,
                      65535, 0, 0) + opts
    seg = hdr + data
    if v6:
        ph = src + dst + struct.pack("!I3xB", len(seg), 6)
    else:
        ph = src + dst + struct.pack("!xBH", 6, len(seg))
    ck = csum(ph + seg)
    return seg[:16] + struct.pack("!H", ck) + seg[18:]


def ip4(src, dst, proto, payload, df=True, opts=b""):
    opts += b"\0" * (-len(opts) % 4)
    h = struct.pack("!BBHHHBBH4s4s", 0x45 + len(opts) // 4, 0, 20 + len(opts) + len(payload),
                    0x1234, 0x4000 if df else 0, 64, proto, 0, src, dst) + opts
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


def ip6(src, dst, nh, payload):
    return struct.pack("!IHBB", 6 << 28, len(payload), nh, 64) + src + dst + payload


def ext(nh, n8=0):
    """A hop-by-hop or destination options header of (n8 + 1) * 8 bytes: PadN."""
    body = bytes([nh, n8]) + bytes([1, 4 + 8 * n8]) + b"\0" * (4 + 8 * n8)
    return body


def addr6(pfx, iid=5):
    return pfx + struct.pack("!Q", iid)


MSS_OPTS = (bytes([2, 4, 0x05, 0xB4])        # MSS 1460
            + bytes([4, 2])                   # SACK permitted
            + bytes([8, 10]) + struct.pack("!II", 1, 0)  # timestamps
            + bytes([1])                      # NOP
            + bytes([3, 3, 7]))               # window scale 7


def eth(dst, src, tags, etype):
    f = dst + src
    for tpid, tci in tags:
        f += struct.pack("!HH", tpid, tci)
    return f + struct.pack("!H", etype)


def pppoe(name, proto, payload, pfc=False, pad=0):
    sid, mac, tags, _, _ = SESS[name]
    port = 1 if name in ("C", "E") else 0
    p = bytes([proto]) if pfc else struct.pack("!H", proto)
    body = p + payload
    return eth(PORT_MAC[port], mac, tags, 0x8864) + struct.pack("!BBHH", 0x11, 0, sid,
                                                                 len(body)) + body + b"\0" * pad


def down(ip, v6):
    return eth(PORT_MAC[0], UPLINK, [], 0x86DD if v6 else 0x0800) + ip


def up4(name, opts=MSS_OPTS, dst=SERVER4):
    src = SESS[name][3]
    return ip4(src, dst, 6, tcp_syn(src, dst, False, opts))


def up6(name, exts=(), opts=MSS_OPTS):
    src = addr6(SESS[name][4])
    l4 = tcp_syn(src, SERVER6, True, opts)
    nh = 6
    for e in reversed(exts):
        l4 = ext(nh, e[1]) + l4
        nh = e[0]
    return ip6(src, SERVER6, nh, l4)


def rs(name):
    src = bytes.fromhex("fe80000000000000") + struct.pack("!Q", 0x1122334455667788)
    dst = bytes.fromhex("ff020000000000000000000000000002")
    msg = bytes([133, 0, 0, 0, 0, 0, 0, 0])
    ck = csum(src + dst + struct.pack("!I3xB", len(msg), 58) + msg)
    msg = msg[:2] + struct.pack("!H", ck) + msg[4:]
    h = struct.pack("!IHBB", 6 << 28, len(msg), 58, 255) + src + dst
    return h + msg


def seed(frames, segs=1, encap=False, headroom=None, port=0, cuts=(0, 0, 0), hairpin=False):
    b0 = (segs - 1) | (4 if encap else 0) | (8 if headroom is not None else 0)
    b0 |= ((len(frames) - 1) & 7) << 4 | (0x80 if hairpin else 0)
    b2 = port | ((len(frames) - 1) & 8) << 4
    out = bytes([b0, (headroom or 0) // 2, b2]) + bytes(cuts)
    for i, f in enumerate(frames):
        if i + 1 < len(frames):
            out += struct.pack("!H", len(f))
        out += f
    return out


HOP, DST, ROUT = 0, 60, 43


def seeds():
    a4 = up4("A")
    yield "decap_v4_syn_mss", seed([pppoe("A", 0x0021, a4)])
    yield "decap_v4_syn_3seg", seed([pppoe("A", 0x0021, a4, pad=6)], segs=3, cuts=(10, 40, 90))
    yield "decap_v4_syn_4seg_tiny", seed([pppoe("A", 0x0021, a4)], segs=4, cuts=(3, 7, 30))
    yield "decap_v6_syn", seed([pppoe("A", 0x0057, up6("A"))])
    yield "decap_v6_ext_syn", seed([pppoe("A", 0x0057, up6("A", [(HOP, 0), (DST, 1)]))])
    yield "decap_v6_ext_syn_2seg", seed([pppoe("A", 0x0057, up6("A", [(HOP, 0), (DST, 1)]))],
                                        segs=2, cuts=(70, 0, 0))
    yield "decap_vlan_pfc", seed([pppoe("B", 0x21, up4("B"), pfc=True)])
    yield "decap_qinq_v6_fixed_mss", seed([pppoe("C", 0x0057, up6("C"))], port=1, segs=2,
                                          cuts=(40, 0, 0))
    yield "decap_v6only_fixed_clamp", seed([pppoe("D", 0x0057, up6("D"))])
    yield "decap_burst_mixed", seed([
        pppoe("A", 0x0021, a4),
        pppoe("N", 0x0021, up4("N")),               # not bound: control
        pppoe("A", 0x0057, rs("A")),                 # Router Solicitation: control
        pppoe("A", 0xC021, bytes.fromhex("09010008 11223344")),  # LCP: control
        pppoe("D", 0x0021, up4("A")),               # IPv4 on an IPv6-only session
        pppoe("A", 0x0021, up4("B")),               # spoofed source
    ])
    yield "decap_hairpin_to_c", seed([pppoe("A", 0x0021, up4("A", dst=SESS["C"][3]))],
                                     hairpin=True)
    # a burst longer than the data path's prefetch distance (8)
    yield "decap_burst_12", seed([pppoe("A", 0x0021, a4), pppoe("B", 0x0021, up4("B")),
                                  pppoe("X", 0x0021, up4("X"))] * 4)
    # frames that cannot be linearised (longer than a buffer), headers split:
    # IPv4 options past the first segment, a Router Solicitation's type
    big4 = ip4(SESS["A"][3], SERVER4, 17, b"\0" * 2400, opts=bytes([7, 39, 4]) + b"\0" * 36)
    yield "decap_v4_options_unlinearisable", seed([pppoe("A", 0x0021, big4)], segs=3,
                                                   cuts=(6, 128, 0))
    rs_big = rs("A")
    rs_big = rs_big[:4] + struct.pack("!H", 8 + 2208) + rs_big[6:] + b"\0" * 2208
    yield "decap_v6_rs_unlinearisable", seed([pppoe("A", 0x0057, rs_big)], segs=3,
                                              cuts=(7, 128, 0))
    yield "encap_v4_syn", seed([down(ip4(SERVER4, SESS["A"][3], 6,
                                         tcp_syn(SERVER4, SESS["A"][3], False, MSS_OPTS,
                                                 flags=0x12)), False)], encap=True)
    d6 = addr6(SESS["A"][4])
    yield "encap_v6_ext_syn", seed([down(ip6(SERVER6, d6, HOP, ext(6) + tcp_syn(
        SERVER6, d6, True, MSS_OPTS, flags=0x12)), True)], encap=True)
    yield "encap_v4_qinq_2seg", seed([down(ip4(SERVER4, SESS["C"][3], 6, tcp_syn(
        SERVER4, SESS["C"][3], False, MSS_OPTS, b"x" * 100)), False)], encap=True, segs=2,
        cuts=(20, 0, 0))
    yield "encap_v4_too_big", seed([down(ip4(SERVER4, SESS["C"][3], 17, b"\0" * 1420), False)],
                                   encap=True, segs=2, cuts=(128, 0, 0))
    yield "encap_v6_ext_too_big", seed([down(ip6(SERVER6, addr6(SESS["D"][4]), DST,
                                                 ext(17, 2) + b"\0" * 1480), True)], encap=True)
    yield "encap_small_headroom", seed([down(ip4(SERVER4, SESS["B"][3], 6, tcp_syn(
        SERVER4, SESS["B"][3], False, MSS_OPTS)), False)], encap=True, headroom=2)
    yield "encap_burst", seed([
        down(ip4(SERVER4, SESS["A"][3], 17, b"\0" * 40), False),
        down(ip4(SERVER4, bytes([100, 64, 0, 99]), 17, b"\0" * 40), False),  # no session
        down(ip6(SERVER6, addr6(SESS["E"][4]), 17, b"\0" * 40), True),
        down(ip4(SERVER4, SESS["N"][3], 17, b"\0" * 40), False),  # not bound: pass
    ], encap=True)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "corpus", "pppoe_fast")
    os.makedirs(d, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
