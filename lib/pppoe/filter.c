/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PPPoE pass/active filters, control path: compile a pcap-filter(7)
 * expression into a program the data path runs (pppoe_filter_match() in
 * pppoe_filter.h), and free it.
 *
 * pcap_compile() for DLT_EN10MB gives classic BPF; rte_bpf_convert() turns
 * it into eBPF whose argument is the mbuf (loads go through
 * __rte_pktmbuf_read(), so they follow segment chains and fail past the
 * end). Before rte_bpf_load() validates and JIT-compiles it, filter_fix()
 * rewrites the converted program: 1.-4. work around DPDK 22.11 bugs, 5.
 * keeps libpcap's semantics, 6. hardens. Each was found wrong or crashing
 * against libpcap's own verdicts (tests/unit/pppoe/test_filter.c).
 *
 *  1. Converter: indexed loads (BPF_LD|BPF_IND) of a byte or a word get
 *     src_reg 0 (A) instead of X (EBPF_REG_7): the converter takes
 *     BPF_SRC() of the opcode, which is BPF_X only for the halfword size
 *     (BPF_H == BPF_X == 0x08): `tcp[tcpflags]` reads at A + 27, not X + 27.
 *     Every indexed load gets src_reg = EBPF_REG_7 (cBPF: X + k).
 *  2. x86 JIT: `jset dst, imm` is emitted as `test $imm, %reg`, opcode
 *     F7 /0 (imm32 only), but with a 1-byte immediate when imm fits in
 *     -128..127: the CPU takes the next three code bytes as the rest of the
 *     immediate and runs garbage (`tcp-syn` tests crash). Each such jset
 *     becomes `mov r9, imm; jset dst, r9` (EBPF_REG_9 is never used by
 *     converted programs); a jump to the jset lands on the mov. The mov is
 *     64-bit (sign-extending): eBPF's jset tests dst & (int64_t)imm, which
 *     it reproduces for every imm (the converter only emits 0 <= imm here;
 *     a negative k goes through EBPF_REG_8).
 *  3. x86 JIT: a jump's 8-bit displacement is chosen by testing the
 *     distance before the jump's own length (2 bytes) is taken off, so a
 *     backward jump of 127 or 128 bytes gets a displacement that wraps: it
 *     lands 256 bytes ahead, inside an instruction. The JIT's only backward
 *     jumps go to the epilogue, which it places at the first exit: from
 *     every failed packet load, division by zero and later exit. Every exit
 *     but the program's last instruction becomes a jump to that last exit:
 *     the epilogue is then at the end and every jump is forward.
 *  4. x86 JIT: its dry runs stop when two passes give the same total size,
 *     not the same offsets. The first pass has no prologue (the
 *     callee-saved registers in use are only known at its end) and all
 *     forward jumps long; when the second pass's prologue is exactly as
 *     long as what its jumps saved, the code is emitted with stale jump
 *     targets and may overrun its buffer (`not tcp and not udp or port 80`
 *     jumps into an instruction; about one random operator-style
 *     expression in 10,000). Every program starts with `r0 = 0; if r0 == 0
 *     goto first` over FILTER_PAD `ja +0`, which shrink from the first
 *     pass to the second by more than any prologue: the second pass is
 *     always shorter and the search goes on. Cost: one taken jump per run.
 *     Later passes could in principle stop the same way; an instrumented
 *     copy of the JIT found no stale offset in 280,000 random programs
 *     rewritten as here.
 *  5. libpcap semantics: a shift by X of 32 or more gives 0 in libpcap's
 *     bpf_filter() (a constant one is refused by pcap_compile); DPDK's
 *     interpreter and JIT shift by X mod 32, as x86 does. Each shift by X
 *     is followed by A &= (X < 32 ? 0xffffffff : 0), the mask computed
 *     without a branch in EBPF_REG_9.
 *  6. Hardening: an indexed load reads at X + k, where X may be computed
 *     from packet bytes or `len` (`ether[len - 62:4]`). DPDK adds X + k in
 *     32 bits and __rte_pktmbuf_read() checks off + len in 32 bits too, so
 *     an X near 2^32 wraps past the check and reads far outside the
 *     buffer. When the program can set X to anything but a small constant
 *     or a 4*(IHL) (ldxb 4*([k]&0xf)), each indexed load is preceded by
 *     `if X > PPPOE_FILTER_OFF_MAX goto return 0`, which is what libpcap
 *     does for such a load (bpf_filter(): out of the packet, no match).
 *     Constant offsets (k) above PPPOE_FILTER_OFF_MAX are refused.
 */
