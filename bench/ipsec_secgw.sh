#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# edgegw's ESP gateway against DPDK's own reference gateway,
# examples/ipsec-secgw, on the same traffic in the same run, over net_memif:
# AES-128-GCM tunnel mode, outbound (clear in, ESP out) and inbound (ESP in,
# clear out).
#
#   bench/ipsec_secgw.sh [path/to/edgegw]
#
#   generator (bench/esp_gen.c)  port 0 ==memif A==> port 0  gateway (DUT)
#   generator (sink, keeps some) port 1 <==memif B== port 1
#
#   outbound: DUT port 0 protected (edgegw: lan), port 1 unprotected (uplink);
#             clear UDP/IPv4 100.64.0.2 -> 203.0.113.x in, ESP SPI 0x1000
#             192.0.2.1 -> 198.51.100.1 out
#   inbound:  DUT port 0 unprotected (uplink), port 1 protected (lan); ESP SPI
#             0x2000 198.51.100.1 -> 192.0.2.1 carrying 203.0.113.x ->
#             100.64.0.2 in, the clear packets out
#
# Both gateways route: the outer (outbound) or inner (inbound) destination
# is looked up (edgegw lib/ip, `set fwd gateway`; ipsec-secgw its LPM `rt`
# table) and sent to a static neighbour, the generator's port 1 MAC. The
# security policy (one rule per direction, edgegw `esp policy`, ipsec-secgw
# `sp`, both ACL based) is looked up for every packet; inbound both check
# the anti-replay window (128 packets: edgegw's default, ipsec-secgw -w 128).
#
# ipsec-secgw is built by this script from the Debian source package of the
# installed libdpdk (`apt-get source dpdk`; a deb-src entry is added from the
# system's own deb entries if there is none), version checked against
# pkg-config and dpkg, with its own Makefile against the system libdpdk,
# with one change, bench/ipsec-secgw-memif.patch: it asks every port for
# RX checksum offload, which net_memif lacks (rte_eth_dev_configure would
# fail); it now asks only for what the port has. Its setup (EGW_BENCH_SECGW):
#   cpu-crypto     (default) librte_ipsec (-l) with `type cpu-crypto` SAs: the
#                  crypto PMD's synchronous CPU path, AES-GCM by Intel IPsec-MB
#                  called in the worker, no enqueue/dequeue; as fast as
#                  lookaside here, within 3% (docs/perf.md)
#   lookaside      librte_ipsec (-l), `type no-offload`: the same PMD
#                  through cryptodev enqueue/dequeue
#   legacy         the legacy path (no -l), `type no-offload`; it has no
#                  anti-replay check at all (faster inbound at 64 B for it)
# and its crypto device (EGW_BENCH_SECGW_PMD): crypto_aesni_gcm (default) or
# crypto_aesni_mb, both DPDK's Intel IPsec-MB PMD (drivers/crypto/ipsec_mb),
# the library edgegw calls directly.
#
# The generator is bench/esp_gen.c (built here with cc and pkg-config): it
# sends a template of 64 flows in a loop at full speed. Inbound every packet
# is valid ESP with a fresh, increasing sequence number (a looped capture
# would be dropped by the replay window from its second pass): the ICV is
# patched per packet from tables that bench/ipsec_secgw_bench.py computes
# and checks against a real AES-GCM encryption. Each process has one busy
# lcore on a CPU of its own (the DUT on EGW_BENCH_DP_CPU, the generator on
# EGW_BENCH_GEN_CPU); the main lcores of edgegw and of the generator sleep
# (on the other CPU); ipsec-secgw runs on one lcore, which forwards.
#
# The figure is the DUT's port 1 transmit rate (ethdev opackets over DPDK
# telemetry, once a second, bench/memif_bench.py sample), over EGW_BENCH_SECS
# seconds after EGW_BENCH_WARMUP seconds of traffic; rounds alternate the two
# gateways. Checks per run, else exit 1: the DUT sent on port 1 what it
# received on port 0 (within 1% in the window: a gateway that drops, e.g.
# by replay or policy, fails), nothing back out of port 0, and each of the
# first EGW_BENCH_KEEP frames the generator received is right: outbound ESP
# with the SPI, addresses and increasing sequence numbers that decrypts (with
# the key, in Python) to one of the packets sent, inbound the inner packet
# sent (TTL and header checksum aside), both to the neighbour's MAC with a
# correct IPv4 header checksum.
#
# net_memif mode of the generator's two client ports (EGW_BENCH_ZC): auto
# (default) tries zero-copy (with --single-file-segments and --socket-mem,
# which avoid the fallocate failure of a zero-copy client with the default
# memory options, docs/perf.md) and falls back to copy mode for a run whose
# zero-copy start fails twice; yes: zero-copy only; no: copy only. The mode
# of every run is in results.tsv and the report.
#
# Needs root (hugepages), python3 with python3-cryptography, make, cc,
# pkg-config, libdpdk-dev, apt-get source access and two CPUs.
#
# Environment:
#   EGW_BENCH_SIZES      clear frame sizes, bytes with FCS (default "64 1400")
#   EGW_BENCH_DIRS       directions (default "out in")
#   EGW_BENCH_DUTS       gateways in the order run in each round (default
#                        "edgegw secgw"; the ratio is first / second; "io"
#                        adds edgegw `set fwd io`, no ESP, frames passed
#                        unchanged: what the generator and memif can carry,
#                        the ceiling of the figures; not verified; "base"
#                        adds the edgegw binary EGW_BENCH_BASE, run as
#                        edgegw is: a before/after in the same sitting)
#   EGW_BENCH_BASE       the "base" gateway's edgegw binary
#   EGW_BENCH_REPS       rounds (default 3)
#   EGW_BENCH_WARMUP     seconds of traffic before measuring (default 2)
#   EGW_BENCH_SECS       seconds measured (default 5)
#   EGW_BENCH_SECGW      ipsec-secgw setup: cpu-crypto, lookaside, legacy
#   EGW_BENCH_SECGW_PMD  aesni_gcm or aesni_mb (default aesni_gcm)
#   EGW_BENCH_ZC         auto, yes or no (default auto)
#   EGW_BENCH_KEEP       frames kept and verified per run (default 2000)
#   EGW_BENCH_DP_CPU     CPU of the DUT's busy lcore (default 0)
#   EGW_BENCH_GEN_CPU    CPU of the generator's busy lcore (default 1)
#   EGW_BENCH_DP_MEM     MiB of hugepage memory per DUT (default 512)
#   EGW_BENCH_GEN_MEM    the same for the generator (default 256)
#   EGW_BENCH_LOAD_WAIT  before measuring, the longest wait for idle CPUs
#                        (under 10% busy over 5 s), seconds (default 600; 0:
#                        do not wait)
#   EGW_BENCH_MAX_RUNNABLE  a run during which more tasks than this were
#                        runnable in a one-second sample (the two busy lcores
#                        and the sampler make 3) is disturbed (default 4): it
#                        is run again once the CPUs are idle
#   EGW_BENCH_RETRIES    at most this many times (default 2), then kept and
#                        marked in the report
#   EGW_BENCH_IDLE_WAIT  the longest wait for idle CPUs before such a retry,
#                        seconds (default 180)
#   EGW_BENCH_C2C_NEAR   a core-to-core round trip (bench/c2c_latency.c, before
#                        and after each run) below this many ns means the two
#                        CPUs share a cache, "near", else "far" (default 200)
#   EGW_BENCH_EGW_ARGS   more edgegw options (after --) for the edgegw DUT,
#                        e.g. "--mbufs 8192 --burst 64" (default none)
#   EGW_BENCH_PERF       1: after each measurement, profile the DUT's busy
#                        lcore for 3 s with perf (<tag>.perf.txt; not in the
#                        figures)
#   EGW_BENCH_CACHE      cache directory (default build/bench-cache): the
#                        DPDK source, ipsec-secgw and the generator
#   EGW_BENCH_DPDK_SRC   an unpacked DPDK source of the installed version to
#                        use instead of apt-get source
#   EGW_BENCH_SECGW_BIN  an ipsec-secgw binary to use instead of building one
#   EGW_BENCH_BUILD_ONLY 1: only build ipsec-secgw (when missing) and print its
#                        path (bench/esp_gateway_instr.sh uses it); no
#                        hugepages, no run
#   EGW_BENCH_OUT        output directory (default: a new one under /tmp)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../scripts/setup-common.sh
. "$HERE/../scripts/setup-common.sh"
# shellcheck source=bench-common.sh
. "$HERE/bench-common.sh"

