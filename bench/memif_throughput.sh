#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# End-to-end forwarding throughput over net_memif, on one machine: edgegw's
# io engine, edgegw's routed gateway with a million IPv4 prefixes, and DPDK's
# own examples/l3fwd (LPM and FIB lookups) as the anchor, on the same traffic
# in the same run.
#
#   bench/memif_throughput.sh [path/to/edgegw]
#
# Two processes joined by two net_memif links:
#
#   generator (edgegw replay)  port 0 ==memif A==> port 0  DUT
#   generator (edgegw sink)    port 1 <==memif B== port 1  DUT
#
# DUTs ("engines"), each run in turn in every round:
#   io         edgegw, `set fwd io`: port 0 -> port 1 unchanged (the baseline)
#   gateway    edgegw, `set fwd gateway` (routed, lib/ip): both ports uplink,
#              192.0.2.1/24 on port 0, 198.51.100.1/24 on port 1, a static
#              neighbour 198.51.100.2 on port 1 and EGW_BENCH_ROUTES IPv4
#              prefixes via it (`ip route load`), so no ARP is needed
#   xconnect   edgegw, `set fwd gateway xconnect` (classified, unrouted;
#              port 0 access, port 1 uplink); not in the default list
#   l3fwd-lpm  DPDK 22.11 examples/l3fwd --lookup=lpm, one lcore
#   l3fwd-fib  DPDK 22.11 examples/l3fwd --lookup=fib, one lcore
#
# The traffic is the same for every DUT: a capture of EGW_BENCH_DESTS UDP/IPv4
# frames from 192.0.2.2 to the DUT's port 0 MAC, each to a random address
# inside a random prefix of the route table (60% /24, 10% /22-/23, 25%
# /16-/21, 5% /25-/32, as bench/bench_ip.c), replayed in a loop at full speed.
# l3fwd 22.11 cannot hold a million routes (its table sizes are compiled in:
# LPM 1,024 rules and 256 tbl8 groups, FIB 65,536 routes; `ip route load`'s
# table makes it exit with "Unable to add entry 1024" and "... 67467"): it
# gets the closest table it can hold (bench/memif_bench.py l3fwd-routes:
# 0.0.0.0/1 and 128.0.0.0/1 to port 1, one prefix inside each /24 holding
# longer prefixes (256 of the 11,819 for LPM, all of them for FIB), then
# prefixes of the table up to 1,024 or 65,536 routes), and the same frames.
#
# Each process has one busy lcore on a CPU of its own (the DUT's worker on
# EGW_BENCH_DP_CPU, the generator's on EGW_BENCH_GEN_CPU); edgegw's main
# lcores sleep (the DUT's on the generator's CPU and the other way round);
# l3fwd runs on one lcore, which forwards (its main lcore would spin waiting
# for workers). The figure is the DUT's port 1 transmit rate (ethdev
# opackets read over DPDK telemetry once a second), averaged over
# EGW_BENCH_SECS seconds after EGW_BENCH_WARMUP seconds of traffic.
#
# l3fwd is built by this script from the DPDK source (EGW_BENCH_DPDK_SRC, the
# version of the installed libdpdk; without it `apt-get source dpdk`, adding a
# deb-src twin of the deb entries when APT has none) into
# EGW_BENCH_CACHE/l3fwd/<version>, with pkg-config against the installed
# libdpdk (its Makefile, `make shared`) and one change:
# l3fwd 22.11 asks for RX checksum offload unconditionally (main.c,
# port_conf), which net_memif does not have (rte_eth_dev_configure fails with
# -EINVAL), so it asks only for the offloads the port has. Its lookup and
# forwarding code is untouched. The generated route tables and captures are
# kept in EGW_BENCH_CACHE/memif.
#
# Each process reserves its hugepage memory at start (--socket-mem): DPDK
# 22.11's zero-copy memif client closes EAL's hugepage file descriptor once
# connected (later growth fails with "fallocate() failed: Bad file
# descriptor"), and with two zero-copy ports the second sometimes gets the
# closed descriptor and never comes up: the script checks that both links are
# up and that frames flow, with a clear error otherwise, and tries a run up to
# three times (docs/perf.md). Each run is bracketed by bench/c2c_latency.c
# (built here with cc): on a VM the two vCPUs move between host cores that
# share a cache and cores that do not, and every figure changes with it; the
# report gives the medians per placement too.
#
# Needs root (hugepages), python3, make, cc and two CPUs. Before measuring it
# waits until the load average is below EGW_BENCH_MAX_LOAD (polling every
# 20 s, at most EGW_BENCH_LOAD_WAIT seconds).
#
# Environment:
#   EGW_BENCH_SIZES     frame sizes, bytes on the wire with FCS (default "64")
#   EGW_BENCH_ENGINES   DUTs, in the order run (default
#                       "io gateway l3fwd-lpm l3fwd-fib"; ratios are against io)
#   EGW_BENCH_WARMUP    seconds of traffic before measuring (default 2)
#   EGW_BENCH_SECS      seconds measured (default 5)
#   EGW_BENCH_REPS      rounds; each round runs every DUT once, interleaved
#                       (default 3); the table gives the median per cell
#   EGW_BENCH_ROUTES    IPv4 prefixes of the routed gateway (default 1000000)
#   EGW_BENCH_DESTS     frames (destinations) in the capture (default 1048576,
#                       fewer for big frames: at most 128 MiB of frames)
#   EGW_BENCH_SEED      seed of the table and the capture (default 1)
#   EGW_BENCH_DP_CPU    CPU of the DUT's busy lcore (default 0)
#   EGW_BENCH_GEN_CPU   CPU of the generator's busy lcore (default 1)
#   EGW_BENCH_ZC        yes: both generator memif ports in zero-copy client
#                       mode (default: the cheapest generator); tx: port 0
#                       only (avoids DPDK 22.11's zero-copy fd race, see
#                       docs/perf.md, but the sink then copies and limits the
#                       figures); no: copy mode
#   EGW_BENCH_DP_MEM    MiB of hugepage memory EAL reserves at start for edgegw
#                       as DUT (--socket-mem, default 1024: the routed table of
#                       a million prefixes takes about 520 MiB)
#   EGW_BENCH_GEN_MEM   the same for the generator (default 512)
#   EGW_BENCH_L3FWD_MEM the same for l3fwd (default 512)
#   EGW_BENCH_MAX_LOAD  load average to wait for before measuring (default 0.7)
#   EGW_BENCH_LOAD_WAIT the longest wait for it in seconds (default 900; 0: do
#                       not wait)
#   EGW_BENCH_MAX_RUNNABLE  a run during which more tasks than this were
#                       runnable in a one-second sample (/proc/loadavg; the two
#                       busy lcores and the sampler make 3) is disturbed
#                       (default 4): it is run again once the CPUs are idle
#   EGW_BENCH_RETRIES   at most this many times (default 2), then kept and
#                       marked in the report
#   EGW_BENCH_IDLE_WAIT the longest wait for idle CPUs (under 10% busy over
#                       5 s) before such a retry, seconds (default 180)
#   EGW_BENCH_C2C_NEAR  a core-to-core round trip (bench/c2c_latency.c, run
#                       before and after each measurement) below this many ns
#                       means the two CPUs share a cache ("near"), else "far";
#                       the report gives the medians per placement (default 200)
#   EGW_BENCH_CACHE     cache directory (default build/bench-cache)
#   EGW_BENCH_DPDK_SRC  unpacked DPDK source (default /tmp/dpdksrc/dpdk)
#   EGW_BENCH_L3FWD     an l3fwd binary to use instead of building one
#   EGW_BENCH_OUT       directory for logs, samples and JSON (default: a new
#                       directory under /tmp, kept)
#
# Output: a table on stdout, results.tsv in the output directory. Exit 1 if a
# run failed or looked wrong (unexpected drops, frames sent back, too few
# samples).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../scripts/setup-common.sh
. "$HERE/../scripts/setup-common.sh"
# shellcheck source=bench-common.sh
. "$HERE/bench-common.sh"