#define ALLOW_EXPERIMENTAL_API /* rte_bpf_convert() */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include <rte_bpf.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "pppoe_filter.h"
#include "pppoe_private.h"

/* The snap length libpcap compiles for: what a match returns. */
#define FILTER_SNAPLEN 65535

/* 4. at the top of this file: jumps skipped at the start of every program,
 * enough that they shrink by more than the JIT's largest prologue (sub rsp;
 * 6 callee-saved registers stored, 5 bytes each; mov rsp, rbp; sub rsp,
 * imm32: 44 bytes) from its first pass to its second: 3 bytes each, and 4
 * for the jump over them. */
#define FILTER_PAD 16

/* DPDK's JIT is used where test_filter.c checks it against libpcap, x86-64,
 * with 2.-4.; elsewhere (DPDK's arm64 JIT: not checked) the interpreter
 * runs the program, without 2.-4. */
#ifdef RTE_ARCH_X86_64
#define FILTER_JIT 1
#define FILTER_HEAD (2 + FILTER_PAD)
#else
#define FILTER_JIT 0
#define FILTER_HEAD 0
#endif

static void err_set(char *err, size_t errlen, const char *fmt, ...) __rte_format_printf(3, 4);

static void
err_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Linux socket metadata: SKF_AD_OFF (-0x1000) + n, n < SKF_AD_MAX (64),
 * e.g. [type] for `inbound`, [ifidx] for `ifindex`. */
#define FILTER_SKF_OFF 0xfffff000u
#define FILTER_SKF_END (FILTER_SKF_OFF + 64)

/*
 * What the classic program needs beyond rte_bpf_convert(), and what it may
 * not do. Refuses (-ENOTSUP, -E2BIG, -EINVAL; err filled) Linux socket
 * metadata, backward jumps (`protochain` loops: the converter and the
 * validator refuse them with less clear messages), constant packet offsets
 * above PPPOE_FILTER_OFF_MAX and reads of scratch memory never written. *x_free: can the program give X a value above
 * PPPOE_FILTER_OFF_MAX? Only ldx #k and ldxb 4*([k]&0xf) (at most 60) are
 * bounded.
 */
static int
filter_scan(const struct bpf_program *prog, bool *x_free, char *err, size_t errlen)
{
	const struct bpf_insn *in = prog->bf_insns;
	uint32_t stored = 0, loaded = 0;
	unsigned int i;

	*x_free = false;
	for (i = 0; i < prog->bf_len; i++) {
		uint16_t code = in[i].code;

		if ((code == BPF_ST || code == BPF_STX) && in[i].k < BPF_MEMWORDS)
			stored |= 1u << in[i].k;
		if ((code == (BPF_LD | BPF_W | BPF_MEM) || code == (BPF_LDX | BPF_W | BPF_MEM)) &&
		    in[i].k < BPF_MEMWORDS)
			loaded |= 1u << in[i].k;

		if (BPF_CLASS(code) == BPF_LD &&
		    (BPF_MODE(code) == BPF_ABS || BPF_MODE(code) == BPF_IND)) {
			if (in[i].k >= FILTER_SKF_OFF && in[i].k < FILTER_SKF_END) {
				err_set(err, errlen,
					"needs Linux socket metadata (inbound, outbound, "
					"ifindex...), which DPDK frames do not have");
				return -ENOTSUP;
			}
			if (in[i].k > PPPOE_FILTER_OFF_MAX) {
				err_set(err, errlen, "packet offset %u is beyond %u bytes", in[i].k,
					PPPOE_FILTER_OFF_MAX);
				return -E2BIG;
			}
		}
		if (code == (BPF_JMP | BPF_JA) && in[i].k >= 0x80000000u) {
			err_set(err, errlen, "backward jump (a loop: protochain?) not supported");
			return -ENOTSUP;
		}
		if (code == (BPF_LDX | BPF_W | BPF_IMM))
			*x_free |= in[i].k > PPPOE_FILTER_OFF_MAX;
		else if (code == (BPF_MISC | BPF_TAX) || BPF_CLASS(code) == BPF_LDX)
			*x_free |= code != (BPF_LDX | BPF_B | BPF_MSH);
	}
	/* Seen with libpcap 1.10.3's optimiser on arithmetic with many terms
	 * (its unoptimised program stores the slot); DPDK's validator would
	 * refuse the load with a message in its log only. */
	if ((loaded & ~stored) != 0) {
		err_set(err, errlen,
			"libpcap's program reads scratch memory M[%d] it never writes "
			"(a libpcap optimiser bug): write the expression differently",
			__builtin_ctz(loaded & ~stored));
		return -EINVAL;
	}
	return 0;
}

