# SPDX-License-Identifier: BSD-3-Clause
"""ESP helpers for the ESP integration tests (test_esp_interop.py, test_esp_gso.py).

The independent ESP peers are scapy's scapy.layers.ipsec.SecurityAssociation
(encrypts what edgegw must decrypt, decrypts what edgegw wrote) and tshark's
ESP dissector (decrypts and checks the ICV of what edgegw wrote). This module
only parses headers and drives those two; it never encrypts or decrypts on
its own, so a bug here cannot hide a bug in edgegw by making the same
mistake twice.

Sa             one SA: its 'esp sa add' command, its scapy SecurityAssociation,
               its tshark UAT record (8 fields in tshark 4.0)
EspFrame       an Ethernet frame carrying ESP (VLAN tags, IPv4/IPv6 with
               extension headers, NAT-T UDP), parsed
gateway_run    edgegw with the gateway engine on two net_pcap ports
tshark_esp     tshark's view of every ESP frame of a capture
"""
import hashlib
import os
import shutil
import socket
import struct
import subprocess

import egwtest

from scapy.all import IP, UDP, IPv6, raw  # noqa: E402
from scapy.layers.ipsec import ESP, SecurityAssociation, _ESPPlain  # noqa: E402

# net_pcap port MACs: fixed by the driver (checked against 'show config')
MAC0 = "02:70:63:61:70:00"  # port 0, access
MAC1 = "02:70:63:61:70:01"  # port 1, uplink

ICV_LEN = 16
IV_LEN = 8
ESP_HDR = 8

# command-language name -> (scapy crypt_algo, key bytes without salt,
# tshark 4.0 encryption name or None when tshark 4.0 cannot decrypt it)
AEADS = {
    "aes-128-gcm": ("AES-GCM", 16, "AES-GCM with 16 octet ICV [RFC4106]"),
    "aes-256-gcm": ("AES-GCM", 32, "AES-GCM with 16 octet ICV [RFC4106]"),
    "chacha20-poly1305": ("CHACHA20-POLY1305", 32, None),
}


def family(addr):
    return 6 if ":" in addr else 4


def derive_key(spi, direction, aead, tag=b"edgegw-test"):
    """Deterministic key + 4-byte salt for an SA (test keys only)."""
    n = AEADS[aead][1] + 4
    h = b""
    i = 0
    while len(h) < n:
        h += hashlib.sha256(b"%s %s %d %s %d" % (tag, direction.encode(), spi,
                                                 aead.encode(), i)).digest()
        i += 1
    return h[:n]