EDGEGW=${1:-$EGW_ROOT/build/app/edgegw/edgegw}
BASE=${EGW_BENCH_BASE:-}
SIZES=${EGW_BENCH_SIZES:-64 1400}
DIRS=${EGW_BENCH_DIRS:-out in}
DUTS=${EGW_BENCH_DUTS:-edgegw secgw}
REPS=${EGW_BENCH_REPS:-3}
WARMUP=${EGW_BENCH_WARMUP:-2}
SECS=${EGW_BENCH_SECS:-5}
SECGW_MODE=${EGW_BENCH_SECGW:-cpu-crypto}
SECGW_PMD=${EGW_BENCH_SECGW_PMD:-aesni_gcm}
ZC=${EGW_BENCH_ZC:-auto}
KEEP=${EGW_BENCH_KEEP:-2000}
DP_CPU=${EGW_BENCH_DP_CPU:-0}
GEN_CPU=${EGW_BENCH_GEN_CPU:-1}
DP_MEM=${EGW_BENCH_DP_MEM:-512}
GEN_MEM=${EGW_BENCH_GEN_MEM:-256}
LOAD_WAIT=${EGW_BENCH_LOAD_WAIT:-600}
MAX_RUNNABLE=${EGW_BENCH_MAX_RUNNABLE:-4}
RETRIES=${EGW_BENCH_RETRIES:-2}
IDLE_WAIT=${EGW_BENCH_IDLE_WAIT:-180}
PERF=${EGW_BENCH_PERF:-0}
BUILD_ONLY=${EGW_BENCH_BUILD_ONLY:-0}
# shellcheck disable=SC2206 # options, split on blanks
EGW_ARGS=(${EGW_BENCH_EGW_ARGS:-})
C2C_NEAR=${EGW_BENCH_C2C_NEAR:-200}
CACHE=${EGW_BENCH_CACHE:-$EGW_ROOT/build/bench-cache}
DPDK_SRC=${EGW_BENCH_DPDK_SRC:-}
SECGW_BIN=${EGW_BENCH_SECGW_BIN:-}
PY=/usr/bin/python3
HELPER=$HERE/ipsec_secgw_bench.py
FLOWS=64

