/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay: a traffic generator. Loads a capture (libpcap) on the main lcore,
 * then the worker that owns RX queue 0 of each chosen port transmits its
 * frames in a loop on that port, at full speed or at a given rate (frames per
 * second per port). Frames the TX queue refuses are kept and offered again,
 * so the offered load is what the link takes. Received frames are counted and
 * discarded (drop reason rxonly).
 */
#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_memcpy.h>

#include "fwd.h"

#define REPLAY_MAX_BYTES (256u << 20)
#define REPLAY_MAX_FRAMES (1u << 22)

struct replay_frame {
	uint32_t off;
	uint16_t len;
};

struct replay_cfg {
	char path[256];
	uint64_t pps; /* 0 = full speed */
	int port;     /* -1 = every port */
	uint32_t nb_frames;
	uint64_t bytes;
	uint8_t *data;
	struct replay_frame *frames;
};

struct replay_port {
	uint16_t port;
	uint16_t npend;
	uint32_t cursor;
	uint64_t sent;
	uint64_t start_tsc;
	struct rte_mempool *mp;
	struct rte_mbuf *pend[EGW_MAX_BURST];
};

struct replay_worker {
	uint16_t nports;
	struct replay_port ports[RTE_MAX_ETHPORTS];
};

static struct replay_cfg cfg = {.port = -1};

static void
cfg_free(struct replay_cfg *c)
{
	rte_free(c->data);
	rte_free(c->frames);
	c->data = NULL;
	c->frames = NULL;
	c->nb_frames = 0;
	c->bytes = 0;
}

static int
load_pcap(struct replay_cfg *c, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *pc;
	uint32_t cap = 1024, n = 0;
	uint64_t used = 0, room = 1u << 20;
	int rc;

	pc = pcap_open_offline(c->path, ebuf);
	if (pc == NULL) {
		snprintf(err, errlen, "replay: %s", ebuf);
		return -ENOENT;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		snprintf(err, errlen, "replay: %s: not an Ethernet capture (link type %d)", c->path,
			 pcap_datalink(pc));
		pcap_close(pc);
		return -EINVAL;
	}
	c->frames = rte_malloc("egw_replay", sizeof(*c->frames) * cap, 0);
	c->data = rte_malloc("egw_replay", room, RTE_CACHE_LINE_SIZE);
	if (c->frames == NULL || c->data == NULL)
		goto nomem;
	while ((rc = pcap_next_ex(pc, &h, &d)) == 1) {
		if (h->caplen != h->len || h->caplen < RTE_ETHER_HDR_LEN ||
		    h->caplen > UINT16_MAX) {
			snprintf(err, errlen,
				 "replay: %s: frame %u: %u of %u bytes captured (need a whole "
				 "frame of 14..65535 bytes)",
				 c->path, n + 1, h->caplen, h->len);
			pcap_close(pc);
			cfg_free(c);
			return -EINVAL;
		}
		if (n == REPLAY_MAX_FRAMES || used + h->caplen > REPLAY_MAX_BYTES) {
			snprintf(err, errlen, "replay: %s: more than %u frames or %u MiB", c->path,
				 REPLAY_MAX_FRAMES, REPLAY_MAX_BYTES >> 20);
			pcap_close(pc);
			cfg_free(c);
			return -E2BIG;
		}
		if (n == cap) {
			void *p = rte_realloc(c->frames, sizeof(*c->frames) * cap * 2, 0);

			if (p == NULL)
				goto nomem;
			c->frames = p;
			cap *= 2;
		}
		while (used + h->caplen > room) {
			void *p = rte_realloc(c->data, room * 2, RTE_CACHE_LINE_SIZE);

			if (p == NULL)
				goto nomem;
			c->data = p;
			room *= 2;
		}
		memcpy(c->data + used, d, h->caplen);
		c->frames[n].off = (uint32_t)used;
		c->frames[n].len = (uint16_t)h->caplen;
		used += h->caplen;
		n++;
	}
	if (rc == -1) {
		snprintf(err, errlen, "replay: %s: %s", c->path, pcap_geterr(pc));
		pcap_close(pc);
		cfg_free(c);
		return -EIO;
	}
	pcap_close(pc);
	if (n == 0) {
		snprintf(err, errlen, "replay: %s: no frames", c->path);
		cfg_free(c);
		return -EINVAL;
	}
	c->nb_frames = n;
	c->bytes = used;
	return 0;
nomem:
	snprintf(err, errlen, "replay: %s: out of memory", c->path);
	pcap_close(pc);
	cfg_free(c);
	return -ENOMEM;
}

