#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions a packet of edgegw's ESP gateway (AES-128-GCM tunnel, the
# set-up of bench/ipsec_secgw.sh), counted by valgrind's callgrind, for one
# edgegw binary and, in the same run, a second one (the baseline): a figure
# that does not move with the machine's load or with where a VM's vCPUs
# sit, which the throughput runs of bench/ipsec_secgw.sh do (docs/perf.md).
#
#   bench/esp_gateway_instr.sh [path/to/edgegw [path/to/baseline/edgegw]]
#
# Each DUT reads a capture (net_pcap, port 0) and sends to net_null (port 1,
# which frees), one lcore forwarding, under callgrind from worker_main on:
#   outbound  EGW_BENCH_FRAMES clear 64-byte UDP/IPv4 frames 100.64.0.2 ->
#             203.0.113.1..EGW_BENCH_FLOWS (one UDP port per flow, the flows
#             in turn, as bench/esp_gen.c sends them), port 0 lan, port 1
#             uplink, one protect policy, ESP SPI 0x1000 192.0.2.1 ->
#             198.51.100.1 out;
#   inbound   those ESP frames (made by the first DUT, net_pcap's TX, before
#             the counted runs) in on port 0 uplink, an inbound SA of the
#             same key, the policy check, the clear frames out on port 1.
# Every frame must be forwarded, else the script fails. Printed per packet:
# the worker's RX path (classification, IP stage, ESP, routing; all of
# gw_rx), the TX flush (net_null's frees), the held burst's prefetch, and
# within them the SPD (outbound egw_esp_outbound_lookup(), inbound
# esp_spd_check_in()), rte_acl within it, and IPsec-MB. net_pcap's reads are left out.
#
# DPDK's examples/ipsec-secgw (as bench/ipsec_secgw.sh builds and sets it
# up: cpu-crypto on crypto_aesni_gcm, librte_ipsec, one lcore) runs the
# same frames both ways, with the same SA, policy and route, its output to
# a capture (net_pcap) that must hold every frame. Its loop is one
# function with the polls inlined, so its figure is everything under
# ipsec_poll_mode_worker() less the PMDs' calls (RX and TX) and less its
# idle loop's cost a poll (from a run on an empty capture) for each poll;
# the counting stops (callgrind_control) once the last frame is out, which
# leaves a few thousand idle polls to take off. For the comparison, the
# row "the DUT's own work" is the same for edgegw: all of it less
# net_null's TX. Both count IPsec-MB within.
#
# Needs valgrind and /usr/bin/python3 with scapy; ipsec-secgw is built by
# bench/ipsec_secgw.sh (EGW_BENCH_BUILD_ONLY=1) when missing. About 3
# minutes. No hugepages (EAL --no-huge).
#
# Environment:
#   EGW_BENCH_FRAMES  frames a run (default 16000)
#   EGW_BENCH_FLOWS   clear flows (default 64, as bench/ipsec_secgw.sh)
#   EGW_BENCH_SIZE    clear frame size in bytes with the FCS (default 64;
#                     64..1400, as bench/ipsec_secgw.sh)
#   EGW_BENCH_WITH_SECGW  1: ipsec-secgw too (default), 0: edgegw only
#   EGW_BENCH_SECGW_BIN  an ipsec-secgw binary to use instead of building one
#   EGW_BENCH_RATE_PAIRS  N > 0: then also time the outbound gateways, natively
#                     (default 0): N rounds of ipsec-secgw, edgegw and the
#                     baseline in turn, each forwarding the first 4096 clear
#                     frames looped (net_pcap infinite_rx) to net_null on one
#                     lcore, its port 1 TX rate read by telemetry over
#                     EGW_BENCH_SECS (default 3) s after 1 s of warm-up;
#                     printed: each round, the medians and the median of the
#                     rounds' ratios. Outbound only: a looped ESP capture
#                     is a replay from its second pass on.
#   EGW_BENCH_OUT     output directory (default: a new one under /tmp)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../scripts/setup-common.sh"
. "$HERE/bench-common.sh"

EDGEGW=${1:-$EGW_ROOT/build/app/edgegw/edgegw}
BASE=${2:-}
FRAMES=${EGW_BENCH_FRAMES:-16000}
FLOWS=${EGW_BENCH_FLOWS:-64}
SIZE=${EGW_BENCH_SIZE:-64}
SECGW=${EGW_BENCH_WITH_SECGW:-1}
RATE_PAIRS=${EGW_BENCH_RATE_PAIRS:-0}
SECS=${EGW_BENCH_SECS:-3}
PY=/usr/bin/python3
PCAP_MAC=02:70:63:61:70:00 # net_pcap's address in DPDK 22.11 (first port)
KEY=62656e63682d6f6e6c792d6b65792d6f73616c74