DP_MAC0=02:00:00:00:e0:00
DP_MAC1=02:00:00:00:e0:01
GEN_MAC0=02:00:00:00:9e:00
GEN_MAC1=02:00:00:00:9e:01
# throw-away keys of the benchmark's SAs, published here: the ASCII of
# "bench-only-key-o" / "bench-only-key-i", then the salt "salt"
KEY_OUT=62656e63682d6f6e6c792d6b65792d6f73616c74
KEY_IN=62656e63682d6f6e6c792d6b65792d6973616c74
SPI_OUT=0x1000
SPI_IN=0x2000

colons() { sed 's/../&:/g; s/:$//' <<<"$1"; }

[ -x "$EDGEGW" ] || die "no edgegw binary at $EDGEGW (build first, or give its path as \$1)"
case $BUILD_ONLY in 0 | 1) ;; *) die "EGW_BENCH_BUILD_ONLY: 0 or 1" ;; esac
if [ "$BUILD_ONLY" = 0 ]; then
	[ "$(id -u)" -eq 0 ] || die "run as root (hugepages, DPDK)"
	[ "$(nproc)" -ge 2 ] || die "needs two CPUs: one busy lcore per process"
	[ "$DP_CPU" != "$GEN_CPU" ] || die "EGW_BENCH_DP_CPU and EGW_BENCH_GEN_CPU must differ"
	$PY -c 'import cryptography' 2>/dev/null || die "needs python3-cryptography (apt-get install python3-cryptography)"
fi
case $ZC in auto | yes | no) ;; *) die "EGW_BENCH_ZC must be auto, yes or no" ;; esac
case $SECGW_MODE in cpu-crypto | lookaside | legacy) ;; *) die "EGW_BENCH_SECGW: cpu-crypto, lookaside or legacy" ;; esac
case $SECGW_PMD in aesni_gcm | aesni_mb) ;; *) die "EGW_BENCH_SECGW_PMD: aesni_gcm or aesni_mb" ;; esac
for v in REPS WARMUP SECS KEEP DP_CPU GEN_CPU DP_MEM GEN_MEM LOAD_WAIT MAX_RUNNABLE RETRIES IDLE_WAIT C2C_NEAR; do
	is_uint "${!v}" || die "EGW_BENCH_$v must be a number (is '${!v}')"
