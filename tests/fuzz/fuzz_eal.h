/* SPDX-License-Identifier: BSD-3-Clause */
/* EAL for the fuzz targets that need one: no hugepages (a region's memfd
 * does not need EAL's), no PCI scan, no shared files. --no-shconf rather
 * than --in-memory: DPDK 22.11 refuses --in-memory with --no-huge (which
 * implies --legacy-mem). */
#ifndef EGW_FUZZ_EAL_H
#define EGW_FUZZ_EAL_H

#include <rte_common.h>
#include <rte_eal.h>

static inline int
fuzz_eal_init(char *argv0)
{
	char *eal_argv[] = {
		argv0, "--no-huge",         "-m", "128", "--no-pci", "--no-shconf", "-l",
		"0",   "--log-level=error", NULL,
	};

	return rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv);
}

#endif /* EGW_FUZZ_EAL_H */