/* "<pcap> [<pps>] [port <N>]" */
static int
replay_configure(const char *args, char *err, size_t errlen)
{
	struct replay_cfg c = {.port = -1};
	char buf[512], *tok, *save = NULL;
	int i = 0, rc;

	if (strlen(args) >= sizeof(buf)) {
		snprintf(err, errlen, "replay: arguments too long");
		return -EINVAL;
	}
	strcpy(buf, args);
	for (tok = strtok_r(buf, " \t", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t", &save), i++) {
		uint64_t v;

		if (i == 0) {
			if (strlen(tok) >= sizeof(c.path)) {
				snprintf(err, errlen, "replay: file name too long");
				return -EINVAL;
			}
			strcpy(c.path, tok);
		} else if (strcmp(tok, "port") == 0) {
			uint16_t p;

			tok = strtok_r(NULL, " \t", &save);
			if (tok == NULL) {
				snprintf(err, errlen, "replay: 'port' needs a port number");
				return -EINVAL;
			}
			rc = egw_port_parse(tok, &p, err, errlen);
			if (rc < 0)
				return rc;
			c.port = p;
		} else if (i == 1 && egw_parse_u64(tok, 1, 1000000000, &v) == 0) {
			c.pps = v;
		} else {
			snprintf(err, errlen,
				 "replay: bad argument '%s' (syntax: replay <pcap> [<pps>] [port "
				 "<N>], pps 1..1000000000)",
				 tok);
			return -EINVAL;
		}
	}
	if (i == 0) {
		snprintf(err, errlen,
			 "replay: needs a capture file (replay <pcap> [<pps>] [port <N>])");
		return -EINVAL;
	}
	rc = load_pcap(&c, err, errlen);
	if (rc < 0)
		return rc;
	cfg_free(&cfg);
	cfg = c;
	return 0;
}

static int
replay_begin(char *err, size_t errlen)
{
	uint16_t i, pid;

	if (cfg.nb_frames == 0) {
		snprintf(err, errlen,
			 "replay: no capture loaded (set fwd replay <pcap> [<pps>] [port <N>])");
		return -EINVAL;
	}
	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_worker *w = egw.workers[i];
		struct replay_worker *rw;
		uint16_t k;

		rw = rte_zmalloc_socket("egw_replay_w", sizeof(*rw), RTE_CACHE_LINE_SIZE,
					(int)rte_lcore_to_socket_id(w->lcore));
		if (rw == NULL) {
			snprintf(err, errlen, "replay: out of memory");
			while (i-- > 0) {
				rte_free(egw.workers[i]->engine_priv);
				egw.workers[i]->engine_priv = NULL;
			}
			return -ENOMEM;
		}
		/* one generator per port: the worker that polls its RX queue 0 */
		for (k = 0; k < w->nb_rxq; k++) {
			struct replay_port *rp;

			pid = w->rxq[k].port;
			if (w->rxq[k].queue != 0 || (cfg.port >= 0 && pid != cfg.port))
				continue;
			rp = &rw->ports[rw->nports++];
			rp->port = pid;
			rp->mp = egw.pool[egw.ports[pid].socket < 0 ? 0 : egw.ports[pid].socket];
			rp->start_tsc = rte_get_tsc_cycles();
		}
		w->engine_priv = rw;
	}
	return 0;
}

static void
replay_end(void)
{
	uint16_t i, k;

	for (i = 0; i < egw.nb_workers; i++) {
		struct replay_worker *rw = egw.workers[i]->engine_priv;

		if (rw == NULL)
			continue;
		for (k = 0; k < rw->nports; k++) {
			struct replay_port *rp = &rw->ports[k];

			/* frames never sent: counted as generator drops */
			EGW_CNT_ADD(egw.workers[i]->stats.gen_drop, rp->npend);
			rte_pktmbuf_free_bulk(rp->pend, rp->npend);
		}
		rte_free(rw);
		egw.workers[i]->engine_priv = NULL;
	}
}

