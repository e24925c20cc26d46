/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Gateway stage: ESP (lib/esp). It wraps the IPv4 and IPv6 stages and is
 * installed after the rxtokens stage, so it runs first:
 *   - from an access port: outbound policy lookup; protected frames become
 *     ESP frames (segmented or fragmented to the SA's MTU) that go on to
 *     the next stage (the route to the uplink); bypassed frames go on in
 *     clear; ICMP too-big messages go back out the ingress port;
 *   - from an uplink port: ESP frames are decrypted and clear frames are
 *     checked against the inbound policies; both go on (each group in
 *     arrival order);
 *   - from ports without a role: as from an access port (fail closed: no
 *     port skips the policies).
 * Frames ESP made or rewrote get their class again before they go on: the
 * later stages read it, and a tunnel may change the family. lib/esp keeps
 * their Ethernet header and their lib/eth metadata (copies and segments
 * too), so the new ethertype decides it (egw_eth_reclassify_ip()); a frame
 * whose ethertype is not IP is classified in full.
 * With no SA, no policy and no default that discards, the stage costs one
 * load and a branch.
 *
 * Each worker has its own context (index = worker index, mbufs from the
 * pool of its socket); the workers are the library's QSBR readers.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include <rte_malloc.h>

#include "fwd.h"

/* Room for the ESP frames of one outbound call: the library needs at least
 * EGW_ESP_MAX_SEGS (one packet's worth); more means fewer calls. */
#define ESP_OUT_CAP (2 * EGW_MAX_BURST)

static_assert(EGW_MAX_BURST <= EGW_ESP_MAX_BURST, "a gateway burst must fit one lib/esp call");
static_assert(ESP_OUT_CAP >= EGW_ESP_MAX_SEGS && ESP_OUT_CAP <= UINT16_MAX,
	      "outbound room: one packet's segments at least");

/* lib reason r is application reason EGW_DROP_ESP_FIRST + r */
#define EGW_ESP_DROP(e, n, d)                                                    \
	static_assert(EGW_DROP_ESP_##e == EGW_DROP_ESP_FIRST + EGW_ESP_DROP_##e, \
		      "drop.def: the ESP reasons must come last, in lib/esp's order (" n ")");
#include "egw_esp_drop.def"
#undef EGW_ESP_DROP

/* Per-worker context and scratch, on the worker's socket. */
struct egw_esp_stage_worker {
	struct egw_esp_ctx *ctx;
	struct egw_esp_res res; /* zero between calls */
	struct egw_esp_sa *sa[EGW_MAX_BURST];
	struct rte_mbuf *esp[EGW_MAX_BURST]; /* inbound: the ESP frames of a burst */
	struct rte_mbuf *v6[EGW_MAX_BURST];  /* esp_next(): the IPv6 frames of a chunk */
	struct rte_mbuf *out[ESP_OUT_CAP];   /* outbound: ESP frames made by one call */
};

static egw_stage_fn next_stage[EGW_ETH_CLS_MAX];

/* Device MTU of each port, read once ports are set up (edgegw never changes
 * it later): lib/esp segments only packets larger than their ingress MTU
 * (or marked TSO / LRO). */
static uint16_t port_mtu[RTE_MAX_ETHPORTS];

/* Non-zero while SAs or policies exist: written by the control path after
 * every esp command, read by the workers once per burst. */
static int esp_active;

/* Count what one lib/esp call did, send its ICMP messages back toward the
 * sender, and leave res zeroed for the next call. */
static void
esp_account(struct egw_burst *b, struct egw_esp_res *res)
{
	unsigned int r;

	/* counted as made before any can be counted as sent (a full TX
	 * buffer is transmitted at once) */
	b->created += res->created + res->n_icmp;
	/* a subscriber behind a PPPoE session gets them through it; a sender
	 * on a routed port gets them from that interface's address */
	if (res->n_icmp != 0) {
		egw_ip_stage_icmp_source(b, res->icmp, res->n_icmp);
		egw_pppoe_stage_reply(b, res->icmp, res->n_icmp);
	}
	for (r = 0; r < EGW_ESP_DROP_MAX; r++)
		b->drop[EGW_DROP_ESP_FIRST + r] += res->drop[r];
	memset(res, 0, offsetof(struct egw_esp_res, icmp));
}

/* Frames ESP made or rewrote go on to the next stage of their class, at most
 * a burst at a time; pkts[] is scratch. */
static void
esp_next(struct egw_burst *b, struct egw_esp_stage_worker *ew, struct rte_mbuf **pkts,
	 unsigned int n)
{
	while (n != 0) {
		uint16_t k = (uint16_t)RTE_MIN(n, (unsigned int)EGW_MAX_BURST);
		uint16_t i, n4 = 0, n6 = 0;

		for (i = 0; i < k; i++) {
			struct rte_mbuf *m = pkts[i];
			uint8_t cls = egw_eth_reclassify_ip(m);

			/* not IP: the full classifier decides, as for any frame */
			if (unlikely(cls == EGW_ETH_CLS_BAD)) {
				if (egw_eth_classify_burst(&egw.ports[b->port].eth, &m, 1) == 0) {
					egw_out_drop(b, m, EGW_DROP_BAD_FRAME);
					continue;
				}
				cls = egw_eth_meta(m)->cls;
			}
			switch (cls) {
			case EGW_ETH_CLS_IPV4: pkts[n4++] = m; break;
			case EGW_ETH_CLS_IPV6: ew->v6[n6++] = m; break;
			default: egw_out_drop(b, m, EGW_DROP_UNHANDLED); break;
			}
		}
		if (n4 != 0)
			next_stage[EGW_ETH_CLS_IPV4](b, pkts, n4);
		if (n6 != 0)
			next_stage[EGW_ETH_CLS_IPV6](b, ew->v6, n6);
		pkts += k;
		n -= k;
	}
}

static void
esp_outbound(struct egw_burst *b, struct egw_esp_stage_worker *ew, struct rte_mbuf **pkts,
	     uint16_t n, enum egw_eth_class cls)
{
	struct egw_esp_res *res = &ew->res;
	uint16_t nprot, nbypass, done = 0;

	nprot = egw_esp_outbound_lookup(ew->ctx, pkts, n, ew->sa, res);
	nbypass = (uint16_t)res->bypass;
	esp_account(b, res);
	if (nprot != 0) {
		/* forwarded into the tunnel: the packet's own TTL goes down
		 * first (RFC 1812 5.3.1), as routing would have done */
		uint16_t kept[EGW_MAX_BURST], k, i;

		k = egw_ip_stage_ttl(b, pkts, nprot, kept);
		if (k != nprot) {
			for (i = 0; i < k; i++) {
				pkts[i] = pkts[kept[i]];
				ew->sa[i] = ew->sa[kept[i]];
			}
			memmove(pkts + k, pkts + nprot, nbypass * sizeof(pkts[0]));
			nprot = k;
		}
	}
	egw_esp_ctx_set_ingress_mtu(ew->ctx, port_mtu[b->port]);
	while (done < nprot) {
		uint16_t k, nout;

		k = egw_esp_outbound_burst(ew->ctx, ew->sa + done, pkts + done, nprot - done,
					   ew->out, ESP_OUT_CAP, res);
		nout = res->n_out;
		esp_account(b, res);
		/* the ESP packets are edgegw's own: routed without a TTL
		 * decrement, even from an access port */
		b->local_origin = 1;
		esp_next(b, ew, ew->out, nout);
		b->local_origin = 0;
		if (k == 0 && nout == 0) {
			/* cannot happen with ESP_OUT_CAP >= EGW_ESP_MAX_SEGS;
			 * never spin on it: no room for their output */
			egw_out_drop_bulk(b, pkts + done, nprot - done,
					  EGW_DROP_ESP_FIRST + EGW_ESP_DROP_NOMEM);
			break;
		}
		done += k;
	}
	if (nbypass != 0)
		next_stage[cls](b, pkts + nprot, nbypass);
}

static void
esp_inbound(struct egw_burst *b, struct egw_esp_stage_worker *ew, struct rte_mbuf **pkts,
	    uint16_t n, enum egw_eth_class cls)
{
	struct egw_esp_res *res = &ew->res;
	uint16_t ne, nc, good;

	/* ESP to ew->esp[], clear frames compacted in pkts[]: order kept
	 * within each group */
	ne = egw_esp_split_burst(pkts, n, ew->esp, &nc);
	if (ne != 0) {
		good = egw_esp_inbound_burst(ew->ctx, ew->esp, ne, res);
		esp_account(b, res);
		b->from_tunnel = 1;
		esp_next(b, ew, ew->esp, good);
		b->from_tunnel = 0;
	}
	if (nc != 0) {
		good = egw_esp_inbound_clear(ew->ctx, pkts, nc, res);
		esp_account(b, res);
		if (good != 0)
			next_stage[cls](b, pkts, good);
	}
}

void
egw_esp_stage_reply(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	struct egw_esp_stage_worker *ew = b->w->esp;
	struct egw_esp_res *res;
	uint16_t nprot, nbypass, done = 0, i;

	/* pairs with the release store in egw_esp_stage_update() */
	if (ew == NULL || __atomic_load_n(&esp_active, __ATOMIC_ACQUIRE) == 0) {
		for (i = 0; i < n; i++)
			egw_out_tx(b, b->port, pkts[i]);
		return;
	}
	/* ew->sa, ew->out and res are free: the inbound path that may have
	 * led here uses ew->esp and ew->v6 only, and took its results out */
	res = &ew->res;
	nprot = egw_esp_outbound_lookup(ew->ctx, pkts, n, ew->sa, res);
	nbypass = (uint16_t)res->bypass;
	esp_account(b, res);
	egw_esp_ctx_set_ingress_mtu(ew->ctx, port_mtu[b->port]);
	while (done < nprot) {
		uint16_t k, nout;

		k = egw_esp_outbound_burst(ew->ctx, ew->sa + done, pkts + done, nprot - done,
					   ew->out, ESP_OUT_CAP, res);
		nout = res->n_out;
		esp_account(b, res);
		for (i = 0; i < nout; i++)
			egw_out_tx(b, b->port, ew->out[i]);
		if (k == 0 && nout == 0) {
			egw_out_drop_bulk(b, pkts + done, nprot - done,
					  EGW_DROP_ESP_FIRST + EGW_ESP_DROP_NOMEM);
			break;
		}
		done += k;
	}
	for (i = 0; i < nbypass; i++)
		egw_out_tx(b, b->port, pkts[nprot + i]);
}

static inline void
stage_esp(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n, enum egw_eth_class cls)
{
	/* pairs with the release store in egw_esp_stage_update(): a plain
	 * load on x86; the SA and policy tables have their own ordering */
	if (__atomic_load_n(&esp_active, __ATOMIC_ACQUIRE) == 0) {
		next_stage[cls](b, pkts, n);
		return;
	}
	/* the uplink is the unprotected side; every other port (a role or
	 * none) is protected: what enters there meets the outbound policies */
	if (egw.ports[b->port].role == EGW_ROLE_UPLINK)
		esp_inbound(b, b->w->esp, pkts, n, cls);
	else
		esp_outbound(b, b->w->esp, pkts, n, cls);
}

static void
stage_esp_ipv4(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	stage_esp(b, pkts, n, EGW_ETH_CLS_IPV4);
}

static void
stage_esp_ipv6(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	stage_esp(b, pkts, n, EGW_ETH_CLS_IPV6);
}

static int
count_policy(const struct egw_esp_policy *p __rte_unused, uint64_t hits __rte_unused, void *arg)
{
	(*(unsigned int *)arg)++;
	return 0;
}

/* Number of policies of a direction (control path). */
static unsigned int
policy_count(enum egw_esp_dir dir)
{
	unsigned int n = 0;

	egw_esp_policy_walk(dir, count_policy, &n);
	return n;
}

void
egw_esp_stage_update(void)
{
	int active = 0;

	/* an SA, or a direction whose packets need a look (a policy, or a
	 * default that discards) */
	if (egw.esp)
		active =
			egw_esp_sa_count(EGW_ESP_DIR_OUT) + egw_esp_sa_count(EGW_ESP_DIR_IN) != 0 ||
			egw_esp_policy_active(EGW_ESP_DIR_OUT) ||
			egw_esp_policy_active(EGW_ESP_DIR_IN);
	/* pairs with the acquire load in stage_esp() */
	__atomic_store_n(&esp_active, active, __ATOMIC_RELEASE);
}

void
egw_esp_stage_local_addr(const struct egw_ip_addr *a, bool add)
{
	struct egw_esp_addr ea;
	int rc;

	if (!egw.esp)
		return;
	memset(&ea, 0, sizeof(ea));
	ea.family = a->family;
	memcpy(ea.a, a->a, sizeof(ea.a));
	rc = add ? egw_esp_local_addr_add(&ea) : egw_esp_local_addr_del(&ea);
	if (rc < 0)
		fprintf(stderr, "warning: ESP: local address %s: %s\n", add ? "add" : "delete",
			strerror(-rc));
}

/* The mbuf pool for a worker's context: its socket's, else any. */
static struct rte_mempool *
worker_pool(const struct egw_worker *w)
{
	unsigned int s = rte_lcore_to_socket_id(w->lcore), i;

	if (s < RTE_MAX_NUMA_NODES && egw.pool[s] != NULL)
		return egw.pool[s];
	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (egw.pool[i] != NULL)
			return egw.pool[i];
	return NULL;
}

int
egw_esp_stage_init(void)
{
	static const enum egw_eth_class classes[] = {EGW_ETH_CLS_IPV4, EGW_ETH_CLS_IPV6};
	static const egw_stage_fn fns[] = {stage_esp_ipv4, stage_esp_ipv6};
	unsigned int i;
	int rc;

	if (egw_drop_names_check("ESP", EGW_DROP_ESP_FIRST, EGW_ESP_DROP_MAX, egw_esp_drop_name) <
	    0)
		return -EINVAL;
	if (egw.nb_workers > EGW_ESP_MAX_CTX) {
		fprintf(stderr,
			"error: ESP: %u worker lcores, but lib/esp has at most %u data-path "
			"contexts "
			"(one per worker): give EAL at most %u lcores besides the main%s lcore\n",
			egw.nb_workers, EGW_ESP_MAX_CTX, EGW_ESP_MAX_CTX,
			egw.opts.control_lcore >= 0 ? " and control" : "");
		return -E2BIG;
	}
	for (i = 0; i < RTE_MAX_ETHPORTS; i++) {
		uint16_t mtu = RTE_ETHER_MTU;

		if (egw.ports[i].used && (rte_eth_dev_get_mtu((uint16_t)i, &mtu) != 0 || mtu < 68))
			mtu = RTE_ETHER_MTU;
		port_mtu[i] = mtu;
	}
	rc = egw_esp_init(egw.qsbr);
	if (rc == -ENOTSUP) {
		fprintf(stderr, "warning: ESP not available: no usable Intel IPsec-MB code path on "
				"this CPU; esp commands will fail\n");
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, "error: ESP: initialisation failed: %s\n", strerror(-rc));
		return rc;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	egw.esp = true;
	rte_spinlock_unlock(&egw.ctrl_lock);
	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_worker *w = egw.workers[i];
		struct rte_mempool *mp = worker_pool(w);

		w->esp = rte_zmalloc_socket("egw_esp_w", sizeof(*w->esp), RTE_CACHE_LINE_SIZE,
					    (int)rte_lcore_to_socket_id(w->lcore));
		if (w->esp == NULL || mp == NULL) {
			fprintf(stderr, "error: ESP: worker lcore %u: %s\n", w->lcore,
				mp == NULL ? "no mbuf pool" : "out of memory");
			return -ENOMEM;
		}
		w->esp->ctx = egw_esp_ctx_create(w->idx, mp);
		if (w->esp->ctx == NULL) {
			fprintf(stderr, "error: ESP: context for worker lcore %u: %s\n", w->lcore,
				rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	for (i = 0; i < RTE_DIM(classes); i++) {
		next_stage[classes[i]] = egw_gateway_get_stage(classes[i]);
		egw_gateway_set_stage(classes[i], fns[i]);
	}
	egw_esp_stage_update();
	return 0;
}

void
egw_esp_stage_fini(void)
{
	unsigned int i;

	rte_spinlock_lock(&egw.ctrl_lock);
	if (egw.esp) {
		__atomic_store_n(&esp_active, 0, __ATOMIC_RELEASE);
		for (i = 0; i < egw.nb_workers; i++) {
			struct egw_worker *w = egw.workers[i];

			if (w->esp == NULL)
				continue;
			if (w->esp->ctx != NULL)
				egw_esp_ctx_free(w->esp->ctx);
			rte_free(w->esp);
			w->esp = NULL;
		}
		egw_esp_fini();
		egw.esp = false;
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
}

/* ---- show config, --stats-json ------------------------------------------- */

const char *
egw_esp_stage_default_name(enum egw_esp_dir dir)
{
	switch (egw_esp_policy_default_get(dir)) {
	case EGW_ESP_DEFAULT_BYPASS: return "bypass";
	case EGW_ESP_DEFAULT_DISCARD: return "discard";
	default: return "auto";
	}
}

const struct egw_esp_ctx *
egw_esp_stage_ctx(uint16_t worker)
{
	if (worker >= egw.nb_workers || egw.workers[worker]->esp == NULL)
		return NULL;
	return egw.workers[worker]->esp->ctx;
}

void
egw_esp_stage_show_config(FILE *f)
{
	const char *path;

	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.esp) {
		fprintf(f, "  esp: not available\n");
	} else {
		path = egw_esp_state_path();
		fprintf(f,
			"  esp: %u outbound and %u inbound SAs, %u outbound and %u inbound "
			"policies, state file %s\n",
			egw_esp_sa_count(EGW_ESP_DIR_OUT), egw_esp_sa_count(EGW_ESP_DIR_IN),
			policy_count(EGW_ESP_DIR_OUT), policy_count(EGW_ESP_DIR_IN),
			path != NULL ? path : "(none: outbound SAs refused)");
		fprintf(f, "  esp: policy default out %s, in %s\n",
			egw_esp_stage_default_name(EGW_ESP_DIR_OUT),
			egw_esp_stage_default_name(EGW_ESP_DIR_IN));
		if (egw_esp_stage_ctx(0) != NULL)
			fprintf(f, "  esp: contexts %u (one per worker), IPsec-MB code path %s\n",
				egw.nb_workers, egw_esp_ctx_arch(egw_esp_stage_ctx(0)));
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
}

/* A JSON string (quotes, backslashes and control characters escaped). */
static void
json_drops(FILE *f, const uint64_t *drop, bool nonzero_only)
{
	unsigned int r;
	bool first = true;

	fprintf(f, "{");
	for (r = 0; r < EGW_ESP_DROP_MAX; r++) {
		if (nonzero_only && drop[r] == 0)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", egw_esp_drop_name(r), drop[r]);
		first = false;
	}
	fprintf(f, "}");
}

struct json_walk {
	FILE *f;
	bool first;
};

static int
json_sa(const struct egw_esp_sa_info *in, void *arg)
{
	struct json_walk *jw = arg;

	fprintf(jw->f,
		"%s\n      {\"spi\": %" PRIu32 ", \"dir\": \"%s\", \"mode\": \"%s\", \"aead\": "
		"\"%s\", \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"seq\": %" PRIu64
		", \"drops\": ",
		jw->first ? "" : ",", in->conf.spi, in->conf.dir == EGW_ESP_DIR_OUT ? "out" : "in",
		in->conf.mode == EGW_ESP_MODE_TUNNEL ? "tunnel" : "transport",
		egw_esp_aead_name(in->conf.aead), in->stats.packets, in->stats.bytes, in->seq);
	json_drops(jw->f, in->stats.drop, true);
	fprintf(jw->f, "}");
	jw->first = false;
	return 0;
}

void
egw_esp_stage_json(FILE *f)
{
	struct egw_esp_ctx_stats st;
	struct json_walk jw = {.f = f, .first = true};
	const char *path;

	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.esp) {
		fprintf(f, "{\"available\": false}");
		rte_spinlock_unlock(&egw.ctrl_lock);
		return;
	}
	egw_esp_stats(&st);
	path = egw_esp_state_path();
	fprintf(f, "{\"available\": true, \"state_file\": ");
	if (path != NULL)
		egw_json_str(f, path);
	else
		fprintf(f, "null");
	fprintf(f, ", \"policy_default_out\": \"%s\", \"policy_default_in\": \"%s\"",
		egw_esp_stage_default_name(EGW_ESP_DIR_OUT),
		egw_esp_stage_default_name(EGW_ESP_DIR_IN));
	fprintf(f,
		", \"sa_out\": %u, \"sa_in\": %u, \"policy_out\": %u, \"policy_in\": %u,\n    "
		"\"totals\": {\"out_packets\": %" PRIu64 ", \"out_bytes\": %" PRIu64
		", \"in_packets\": %" PRIu64 ", \"in_bytes\": %" PRIu64 ", \"segments\": %" PRIu64
		", \"fragments\": %" PRIu64 ", \"icmp\": %" PRIu64 ", \"icmp_limited\": %" PRIu64
		", \"bypass\": %" PRIu64 ", \"drops\": ",
		egw_esp_sa_count(EGW_ESP_DIR_OUT), egw_esp_sa_count(EGW_ESP_DIR_IN),
		policy_count(EGW_ESP_DIR_OUT), policy_count(EGW_ESP_DIR_IN), st.out_packets,
		st.out_bytes, st.in_packets, st.in_bytes, st.segments, st.fragments, st.icmp,
		st.icmp_limited, st.bypass);
	json_drops(f, st.drop, false);
	fprintf(f, "},\n    \"sas\": [");
	egw_esp_sa_walk(json_sa, &jw);
	fprintf(f, "%s]}", jw.first ? "" : "\n    ");
	rte_spinlock_unlock(&egw.ctrl_lock);
}