done
for d in $DIRS; do case $d in out | in) ;; *) die "EGW_BENCH_DIRS: out, in" ;; esac; done
for d in $DUTS; do case $d in edgegw | secgw | io | base) ;; *) die "EGW_BENCH_DUTS: edgegw, secgw, io, base" ;; esac; done
case " $DUTS " in
*" base "*) [ -x "$BASE" ] || die "EGW_BENCH_DUTS has base: EGW_BENCH_BASE must name an edgegw binary (is '$BASE')" ;;
esac
for s in $SIZES; do
	if ! is_uint "$s" || [ "$s" -lt 64 ] || [ "$s" -gt 1400 ]; then
		die "EGW_BENCH_SIZES: 64..1400 (the ESP frame must fit an MTU of 1500)"
	fi
done
command -v pkg-config >/dev/null || die "pkg-config is missing (apt-get install pkg-config)"
VER=$(pkg-config --modversion libdpdk 2>/dev/null) || die "no libdpdk for pkg-config (apt-get install libdpdk-dev)"

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
if [ "$BUILD_ONLY" = 0 ]; then
	OUT=${EGW_BENCH_OUT:-$(mktemp -d /tmp/edgegw-secgw-bench.XXXXXX)}
	mkdir -p "$OUT"
	OUT=$(cd "$OUT" && pwd)
fi
[ "$BUILD_ONLY" = 1 ] || egw_hugepages $(((DP_MEM + GEN_MEM) / 2 + 32)) || die "hugepages"

# ---- ipsec-secgw ------------------------------------------------------------
# secgw_build: sets SECGW_BIN, building ipsec-secgw into the cache if missing
secgw_build() {
	local pkgver src dir log
	if [ -n "$SECGW_BIN" ]; then
		[ -x "$SECGW_BIN" ] || die "EGW_BENCH_SECGW_BIN=$SECGW_BIN is not an executable"
		return 0
	fi
	pkgver=$(dpkg-query -W -f='${Version}' libdpdk-dev 2>/dev/null) || die "libdpdk-dev is not installed"
	case $pkgver in "$VER"-* | "$VER") ;; *) die "pkg-config libdpdk $VER but libdpdk-dev $pkgver" ;; esac
	dir=$CACHE/secgw/$VER-$(sha256sum "$HERE/ipsec-secgw-memif.patch" | cut -c1-12)
	SECGW_BIN=$dir/ipsec-secgw/build/ipsec-secgw-shared
	[ -x "$SECGW_BIN" ] && return 0

	src=$DPDK_SRC
	if [ -z "$src" ]; then
		src=$CACHE/secgw/src-$pkgver
		if [ ! -f "$src/dpdk/examples/ipsec-secgw/ipsec-secgw.c" ]; then
			add_deb_src
			egw_log "secgw: apt-get source dpdk=$pkgver into $src"
			rm -rf "$src"
			mkdir -p "$src"
			(cd "$src" && apt-get source -q "dpdk=$pkgver") >"$src/apt-get.log" 2>&1 || {
				tail -5 "$src/apt-get.log" >&2
				die "apt-get source dpdk=$pkgver failed (apt-get update? or set EGW_BENCH_DPDK_SRC to an unpacked DPDK $VER)"
			}
			local top
			top=$(find "$src" -mindepth 3 -maxdepth 3 -path '*/examples/ipsec-secgw' | head -1)
			[ -n "$top" ] || die "apt-get source made no examples/ipsec-secgw in $src"
			ln -sfn "$(dirname "$(dirname "$top")")" "$src/dpdk"
		fi
		src=$src/dpdk
	fi
	[ "$(cat "$src/VERSION" 2>/dev/null)" = "$VER" ] ||
		die "DPDK source $src is version '$(cat "$src/VERSION" 2>/dev/null)', the installed libdpdk $VER"
	egw_log "secgw: building DPDK $VER examples/ipsec-secgw from $src into $dir"
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp"
	cp -r "$src/examples/ipsec-secgw" "$src/examples/common" "$dir.tmp/"
	log=$dir.tmp/build.log
	patch -d "$dir.tmp/ipsec-secgw" -p1 <"$HERE/ipsec-secgw-memif.patch" >"$log" 2>&1 ||
		{ cat "$log" >&2; die "secgw: bench/ipsec-secgw-memif.patch does not apply"; }
	make -C "$dir.tmp/ipsec-secgw" shared >>"$log" 2>&1 || { tail -20 "$log" >&2; die "secgw: make failed (log: $log)"; }
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	[ -x "$SECGW_BIN" ] || die "secgw: the build made no $SECGW_BIN"
}
case " $DUTS " in *" secgw "*) secgw_build ;; esac
if [ "$BUILD_ONLY" = 1 ]; then
	secgw_build
	echo "$SECGW_BIN"
	exit 0
