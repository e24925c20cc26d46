# SPDX-License-Identifier: BSD-3-Clause
"""pppoe_real_clients: PPPoE clients nobody here wrote, against edgegw.

edgegw runs the gateway engine on two net_tap ports (port 0 access, port 1
uplink) with its own AC-Name and two services. The access tap's kernel side
is moved into a network namespace and the clients run there:
  pppoe-discovery -I if          (Debian ppp)   prints edgegw's PADO: its
                                                 AC-Name, its MAC, a cookie
  pppoe-discovery -S internet    the configured service is offered
  pppoe-discovery -S other       a service edgegw does not serve: no offer
  pppoe -A -I if [-S iptv]       (rp-pppoe)     the same from another client
  pppoe -A -S other              no offer, 'Timeout waiting for PADO'
  pppoe -d -S internet           rp-pppoe does PADI/PADO/PADR/PADS and prints
                                 'session:AC-MAC'; edgegw lists that session
                                 with the client's MAC ('show pppoe sessions')
  pppoe -k -e session:mac        rp-pppoe's PADT: the session leaves the table
At exit the --stats-json discovery counters hold the exact numbers.
The namespace and the interface are cleaned up even when a check fails.
Skips (77) only without the binaries, /dev/net/tun or root.

usage: test_pppoe_real_clients.py EDGEGW
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import egwtest  # noqa: E402
import pppoetest as pt  # noqa: E402
from pppoetest import MAC_A  # noqa: E402

NAME = "pppoe_real_clients"
IF_A, IF_U = "egwra0", "egwru0"
NS = "egwtest-pppoe"
AC_NAME = "edgegw-realclient"
CLIENT_MAC = "02:00:00:00:cc:01"
SETUP = [
    "set fwd gateway xconnect",
    "port role 0 access",
    "port role 1 uplink",
    "pppoe ac-name %s" % AC_NAME,
    "pppoe service-name add internet",
    "pppoe service-name add iptv",
    "pppoe pool add 100.66.0.0/24",
    "start",
]


def ns_cmd(args):
    """args run in the namespace's network stack. nsenter (util-linux) only
    switches the network namespace; 'ip netns exec' also remounts /sys, which
    fails where / is not a mount point (a chroot) and is not needed here."""
    return ["nsenter", "--net=/run/netns/" + NS, "--"] + list(args)


def nsrun(c, args, timeout=20):
    cmd = ns_cmd(args)
    c.log("run: %s" % " ".join(cmd))
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode(errors="replace")
    out = r.stdout.decode(errors="replace")
    print("    rc %d\n%s" % (r.returncode, "".join("    | %s\n" % ln
                                                   for ln in out.splitlines())), end="")
    return r.returncode, out


def pado_fields(out):
    """AC names, services, AC MACs, cookie lines of pppoe-discovery / pppoe -A output."""
    return {
        "ac": re.findall(r"^Access-Concentrator: (.*)$", out, re.M),
        "svc": re.findall(r"^\s+Service-Name: (.*)$", out, re.M),
        "mac": [m.lower() for m in re.findall(r"^AC-Ethernet-Address: (\S+)$", out, re.M)],
        "cookie": re.findall(r"^Got a cookie: (.*)$", out, re.M),
    }


def cleanup_ns():
    # the interface goes back to the root namespace first: edgegw owns it
    subprocess.run(ns_cmd(["ip", "link", "set", IF_A, "netns", "1"]),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "netns", "del", NS], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def main():
    binary = sys.argv[1]
    c = egwtest.Checker(NAME)
    disc = shutil.which("pppoe-discovery") or (
        "/usr/sbin/pppoe-discovery" if os.path.exists("/usr/sbin/pppoe-discovery") else None)
    rp = shutil.which("pppoe") or ("/usr/sbin/pppoe" if os.path.exists("/usr/sbin/pppoe")
                                   else None)
    if disc is None or rp is None:
        c.skip("pppoe-discovery (package ppp) or pppoe (package pppoe) is not installed")
    pt.tap_env(c, (IF_A, IF_U))
    if os.path.exists("/run/netns/" + NS):
        cleanup_ns()
    e, up = pt.start_edgegw(c, NAME, binary, IF_A, IF_U, SETUP)
    n_padi = n_pado = n_padr = n_pads = 0
    n_unknown = 0
    try:
        if not up:
            raise RuntimeError("edgegw did not start")
        subprocess.run(["ip", "netns", "add", NS], check=True)
        subprocess.run(["ip", "link", "set", IF_A, "netns", NS], check=True)
        nsrun(c, ["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % IF_A])
        # net_tap gives the kernel side the port's own MAC: the client gets one of its own
        nsrun(c, ["ip", "link", "set", IF_A, "address", CLIENT_MAC])
        nsrun(c, ["ip", "link", "set", "lo", "up"])
        nsrun(c, ["ip", "link", "set", IF_A, "up"])
        _rc, link = nsrun(c, ["ip", "-o", "link", "show", IF_A])
        m = re.search(r"link/ether (\S+)", link)
        client_mac = m.group(1).lower() if m else None
        c.check(client_mac == CLIENT_MAC, "%s is in namespace %s, MAC %s" % (IF_A, NS, CLIENT_MAC),
                str(client_mac))

        # pppoe-discovery (ppp): one attempt sends one PADI, edgegw answers one PADO
        rc, out = nsrun(c, [disc, "-I", IF_A, "-t", "2", "-a", "1"])
        f = pado_fields(out)
        n_padi += 1
        n_pado += 1
        c.eq(rc, 0, "pppoe-discovery exit status")
        c.eq(f["ac"], [AC_NAME], "pppoe-discovery: one PADO, AC-Name %s" % AC_NAME)
        c.eq(f["mac"], [MAC_A], "pppoe-discovery: PADO from the access port's MAC")
        c.check(len(f["cookie"]) == 1 and len(f["cookie"][0].split()) >= 8,
                "pppoe-discovery: PADO carries a cookie", str(f["cookie"]))
        rc, out = nsrun(c, [disc, "-I", IF_A, "-S", "internet", "-t", "2", "-a", "1"])
        f = pado_fields(out)
        n_padi += 1
        n_pado += 1
        c.eq(f["ac"], [AC_NAME], "pppoe-discovery -S internet: PADO with the AC-Name")
        c.check("internet" in f["svc"], "pppoe-discovery -S internet: Service-Name internet",
                str(f["svc"]))
        rc, out = nsrun(c, [disc, "-I", IF_A, "-S", "other", "-t", "1", "-a", "1"])
        n_padi += 1
        n_unknown += 1
        c.check(rc != 0 and AC_NAME not in out,
                "pppoe-discovery -S other (not served): no offer, non-zero exit", "rc %s" % rc)
        rc, out = nsrun(c, [disc, "-I", IF_A, "-U", "-t", "2", "-a", "1"])
        n_padi += 1
        n_pado += 1
        c.eq(pado_fields(out)["ac"], [AC_NAME], "pppoe-discovery -U (Host-Uniq): PADO")

        # rp-pppoe
        rc, out = nsrun(c, [rp, "-A", "-I", IF_A, "-t", "2"])
        f = pado_fields(out)
        n_padi += 1
        n_pado += 1
        c.eq(rc, 0, "pppoe -A exit status")
        c.eq(f["ac"], [AC_NAME], "pppoe -A: PADO with AC-Name %s" % AC_NAME)
        c.eq(f["mac"], [MAC_A], "pppoe -A: AC-Ethernet-Address is the access port's MAC")
        rc, out = nsrun(c, [rp, "-A", "-I", IF_A, "-S", "iptv", "-t", "2"])
        f = pado_fields(out)
        n_padi += 1
        n_pado += 1
        c.check(f["ac"] == [AC_NAME] and "iptv" in f["svc"],
                "pppoe -A -S iptv: PADO with the AC-Name and Service-Name iptv",
                "%s %s" % (f["ac"], f["svc"]))
        rc, out = nsrun(c, [rp, "-A", "-I", IF_A, "-S", "other", "-t", "1"])
        # rp-pppoe sends the PADI 3 times (timeout doubling) before it gives up
        c.check(AC_NAME not in out and "Timeout waiting for PADO" in out,
                "pppoe -A -S other: no offer ('Timeout waiting for PADO')")
        st = e.run("show pppoe stats")
        # discovery to PADS: 'session:AC MAC'
        rc, out = nsrun(c, [rp, "-d", "-I", IF_A, "-S", "internet", "-t", "2"])
        m = re.search(r"^(\d+):([0-9a-fA-F:]{17})$", out, re.M)
        n_padi += 1
        n_pado += 1
        n_padr += 1
        n_pads += 1
        c.check(rc == 0 and m is not None, "pppoe -d: PADS received, session:mac printed", out)
        sid = int(m.group(1)) if m else None
        if m:
            c.check(0 < sid < 0xFFFF, "pppoe -d: session id not 0 or 0xFFFF", str(sid))
            c.eq(m.group(2).lower(), MAC_A, "pppoe -d: AC MAC")
            so = e.run("show pppoe sessions")
            rows = {int(r[0]): r for r in pt.sessions_from_text(so)}
            print("  --- show pppoe sessions\n%s\n  ---" % so)
            c.check(sid in rows and rows[sid][3].lower() == CLIENT_MAC,
                    "show pppoe sessions: session %d of the client's MAC %s" % (sid, CLIENT_MAC))
            # rp-pppoe's PADT for that session
            rc, out = nsrun(c, [rp, "-k", "-e", "%d:%s" % (sid, MAC_A), "-I", IF_A])
            c.check(egwtest.wait_for(
                lambda: sid not in {int(r[0]) for r in
                                    pt.sessions_from_text(e.run("show pppoe sessions"))},
                5, 0.3), "pppoe -k: the session leaves 'show pppoe sessions'")
        print("  --- show pppoe stats\n%s\n  ---" % st)
    except (RuntimeError, subprocess.CalledProcessError) as ex:
        c.check(False, "set-up", str(ex))
    finally:
        cleanup_ns()
        rc = e.stop()
    c.eq(rc, 0, "edgegw exit status")
    c.check(not os.path.exists("/run/netns/" + NS), "namespace %s removed" % NS)
    s = egwtest.load_json(c, e.js)
    if s is not None and up:
        egwtest.check_identity(c, s)
        flat = {}

        def walk(d):
            for k, v in d.items():
                if isinstance(v, dict):
                    walk(v)
                elif isinstance(v, int):
                    flat.setdefault(k, v)
        walk(s.get("pppoe", {}))
        # pppoe -A -S other retries its PADI: at least 1 more PADI, all unknown
        other = flat.get("disc_service_unknown", 0) - n_unknown
        c.check(other >= 1, "pppoe -A -S other: its PADIs counted as disc_service_unknown",
                str(flat.get("disc_service_unknown")))
        c.eq(flat.get("padi_rx"), n_padi + other, "stats JSON padi_rx")
        c.eq(flat.get("pado_tx"), n_pado, "stats JSON pado_tx")
        c.eq(flat.get("padr_rx"), n_padr, "stats JSON padr_rx")
        c.eq(flat.get("pads_tx"), n_pads, "stats JSON pads_tx")
        c.eq(flat.get("padt_rx"), 1 if n_pads else 0, "stats JSON padt_rx (pppoe -k)")
        c.eq(flat.get("closed_padt"), 1 if n_pads else 0, "stats JSON closed_padt")
        c.eq(flat.get("disc_bad_cookie"), 0, "stats JSON disc_bad_cookie")
    c.finish()


if __name__ == "__main__":
    main()