EDGEGW=${1:-$EGW_ROOT/build/app/edgegw/edgegw}
SIZES=${EGW_BENCH_SIZES:-64}
ENGINES=${EGW_BENCH_ENGINES:-io gateway l3fwd-lpm l3fwd-fib}
WARMUP=${EGW_BENCH_WARMUP:-2}
SECS=${EGW_BENCH_SECS:-5}
REPS=${EGW_BENCH_REPS:-3}
ROUTES=${EGW_BENCH_ROUTES:-1000000}
DESTS=${EGW_BENCH_DESTS:-1048576}
SEED=${EGW_BENCH_SEED:-1}
DP_CPU=${EGW_BENCH_DP_CPU:-0}
GEN_CPU=${EGW_BENCH_GEN_CPU:-1}
ZC=${EGW_BENCH_ZC:-yes}
DP_MEM=${EGW_BENCH_DP_MEM:-1024}
GEN_MEM=${EGW_BENCH_GEN_MEM:-512}
L3FWD_MEM=${EGW_BENCH_L3FWD_MEM:-512}
MAX_LOAD=${EGW_BENCH_MAX_LOAD:-0.7}
LOAD_WAIT=${EGW_BENCH_LOAD_WAIT:-900}
MAX_RUNNABLE=${EGW_BENCH_MAX_RUNNABLE:-4}
RETRIES=${EGW_BENCH_RETRIES:-2}
IDLE_WAIT=${EGW_BENCH_IDLE_WAIT:-180}
C2C_NEAR=${EGW_BENCH_C2C_NEAR:-200}
CACHE=${EGW_BENCH_CACHE:-$EGW_ROOT/build/bench-cache}
DPDK_SRC=${EGW_BENCH_DPDK_SRC:-/tmp/dpdksrc/dpdk}
L3FWD=${EGW_BENCH_L3FWD:-}
PY=/usr/bin/python3
HELPER=$HERE/memif_bench.py

