#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the demo captures shipped in config/ (deterministic: same bytes each run).

  scripts/make-demo-pcap.py [outdir]     (default: config/ of this repository)

config/demo.pcap         access side: subscriber traffic towards the gateway
config/demo-uplink.pcap  uplink side: downstream replies
config/demo-rxtok.pcap   access side, for the zero-copy (rxtokens) part of the
                         demo: 16 UDP payloads to port 5000 (IPv4 and IPv6,
                         16..8000 bytes, in egw-rxtok-consumer's test format:
                         "EGWP", seq, length, CRC32, pattern) and 5 frames of
                         other flows, forwarded to the uplink
config/demo-esp-uplink.pcap  uplink side, for the ESP part of the demo
                         (config/esp-demo.cmd): 16 downstream replies from the
                         servers to the subscribers (8 IPv4, 8 IPv6) as ESP
                         from the peer gateway 198.51.100.1 to 192.0.2.1,
                         tunnel mode, AES-128-GCM, SPI 0x2000, sequence numbers
                         1..16, with the DEMO-ONLY key of config/esp-demo.cmd;
                         and 2 replies in clear that the inbound policy says
                         must arrive protected (dropped: esp_in_clear).
                         Needs python3-cryptography (scapy's ESP).

The dataplane ports are net_pcap vdevs, whose MACs are fixed by the driver:
net_pcap0 (access) 02:70:63:61:70:00, net_pcap1 (uplink) 02:70:63:61:70:01.
What the gateway does with each kind of frame (counts in demo.pcap):

  IPv4 UDP/TCP/ICMP to the access port's MAC        180  forwarded to the uplink
  IPv6 UDP/TCP/ICMPv6 to the access port's MAC       60  forwarded to the uplink
  802.1Q (VLAN 100) IPv4                              20  forwarded to the uplink
  QinQ (802.1ad 10 / 802.1Q 100) IPv4                  6  forwarded to the uplink
  ARP requests (broadcast) and replies                14  to the control path
  PPPoE discovery PADI (broadcast) and PADR            4  to the control path
  PPPoE session (PPP IPv4)                             2  to the control path
  IPv4 unicast to another station                      4  dropped: otherhost
  802.2 LLC (STP BPDU)                                 2  dropped: unhandled
  malformed: VLAN tag cut short (16 bytes)             1  dropped: bad_frame
"""
import os
import random
import struct
import sys
import zlib

from scapy.all import (ARP, ICMP, IP, TCP, UDP, Dot1AD, Dot1Q, Ether, ICMPv6EchoRequest,
                       ICMPv6EchoReply, IPv6, LLC, PPP, PPPoE, PPPoED, Raw, STP, wrpcap)

ACCESS_MAC = "02:70:63:61:70:00"
UPLINK_MAC = "02:70:63:61:70:01"
ROUTER_MAC = "02:00:5e:00:00:fe"  # the next hop behind the uplink
OTHER_MAC = "02:00:5e:00:00:99"   # a station that is not the gateway
SUBS = [("02:00:5e:10:00:%02x" % i, "100.64.0.%d" % (10 + i), "2001:db8:100::%x" % (10 + i))
        for i in range(1, 9)]
SERVERS4 = ["203.0.113.%d" % i for i in (10, 20, 53, 80)]
SERVERS6 = ["2001:db8:200::%x" % i for i in (10, 20, 53, 80)]


def pad(data, n):
    return Raw(bytes(range(256)) * (n // 256) + bytes(range(n % 256)))


def access_frames(rnd):
    f = []
    for i in range(180):
        mac, ip4, _ = SUBS[i % len(SUBS)]
        dst = SERVERS4[i % len(SERVERS4)]
        kind = i % 3
        if kind == 0:
            l4 = UDP(sport=40000 + i, dport=53) / pad(None, rnd.choice((20, 40, 60)))
        elif kind == 1:
            l4 = TCP(sport=50000 + i, dport=443, flags="S" if i % 2 else "A", seq=i * 1000) / \
                pad(None, rnd.choice((0, 100, 512, 1200)))
        else:
            l4 = ICMP(type=8, id=i, seq=i) / pad(None, 56)
        f.append(Ether(dst=ACCESS_MAC, src=mac) / IP(src=ip4, dst=dst, ttl=64) / l4)
    for i in range(60):
        mac, _, ip6 = SUBS[i % len(SUBS)]
        dst = SERVERS6[i % len(SERVERS6)]
        kind = i % 3
        if kind == 0:
            l4 = UDP(sport=41000 + i, dport=53) / pad(None, 40)
        elif kind == 1:
            l4 = TCP(sport=51000 + i, dport=443, flags="S") / pad(None, rnd.choice((0, 300)))
        else:
            l4 = ICMPv6EchoRequest(id=i, seq=i) / pad(None, 56)
        f.append(Ether(dst=ACCESS_MAC, src=mac) / IPv6(src=ip6, dst=dst, hlim=64) / l4)
    for i in range(20):
        mac, ip4, _ = SUBS[i % len(SUBS)]
        f.append(Ether(dst=ACCESS_MAC, src=mac) / Dot1Q(vlan=100, prio=i % 8) /
                 IP(src=ip4, dst=SERVERS4[0]) / UDP(sport=42000 + i, dport=123) / pad(None, 48))
    for i in range(6):
        mac, ip4, _ = SUBS[i % len(SUBS)]
        f.append(Ether(dst=ACCESS_MAC, src=mac) / Dot1AD(vlan=10) / Dot1Q(vlan=100) /
                 IP(src=ip4, dst=SERVERS4[1]) / UDP(sport=43000 + i, dport=123) / pad(None, 48))
    for i in range(10):
        mac, ip4, _ = SUBS[i % len(SUBS)]
        f.append(Ether(dst="ff:ff:ff:ff:ff:ff", src=mac) /
                 ARP(op=1, hwsrc=mac, psrc=ip4, pdst="100.64.0.1"))
    for i in range(4):
        mac, ip4, _ = SUBS[i]
        f.append(Ether(dst=ACCESS_MAC, src=mac) /
                 ARP(op=2, hwsrc=mac, psrc=ip4, hwdst=ACCESS_MAC, pdst="100.64.0.1"))
    tags = bytes.fromhex("01010000" "01030004") + b"demo"  # Service-Name, Host-Uniq
    for i in range(2):
        mac = SUBS[4 + i][0]
        f.append(Ether(dst="ff:ff:ff:ff:ff:ff", src=mac) / PPPoED(code=0x09, sessionid=0) /
                 Raw(tags))
        f.append(Ether(dst=ACCESS_MAC, src=mac) / PPPoED(code=0x19, sessionid=0) / Raw(tags))
    for i in range(2):
        mac = SUBS[6 + i][0]
        f.append(Ether(dst=ACCESS_MAC, src=mac) / PPPoE(sessionid=0x100 + i) / PPP(proto=0x0021) /
                 IP(src="100.64.1.%d" % (i + 1), dst=SERVERS4[2]) / UDP(sport=44000, dport=53) /
                 pad(None, 30))
    for i in range(4):
        mac, ip4, _ = SUBS[i]
        f.append(Ether(dst=OTHER_MAC, src=mac) / IP(src=ip4, dst="100.64.0.99") /
                 UDP(sport=45000 + i, dport=5000) / pad(None, 32))
    for i in range(2):
        f.append(Ether(dst="01:80:c2:00:00:00", src=SUBS[i][0]) / LLC() / STP())
    rnd.shuffle(f)
    # the malformed frame: an 802.1Q tag cut short after its TCI, no ethertype
    bad = bytes(Ether(dst=ACCESS_MAC, src=SUBS[0][0], type=0x8100))[:14] + b"\x00\x64"
    f.insert(len(f) // 2, Ether(bad))
    return f


def uplink_frames(rnd):
    f = []
    for i in range(40):
        mac, ip4, _ = SUBS[i % len(SUBS)]
        src = SERVERS4[i % len(SERVERS4)]
        if i % 2:
            l4 = UDP(sport=53, dport=40000 + i) / pad(None, rnd.choice((40, 120)))
        else:
            l4 = TCP(sport=443, dport=50000 + i, flags="SA", ack=i * 1000 + 1) / \
                pad(None, rnd.choice((0, 1400)))
        f.append(Ether(dst=UPLINK_MAC, src=ROUTER_MAC) / IP(src=src, dst=ip4, ttl=60) / l4)
    for i in range(16):
        _, _, ip6 = SUBS[i % len(SUBS)]
        f.append(Ether(dst=UPLINK_MAC, src=ROUTER_MAC) /
                 IPv6(src=SERVERS6[i % len(SERVERS6)], dst=ip6, hlim=60) /
                 ICMPv6EchoReply(id=i, seq=i) / pad(None, 56))
    for i in range(2):
        f.append(Ether(dst="ff:ff:ff:ff:ff:ff", src=ROUTER_MAC) /
                 ARP(op=1, hwsrc=ROUTER_MAC, psrc="192.0.2.1", pdst="192.0.2.2"))
    rnd.shuffle(f)
    return f


def rxtok_payload(seq, length):
    """egw-rxtok-consumer's test payload (app/rxtok-consumer/main.c)."""
    body = bytes((seq + i) & 0xff for i in range(16, length))
    return b"EGWP" + struct.pack(">III", seq, length, zlib.crc32(body)) + body


def rxtok_frames():
    f = []
    sizes = [16, 100, 512, 1400, 2000, 3000, 4000, 4096, 5000, 6500, 8000, 1200]
    for i in range(16):
        mac, ip4, ip6 = SUBS[i % len(SUBS)]
        n = sizes[i % len(sizes)]
        l3 = IPv6(src=ip6, dst=SERVERS6[0]) if i % 2 else IP(src=ip4, dst=SERVERS4[0])
        f.append(Ether(dst=ACCESS_MAC, src=mac) / l3 / UDP(sport=46000 + i, dport=5000) /
                 Raw(rxtok_payload(i, n)))
        if i % 3 == 2:  # another flow: forwarded to the uplink as usual
            f.append(Ether(dst=ACCESS_MAC, src=mac) / IP(src=ip4, dst=SERVERS4[2]) /
                     UDP(sport=47000 + i, dport=53) / pad(None, 40))
    return f


# The ESP part of the demo (config/esp-demo.cmd). DEMO-ONLY keys: they are
# published here and in config/esp-demo.cmd, so anyone can decrypt the
# traffic -- which is what the demo shows. Key = 16 bytes + 4-byte salt.
ESP_GW, ESP_PEER = "192.0.2.1", "198.51.100.1"
ESP_SPI_IN = 0x2000
ESP_KEY_IN = b"demo-only-key-in" + b"salt"


def esp_uplink_frames():
    from scapy.layers.ipsec import ESP, SecurityAssociation
    sa = SecurityAssociation(ESP, spi=ESP_SPI_IN, crypt_algo="AES-GCM", crypt_key=ESP_KEY_IN,
                             crypt_icv_size=16, tunnel_header=IP(src=ESP_PEER, dst=ESP_GW))
    f = []
    for i in range(16):
        _, ip4, ip6 = SUBS[i % len(SUBS)]
        if i % 2 == 0:
            inner = IP(src=SERVERS4[i % len(SERVERS4)], dst=ip4, ttl=60) / \
                UDP(sport=50000 + i, dport=40000 + i) / Raw(b"edgegw ESP demo reply %d" % i)
        else:
            inner = IPv6(src=SERVERS6[i % len(SERVERS6)], dst=ip6, hlim=60) / \
                ICMPv6EchoReply(id=i, seq=i) / pad(None, 56)
        # IV = the sequence number (never repeat a GCM IV under one key)
        e = sa.encrypt(inner, seq_num=i + 1, iv=struct.pack(">Q", i + 1))
        f.append(Ether(dst=UPLINK_MAC, src=ROUTER_MAC) / e)
    for i in range(2):
        _, ip4, _ = SUBS[i]
        f.insert(5 + 6 * i, Ether(dst=UPLINK_MAC, src=ROUTER_MAC) /
                 IP(src=SERVERS4[0], dst=ip4) / UDP(sport=50100 + i, dport=41000 + i) /
                 Raw(b"edgegw ESP demo: in clear, must be dropped"))
    return f


def write(path, frames):
    # fixed timestamps (1 ms apart) so that the files are byte-identical
    for i, p in enumerate(frames):
        p.time = 1700000000 + i / 1000.0
    wrpcap(path, frames)
    print("%s: %d frames" % (path, len(frames)))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "config")
    rnd = random.Random(2024)
    write(os.path.join(out, "demo.pcap"), access_frames(rnd))
    write(os.path.join(out, "demo-uplink.pcap"), uplink_frames(rnd))
    write(os.path.join(out, "demo-rxtok.pcap"), rxtok_frames())
    write(os.path.join(out, "demo-esp-uplink.pcap"), esp_uplink_frames())


if __name__ == "__main__":
    main()
