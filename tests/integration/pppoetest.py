# SPDX-License-Identifier: BSD-3-Clause
"""A PPPoE/PPP client for the edgegw tests (run with /usr/bin/python3).

Written from the RFCs, not from edgegw's code: RFC 2516 discovery, RFC 1661
LCP, RFC 1334 PAP, RFC 1994 CHAP-MD5, RFC 1332/1877 IPCP, RFC 5072 IPv6CP and
the RFC 4861 router advertisement that follows it. Frames are built with
struct (so that a test controls every byte, hostile ones included); the
builders are checked against scapy's dissectors by selfcheck().

Pieces:
  Port     the kernel side of a tap: an AF_PACKET socket and a reader thread
           that keeps every frame edgegw sent (VLAN tags put back from the
           packet auxdata) and hands the ones for a client's MAC to it
  Client   one subscriber: discovery, LCP, authentication, IPCP, IPv6CP,
           data; the reader thread answers what a PPP peer answers (Configure
           requests, Echo-Requests, Terminate-Requests), the test thread
           drives the rest and can hold any step back (the handoff test)
  Edgegw   edgegw started with -i on a FIFO, so that commands can be typed
           while it runs, and their output read back
"""
import hashlib
import ipaddress
import os
import socket
import struct
import subprocess
import threading
import time

import egwtest

ETH_P_ALL = 0x0003
ETH_DISC = 0x8863
ETH_SESS = 0x8864
TPID_8021Q = 0x8100
TPID_8021AD = 0x88A8
VLAN_TPIDS = (TPID_8021Q, TPID_8021AD, 0x9100)

PADI, PADO, PADR, PADS, PADT = 0x09, 0x07, 0x19, 0x65, 0xA7
TAG_END, TAG_SERVICE, TAG_AC_NAME, TAG_HOST_UNIQ, TAG_COOKIE = 0, 0x0101, 0x0102, 0x0103, 0x0104
TAG_RELAY_ID, TAG_MAX_PAYLOAD = 0x0110, 0x0120
TAG_SERVICE_ERR, TAG_SYSTEM_ERR, TAG_GENERIC_ERR = 0x0201, 0x0202, 0x0203

PPP_IP, PPP_IPV6, PPP_IPCP, PPP_IPV6CP = 0x0021, 0x0057, 0x8021, 0x8057
PPP_LCP, PPP_PAP, PPP_CHAP = 0xC021, 0xC023, 0xC223

# RFC 1661 codes
CONF_REQ, CONF_ACK, CONF_NAK, CONF_REJ = 1, 2, 3, 4
TERM_REQ, TERM_ACK, CODE_REJ, PROTO_REJ = 5, 6, 7, 8
ECHO_REQ, ECHO_REP, DISCARD_REQ = 9, 10, 11
# LCP options
LCP_MRU, LCP_ACCM, LCP_AUTH, LCP_MAGIC, LCP_PFC, LCP_ACFC = 1, 2, 3, 5, 7, 8
# IPCP options (RFC 1332, RFC 1877)
IPCP_ADDR, IPCP_DNS1, IPCP_DNS2 = 3, 129, 131
IPV6CP_IID = 1

SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_OUTGOING = 4
PACKET_IGNORE_OUTGOING = 23
SO_TIMESTAMPNS = 35
SO_RCVBUFFORCE = 33
RCVBUF = 64 << 20  # bytes of frames a reader may fall behind by
PACKET_STATISTICS = 6
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40


def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


def mac_str(b):
    return ":".join("%02x" % x for x in b)


# ---------------------------------------------------------------- builders


def eth(dst, src, etype, vlans=()):
    """Ethernet header; vlans: (tpid, tci) pairs, outer first."""
    h = mac_bytes(dst) + mac_bytes(src)
    for tpid, tci in vlans:
        h += struct.pack("!HH", tpid, tci)
    return h + struct.pack("!H", etype)


def tags(*tl):
    """Discovery tags from (type, value) pairs."""
    return b"".join(struct.pack("!HH", t, len(v)) + bytes(v) for t, v in tl)


def pppoe(code, sid, payload, length=None, ver_type=0x11):
    """PPPoE header + payload; length overrides the length field (hostile cases)."""
    n = len(payload) if length is None else length
    return struct.pack("!BBHH", ver_type, code, sid, n) + payload


def ppp_ctl(code, ident, data):
    """An LCP/NCP/PAP/CHAP packet: code, identifier, length, data."""
    return struct.pack("!BBH", code, ident, 4 + len(data)) + data


def opts(*ol):
    """Configuration options from (type, value) pairs."""
    return b"".join(struct.pack("!BB", t, 2 + len(v)) + bytes(v) for t, v in ol)