/* The DPDK x86 JIT's broken case: jset with an immediate it encodes in 8 bits. */
static bool
jset_imm8(const struct ebpf_insn *ins)
{
	return FILTER_JIT && ins->code == (BPF_JMP | BPF_JSET | BPF_K) && ins->imm >= INT8_MIN &&
	       ins->imm <= INT8_MAX;
}

static bool
ld_ind(const struct ebpf_insn *ins)
{
	return BPF_CLASS(ins->code) == BPF_LD && BPF_MODE(ins->code) == BPF_IND;
}

/* A jump with an offset (not call, not exit). */
static bool
is_jump(const struct ebpf_insn *ins)
{
	return BPF_CLASS(ins->code) == BPF_JMP && BPF_OP(ins->code) != EBPF_CALL &&
	       BPF_OP(ins->code) != EBPF_EXIT;
}

static bool
is_exit(const struct ebpf_insn *ins)
{
	return ins->code == (BPF_JMP | EBPF_EXIT);
}

/* A shift by a register (A <<= X, A >>= X). */
static bool
shift_x(const struct ebpf_insn *ins)
{
	return ins->code == (BPF_ALU | BPF_LSH | BPF_X) || ins->code == (BPF_ALU | BPF_RSH | BPF_X);
}

/* How many instructions filter_fix() makes of ins. */
static uint32_t
fix_len(const struct ebpf_insn *ins, bool guard)
{
	if (ld_ind(ins))
		return guard ? 2 : 1;
	if (jset_imm8(ins))
		return 2;
	if (shift_x(ins))
		return 6;
	return 1;
}

/*
 * The rewrite described at the top of this file, from in[n] into a new
 * array (malloc'ed, *outp, *n_out instructions). Each instruction i of in
 * becomes pos[i + 1] - pos[i] instructions at pos[i], after FILTER_HEAD
 * ones of 4.: a guard before it (6.); the mov before the jset (2.); the mask
 * computed before the shift and applied after it (5.). A jump from i to
 * t = i + 1 + off goes to pos[t], the first of t's instructions. The guards
 * jump to a `return 0` block appended at the end; every exit but the last
 * instruction becomes a jump to it (3.). Returns 0, -E2BIG (over
 * PPPOE_FILTER_INS_MAX), -EINVAL (a jump out of the program, or a program
 * that does not end with an exit), -ENOMEM.
 */