[ -x "$EDGEGW" ] || die "no edgegw binary at $EDGEGW (build first, or give its path as \$1)"
[ -z "$BASE" ] || [ -x "$BASE" ] || die "no baseline edgegw binary at $BASE"
command -v valgrind >/dev/null || die "valgrind is missing (apt-get install valgrind)"
command -v callgrind_annotate >/dev/null || die "callgrind_annotate is missing (valgrind)"
[ -x "$PY" ] || die "no $PY"
if ! is_uint "$FRAMES" || [ "$FRAMES" -eq 0 ]; then
	die "EGW_BENCH_FRAMES: a positive count"
fi
if ! is_uint "$FLOWS" || [ "$FLOWS" -lt 1 ] || [ "$FLOWS" -gt 254 ]; then
	die "EGW_BENCH_FLOWS: 1..254"
fi
if ! is_uint "$SIZE" || [ "$SIZE" -lt 64 ] || [ "$SIZE" -gt 1400 ]; then
	die "EGW_BENCH_SIZE: 64..1400 (the ESP frame must fit an MTU of 1500)"
fi
case $SECGW in 0 | 1) ;; *) die "EGW_BENCH_WITH_SECGW: 0 or 1" ;; esac
is_uint "$RATE_PAIRS" || die "EGW_BENCH_RATE_PAIRS: a count"
if ! is_uint "$SECS" || [ "$SECS" -eq 0 ]; then
	die "EGW_BENCH_SECS: seconds, at least 1"
fi
SECGW_BIN=
if [ "$SECGW" = 1 ]; then
	command -v callgrind_control >/dev/null || die "callgrind_control is missing (valgrind)"
	SECGW_BIN=$(env -u EGW_BENCH_SECGW EGW_BENCH_BUILD_ONLY=1 "$HERE/ipsec_secgw.sh" </dev/null | tail -1) ||
		die "no ipsec-secgw (bench/ipsec_secgw.sh with EGW_BENCH_BUILD_ONLY=1 failed)"
	[ -x "$SECGW_BIN" ] || die "no ipsec-secgw binary at '$SECGW_BIN'"
fi

OUT=${EGW_BENCH_OUT:-$(mktemp -d /tmp/edgegw-esp-instr.XXXXXX)}
mkdir -p "$OUT"
LCORES=0,1
EAL=(--no-huge -m 1024 --no-pci --no-shconf -l "$LCORES")
SECGW_EAL=(--no-huge -m 1024 --no-pci --no-shconf -l 0) # its one lcore forwards

"$PY" - "$OUT/out.pcap" "$FRAMES" "$FLOWS" "$PCAP_MAC" "$SIZE" <<'EOF'
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
path, frames, flows, mac, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], \
    int(sys.argv[5])
pk = []
for i in range(frames):
    f = i % flows
    # size bytes with the FCS: 14 + 20 + 8 + payload + 4
    pk.append(Ether(src="02:00:00:00:9e:00", dst=mac) /
              IP(src="100.64.0.2", dst=f"203.0.113.{f + 1}") /
              UDP(sport=1000 + f, dport=9) / Raw(b"\0" * (size - 46)))
wrpcap(path, pk)
EOF

cat >"$OUT/out.cmd" <<EOF
set fwd gateway
port role 0 lan
port role 1 uplink
ip address add 100.64.0.1/24 port 0
ip address add 192.0.2.1/24 port 1
ip neigh add 100.64.0.2 02:00:00:00:9e:00 port 0
ip neigh add 192.0.2.2 02:00:00:00:9e:01 port 1
ip route add 198.51.100.0/24 via 192.0.2.2 port 1
ip route add 203.0.113.0/24 via 192.0.2.2 port 1
esp state-file $OUT/esp.state create
esp sa add 0x1000 out aead aes-128-gcm key $KEY mode tunnel src 192.0.2.1 dst 198.51.100.1
esp policy add out src 100.64.0.0/24 dst 203.0.113.0/24 protect 0x1000
EOF
cat >"$OUT/in.cmd" <<EOF
set fwd gateway
port role 0 uplink
port role 1 lan
ip address add 198.51.100.1/24 port 0
ip address add 100.64.0.1/24 port 1
ip neigh add 198.51.100.2 02:00:00:00:9e:01 port 0
ip neigh add 100.64.0.2 02:00:00:00:9e:00 port 1
ip route add 203.0.113.0/24 via 100.64.0.2 port 1
esp state-file $OUT/esp.state create
esp sa add 0x1000 in aead aes-128-gcm key $KEY mode tunnel src 192.0.2.1 dst 198.51.100.1
esp policy add in src 100.64.0.0/24 dst 203.0.113.0/24 protect 0x1000
EOF

