/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the rxtokens client (lib/rxtokens/client) against a fake
 * edgegw written here: a memfd region (passed read-only, as edgegw does), a
 * memfd shared memory with the header and two egw_rxtok_shring.h rings
 * (as edgegw's shm_create() lays them out), and a thread that answers one hello per attach on a
 * SOCK_SEQPACKET socket in a temporary directory.
 *
 *  - attach failures, one table row each: unknown consumer (the server's
 *    status and message), bad welcome magic, wrong descriptor count, server
 *    closing without a welcome, bad shared header (magic, version, size,
 *    page size, region size, misaligned or out-of-bounds ring, bad ring
 *    size, overlapping rings); errno and message checked, and no descriptor leaked;
 *  - a good attach: the hello the server saw, recv of records the server
 *    enqueued, page() addresses and bounds, return entries reaching the ring
 *    with the header's region id, -EINVAL cases enqueueing nothing, a full
 *    return ring, -EPIPE once for the steered flag (other flag bits kept),
 *    -ENOTCONN after the server closes, EOF at the server after detach.
 *
 * With the path of egw-rxtok-consumer as argument it tests that program
 * instead (reassembly, --verify, batching, --hold, steered count, exit status).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>

#include "egw_rxtok_client.h"
#include "egw_rxtok_shring.h"
#include "../app/check.h"

#define REGION_PAGES 16
#define REGION_SIZE (REGION_PAGES * EGW_RXTOK_PAGE_SIZE)
#define SHM_SIZE (16 * 1024)
#define REC_OFF 128 /* after the two-line header */
#define REC_COUNT 64
#define RET_COUNT 8 /* small enough to fill */
#define REGION_ID 7
#define CONSUMER "c1"

enum fake_mode {
	M_GOOD = 0,
	M_WELCOME_MAGIC,
	M_ONE_FD,
	M_NO_WELCOME,
	M_SHM_MAGIC,
	M_SHM_VERSION,
	M_HDR_SIZE,
	M_PAGE_SIZE,
	M_REGION_SIZE,
	M_REC_MISALIGNED,
	M_RET_OUTSIDE,
	M_RING_SIZE,
	M_RING_OVERLAP,
};

struct fake {
	char dir[64];
	char path[128];
	int lsock;
	int region_fd; /* read-only, what is passed */
	int shm_fd;
	uint8_t *region;
	struct egw_rxtok_shm_hdr *hdr;
	struct egw_rxtok_shring_view rec; /* the fake server produces */
	struct egw_rxtok_shring_view ret; /* the fake server consumes */
	uint32_t ret_off;
	enum fake_mode mode;
	int conn; /* kept open after a good welcome */
	struct egw_rxtok_hello hello;
	ssize_t hello_len;
};

static struct fake fk;

static size_t
ring_size(unsigned int count)
{
	return (size_t)egw_rxtok_shring_memsize(count);
}

/* Header and rings as edgegw makes them, then broken as @p mode says. */
static int
shm_setup(enum fake_mode mode)
{
	uint8_t *shm = (uint8_t *)fk.hdr;
	struct egw_rxtok_shm_hdr *h = fk.hdr;

	memset(shm, 0, SHM_SIZE);
	fk.ret_off = RTE_ALIGN_CEIL(REC_OFF + ring_size(REC_COUNT), RTE_CACHE_LINE_SIZE);
	*h = (struct egw_rxtok_shm_hdr){
		.magic = EGW_RXTOK_SHM_MAGIC,
		.version = EGW_RXTOK_ABI_VERSION,
		.hdr_size = sizeof(*h),
		.region_size = REGION_SIZE,
		.region_id = REGION_ID,
		.page_size = EGW_RXTOK_PAGE_SIZE,
		.rec_ring_off = REC_OFF,
		.ret_ring_off = fk.ret_off,
		.rec_ring_size = REC_COUNT,
		.ret_ring_size = RET_COUNT,
		.quota = 256,
		.max_ranges = EGW_RXTOK_MAX_RANGES,
	};
	if (egw_rxtok_shring_init(&fk.rec, shm + REC_OFF, REC_COUNT) < 0 ||
	    egw_rxtok_shring_init(&fk.ret, shm + fk.ret_off, RET_COUNT) < 0)
		return -1;
	switch (mode) {
	case M_SHM_MAGIC: h->magic ^= 1; break;
	case M_SHM_VERSION: h->version = EGW_RXTOK_ABI_VERSION + 1; break;
	case M_HDR_SIZE: h->hdr_size = sizeof(*h) + 8; break;
	case M_PAGE_SIZE: h->page_size = 2048; break;
	case M_REGION_SIZE: h->region_size = REGION_SIZE / 2; break;
	case M_REC_MISALIGNED: h->rec_ring_off = REC_OFF + 8; break;
	case M_RET_OUTSIDE: h->ret_ring_off = SHM_SIZE - RTE_CACHE_LINE_SIZE; break;
	case M_RING_SIZE: h->ret_ring_size = RET_COUNT - 1; break;
	case M_RING_OVERLAP: h->ret_ring_off = REC_OFF + 64; break;
	default: break;
	}
	return 0;
}

static int
send_welcome(int conn, const struct egw_rxtok_welcome *w, const int *fds, unsigned int nfds)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * 2)];
	} ctl;
	struct iovec iov = {.iov_base = (void *)(uintptr_t)w, .iov_len = sizeof(*w)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;

	if (nfds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	return sendmsg(conn, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(*w) ? 0 : -1;
}

/* Server thread: accept one connection and answer its hello as fk.mode says. */
static void *
serve_one(void *arg)
{
	struct egw_rxtok_welcome w = {
		.magic = EGW_RXTOK_HELLO_MAGIC,
		.region_size = REGION_SIZE,
		.shm_size = SHM_SIZE,
	};
	int fds[2] = {fk.region_fd, fk.shm_fd};
	unsigned int nfds = 2;
	int conn;

	(void)arg;
	conn = accept4(fk.lsock, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		return NULL;
	memset(&fk.hello, 0, sizeof(fk.hello));
	fk.hello_len = recv(conn, &fk.hello, sizeof(fk.hello), 0);
	if (fk.mode == M_NO_WELCOME) {
		close(conn);
		return NULL;
	}
	if (fk.hello_len != sizeof(fk.hello) || fk.hello.magic != EGW_RXTOK_HELLO_MAGIC ||
	    strncmp(fk.hello.consumer, CONSUMER, sizeof(fk.hello.consumer)) != 0) {
		w.status = -ENOENT;
		snprintf(w.message, sizeof(w.message), "no consumer '%.63s'", fk.hello.consumer);
		nfds = 0;
	} else if (fk.mode == M_WELCOME_MAGIC) {
		w.magic = 0x12345678;
	} else if (fk.mode == M_ONE_FD) {
		nfds = 1;
	}
	send_welcome(conn, &w, fds, nfds);
	if (fk.mode == M_GOOD && w.status == 0)
		fk.conn = conn;
	else
		close(conn);
	return NULL;
}

/* Attach with the fake server answering as @p mode says. */
static struct egw_rxtok_client *
attach_mode(enum fake_mode mode, const char *consumer, char *err, size_t errlen, int *err_no)
{
	struct egw_rxtok_client *cl;
	pthread_t th;

	fk.mode = mode;
	if (shm_setup(mode) < 0 || pthread_create(&th, NULL, serve_one, NULL) != 0) {
		*err_no = -1;
		return NULL;
	}
	errno = 0;
	cl = egw_rxtok_client_attach(fk.path, consumer, err, errlen);
	*err_no = errno;
	pthread_join(th, NULL);
	return cl;
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int
fake_start(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char proc[64];
	int fd;

	snprintf(fk.dir, sizeof(fk.dir), "/tmp/egw-rxtok-client.XXXXXX");
	if (mkdtemp(fk.dir) == NULL)
		return -1;
	snprintf(fk.path, sizeof(fk.path), "%s/sock", fk.dir);
	memcpy(sa.sun_path, fk.path, strlen(fk.path) + 1);
	fk.lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fk.lsock < 0 || bind(fk.lsock, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fk.lsock, 4) < 0)
		return -1;

	/* sealed as edgegw seals them (the client refuses unsealed ones) */
	fd = memfd_create("egw-rxtok-test-region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, REGION_SIZE) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return -1;
	fk.region = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fk.region == MAP_FAILED)
		return -1;
	/* edgegw passes the region read-only. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	fk.region_fd = open(proc, O_RDONLY | O_CLOEXEC);
	close(fd);
	if (fk.region_fd < 0)
		return -1;

	fk.shm_fd = memfd_create("egw-rxtok-test-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fk.shm_fd < 0 || ftruncate(fk.shm_fd, SHM_SIZE) < 0 ||
	    fcntl(fk.shm_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return -1;
	fk.hdr = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fk.shm_fd, 0);
	if (fk.hdr == MAP_FAILED)
		return -1;
	fk.conn = -1;
	return 0;
}

static void
fake_stop(void)
{
	if (fk.conn >= 0)
		close(fk.conn);
	close(fk.lsock);
	close(fk.region_fd);
	close(fk.shm_fd);
	munmap(fk.region, REGION_SIZE);
	munmap(fk.hdr, SHM_SIZE);
	unlink(fk.path);
	rmdir(fk.dir);
}

struct attach_case {
	const char *name;
	enum fake_mode mode;
	const char *consumer;
	int err_no;
	const char *msg; /* substring of the error message */
};

static const struct attach_case attach_cases[] = {
	{"unknown consumer", M_GOOD, "bogus", ENOENT, "no consumer 'bogus'"},
	{"bad welcome magic", M_WELCOME_MAGIC, CONSUMER, EPROTO, "bad magic 0x12345678"},
	{"one descriptor", M_ONE_FD, CONSUMER, EPROTO, "carries 1 descriptors"},
	{"no welcome", M_NO_WELCOME, CONSUMER, ECONNRESET, "without a welcome"},
	{"shm magic", M_SHM_MAGIC, CONSUMER, EINVAL, "header has bad magic"},
	{"shm version", M_SHM_VERSION, CONSUMER, EPROTONOSUPPORT, "ABI version 4"},
	{"header size", M_HDR_SIZE, CONSUMER, EINVAL, "header size"},
	{"page size", M_PAGE_SIZE, CONSUMER, EINVAL, "page size 2048"},
	{"region size", M_REGION_SIZE, CONSUMER, EINVAL, "region size"},
	{"misaligned ring", M_REC_MISALIGNED, CONSUMER, EINVAL, "record ring offset 136 is not"},
	{"ring outside", M_RET_OUTSIDE, CONSUMER, EINVAL, "return ring of"},
	{"ring size", M_RING_SIZE, CONSUMER, EINVAL, "return ring size 7 is not"},
	{"rings overlap", M_RING_OVERLAP, CONSUMER, EINVAL, "overlap"},
	{"empty name", M_GOOD, "", EINVAL, "1..63 characters"},
	{"long name", M_GOOD, "0123456789012345678901234567890123456789012345678901234567890123",
	 ENAMETOOLONG, "1..63 characters"},
};

static void
test_attach_failures(void)
{
	struct egw_rxtok_client *cl;
	char err[256];
	unsigned int i;
	int before, err_no;

	for (i = 0; i < sizeof(attach_cases) / sizeof(attach_cases[0]); i++) {
		const struct attach_case *t = &attach_cases[i];

		before = count_fds();
		if (t->consumer[0] == '\0' || strlen(t->consumer) > 63) {
			/* Refused before connecting: no server thread. */
			errno = 0;
			cl = egw_rxtok_client_attach(fk.path, t->consumer, err, sizeof(err));
			err_no = errno;
		} else {
			cl = attach_mode(t->mode, t->consumer, err, sizeof(err), &err_no);
		}
		CHECK(cl == NULL, "%s: attach succeeded", t->name);
		CHECK(err_no == t->err_no, "%s: errno %d (%s), expected %d", t->name, err_no,
		      strerror(err_no), t->err_no);
		CHECK(strstr(err, t->msg) != NULL, "%s: message '%s' lacks '%s'", t->name, err,
		      t->msg);
		CHECK(count_fds() == before, "%s: %d descriptors open, %d before", t->name,
		      count_fds(), before);
		egw_rxtok_client_detach(cl);
	}

	errno = 0;
	cl = egw_rxtok_client_attach("/nonexistent/egw.sock", CONSUMER, err, sizeof(err));
	CHECK(cl == NULL && errno == ENOENT && strstr(err, "connect to /nonexistent") != NULL,
	      "missing socket: errno %d, '%s'", errno, err);
	errno = 0;
	CHECK(egw_rxtok_client_attach(NULL, CONSUMER, NULL, 0) == NULL && errno == EINVAL,
	      "NULL path: errno %d", errno);
}

static void
test_records(struct egw_rxtok_client *cl)
{
	static const uint8_t flags[5] = {EGW_RXTOK_REC_FIRST, 0, 0, 0, EGW_RXTOK_REC_LAST};
	struct egw_rxtok_rec in[5], out[8];
	unsigned int i;
	int n;

	for (i = 0; i < 5; i++)
		in[i] = (struct egw_rxtok_rec){
			.token = i * 3,
			.offset = (uint16_t)(i * 100),
			.size = (uint16_t)(1000 + i),
			.key = 4000 + i,
			.port = (uint16_t)i,
			.match = EGW_RXTOK_MATCH_UDP_DPORT,
			.flags = flags[i],
		};
	CHECK(egw_rxtok_client_recv(cl, out, 8) == 0, "recv on an empty ring");
	CHECK(egw_rxtok_client_recv(NULL, out, 8) == -EINVAL, "recv NULL client");
	CHECK(egw_rxtok_client_recv(cl, NULL, 8) == -EINVAL, "recv NULL records");
	CHECK(egw_rxtok_shring_enqueue_burst(&fk.rec, in, 5) == 5, "server enqueue");
	n = egw_rxtok_client_recv(cl, out, 3);
	CHECK(n == 3, "recv 3 of 5: %d", n);
	n = egw_rxtok_client_recv(cl, out + 3, 8);
	CHECK(n == 2, "recv the other 2: %d", n);
	CHECK(memcmp(in, out, sizeof(in)) == 0, "records differ from what the server wrote");
	CHECK(egw_rxtok_client_recv(cl, out, 8) == 0, "ring empty again");
}

static void
test_pages(struct egw_rxtok_client *cl)
{
	const uint8_t *p0 = egw_rxtok_client_page(cl, 0);
	uint32_t t;
	bool same = true;

	/* Written after attach: the mapping is shared with the server's. */
	for (t = 0; t < REGION_PAGES; t++)
		memset(fk.region + (size_t)t * EGW_RXTOK_PAGE_SIZE, 0xa0 + t, EGW_RXTOK_PAGE_SIZE);
	CHECK(p0 != NULL, "page 0");
	for (t = 0; t < REGION_PAGES && p0 != NULL; t++) {
		const uint8_t *p = egw_rxtok_client_page(cl, t);

		same &= p == p0 + (size_t)t * EGW_RXTOK_PAGE_SIZE && p[0] == 0xa0 + t &&
			p[EGW_RXTOK_PAGE_SIZE - 1] == 0xa0 + t;
	}
	CHECK(same, "page addresses or contents differ from the region");
	CHECK(egw_rxtok_client_page(cl, REGION_PAGES) == NULL, "page past the region");
	CHECK(egw_rxtok_client_page(cl, UINT32_MAX) == NULL, "page UINT32_MAX");
	CHECK(egw_rxtok_client_page(NULL, 0) == NULL, "page of NULL client");
}

static void
test_returns(struct egw_rxtok_client *cl)
{
	static struct egw_rxtok_range many[EGW_RXTOK_MAX_RANGES + 1];
	const struct egw_rxtok_range good[3] = {{3, 2}, {10, 1}, {0, EGW_RXTOK_MAX_RANGE_TOKENS}};
	const struct egw_rxtok_range zero[2] = {{1, 1}, {2, 0}};
	const struct egw_rxtok_range big[1] = {{0, EGW_RXTOK_MAX_RANGE_TOKENS + 1}};
	struct egw_rxtok_range ten[10];
	struct egw_rxtok_ret out[RET_COUNT];
	unsigned int i, n;
	bool ok = true;
	int ret;

	ret = egw_rxtok_client_return(cl, good, 3);
	CHECK(ret == 3, "return 3 ranges: %d", ret);
	n = (unsigned int)egw_rxtok_shring_dequeue_burst(&fk.ret, out, RET_COUNT);
	CHECK(n == 3, "server sees %u entries", n);
	for (i = 0; i < n && i < 3; i++)
		ok &= out[i].region == REGION_ID && out[i].token_start == good[i].token_start &&
		      out[i].token_count == good[i].token_count && out[i].reserved == 0;
	CHECK(ok, "return entries differ from the ranges");

	for (i = 0; i <= EGW_RXTOK_MAX_RANGES; i++)
		many[i] = (struct egw_rxtok_range){i, 1};
	CHECK(egw_rxtok_client_return(cl, many, EGW_RXTOK_MAX_RANGES + 1) == -EINVAL,
	      "more than EGW_RXTOK_MAX_RANGES ranges");
	CHECK(egw_rxtok_client_return(cl, zero, 2) == -EINVAL, "count 0");
	CHECK(egw_rxtok_client_return(cl, big, 1) == -EINVAL, "count too large");
	CHECK(egw_rxtok_client_return(cl, NULL, 1) == -EINVAL, "NULL ranges");
	CHECK(egw_rxtok_client_return(NULL, good, 1) == -EINVAL, "NULL client");
	CHECK(fk.ret.s->prod_tail == fk.ret.own, "a rejected call enqueued %u entries",
	      fk.ret.s->prod_tail - fk.ret.own);
	CHECK(egw_rxtok_client_return(cl, good, 0) == 0, "n = 0");

	/* Full ring: partial, then nothing (server alive: 0, not -ENOTCONN). */
	for (i = 0; i < 10; i++)
		ten[i] = (struct egw_rxtok_range){100 + i, 1};
	ret = egw_rxtok_client_return(cl, ten, 10);
	CHECK(ret == RET_COUNT, "partial return into a ring of %d entries: %d", RET_COUNT, ret);
	CHECK(egw_rxtok_client_return(cl, ten + RET_COUNT, 2) == 0, "return into a full ring");
	n = (unsigned int)egw_rxtok_shring_dequeue_burst(&fk.ret, out, RET_COUNT);
	CHECK(n == RET_COUNT && out[0].token_start == 100 && out[n - 1].token_start == 107,
	      "drained %u", n);
	CHECK(egw_rxtok_client_return(cl, ten + RET_COUNT, 2) == 2, "retry after the ring drained");
	n = (unsigned int)egw_rxtok_shring_dequeue_burst(&fk.ret, out, RET_COUNT);
	CHECK(n == 2 && out[0].token_start == 108 && out[1].token_start == 109, "retried %u", n);
}

/* A server writing insane indices: -EPROTO, nothing read or written, and
 * all is well again once they are sane. */
static void
test_hostile_indices(struct egw_rxtok_client *cl)
{
	static const uint32_t bad[] = {REC_COUNT + 1, UINT32_MAX / 2, UINT32_MAX};
	struct egw_rxtok_rec out[4];
	const struct egw_rxtok_range r = {5, 1};
	struct egw_rxtok_ret got[RET_COUNT];
	uint32_t prod = fk.rec.own, cons = fk.ret.own;
	unsigned int i;
	int n;

	for (i = 0; i < RTE_DIM(bad); i++) {
		/* records: prod - cons > size */
		__atomic_store_n(&fk.rec.s->prod_tail, prod + bad[i], __ATOMIC_RELEASE);
		n = egw_rxtok_client_recv(cl, out, 4);
		CHECK(n == -EPROTO, "recv with record prod +%u: %d", bad[i], n);
		/* returns: the consumer index edgegw would never write */
		__atomic_store_n(&fk.ret.s->cons_head, cons - bad[i], __ATOMIC_RELEASE);
		n = egw_rxtok_client_return(cl, &r, 1);
		CHECK(n == -EPROTO, "return with return cons -%u: %d", bad[i], n);
	}
	CHECK(fk.ret.s->prod_tail == cons, "an insane return ring was written");
	/* a full record ring of stale slots is sane: n records, at most */
	__atomic_store_n(&fk.rec.s->prod_tail, prod + REC_COUNT, __ATOMIC_RELEASE);
	n = egw_rxtok_client_recv(cl, out, 4);
	CHECK(n == 4, "recv from a full ring: %d", n);
	__atomic_store_n(&fk.rec.s->prod_tail, prod + 4, __ATOMIC_RELEASE);
	fk.rec.own = prod + 4;
	__atomic_store_n(&fk.ret.s->cons_head, cons, __ATOMIC_RELEASE);
	CHECK(egw_rxtok_client_recv(cl, out, 4) == 0, "recv after the indices are sane");
	CHECK(egw_rxtok_client_return(cl, &r, 1) == 1, "return after the indices are sane");
	n = egw_rxtok_shring_dequeue_burst(&fk.ret, got, RET_COUNT);
	CHECK(n == 1 && got[0].token_start == 5, "return entry after the indices are sane: %d", n);
}

static void
test_steered(struct egw_rxtok_client *cl)
{
	struct egw_rxtok_rec rec = {.token = 1, .size = 10, .flags = 3}, out[4];
	int n;

	CHECK(egw_rxtok_shring_enqueue_burst(&fk.rec, &rec, 1) == 1, "enqueue");
	__atomic_fetch_or(&fk.hdr->flags, EGW_RXTOK_SHM_F_STEERED | 0x100, __ATOMIC_RELAXED);
	n = egw_rxtok_client_recv(cl, out, 4);
	CHECK(n == -EPIPE, "steered: %d", n);
	CHECK(fk.hdr->flags == 0x100, "flags after -EPIPE: 0x%x", fk.hdr->flags);
	n = egw_rxtok_client_recv(cl, out, 4);
	CHECK(n == 1 && out[0].token == 1, "records after -EPIPE: %d", n);
	CHECK(egw_rxtok_client_recv(cl, out, 4) == 0, "-EPIPE only once");
	fk.hdr->flags = 0;
}

static void
test_server_close(struct egw_rxtok_client *cl)
{
	struct egw_rxtok_rec rec = {.token = 2, .size = 10, .flags = 3}, out[4];
	const struct egw_rxtok_range r = {1, 1};
	int n;

	CHECK(egw_rxtok_shring_enqueue_burst(&fk.rec, &rec, 1) == 1, "enqueue");
	close(fk.conn);
	fk.conn = -1;
	/* Checked when the ring is empty: what is queued comes first. */
	n = egw_rxtok_client_recv(cl, out, 4);
	CHECK(n == 1, "queued record after server close: %d", n);
	n = egw_rxtok_client_recv(cl, out, 4);
	CHECK(n == -ENOTCONN, "after server close: %d", n);
	CHECK(egw_rxtok_client_recv(cl, out, 4) == -ENOTCONN, "-ENOTCONN stays");
	CHECK(egw_rxtok_client_return(cl, &r, 1) == -ENOTCONN, "return after server close");
}

static void
test_good_attach(void)
{
	struct egw_rxtok_client *cl;
	char err[256], buf[16];
	int err_no, before;

	before = count_fds();
	cl = attach_mode(M_GOOD, CONSUMER, err, sizeof(err), &err_no);
	CHECK(cl != NULL, "attach: %s", err);
	if (cl == NULL)
		return;
	CHECK(fk.hello_len == sizeof(fk.hello) && fk.hello.magic == EGW_RXTOK_HELLO_MAGIC &&
		      fk.hello.version == EGW_RXTOK_ABI_VERSION &&
		      strcmp(fk.hello.consumer, CONSUMER) == 0,
	      "hello as the server saw it: %zd bytes, magic 0x%x, version %u, '%.64s'",
	      fk.hello_len, fk.hello.magic, fk.hello.version, fk.hello.consumer);
	/* The socket stays, the two passed descriptors are closed; the server holds one. */
	CHECK(count_fds() == before + 2, "%d descriptors, expected %d", count_fds(), before + 2);
	CHECK(egw_rxtok_client_fd(cl) >= 0, "fd");
	CHECK(egw_rxtok_client_shm(cl) != NULL && egw_rxtok_client_shm(cl)->region_id == REGION_ID,
	      "shm header");

	test_records(cl);
	test_pages(cl);
	test_returns(cl);
	test_hostile_indices(cl);
	test_steered(cl);
	test_server_close(cl);
	egw_rxtok_client_detach(cl);
	CHECK(count_fds() == before, "after detach: %d descriptors, %d before", count_fds(),
	      before);

	/* Detach closes the socket: the server reads EOF. */
	cl = attach_mode(M_GOOD, CONSUMER, err, sizeof(err), &err_no);
	CHECK(cl != NULL, "second attach: %s", err);
	egw_rxtok_client_detach(cl);
	CHECK(fk.conn >= 0 && recv(fk.conn, buf, sizeof(buf), 0) == 0, "no EOF after detach");
	if (fk.conn >= 0)
		close(fk.conn);
	fk.conn = -1;
	egw_rxtok_client_detach(NULL);
}

/* ---- egw-rxtok-consumer ---- */

/* Write a test payload of @p len bytes (format in app/rxtok-consumer/main.c). */
static void
make_payload(uint8_t *b, uint32_t seq, uint32_t len)
{
	uint32_t i, crc = 0xffffffffu, k;

	memcpy(b, "EGWP", 4);
	for (i = 16; i < len; i++)
		b[i] = (uint8_t)(seq + i);
	for (i = 16; i < len; i++) {
		crc ^= b[i];
		for (k = 0; k < 8; k++)
			crc = (crc & 1) != 0 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
	}
	crc ^= 0xffffffffu;
	for (i = 0; i < 4; i++) {
		b[4 + i] = (uint8_t)(seq >> (24 - 8 * i));
		b[8 + i] = (uint8_t)(len >> (24 - 8 * i));
		b[12 + i] = (uint8_t)(crc >> (24 - 8 * i));
	}
}

struct frag {
	uint32_t token;
	uint16_t offset;
	uint16_t size;
	uint8_t flags;
};

static struct egw_rxtok_rec app_recs[REC_COUNT];
static unsigned int app_nrecs;

/* Lay a payload out over fragments and queue their records (see send_records()). */
static void
deliver(uint32_t seq, uint32_t len, const struct frag *fr, unsigned int n, int corrupt_at)
{
	static uint8_t buf[65536];
	uint32_t pos = 0;
	unsigned int i;

	make_payload(buf, seq, len);
	if (corrupt_at >= 0)
		buf[corrupt_at] ^= 0xff;
	for (i = 0; i < n && app_nrecs < REC_COUNT - 1; i++) {
		memcpy(fk.region + (size_t)fr[i].token * EGW_RXTOK_PAGE_SIZE + fr[i].offset,
		       buf + pos, fr[i].size);
		pos += fr[i].size;
		app_recs[app_nrecs++] = (struct egw_rxtok_rec){.token = fr[i].token,
							       .offset = fr[i].offset,
							       .size = fr[i].size,
							       .flags = fr[i].flags};
	}
}

/* One enqueue: the consumer sees all records in one burst, so its ranges are predictable. */
static void
send_records(void)
{
	CHECK(egw_rxtok_shring_enqueue_burst(&fk.rec, app_recs, app_nrecs) == (int)app_nrecs,
	      "enqueue %u records", app_nrecs);
	app_nrecs = 0;
}

struct app_run {
	pid_t pid;
	FILE *out;
	unsigned int returned[REGION_PAGES]; /* times each token came back */
	unsigned int ranges;
	unsigned int max_range;
	char line[512];
	char other[1024]; /* the other lines */
	int status;
};

static int
app_start(struct app_run *r, const char *bin, const char *const *args)
{
	const char *argv[16];
	char buf[64];
	int pfd[2], err_no;
	unsigned int i, n = 0;
	pthread_t th;

	memset(r, 0, sizeof(*r));
	argv[n++] = bin;
	argv[n++] = "--socket";
	argv[n++] = fk.path;
	argv[n++] = "--consumer";
	argv[n++] = CONSUMER;
	for (i = 0; args[i] != NULL && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fk.mode = M_GOOD;
	if (shm_setup(M_GOOD) < 0 || pipe(pfd) < 0 ||
	    pthread_create(&th, NULL, serve_one, NULL) != 0)
		return -1;
	r->pid = fork();
	if (r->pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execv(bin, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(pfd[1]);
	r->out = fdopen(pfd[0], "r");
	err_no = r->out == NULL || fgets(buf, sizeof(buf), r->out) == NULL ||
		 strcmp(buf, "attached\n") != 0;
	pthread_join(th, NULL);
	return err_no ? -1 : 0;
}

/* Drain returns like edgegw's service loop until the program exits. */
static void
app_finish(struct app_run *r)
{
	struct egw_rxtok_ret out[RET_COUNT];
	char buf[512];
	unsigned int i, n, k;
	pid_t w = 0;
	int rc;

	while (w == 0) {
		w = waitpid(r->pid, &r->status, WNOHANG);
		rc = egw_rxtok_shring_dequeue_burst(&fk.ret, out, RET_COUNT);
		n = rc < 0 ? 0 : (unsigned int)rc;
		for (i = 0; i < n; i++) {
			r->ranges++;
			if (out[i].token_count > r->max_range)
				r->max_range = out[i].token_count;
			for (k = 0; k < out[i].token_count; k++)
				if (out[i].region == REGION_ID &&
				    out[i].token_start + k < REGION_PAGES)
					r->returned[out[i].token_start + k]++;
		}
		if (w == 0 && n == 0)
			usleep(200);
	}
	while (fgets(buf, sizeof(buf), r->out) != NULL) {
		if (strncmp(buf, "consumer ", 9) == 0)
			snprintf(r->line, sizeof(r->line), "%s", buf);
		else
			strncat(r->other, buf, sizeof(r->other) - strlen(r->other) - 1);
	}
	fclose(r->out);
	if (fk.conn >= 0)
		close(fk.conn);
	fk.conn = -1;
}

static void
test_app(const char *bin)
{
	/* Good payloads: one page; two consecutive pages; minimum size; header split. */
	static const struct frag f1[] = {{12, 64, 100, EGW_RXTOK_REC_FIRST | EGW_RXTOK_REC_LAST}};
	static const struct frag f2[] = {{1, 0, 4096, EGW_RXTOK_REC_FIRST},
					 {2, 0, 904, EGW_RXTOK_REC_LAST}};
	static const struct frag f3[] = {{10, 0, 16, EGW_RXTOK_REC_FIRST | EGW_RXTOK_REC_LAST}};
	static const struct frag f4[] = {{5, 4086, 10, EGW_RXTOK_REC_FIRST},
					 {6, 0, 190, 0},
					 {7, 0, 100, EGW_RXTOK_REC_LAST}};
	static const struct frag orphan[] = {{3, 0, 100, EGW_RXTOK_REC_LAST}};
	static const char *const a_verify[] = {"--count", "4", "--verify", "--batch", "2", NULL};
	static const char *const a_bad[] = {"--count", "2", "--verify", NULL};
	static const char *const a_hold[] = {"--timeout", "0.3", "--hold", NULL};
	static const char *const a_short[] = {"--count", "3", "--timeout", "0.3", "--quiet", NULL};
	struct app_run r;
	unsigned int t;
	bool ok;

	/*
	 * Good run: every token back once. One burst of tokens 12, 1-2, 10, 5-7
	 * in batches of 2 ranges: {12}{1-2}, then {10}{5-7}.
	 */
	CHECK(app_start(&r, bin, a_verify) == 0, "start (verify)");
	deliver(1, 100, f1, 1, -1);
	deliver(2, 5000, f2, 2, -1);
	deliver(3, 16, f3, 1, -1);
	deliver(4, 300, f4, 3, -1);
	send_records();
	app_finish(&r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "verify run: status 0x%x",
	      r.status);
	CHECK(strcmp(r.line, "consumer c1: payloads 4 bytes 5416 bad 0 steered 0 returned 7 "
			     "held 0\n") == 0,
	      "verify run: %s", r.line);
	ok = true;
	for (t = 0; t < REGION_PAGES; t++)
		ok &= r.returned[t] ==
		      (t == 1 || t == 2 || (t >= 5 && t <= 7) || t == 10 || t == 12);
	CHECK(ok, "each delivered token returned exactly once");
	CHECK(r.ranges == 4 && r.max_range == 3, "%u ranges, longest %u tokens; expected 4 and 3",
	      r.ranges, r.max_range);
	CHECK(r.other[0] == '\0', "verify run printed: %s", r.other);

	/* A corrupted byte and a fragment without FIRST. */
	CHECK(app_start(&r, bin, a_bad) == 0, "start (bad)");
	deliver(5, 100, f1, 1, 50);
	deliver(6, 100, orphan, 1, -1);
	send_records();
	app_finish(&r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1, "bad run: status 0x%x", r.status);
	CHECK(strcmp(r.line, "consumer c1: payloads 2 bytes 200 bad 2 steered 0 returned 2 "
			     "held 0\n") == 0,
	      "bad run: %s", r.line);
	CHECK(strstr(r.other, "bad payload seq 5: byte 50 is 0xc8, expected 0x37\n") != NULL &&
		      strstr(r.other, "bad payload seq ?: fragment without a FIRST\n") != NULL,
	      "bad run printed: %s", r.other);

	/* --hold: nothing comes back; steered counted. */
	CHECK(app_start(&r, bin, a_hold) == 0, "start (hold)");
	__atomic_fetch_or(&fk.hdr->flags, EGW_RXTOK_SHM_F_STEERED, __ATOMIC_RELAXED);
	deliver(7, 5000, f2, 2, -1);
	send_records();
	app_finish(&r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "hold run: status 0x%x", r.status);
	CHECK(strcmp(r.line, "consumer c1: payloads 1 bytes 5000 bad 0 steered 1 returned 0 "
			     "held 2\n") == 0,
	      "hold run: %s", r.line);
	CHECK(r.ranges == 0, "hold run returned %u ranges", r.ranges);

	/* Fewer payloads than --count before the timeout: exit 1, tokens still returned. */
	CHECK(app_start(&r, bin, a_short) == 0, "start (short)");
	deliver(8, 100, f1, 1, -1);
	send_records();
	app_finish(&r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1, "short run: status 0x%x",
	      r.status);
	CHECK(strcmp(r.line, "consumer c1: payloads 1 bytes 100 bad 0 steered 0 returned 1 "
			     "held 0\n") == 0,
	      "short run: %s", r.line);
}

int
main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (fake_start() < 0) {
		printf("FAIL: fake server set-up: %s\n", strerror(errno));
		return 1;
	}
	if (argc > 1) {
		test_app(argv[1]);
	} else {
		test_attach_failures();
		test_good_attach();
	}
	fake_stop();
	printf("%s: %d checks, %d failures\n", argc > 1 ? "rxtok-consumer" : "rxtokens client",
	       checks, failures);
	return failures == 0 ? 0 : 1;
}