DP_MAC0=02:00:00:00:e0:00   # DUT port 0: frames go to it
DP_MAC1=02:00:00:00:e0:01   # DUT port 1
GEN_MAC0=02:00:00:00:9e:00  # generator port 0: source MAC of the frames
GEN_MAC1=02:00:00:00:9e:01  # generator port 1: the gateway's static neighbour
GEN_IP=192.0.2.2            # source address, on the DUT's port 0 network
NEXT_HOP=198.51.100.2       # the routes' gateway, on the DUT's port 1 network


[ -x "$EDGEGW" ] || die "no edgegw binary at $EDGEGW (build first, or give its path as \$1)"
[ "$(id -u)" -eq 0 ] || die "run as root (hugepages, DPDK)"
[ "$(nproc)" -ge 2 ] || die "needs two CPUs: one busy lcore per process"
[ "$DP_CPU" != "$GEN_CPU" ] || die "EGW_BENCH_DP_CPU and EGW_BENCH_GEN_CPU must differ"
[ -x "$PY" ] || die "no $PY"
case $ZC in yes | tx | no) ;; *) die "EGW_BENCH_ZC must be yes, tx or no" ;; esac
for v in WARMUP SECS REPS ROUTES DESTS SEED DP_CPU GEN_CPU DP_MEM GEN_MEM L3FWD_MEM LOAD_WAIT \
	MAX_RUNNABLE RETRIES IDLE_WAIT C2C_NEAR; do
	is_uint "${!v}" || die "EGW_BENCH_$v must be a number (is '${!v}')"
done
need_l3fwd=no
for engine in $ENGINES; do
	case $engine in
	io | gateway | xconnect) ;;
	l3fwd-lpm | l3fwd-fib) need_l3fwd=yes ;;
	*) die "unknown engine '$engine' (io, gateway, xconnect, l3fwd-lpm, l3fwd-fib)" ;;
	esac
done

OUT=${EGW_BENCH_OUT:-$(mktemp -d /tmp/edgegw-memif-bench.XXXXXX)}
mkdir -p "$OUT" "$CACHE"
OUT=$(cd "$OUT" && pwd)
CACHE=$(cd "$CACHE" && pwd)

# The DUT (edgegw or l3fwd) and the generator reserve their memory at start
# (--socket-mem): a zero-copy memif client whose memory grows later failed
# with "fallocate() failed: Bad file descriptor" (docs/perf.md). One DUT at a
# time, plus the generator, plus slack.
max_dut_mem=$DP_MEM
[ "$L3FWD_MEM" -gt "$max_dut_mem" ] && max_dut_mem=$L3FWD_MEM
egw_hugepages $(((max_dut_mem + GEN_MEM) / 2 + 32)) || die "hugepages"