def parse_opts(data):
    out = []
    i = 0
    while i + 2 <= len(data):
        t, n = data[i], data[i + 1]
        if n < 2 or i + n > len(data):
            raise ValueError("option %d length %d at %d of %d" % (t, n, i, len(data)))
        out.append((t, data[i + 2:i + n]))
        i += n
    if i != len(data):
        raise ValueError("trailing byte in options")
    return out


def parse_tags(data):
    out = []
    i = 0
    while i + 4 <= len(data):
        t, n = struct.unpack_from("!HH", data, i)
        if i + 4 + n > len(data):
            raise ValueError("tag 0x%04x length %d past the payload" % (t, n))
        out.append((t, data[i + 4:i + 4 + n]))
        i += 4 + n
        if t == TAG_END:
            break
    return out


def tag_get(tl, t):
    for tt, v in tl:
        if tt == t:
            return v
    return None


class Frame:
    """A received Ethernet frame, tags split off."""

    def __init__(self, raw, t):
        self.raw = raw
        self.t = t
        self.dst, self.src = mac_str(raw[0:6]), mac_str(raw[6:12])
        off = 12
        self.vlans = []
        etype = struct.unpack_from("!H", raw, off)[0]
        while etype in VLAN_TPIDS and off + 6 <= len(raw):
            tci = struct.unpack_from("!H", raw, off + 2)[0]
            self.vlans.append((etype, tci))
            off += 4
            etype = struct.unpack_from("!H", raw, off)[0]
        self.etype = etype
        self.l3 = raw[off + 2:]
        self.code = self.sid = self.plen = None
        self.proto = None
        self.ppp = b""
        if etype in (ETH_DISC, ETH_SESS) and len(self.l3) >= 6:
            _vt, self.code, self.sid, self.plen = struct.unpack_from("!BBHH", self.l3)
            self.payload = self.l3[6:6 + self.plen]
            if etype == ETH_SESS and len(self.payload) >= 2:
                self.proto = struct.unpack_from("!H", self.payload)[0]
                self.ppp = self.payload[2:]

    def vids(self):
        return [tci & 0xFFF for _t, tci in self.vlans]


# ---------------------------------------------------------------- ports


class Port:
    """The kernel side of a tap: sends frames into edgegw and keeps what it sent out."""

    def __init__(self, ifname, netns=None):
        self.ifname = ifname
        self.lock = threading.Condition()
        self.frames = []  # every frame received, in order (Frame)
        self.clients = {}  # MAC -> Client
        self.stop_ev = threading.Event()
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        # Frames this host sends out of the interface (a flood replayed into
        # the tap by a generator) are dropped by the kernel before they reach
        # this socket (Linux 4.20): reading a million of them made the reader
        # lag seconds behind what edgegw sent. Each frame carries its kernel
        # arrival time, so a late read never shifts a frame's time.
        try:
            self.s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        except OSError:
            pass
        self.s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        # A reader that falls behind for a moment (the test's Python threads
        # beside two busy-polling edgegws on 2 CPUs) loses frames once the
        # buffer is full, and a test that lost frames says nothing of edgegw.
        # SO_RCVBUF is capped by net.core.rmem_max (4 MiB here, 208 KiB on a
        # stock kernel); as root SO_RCVBUFFORCE is not.
        try:
            self.s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF)
        except OSError:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        self.s.bind((ifname, 0))
        self.s.settimeout(0.1)
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def socket_drops(self):
        """Frames the kernel dropped because this socket's buffer was full
        (the reader fell behind) since the last call (PACKET_STATISTICS)."""
        try:
            _n, drops = struct.unpack("=II", self.s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
        except OSError:
            return 0
        return drops

    def _run(self):
        while not self.stop_ev.is_set():
            try:
                data, anc, _fl, addr = self.s.recvmsg(
                    65536, socket.CMSG_SPACE(32) + socket.CMSG_SPACE(16))
            except socket.timeout:
                continue
            except OSError:
                return
            if addr[2] == PACKET_OUTGOING:
                continue
            now = time.monotonic()
            t = now
            for lvl, typ, cd in anc:
                if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS and len(cd) >= 16:
                    sec, nsec = struct.unpack_from("=qq", cd)
                    t = now - max(0.0, time.time() - (sec + nsec * 1e-9))
                if lvl == SOL_PACKET and typ == PACKET_AUXDATA and len(cd) >= 20:
                    status, _l, _sl, _m, _n, tci, tpid = struct.unpack_from("=IIIHHHH", cd)
                    if status & TP_STATUS_VLAN_VALID or tci:
                        if not status & TP_STATUS_VLAN_TPID_VALID:
                            tpid = TPID_8021Q
                        data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
            f = Frame(data, t)
            with self.lock:
                self.frames.append(f)
                cl = self.clients.get(f.dst)
                self.lock.notify_all()
            if cl is not None:
                try:
                    cl._rx(f)
                except Exception as e:  # a test's client bug must not kill the reader
                    print("  client %s: error handling a frame: %r" % (cl.mac, e), flush=True)

    def send(self, frame):
        self.s.send(bytes(frame))

    def send_many(self, frames):
        for f in frames:
            self.s.send(bytes(f))

    def mark(self):
        with self.lock:
            return len(self.frames)

    def since(self, mark, pred=None):
        with self.lock:
            fl = self.frames[mark:]
        return [f for f in fl if pred is None or pred(f)]

    def wait(self, mark, pred, count=1, timeout=5.0):
        """Wait until count frames after mark satisfy pred; returns them (maybe fewer)."""
        end = time.monotonic() + timeout
        with self.lock:
            while True:
                got = [f for f in self.frames[mark:] if pred(f)]
                left = end - time.monotonic()
                if len(got) >= count or left <= 0:
                    return got
                self.lock.wait(min(left, 0.2))

    def close(self):
        self.stop_ev.set()
        self.th.join(2)
        self.s.close()


def sh(*cmd, check=False):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0 and check:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stdout.decode().strip()))
    return r.returncode, r.stdout.decode(errors="replace")