class Sa:
    """One SA as edgegw is told it and as scapy and tshark use it."""

    def __init__(self, spi, direction, aead="aes-128-gcm", mode="tunnel", src=None, dst=None,
                 esn=False, natt=False, sport=None, dport=None, seq=None, window=None,
                 mtu=None, ttl=None, key=None, extra=""):
        assert direction in ("out", "in") and mode in ("tunnel", "transport")
        assert aead in AEADS
        self.spi, self.dir, self.aead, self.mode = spi, direction, aead, mode
        self.src, self.dst = src, dst
        self.esn, self.natt, self.sport, self.dport = esn, natt, sport, dport
        self.seq, self.window, self.mtu, self.ttl = seq, window, mtu, ttl
        self.key = key if key is not None else derive_key(spi, direction, aead)
        self.extra = extra
        self._scapy = None

    @property
    def tunnel(self):
        return self.mode == "tunnel"

    def command(self):
        w = ["esp sa add %d %s aead %s key %s mode %s" %
             (self.spi, self.dir, self.aead, self.key.hex(), self.mode)]
        if self.tunnel:
            w.append("src %s dst %s" % (self.src, self.dst))
        if self.esn:
            w.append("esn on")
        if self.window is not None:
            w.append("window %d" % self.window)
        if self.natt:
            w.append("natt")
            if self.sport is not None:
                w.append("sport %d" % self.sport)
            if self.dport is not None:
                w.append("dport %d" % self.dport)
        if self.mtu is not None:
            w.append("mtu %d" % self.mtu)
        if self.ttl is not None:
            w.append("ttl %d" % self.ttl)
        if self.seq is not None:
            w.append("seq %d" % self.seq)
        if self.extra:
            w.append(self.extra)
        return " ".join(w)

    def udp_ports(self):
        return (self.sport or 4500, self.dport or 4500)

    def scapy(self):
        if self._scapy is None:
            algo = AEADS[self.aead][0]
            th = None
            if self.tunnel:
                ttl = self.ttl or 64
                th = (IP(src=self.src, dst=self.dst, ttl=ttl) if family(self.src) == 4 else
                      IPv6(src=self.src, dst=self.dst, hlim=ttl))
            nt = None
            if self.natt:
                sp, dp = self.udp_ports()
                nt = UDP(sport=sp, dport=dp)
            self._scapy = SecurityAssociation(ESP, spi=self.spi, crypt_algo=algo,
                                              crypt_key=self.key, crypt_icv_size=ICV_LEN,
                                              tunnel_header=th, nat_t_header=nt,
                                              esn_en=self.esn)
        return self._scapy

    def encrypt(self, ip_pkt, seq64, iv=None):
        """scapy encrypts an IP/IPv6 packet with sequence number seq64 (the
        high word goes into the ICV only, as ESN wants); the IV is the 64-bit
        sequence number unless given. Returns the outer IP packet's bytes."""
        assert self.esn or seq64 < 1 << 32
        s = self.scapy()
        # set the counters on the SA rather than passing them: scapy takes
        # "seq_num or self.seq_num", so a low word of 0 could not be passed
        s.seq_num = seq64 & 0xffffffff
        s.esn = seq64 >> 32
        if iv is None:
            iv = struct.pack(">Q", seq64)
        out = bytearray(raw(s.encrypt(ip_pkt, iv=iv)))
        if self.natt and out[0] >> 4 == 4:
            # scapy 2.5.0 builds the IPv4 NAT-T packet before the ESP
            # payload is attached: its UDP length says 8. Set it right
            # (the UDP checksum is 0, nothing else depends on it).
            hl, _, _ = ip_header_chain(bytes(out))
            out[hl + 4:hl + 6] = struct.pack("!H", len(out) - hl)
        return bytes(out)

    def encrypt_plain(self, ip_hdr_pkt, payload, nh, seq64, padding, padlen=None):
        """scapy encrypts a hand-made ESP payload (payload bytes, padding
        bytes, pad length, next header) -- for malformed trailers. ip_hdr_pkt
        is the outer IP header (no payload). Returns the IP packet's bytes."""
        s = self.scapy()
        esp = _ESPPlain(spi=self.spi, seq=seq64 & 0xffffffff, iv=struct.pack(">Q", seq64),
                        data=payload, padding=padding,
                        padlen=len(padding) if padlen is None else padlen, nh=nh)
        enc = s.crypt_algo.encrypt(s, esp, s.crypt_key, ICV_LEN, esn_en=self.esn,
                                   esn=seq64 >> 32)
        hdr = ip_hdr_pkt.copy()
        if isinstance(hdr, IP):
            hdr.proto = 50
            del hdr.len
            del hdr.chksum
        else:
            hdr.nh = 50
            del hdr.plen
        return raw(hdr / enc)

    def decrypt(self, ef, seq64):
        """scapy decrypts an EspFrame (ICV checked); returns the clear IP
        packet's bytes (tunnel: the inner packet; transport: the packet with
        its IP header restored, as scapy rebuilds it). Raises on ICV failure."""
        s = self.scapy()
        s.esn = seq64 >> 32
        data = ef.for_scapy()
        pkt = IP(data) if ef.version == 4 else IPv6(data)
        return raw(s.decrypt(pkt))

    def tshark_uat(self, outer_family):
        name = AEADS[self.aead][2]
        if name is None or self.esn:
            return None
        return '"%s","*","*","0x%08x","%s","0x%s","NULL",""' % (
            "IPv4" if outer_family == 4 else "IPv6", self.spi, name, self.key.hex())


