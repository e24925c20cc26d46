# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Shared set-up steps for scripts/demo, scripts/test and bench/*.sh.
# Source it (bash only), then call the functions you need:
#
#   . "$(dirname "$0")/../scripts/setup-common.sh"
#   egw_install_deps [extra-package ...]   # apt-get only what is missing
#   egw_build <builddir> [meson args ...]  # meson setup (once) + ninja
#   egw_hugepages <n>                      # at least <n> free 2 MiB pages, hugetlbfs mounted
#
# Every function is idempotent and returns quickly when there is nothing to
# do; each one returns non-zero (with a message on stderr) on failure, it does
# not exit the caller. Run as root on Debian 12.
#
# Variables (optional):
#   EGW_NINJA_TARGETS  ninja targets for egw_build (default: everything)
#   EGW_QUIET=1        no progress messages on stderr

# The repository root (the parent of scripts/).
EGW_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian packages the project needs to build, run and test.
# python3-cryptography: scapy's ESP (a Recommends of python3-scapy, which
# --no-install-recommends leaves out); tshark: the demo decrypts ESP with it
# and the ESP tests use it as a second independent peer; tcpdump: the seed's
# capture filter in the ESP segmentation test; libssl-dev: libcrypto for CHAP
# MD5 and PPPoE cookies; ppp, pppoe: pppoe-discovery and rp-pppoe's pppoe,
# real PPPoE clients the tests and the demo run against edgegw;
# libnl-route-3-dev: the kernel exception interfaces' addresses;
# clang-14: the XDP steering program (clang -target bpf, lib/xdp).
EGW_DEB_PACKAGES=(build-essential meson ninja-build pkg-config libdpdk-dev dpdk
	libipsec-mb-dev libbpf-dev libpcap-dev libssl-dev python3 python3-scapy
	python3-cryptography tshark tcpdump ppp pppoe libnl-route-3-dev clang-14)

egw_log() {
	[ "${EGW_QUIET:-0}" = 1 ] || printf '[edgegw] %s\n' "$*" >&2
}

egw_err() {
	printf '[edgegw] error: %s\n' "$*" >&2
}

# egw_pkg_installed <package>: true if dpkg has it fully installed.
egw_pkg_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# egw_install_deps [extra-package ...]
# Installs the packages of EGW_DEB_PACKAGES (and the extra ones) that are not
# installed yet. apt-get update runs only when something is to be installed.
egw_install_deps() {
	local missing=() p

	for p in "${EGW_DEB_PACKAGES[@]}" "$@"; do
		egw_pkg_installed "$p" || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		egw_log "packages: all present"
		return 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		egw_err "missing packages (${missing[*]}): run as root to install them"
		return 1
	fi
	egw_log "packages: installing ${missing[*]}"
	apt-get update -q || { egw_err "apt-get update failed"; return 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" || { egw_err "apt-get install ${missing[*]} failed"; return 1; }
}

# egw_build <builddir> [meson args ...]
# Configures <builddir> with meson (only if it is not configured yet: the
# meson args apply to that first set-up only) and builds it with ninja
# (EGW_NINJA_TARGETS, default all). A relative <builddir> is taken from the
# repository root.
egw_build() {
	local dir=${1:?egw_build: build directory needed}
	shift
	case $dir in /*) ;; *) dir=$EGW_ROOT/$dir ;; esac
	if [ -f "$dir/meson-private/coredata.dat" ] && [ -f "$dir/build.ninja" ]; then
		egw_log "build: $dir already configured"
	else
		egw_log "build: meson setup $dir $*"
		meson setup "$dir" "$EGW_ROOT" "$@" >"${TMPDIR:-/tmp}/edgegw-meson-setup.$$.log" 2>&1 || {
			cat "${TMPDIR:-/tmp}/edgegw-meson-setup.$$.log" >&2
			rm -f "${TMPDIR:-/tmp}/edgegw-meson-setup.$$.log"
			egw_err "meson setup $dir failed"
			return 1
		}
		rm -f "${TMPDIR:-/tmp}/edgegw-meson-setup.$$.log"
	fi
	# shellcheck disable=SC2086 # EGW_NINJA_TARGETS is a list of words
	ninja -C "$dir" ${EGW_NINJA_TARGETS:-} >"${TMPDIR:-/tmp}/edgegw-ninja.$$.log" 2>&1 || {
		cat "${TMPDIR:-/tmp}/edgegw-ninja.$$.log" >&2
		rm -f "${TMPDIR:-/tmp}/edgegw-ninja.$$.log"
		egw_err "ninja -C $dir failed"
		return 1
	}
	if grep -q '^ninja: no work to do' "${TMPDIR:-/tmp}/edgegw-ninja.$$.log"; then
		egw_log "build: $dir up to date"
	else
		egw_log "build: $dir built"
	fi
	rm -f "${TMPDIR:-/tmp}/edgegw-ninja.$$.log"
}

# egw_hugepages <n>
# Makes sure at least <n> 2 MiB hugepages are free (raising
# /proc/sys/vm/nr_hugepages by what is missing; it never lowers it) and that a
# hugetlbfs is mounted (at /dev/hugepages if none is).
egw_hugepages() {
	local want=${1:?egw_hugepages: number of 2 MiB pages needed}
	local sysfs=/sys/kernel/mm/hugepages/hugepages-2048kB
	local total free

	if [ ! -d "$sysfs" ]; then
		egw_err "no 2 MiB hugepage support in this kernel ($sysfs missing)"
		return 1
	fi
	total=$(cat "$sysfs/nr_hugepages")
	free=$(cat "$sysfs/free_hugepages")
	if [ "$free" -lt "$want" ]; then
		egw_log "hugepages: $free of $total free, reserving $((want - free)) more"
		echo $((total + want - free)) >/proc/sys/vm/nr_hugepages 2>/dev/null ||
			echo $((total + want - free)) >"$sysfs/nr_hugepages" 2>/dev/null || {
			egw_err "cannot write /proc/sys/vm/nr_hugepages (root needed)"
			return 1
		}
		free=$(cat "$sysfs/free_hugepages")
		if [ "$free" -lt "$want" ]; then
			egw_err "only $free free 2 MiB hugepages after reserving (wanted $want): memory too fragmented or too small"
			return 1
		fi
	else
		egw_log "hugepages: $free of $total free (need $want)"
	fi
	if ! awk '$3 == "hugetlbfs" { found = 1 } END { exit !found }' /proc/mounts; then
		egw_log "hugepages: mounting hugetlbfs on /dev/hugepages"
		if ! { mkdir -p /dev/hugepages &&
			mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages; }; then
			egw_err "cannot mount hugetlbfs on /dev/hugepages"
			return 1
		fi
	fi
}
