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
# Needs valgrind and /usr/bin/python3 with scapy. About 2 minutes. No
# hugepages (EAL --no-huge).
#
# Environment:
#   EGW_BENCH_FRAMES  frames a run (default 16000)
#   EGW_BENCH_FLOWS   clear flows (default 64, as bench/ipsec_secgw.sh)
#   EGW_BENCH_OUT     output directory (default: a new one under /tmp)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../scripts/setup-common.sh"
. "$HERE/bench-common.sh"

EDGEGW=${1:-$EGW_ROOT/build/app/edgegw/edgegw}
BASE=${2:-}
FRAMES=${EGW_BENCH_FRAMES:-16000}
FLOWS=${EGW_BENCH_FLOWS:-64}
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

OUT=${EGW_BENCH_OUT:-$(mktemp -d /tmp/edgegw-esp-instr.XXXXXX)}
mkdir -p "$OUT"
LCORES=0,1
EAL=(--no-huge -m 1024 --no-pci --no-shconf -l "$LCORES")

"$PY" - "$OUT/out.pcap" "$FRAMES" "$FLOWS" "$PCAP_MAC" <<'EOF'
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
path, frames, flows, mac = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
pk = []
for i in range(frames):
    f = i % flows
    pk.append(Ether(src="02:00:00:00:9e:00", dst=mac) /
              IP(src="100.64.0.2", dst=f"203.0.113.{f + 1}") /
              UDP(sport=1000 + f, dport=9) / Raw(b"\0" * 18))  # 60 bytes + FCS
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

"$PY" - "$OUT" "$FRAMES" "$FLOWS" "${tags[@]}" <<'EOF'
import json, re, subprocess, sys

out, frames, flows, tags = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]

def incl(f):
    """{function: inclusive count} from callgrind_annotate --inclusive=yes"""
    txt = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", f],
                         capture_output=True, text=True, check=True).stdout
    fns = {}
    for ln in txt.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?\S*?:(\S+) \[(\S+)\]", ln)
        if m:
            n, fn, obj = int(m.group(1).replace(",", "")), m.group(2), m.group(3)
            key = "IPsec-MB" if "libIPSec_MB" in obj else fn
            fns[key] = fns.get(key, 0) + n
    return fns

rows = [("gw_rx", "RX path: classification, IP stage, ESP, routing"),
        ("spd", "  of which the SPD"),
        ("rte_acl_classify", "    of which rte_acl"),
        ("IPsec-MB", "  of which IPsec-MB (AES-GCM)"),
        ("egw_burst_flush", "TX flush (net_null's frees included)"),
        ("gw_prefetch", "FIB prefetch of the held burst")]
res = {}
for t in tags:
    st = json.load(open(f"{out}/{t}.json"))
    p = st["ports"][0]
    if p["rx"] != frames or p["tx"] != frames:
        sys.exit(f"{t}: received {p['rx']} and forwarded {p['tx']} of {frames} frames "
                 f"({out}/{t}.json): the figures would not be per packet")
    f = incl(f"{out}/{t}.cg")
    f["spd"] = f.get("egw_esp_outbound_lookup" if t.endswith("-out") else "esp_spd_check_in", 0)
    f["total"] = sum(f.get(k, 0) for k in ("gw_rx", "egw_burst_flush", "gw_prefetch"))
    res[t] = {k: v / frames for k, v in f.items()}

print(f"\ninstructions a packet, {frames} frames of {flows} flows, 64 B clear "
      "(callgrind; net_pcap's reads left out)\n")
cols = [t for t in tags]
print("| what | " + " | ".join(cols) + " |")
print("|---|" + "---:|" * len(cols))
for k, what in rows + [("total", "**all of the above**")]:
    print(f"| {what} | " + " | ".join(f"{res[t].get(k, 0):.1f}" for t in cols) + " |")
for d in ("out", "in"):
    a, b = res.get(f"edgegw-{d}"), res.get(f"base-{d}")
    if a and b:
        print(f"\n{d}bound: edgegw/baseline {a['total'] / b['total']:.3f} "
              f"(SPD {b['spd']:.1f} -> {a['spd']:.1f})")
print(f"\nresults: {out}")
EOF
