#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions a packet of edgegw's routed gateway and of DPDK's l3fwd (FIB
# lookup) on the same frames, counted by valgrind's callgrind: a figure that
# does not move with the machine's load or with where a VM's vCPUs sit,
# which the throughput runs of bench/memif_throughput.sh do (docs/perf.md).
#
#   bench/gateway_instr.sh [path/to/edgegw]
#
# Each DUT reads EGW_BENCH_FRAMES 64-byte UDP/IPv4 frames from a capture
# (net_pcap, port 0) and sends them to net_null (port 1, which frees them),
# one lcore forwarding, under callgrind. The capture and the route table are
# bench/memif_throughput.sh's (bench/memif_bench.py: a random address inside a
# random prefix of EGW_BENCH_ROUTES prefixes, 60% /24, 10% /22-/23, 25%
# /16-/21, 5% /25-/32); the frames go to net_pcap's MAC address. edgegw:
# `set fwd gateway`, both ports uplink, a static neighbour on port 1 and the
# table via it (the set-up of memif_throughput.sh). l3fwd: `--lookup=fib
# --parse-ptype`, one lcore, the closest table it can hold
# (memif_bench.py l3fwd-routes: every destination has a route to port 1).
#
# Printed, per packet: edgegw's worker split by function (classification,
# the IP stage, lib/ip's forwarding, the TX flush with net_null's frees, the
# prefetch of the held burst), and l3fwd's main loop. Both spend most of
# their instructions in net_pcap's reads (libpcap and stdio), which are left
# out: edgegw's figure is the inclusive count of its functions; l3fwd's loop
# is one function with its polls inlined, so its figure is its main loop
# minus net_pcap's RX, with the loop's own cost on an empty capture
# (measured the same way, per poll) taken off for its idle polls.
#
# Needs valgrind, python3 with scapy (/usr/bin/python3) and l3fwd (built by
# bench/memif_throughput.sh into EGW_BENCH_CACHE/l3fwd, or EGW_BENCH_L3FWD).
# About 2 minutes. No hugepages (EAL --no-huge).
#
# Environment:
#   EGW_BENCH_FRAMES  frames a run (default 200000)
#   EGW_BENCH_ROUTES  IPv4 prefixes (default 100000; the counts barely move
#                     with the table's size: a cache miss is one instruction)
#   EGW_BENCH_SEED    seed of the table and the capture (default 1)
#   EGW_BENCH_CACHE   cache directory (default build/bench-cache)
#   EGW_BENCH_L3FWD   an l3fwd binary (default: the one memif_throughput.sh built)
#   EGW_BENCH_OUT     directory for the callgrind files (default: a new one
#                     under /tmp, kept)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../scripts/setup-common.sh
. "$HERE/../scripts/setup-common.sh"
# shellcheck source=bench-common.sh
. "$HERE/bench-common.sh"

EDGEGW=${1:-$EGW_ROOT/build/app/edgegw/edgegw}
FRAMES=${EGW_BENCH_FRAMES:-200000}
ROUTES=${EGW_BENCH_ROUTES:-100000}
SEED=${EGW_BENCH_SEED:-1}
CACHE=${EGW_BENCH_CACHE:-$EGW_ROOT/build/bench-cache}
PY=/usr/bin/python3
HELPER=$HERE/memif_bench.py
PCAP_MAC=02:70:63:61:70:00 # net_pcap's address in DPDK 22.11 (first port)
NEXT_HOP=198.51.100.2
NH_MAC=02:00:00:00:9e:01

[ -x "$EDGEGW" ] || die "no edgegw binary at $EDGEGW (build first, or give its path as \$1)"
command -v valgrind >/dev/null || die "valgrind is missing (apt-get install valgrind)"
command -v callgrind_annotate >/dev/null || die "callgrind_annotate is missing (valgrind)"
[ -x "$PY" ] || die "no $PY"
L3FWD=${EGW_BENCH_L3FWD:-$(find "$CACHE/l3fwd" -path '*/l3fwd/build/l3fwd-shared' 2>/dev/null | head -1)}
if [ -z "$L3FWD" ] || [ ! -x "$L3FWD" ]; then
	die "no l3fwd: run bench/memif_throughput.sh once (it builds one), or set EGW_BENCH_L3FWD"