# the inbound capture: the first DUT's ESP, addressed to net_pcap
egw_log "inbound capture: $FRAMES ESP frames from $EDGEGW"
rm -f "$OUT/esp.state"
timeout 120 "$EDGEGW" "${EAL[@]}" --vdev "net_pcap0,rx_pcap=$OUT/out.pcap" \
	--vdev "net_pcap1,tx_pcap=$OUT/esp.pcap" -- --cmdline-file "$OUT/out.cmd" --idle-exit 3 \
	>"$OUT/esp.log" 2>&1 || { tail -5 "$OUT/esp.log" >&2; die "edgegw failed ($OUT/esp.log)"; }
"$PY" - "$OUT/esp.pcap" "$OUT/in.pcap" "$FRAMES" "$PCAP_MAC" <<'EOF'
import sys
from scapy.all import Ether, IP, rdpcap, wrpcap
src, dst, frames, mac = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
esp = [p for p in rdpcap(src) if IP in p and p[IP].proto == 50]
if len(esp) != frames:
    sys.exit(f"{src}: {len(esp)} ESP frames, want {frames}")
for p in esp:
    p[Ether].dst, p[Ether].src = mac, "02:00:00:00:9e:01"
wrpcap(dst, esp)
EOF

# run <tag> <binary> <dir>: one DUT under callgrind
run() {
	rm -f "$OUT/esp.state"
	egw_log "$1: $FRAMES frames under callgrind"
	valgrind --tool=callgrind --collect-atstart=no --toggle-collect=worker_main \
		--callgrind-out-file="$OUT/$1.cg" "$2" "${EAL[@]}" \
		--vdev "net_pcap0,rx_pcap=$OUT/$3.pcap" --vdev net_null1,no-rx=1 -- \
		--cmdline-file "$OUT/$3.cmd" --idle-exit 20 --stats-json "$OUT/$1.json" \
		>"$OUT/$1.log" 2>&1 ||
		{ tail -5 "$OUT/$1.log" >&2; die "edgegw failed under callgrind ($OUT/$1.log)"; }
}
tags=()
for d in out in; do
	run "edgegw-$d" "$EDGEGW" "$d"
	tags+=("edgegw-$d")
	if [ -n "$BASE" ]; then
		run "base-$d" "$BASE" "$d"
		tags+=("base-$d")
	fi
done