# ---- l3fwd ----------------------------------------------------------------
# l3fwd_build: sets L3FWD_BIN, building it into the cache when missing
l3fwd_build() {
	local ver src dir tmp='' log
	if [ -n "$L3FWD" ]; then
		[ -x "$L3FWD" ] || die "EGW_BENCH_L3FWD=$L3FWD is not an executable"
		L3FWD_BIN=$L3FWD
		return 0
	fi
	command -v pkg-config >/dev/null || die "pkg-config is missing (apt-get install pkg-config)"
	ver=$(pkg-config --modversion libdpdk 2>/dev/null) ||
		die "no libdpdk for pkg-config (apt-get install libdpdk-dev)"
	dir=$CACHE/l3fwd/$ver
	L3FWD_BIN=$dir/l3fwd/build/l3fwd-shared
	[ -x "$L3FWD_BIN" ] && return 0

	src=$DPDK_SRC
	if [ ! -f "$src/examples/l3fwd/main.c" ]; then
		egw_log "l3fwd: no DPDK source at $src: apt-get source dpdk"
		add_deb_src
		tmp=$(mktemp -d /tmp/edgegw-dpdk-src.XXXXXX)
		(cd "$tmp" && apt-get source -q "dpdk=$(dpkg-query -W -f='${Version}' libdpdk-dev)") \
			>"$tmp/apt-get.log" 2>&1 || {
			tail -5 "$tmp/apt-get.log" >&2
			die "apt-get source dpdk failed (apt-get update? or set EGW_BENCH_DPDK_SRC to an unpacked DPDK $ver)"
		}
		src=$(find "$tmp" -mindepth 3 -maxdepth 3 -path '*/examples/l3fwd' | head -1)
		src=${src%/examples/l3fwd}
	fi
	[ "$(cat "$src/VERSION" 2>/dev/null)" = "$ver" ] ||
		die "DPDK source $src is version '$(cat "$src/VERSION" 2>/dev/null)', the installed libdpdk $ver: set EGW_BENCH_DPDK_SRC"
	egw_log "l3fwd: building DPDK $ver examples/l3fwd from $src into $dir"
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp"
	cp -r "$src/examples/l3fwd" "$src/examples/common" "$dir.tmp/"
	log=$dir.tmp/build.log
	# net_memif has no RX checksum offload; l3fwd 22.11 asks for it always
	$PY - "$dir.tmp/l3fwd/main.c" <<'EOF' || die "l3fwd: cannot apply the offload change to $src/examples/l3fwd/main.c"
import sys
path = sys.argv[1]
src = open(path).read()
anchor = "\t\tif (dev_info.max_rx_queues == 1)\n"
if src.count(anchor) != 1:
    sys.exit("l3fwd main.c: the anchor line is not there once")
add = ("\t\t/* edgegw bench/memif_throughput.sh: ask only for the RX\n"
       "\t\t * offloads the port has (net_memif: none) */\n"
       "\t\tlocal_port_conf.rxmode.offloads &= dev_info.rx_offload_capa;\n"
       "\t\tport_conf.rxmode.offloads &= dev_info.rx_offload_capa;\n\n")
open(path, "w").write(src.replace(anchor, add + anchor))
EOF
	make -C "$dir.tmp/l3fwd" shared >"$log" 2>&1 || { tail -20 "$log" >&2; die "l3fwd: make failed (log: $log)"; }
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	[ -z "$tmp" ] || rm -rf "$tmp"
	[ -x "$L3FWD_BIN" ] || die "l3fwd: build made no $L3FWD_BIN"
}
L3FWD_BIN=
[ "$need_l3fwd" = yes ] && l3fwd_build

# ---- core-to-core latency probe -----------------------------------------------
# On a VM the two vCPUs may sit on host cores that share a cache or not, and
# that changes while it runs: each run is bracketed by bench/c2c_latency.c
# (a cache-line round trip between the two CPUs), so that the report can
# compare DUTs measured in the same placement.
C2C=$CACHE/c2c_latency
if [ ! -x "$C2C" ] || [ "$HERE/c2c_latency.c" -nt "$C2C" ]; then
	cc -O2 -pthread -o "$C2C" "$HERE/c2c_latency.c" || die "cannot build $C2C (cc)"
fi
c2c() { "$C2C" "$DP_CPU" "$GEN_CPU" 2>/dev/null || echo 0; }

