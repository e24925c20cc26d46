# SPDX-License-Identifier: BSD-3-Clause
"""telemetry: edgegw's endpoints on the DPDK telemetry socket.

edgegw runs the gateway engine on two net_pcap ports (0 lan, 1 uplink)
with a file prefix of its own and without --in-memory, so EAL opens
/var/run/dpdk/<prefix>/dpdk_telemetry.v2. The inputs are chosen so that every
counter has a known, mostly non-zero value without knowing the port MACs:
broadcast IPv4 is forwarded, an unknown ethertype drops as unhandled, a
10-byte frame drops as bad_frame, broadcast ARP is queued to control.
The test speaks the v2 protocol (AF_UNIX SOCK_SEQPACKET: a JSON banner, then
one JSON reply per command) and checks /edgegw/stats, /edgegw/port,<N>,
/edgegw/config and /edgegw/esp against what it fed in, against ethdev's own
telemetry, and against --stats-json at exit.

usage: test_telemetry.py EDGEGW
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402

PREFIX = "telemetry"
BCAST = "ff:ff:ff:ff:ff:ff"
# per port: frames of each fate
MIX = {0: {"ip": 21, "unhandled": 5, "bad_frame": 3, "queued": 4},
       1: {"ip": 9, "unhandled": 2, "bad_frame": 0, "queued": 0}}


def frames(pid):
    from scapy.all import ARP, IP, UDP, Ether, Raw
    src = "02:00:00:00:00:%02x" % (0x10 + pid)
    mix = MIX[pid]
    out = []
    for i in range(mix["ip"]):
        out.append(Ether(src=src, dst=BCAST) / IP(src="10.%d.0.1" % pid, dst="10.0.0.255") /
                   UDP(sport=i, dport=9) / Raw(b"t" * (i % 50)))
        if i < mix["unhandled"]:
            out.append(Ether(src=src, dst=BCAST, type=0x88b5) / Raw(b"unknown ethertype %d" % i))
        if i < mix["bad_frame"]:
            out.append(Raw(bytes(10)))
        if i < mix["queued"]:
            out.append(Ether(src=src, dst=BCAST) / ARP(hwsrc=src, psrc="10.%d.0.1" % pid,
                                                       pdst="10.%d.0.%d" % (pid, 2 + i)))
    return [bytes(f) for f in out]


def main():
    binary = sys.argv[1]
    c = egwtest.Checker("telemetry")
    inputs = {pid: frames(pid) for pid in MIX}
    total = {pid: len(inputs[pid]) for pid in MIX}
    for pid in MIX:
        egwtest.write_pcap(c.path("in%d.pcap" % pid), inputs[pid])
    print("  inputs: %s" % {pid: dict(MIX[pid], total=total[pid]) for pid in MIX})
    cmd = c.path("tel.cmd")
    with open(cmd, "w") as f:
        f.write("set fwd gateway xconnect\nport role 0 lan\nport role 1 uplink\n")
    js = c.path("s.json")
    sock = egwtest.telemetry_path(PREFIX)
    vdevs = []
    for pid in MIX:
        vdevs += ["--vdev", "net_pcap%d,rx_pcap=%s,tx_pcap=%s" %
                  (pid, c.path("in%d.pcap" % pid), c.path("out%d.pcap" % pid))]
    e = egwtest.Running(c, "edgegw", binary, egwtest.eal_args(PREFIX) + vdevs,
                        ["--cmdline-file", cmd, "--idle-exit", "60000", "--stats-json", js])
    tel = None
    port_replies = {}
    try:
        up = egwtest.wait_for(lambda: not e.alive() or
                              ("forwarding started" in e.stdout() and os.path.exists(sock)), 20)
        if not c.check(up and e.alive(), "edgegw running, telemetry socket %s exists" % sock):
            egwtest.show_output(e.stdout(), e.stderr())
            c.finish()
        c.log("edgegw up")
        tel = egwtest.Tel(sock)
        print("  banner: %s" % tel.banner)
        c.eq(tel.banner.get("pid"), e.p.pid, "banner pid is edgegw's")
        c.check("version" in tel.banner, "banner has a version")

        cmds = tel.query("/").get("/", [])
        for want in ("/edgegw/stats", "/edgegw/port", "/edgegw/config", "/edgegw/esp",
                     "/edgegw/ip"):
            c.check(want in cmds, "'/' lists %s" % want)

        st = {}

        def settled():
            nonlocal st
            st = tel.query("/edgegw/stats").get("/edgegw/stats") or {}
            return all(st.get("port%d" % pid, {}).get("rx") == total[pid] for pid in MIX)
        c.check(egwtest.wait_for(settled, 10, 0.1), "/edgegw/stats shows all input received")
        print("  /edgegw/stats: %s" % st)
        c.eq(sorted(st.keys()), ["port0", "port1"], "/edgegw/stats: one entry per port")
        for pid in MIX:
            p, mix = st.get("port%d" % pid, {}), MIX[pid]
            c.eq(p.get("name"), "net_pcap%d" % pid, "port%d name" % pid)
            c.eq(p.get("role"), ("lan", "uplink")[pid], "port%d role" % pid)
            c.eq(p.get("rx"), total[pid], "port%d rx" % pid)
            c.eq(p.get("tx"), mix["ip"], "port%d tx (IP forwarded to the other role)" % pid)
            c.eq(p.get("queued"), mix["queued"], "port%d queued (ARP to control)" % pid)
            c.eq(p.get("dropped"), mix["unhandled"] + mix["bad_frame"], "port%d dropped" % pid)
            c.eq(p.get("rx_bytes"), sum(map(len, inputs[pid])), "port%d rx_bytes" % pid)
            c.check(p.get("rx", 0) + p.get("created", -1) == p.get("tx", 0) +
                    p.get("delivered", 0) + p.get("queued", 0) + p.get("dropped", 0),
                    "port%d identity rx + created = tx + delivered + queued + dropped" % pid)

        ipt = tel.query("/edgegw/ip").get("/edgegw/ip") or {}
        print("  /edgegw/ip: %s" % {k: v for k, v in ipt.items() if v})
        c.eq(ipt.get("available"), 1, "/edgegw/ip: lib/ip available")
        c.eq(ipt.get("arp_rx"), sum(MIX[p]["queued"] for p in MIX),
             "/edgegw/ip: every queued ARP frame reached lib/ip")
        c.check(all(k in ipt for k in ("forwarded", "ip_no_route", "access_not_session",
                                       "neighbours", "routes_ipv4")),
                "/edgegw/ip: data-path counters, drops and table sizes")

        for pid in MIX:
            one = tel.query("/edgegw/port,%d" % pid).get("/edgegw/port") or {}
            port_replies[pid] = one
            print("  /edgegw/port,%d: %s" % (pid, one))
            for k in ("rx", "tx", "queued", "dropped", "name", "role"):
                c.eq(one.get(k), st.get("port%d" % pid, {}).get(k),
                     "/edgegw/port,%d %s agrees with /edgegw/stats" % (pid, k))
            c.eq(one.get("unhandled"), MIX[pid]["unhandled"], "/edgegw/port,%d unhandled" % pid)
            c.eq(one.get("bad_frame"), MIX[pid]["bad_frame"], "/edgegw/port,%d bad_frame" % pid)
            eth = tel.query("/ethdev/stats,%d" % pid).get("/ethdev/stats") or {}
            c.eq(eth.get("ipackets"), total[pid], "/ethdev/stats,%d ipackets agrees" % pid)
        for bad in ("/edgegw/port,9", "/edgegw/port,abc", "/edgegw/port"):
            r = tel.query(bad)
            c.check(r.get("/edgegw/port", "missing") is None, "%s is refused (null)" % bad, str(r))

        cfg = tel.query("/edgegw/config").get("/edgegw/config") or {}
        print("  /edgegw/config: %s" % cfg)
        c.eq(cfg.get("engine"), "gateway", "config engine")
        c.eq(cfg.get("running"), 1, "config running")
        c.eq(cfg.get("workers"), 1, "config workers (EAL -l 0,1)")
        c.eq(cfg.get("burst"), 32, "config burst (default)")
        c.eq(cfg.get("port0_role"), "lan", "config port0_role")
        c.eq(cfg.get("port1_role"), "uplink", "config port1_role")
        esp = tel.query("/edgegw/esp").get("/edgegw/esp") or {}
        print("  /edgegw/esp: %s" % esp)
        c.eq(esp.get("available"), 1, "/edgegw/esp: ESP available")
        c.eq((esp.get("sa_out"), esp.get("sa_in"), esp.get("policy_out"), esp.get("policy_in")),
             (0, 0, 0, 0), "/edgegw/esp: no SA, no policy")
        c.check(all(esp.get(k) == 0 for k in ("out_packets", "in_packets", "esp_replay",
                                               "esp_bad_icv")),
                "/edgegw/esp: totals and drop reasons, all 0")
        c.check(e.alive(), "edgegw still running after the queries")
    finally:
        if tel is not None:
            tel.close()
        t0 = time.monotonic()
        rc = e.stop()
        c.log("edgegw stopped")
    c.eq(rc, 0, "exit status after SIGTERM (%.1f s)" % (time.monotonic() - t0))
    c.check(not os.path.exists(sock), "telemetry socket removed at exit", sock)
    s = egwtest.load_json(c, js)
    if s is not None:
        egwtest.check_identity(c, s)
        for pid in MIX:
            p, one = egwtest.port_by_id(s, pid), port_replies.get(pid, {})
            for k in ("rx", "tx", "queued", "dropped"):
                c.eq(p[k], one.get(k), "JSON port %d %s agrees with telemetry" % (pid, k))
            # every drop reason of --stats-json (drop.def) is in /edgegw/port,<N>, same value
            names = list(p["drops"].keys())
            c.check(len(names) > 0 and all(p["drops"][d] == one.get(d) for d in names),
                    "/edgegw/port,%d has every drop reason with the JSON's value" % pid,
                    "JSON %s; telemetry %s" % (p["drops"], {d: one.get(d) for d in names}))
        c.eq(s["control"]["rx"], sum(MIX[pid]["queued"] for pid in MIX),
             "JSON control rx = frames queued")
    c.finish()


if __name__ == "__main__":
    main()