/* Copy one capture frame into a (possibly chained) mbuf. */
static struct rte_mbuf *
frame_to_mbuf(struct rte_mempool *mp, struct rte_mbuf *m, const uint8_t *src, uint16_t len)
{
	struct rte_mbuf *seg = m, *prev;
	uint16_t room = rte_pktmbuf_tailroom(m);

	if (likely(len <= room)) {
		rte_memcpy(rte_pktmbuf_mtod(m, void *), src, len);
		m->data_len = len;
		m->pkt_len = len;
		return m;
	}
	m->pkt_len = len;
	for (;;) {
		uint16_t chunk = RTE_MIN(len, rte_pktmbuf_tailroom(seg));

		rte_memcpy(rte_pktmbuf_mtod(seg, void *), src, chunk);
		seg->data_len = chunk;
		src += chunk;
		len -= chunk;
		if (len == 0)
			return m;
		prev = seg;
		seg = rte_pktmbuf_alloc(mp);
		if (seg == NULL) {
			rte_pktmbuf_free(m);
			return NULL;
		}
		prev->next = seg;
		m->nb_segs++;
	}
}

static void
replay_poll(struct egw_worker *w)
{
	struct replay_worker *rw = w->engine_priv;
	const uint16_t burst = egw.opts.burst;
	uint16_t k;

	for (k = 0; k < rw->nports; k++) {
		struct replay_port *rp = &rw->ports[k];
		uint16_t n = burst, i, sent, made = 0;
		uint64_t bytes;

		if (rp->npend == 0) {
			if (cfg.pps != 0) {
				uint64_t due = (rte_get_tsc_cycles() - rp->start_tsc) * cfg.pps /
					       rte_get_tsc_hz();

				if (due <= rp->sent)
					continue;
				n = (uint16_t)RTE_MIN(due - rp->sent, (uint64_t)burst);
			}
			if (rte_pktmbuf_alloc_bulk(rp->mp, rp->pend, n) != 0) {
				EGW_CNT_ADD(w->stats.gen_nombuf, 1);
				continue;
			}
			for (i = 0; i < n; i++) {
				const struct replay_frame *f = &cfg.frames[rp->cursor];
				struct rte_mbuf *m;

				if (++rp->cursor == cfg.nb_frames)
					rp->cursor = 0;
				m = frame_to_mbuf(rp->mp, rp->pend[i], cfg.data + f->off, f->len);
				if (m == NULL) {
					EGW_CNT_ADD(w->stats.gen_nombuf, 1);
					continue;
				}
				rp->pend[made++] = m;
			}
			rp->npend = made;
			rp->sent += n; /* the rate counts frames made, not accepted */
		}
		bytes = 0;
		for (i = 0; i < rp->npend; i++)
			bytes += rp->pend[i]->pkt_len;
		sent = rte_eth_tx_burst(rp->port, w->idx, rp->pend, rp->npend);
		for (i = sent; i < rp->npend; i++)
			bytes -= rp->pend[i]->pkt_len;
		if (sent < rp->npend)
			memmove(rp->pend, rp->pend + sent,
				(rp->npend - sent) * sizeof(rp->pend[0]));
		rp->npend -= sent;
		EGW_CNT_ADD(w->stats.gen_tx, sent);
		EGW_CNT_ADD(w->stats.gen_tx_bytes, bytes);
		EGW_CNT_ADD(w->stats.tx_out[rp->port], sent);
	}
}

static void
replay_rx(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	egw_out_drop_bulk(b, pkts, n, EGW_DROP_SINK);
}

static void
replay_show(FILE *f)
{
	if (cfg.nb_frames == 0) {
		fprintf(f, "  replay: no capture loaded\n");
		return;
	}
	fprintf(f, "  replay: %s, %u frames, %" PRIu64 " bytes, ", cfg.path, cfg.nb_frames,
		cfg.bytes);
	if (cfg.pps != 0)
		fprintf(f, "%" PRIu64 " pps", cfg.pps);
	else
		fprintf(f, "full speed");
	if (cfg.port >= 0)
		fprintf(f, " on port %d\n", cfg.port);
	else
		fprintf(f, " on every port\n");
}

const struct egw_fwd_engine egw_fwd_replay = {
	.name = "replay",
	.args = "<pcap> [<pps>] [port <N>]",
	.help = "transmit the frames of a capture in a loop, at full speed or <pps> frames/s per "
		"port",
	.configure = replay_configure,
	.begin = replay_begin,
	.end = replay_end,
	.rx = replay_rx,
	.poll = replay_poll,
	.show = replay_show,
};
