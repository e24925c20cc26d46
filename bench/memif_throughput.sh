#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# End-to-end forwarding throughput of edgegw over net_memif, on one machine.
#
#   bench/memif_throughput.sh [path/to/edgegw]
#
# Two edgegw processes joined by two net_memif links:
#
#   generator (replay)  port 0 ==memif A==> port 0  dataplane (io | gateway)
#   generator (sink)    port 1 <==memif B== port 1  dataplane
#
# The generator replays a capture of UDP frames on its port 0 at full speed
# and discards what comes back on its port 1; the dataplane forwards port 0 ->
# port 1, first with the io engine, then with gateway (port 0 access, port 1
# uplink; the frames are addressed to the dataplane's port 0 MAC, so they are
# routed, not dropped as otherhost). Each process has one busy worker lcore on
# a CPU of its own; the main lcores sleep. The figure is the dataplane's
# port 1 transmit rate (ethdev opackets), averaged over the measurement
# window after the warm-up.
#
# Builds nothing: give the binary, or it takes build/app/edgegw/edgegw.
# Needs root (hugepages), python3-scapy, and two CPUs.
#
# Environment:
#   EGW_BENCH_SIZES   frame sizes, bytes on the wire with FCS (default "64 1500")
#   EGW_BENCH_ENGINES dataplane engines (default "io gateway"; io must come
#                     first for the ratio)
#   EGW_BENCH_WARMUP  seconds of traffic before measuring (default 2)
#   EGW_BENCH_SECS    seconds measured (default 5)
#   EGW_BENCH_REPS    rounds; each round runs every engine once, interleaved
#                     (default 2); the table gives the best round per cell
#   EGW_BENCH_DP_CPU  CPU of the dataplane worker (default 0)
#   EGW_BENCH_GEN_CPU CPU of the generator worker (default 1)
#   EGW_BENCH_ZC      yes: generator memif in zero-copy client mode (default
#                     yes: a cheaper generator, see docs/perf.md); no: copy
#   EGW_BENCH_OUT     directory for captures, logs and JSON (default: a new
#                     directory under /tmp, kept)
#
# Output: a table on stdout, and results.tsv in the output directory.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../scripts/setup-common.sh
. "$HERE/../scripts/setup-common.sh"

EDGEGW=${1:-$EGW_ROOT/build/app/edgegw/edgegw}
SIZES=${EGW_BENCH_SIZES:-64 1500}
ENGINES=${EGW_BENCH_ENGINES:-io gateway}
WARMUP=${EGW_BENCH_WARMUP:-2}
SECS=${EGW_BENCH_SECS:-5}
REPS=${EGW_BENCH_REPS:-2}
DP_CPU=${EGW_BENCH_DP_CPU:-0}
GEN_CPU=${EGW_BENCH_GEN_CPU:-1}
ZC=${EGW_BENCH_ZC:-yes}
PY=/usr/bin/python3

DP_MAC0=02:00:00:00:e0:00   # dataplane port 0 (access): frames go to it
DP_MAC1=02:00:00:00:e0:01   # dataplane port 1 (uplink)
GEN_MAC=02:00:00:00:9e:00   # generator source MAC

die() { egw_err "$*"; exit 1; }

[ -x "$EDGEGW" ] || die "no edgegw binary at $EDGEGW (build first, or give its path as \$1)"
[ "$(id -u)" -eq 0 ] || die "run as root (hugepages, DPDK)"
[ "$(nproc)" -ge 2 ] || die "needs two CPUs: one busy worker per process"
[ "$DP_CPU" != "$GEN_CPU" ] || die "EGW_BENCH_DP_CPU and EGW_BENCH_GEN_CPU must differ"
$PY -c 'import scapy' 2>/dev/null || die "python3-scapy is missing (apt-get install python3-scapy)"
case $ZC in yes | no) ;; *) die "EGW_BENCH_ZC must be yes or no" ;; esac