fi

# ---- generator and inputs -----------------------------------------------------
GEN=$CACHE/esp_gen-$VER
if [ ! -x "$GEN" ] || [ "$HERE/esp_gen.c" -nt "$GEN" ]; then
	# shellcheck disable=SC2046 # pkg-config flags
	cc -O3 -Wall -Wextra $(pkg-config --cflags libdpdk) -o "$GEN" "$HERE/esp_gen.c" \
		$(pkg-config --libs libdpdk) || die "cannot build $GEN"
fi
# core-to-core round trip before and after each run (bench/c2c_latency.c): on
# a VM the two vCPUs move between host cores that share a cache ("near") and
# cores that do not ("far"), and every memif figure moves with it
C2C=$CACHE/c2c_latency
if [ ! -x "$C2C" ] || [ "$HERE/c2c_latency.c" -nt "$C2C" ]; then
	cc -O2 -pthread -o "$C2C" "$HERE/c2c_latency.c" || die "cannot build $C2C (cc)"
fi
c2c() { "$C2C" "$DP_CPU" "$GEN_CPU" 2>/dev/null || echo 0; }
declare -A TMPL
for d in $DIRS; do
	for s in $SIZES; do
		TMPL[$d-$s]=$OUT/$d-$s.tmpl
		if [ "$d" = out ]; then spi=$SPI_OUT key=$KEY_OUT; else spi=$SPI_IN key=$KEY_IN; fi
		$PY "$HELPER" template "${TMPL[$d-$s]}" "$d" "$s" "$FLOWS" "$spi" "$key" ||
			die "cannot make the $d $s-byte template"
	done
done

# ---- gateway configurations ------------------------------------------------------
# Both gateways get the full tunnel, both SAs and both policies, in every
# run (ipsec-secgw refuses an unprotected port without an inbound SA); only
# the ports' sides change with the direction measured: <p> protected (lan),
# <u> unprotected (uplink). The neighbour on each port is the generator's
# port across the link.
gen_mac() { if [ "$1" = 0 ]; then echo "$GEN_MAC0"; else echo "$GEN_MAC1"; fi; }
# egw_config <p> <u> <file>: edgegw, routed gateway; the sequence-number
# state file is made by the first run ('create') and kept by the later ones
egw_config() {
	local p=$1 u=$2 f=$3
	printf '%s\n' "set fwd gateway" "port role $p lan" "port role $u uplink" \
		"ip address add 100.64.0.1/24 port $p" "ip address add 192.0.2.1/24 port $u" \
		"ip neigh add 100.64.0.2 $(gen_mac "$p") port $p" \
		"ip neigh add 192.0.2.2 $(gen_mac "$u") port $u" \
		"ip route add 198.51.100.0/24 via 192.0.2.2 port $u" \
		"ip route add 203.0.113.0/24 via 192.0.2.2 port $u" \
		"esp state-file $OUT/esp-$$.state$([ -e "$OUT/esp-$$.state" ] || echo ' create')" \
		"esp sa add $SPI_OUT out aead aes-128-gcm key $KEY_OUT mode tunnel src 192.0.2.1 dst 198.51.100.1" \
		"esp sa add $SPI_IN in aead aes-128-gcm key $KEY_IN mode tunnel src 198.51.100.1 dst 192.0.2.1" \
		"esp policy add out src 100.64.0.0/24 dst 203.0.113.0/24 protect $SPI_OUT" \
		"esp policy add in src 203.0.113.0/24 dst 100.64.0.0/24 protect $SPI_IN" >"$f"
	chmod 600 "$f"
}
# secgw_config <p> <u> <file>: ipsec-secgw, the same
secgw_config() {
	local p=$1 u=$2 f=$3 type=cpu-crypto
	[ "$SECGW_MODE" = cpu-crypto ] || type=no-offload
	printf '%s\n' \
		"sp ipv4 out esp protect $((SPI_OUT)) pri 1 src 100.64.0.0/24 dst 203.0.113.0/24 sport 0:65535 dport 0:65535" \
		"sp ipv4 in esp protect $((SPI_IN)) pri 1 src 203.0.113.0/24 dst 100.64.0.0/24 sport 0:65535 dport 0:65535" \
		"sa out $((SPI_OUT)) aead_algo aes-128-gcm aead_key $(colons "$KEY_OUT") mode ipv4-tunnel src 192.0.2.1 dst 198.51.100.1 type $type" \
		"sa in $((SPI_IN)) aead_algo aes-128-gcm aead_key $(colons "$KEY_IN") mode ipv4-tunnel src 198.51.100.1 dst 192.0.2.1 type $type" \
		"rt ipv4 dst 198.51.100.0/24 port $u" "rt ipv4 dst 100.64.0.0/24 port $p" \
		"neigh port $p $(gen_mac "$p")" "neigh port $u $(gen_mac "$u")" >"$f"
	chmod 600 "$f"
}
secgw_args=(-p 0x3 -w 128 --config "(0,0,0),(1,0,0)")
[ "$SECGW_MODE" = legacy ] || secgw_args+=(-l)