def ip_checksum(hdr):
    if len(hdr) % 2:
        hdr += b"\x00"
    s = sum(struct.unpack("!%dH" % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


IPV6_EXT = (0, 43, 60)  # hop-by-hop, routing, destination options (ESP goes after them)


def ip_header_chain(ip):
    """(header length incl. IPv6 extension headers, offset of the last
    next-header byte, protocol after the chain) of an IP packet's bytes."""
    v = ip[0] >> 4
    if v == 4:
        return (ip[0] & 15) * 4, 9, ip[9]
    nh_off, nh, off = 6, ip[6], 40
    while nh in IPV6_EXT and off + 2 <= len(ip):
        nh_off, nh = off, ip[off]
        off += (ip[off + 1] + 1) * 8
    return off, nh_off, nh


def l2_len(frame):
    """Length of the Ethernet header with its VLAN tags, and the ethertype."""
    off = 12
    et = struct.unpack("!H", frame[off:off + 2])[0]
    while et in (0x8100, 0x88a8):
        off += 4
        et = struct.unpack("!H", frame[off:off + 2])[0]
    return off + 2, et


class EspFrame:
    """An Ethernet frame with ESP (or not: .esp_off is None), parsed. UDP is
    taken for NAT-T encapsulation when a port is one of natt_ports."""

    def __init__(self, frame, natt_ports=(4500,)):
        self.frame = frame
        self.l2len, self.ethertype = l2_len(frame)
        ip = frame[self.l2len:]
        self.version = ip[0] >> 4 if ip else 0
        self.ok = False
        self.esp_off = None
        self.udp = None
        if self.version == 4:
            self.ip_len = struct.unpack("!H", ip[2:4])[0]
        elif self.version == 6:
            self.ip_len = 40 + struct.unpack("!H", ip[4:6])[0]
        else:
            return
        self.ip = ip[:self.ip_len]
        self.trailing = len(ip) - self.ip_len  # Ethernet padding or lies
        self.hdr_len, self.nh_off, self.proto = ip_header_chain(self.ip)
        off = self.hdr_len
        if self.proto == 17 and len(self.ip) >= off + 8:
            udp = struct.unpack("!HHHH", self.ip[off:off + 8])
            if udp[0] in natt_ports or udp[1] in natt_ports:
                self.udp = udp
                self.esp_off = off + 8
        elif self.proto == 50:
            self.esp_off = off
        if self.esp_off is not None and len(self.ip) >= self.esp_off + ESP_HDR + IV_LEN:
            self.spi, self.seq = struct.unpack("!II", self.ip[self.esp_off:self.esp_off + 8])
            self.iv = self.ip[self.esp_off + 8:self.esp_off + 16]
            self.ct = self.ip[self.esp_off + 16:]
            self.ok = True

    def for_scapy(self):
        """The IP packet with a NAT-T UDP header taken out (scapy's decrypt
        wants ESP right after the IP header chain), lengths adjusted."""
        ip = bytearray(self.ip)
        if self.udp is not None:
            del ip[self.hdr_len:self.hdr_len + 8]
            ip[self.nh_off] = 50
        if self.version == 4:
            ip[2:4] = struct.pack("!H", len(ip))
            ip[10:12] = b"\x00\x00"
            ih = (ip[0] & 15) * 4
            ip[10:12] = struct.pack("!H", ip_checksum(bytes(ip[:ih])))
        else:
            ip[4:6] = struct.pack("!H", len(ip) - 40)
        return bytes(ip)


def udp6_sum(ip, udp_off):
    """The UDP checksum over IPv6 of the datagram at udp_off of the IPv6
    packet ip, summed here (pseudo-header with the header's destination: no
    routing header in these tests); 0 when it verifies."""
    udp = ip[udp_off:udp_off + struct.unpack("!H", ip[udp_off + 4:udp_off + 6])[0]]
    data = ip[8:40] + struct.pack("!IxxxB", len(udp), 17) + udp
    if len(data) & 1:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def outer_header_errors(ef, sa, clear_ip, outer_family, any_id=False):
    """What is wrong with the outer headers of an ESP frame edgegw made from
    clear_ip with sa (empty list: nothing). any_id: a transport-mode IPv4
    header may carry another identification (segments of a DF packet)."""
    e = []
    if not ef.ok:
        return ["not an ESP frame (version %d proto %s)" % (ef.version, getattr(ef, "proto", None))]
    if ef.version != outer_family:
        e.append("outer IPv%d, want IPv%d" % (ef.version, outer_family))
        return e
    want_et = 0x0800 if outer_family == 4 else 0x86dd
    if ef.ethertype != want_et:
        e.append("ethertype 0x%04x, want 0x%04x" % (ef.ethertype, want_et))
    if ef.trailing:
        e.append("%d bytes after the IP packet in the frame" % ef.trailing)
    ip = ef.ip
    if outer_family == 4:
        ih = (ip[0] & 15) * 4
        if ip_checksum(ip[:ih]) != 0:
            e.append("outer IPv4 header checksum wrong")
    clear_hdr_len, _, _ = ip_header_chain(clear_ip)
    if sa.tunnel:
        want_off = 20 if outer_family == 4 else 40
        if outer_family == 4:
            src, dst, ttl = ip[12:16], ip[16:20], ip[8]
            af = socket.AF_INET
        else:
            src, dst, ttl = ip[8:24], ip[24:40], ip[7]
            af = socket.AF_INET6
        want = (socket.inet_pton(af, sa.src), socket.inet_pton(af, sa.dst))
        if (src, dst) != want:
            e.append("outer addresses are not the SA's")
        if ttl != (sa.ttl or 64):
            e.append("outer TTL/hop limit %d, want %d" % (ttl, sa.ttl or 64))
    else:
        want_off = clear_hdr_len
        # transport: the IP header (and extension headers) as they came,
        # but for the protocol / next header, length and checksum
        got, want = bytearray(ip[:clear_hdr_len]), bytearray(clear_ip[:clear_hdr_len])
        _, nh_off, _ = ip_header_chain(clear_ip)
        for b in (got, want):
            if outer_family == 4:
                b[2:4] = b[10:12] = b"\x00\x00"
                if any_id:
                    b[4:6] = b"\x00\x00"
            else:
                b[4:6] = b"\x00\x00"
            b[nh_off] = 0
        if got != want:
            e.append("transport: IP header (and extension headers) changed")
    if sa.natt:
        want_off += 8
        if ef.udp is None:
            e.append("no NAT-T UDP header")
        else:
            sp, dp, ln, ck = ef.udp
            if (sp, dp) != sa.udp_ports():
                e.append("UDP ports %d->%d, want %d->%d" % ((sp, dp) + sa.udp_ports()))
            if outer_family == 4 and ck != 0:
                # RFC 3948 2.1: IPv4 NAT-T sends 0
                e.append("UDP checksum 0x%04x, want 0" % ck)
            elif outer_family == 6 and (ck == 0 or udp6_sum(ip, ef.hdr_len) != 0):
                # RFC 8200 8.1: never 0 over IPv6, and it must verify
                e.append("UDP checksum 0x%04x over IPv6 does not verify" % ck)
            if ln != len(ip) - ef.hdr_len:
                e.append("UDP length %d, want %d" % (ln, len(ip) - ef.hdr_len))
    elif ef.proto != 50:
        e.append("protocol after the IP header %d, want 50" % ef.proto)
    if ef.esp_off != want_off:
        e.append("ESP header at IP offset %s, want %d" % (ef.esp_off, want_off))
    return e


def gateway_run(c, binary, name, tag, esp_lines, access_in, uplink_in, extra_cmds=(),
                timeout=180, state_file=None, routed=False):
    """edgegw, gateway engine (xconnect, or routed: extra_cmds then give the
    addresses, neighbours and routes): port 0 lan (rx access_in), port 1
    uplink (rx uplink_in), a fresh state file in the work dir, esp_lines
    after it. Returns (rc, stdout, stderr, stats JSON or None, access_out
    frames, uplink_out frames)."""
    a_in, u_in = c.path(tag + "_access_in.pcap"), c.path(tag + "_uplink_in.pcap")
    a_out, u_out = c.path(tag + "_access_out.pcap"), c.path(tag + "_uplink_out.pcap")
    egwtest.write_pcap(a_in, access_in)
    egwtest.write_pcap(u_in, uplink_in)
    state = state_file or c.path(tag + ".state")
    cmd = c.path(tag + ".cmd")
    with open(cmd, "w") as f:
        f.write("set fwd gateway%s\nport role 0 lan\nport role 1 uplink\nshow config\n" %
                ("" if routed else " xconnect"))
        # 'create' only for a new file: a missing one is refused otherwise
        f.write("esp state-file %s%s\n" % (state, "" if os.path.exists(state) else " create"))
        for line in esp_lines:
            f.write(line + "\n")
        for line in extra_cmds:
            f.write(line + "\n")
        f.write("show esp sa\nshow esp policy\n")
    with open(cmd) as f:
        print("  command file %s:\n%s" % (cmd, "".join("    | " + ln for ln in f)), end="")
    js = c.path(tag + ".json")
    app = ["--cmdline-file", cmd, "--idle-exit", "700", "--stats-json", js]
    rc, so, se = egwtest.run_edgegw(
        binary, egwtest.eal_args(name) +
        ["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (a_in, a_out),
         "--vdev", "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (u_in, u_out)],
        app, timeout=timeout)
    with open(c.path(tag + ".stdout"), "w") as f:
        f.write(so)
    with open(c.path(tag + ".stderr"), "w") as f:
        f.write(se)
    s = None
    if rc == 0:
        s = egwtest.load_json(c, js)
    else:
        egwtest.show_output(so, se)
    if "mac %s" % MAC0 not in so or "mac %s" % MAC1 not in so:
        c.check(False, "%s: port MACs are %s and %s ('show config')" % (tag, MAC0, MAC1),
                "the test's frames are addressed to these")
    try:
        ao = egwtest.pcap_frames(a_out)
    except Exception:  # noqa: BLE001 -- missing when edgegw died early
        ao = []
    try:
        uo = egwtest.pcap_frames(u_out)
    except Exception:  # noqa: BLE001
        uo = []
    return rc, so, se, s, ao, uo


def esp_unsupported(so, se):
    """True if edgegw refused the esp commands as unknown (feature not built)."""
    return "unknown command" in se and "esp" in se


def drops(port):
    return {k: v for k, v in port["drops"].items() if v}


def check_drops(c, port, want, what):
    """Exactly the drop counters in want (reason -> count), every other 0."""
    got = drops(port)
    for r in sorted(set(got) | set(want)):
        c.eq(got.get(r, 0), want.get(r, 0), "%s: drop %s" % (what, r))
    unknown = [r for r in want if r not in port["drops"]]
    if unknown:
        c.check(False, "%s: drop reasons %s exist in --stats-json" % (what, unknown))


def tshark_path():
    return shutil.which("tshark")


def tshark_esp(pcap, uats, extra_fields=()):
    """tshark decrypts every ESP frame of pcap with the UAT records given;
    returns {frame number (1-based): dict of fields} and tshark's stderr."""
    fields = ["frame.number", "frame.protocols", "esp.spi", "esp.sequence", "esp.iv",
              "esp.icv_good", "esp.icv_bad", "esp.protocol", "esp.contained_data",
              "_ws.expert.message"] + list(extra_fields)
    cmd = ["tshark", "-n", "-r", pcap, "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=a", "-E", "aggregator=|",
           "-o", "esp.enable_encryption_decode:TRUE",
           "-o", "esp.enable_authentication_check:TRUE"]
    for u in uats:
        cmd += ["-o", "uat:esp_sa:" + u]
    for f in fields:
        cmd += ["-e", f]
    env = dict(os.environ)
    env.setdefault("HOME", "/tmp")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300, env=env)
    out = {}
    for line in p.stdout.decode(errors="replace").splitlines():
        v = line.split("\t")
        v += [""] * (len(fields) - len(v))
        d = dict(zip(fields, v))
        out[int(d["frame.number"])] = d
    err = "\n".join(ln for ln in p.stderr.decode(errors="replace").splitlines()
                    if "Running as user" not in ln)
    return out, err, p.returncode