def quiet_iface(ifname, mtu=None):
    """Kernel side of a tap: no IPv6 (no RS, DAD, MLD noise), up."""
    try:
        with open("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % ifname, "w") as f:
            f.write("1\n")
    except OSError:
        pass
    if mtu is not None:
        sh("ip", "link", "set", ifname, "mtu", str(mtu))
    sh("ip", "link", "set", ifname, "up")


# ---------------------------------------------------------------- client


class Client:
    """One PPPoE subscriber on a Port."""

    def __init__(self, port, mac, vlans=(), user=None, secret=None, mru=1492,
                 iid=None, host_uniq=None, name=""):
        self.port = port
        self.mac = mac
        self.vlans = list(vlans)
        self.user, self.secret = user, secret
        self.mru = mru
        self.magic = int.from_bytes(os.urandom(4), "big") | 1
        self.iid = iid or bytes([0x02, 0x00, 0x5E, 0xFF, 0xFE]) + os.urandom(3)
        self.host_uniq = host_uniq if host_uniq is not None else os.urandom(6)
        self.name = name or mac
        self.cv = threading.Condition()
        self.ac_mac = None
        self.sid = 0
        self.cookie = None
        self.pado = []  # Frames
        self.pads = []
        self.padt = []
        self.rx = []  # every frame for this client
        # policies the reader thread follows
        self.answer_echo = True
        self.ack_lcp = True
        self.ack_ipcp = True
        self.renak_ipcp = True  # resend our IPCP request with a Nak's values
        self.ipv6cp = True  # False: Protocol-Reject IPv6CP
        # PPP state seen
        self.ac_lcp_req = []  # (id, options)
        self.lcp_acked_ours = False
        self.lcp_acked_theirs = False
        self.lcp_rejected = []  # options the AC rejected
        self.lcp_nak = []
        self.lcp_term = []
        self.echo_req = 0
        self.echo_rep = []
        self.auth_result = None  # ("pap"|"chap", code, message)
        self.chap_challenge = []
        self.ipcp_req = []  # AC's (id, options)
        self.ipcp_acked_ours = False
        self.ipcp_acked_theirs = False
        self.ipcp_nak = []
        self.ipcp_rej = []
        self.ip4 = "0.0.0.0"
        self.dns = [None, None]
        self.want_dns = False
        self.ac_ip4 = None
        self.ipv6cp_req = []
        self.ipv6cp_acked_ours = False
        self.ipv6cp_acked_theirs = False
        self.ac_iid = None
        self.ra = []  # ICMPv6 RA bytes (IPv6 packet)
        self.data4 = []  # IPv4 packets received on the session (bytes)
        self.data6 = []  # IPv6 packets other than RAs
        self.proto_rej = []
        self.code_rej = []
        self._id = 0x20
        self.ids = {}
        port.clients[mac] = self

    # -- low level
    def ident(self):
        self._id = (self._id + 1) & 0xFF
        return self._id

    def disc_frame(self, code, taglist, dst=None, sid=0, length=None):
        return eth(dst or self.ac_mac or "ff:ff:ff:ff:ff:ff", self.mac, ETH_DISC,
                   self.vlans) + pppoe(code, sid, tags(*taglist), length=length)

    def sess_frame(self, proto, data, sid=None, pfc=False):
        p = struct.pack("!B", proto) if pfc else struct.pack("!H", proto)
        return eth(self.ac_mac, self.mac, ETH_SESS, self.vlans) + pppoe(
            0, self.sid if sid is None else sid, p + bytes(data))

    def send_ppp(self, proto, code, ident, data):
        self.port.send(self.sess_frame(proto, ppp_ctl(code, ident, data)))

    def ip_frame(self, pkt):
        """A data frame: IPv4 or IPv6 packet (bytes) on the session."""
        pkt = bytes(pkt)
        return self.sess_frame(PPP_IP if pkt[0] >> 4 == 4 else PPP_IPV6, pkt)

    def wait(self, cond, timeout=5.0):
        end = time.monotonic() + timeout
        with self.cv:
            while not cond():
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.cv.wait(min(left, 0.2))
        return True

    # -- reader thread
    def _rx(self, f):
        with self.cv:
            self.rx.append(f)
            if f.etype == ETH_DISC:
                if f.code == PADO:
                    self.pado.append(f)
                elif f.code == PADS:
                    self.pads.append(f)
                elif f.code == PADT:
                    self.padt.append(f)
            elif f.etype == ETH_SESS and f.sid == self.sid and self.sid and f.proto is not None:
                self._ppp(f)
            self.cv.notify_all()

    def _ppp(self, f):
        proto, d = f.proto, f.ppp
        if proto == PPP_IP:
            self.data4.append(d)
            return
        if proto == PPP_IPV6:
            if len(d) >= 41 and d[6] == 58 and d[40] == 134:
                self.ra.append(d)
            else:
                self.data6.append(d)
            return
        if len(d) < 4:
            return
        code, ident, ln = struct.unpack_from("!BBH", d)
        body = d[4:ln]
        if proto == PPP_LCP:
            self._lcp(code, ident, body)
        elif proto == PPP_PAP:
            if code in (2, 3):
                msg = body[1:1 + body[0]] if body else b""
                self.auth_result = ("pap", code, msg)
        elif proto == PPP_CHAP:
            if code == 1:
                vs = body[0]
                self.chap_challenge.append((ident, body[1:1 + vs], body[1 + vs:]))
                if self.user is not None:
                    h = hashlib.md5(bytes([ident]) + self.secret.encode() +
                                    body[1:1 + vs]).digest()
                    self.send_ppp(PPP_CHAP, 2, ident,
                                  bytes([16]) + h + self.user.encode())
            elif code in (3, 4):
                self.auth_result = ("chap", code, body)
        elif proto == PPP_IPCP:
            self._ipcp(code, ident, body)
        elif proto == PPP_IPV6CP:
            self._ipv6cp(code, ident, body)

    def _lcp(self, code, ident, body):
        if code == CONF_REQ:
            self.ac_lcp_req.append((ident, parse_opts(body)))
            if self.ack_lcp:
                self.send_ppp(PPP_LCP, CONF_ACK, ident, body)
                self.lcp_acked_theirs = True
        elif code == CONF_ACK and ident == self.ids.get("lcp"):
            self.lcp_acked_ours = True
        elif code == CONF_REJ and ident == self.ids.get("lcp"):
            self.lcp_rejected.append(parse_opts(body))
        elif code == CONF_NAK and ident == self.ids.get("lcp"):
            self.lcp_nak.append(parse_opts(body))
        elif code == TERM_REQ:
            self.lcp_term.append(ident)
            self.send_ppp(PPP_LCP, TERM_ACK, ident, b"")
        elif code == ECHO_REQ:
            self.echo_req += 1
            if self.answer_echo:
                self.send_ppp(PPP_LCP, ECHO_REP, ident, struct.pack("!I", self.magic) + body[4:])
        elif code == ECHO_REP:
            self.echo_rep.append((ident, body))
        elif code == PROTO_REJ:
            self.proto_rej.append(body)
        elif code == CODE_REJ:
            self.code_rej.append(body)

    def _ipcp(self, code, ident, body):
        if code == CONF_REQ:
            o = parse_opts(body)
            self.ipcp_req.append((ident, o))
            a = dict(o).get(IPCP_ADDR)
            if a is not None:
                self.ac_ip4 = str(ipaddress.IPv4Address(a))
            if self.ack_ipcp:
                self.send_ppp(PPP_IPCP, CONF_ACK, ident, body)
                self.ipcp_acked_theirs = True
        elif code == CONF_NAK and ident == self.ids.get("ipcp"):
            o = dict(parse_opts(body))
            self.ipcp_nak.append(o)
            if IPCP_ADDR in o:
                self.ip4 = str(ipaddress.IPv4Address(o[IPCP_ADDR]))
            for i, t in enumerate((IPCP_DNS1, IPCP_DNS2)):
                if t in o:
                    self.dns[i] = str(ipaddress.IPv4Address(o[t]))
            if self.renak_ipcp:
                self.send_ipcp_req()
        elif code == CONF_REJ and ident == self.ids.get("ipcp"):
            o = dict(parse_opts(body))
            self.ipcp_rej.append(o)
            if IPCP_DNS1 in o or IPCP_DNS2 in o:
                self.want_dns = False
                if self.renak_ipcp:
                    self.send_ipcp_req()
        elif code == CONF_ACK and ident == self.ids.get("ipcp"):
            self.ipcp_acked_ours = True
        elif code == TERM_REQ:
            self.send_ppp(PPP_IPCP, TERM_ACK, ident, b"")

    def _ipv6cp(self, code, ident, body):
        if code == CONF_REQ:
            if not self.ipv6cp:
                self.send_ppp(PPP_LCP, PROTO_REJ, self.ident(),
                              struct.pack("!H", PPP_IPV6CP) + ppp_ctl(code, ident, body))
                return
            o = parse_opts(body)
            self.ipv6cp_req.append((ident, o))
            self.ac_iid = dict(o).get(IPV6CP_IID)
            self.send_ppp(PPP_IPV6CP, CONF_ACK, ident, body)
            self.ipv6cp_acked_theirs = True
        elif code == CONF_NAK and ident == self.ids.get("ipv6cp"):
            o = dict(parse_opts(body))
            if IPV6CP_IID in o:
                self.iid = o[IPV6CP_IID]
            self.send_ipv6cp_req()
        elif code == CONF_ACK and ident == self.ids.get("ipv6cp"):
            self.ipv6cp_acked_ours = True

    # -- discovery
    def padi(self, service=b"", extra=(), host_uniq=True):
        tl = [(TAG_SERVICE, service)]
        if host_uniq:
            tl.append((TAG_HOST_UNIQ, self.host_uniq))
        tl += list(extra)
        self.port.send(self.disc_frame(PADI, tl, dst="ff:ff:ff:ff:ff:ff"))

    def discover(self, service=b"", extra=(), timeout=3.0):
        """PADI until a PADO comes (3 tries); returns the PADO's tags or None."""
        n0 = len(self.pado)
        for _ in range(3):
            self.padi(service, extra)
            if self.wait(lambda: len(self.pado) > n0, timeout / 3):
                break
        if len(self.pado) == n0:
            return None
        f = self.pado[-1]
        tl = parse_tags(f.payload)
        self.ac_mac = f.src
        self.cookie = tag_get(tl, TAG_COOKIE)
        return tl

    def padr(self, service=b"", cookie=None, extra=(), sid=0, dst=None):
        tl = [(TAG_SERVICE, service), (TAG_HOST_UNIQ, self.host_uniq)]
        c = self.cookie if cookie is None else cookie
        if c is not None:
            tl.append((TAG_COOKIE, c))
        tl += list(extra)
        self.port.send(self.disc_frame(PADR, tl, dst=dst, sid=sid))

    def request(self, service=b"", extra=(), timeout=3.0):
        """PADR until a PADS comes; returns the PADS's tags or None; sets sid."""
        n0 = len(self.pads)
        for _ in range(3):
            self.padr(service, extra=extra)
            if self.wait(lambda: len(self.pads) > n0, timeout / 3):
                break
        if len(self.pads) == n0:
            return None
        f = self.pads[-1]
        with self.cv:
            self.sid = f.sid
        return parse_tags(f.payload)

    def padt_send(self):
        self.port.send(eth(self.ac_mac, self.mac, ETH_DISC, self.vlans) +
                       pppoe(PADT, self.sid, tags((TAG_HOST_UNIQ, self.host_uniq))))

    # -- LCP
    def send_lcp_req(self, extra=()):
        self.ids["lcp"] = self.ident()
        o = [(LCP_MRU, struct.pack("!H", self.mru)), (LCP_MAGIC, struct.pack("!I", self.magic))]
        o += list(extra)
        self.send_ppp(PPP_LCP, CONF_REQ, self.ids["lcp"], opts(*o))

    def lcp(self, extra=(), timeout=6.0):
        """Open LCP: our request (with extra options first, to be rejected), theirs acked."""
        self.send_lcp_req(extra)
        if extra:
            if not self.wait(lambda: self.lcp_rejected or self.lcp_acked_ours, timeout / 2):
                return False
            if self.lcp_rejected:
                self.send_lcp_req()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.wait(lambda: self.lcp_acked_ours and self.lcp_acked_theirs, 1.0):
                return True
            if not self.lcp_acked_ours:
                self.send_lcp_req()
        return False

    # -- authentication
    def pap(self, user=None, secret=None, timeout=4.0):
        u = (user or self.user).encode()
        p = (secret if secret is not None else self.secret).encode()
        self.auth_result = None
        for _ in range(2):
            self.send_ppp(PPP_PAP, 1, self.ident(), bytes([len(u)]) + u + bytes([len(p)]) + p)
            if self.wait(lambda: self.auth_result is not None, timeout / 2):
                break
        return self.auth_result

    def chap(self, timeout=4.0):
        """The reader thread answers challenges; wait for Success/Failure."""
        self.wait(lambda: self.auth_result is not None, timeout)
        return self.auth_result

    # -- IPCP / IPv6CP
    def send_ipcp_req(self, addr=None):
        self.ids["ipcp"] = self.ident()
        o = [(IPCP_ADDR, ipaddress.IPv4Address(addr or self.ip4).packed)]
        if self.want_dns:
            o += [(IPCP_DNS1, ipaddress.IPv4Address(self.dns[0] or "0.0.0.0").packed),
                  (IPCP_DNS2, ipaddress.IPv4Address(self.dns[1] or "0.0.0.0").packed)]
        self.send_ppp(PPP_IPCP, CONF_REQ, self.ids["ipcp"], opts(*o))

    def ipcp(self, dns=False, timeout=6.0):
        self.want_dns = dns
        self.send_ipcp_req()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.wait(lambda: self.ipcp_acked_ours and self.ipcp_acked_theirs, 1.5):
                return True
            if not self.ipcp_acked_ours:
                self.send_ipcp_req()
        return False

    def send_ipv6cp_req(self):
        self.ids["ipv6cp"] = self.ident()
        self.send_ppp(PPP_IPV6CP, CONF_REQ, self.ids["ipv6cp"], opts((IPV6CP_IID, self.iid)))

    def ipv6cp_open(self, timeout=6.0):
        self.send_ipv6cp_req()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.wait(lambda: self.ipv6cp_acked_ours and self.ipv6cp_acked_theirs, 1.5):
                return True
            if not self.ipv6cp_acked_ours:
                self.send_ipv6cp_req()
        return False

    def ra_prefix(self):
        """(prefix, length) of the Prefix Information option of the last RA, or None."""
        if not self.ra:
            return None
        return ra_prefix(self.ra[-1])

    def ll6(self):
        return str(ipaddress.IPv6Address(b"\xfe\x80" + bytes(6) + self.iid))

    def gua6(self):
        p = self.ra_prefix()
        if p is None:
            return None
        return str(ipaddress.IPv6Address(ipaddress.IPv6Network(p[0]).network_address.packed[:8] +
                                         self.iid))

    def connect(self, service=b"", auth="pap", ipv6=True, dns=False, lcp_extra=()):
        """Everything up to bound; returns a dict of what failed (empty = all fine)."""
        bad = {}
        if self.discover(service) is None:
            return {"discover": "no PADO"}
        if self.request(service) is None:
            return {"request": "no PADS"}
        if not self.lcp(lcp_extra):
            return {"lcp": "LCP did not open"}
        if auth == "pap":
            r = self.pap()
            if r is None or r[1] != 2:
                return {"auth": r}
        elif auth == "chap":
            r = self.chap()
            if r is None or r[1] != 3:
                return {"auth": r}
        if not self.ipcp(dns):
            bad["ipcp"] = "IPCP did not open"
        if ipv6 and not self.ipv6cp_open():
            bad["ipv6cp"] = "IPv6CP did not open"
        return bad


def udp4(src, dst, size, tag, sport=4000):
    """A UDP/IPv4 datagram of size bytes carrying tag, source port sport +
    size % 1000."""
    from scapy.all import IP, UDP, Raw
    base = IP(src=src, dst=dst, id=size) / UDP(sport=sport + size % 1000, dport=9)
    pad = max(0, size - len(base) - len(tag))
    return bytes(base / Raw(tag + bytes(i & 0xFF for i in range(pad))))


def udp6(src, dst, size, tag, sport=4000):
    """The same over IPv6."""
    from scapy.all import IPv6, UDP, Raw
    base = IPv6(src=src, dst=dst) / UDP(sport=sport + size % 1000, dport=9)
    pad = max(0, size - len(base) - len(tag))
    return bytes(base / Raw(tag + bytes(i & 0xFF for i in range(pad))))


def ra_prefix(pkt6):
    """(prefix, length) from the Prefix Information option (type 3) of an RA."""
    i = 40 + 16
    while i + 8 <= len(pkt6):
        t, n = pkt6[i], pkt6[i + 1] * 8
        if n == 0:
            return None
        if t == 3 and n == 32 and i + 32 <= len(pkt6):
            plen = pkt6[i + 2]
            return (str(ipaddress.IPv6Address(pkt6[i + 16:i + 32])) + "/%d" % plen, plen)
        i += n
    return None


def rs_packet(src_ll):
    """An ICMPv6 Router Solicitation from src_ll to all-routers (scapy builds the checksum)."""
    from scapy.all import IPv6, ICMPv6ND_RS
    return bytes(IPv6(src=src_ll, dst="ff02::2", hlim=255) / ICMPv6ND_RS())


# ---------------------------------------------------------------- edgegw


class Edgegw:
    """edgegw with -i on a FIFO: commands while it runs, output read back."""

    PROMPT = "edgegw> "

    def __init__(self, c, tag, binary, eal, setup_lines, extra_app=(), nice=None):
        self.c = c
        self.cmd = c.path(tag + ".cmd")
        with open(self.cmd, "w") as f:
            f.write("\n".join(setup_lines) + "\n")
        self.fifo = c.path(tag + ".fifo")
        os.mkfifo(self.fifo)
        # O_RDWR: opening does not block and the reader never sees EOF early
        self.fd = os.open(self.fifo, os.O_RDWR)
        stdin = open(self.fifo, "rb")
        self.js = c.path(tag + ".json")
        self.e = egwtest.Running(c, tag, binary, eal,
                                 ["-i", "--cmdline-file", self.cmd, "--stats-json", self.js] +
                                 list(extra_app), stdin=stdin, nice=nice)
        stdin.close()

    def alive(self):
        return self.e.alive()

    def stdout(self):
        return self.e.stdout()

    def send(self, line):
        os.write(self.fd, (line + "\n").encode())

    def run(self, line, timeout=5.0):
        """Type a command; return its output (text up to the next prompt)."""
        before = len(self.stdout())
        self.send(line)
        out = ""

        def done():
            nonlocal out
            t = self.stdout()[before:]
            k = t.find(line)
            if k < 0:
                return False
            t = t[k + len(line):]
            j = t.find(self.PROMPT)
            if j < 0:
                return False
            out = t[:j]
            return True
        egwtest.wait_for(done, timeout)
        return out.strip("\r\n")

    def stop(self):
        try:
            self.send("quit")
        except OSError:
            pass
        if egwtest.wait_for(lambda: not self.alive(), 10):
            rc = self.e.stop()
        else:
            rc = self.e.stop()
        os.close(self.fd)
        return rc


# ---------------------------------------------------------------- two taps


MAC_A = "02:00:00:ac:00:01"  # edgegw's access port (port 0)
MAC_U = "02:00:00:ac:00:02"  # edgegw's uplink port (port 1)
PEER_MAC = "02:00:00:00:bb:01"  # a host behind the uplink


def tap_env(c, ifnames):
    """Skip without tap support; fail if an interface is left over from another run."""
    if not os.path.exists("/dev/net/tun"):
        c.skip("/dev/net/tun is missing: no net_tap")
    if os.geteuid() != 0:
        c.skip("net_tap needs root (CAP_NET_ADMIN)")
    for ifname in ifnames:
        if os.path.exists("/sys/class/net/" + ifname):
            c.check(False, "interface %s does not exist before the test" % ifname,
                    "left over by another run? (ip link del %s)" % ifname)
            c.finish()


def tap_vdevs(if_a, if_u):
    """Port 0 = access tap, port 1 = uplink tap, with fixed MACs."""
    return ["--vdev", "net_tap0,iface=%s,mac=%s" % (if_a, MAC_A),
            "--vdev", "net_tap1,iface=%s,mac=%s" % (if_u, MAC_U)]


def start_edgegw(c, name, binary, if_a, if_u, setup, lcores="0,1", nice=None):
    """edgegw on two taps with the setup commands (which end in 'start'); the
    kernel sides quietened and up. Returns the Edgegw, or None (checked)."""
    e = Edgegw(c, "edgegw", binary, egwtest.eal_args(name, lcores) + tap_vdevs(if_a, if_u),
               setup, nice=nice)
    up = egwtest.wait_for(lambda: not e.alive() or
                          "forwarding started" in e.stdout().lower(), 30)
    if not c.check(up and e.alive(), "edgegw started on %s (access) and %s (uplink)" %
                   (if_a, if_u)):
        egwtest.show_output(e.stdout(), e.e.stderr())
        return e, False
    # the access side carries QinQ frames of 1522 bytes
    quiet_iface(if_a, mtu=1600)
    quiet_iface(if_u)
    c.check(egwtest.wait_for(lambda: all(
        open("/sys/class/net/%s/operstate" % i).read().strip() in ("up", "unknown")
        for i in (if_a, if_u)), 5), "kernel sides of both taps up")
    return e, True


# ---------------------------------------------------------------- parsing edgegw output


def sessions_from_text(text):
    """Rows of 'show pppoe sessions' as lists of words: id, port, VLANs, MAC, ..."""
    rows = []
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 5 and w[0].isdigit() and w[1].isdigit() and w[3].count(":") == 5:
            rows.append(w)
    return rows


def counters_from_text(text):
    """'name value' pairs of 'show pppoe stats' (any line ending in a number)."""
    out = {}
    for line in text.splitlines():
        w = line.replace(":", " ").split()
        if len(w) >= 2 and w[-1].isdigit():
            out[w[-2]] = int(w[-1])
    return out


# ---------------------------------------------------------------- self check


def selfcheck():
    """The builders against scapy's dissectors (no edgegw needed)."""
    from scapy.all import Ether, PPPoED, PPPoE, PPP, PPP_LCP_Configure, Dot1Q, Dot1AD
    from scapy.layers.ppp import PPP_IPCP as ScapyIPCP
    from scapy.layers.ppp import PPP_PAP_Request, PPP_CHAP_ChallengeResponse
    errs = []

    def chk(cond, what):
        print("  %s %s" % ("ok  " if cond else "FAIL", what))
        if not cond:
            errs.append(what)

    port = type("P", (), {"clients": {}, "send": lambda s, f: None})()
    cl = Client(port, "02:00:00:00:01:01", vlans=[(TPID_8021AD, 100), (TPID_8021Q, 200)],
                user="alice", secret="pw")
    cl.ac_mac = "02:00:00:ac:00:01"
    cl.sid = 0x1234
    f = Ether(cl.disc_frame(PADI, [(TAG_SERVICE, b"isp"), (TAG_HOST_UNIQ, b"\x01\x02")],
                            dst="ff:ff:ff:ff:ff:ff"))
    chk(f.haslayer(PPPoED) and f[PPPoED].code == PADI, "PADI parses as PPPoED code 0x09")
    q1, q2 = f.getlayer(Dot1AD), f.getlayer(Dot1Q)
    chk(q1 is not None and q2 is not None and [q1.vlan, q2.vlan] == [100, 200],
        "QinQ tags 802.1ad 100, 802.1Q 200")
    tl = parse_tags(bytes(f[PPPoED].payload)[:f[PPPoED].len])
    chk(tl == [(TAG_SERVICE, b"isp"), (TAG_HOST_UNIQ, b"\x01\x02")], "tags round-trip")
    lr = Ether(cl.sess_frame(PPP_LCP, ppp_ctl(CONF_REQ, 7, opts(
        (LCP_MRU, struct.pack("!H", 1492)), (LCP_MAGIC, struct.pack("!I", 0xdeadbeef))))))
    chk(lr.haslayer(PPPoE) and lr[PPPoE].sessionid == 0x1234, "session frame sid")
    chk(lr.haslayer(PPP_LCP_Configure) and lr[PPP_LCP_Configure].id == 7,
        "LCP Configure-Request id 7")
    chk([o.type for o in lr[PPP_LCP_Configure].options] == [1, 5], "LCP options MRU, magic")
    u, p = b"alice", b"pw"
    pap = Ether(cl.sess_frame(PPP_PAP, ppp_ctl(1, 3, bytes([len(u)]) + u + bytes([len(p)]) + p)))
    chk(pap.haslayer(PPP_PAP_Request) and pap[PPP_PAP_Request].username == u and
        pap[PPP_PAP_Request].password == p, "PAP request user/password")
    h = hashlib.md5(b"\x05" + b"pw" + b"chal").digest()
    ch = Ether(cl.sess_frame(PPP_CHAP, ppp_ctl(2, 5, bytes([16]) + h + b"alice")))
    chk(ch.haslayer(PPP_CHAP_ChallengeResponse) and ch[PPP_CHAP_ChallengeResponse].value == h,
        "CHAP response value")
    ip = Ether(cl.sess_frame(PPP_IPCP, ppp_ctl(CONF_REQ, 9, opts((IPCP_ADDR, bytes(4))))))
    chk(ip.haslayer(ScapyIPCP) and ip[ScapyIPCP].options[0].data == "0.0.0.0",
        "IPCP request address 0.0.0.0")
    chk(Ether(cl.sess_frame(PPP_IP, b"\x45" + bytes(19)))[PPP].proto == 0x21, "PPP proto IPv4")
    fr = Frame(cl.disc_frame(PADO, [(TAG_AC_NAME, b"ac")], dst=cl.mac), 0)
    chk(fr.code == PADO and fr.vids() == [100, 200] and fr.etype == ETH_DISC,
        "Frame parses tags and code")
    print("selfcheck: %d failed" % len(errs))
    return not errs


if __name__ == "__main__":
    import sys
    sys.exit(0 if selfcheck() else 1)