# ---- one run ---------------------------------------------------------------------
DP_PREFIX=egw-secgw-dp-$$
GEN_PREFIX=egw-secgw-gen-$$
DP_PID=
GEN_PID=
trap remove_runtime EXIT
trap 'exit 130' INT TERM

MEM_VARS=EGW_BENCH_DP_MEM/GEN_MEM

# perf_dut <tag> <dut>: EGW_BENCH_PERF=1: a 3-second profile of the DUT's busy
# lcore (edgegw: its worker thread, ipsec-secgw: its main thread, which
# forwards), after the measurement, into <tag>.perf.txt
perf_dut() {
	local tid
	if [ "$2" = edgegw ]; then
		tid=$(grep -l -e '^rte-worker' -e '^lcore-worker' /proc/"$DP_PID"/task/*/comm 2>/dev/null | head -1)
		tid=${tid%/comm}
		tid=${tid##*/}
	else
		tid=$DP_PID
	fi
	[ -n "$tid" ] || { egw_log "$1: no busy thread to profile"; return 0; }
	if perf record -q -t "$tid" -o "$OUT/$1.perf.data" -- sleep 3 >/dev/null 2>&1; then
		perf report -i "$OUT/$1.perf.data" --stdio --no-children --sort symbol 2>/dev/null |
			grep -v -e '^#' -e '^$' | head -40 >"$OUT/$1.perf.txt" || true
	else
		egw_log "$1: perf record failed"
	fi
}