fi

OUT=${EGW_BENCH_OUT:-$(mktemp -d /tmp/edgegw-gateway-instr.XXXXXX)}
mkdir -p "$OUT"
IN=$CACHE/instr/r$ROUTES-f$FRAMES-s$SEED
mkdir -p "$IN"
if [ ! -s "$IN/routes4.txt" ]; then
	egw_log "inputs: $ROUTES IPv4 prefixes -> $IN/routes4.txt"
	"$PY" "$HELPER" table "$IN/routes4.txt" "$ROUTES" "$NEXT_HOP" "$SEED"
fi
if [ ! -s "$IN/frames.pcap" ]; then
	egw_log "inputs: $FRAMES frames -> $IN/frames.pcap"
	"$PY" "$HELPER" pcap "$IN/frames.pcap" "$IN/routes4.txt" 64 "$FRAMES" "$PCAP_MAC" \
		02:00:00:00:9e:00 192.0.2.2 "$SEED"
fi
if [ ! -s "$IN/l3fwd-v4.cfg" ]; then
	"$PY" "$HELPER" l3fwd-routes "$IN/l3fwd-v4.cfg" "$IN/l3fwd-v6.cfg" "$IN/routes4.txt" \
		65536 100000 1 "$SEED"
fi
[ -s "$IN/empty.pcap" ] || printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\0\0\0\0\0\0\0\0\xff\xff\0\0\x01\0\0\0' >"$IN/empty.pcap"

EAL=(--no-huge -m 1024 --no-pci --no-shconf)
vdevs() { echo "--vdev net_pcap0,rx_pcap=$1 --vdev net_null1,no-rx=1"; }

# ---- edgegw -------------------------------------------------------------------
printf '%s\n' "set fwd gateway" "port role 0 uplink" "port role 1 uplink" \
	"ip address add 192.0.2.1/24 port 0" "ip address add 198.51.100.1/24 port 1" \
	"ip neigh add $NEXT_HOP $NH_MAC port 1" "ip route load $IN/routes4.txt" >"$OUT/edgegw.cmd"
egw_log "edgegw: $FRAMES frames under callgrind"
# shellcheck disable=SC2046
valgrind --tool=callgrind --collect-atstart=no --toggle-collect=worker_main \
	--callgrind-out-file="$OUT/edgegw.cg" "$EDGEGW" "${EAL[@]}" -l 0,1 \
	$(vdevs "$IN/frames.pcap") -- --cmdline-file "$OUT/edgegw.cmd" --idle-exit 30 \
	--stats-json "$OUT/edgegw.json" >"$OUT/edgegw.log" 2>&1 ||
	{ tail -5 "$OUT/edgegw.log" >&2; die "edgegw failed under callgrind (log: $OUT/edgegw.log)"; }

# ---- l3fwd ----------------------------------------------------------------------
# run_l3fwd <pcap> <out> <seconds>: l3fwd never exits by itself; SIGINT after
# <seconds> ends its loop (its own handler), and callgrind writes the counts
# at exit
run_l3fwd() {
	# shellcheck disable=SC2046
	timeout -s INT "$3" valgrind --tool=callgrind --collect-atstart=no \
		--toggle-collect=fib_main_loop --callgrind-out-file="$2" "$L3FWD" -l 0 "${EAL[@]}" \
		$(vdevs "$1") -- -p 0x3 --config "(0,0,0),(1,0,0)" --parse-ptype --lookup=fib \
		--rule_ipv4="$IN/l3fwd-v4.cfg" --rule_ipv6="$IN/l3fwd-v6.cfg" >"$2.log" 2>&1 || true
	[ -s "$2" ] || { tail -5 "$2.log" >&2; die "l3fwd made no callgrind file ($2.log)"; }
}
egw_log "l3fwd: $FRAMES frames, then an empty capture, under callgrind (40 s each)"
run_l3fwd "$IN/frames.pcap" "$OUT/l3fwd.cg" 40
run_l3fwd "$IN/empty.pcap" "$OUT/l3fwd-idle.cg" 40

