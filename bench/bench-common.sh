# SPDX-License-Identifier: BSD-3-Clause
#
# Shell helpers of the net_memif benchmarks (bench/memif_throughput.sh,
# bench/ipsec_secgw.sh), sourced after scripts/setup-common.sh. They read the
# caller's globals: DP_PID, GEN_PID, DP_PREFIX, GEN_PREFIX (the two DPDK
# processes of a run and their --file-prefix), IDLE_WAIT, PY, MAX_RUNNABLE,
# MEM_VARS (the environment variables that set each process's --socket-mem).
# shellcheck shell=bash

die() { egw_err "$*"; exit 1; }
is_uint() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }

# add_deb_src: a deb-src twin of the system's deb entries (same mirror and
# suites), if there is no deb-src entry at all, so that `apt-get source dpdk`
# works on a fresh Debian 12 (which has deb entries only); apt-get update's
# log goes to $CACHE/apt-get-update.log
add_deb_src() {
	local f=/etc/apt/sources.list.d/edgegw-bench-src.sources
	# only the files apt reads (sources.list.d also holds *.disabled ones)
	if cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -q -E '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)'; then
		return 0
	fi
	egw_log "no deb-src entry in the APT sources: adding $f (the deb entries' mirror and suites)"
	{
		for s in /etc/apt/sources.list.d/*.sources; do
			[ -f "$s" ] || continue
			# deb822 stanzas of Types: deb -> deb-src
			awk 'BEGIN { RS = ""; ORS = "\n\n" } /(^|\n)Types:[^\n]*deb/ && $0 !~ /deb-src/ {
				sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$s"
		done
		# one-line entries: URI, suite, components (options in [...] are
		# dropped: the Debian archive's key is apt's default)
		[ -f /etc/apt/sources.list ] && awk '$1 == "deb" {
			$1 = ""; sub(/^ /, ""); o = ""
			if ($1 ~ /^\[/) { o = $1; $1 = ""; sub(/^ /, "") }
			n = split($0, a, " "); printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents:", a[1], a[2]
			for (i = 3; i <= n; i++) printf " %s", a[i]
			printf "\n\n" }' /etc/apt/sources.list
	} >"$f"
	[ -s "$f" ] || { rm -f "$f"; die "found no deb entry to derive a deb-src entry from"; }
	apt-get update -q >"$CACHE/apt-get-update.log" 2>&1 || {
		tail -5 "$CACHE/apt-get-update.log" >&2
		die "apt-get update failed"
	}
}

# start_failed <what> <log>: why a process did not come up
start_failed() {
	egw_err "$1 did not come up; the end of its log ($2):"
	grep -v 'Adding route' "$2" | tail -8 | sed 's/^/    /' >&2
	if grep -q -E 'fallocate|Cannot init memory|Cannot get hugepage|Cannot allocate|out of memory|Not enough memory' "$2"; then
		egw_err "memory: free 2 MiB hugepages now: $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages); $MEM_VARS set what each process reserves (--socket-mem)"
	fi
}

# wait_for <file> <regex> <seconds> <pid>: until the regex is in the file;
# fails at the timeout or when the process is gone
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$4" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# stop_all: end the processes of a failed or interrupted run (ours, by PID);
# a command FIFO held open on fd 7 is closed first
stop_all() {
	{ exec 7>&-; } 2>/dev/null || true
	if [ -n "$GEN_PID" ]; then kill -TERM "$GEN_PID" 2>/dev/null || true; fi
	if [ -n "$DP_PID" ]; then kill -TERM "$DP_PID" 2>/dev/null || true; fi
	[ -n "$GEN_PID" ] && { wait "$GEN_PID" 2>/dev/null || true; }
	[ -n "$DP_PID" ] && { wait "$DP_PID" 2>/dev/null || true; }
	GEN_PID=
	DP_PID=
}

# remove_hugefiles: the hugepage files our processes leave (their prefixes
# carry our PID), so that the next run has the pages
remove_hugefiles() {
	local mnt
	while read -r mnt; do
		rm -f "$mnt/$DP_PREFIX"map_* "$mnt/$GEN_PREFIX"map_*
	done < <(awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts)
}

# remove_runtime: everything a run leaves behind (the EXIT trap)
remove_runtime() {
	stop_all
	rm -rf "/var/run/dpdk/$DP_PREFIX" "/var/run/dpdk/$GEN_PREFIX"
	remove_hugefiles
}

# disturbed <samples.json>: true (printing the count) if more tasks than the
# two busy lcores and the sampler (MAX_RUNNABLE) were runnable in a sample
disturbed() {
	$PY -c 'import json, sys
n = json.load(open(sys.argv[1]))["runnable_max"]
print(n)
sys.exit(0 if n > int(sys.argv[2]) else 1)' "$1" "$MAX_RUNNABLE"
}

# wait_idle: until both CPUs were less than 10% busy over 5 s (at most
# IDLE_WAIT seconds, EGW_BENCH_IDLE_WAIT)
wait_idle() {
	local t0 a b
	t0=$SECONDS
	while [ $((SECONDS - t0)) -lt "$IDLE_WAIT" ]; do
		a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
		sleep 5
		b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
		if awk -v a="$a" -v b="$b" 'BEGIN { split(a, x); split(b, y); exit !((y[1] - x[1]) < 0.1 * (y[2] - x[2])) }'; then
			return 0
		fi
	done
	egw_log "warning: the CPUs were still busy after ${IDLE_WAIT} s"
}