# run_one <dir> <size> <dut> <round> <zc yes|no>
run_one() {
	local d=$1 size=$2 dut=$3 zc=$5 tag=$1-$2-$3-$4 sock ready zcopt='' geneal=() mask spi key
	local dplog=$OUT/$tag.dp.log genlog=$OUT/$tag.gen.log
	sock=egw-secgw-$$-$tag
	rm -f "$OUT/$tag".{samples,gen,verify}.json "$OUT/$tag.cap.pcap"
	c2c >"$OUT/$tag.c2c"
	local vdev=(--vdev "net_memif0,role=server,id=0,socket=/run/$sock-a.sock,mac=$DP_MAC0"
		--vdev "net_memif1,role=server,id=0,socket=/run/$sock-b.sock,mac=$DP_MAC1")
	# outbound: clear in on port 0 (protected), ESP out of port 1; inbound
	# the other way round
	local p=0 u=1
	[ "$d" = out ] || { p=1 u=0; }
	case $dut in
	edgegw | io | base)
		if [ "$dut" = io ]; then
			echo "set fwd io" >"$OUT/$tag.dp.cmd"
		else
			egw_config "$p" "$u" "$OUT/$tag.dp.cmd"
		fi
		local bin=$EDGEGW
		[ "$dut" = base ] && bin=$BASE
		"$bin" --lcores "0@$GEN_CPU,1@$DP_CPU" --main-lcore 0 --no-pci \
			--file-prefix "$DP_PREFIX" --socket-mem "$DP_MEM" "${vdev[@]}" \
			-- --cmdline-file "$OUT/$tag.dp.cmd" --stats-json "$OUT/$tag.dp.json" \
			"${EGW_ARGS[@]}" >"$dplog" 2>&1 &
		DP_PID=$!
		ready="forwarding started"
		;;
	secgw)
		secgw_config "$p" "$u" "$OUT/$tag.dp.cfg"
		mask=$((1 << u))
		"$SECGW_BIN" --lcores "0@$DP_CPU" --no-pci --file-prefix "$DP_PREFIX" \
			--socket-mem "$DP_MEM" --vdev "crypto_${SECGW_PMD}0" "${vdev[@]}" \
			-- "${secgw_args[@]}" -u "$mask" -f "$OUT/$tag.dp.cfg" >"$dplog" 2>&1 &
		DP_PID=$!
		ready="Checking link status"
		;;
	esac
	if ! wait_for "$dplog" "$ready" 60 "$DP_PID"; then
		start_failed "$tag: the DUT ($dut)" "$dplog"
		stop_all
		return 1
	fi
	if [ "$zc" = yes ]; then
		zcopt=,zero-copy=yes
		geneal=(--single-file-segments)
	fi
	"$GEN" --lcores "0@$DP_CPU,1@$GEN_CPU" --main-lcore 0 --no-pci --file-prefix "$GEN_PREFIX" \
		--socket-mem "$GEN_MEM" "${geneal[@]}" \
		--vdev "net_memif0,role=client,id=0,socket=/run/$sock-a.sock,mac=$GEN_MAC0$zcopt" \
		--vdev "net_memif1,role=client,id=0,socket=/run/$sock-b.sock,mac=$GEN_MAC1$zcopt" \
		-- "${TMPL[$d-$size]}" "$OUT/$tag.cap.pcap" "$KEEP" "$OUT/$tag.gen.json" \
		>"$genlog" 2>&1 &
	GEN_PID=$!
	if ! wait_for "$genlog" "Forwarding started" 30 "$GEN_PID"; then
		start_failed "$tag: the generator (zero-copy $zc)" "$genlog"
		stop_all
		return 1
	fi
	if [ "$dut" = secgw ] && ! wait_for "$dplog" "entering main loop" 20 "$DP_PID"; then
		start_failed "$tag: ipsec-secgw (links up, main loop)" "$dplog"
		stop_all
		return 1
	fi
	if ! $PY "$EGW_ROOT/bench/memif_bench.py" sample "$DP_PREFIX" "$WARMUP" "$SECS" \
		"$OUT/$tag.samples.json"; then
		egw_err "$tag: no traffic through the DUT; the generator's log ($genlog):"
		tail -5 "$genlog" | sed 's/^/    /' >&2
		egw_err "the DUT's log ($dplog):"
		tail -8 "$dplog" | sed 's/^/    /' >&2
		stop_all
		return 1
	fi
	[ "$PERF" = 1 ] && perf_dut "$tag" "$dut"
	# results out of the generator before the DUT goes away (net_memif can
	# crash when its peer disconnects)
	kill -USR1 "$GEN_PID"
	wait_for "$genlog" "results written" 10 "$GEN_PID" || egw_log "$tag: the generator wrote no results"
	# the DUT's own counts and ESP drops (edgegw: --stats-json at exit)
	kill -TERM "$DP_PID"
	wait "$DP_PID" || egw_log "$tag: the DUT ($dut) exited with status $? (see $dplog)"
	DP_PID=
	kill -TERM "$GEN_PID" 2>/dev/null || true
	wait "$GEN_PID" 2>/dev/null || true
	GEN_PID=
	remove_hugefiles
	c2c >>"$OUT/$tag.c2c"
	echo "$zc" >"$OUT/$tag.zc"
	if [ "$dut" = io ]; then
		echo '{"frames": 0, "good": 0, "errors": {}, "io": true}' >"$OUT/$tag.verify.json"
		return 0
	fi
	if [ "$d" = out ]; then spi=$SPI_OUT key=$KEY_OUT; else spi=$SPI_IN key=$KEY_IN; fi
	$PY "$HELPER" verify "$OUT/$tag.cap.pcap" "$d" "$size" "$FLOWS" "$spi" "$key" \
		>"$OUT/$tag.verify.json" || egw_err "$tag: the frames the DUT sent are not right: $(cat "$OUT/$tag.verify.json")"
	return 0
}