# ---- inputs (cached) --------------------------------------------------------
IN=$CACHE/memif/v$($PY "$HELPER" version)-r$ROUTES-s$SEED
mkdir -p "$IN"
TABLE=$IN/routes4.txt
if [ ! -s "$TABLE" ]; then
	egw_log "inputs: $ROUTES IPv4 prefixes -> $TABLE"
	{ $PY "$HELPER" table "$TABLE.tmp" "$ROUTES" "$NEXT_HOP" "$SEED" && mv "$TABLE.tmp" "$TABLE"; } ||
		die "cannot make the route table"
fi
declare -A PCAP
for size in $SIZES; do
	frames=$DESTS
	cap=$((128 * 1048576 / (size - 4)))
	[ "$frames" -gt "$cap" ] && frames=$cap
	PCAP[$size]=$IN/udp$size-$frames.pcap
	if [ ! -s "${PCAP[$size]}" ]; then
		egw_log "inputs: $frames frames of $size bytes -> ${PCAP[$size]}"
		{ $PY "$HELPER" pcap "${PCAP[$size]}.tmp" "$TABLE" "$size" "$frames" "$DP_MAC0" \
			"$GEN_MAC0" "$GEN_IP" "$((SEED + size))" && mv "${PCAP[$size]}.tmp" "${PCAP[$size]}"; } ||
			die "cannot make the $size-byte capture"
	fi
done
if [ "$need_l3fwd" = yes ]; then
	for mode in lpm fib; do
		[ -s "$IN/l3fwd-$mode-v4.cfg" ] && continue
		if [ $mode = lpm ]; then lim="1024 256"; else lim="65536 16777216"; fi
		# shellcheck disable=SC2086 # two numbers
		{ $PY "$HELPER" l3fwd-routes "$IN/l3fwd-$mode-v4.cfg.tmp" "$IN/l3fwd-$mode-v6.cfg" \
			"$TABLE" $lim 1 "$SEED" >/dev/null &&
			mv "$IN/l3fwd-$mode-v4.cfg.tmp" "$IN/l3fwd-$mode-v4.cfg"; } ||
			die "cannot make l3fwd's $mode route file"
	done
fi
IP_ROUTES=$((ROUTES + ROUTES / 10))
[ "$IP_ROUTES" -lt 65536 ] && IP_ROUTES=65536

# ---- one run --------------------------------------------------------------
DP_PREFIX=edgegw-bench-dp-$$
GEN_PREFIX=edgegw-bench-gen-$$
DP_PID=
GEN_PID=
trap remove_runtime EXIT
trap 'exit 130' INT TERM

MEM_VARS=EGW_BENCH_DP_MEM/GEN_MEM/L3FWD_MEM

gen_zc0=
gen_zc1=
gen_eal=()
case $ZC in
yes) gen_zc0=,zero-copy=yes gen_zc1=,zero-copy=yes ;;
tx) gen_zc0=,zero-copy=yes ;;
esac
[ "$ZC" = no ] || gen_eal=(--single-file-segments)