static int
filter_fix(const struct ebpf_insn *in, uint32_t n, bool guard, struct ebpf_insn **outp,
	   uint32_t *n_out)
{
	struct ebpf_insn *out;
	uint32_t *pos, i, o, tail, total, last;
	bool guarded = false;
	int rc = 0;

	if (n == 0 || !is_exit(&in[n - 1]))
		return -EINVAL;
	pos = malloc((n + 1) * sizeof(*pos));
	if (pos == NULL)
		return -ENOMEM;
	for (i = 0, o = FILTER_HEAD; i < n; i++) {
		pos[i] = o;
		o += fix_len(&in[i], guard);
		guarded |= guard && ld_ind(&in[i]);
	}
	pos[n] = tail = o;
	total = tail + (guarded ? 2 : 0);
	if (total > PPPOE_FILTER_INS_MAX) {
		*n_out = total;
		free(pos);
		return -E2BIG;
	}
	out = malloc(total * sizeof(*out));
	if (out == NULL) {
		free(pos);
		return -ENOMEM;
	}
	last = total - 1;
#if FILTER_JIT
	/* 4.: r0 = 0; if r0 == 0 goto first; FILTER_PAD times ja +0; first: */
	out[0] = (struct ebpf_insn){.code = BPF_ALU | EBPF_MOV | BPF_K, .dst_reg = EBPF_REG_0};
	out[1] = (struct ebpf_insn){
		.code = BPF_JMP | BPF_JEQ | BPF_K,
		.dst_reg = EBPF_REG_0,
		.off = FILTER_PAD,
	};
	for (o = 2; o < FILTER_HEAD; o++)
		out[o] = (struct ebpf_insn){.code = BPF_JMP | BPF_JA};
#endif

	for (i = 0; i < n; i++) {
		struct ebpf_insn ins = in[i];

		o = pos[i];
		if (ld_ind(&ins)) {
			if (guard) {
				/* 6. */
				out[o] = (struct ebpf_insn){
					.code = BPF_JMP | BPF_JGT | BPF_K,
					.dst_reg = EBPF_REG_7,
					.off = (int16_t)(tail - (o + 1)),
					.imm = PPPOE_FILTER_OFF_MAX,
				};
				o++;
			}
			ins.src_reg = EBPF_REG_7; /* 1. */
		} else if (jset_imm8(&ins)) {
			/* 2. */
			out[o] = (struct ebpf_insn){
				.code = EBPF_ALU64 | EBPF_MOV | BPF_K,
				.dst_reg = EBPF_REG_9,
				.imm = ins.imm,
			};
			o++;
			ins.code = BPF_JMP | BPF_JSET | BPF_X;
			ins.src_reg = EBPF_REG_9;
			ins.imm = 0;
		} else if (shift_x(&ins)) {
			/* 5.: r9 = ((X >> 5) - 1) >> 32 (64-bit): 0xffffffff
			 * when X < 32, else 0; then the shift, then A &= r9.
			 * Not a branch to A = 0: on that path A is a constant 0
			 * for DPDK's validator, which then refuses a division
			 * by it even behind the converter's test of the
			 * divisor (`2 / (len << ip[26])`). */
			out[o] = (struct ebpf_insn){.code = EBPF_ALU64 | EBPF_MOV | BPF_X,
						    .dst_reg = EBPF_REG_9,
						    .src_reg = ins.src_reg};
			out[o + 1] = (struct ebpf_insn){.code = EBPF_ALU64 | BPF_RSH | BPF_K,
							.dst_reg = EBPF_REG_9,
							.imm = 5};
			out[o + 2] = (struct ebpf_insn){.code = EBPF_ALU64 | BPF_ADD | BPF_K,
							.dst_reg = EBPF_REG_9,
							.imm = -1};
			out[o + 3] = (struct ebpf_insn){.code = EBPF_ALU64 | BPF_RSH | BPF_K,
							.dst_reg = EBPF_REG_9,
							.imm = 32};
			out[o + 5] = (struct ebpf_insn){.code = BPF_ALU | BPF_AND | BPF_X,
							.dst_reg = ins.dst_reg,
							.src_reg = EBPF_REG_9};
			o += 4;
		}
		if (FILTER_JIT && is_exit(&ins) && o != last) {
			/* 3.: R0 is already the result */
			ins = (struct ebpf_insn){
				.code = BPF_JMP | BPF_JA,
				.off = (int16_t)(last - (o + 1)),
			};
		} else if (is_jump(&ins)) {
			int64_t t = (int64_t)i + 1 + ins.off;

			if (t < 0 || t >= n) {
				rc = -EINVAL;
				break;
			}
			/* n, and so every offset, is at most PPPOE_FILTER_INS_MAX */
			ins.off = (int16_t)((int64_t)pos[t] - (o + 1));
		}
		out[o] = ins;
	}
	if (guarded) {
		out[tail] = (struct ebpf_insn){.code = BPF_ALU | EBPF_MOV | BPF_K,
					       .dst_reg = EBPF_REG_0};
		out[tail + 1] = (struct ebpf_insn){.code = BPF_JMP | EBPF_EXIT};
	}
	free(pos);
	if (rc != 0) {
		free(out);
		return rc;
	}
	*outp = out;
	*n_out = total;
	return 0;
}

/* libpcap's classic program for expr, into prog; err gets pcap's message. */
static int
filter_pcap(const char *expr, struct bpf_program *prog, char *err, size_t errlen)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, FILTER_SNAPLEN);
	int rc = 0;

	if (p == NULL) {
		err_set(err, errlen, "cannot open a libpcap handle");
		return -ENOMEM;
	}
	if (pcap_compile(p, prog, expr, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		err_set(err, errlen, "%s", pcap_geterr(p));
		rc = -EINVAL;
	}
	pcap_close(p);
	return rc;
}

