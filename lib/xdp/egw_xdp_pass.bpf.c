// SPDX-License-Identifier: BSD-3-Clause
/*
 * An XDP program that passes every frame to the kernel (kernel data path):
 * the baseline against which bench/ and the unit test measure what
 * egw_xdp.bpf.c adds to kernel-bound traffic.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int
egw_xdp_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