# run_one <size> <engine> <round>: leaves $OUT/<tag>.{dp,gen}.log,
# <tag>.samples.json and for edgegw <tag>.dp.json
run_one() {
	local size=$1 engine=$2 tag=$1-$2-$3 sock dp_vdev ready rc
	local dplog=$OUT/$tag.dp.log genlog=$OUT/$tag.gen.log fifo=$OUT/$tag.gen.fifo

	sock=edgegw-bench-$$-$tag
	c2c >"$OUT/$tag.c2c"
	dp_vdev=(--vdev "net_memif0,role=server,id=0,socket=/run/$sock-a.sock,mac=$DP_MAC0"
		--vdev "net_memif1,role=server,id=0,socket=/run/$sock-b.sock,mac=$DP_MAC1")
	rm -f "$OUT/$tag.samples.json" "$OUT/$tag.dp.json"

	case $engine in
	io) echo "set fwd io" >"$OUT/$tag.dp.cmd" ;;
	xconnect)
		printf '%s\n' "set fwd gateway xconnect" "port role 0 lan" "port role 1 uplink" \
			>"$OUT/$tag.dp.cmd"
		;;
	gateway)
		printf '%s\n' "set fwd gateway" "port role 0 uplink" "port role 1 uplink" \
			"ip address add 192.0.2.1/24 port 0" "ip address add 198.51.100.1/24 port 1" \
			"ip neigh add $NEXT_HOP $GEN_MAC1 port 1" "ip route load $TABLE" \
			>"$OUT/$tag.dp.cmd"
		;;
	esac
	printf '%s\n' "set fwd replay ${PCAP[$size]} port 0" "start" >"$OUT/$tag.gen.cmd"

	case $engine in
	l3fwd-*)
		# one lcore, which forwards: l3fwd's main lcore runs the
		# forwarding loop too (CALL_MAIN), and a second lcore would
		# leave the main one spinning in rte_eal_mp_wait_lcore()
		"$L3FWD_BIN" --lcores "0@$DP_CPU" --no-pci --file-prefix "$DP_PREFIX" \
			--socket-mem "$L3FWD_MEM" "${dp_vdev[@]}" \
			-- -p 0x3 --config "(0,0,0),(1,0,0)" --parse-ptype --lookup="${engine#l3fwd-}" \
			--rule_ipv4="$IN/$engine-v4.cfg" --rule_ipv6="$IN/$engine-v6.cfg" \
			>"$dplog" 2>&1 &
		DP_PID=$!
		ready="Checking link status"
		;;
	*)
		# memif servers; main lcore 0 (sleeps) on the generator's CPU,
		# worker lcore 1 on its own CPU
		"$EDGEGW" --lcores "0@$GEN_CPU,1@$DP_CPU" --main-lcore 0 --no-pci \
			--file-prefix "$DP_PREFIX" --socket-mem "$DP_MEM" "${dp_vdev[@]}" \
			-- --cmdline-file "$OUT/$tag.dp.cmd" --ip-routes "$IP_ROUTES" \
			--stats-json "$OUT/$tag.dp.json" >"$dplog" 2>&1 &
		DP_PID=$!
		ready="forwarding started"
		;;
	esac
	if ! wait_for "$dplog" "$ready" 180 "$DP_PID"; then
		start_failed "$tag: the DUT ($engine)" "$dplog"
		stop_all
		return 1
	fi

	# generator: memif clients, interactive on a FIFO so that it can be
	# stopped (workers idle) before the DUT goes away
	rm -f "$fifo"
	mkfifo "$fifo"
	"$EDGEGW" --lcores "0@$DP_CPU,1@$GEN_CPU" --main-lcore 0 --no-pci \
		--file-prefix "$GEN_PREFIX" --socket-mem "$GEN_MEM" "${gen_eal[@]}" \
		--vdev "net_memif0,role=client,id=0,socket=/run/$sock-a.sock,mac=$GEN_MAC0$gen_zc0" \
		--vdev "net_memif1,role=client,id=0,socket=/run/$sock-b.sock,mac=$GEN_MAC1$gen_zc1" \
		-- -i --cmdline-file "$OUT/$tag.gen.cmd" --stats-json "$OUT/$tag.gen.json" \
		<"$fifo" >"$genlog" 2>&1 &
	GEN_PID=$!
	exec 7>"$fifo"
	if ! wait_for "$genlog" "Forwarding started" 60 "$GEN_PID"; then
		start_failed "$tag: the generator" "$genlog"
		stop_all
		return 1
	fi
	case $engine in
	l3fwd-*)
		if ! wait_for "$dplog" "entering main loop" 20 "$DP_PID"; then
			start_failed "$tag: l3fwd (links up, main loop)" "$dplog"
			stop_all
			return 1
		fi
		;;
	esac

	# the rate: DUT port 1 opackets over telemetry; fails if no traffic
	if ! $PY "$HELPER" sample "$DP_PREFIX" "$WARMUP" "$SECS" "$OUT/$tag.samples.json"; then
		egw_err "$tag: no traffic through the DUT; the generator's log ($genlog):"
		grep -v '^EAL:' "$genlog" | tail -5 | sed 's/^/    /' >&2
		egw_err "the DUT's log ($dplog):"
		grep -v 'Adding route' "$dplog" | tail -5 | sed 's/^/    /' >&2
		stop_all
		return 1
	fi

	echo stop >&7          # generator workers stop polling
	sleep 0.3
	kill -TERM "$DP_PID"   # DUT: workers stop, JSON, ports close
	rc=0
	wait "$DP_PID" || rc=$?
	DP_PID=
	if [ "$rc" -ne 0 ]; then
		egw_err "$tag: the DUT exited with status $rc (see $dplog)"
		stop_all
		return 1
	fi
	echo quit >&7
	exec 7>&-
	wait "$GEN_PID" || egw_log "$tag: generator exited with status $? (see $genlog)"
	GEN_PID=
	rm -f "$fifo"
	remove_hugefiles
	c2c >>"$OUT/$tag.c2c"
}