struct pppoe_filter *
pppoe_filter_compile(const char *expr, int socket, char *err, size_t errlen)
{
	struct rte_bpf_prm *conv = NULL, prm;
	struct ebpf_insn *ins = NULL;
	struct pppoe_filter *f = NULL;
	struct bpf_program prog;
	struct rte_bpf_jit jit;
	struct rte_bpf *bpf;
	uint32_t nb_ins = 0;
	size_t len;
	bool x_free;
	int rc;

	if (expr == NULL) {
		err_set(err, errlen, "no expression");
		rte_errno = EINVAL;
		return NULL;
	}
	len = strnlen(expr, PPPOE_FILTER_EXPR_MAX + 1);
	if (len > PPPOE_FILTER_EXPR_MAX) {
		err_set(err, errlen, "expression longer than %u characters", PPPOE_FILTER_EXPR_MAX);
		rte_errno = E2BIG;
		return NULL;
	}
	rc = filter_pcap(expr, &prog, err, errlen);
	if (rc != 0) {
		rte_errno = -rc;
		return NULL;
	}
	/* rte_bpf_convert() takes at most 4096 (BPF_MAXINSNS) and emits at
	 * least one eBPF instruction for each */
	if (prog.bf_len > PPPOE_FILTER_INS_MAX) {
		err_set(err, errlen, "program of %u classic BPF instructions, at most %u",
			prog.bf_len, PPPOE_FILTER_INS_MAX);
		rc = -E2BIG;
		goto out;
	}
	rc = filter_scan(&prog, &x_free, err, errlen);
	if (rc != 0)
		goto out;
	conv = rte_bpf_convert(&prog);
	if (conv == NULL) {
		/* it reports an unknown instruction as errno 1 (its "return -1") */
		rc = rte_errno == ENOMEM ? -ENOMEM : -ENOTSUP;
		err_set(err, errlen, "rte_bpf_convert: %s",
			rc == -ENOMEM ? "out of memory" : "instruction not supported");
		goto out;
	}
	rc = filter_fix(conv->ins, conv->nb_ins, x_free, &ins, &nb_ins);
	if (rc != 0) {
		if (rc == -E2BIG)
			err_set(err, errlen, "program of %u eBPF instructions, at most %u", nb_ins,
				PPPOE_FILTER_INS_MAX);
		else
			err_set(err, errlen, "converted program: %s", strerror(-rc));
		goto out;
	}

	f = rte_zmalloc_socket("pppoe_filter", sizeof(*f) + len + 1, RTE_CACHE_LINE_SIZE, socket);
	if (f == NULL) {
		err_set(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	memcpy(f->expr, expr, len + 1);

	memset(&prm, 0, sizeof(prm));
	prm.ins = ins;
	prm.nb_ins = nb_ins;
	prm.prog_arg.type = RTE_BPF_ARG_PTR_MBUF;
	prm.prog_arg.size = sizeof(struct rte_mbuf);
	prm.prog_arg.buf_size = RTE_MBUF_DEFAULT_BUF_SIZE;
	bpf = rte_bpf_load(&prm);
	if (bpf == NULL) {
		rc = -(rte_errno != 0 ? rte_errno : EINVAL);
		err_set(err, errlen, "rte_bpf_load: %s (DPDK's log has the reason)",
			rte_strerror(-rc));
		goto out;
	}
	f->bpf = bpf;
	f->nb_cbpf = prog.bf_len;
	f->nb_ins = nb_ins;
	/* No JIT (see FILTER_JIT, or it failed): func stays NULL and
	 * pppoe_filter_match() interprets. */
	if (FILTER_JIT && rte_bpf_get_jit(bpf, &jit) == 0 && jit.func != NULL) {
		f->jit = jit.func;
		f->jit_size = jit.sz;
	} else {
		PPPOE_LOG(NOTICE, "filter \"%s\": no eBPF JIT, interpreted", expr);
	}
	PPPOE_LOG(DEBUG, "filter \"%s\": %u cBPF, %u eBPF instructions, %zu bytes of code", expr,
		  f->nb_cbpf, f->nb_ins, f->jit_size);
out:
	pcap_freecode(&prog);
	rte_free(conv);
	free(ins);
	if (rc != 0) {
		rte_free(f);
		rte_errno = -rc;
		return NULL;
	}
	return f;
}

void
pppoe_filter_free(struct pppoe_filter *f)
{
	if (f == NULL)
		return;
	rte_bpf_destroy(f->bpf);
	rte_free(f);
}

bool
pppoe_filter_match_interp(const struct pppoe_filter *f, struct rte_mbuf *m)
{
	if (f == NULL)
		return true;
	return rte_bpf_exec(f->bpf, m) != 0;
}