OUT=${EGW_BENCH_OUT:-$(mktemp -d /tmp/edgegw-memif-bench.XXXXXX)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# two processes, each with its own mempool (16k mbufs) and memif regions
egw_hugepages 256 || die "hugepages"

# ---- captures -------------------------------------------------------------
# 64 UDP/IPv4 flows per size; "size" counts the 4-byte FCS as pktgen's
# "set 0 size" does, so the frame in the capture is size - 4 bytes.
for size in $SIZES; do
	$PY - "$OUT/udp$size.pcap" "$size" "$DP_MAC0" "$GEN_MAC" <<'EOF'
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
path, size, dst, src = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
flen = size - 4
if flen < 42 or flen > 2044:
    sys.exit("frame size %d out of range 46..2048 (mbuf data room)" % size)
frames = []
for i in range(64):
    p = (Ether(dst=dst, src=src) /
         IP(src="10.0.%d.%d" % (i // 250, i % 250 + 1), dst="198.51.100.1") /
         UDP(sport=1024 + i, dport=9))
    p = p / Raw(bytes(flen - len(p)))
    frames.append(p)
wrpcap(path, frames)
EOF
done

# ---- one run --------------------------------------------------------------
DP_PID=
GEN_PID=
# stop_all: end the processes of a failed or interrupted run (ours, by PID)
stop_all() {
	exec 7>&- 2>/dev/null || true
	if [ -n "$GEN_PID" ]; then kill -TERM "$GEN_PID" 2>/dev/null || true; fi
	if [ -n "$DP_PID" ]; then kill -TERM "$DP_PID" 2>/dev/null || true; fi
	[ -n "$GEN_PID" ] && { wait "$GEN_PID" 2>/dev/null || true; }
	[ -n "$DP_PID" ] && { wait "$DP_PID" 2>/dev/null || true; }
	GEN_PID=
	DP_PID=
}
# remove_runtime: the EAL run-time directories and hugepage files of our two
# processes (their prefixes carry our PID)
remove_runtime() {
	local mnt
	stop_all
	rm -rf "/var/run/dpdk/edgegw-bench-dp-$$" "/var/run/dpdk/edgegw-bench-gen-$$"
	while read -r mnt; do
		rm -f "$mnt/edgegw-bench-dp-$$"map_* "$mnt/edgegw-bench-gen-$$"map_*
	done < <(awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts)
}
trap remove_runtime EXIT
trap 'exit 130' INT TERM

# wait_for <file> <regex> <seconds> <pid>
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$4" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

gen_zc=
gen_eal=()
if [ "$ZC" = yes ]; then
	gen_zc=,zero-copy=yes
	gen_eal=(--single-file-segments)
fi

# run_one <size> <engine> <round>: leaves $OUT/<size>-<engine>-<round>.{dp,gen}.{log,json}
run_one() {
	local size=$1 engine=$2 tag=$1-$2-$3 sock
	local dplog=$OUT/$tag.dp.log genlog=$OUT/$tag.gen.log fifo=$OUT/$tag.gen.fifo

	sock=edgegw-bench-$$-$tag
	{
		echo "set fwd $engine"
		echo "port role 0 access"
		echo "port role 1 uplink"
	} >"$OUT/$tag.dp.cmd"
	{
		echo "set fwd replay $OUT/udp$size.pcap port 0"
		echo "start"
	} >"$OUT/$tag.gen.cmd"

	# dataplane: memif servers; main lcore 0 (sleeps) on the generator's
	# CPU, worker lcore 1 on its own CPU
	"$EDGEGW" --lcores "0@$GEN_CPU,1@$DP_CPU" --main-lcore 0 --no-pci \
		--file-prefix "edgegw-bench-dp-$$" \
		--vdev "net_memif0,role=server,id=0,socket=/run/$sock-a.sock,mac=$DP_MAC0" \
		--vdev "net_memif1,role=server,id=0,socket=/run/$sock-b.sock,mac=$DP_MAC1" \
		-- --cmdline-file "$OUT/$tag.dp.cmd" --stats-period 1 \
		--stats-json "$OUT/$tag.dp.json" >"$dplog" 2>&1 &
	DP_PID=$!
	if ! wait_for "$dplog" "forwarding started" 20 "$DP_PID"; then
		egw_err "$tag: dataplane did not start:"
		grep -v '^EAL:' "$dplog" | tail -5 >&2
		stop_all
		return 1
	fi

	# generator: memif clients, interactive on a FIFO so that it can be
	# stopped (workers idle) before the dataplane goes away
	rm -f "$fifo"
	mkfifo "$fifo"
	"$EDGEGW" --lcores "0@$DP_CPU,1@$GEN_CPU" --main-lcore 0 --no-pci \
		--file-prefix "edgegw-bench-gen-$$" "${gen_eal[@]}" \
		--vdev "net_memif0,role=client,id=0,socket=/run/$sock-a.sock$gen_zc" \
		--vdev "net_memif1,role=client,id=0,socket=/run/$sock-b.sock$gen_zc" \
		-- -i --cmdline-file "$OUT/$tag.gen.cmd" --stats-json "$OUT/$tag.gen.json" \
		<"$fifo" >"$genlog" 2>&1 &
	GEN_PID=$!
	exec 7>"$fifo"
	if ! wait_for "$genlog" "Forwarding started" 20 "$GEN_PID"; then
		egw_err "$tag: generator did not start:"
		grep -v '^EAL:' "$genlog" | tail -5 >&2
		stop_all
		return 1
	fi

	sleep $((WARMUP + SECS + 1))

	echo stop >&7          # generator workers stop polling
	sleep 0.3
	kill -TERM "$DP_PID"   # dataplane: workers stop, JSON, ports close
	wait "$DP_PID" || die "$tag: dataplane exited with status $? (see $dplog)"
	DP_PID=
	echo quit >&7
	exec 7>&-
	wait "$GEN_PID" || egw_log "$tag: generator exited with status $? (see $genlog)"
	GEN_PID=
	rm -f "$fifo"
}

egw_log "edgegw: $EDGEGW"
egw_log "output: $OUT (sizes: $SIZES; engines: $ENGINES; $REPS rounds of ${WARMUP}s warm-up + ${SECS}s measured per run)"
for size in $SIZES; do
	for ((round = 1; round <= REPS; round++)); do
		for engine in $ENGINES; do
			egw_log "run: ${size}-byte frames, dataplane engine $engine, round $round"
			# a start can fail when other DPDK programs hold the
			# hugepages for a moment: try once more
			run_one "$size" "$engine" "$round" ||
				{ sleep 2; run_one "$size" "$engine" "$round"; } ||
				die "$size-$engine-$round: failed twice"
		done
	done
done

# ---- results --------------------------------------------------------------
$PY - "$OUT" "$WARMUP" "$SECS" "$SIZES" "$ENGINES" "$REPS" <<'EOF'
import json, re, sys
out, warmup, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sizes, engines, reps = sys.argv[4].split(), sys.argv[5].split(), int(sys.argv[6])

def port1_tx_pps(log):
    """Tx-pps samples of port 1 printed by --stats-period 1 (TSC-timed)."""
    samples, port = [], None
    for line in open(log, errors="replace"):
        m = re.search(r"NIC statistics for port (\d+)", line)
        if m:
            port = int(m.group(1))
            continue
        m = re.match(r"\s*Tx-pps:\s*(\d+)", line)
        if m and port == 1:
            samples.append(int(m.group(1)))
    return samples

runs, bad = [], False          # one entry per (size, engine, round)
for size in sizes:
    for rnd in range(1, reps + 1):
        for eng in engines:
            tag = "%s-%s-%d" % (size, eng, rnd)
            s = port1_tx_pps("%s/%s.dp.log" % (out, tag))
            first = next((i for i, v in enumerate(s) if v > 0), None)
            win = s[first + warmup:first + warmup + secs] if first is not None else []
            if len(win) < secs:
                print("%s: only %d of %d samples in the window: %s" % (tag, len(win), secs, s),
                      file=sys.stderr)
                bad = True
            mpps = sum(win) / len(win) / 1e6 if win else 0.0
            dp = json.load(open("%s/%s.dp.json" % (out, tag)))
            p0 = dp["ports"][0]
            lc = dp["lcores"][0]
            # share of the dataplane worker's polls that found frames, over
            # the whole run (start and stop included): far below 100% means
            # the dataplane waited for frames
            busy = 100.0 * lc["busy_loops"] / lc["loops"] if lc["loops"] else 0.0
            drops = {k: v for k, v in p0["drops"].items() if v}
            if any(k != "tx_full" for k in drops):
                print("%s: unexpected drops on port 0: %s" % (tag, drops), file=sys.stderr)
                bad = True
            runs.append(dict(size=size, engine=eng, round=rnd, mpps=mpps, busy=busy,
                             samples=" ".join("%.3f" % (v / 1e6) for v in win),
                             tx=p0["tx"], tx_full=drops.get("tx_full", 0)))

with open(out + "/results.tsv", "w") as f:
    f.write("size\tengine\tround\tmpps\tdp_busy_poll_pct\tdp_port0_tx_total\tdp_tx_full_total\tsamples_mpps\n")
    for r in runs:
        f.write("%s\t%s\t%d\t%.3f\t%.1f\t%d\t%d\t%s\n" % (r["size"], r["engine"], r["round"],
                r["mpps"], r["busy"], r["tx"], r["tx_full"], r["samples"]))

print()
print("edgegw over net_memif: dataplane forwarded rate (port 1 TX), mean of %d one-second"
      " samples after %d s warm-up; best of %d round(s), all rounds in brackets" % (secs, warmup, reps))
print()
print("| frame (B, with FCS) | engine  | forwarded Mpps | rounds (Mpps)        | Gbit/s (L1) | ratio vs io |")
print("|---------------------|---------|---------------:|----------------------|------------:|------------:|")
for size in sizes:
    best = {}
    for eng in engines:
        rr = [r for r in runs if r["size"] == size and r["engine"] == eng]
        best[eng] = max(r["mpps"] for r in rr)
        ratio = best[eng] / best["io"] if best.get("io") else None
        print("| %-19s | %-7s | %14.2f | %-20s | %11.2f | %11s |" % (
            size, eng, best[eng], " ".join("%.2f" % r["mpps"] for r in rr),
            best[eng] * (int(size) + 20) * 8 / 1000,
            "%.2f" % ratio if ratio is not None else "-"))
print()
print("results: %s/results.tsv; logs and JSON: %s" % (out, out))
sys.exit(1 if bad else 0)
EOF
