/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread's side: external consumers attach over a UNIX socket
 * and get the region (read-only) and a shared memory with two rings; this
 * file moves records to them, takes their returned ranges, and releases what
 * they held when their socket closes (process exit or crash included). It
 * also serves in-process "dump" consumers, and prints state.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "rxtok_private.h"

#define RXTOK_RET_RING_SIZE 256
#define RXTOK_SVC_BURST 64
/* Connections accepted, hello not yet read: a slot each. When the table is
 * full the oldest goes (counted), so silent peers can delay a hello by one
 * service pass at most, not by their timeout. */
#define RXTOK_PENDING_MAX 64
/* Connections accepted per service pass. */
#define RXTOK_ACCEPT_BURST 64
/* How long a connection may stay silent before its hello (ms). */
#define RXTOK_HELLO_TIMEOUT_MS 500

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

/* Connections that have not said hello yet. */
static struct {
	int fd;
	uint64_t deadline;
	struct ucred cred;
} pending[RXTOK_PENDING_MAX];
static int n_pending;
static int epfd = -1;

static void
welcome_send(int fd, int status, const char *msg, int fds[2], uint64_t region_size,
	     uint64_t shm_size)
{
	struct egw_rxtok_welcome w = {
		.magic = EGW_RXTOK_HELLO_MAGIC,
		.status = status,
		.region_size = region_size,
		.shm_size = shm_size,
	};
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &w, .iov_len = sizeof(w)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	snprintf(w.message, sizeof(w.message), "%s", msg);
	if (status == 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, 2 * sizeof(int));
	}
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		RXTOK_LOG(WARNING, "welcome: %s\n", strerror(errno));
}

/* Shared memory for one attachment: header, record ring, return ring. The
 * ring geometry is kept in c->xrec and c->xret; the copy in the header is
 * for the consumer. */