# wait_quiet: measurements mean something only while nothing else runs
wait_quiet() {
	local waited=0 load
	[ "$LOAD_WAIT" -gt 0 ] || return 0
	while :; do
		load=$(cut -d' ' -f1 /proc/loadavg)
		if awk -v l="$load" -v m="$MAX_LOAD" 'BEGIN { exit !(l < m) }'; then
			egw_log "load average $load < $MAX_LOAD: measuring"
			return 0
		fi
		if [ "$waited" -ge "$LOAD_WAIT" ]; then
			egw_log "warning: load average still $load after ${LOAD_WAIT} s: measuring anyway (expect disturbed figures)"
			return 0
		fi
		egw_log "load average $load >= $MAX_LOAD: waiting (${waited} s of at most ${LOAD_WAIT} s)"
		sleep 20
		waited=$((waited + 20))
	done
}

# attempt <size> <engine> <round>: run_one, up to 3 times: a start can fail
# when other DPDK programs hold the hugepages for a moment, and DPDK 22.11's
# zero-copy memif client sometimes sends its second port a closed file
# descriptor (the link never comes up). The logs of a failed attempt are kept
# as <tag>.fail<N>.*.
attempt() {
	local tag=$1-$2-$3 n f
	for n in 1 2 3; do
		run_one "$1" "$2" "$3" && return 0
		for f in "$OUT/$tag".{dp,gen}.{log,json,cmd} "$OUT/$tag.c2c"; do
			[ -e "$f" ] && mv "$f" "${f/$tag./$tag.fail$n.}"
		done
		egw_log "$tag: attempt $n failed (logs: $OUT/$tag.fail$n.*)"
		sleep 2
	done
	die "$tag: failed 3 times"
}



{
	echo "command: EGW_BENCH_SIZES=\"$SIZES\" EGW_BENCH_ENGINES=\"$ENGINES\" EGW_BENCH_REPS=$REPS EGW_BENCH_WARMUP=$WARMUP EGW_BENCH_SECS=$SECS EGW_BENCH_ROUTES=$ROUTES EGW_BENCH_DESTS=$DESTS EGW_BENCH_ZC=$ZC $0 $EDGEGW"
	echo "edgegw: $EDGEGW ($(git -C "$EGW_ROOT" describe --always --dirty 2>/dev/null || echo '?'))"
	echo "l3fwd: ${L3FWD_BIN:--}"
	echo "inputs: $IN"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs; kernel $(uname -r)"
} >"$OUT/info.txt"
egw_log "output: $OUT (sizes: $SIZES; DUTs: $ENGINES; $REPS rounds of ${WARMUP} s warm-up + ${SECS} s measured per run)"
egw_log "inputs: $IN"
wait_quiet
echo "load average before measuring: $(cat /proc/loadavg)" >>"$OUT/info.txt"
for size in $SIZES; do
	for ((round = 1; round <= REPS; round++)); do
		for engine in $ENGINES; do
			for ((try = 0; ; try++)); do
				egw_log "run: ${size}-byte frames, DUT $engine, round $round"
				attempt "$size" "$engine" "$round"
				n=$(disturbed "$OUT/$size-$engine-$round.samples.json") || break
				if [ "$try" -ge "$RETRIES" ]; then
					egw_log "warning: $size-$engine-$round: $n tasks were runnable during the measurement (more than $MAX_RUNNABLE): kept, marked disturbed"
					break
				fi
				egw_log "$size-$engine-$round: $n tasks were runnable during the measurement (more than $MAX_RUNNABLE: something else ran): again once the CPUs are idle"
				wait_idle
			done
		done
	done
done
echo "load average after: $(cat /proc/loadavg)" >>"$OUT/info.txt"

# ---- results --------------------------------------------------------------
$PY "$HELPER" report "$OUT" "$WARMUP" "$SECS" "$SIZES" "$ENGINES" "$REPS" "$MAX_RUNNABLE" "$C2C_NEAR"
