#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers of bench/ipsec_secgw.sh (edgegw's ESP gateway against DPDK's
examples/ipsec-secgw over net_memif).

  ipsec_secgw_bench.py template <out> <out|in> <size> <flows> <spi> <keyhex>
      the generator's template file (bench/esp_gen.c): clear UDP/IPv4 frames
      (outbound) or AES-128-GCM tunnel-mode ESP frames built for sequence
      number 0 plus the tables that give the ICV of any other sequence number
      (inbound); <size> is the clear frame with its 4-byte FCS
  ipsec_secgw_bench.py verify <capture.pcap> <out|in> <size> <flows> <spi> <keyhex>
      checks the frames a gateway sent (kept by the generator's sink): ESP that
      decrypts to the frames sent (outbound), or the inner frames (inbound),
      sequence numbers increasing; prints one JSON line, exit 1 on a bad frame
  ipsec_secgw_bench.py report <outdir> <sizes> <dirs> <duts> <reps> <secs> <warmup> <max_runnable> <near_ns>
      the table
"""
import json
import statistics
import struct
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

DP_MAC0 = bytes.fromhex("02000000e000")   # DUT port 0: frames go to it
GEN_MAC0 = bytes.fromhex("020000009e00")  # generator port 0
GEN_MAC1 = bytes.fromhex("020000009e01")  # generator port 1: the DUT's neighbour
LAN_HOST = bytes([100, 64, 0, 2])         # host on the protected side
REMOTE_NET = (203, 0, 113)                # the network behind the peer
GW_ADDR = bytes([192, 0, 2, 1])           # the gateway's tunnel endpoint
PEER_ADDR = bytes([198, 51, 100, 1])      # the peer gateway's tunnel endpoint


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4(src, dst, proto, payload, ttl=64, ident=0):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, 0x4000, ttl, proto,
                      0, src, dst)
    return hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:] + payload


def inner_packet(direction, size, i):
    """The clear IPv4 packet of flow i: a frame of <size> bytes with FCS."""
    ip_len = size - 4 - 14
    remote = bytes(REMOTE_NET + (1 + i % 250,))
    src, dst = (LAN_HOST, remote) if direction == "out" else (remote, LAN_HOST)
    udp_len = ip_len - 20
    payload = bytes((i + k) & 0xff for k in range(udp_len - 8))
    udp = struct.pack("!HHHH", 1024 + i, 9, udp_len, 0) + payload
    return ipv4(src, dst, 17, udp, ident=i)


def esp_parts(key, ip, iv):
    """(nonce, plaintext) of tunnel-mode ESP carrying ip."""
    padlen = (-(len(ip) + 2)) % 4
    pt = ip + bytes(range(1, padlen + 1)) + bytes([padlen, 4])
    return key[16:20] + iv, pt


# GCM's GF(2^128) multiplication (NIST SP 800-38D, bit-reflected)
def gmul(x, y):
    r = 0xE1 << 120
    z, v = 0, y
    for i in range(127, -1, -1):
        if (x >> i) & 1:
            z ^= v
        v = (v >> 1) ^ r if v & 1 else v >> 1
    return z


def seq_tables(key, ct_len):
    """tables[j][b]: what byte j (0: most significant) of the sequence number
    being b adds to the tag, for a ciphertext of ct_len bytes and an 8-byte
    AAD (SPI, seq): the AAD block is the first of m = 1 + ceil(ct/16) + 1
    GHASH blocks, so it contributes X1 * H^m."""
    enc = Cipher(algorithms.AES(key[:16]), modes.ECB()).encryptor()
    h = int.from_bytes(enc.update(bytes(16)) + enc.finalize(), "big")
    m = 1 + (ct_len + 15) // 16 + 1
    hm = h
    for _ in range(m - 1):
        hm = gmul(hm, h)
    tab = []
    for j in range(4):
        row = []
        for b in range(256):
            blk = bytearray(16)
            blk[4 + j] = b
            row.append(gmul(int.from_bytes(blk, "big"), hm).to_bytes(16, "big"))
        tab.append(row)
    return tab


def esp_frame(key, spi, ip, iv, seq):
    nonce, pt = esp_parts(key, ip, iv)
    aad = struct.pack("!II", spi, seq)
    ct = AESGCM(key[:16]).encrypt(nonce, pt, aad)
    esp = aad + iv + ct
    return DP_MAC0 + GEN_MAC0 + b"\x08\x00" + ipv4(PEER_ADDR, GW_ADDR, 50, esp)


def cmd_template(out, direction, size, flows, spi, keyhex):
    size, flows, spi, key = int(size), int(flows), int(spi, 0), bytes.fromhex(keyhex)
    frames, tables = [], None
    for i in range(flows):
        ip = inner_packet(direction, size, i)
        if direction == "out":
            frames.append((DP_MAC0 + GEN_MAC0 + b"\x08\x00" + ip, 0, 0))
            continue
        iv = struct.pack("!Q", 0x5eed000000000000 + i)
        f = esp_frame(key, spi, ip, iv, 0)
        frames.append((f, 14 + 20 + 4, len(f) - 16))
        if tables is None:
            tables = seq_tables(key, len(f) - 14 - 20 - 16 - 16)
            # check: the tag of another sequence number from the tables
            for seq in (1, 0x01020304, 0xdeadbeef):
                want = esp_frame(key, spi, ip, iv, seq)[-16:]
                got = bytearray(f[-16:])
                for j in range(4):
                    for k, x in enumerate(tables[j][(seq >> (24 - 8 * j)) & 0xff]):
                        got[k] ^= x
                if bytes(got) != want:
                    sys.exit("template: the ICV tables do not reproduce AES-GCM (seq %#x)" % seq)
    with open(out, "wb") as fh:
        fh.write(b"EGWT" + struct.pack("<II", len(frames), 1 if tables else 0))
        for f, so, io in frames:
            fh.write(struct.pack("<HHH", len(f), so, io) + f)
        if tables:
            for row in tables:
                fh.write(b"".join(row))


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    off, out = 24, []
    while off + 16 <= len(data):
        _, _, caplen, wirelen = struct.unpack("<IIII", data[off:off + 16])
        out.append((data[off + 16:off + 16 + caplen], wirelen))
        off += 16 + caplen
    return out


def norm(ip):
    """An IPv4 packet without TTL and header checksum (routers may change them)."""
    return ip[:8] + b"\0" + ip[9:10] + b"\0\0" + ip[12:]


def cmd_verify(cap, direction, size, flows, spi, keyhex):
    size, flows, spi, key = int(size), int(flows), int(spi, 0), bytes.fromhex(keyhex)
    want = {norm(inner_packet(direction, size, i)) for i in range(flows)}
    res = dict(frames=0, good=0, errors={}, ttl=[], seq_first=None, seq_last=None)
    last_seq = None

    def bad(why):
        res["errors"][why] = res["errors"].get(why, 0) + 1

    for frame, wirelen in read_pcap(cap):
        res["frames"] += 1
        if len(frame) != wirelen:
            bad("truncated capture")
            continue
        if frame[0:6] != GEN_MAC1:
            bad("destination MAC is not the neighbour's")
            continue
        if frame[12:14] != b"\x08\x00":
            bad("not IPv4")
            continue
        ip = frame[14:14 + struct.unpack("!H", frame[16:18])[0]]
        if csum(ip[:20]) != 0:
            bad("IPv4 header checksum")
            continue
        if direction == "out":
            if ip[9] != 50 or ip[12:16] != GW_ADDR or ip[16:20] != PEER_ADDR:
                bad("not ESP from %s to %s" % (".".join(map(str, GW_ADDR)),
                                               ".".join(map(str, PEER_ADDR))))
                continue
            esp = ip[20:]
            got_spi, seq = struct.unpack("!II", esp[:8])
            if got_spi != spi:
                bad("SPI %#x" % got_spi)
                continue
            try:
                pt = AESGCM(key[:16]).decrypt(key[16:20] + esp[8:16], esp[16:], esp[:8])
            except Exception:  # cryptography raises InvalidTag
                bad("ICV does not verify")
                continue
            if pt[-1] != 4:
                bad("next header %d" % pt[-1])
                continue
            inner = pt[:len(pt) - 2 - pt[-2]]
            if pt[len(inner):-2] != bytes(range(1, pt[-2] + 1)):
                bad("padding")
                continue
            if last_seq is not None and seq <= last_seq:
                bad("sequence number not increasing")
            last_seq = seq
            res["seq_first"] = seq if res["seq_first"] is None else res["seq_first"]
            res["seq_last"] = seq
        else:
            inner = ip
        if norm(inner) not in want:
            bad("inner packet is none of those sent")
            continue
        if inner[8] not in res["ttl"]:
            res["ttl"].append(inner[8])
        res["good"] += 1
    print(json.dumps(res))
    return 0 if res["frames"] and res["good"] == res["frames"] else 1


def cmd_report(out, sizes, dirs, duts, reps, secs, warmup, max_runnable, near):
    sizes, dirs, duts, reps = sizes.split(), dirs.split(), duts.split(), int(reps)
    max_runnable, near = int(max_runnable), float(near)
    runs, bad = {}, False
    for size in sizes:
        for d in dirs:
            for rnd in range(1, reps + 1):
                for dut in duts:
                    tag = "%s-%s-%s-%d" % (d, size, dut, rnd)
                    try:
                        s = json.load(open("%s/%s.samples.json" % (out, tag)))
                        v = json.load(open("%s/%s.verify.json" % (out, tag)))
                        g = json.load(open("%s/%s.gen.json" % (out, tag)))
                    except (OSError, ValueError) as e:
                        print("%s: missing results: %s" % (tag, e), file=sys.stderr)
                        bad = True
                        continue
                    try:
                        zc = open("%s/%s.zc" % (out, tag)).read().strip()
                    except OSError:
                        zc = "?"
                    try:
                        c2c = [float(x) for x in open("%s/%s.c2c" % (out, tag)).read().split()]
                    except (OSError, ValueError):
                        c2c = []
                    if len(c2c) != 2 or min(c2c) <= 0:
                        place = "?"
                    elif max(c2c) < near:
                        place = "near"
                    elif min(c2c) >= near:
                        place = "far"
                    else:
                        place = "mixed"
                    rates = s["rates"]
                    if rates and max(rates) - min(rates) > 0.15 * statistics.median(rates):
                        place = "mixed"
                    runs[(size, d, dut, rnd)] = dict(s=s, v=v, g=g, zc=zc, c2c=c2c, place=place)
    with open(out + "/results.tsv", "w") as f:
        f.write("dir\tsize\tdut\tround\tmpps\tdut_rx_mpps\tlost_in_window\tback_out_port0\t"
                "gen_tx\tgen_rx\tverified\tkept\trunnable_max\tzero_copy\tc2c_ns\tplacement\tsamples_mpps\n")
        for (size, d, dut, rnd), r in sorted(runs.items()):
            s, v, g = r["s"], r["v"], r["g"]
            f.write("%s\t%s\t%s\t%d\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n" % (
                d, size, dut, rnd, s["mpps"], s["rx_mpps"], s["lost"], s["back0"],
                g["tx_frames"], g["rx_frames"], v["good"], v["frames"], s["runnable_max"], r["zc"], "/".join("%.0f" % x for x in r["c2c"]), r["place"],
                " ".join("%.3f" % (x / 1e6) for x in s["rates"])))
    print()
    print("Forwarded rate (DUT port 1 TX, ethdev opackets over telemetry), %s s after %s s of "
          "warm-up, median of %d round(s), every round in brackets; size = the clear frame "
          "with FCS" % (secs, warmup, reps))
    print()
    hdr = "| cell | " + " | ".join("%s Mpps" % d for d in duts)
    pair = [x for x in duts if x not in ("io", "base")]
    pair = pair if len(pair) == 2 else None
    # the base build against the same peer
    bpair = ("base", pair[1]) if pair and "base" in duts and pair[0] == "edgegw" else None
    for p in (pair, bpair):
        if p:
            hdr += " | ratio %s/%s" % tuple(p)
    print(hdr + " |")
    print("|---" * (len(duts) + 1 + (pair is not None) + (bpair is not None)) + "|")
    for d in dirs:
        for size in sizes:
            med, cells = {}, []
            for dut in duts:
                rr = [runs[(size, d, dut, k)] for k in range(1, reps + 1)
                      if (size, d, dut, k) in runs]
                if not rr:
                    cells.append("-")
                    continue
                med[dut] = statistics.median(x["s"]["mpps"] for x in rr)
                cells.append("%.3f (%s)" % (med[dut], " ".join(
                    "%.2f%s" % (x["s"]["mpps"], {"near": "n", "far": "f"}.get(x["place"], "?"))
                    for x in rr)))
            line = "| %s %s B | %s" % ("outbound" if d == "out" else "inbound", size,
                                        " | ".join(cells))
            for p in (pair, bpair):
                if p:
                    line += " | %s" % ("%.3f" % (med[p[0]] / med[p[1]])
                                       if p[0] in med and med.get(p[1]) else "-")
            print(line + " |")
    print("(rounds: n = the two CPUs near, sharing a cache, f = far, ? = mixed or unknown: "
          "core-to-core round trip before and after the run below %g ns or not, or its "
          "one-second rates spread by more than 15%%)" % near)
    # the same by placement: compare gateways measured in the same one
    states = [st for st in ("near", "far") if any(r["place"] == st for r in runs.values())]
    if states:
        print()
        print("By placement (runs with the two CPUs near or far throughout; mixed ones left "
              "out): median Mpps (runs)")
        print()
        print("| cell | placement | " + " | ".join(duts) + (" | ratio |" if pair else " |"))
        print("|---" * (len(duts) + 2 + (pair is not None)) + "|")
        for d in dirs:
            for size in sizes:
                for st in states:
                    m, cells = {}, []
                    for dut in duts:
                        v = [runs[(size, d, dut, k)]["s"]["mpps"] for k in range(1, reps + 1)
                             if (size, d, dut, k) in runs
                             and runs[(size, d, dut, k)]["place"] == st]
                        if v:
                            m[dut] = statistics.median(v)
                        cells.append("%.3f (%d)" % (m[dut], len(v)) if v else "-")
                    if not m:
                        continue
                    line = "| %s %s B | %s | %s" % ("outbound" if d == "out" else "inbound",
                                                   size, st, " | ".join(cells))
                    if pair:
                        line += " | %s" % ("%.3f" % (m[pair[0]] / m[pair[1]])
                                           if pair[0] in m and m.get(pair[1]) else "-")
                    print(line + " |")
    print()
    # checks: what went in came out, and what came out was right
    for (size, d, dut, rnd), r in sorted(runs.items()):
        s, v, g = r["s"], r["v"], r["g"]
        tag = "%s-%s-%s-%d" % (d, size, dut, rnd)
        fwd = s["mpps"] * 1e6 * int(secs)
        if s["lost"] > 0.01 * max(fwd, 1):
            print("%s: the DUT received %d frames more than it sent in the window (%.1f%%): "
                  "it dropped them" % (tag, s["lost"], 100.0 * s["lost"] / max(fwd, 1)),
                  file=sys.stderr)
            bad = True
        if s["back0"]:
            print("%s: %d frames went back out of port 0" % (tag, s["back0"]), file=sys.stderr)
            bad = True
        if not v.get("io") and (v["good"] != v["frames"] or not v["frames"]):
            print("%s: %d of %d kept frames wrong: %s" % (tag, v["frames"] - v["good"],
                                                          v["frames"], v["errors"]),
                  file=sys.stderr)
            bad = True
    noisy = ["%s-%s-%s-%d" % (d, size, dut, rnd) for (size, d, dut, rnd), r in runs.items()
             if r["s"]["runnable_max"] > max_runnable]
    if noisy:
        print("warning: more than %d tasks were runnable during %s: disturbed" % (
            max_runnable, ", ".join(noisy)))
    print("checks: in every run the DUT sent on port 1 what it received on port 0 (within 1%% "
          "in the window), and every frame the generator kept (first %s per run) %s" % (
              max((r["v"]["frames"] for r in runs.values()), default=0),
              "verified" if not bad else "-- FAILURES above"))
    modes = sorted({r["zc"] for r in runs.values()})
    print("generator memif ports: %s" % ", ".join(
        {"yes": "zero-copy", "no": "copy mode"}.get(m, m) + " (%d runs)" %
        sum(1 for r in runs.values() if r["zc"] == m) for m in modes))
    print("results: %s/results.tsv" % out)
    return 1 if bad else 0


if __name__ == "__main__":
    cmds = {"template": (cmd_template, 6), "verify": (cmd_verify, 6), "report": (cmd_report, 9)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) != cmds[sys.argv[1]][1] + 2:
        sys.exit(__doc__)
    fn, _ = cmds[sys.argv[1]]
    sys.exit(fn(*sys.argv[2:]) or 0)