# attempt <dir> <size> <dut> <round>: zero-copy first (auto, yes), copy mode
# after two failed zero-copy starts (auto) or at once (no)
attempt() {
	local tag=$1-$2-$3-$4 n=0 zc f
	for zc in yes yes no no; do
		case $ZC in yes) [ "$zc" = yes ] || continue ;; no) [ "$zc" = no ] || continue ;; esac
		n=$((n + 1))
		run_one "$@" "$zc" && return 0
		for f in "$OUT/$tag".{dp,gen}.{log,json} "$OUT/$tag.c2c"; do
			[ -e "$f" ] && mv "$f" "${f/$tag./$tag.fail$n.}"
		done
		egw_log "$tag: attempt $n (zero-copy $zc) failed (logs: $OUT/$tag.fail$n.*)"
		sleep 2
	done
	die "$tag: failed $n times"
}

# wait_quiet: measurements mean something only while nothing else runs: wait
# until both CPUs were idle (under 10% busy) over 5 s, at most
# EGW_BENCH_LOAD_WAIT seconds (the load average lags by minutes, so it is
# only reported)
wait_quiet() {
	[ "$LOAD_WAIT" -gt 0 ] || return 0
	local IDLE_WAIT=$LOAD_WAIT
	egw_log "load average $(cut -d' ' -f1-3 /proc/loadavg): waiting for idle CPUs (at most $LOAD_WAIT s)"
	wait_idle
}



{
	echo "command: EGW_BENCH_SIZES=\"$SIZES\" EGW_BENCH_DIRS=\"$DIRS\" EGW_BENCH_DUTS=\"$DUTS\" EGW_BENCH_REPS=$REPS EGW_BENCH_WARMUP=$WARMUP EGW_BENCH_SECS=$SECS EGW_BENCH_SECGW=$SECGW_MODE EGW_BENCH_SECGW_PMD=$SECGW_PMD EGW_BENCH_ZC=$ZC EGW_BENCH_EGW_ARGS=\"${EGW_ARGS[*]}\" EGW_BENCH_BASE=$BASE $0 $EDGEGW"
	echo "edgegw: $EDGEGW ($(git -C "$EGW_ROOT" describe --always --dirty 2>/dev/null || echo '?'))"
	[ -z "$BASE" ] || echo "base: $BASE ($(git -C "$(dirname "$BASE")" describe --always --dirty 2>/dev/null || echo '?'))"
	echo "ipsec-secgw: ${SECGW_BIN:--} (DPDK $VER, setup $SECGW_MODE, crypto_${SECGW_PMD}, ${secgw_args[*]})"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs; kernel $(uname -r)"
} >"$OUT/info.txt"
egw_log "output: $OUT (directions: $DIRS; sizes: $SIZES; gateways: $DUTS; $REPS rounds of $WARMUP s + $SECS s)"
egw_log "ipsec-secgw: setup $SECGW_MODE on crypto_${SECGW_PMD} (${secgw_args[*]})"
wait_quiet
echo "load average before measuring: $(cat /proc/loadavg)" >>"$OUT/info.txt"
for d in $DIRS; do
	for size in $SIZES; do
		for ((round = 1; round <= REPS; round++)); do
			for dut in $DUTS; do
				for ((try = 0; ; try++)); do
					egw_log "run: $d, $size B, $dut, round $round"
					attempt "$d" "$size" "$dut" "$round"
					n=$(disturbed "$OUT/$d-$size-$dut-$round.samples.json") || break
					if [ "$try" -ge "$RETRIES" ]; then
						egw_log "warning: $d-$size-$dut-$round: $n tasks were runnable during the measurement (more than $MAX_RUNNABLE): kept, marked disturbed"
						break
					fi
					egw_log "$d-$size-$dut-$round: $n tasks were runnable during the measurement (more than $MAX_RUNNABLE: something else ran): again once the CPUs are idle"
					wait_idle
				done
			done
		done
	done
done
echo "load average after: $(cat /proc/loadavg)" >>"$OUT/info.txt"
cat "$OUT/info.txt"
$PY "$HELPER" report "$OUT" "$SIZES" "$DIRS" "$DUTS" "$REPS" "$SECS" "$WARMUP" "$MAX_RUNNABLE" "$C2C_NEAR"