# ---- ipsec-secgw ------------------------------------------------------------------
# the same SA, policy and routes (bench/ipsec_secgw.sh's form); ipsec-secgw
# wants an inbound SA wherever it has an unprotected port, so each
# direction has the other's SA too (SPI 0x2000, not used by the frames)
colons() { sed 's/../&:/g; s/:$//' <<<"$1"; }
secgw_cfg() { # <out|in> <file>
	local sa
	sa="aead_algo aes-128-gcm aead_key $(colons "$KEY") mode ipv4-tunnel"
	local any="sport 0:65535 dport 0:65535"
	if [ "$1" = out ]; then
		printf '%s\n' \
			"sp ipv4 out esp protect 4096 pri 1 src 100.64.0.0/24 dst 203.0.113.0/24 $any" \
			"sa out 4096 $sa src 192.0.2.1 dst 198.51.100.1 type cpu-crypto" \
			"sp ipv4 in esp protect 8192 pri 1 src 203.0.113.0/24 dst 100.64.0.0/24 $any" \
			"sa in 8192 $sa src 198.51.100.1 dst 192.0.2.1 type cpu-crypto" \
			"rt ipv4 dst 198.51.100.0/24 port 1" "rt ipv4 dst 100.64.0.0/24 port 0" \
			"neigh port 0 02:00:00:00:9e:00" "neigh port 1 02:00:00:00:9e:01" >"$2"
	else
		printf '%s\n' \
			"sp ipv4 in esp protect 4096 pri 1 src 100.64.0.0/24 dst 203.0.113.0/24 $any" \
			"sa in 4096 $sa src 192.0.2.1 dst 198.51.100.1 type cpu-crypto" \
			"sp ipv4 out esp protect 8192 pri 1 src 203.0.113.0/24 dst 100.64.0.0/24 $any" \
			"sa out 8192 $sa src 198.51.100.1 dst 192.0.2.1 type cpu-crypto" \
			"rt ipv4 dst 203.0.113.0/24 port 1" "rt ipv4 dst 198.51.100.0/24 port 0" \
			"neigh port 0 02:00:00:00:9e:01" "neigh port 1 02:00:00:00:9e:00" >"$2"
	fi
}
# run_secgw <tag> <rx pcap> <out|in> <frames>: ipsec-secgw under callgrind from
# ipsec_poll_mode_worker(), one lcore, its output to <tag>.tx.pcap; once that holds
# <frames> frames (0: after 20 s), counting stops and SIGINT ends it
run_secgw() {
	local pid umask=0x2
	[ "$3" = out ] || umask=0x1
	secgw_cfg "$3" "$OUT/$1.cfg"
	rm -f "$OUT/$1.tx.pcap"
	egw_log "$1: ipsec-secgw under callgrind"
	valgrind --tool=callgrind --collect-atstart=no --toggle-collect=ipsec_poll_mode_worker \
		--callgrind-out-file="$OUT/$1.cg" "$SECGW_BIN" "${SECGW_EAL[@]}" \
		--vdev crypto_aesni_gcm0 --vdev "net_pcap0,rx_pcap=$2" \
		--vdev "net_pcap1,tx_pcap=$OUT/$1.tx.pcap" -- -p 0x3 -u "$umask" -w 128 -l \
		--config "(0,0,0),(1,0,0)" -f "$OUT/$1.cfg" >"$OUT/$1.log" 2>&1 &
	pid=$!
	"$PY" - "$OUT/$1.tx.pcap" "$4" "$pid" <<'EOF' || { wait "$pid" || true; die "$1: ipsec-secgw did not forward every frame ($OUT/$1.log)"; }
import os, signal, struct, subprocess, sys, time
path, want, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t_end = time.monotonic() + (20 if want == 0 else 240)
n, off = 0, 24
def alive():
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
while time.monotonic() < t_end and (want == 0 or n < want) and alive():
    time.sleep(0.02)
    if os.path.exists(path):
        with open(path, "rb") as f:
            f.seek(off)
            while True:
                h = f.read(16)
                if len(h) < 16:
                    break
                incl = struct.unpack("<I", h[8:12])[0]
                if len(f.read(incl)) < incl:
                    break
                n, off = n + 1, off + 16 + incl
if alive():
    subprocess.run(["callgrind_control", "-i", "off", str(pid)], capture_output=True)
    os.kill(pid, signal.SIGINT)
sys.exit(0 if n >= want else f"{path}: {n} of {want} frames")
EOF
	wait "$pid" || true
	[ -s "$OUT/$1.cg" ] || { tail -5 "$OUT/$1.log" >&2; die "$1: no callgrind file ($OUT/$1.log)"; }
}
if [ "$SECGW" = 1 ]; then
	"$PY" -c "from scapy.all import PcapWriter; w = PcapWriter('$OUT/empty.pcap', linktype=1)
w._write_header(None); w.close()"
	for d in out in; do
		run_secgw "secgw-$d" "$OUT/$d.pcap" "$d" "$FRAMES"
		tags+=("secgw-$d")
	done
	run_secgw secgw-idle "$OUT/empty.pcap" out 0
	tags+=(secgw-idle)
	"$PY" - "$OUT" "$FRAMES" <<'EOF' || die "ipsec-secgw did not put out every frame, ESP outbound and clear inbound"
import sys
from scapy.all import IP, UDP, rdpcap
out, frames = sys.argv[1], int(sys.argv[2])
for d, proto in (("out", 50), ("in", 17)):
    got = rdpcap(f"{out}/secgw-{d}.tx.pcap")
    good = [p for p in got if IP in p and p[IP].proto == proto]
    if len(good) != frames or len(got) != frames:
        sys.exit(f"secgw-{d}: {len(good)} of {len(got)} frames are IP protocol {proto}, want {frames}")
EOF
fi

"$PY" - "$HERE" "$OUT" "$FRAMES" "$FLOWS" "$SIZE" "${tags[@]}" <<'EOF'
import json, sys

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, sys.argv[1])
from callgrind_tree import totals, tree  # noqa: E402

out, frames, flows, size, tags = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
    int(sys.argv[5]), sys.argv[6:]