static int
shm_create(struct egw_rxtok_consumer *c)
{
	uint32_t rec_count = rte_align32pow2(rte_ring_get_capacity(c->ring) + 1);
	size_t hdr_sz = RTE_ALIGN_CEIL(sizeof(struct egw_rxtok_shm_hdr), RTE_CACHE_LINE_SIZE);
	size_t rec_sz, ret_sz, size;
	struct egw_rxtok_shm_hdr *h;
	int fd;

	if (!egw_rxtok_shring_size_ok(rec_count))
		return -EINVAL;
	rec_sz = RTE_ALIGN_CEIL(egw_rxtok_shring_memsize(rec_count), RTE_CACHE_LINE_SIZE);
	ret_sz = RTE_ALIGN_CEIL(egw_rxtok_shring_memsize(RXTOK_RET_RING_SIZE), RTE_CACHE_LINE_SIZE);
	size = RTE_ALIGN_CEIL(hdr_sz + rec_sz + ret_sz, 4096);
	if (size > UINT32_MAX)
		return -E2BIG;
	fd = memfd_create("egw_rxtok_shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* the consumer maps it read-write, but must not resize it: a shrink
	 * would make edgegw's next access SIGBUS */
	if (ftruncate(fd, (off_t)size) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		int e = errno;

		close(fd);
		return -e;
	}
	h->magic = EGW_RXTOK_SHM_MAGIC;
	h->version = EGW_RXTOK_ABI_VERSION;
	h->hdr_size = sizeof(*h);
	h->region_size = c->region->size;
	h->region_id = c->region->id;
	h->page_size = EGW_RXTOK_PAGE_SIZE;
	h->rec_ring_off = (uint32_t)hdr_sz;
	h->ret_ring_off = (uint32_t)(hdr_sz + rec_sz);
	h->rec_ring_size = rec_count;
	h->ret_ring_size = RXTOK_RET_RING_SIZE;
	h->quota = c->quota;
	h->max_ranges = EGW_RXTOK_MAX_RANGES;
	h->flags = 0;
	/* sizes checked above; the memory is not shared yet */
	egw_rxtok_shring_init(&c->xrec, (uint8_t *)h + hdr_sz, rec_count);
	egw_rxtok_shring_init(&c->xret, (uint8_t *)h + hdr_sz + rec_sz, RXTOK_RET_RING_SIZE);
	c->shm = h;
	c->shm_size = size;
	c->shm_fd = fd;
	c->n_ret_done = 0;
	return 0;
}

/* Is some external consumer for this uid? A peer of no consumer's uid is
 * refused at accept, before it can take a pending slot. */
static bool
uid_has_consumer(uid_t uid)
{
	unsigned int i;

	for (i = 0; i < rxtok.hi; i++) {
		const struct egw_rxtok_consumer *c = rxtok.consumers[i];

		if (c != NULL && c->external && !c->closed && c->uid == (uint32_t)uid)
			return true;
	}
	return false;
}

static void
attach(int fd, const struct ucred *cred)
{
	struct egw_rxtok_hello hello;
	struct egw_rxtok_consumer *c;
	char path[64], msg[128];
	int fds[2], rofd, rc;
	ssize_t n;

	n = recv(fd, &hello, sizeof(hello), MSG_DONTWAIT);
	if (n != (ssize_t)sizeof(hello) || hello.magic != EGW_RXTOK_HELLO_MAGIC ||
	    hello.version != EGW_RXTOK_ABI_VERSION) {
		welcome_send(fd, -EPROTO, "bad hello (magic, version or size)", NULL, 0, 0);
		close(fd);
		return;
	}
	hello.consumer[sizeof(hello.consumer) - 1] = '\0';
	c = egw_rxtok_consumer_find(hello.consumer);
	rc = 0;
	if (c == NULL) {
		rc = -ENOENT;
		snprintf(msg, sizeof(msg), "no consumer '%s' (rxtokens consumer add)",
			 hello.consumer);
	} else if (!c->external || c->closed) {
		rc = -EPERM;
		snprintf(msg, sizeof(msg), "consumer '%s' is not an external consumer",
			 hello.consumer);
	} else if ((uint32_t)cred->uid != c->uid ||
		   (c->gid != EGW_RXTOK_ID_ANY && (uint32_t)cred->gid != c->gid)) {
		/* SO_PEERCRED: the kernel's word, not the peer's */
		rc = -EACCES;
		c->n_cred_refused++;
		rxtok.svc.cred_refused++;
		snprintf(msg, sizeof(msg), "consumer '%s' is for uid %u gid %d, not uid %u gid %u",
			 hello.consumer, c->uid, (int)c->gid, (unsigned int)cred->uid,
			 (unsigned int)cred->gid);
	} else if (c->sock >= 0) {
		rc = -EBUSY;
		snprintf(msg, sizeof(msg), "consumer '%s' already has a process attached",
			 hello.consumer);
	} else if ((rc = shm_create(c)) < 0) {
		snprintf(msg, sizeof(msg), "shared memory: %s", strerror(-rc));
	}
	if (rc == 0 &&
	    rxtok_check_seals(c->region->memfd, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
							F_SEAL_SEAL) != 0) {
		/* never hand out a region a consumer could resize or write */
		rc = -EPERM;
		snprintf(msg, sizeof(msg), "region %s is not sealed", c->region->name);
		munmap(c->shm, c->shm_size);
		close(c->shm_fd);
		c->shm = NULL;
	}
	if (rc < 0) {
		RXTOK_LOG(WARNING, "attach refused: %s\n", msg);
		welcome_send(fd, rc, msg, NULL, 0, 0);
		close(fd);
		return;
	}
	/* a read-only descriptor of the region; the seals keep any other
	 * descriptor of it (a reopen through /proc) from writing it too */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", c->region->memfd);
	rofd = open(path, O_RDONLY | O_CLOEXEC);
	if (rofd < 0) {
		welcome_send(fd, -errno, "cannot reopen the region read-only", NULL, 0, 0);
		munmap(c->shm, c->shm_size);
		close(c->shm_fd);
		c->shm = NULL;
		close(fd);
		return;
	}
	fds[0] = rofd;
	fds[1] = c->shm_fd;
	welcome_send(fd, 0, "ok", fds, c->region->size, c->shm_size);
	close(rofd);
	close(c->shm_fd);
	c->shm_fd = -1;
	c->sock = fd;
	c->n_attach++;
	if (epfd >= 0) {
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = c->idx};

		epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
	}
	/* workers may deliver from here on (acquire in deliver.c) */
	__atomic_store_n(&c->attached, 1, __ATOMIC_RELEASE);
	RXTOK_LOG(INFO, "consumer %s attached\n", c->name);
}