"$PY" - "$HERE" "$OUT" "$FRAMES" <<'EOF'
import json, sys

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, sys.argv[1])
import callgrind_tree  # noqa: E402

out, frames = sys.argv[2], int(sys.argv[3])

def tree(f):
    """{caller: (self, {callee: (incl, calls)})}, by function name"""
    return callgrind_tree.tree(f, by_object=False)

def incl(fns, fn):
    return sum(c[0] for f in fns.values() for name, c in f[1].items() if name == fn)

st = json.load(open(f"{out}/edgegw.json"))
fwd = st["ports"][0]["tx"]  # sent of what port 0 received (the GARPs are not)
if st["ports"][0]["rx"] != frames or fwd != frames:
    sys.exit(f"edgegw received {st['ports'][0]['rx']} and forwarded {fwd} of {frames} frames "
             f"({out}/edgegw.json): the figures would not be per packet")
e = tree(f"{out}/edgegw.cg")
rows = [("gw_rx", "classify, IP stage and forwarding (all of the engine's RX)"),
        ("egw_eth_classify_burst", "  of which lib/eth classification"),
        ("egw_ip_stage_route", "  of which the IP stage (lib/ip, TX queueing)"),
        ("egw_ip_fwd_burst", "    of which egw_ip_fwd_burst()"),
        ("egw_burst_flush", "TX flush (net_null's TX and frees included)"),
        ("gw_prefetch", "FIB prefetch of the held burst")]
print(f"\ninstructions a packet, {frames} frames (callgrind; net_pcap's reads left out)\n")
print("| DUT | what | instructions a packet |")
print("|-----|------|---------------------:|")
for fn, what in rows:
    print(f"| edgegw gateway | {what} | {incl(e, fn) / frames:.1f} |")
total = sum(incl(e, fn) for fn in ("gw_rx", "egw_burst_flush", "gw_prefetch"))
print(f"| edgegw gateway | **all of the above** (the RX loop's byte count left out) | "
      f"**{total / frames:.1f}** |")

l = tree(f"{out}/l3fwd.cg")
li = tree(f"{out}/l3fwd-idle.cg")

def l3(fns):
    loop = fns.get("fib_main_loop.cold") or fns.get("fib_main_loop")
    selfn, calls = loop[0], loop[1]
    rxpcap = [c for n, c in calls.items() if "0x" in n and c[1] > 0]
    # the PMDs' RX functions are unnamed (static): the biggest is net_pcap's,
    # and the one with as many calls is net_null's RX
    rxpcap.sort(key=lambda c: -c[0])
    polls = rxpcap[0][1]
    cb = calls.get("rte_eth_call_rx_callbacks", (0, 0))
    other = sum(c[0] for n, c in calls.items()
                if "0x" not in n and n != "rte_eth_call_rx_callbacks")
    nullrx = sum(c[0] for c in rxpcap[1:])
    return selfn, polls, cb, other, nullrx

parsed = sum(c[1] for f in l.values() for n, c in f[1].items() if n == "fib_parse_packet")
if parsed != frames:
    sys.exit(f"l3fwd parsed {parsed} of {frames} frames ({out}/l3fwd.cg.log)")
s1, p1, cb1, o1, n1 = l3(l)
s0, p0, cb0, o0, n0 = l3(li)
per_poll = (s0 + n0) / p0
per_cb = cb0[0] / cb0[1] if cb0[1] else 0
busy = (s1 + n1 - per_poll * p1) + (cb1[0] - per_cb * cb1[1]) + o1
print(f"| l3fwd-fib | **main loop, lookups, rewrite, TX** (net_null's frees included) | "
      f"**{busy / frames:.1f}** |")
print(f"\n(edgegw forwarded {fwd} frames; l3fwd: {p1} polls, {per_poll:.1f} instructions a "
      f"poll of its idle loop taken off for each)")
print(f"callgrind files: {out}")
EOF