def incl(t, name=None, obj=None, caller=None):
    """inclusive count of the calls to a function (by name) or into an object
    (from outside it), optionally from one caller only"""
    n = calls = 0
    for (fn, fobj), (_s, callees) in t.items():
        if caller is not None and fn != caller:
            continue
        for (cf, cobj), (k, c) in callees.items():
            if (name is not None and cf == name) or \
               (obj is not None and obj in cobj and obj not in fobj):
                n, calls = n + k, calls + c
    return n, calls

rows = [("gw_rx", "RX path: classification, IP stage, ESP, routing"),
        ("spd", "  of which the SPD"),
        ("rte_acl_classify", "    of which rte_acl"),
        ("IPsec-MB", "  of which IPsec-MB (AES-GCM)"),
        ("egw_burst_flush", "TX flush (net_null's frees included)"),
        ("gw_prefetch", "FIB prefetch of the held burst"),
        ("total", "**all of the above**"),
        ("own", "**the DUT's own work** (PMDs' RX and TX left out)"),
        ("noncrypto", "  of which not IPsec-MB")]
res = {}
for t in (t for t in tags if not t.startswith("secgw")):
    st = json.load(open(f"{out}/{t}.json"))
    p = st["ports"][0]
    if p["rx"] != frames or p["tx"] != frames:
        sys.exit(f"{t}: received {p['rx']} and forwarded {p['tx']} of {frames} frames "
                 f"({out}/{t}.json): the figures would not be per packet")
    tr = tree(f"{out}/{t}.cg")
    f = {k: incl(tr, name=k)[0] for k in ("gw_rx", "egw_burst_flush", "gw_prefetch",
                                           "rte_acl_classify")}
    f["IPsec-MB"] = incl(tr, obj="libIPSec_MB")[0]
    f["spd"] = incl(tr, name="egw_esp_outbound_lookup" if t.endswith("-out")
                    else "esp_spd_check_in")[0]
    f["total"] = f["gw_rx"] + f["egw_burst_flush"] + f["gw_prefetch"]
    f["own"] = f["total"] - incl(tr, obj="librte_net_null", caller="egw_burst_flush")[0]
    f["noncrypto"] = f["own"] - f["IPsec-MB"]
    res[t] = {k: v / frames for k, v in f.items()}
note = ""
if "secgw-idle" in tags:
    # ipsec-secgw: all under ipsec_poll_mode_worker() less the PMDs' calls,
    # less the idle loop's cost a poll for each poll (net_pcap's RX of port
    # 0 counts the polls)
    def secgw(t):
        tr = tree(f"{out}/{t}.cg")
        pmd = incl(tr, obj="librte_net_")[0]
        polls = max(c for (fn, obj), (_s, cs) in tr.items() for (cf, co), (k, c) in cs.items()
                    if "net_pcap" in co and "net_pcap" not in obj and k > 100 * max(c, 1))
        return totals(f"{out}/{t}.cg"), pmd, polls, incl(tr, obj="libIPSec_MB")[0]
    T0, pmd0, polls0, _mb = secgw("secgw-idle")
    per = (T0 - pmd0) / polls0
    for t in (t for t in tags if t.startswith("secgw") and t != "secgw-idle"):
        T, pmd, polls, mb = secgw(t)
        own = T - pmd - per * polls
        res[t] = {"own": own / frames, "IPsec-MB": mb / frames, "noncrypto": (own - mb) / frames}
        note += (f"\n{t}: {polls} polls, {per:.1f} instructions a poll of its idle loop "
                 f"({polls0} idle polls) taken off for each: {per * polls / frames:.1f} a packet")
    tags = [t for t in tags if t != "secgw-idle"]

print(f"\ninstructions a packet, {frames} frames of {flows} flows, {size} B clear "
      "(callgrind; net_pcap's reads left out)\n")
print("| what | " + " | ".join(tags) + " |")
print("|---|" + "---:|" * len(tags))
for k, what in rows:
    print(f"| {what} | " + " | ".join(f"{res[t][k]:.1f}" if k in res[t] else "-"
                                        for t in tags) + " |")
for d in ("out", "in"):
    a, b, s = res.get(f"edgegw-{d}"), res.get(f"base-{d}"), res.get(f"secgw-{d}")
    if a and b:
        print(f"\n{d}bound: edgegw/baseline {a['total'] / b['total']:.3f} "
              f"(SPD {b['spd']:.1f} -> {a['spd']:.1f})")
    if a and s:
        print(f"\n{d}bound: edgegw/ipsec-secgw, the DUT's own work {a['own'] / s['own']:.3f}, "
              f"without IPsec-MB {a['noncrypto'] / s['noncrypto']:.3f}")