void
rxtok_detach(struct egw_rxtok_consumer *c)
{
	if (c->sock < 0)
		return;
	/* the client sees the detach before any record whose page is
	 * released below (it checks the flag after taking records: seq_cst
	 * store here, acquire fence there) */
	__atomic_fetch_or(&c->shm->flags, EGW_RXTOK_SHM_F_DETACHED, __ATOMIC_SEQ_CST);
	__atomic_store_n(&c->attached, 0, __ATOMIC_RELEASE);
	/* no worker is still delivering to c once the grace period ends */
	rte_rcu_qsbr_synchronize(rxtok.qsbr, RTE_QSBR_THRID_INVALID);
	rxtok_release_all(c);
	if (epfd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->sock, NULL);
	close(c->sock);
	c->sock = -1;
	munmap(c->shm, c->shm_size);
	c->shm = NULL;
	memset(&c->xrec, 0, sizeof(c->xrec));
	memset(&c->xret, 0, sizeof(c->xret));
	RXTOK_LOG(INFO, "consumer %s detached: every reference it held released\n", c->name);
}

int
egw_rxtok_listen(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd;

	if (rxtok.listen_fd >= 0)
		return -EALREADY;
	if (path == NULL || path[0] == '\0' || strlen(path) >= sizeof(sa.sun_path))
		return -EINVAL;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a stale socket of an earlier run goes; any other file stays and
	 * bind() fails with EADDRINUSE */
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, RXTOK_PENDING_MAX) != 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	if (epfd < 0)
		epfd = epoll_create1(EPOLL_CLOEXEC);
	rxtok.listen_fd = fd;
	snprintf(rxtok.listen_path, sizeof(rxtok.listen_path), "%s", path);
	return 0;
}

static void
pending_drop(int i)
{
	close(pending[i].fd);
	pending[i] = pending[--n_pending];
}

/* Answer and close a connection whose hello is not read: the hello (if it
 * came) is drained first, so the peer reads the answer rather than a reset
 * (a close with unread data resets the connection). */
static void
refuse_now(int fd, int status, const char *msg)
{
	struct egw_rxtok_hello h;

	while (recv(fd, &h, sizeof(h), MSG_DONTWAIT) > 0)
		;
	welcome_send(fd, status, msg, NULL, 0, 0);
	shutdown(fd, SHUT_WR);
	close(fd);
}

/*
 * Accept without blocking, check the peer at once (SO_PEERCRED: a process
 * of no consumer's uid is closed before it takes a slot), and read hellos
 * that arrived. A silent peer keeps a slot for RXTOK_HELLO_TIMEOUT_MS at
 * most, and a full table gives its oldest slot to the newcomer: a peer that
 * says hello is served in the pass that accepts it, whatever others do.
 */
static unsigned int
accept_new(void)
{
	uint64_t now = rte_get_tsc_cycles();
	unsigned int work = 0, k;
	int i, fd;

	for (k = 0; k < RXTOK_ACCEPT_BURST; k++) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int oldest = 0;

		fd = accept4(rxtok.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			break;
		work++;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
		    len != sizeof(cred) || !uid_has_consumer(cred.uid)) {
			rxtok.svc.cred_refused++;
			refuse_now(fd, -EACCES, "no consumer for this uid");
			continue;
		}
		if (n_pending == RXTOK_PENDING_MAX) {
			for (i = 1; i < n_pending; i++)
				if (pending[i].deadline < pending[oldest].deadline)
					oldest = i;
			rxtok.svc.evicted++;
			pending_drop(oldest);
		}
		pending[n_pending].fd = fd;
		pending[n_pending].deadline =
			now + rte_get_tsc_hz() * RXTOK_HELLO_TIMEOUT_MS / 1000;
		pending[n_pending].cred = cred;
		n_pending++;
		rxtok.svc.accepted++;
	}
	for (i = 0; i < n_pending;) {
		char b;
		ssize_t n = recv(pending[i].fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);

		if (n > 0) {
			struct ucred cred = pending[i].cred;

			fd = pending[i].fd;
			pending[i] = pending[--n_pending];
			attach(fd, &cred);
			work++;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    now < pending[i].deadline) {
			i++;
			continue;
		}
		/* closed, error, or silent too long */
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			rxtok.svc.timeouts++;
		pending_drop(i);
		work++;
	}
	return work;
}