print(note)
print(f"\nresults: {out}")
EOF

# ---- rate (EGW_BENCH_RATE_PAIRS) ------------------------------------------------
[ "$RATE_PAIRS" -gt 0 ] || exit 0
egw_log "rate: $RATE_PAIRS rounds of outbound, natively, ${SECS} s each"
[ "$SECGW" = 1 ] && secgw_cfg out "$OUT/rate-secgw.cfg"
"$PY" - "$OUT" "$RATE_PAIRS" "$SECS" "$SIZE" "$EDGEGW" "${BASE:--}" "${SECGW_BIN:--}" <<'EOF'
import json, os, shutil, signal, socket, statistics, subprocess, sys, time
from scapy.all import rdpcap, wrpcap

out, pairs, secs, size, edgegw, base, secgw = sys.argv[1], int(sys.argv[2]), \
    int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
loop = f"{out}/loop.pcap"
wrpcap(loop, rdpcap(f"{out}/out.pcap", count=4096))
prefix = f"egw-esp-rate-{os.getpid()}"
vdevs = ["--vdev", f"net_pcap0,rx_pcap={loop},infinite_rx=1", "--vdev", "net_null1,no-rx=1"]
eal = ["--no-huge", "-m", "1024", "--no-pci", "--file-prefix", prefix]

def opackets():
    """port 1's TX packets by telemetry, or None while it does not answer"""
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2")
        s.recv(4096)
        s.send(b"/ethdev/stats,1")
        v = json.loads(s.recv(65536))["/ethdev/stats"]["opackets"]
        s.close()
        return v
    except (OSError, ValueError, KeyError, TypeError):
        return None

def rate(dut):
    if dut == "secgw":
        cmd = [secgw, "-l", "0"] + eal + ["--vdev", "crypto_aesni_gcm0"] + vdevs + \
            ["--", "-p", "0x3", "-u", "0x2", "-w", "128", "-l", "--config",
             "(0,0,0),(1,0,0)", "-f", f"{out}/rate-secgw.cfg"]
    else:
        try:
            os.unlink(f"{out}/esp.state")
        except FileNotFoundError:
            pass
        cmd = [edgegw if dut == "edgegw" else base, "-l", "0,1"] + eal + vdevs + \
            ["--", "--cmdline-file", f"{out}/out.cmd"]
    log = open(f"{out}/rate-{dut}.log", "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        t_end = time.monotonic() + 30
        while (opackets() or 0) == 0:
            if p.poll() is not None or time.monotonic() > t_end:
                sys.exit(f"rate: {dut} forwarded nothing ({out}/rate-{dut}.log)")
            time.sleep(0.2)
        time.sleep(1.0)
        a, t0 = opackets(), time.monotonic()
        time.sleep(secs)
        b, t1 = opackets(), time.monotonic()
    finally:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        # the runtime directory EAL leaves (its telemetry socket)
        shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)
    if a is None or b is None:
        sys.exit(f"rate: {dut}: telemetry did not answer ({out}/rate-{dut}.log)")
    return (b - a) / (t1 - t0) / 1e6

duts = [d for d, ok in (("secgw", secgw != "-"), ("edgegw", True), ("base", base != "-")) if ok]
r = {d: [] for d in duts}
for i in range(pairs):
    for d in duts:
        r[d].append(rate(d))
    print(f"round {i + 1}: " + ", ".join(f"{d} {r[d][-1]:.3f}" for d in duts) + " Mpps",
          flush=True)
print(f"\noutbound {size} B, 64 flows, one lcore, net_pcap (looped) -> net_null, Mpps over "
      f"{secs} s, {pairs} rounds:")
for d in duts:
    print(f"  {d}: median {statistics.median(r[d]):.3f} (min {min(r[d]):.3f}, max "
          f"{max(r[d]):.3f})")
for d in duts[1:] if "secgw" in duts else []:
    q = [a / b for a, b in zip(r[d], r["secgw"])]
    print(f"  {d}/secgw: median of the rounds' ratios {statistics.median(q):.3f} "
          f"({min(q):.3f}..{max(q):.3f})")
if "base" in duts:
    q = [a / b for a, b in zip(r["edgegw"], r["base"])]
    print(f"  edgegw/base: median of the rounds' ratios {statistics.median(q):.3f} "
          f"({min(q):.3f}..{max(q):.3f})")
EOF