/* Ranges the process put on the shared return ring; -EPROTO if the
 * consumer's index is insane. At most one ring's worth per call, so that a
 * consumer refilling the ring as fast as it is drained cannot keep the
 * control thread here. */
static int
take_returns(struct egw_rxtok_consumer *c)
{
	struct egw_rxtok_ret rets[RXTOK_SVC_BURST];
	unsigned int i, total = 0;
	int n;

	do {
		n = egw_rxtok_shring_dequeue_burst(&c->xret, rets, RTE_DIM(rets));
		if (n < 0)
			return n;
		for (i = 0; i < (unsigned int)n; i++) {
			struct egw_rxtok_range r = {rets[i].token_start, rets[i].token_count};

			/* each entry is one call: a bad one is rejected and
			 * counted, the others go through; its -errno goes to
			 * the consumer in the shared header */
			int rc = rxtok_return(c, rets[i].region, &r, 1);

			if (rc < 0) {
				c->n_ret_failed++;
				c->shm->ret_failed = c->n_ret_failed;
				__atomic_store_n(&c->shm->ret_status, rc, __ATOMIC_RELAXED);
			}
		}
		total += (unsigned int)n;
		c->n_ret_done += (uint32_t)n;
		/* release: the client that sees ret_done cover its entries
		 * sees their verdicts (acquire in egw_rxtok_client_sync()) */
		__atomic_store_n(&c->shm->ret_done, c->n_ret_done, __ATOMIC_RELEASE);
	} while (n == (int)RTE_DIM(rets) && total < c->xret.size);
	return (int)total;
}

/* The consumer wrote ring indices no consumer can: end the attachment (its
 * references are released) before it can do more. */
static void
corrupt(struct egw_rxtok_consumer *c, const char *ring)
{
	c->n_corrupt++;
	RXTOK_LOG(WARNING, "consumer %s: insane %s ring indices, detaching it\n", c->name, ring);
	rxtok_detach(c);
}

/* Records to the shared ring (they become held), returned ranges back. */
static unsigned int
serve_external(struct egw_rxtok_consumer *c)
{
	struct egw_rxtok_rec recs[RXTOK_SVC_BURST];
	unsigned int n, i, work = 0;
	int room, rc;

	if (__atomic_load_n(&c->steered, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&c->steered, 0, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_or(&c->shm->flags, EGW_RXTOK_SHM_F_STEERED, __ATOMIC_RELEASE);
		c->n_steered++;
	}
	room = egw_rxtok_shring_free_count(&c->xrec);
	if (room < 0) {
		corrupt(c, "record");
		return 1;
	}
	n = rte_ring_sc_dequeue_burst_elem(
		c->ring, recs, sizeof(recs[0]),
		RTE_MIN((unsigned int)room, (unsigned int)RXTOK_SVC_BURST), NULL);
	if (n != 0) {
		for (i = 0; i < n; i++)
			rxtok_holdings_insert(c, recs[i].token);
		c->n_recv += n;
		/* a well-behaved consumer only frees slots: fewer than room
		 * means its index went backwards (the records are held, and
		 * released by the detach) */
		rc = egw_rxtok_shring_enqueue_burst(&c->xrec, recs, n);
		if (rc != (int)n) {
			corrupt(c, "record");
			return 1;
		}
		work += n;
	}
	rc = take_returns(c);
	if (rc < 0) {
		corrupt(c, "return");
		return work + 1;
	}
	return work + (unsigned int)rc;
}

/* In-process consumer: copy payloads to its file, give the pages back. */
static unsigned int
serve_dump(struct egw_rxtok_consumer *c)
{
	struct egw_rxtok_rec recs[RXTOK_SVC_BURST];
	struct egw_rxtok_range ranges[RXTOK_SVC_BURST];
	int n = egw_rxtok_recv(c, recs, RTE_DIM(recs));
	int i;

	if (n <= 0)
		return 0;
	for (i = 0; i < n; i++) {
		const struct egw_rxtok_rec *r = &recs[i];

		if (r->flags & EGW_RXTOK_REC_FIRST)
			c->dump_len = 0;
		if (c->dump_len + r->size <= UINT16_MAX + 1u) {
			memcpy(c->dump_buf + c->dump_len,
			       c->region->base + ((uint64_t)r->token << EGW_RXTOK_PAGE_SHIFT) +
				       r->offset,
			       r->size);
			c->dump_len += r->size;
		}
		if (r->flags & EGW_RXTOK_REC_LAST) {
			uint8_t be[4] = {(uint8_t)(c->dump_len >> 24), (uint8_t)(c->dump_len >> 16),
					 (uint8_t)(c->dump_len >> 8), (uint8_t)c->dump_len};

			fwrite(be, 1, sizeof(be), c->dump);
			fwrite(c->dump_buf, 1, c->dump_len, c->dump);
			c->dump_payloads++;
		}
		ranges[i].token_start = r->token;
		ranges[i].token_count = 1;
	}
	fflush(c->dump);
	egw_rxtok_return(c, c->region->id, ranges, (unsigned int)n);
	return (unsigned int)n;
}

unsigned int
egw_rxtok_service(void)
{
	struct epoll_event ev[32];
	unsigned int work = 0, i;
	int n, k;

	if (rxtok.listen_fd >= 0)
		work += accept_new();
	if (epfd >= 0 && (n = epoll_wait(epfd, ev, RTE_DIM(ev), 0)) > 0) {
		for (k = 0; k < n; k++) {
			struct egw_rxtok_consumer *c = rxtok.consumers[ev[k].data.u32];
			char b;

			if (c == NULL || c->sock < 0)
				continue;
			/* the socket carries nothing after the hello: readable
			 * means closed (EOF), hung up, or a protocol error, and
			 * each ends the attachment */
			(void)recv(c->sock, &b, 1, MSG_DONTWAIT);
			/* ranges it returned before it went count as returns */
			if (take_returns(c) < 0)
				corrupt(c, "return");
			else
				rxtok_detach(c);
			work++;
		}
	}
	if (__atomic_load_n(&rxtok.n_consumers, __ATOMIC_RELAXED) == 0)
		return work;
	for (i = 0; i < rxtok.hi; i++) {
		struct egw_rxtok_consumer *c = rxtok.consumers[i];

		if (c == NULL || c->closed)
			continue;
		if (c->shm != NULL)
			work += serve_external(c);
		else if (c->dump != NULL)
			work += serve_dump(c);
	}
	return work;
}

unsigned int
egw_rxtok_consumer_count(void)
{
	return __atomic_load_n(&rxtok.n_consumers, __ATOMIC_RELAXED);
}

/* A consumer's match as `show rxtokens` and the logs print it. */
const char *
rxtok_match_str(const struct egw_rxtok_consumer *c, char *buf, size_t len)
{
	switch (c->match) {
	case EGW_RXTOK_MATCH_UDP_DPORT: snprintf(buf, len, "udp-dport %u", c->udp_dport); break;
	case EGW_RXTOK_MATCH_PPPOE: snprintf(buf, len, "pppoe-session %u", c->pppoe_session); break;
	case EGW_RXTOK_MATCH_DST4:
		snprintf(buf, len, "dst %u.%u.%u.%u", c->dst[0], c->dst[1], c->dst[2], c->dst[3]);
		break;
	default: {
		size_t o = (size_t)snprintf(buf, len, "dst ");
		int i;

		for (i = 0; i < 16 && o < len; i += 2)
			o += (size_t)snprintf(buf + o, len - o, "%s%x", i ? ":" : "",
					      c->dst[i] << 8 | c->dst[i + 1]);
		break;
	}
	}
	return buf;
}

static uint64_t
region_refs(const struct egw_rxtok_region *r)
{
	uint64_t t = 0;
	unsigned int i;

	for (i = 0; i < rxtok.hi; i++) {
		const struct egw_rxtok_consumer *c = rxtok.consumers[i];

		if (c != NULL && c->region == r)
			t += __atomic_load_n(&c->outstanding, __ATOMIC_RELAXED);
	}
	return t;
}

void
egw_rxtok_show(FILE *f, const char *what)
{
	bool all = what == NULL;
	unsigned int i, q;
	uint16_t p;

	if (all || strcmp(what, "regions") == 0) {
		fprintf(f, "rxtokens regions:\n");
		for (i = 0; i < EGW_RXTOK_MAX_REGIONS; i++) {
			const struct egw_rxtok_region *r = &rxtok.regions[i];

			if (!r->used)
				continue;
			fprintf(f,
				"  %-16s id %u size %" PRIu64 " pagesize %s pages %u bindings %u "
				"consumers %u tokens out %" PRIu64,
				r->name, r->id, r->size,
				r->hugepage_size == RTE_PGSIZE_1G ? "1G" : "2M", r->n_pages,
				r->n_bindings, r->n_consumers, region_refs(r));
			if (r->pool != NULL)
				fprintf(f, " pool %u/%u free", rte_mempool_avail_count(r->pool),
					r->pool->size);
			fprintf(f, " quotas %" PRIu64 " reserve %" PRIu64 " room %" PRIu64,
				r->quota_sum, egw_rxtok_region_reserve(r),
				egw_rxtok_region_quota_room(r));
			if (r->owned)
				fprintf(f, " owner %u:%d", r->owner_uid, (int)r->owner_gid);
			fprintf(f, "\n");
		}
		fprintf(f, "  bookkeeping: %" PRIu64 " bytes\n", egw_rxtok_bookkeeping_bytes());
	}
	if (all || strcmp(what, "bindings") == 0) {
		fprintf(f, "rxtokens bindings:\n");
		for (p = 0; p < RTE_MAX_ETHPORTS; p++) {
			bool any = false;

			for (q = 0; q < RTE_MAX_QUEUES_PER_PORT; q++) {
				if (rxtok.bind_tbl[p][q] == 0)
					continue;
				any = true;
				fprintf(f, "  port %u queue %u -> region %s %s\n", p, q,
					rxtok.regions[rxtok.bind_tbl[p][q] - 1].name,
					egw_rxtok_binding_shared((uint16_t)p, (uint16_t)q)
						? "shared (the region's owner may read every "
						  "frame of this queue)"
						: "steered (consumer flows only)");
			}
			if (any && egw_rxtok_port_steered((uint16_t)p)) {
				char d[128];

				egw_rxtok_steer_describe((uint16_t)p, d, sizeof(d));
				fprintf(f, "  port %u steering: %s\n", p, d);
			}
		}
	}
	if (all || strcmp(what, "consumers") == 0) {
		fprintf(f, "rxtokens consumers:%s%s\n",
			rxtok.listen_fd >= 0 ? " listening on " : "",
			rxtok.listen_fd >= 0 ? rxtok.listen_path : "");
		for (i = 0; i < rxtok.hi; i++) {
			const struct egw_rxtok_consumer *c = rxtok.consumers[i];
			uint64_t rej = 0;
			char m[64];
			unsigned int k;

			if (c == NULL)
				continue;
			for (k = 0; k < RXTOK_REJ_MAX; k++)
				rej += c->n_reject[k];
			fprintf(f,
				"  %-16s region %s match %s quota %u %s%s outstanding %u held %u "
				"read %" PRIu64 " returned %" PRIu64 " released %" PRIu64
				" rejected %" PRIu64 " steered %" PRIu64 " corrupt %" PRIu64
				" uid %u gid %d cred-refused %" PRIu64 " drops",
				c->name, c->region->name, rxtok_match_str(c, m, sizeof(m)),
				c->quota,
				c->closed ? "closed"
				: c->external
					? (c->sock >= 0 ? "external attached" : "external detached")
					: "in-process",
				c->dump != NULL ? " dump" : "",
				__atomic_load_n(&c->outstanding, __ATOMIC_RELAXED), c->held.count,
				c->n_recv, c->n_returned, c->n_released, rej, c->n_steered,
				c->n_corrupt, c->uid, (int)c->gid, c->n_cred_refused);
			for (k = 0; k < EGW_RXTOK_DROP_MAX; k++)
				fprintf(f, " %s %" PRIu64, egw_rxtok_drop_name(k) + 6,
					__atomic_load_n(&c->drops[k], __ATOMIC_RELAXED));
			fprintf(f, "\n");
		}
		fprintf(f, "  token calls without a consumer: %" PRIu64 "\n",
			__atomic_load_n(&rxtok.rej_notconn, __ATOMIC_RELAXED));
		fprintf(f,
			"  connections: accepted %" PRIu64 " cred-refused %" PRIu64
			" evicted %" PRIu64 " hello-timeouts %" PRIu64 " pending %d\n",
			rxtok.svc.accepted, rxtok.svc.cred_refused, rxtok.svc.evicted,
			rxtok.svc.timeouts, n_pending);
	}
}

void
egw_rxtok_json(FILE *f)
{
	static const char *const rej_names[RXTOK_REJ_MAX] = {"enotconn", "ebadf",  "exdev",
							     "einval",   "erange", "enoent"};
	bool first = true;
	unsigned int i, k;

	fprintf(f,
		"{\"bookkeeping_bytes\": %" PRIu64 ", \"calls_without_consumer\": %" PRIu64
		", \"connections\": {\"accepted\": %" PRIu64 ", \"cred_refused\": %" PRIu64
		", \"evicted\": %" PRIu64 ", \"hello_timeouts\": %" PRIu64 "}, \"regions\": [",
		egw_rxtok_bookkeeping_bytes(),
		__atomic_load_n(&rxtok.rej_notconn, __ATOMIC_RELAXED), rxtok.svc.accepted,
		rxtok.svc.cred_refused, rxtok.svc.evicted, rxtok.svc.timeouts);
	for (i = 0; i < EGW_RXTOK_MAX_REGIONS; i++) {
		const struct egw_rxtok_region *r = &rxtok.regions[i];

		if (!r->used)
			continue;
		fprintf(f,
			"%s{\"name\": \"%s\", \"id\": %u, \"size\": %" PRIu64
			", \"pages\": %u, \"pool_size\": %u, \"pool_free\": %u, \"tokens_out\": "
			"%" PRIu64 ", \"quota_sum\": %" PRIu64 ", \"reserve\": %" PRIu64
			", \"quota_room\": %" PRIu64 ", \"owner_uid\": %d, \"owner_gid\": %d}",
			first ? "" : ", ", r->name, r->id, r->size, r->n_pages,
			r->pool != NULL ? r->pool->size : 0,
			r->pool != NULL ? rte_mempool_avail_count(r->pool) : 0, region_refs(r),
			r->quota_sum, egw_rxtok_region_reserve(r), egw_rxtok_region_quota_room(r),
			r->owned ? (int)r->owner_uid : -1, r->owned ? (int)r->owner_gid : -1);
		first = false;
	}
	fprintf(f, "], \"bindings\": [");
	first = true;
	for (i = 0; i < RTE_MAX_ETHPORTS; i++) {
		for (k = 0; k < RTE_MAX_QUEUES_PER_PORT; k++) {
			if (rxtok.bind_tbl[i][k] == 0)
				continue;
			fprintf(f,
				"%s{\"port\": %u, \"queue\": %u, \"region\": \"%s\", "
				"\"isolation\": \"%s\"}",
				first ? "" : ", ", i, k,
				rxtok.regions[rxtok.bind_tbl[i][k] - 1].name,
				egw_rxtok_binding_shared((uint16_t)i, (uint16_t)k) ? "shared"
				: egw_rxtok_port_steered((uint16_t)i)              ? "steered"
										   : "none");
			first = false;
		}
	}
	fprintf(f, "], \"consumers\": [");
	first = true;
	for (i = 0; i < rxtok.hi; i++) {
		const struct egw_rxtok_consumer *c = rxtok.consumers[i];

		if (c == NULL)
			continue;
		fprintf(f,
			"%s{\"name\": \"%s\", \"region\": \"%s\", \"external\": %s, \"attached\": "
			"%s, \"closed\": %s, \"outstanding\": %u, \"held\": %u, \"read\": %" PRIu64
			", \"returned\": %" PRIu64 ", \"released\": %" PRIu64
			", \"steered\": %" PRIu64 ", \"corrupt\": %" PRIu64
			", \"attaches\": %" PRIu64 ", \"dumped\": %" PRIu64 ", \"uid\": %u"
			", \"gid\": %d, \"cred_refused\": %" PRIu64 ", \"ret_failed\": %" PRIu64
			", \"drops\": {",
			first ? "" : ", ", c->name, c->region->name, c->external ? "true" : "false",
			c->sock >= 0 ? "true" : "false", c->closed ? "true" : "false",
			__atomic_load_n(&c->outstanding, __ATOMIC_RELAXED), c->held.count,
			c->n_recv, c->n_returned, c->n_released, c->n_steered, c->n_corrupt,
			c->n_attach, c->dump_payloads, c->uid, (int)c->gid, c->n_cred_refused,
			c->n_ret_failed);
		for (k = 0; k < EGW_RXTOK_DROP_MAX; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", egw_rxtok_drop_name(k),
				__atomic_load_n(&c->drops[k], __ATOMIC_RELAXED));
		fprintf(f, "}, \"rejected\": {");
		for (k = 0; k < RXTOK_REJ_MAX; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", rej_names[k],
				c->n_reject[k]);
		fprintf(f, "}}");
		first = false;
	}
	fprintf(f, "]}");
}

/* Is the region bound with EGW_RXTOK_BIND_SHARED on some queue? */
static int
region_shared(const struct egw_rxtok_region *r)
{
	unsigned int p, q;

	for (p = 0; p < RTE_MAX_ETHPORTS; p++)
		for (q = 0; q < RTE_MAX_QUEUES_PER_PORT; q++)
			if (rxtok.bind_tbl[p][q] == r->id + 1 &&
			    egw_rxtok_binding_shared((uint16_t)p, (uint16_t)q))
				return 1;
	return 0;
}

int
egw_rxtok_consumer_walk(int (*fn)(const struct egw_rxtok_consumer_stats *st, void *arg), void *arg)
{
	unsigned int i, k;
	int rc = 0;

	if (fn == NULL)
		return -EINVAL;
	for (i = 0; i < rxtok.hi && rc == 0; i++) {
		const struct egw_rxtok_consumer *c = rxtok.consumers[i];
		struct egw_rxtok_consumer_stats st = {0};

		if (c == NULL)
			continue;
		st.name = c->name;
		st.region = c->region->name;
		st.uid = c->uid;
		st.gid = c->gid;
		st.external = c->external;
		st.attached = c->sock >= 0 || (!c->external && !c->closed);
		st.closed = c->closed;
		st.quota = c->quota;
		st.outstanding = __atomic_load_n(&c->outstanding, __ATOMIC_RELAXED);
		st.held = c->held.count;
		st.read = c->n_recv;
		st.returned = c->n_returned;
		st.released = c->n_released;
		for (k = 0; k < RXTOK_REJ_MAX; k++)
			st.rejected += c->n_reject[k];
		st.ret_failed = c->n_ret_failed;
		st.steered = c->n_steered;
		st.corrupt = c->n_corrupt;
		st.attaches = c->n_attach;
		st.cred_refused = c->n_cred_refused;
		st.shared = region_shared(c->region);
		for (k = 0; k < EGW_RXTOK_DROP_MAX; k++)
			st.drops[k] = __atomic_load_n(&c->drops[k], __ATOMIC_RELAXED);
		rc = fn(&st, arg);
	}
	return rc;
}

void
egw_rxtok_fini(void)
{
	unsigned int i;
	int k;

	for (i = 0; i < rxtok.hi; i++)
		if (rxtok.consumers[i] != NULL)
			egw_rxtok_consumer_destroy(rxtok.consumers[i]);
	for (k = 0; k < n_pending; k++)
		close(pending[k].fd);
	n_pending = 0;
	if (rxtok.listen_fd >= 0) {
		close(rxtok.listen_fd);
		unlink(rxtok.listen_path);
		rxtok.listen_fd = -1;
	}
	if (epfd >= 0) {
		close(epfd);
		epfd = -1;
	}
}
