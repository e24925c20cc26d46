/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the rxtokens client (lib/rxtokens/client): what it
 * does with what an edgegw it cannot trust sends: the welcome message and
 * its descriptors, the shared header and the two rings in shared memory.
 * No EAL and no DPDK: the fake server makes its rings with egw_rxtok_shring.h
 * in a private buffer and writes them to a memfd, as edgegw's shm_create()
 * lays them out.
 *
 * A server thread per input answers the client's hello on a SOCK_SEQPACKET
 * socket in a temporary directory, /tmp/fuzz_rxtok_client.<pid>.XXXXXX
 * (removed at exit; after a crash, by the next run: fuzz_scratch.h).
 *
 * Input (read in order; zeros once used up, and zeros give a good attach):
 *   flags      bit 0: close without a welcome; bit 1: keep the connection
 *              open after the welcome; bit 2: welcome region_size raw (u64
 *              follows), else the region memfd's size; bit 3: the same for
 *              shm_size; bit 4: welcome magic raw (u32); bit 5: status raw
 *              (i32) and the 128-byte message follow; bits 6-7: welcome
 *              length (0, 1: exact; 2: short; 3: long), a u8 follows for 2, 3
 *   u16        region pages (0: 16, else % 1025)
 *   u16        shared memory bytes (0: the layout rounded up to 4 KiB)
 *   u8, u8     record and return ring sizes: 1 << (1 + v % 10)
 *   u8         descriptors sent (% 11), then one u8 kind each ((v + k) % 6:
 *              region memfd, shm memfd, pipe, /dev/zero, region read-only,
 *              shm read-only)
 *   u8         records the server enqueues (% 80), u32 token each
 *   u8         field tweaks (% 12), each u8 field (% 18) and u32 value:
 *              prod/cons index of either ring (raw, or the record ring's
 *              prod moved forward / the return ring's cons moved back by
 *              v % 2048), header magic, version, hdr_size, region_size,
 *              region_id, page_size, rec/ret offsets and sizes, ret_status, flags
 *   u8         raw patches (% 4), each u16 offset, u8 length (% 9), bytes
 *   u8         records to receive (% 100)
 *   u8         ranges to return (% 131), each u16 start and u16 count
 *
 * Checked:
 *  - the client sent a well-formed hello (magic, version, consumer name);
 *  - attach fails with errno set and a message (not "no error"), or it
 *    succeeds only when the welcome was whole, good and carried two
 *    descriptors, and then the layout the server wrote is one a reference
 *    check written here accepts (header fields, rings aligned, inside the
 *    shared memory, power-of-two sizes, not overlapping);
 *  - page() is non-NULL up to the last page and NULL past it;
 *  - recv returns -EPIPE, -ENOTCONN, -EPROTO or 0..n: -EPROTO exactly when
 *    the server's indices are insane ((prod - cons) > size), else as many
 *    records as the indices say are there, up to n; return returns -EINVAL
 *    exactly when the arguments are bad, else -EPROTO exactly when the
 *    indices are insane, else -ENOTCONN or as many entries as there are
 *    free slots, up to n;
 *  - the client wrote nothing in the shared memory but the return ring's
 *    entries and producer index, the record ring's consumer index and the
 *    header flags;
 *  - after detach the process has as many descriptors as before the input.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include <unistd.h>

#include <rte_common.h>

#include "egw_rxtok_client.h"
#include "egw_rxtok_shring.h"
#include "fuzz_scratch.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CONSUMER "fz"
#define MAX_FDS 10
#define HDR_SIZE sizeof(struct egw_rxtok_shm_hdr)

/* What the server thread sends for one input. */
struct serve {
	bool no_welcome;
	bool keep_open;
	uint8_t welcome[sizeof(struct egw_rxtok_welcome) + 32];
	size_t welcome_len;
	int fds[MAX_FDS];
	unsigned int nfds;
	/* results */
	bool hello_ok;
	int conn;
};

static char dir[64];
static char sock_path[128];
static int lsock = -1;

static void
cleanup(void)
{
	if (lsock >= 0)
		close(lsock);
	fuzz_scratch_remove(dir);
}

/* What this machine cannot do is a skip (77), not a failure. */
static void __attribute__((noreturn)) skip(const char *what)
{
	fprintf(stderr, "fuzz_rxtok_client: SKIP: %s: %s\n", what, strerror(errno));
	exit(77);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	signal(SIGPIPE, SIG_IGN);
	fd = memfd_create("fz_probe", MFD_CLOEXEC);
	if (fd < 0)
		skip("memfd_create");
	close(fd);
	if (fuzz_scratch_make("fuzz_rxtok_client", dir, sizeof(dir)) != 0)
		skip("scratch directory in /tmp");
	snprintf(sock_path, sizeof(sock_path), "%s/sock", dir);
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(lsock, 4) != 0) {
		cleanup();
		skip("UNIX SOCK_SEQPACKET listening socket");
	}
	atexit(cleanup);
	return 0;
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	FUZZ_ASSERT(d != NULL, "opendir /proc/self/fd");
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void *
serve_one(void *arg)
{
	struct serve *s = arg;
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
	} ctl;
	struct egw_rxtok_hello hello;
	struct iovec iov = {.iov_base = s->welcome, .iov_len = s->welcome_len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	ssize_t len;
	int conn;

	conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		return NULL;
	memset(&hello, 0, sizeof(hello));
	len = recv(conn, &hello, sizeof(hello), 0);
	s->hello_ok = len == (ssize_t)sizeof(hello) && hello.magic == EGW_RXTOK_HELLO_MAGIC &&
		      hello.version == EGW_RXTOK_ABI_VERSION &&
		      memcmp(hello.consumer, CONSUMER, sizeof(CONSUMER)) == 0;
	if (s->no_welcome) {
		close(conn);
		return NULL;
	}
	if (s->nfds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * s->nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * s->nfds);
		memcpy(CMSG_DATA(c), s->fds, sizeof(int) * s->nfds);
	}
	(void)sendmsg(conn, &msg, MSG_NOSIGNAL);
	if (s->keep_open)
		s->conn = conn;
	else
		close(conn);
	return NULL;
}

static size_t
ring_bytes(unsigned int count)
{
	return RTE_ALIGN_CEIL((size_t)egw_rxtok_shring_memsize(count), RTE_CACHE_LINE_SIZE);
}

/* The ring the header now places at @p off, if it is in the buffer. */
static struct egw_rxtok_shring *
ring_at(uint8_t *shm, size_t shm_len, uint32_t off)
{
	if (off % RTE_CACHE_LINE_SIZE != 0 ||
	    (size_t)off + sizeof(struct egw_rxtok_shring) > shm_len)
		return NULL;
	return (struct egw_rxtok_shring *)(shm + off);
}

static void
tweak(uint8_t *shm, size_t shm_len, struct egw_rxtok_shm_hdr *h, unsigned int f, uint32_t v)
{
	struct egw_rxtok_shring *rec = ring_at(shm, shm_len, h->rec_ring_off);
	struct egw_rxtok_shring *ret = ring_at(shm, shm_len, h->ret_ring_off);

	switch (f) {
	case 0:
		if (rec != NULL)
			rec->prod_tail = v;
		break;
	case 1:
		if (rec != NULL)
			rec->cons_head = v;
		break;
	case 2:
		if (ret != NULL)
			ret->prod_tail = v;
		break;
	case 3:
		if (ret != NULL)
			ret->cons_head = v;
		break;
	case 4: h->magic ^= (uint64_t)v << (v & 31); break;
	case 5: h->version = v; break;
	case 6: h->hdr_size = v; break;
	case 7: h->region_size = v & 1 ? v : (uint64_t)v << 12; break;
	case 8: h->region_id = v; break;
	case 9: h->page_size = v; break;
	case 10: h->rec_ring_off = v; break;
	case 11: h->ret_ring_off = v; break;
	case 12: h->rec_ring_size = v & 1 ? v : 1u << (v >> 1) % 32; break;
	case 13: h->ret_ring_size = v & 1 ? v : 1u << (v >> 1) % 32; break;
	case 14:
		if (rec != NULL)
			rec->prod_tail += v % 2048;
		break;
	case 15:
		if (ret != NULL)
			ret->cons_head -= v % 2048;
		break;
	case 16: h->ret_status = (int32_t)v; break;
	default: h->flags = v; break;
	}
}

/* The layout rules, written out plainly: does a ring fit? Its end, or 0. */
static uint64_t
ref_ring(uint64_t shm_size, uint32_t off, uint32_t size)
{
	uint64_t end = (uint64_t)off + 128 + (uint64_t)size * 16;

	if (off % 64 != 0 || off < HDR_SIZE || end > shm_size)
		return 0;
	if (size == 0 || (size & (size - 1)) != 0 || size > (1u << 30))
		return 0;
	return end;
}

static bool
ref_layout_ok(const uint8_t *shm, uint64_t shm_size, uint64_t region_size)
{
	const struct egw_rxtok_shm_hdr *h = (const void *)shm;
	uint64_t rec_end, ret_end;

	if (h->magic != EGW_RXTOK_SHM_MAGIC || h->version != EGW_RXTOK_ABI_VERSION ||
	    h->hdr_size != HDR_SIZE || h->page_size != EGW_RXTOK_PAGE_SIZE ||
	    h->region_size != region_size)
		return false;
	rec_end = ref_ring(shm_size, h->rec_ring_off, h->rec_ring_size);
	ret_end = ref_ring(shm_size, h->ret_ring_off, h->ret_ring_size);
	if (rec_end == 0 || ret_end == 0)
		return false;
	return !(h->rec_ring_off < ret_end && h->ret_ring_off < rec_end);
}

/* Bytes the client may write: [lo, hi) ranges of the shared memory. */
static bool
client_may_write(const struct egw_rxtok_shm_hdr *h, size_t i)
{
	size_t rec = h->rec_ring_off, ret = h->ret_ring_off;

	return (i >= offsetof(struct egw_rxtok_shm_hdr, flags) &&
		i < offsetof(struct egw_rxtok_shm_hdr, flags) + 4) ||
	       /* the verdict it reports, exchanged for 0 */
	       (i >= offsetof(struct egw_rxtok_shm_hdr, ret_status) &&
		i < offsetof(struct egw_rxtok_shm_hdr, ret_status) + 4) ||
	       (i >= rec + offsetof(struct egw_rxtok_shring, cons_head) &&
		i < rec + offsetof(struct egw_rxtok_shring, cons_head) + 4) ||
	       (i >= ret + offsetof(struct egw_rxtok_shring, prod_tail) &&
		i < ret + offsetof(struct egw_rxtok_shring, prod_tail) + 4) ||
	       (i >= ret + 128 && i < ret + 128 + (size_t)h->ret_ring_size * 16);
}

static int
memfd_of(const char *name, const void *content, size_t len, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	FUZZ_ASSERT(fd >= 0, "memfd_create: %s", strerror(errno));
	FUZZ_ASSERT(ftruncate(fd, (off_t)size) == 0, "ftruncate %zu: %s", size, strerror(errno));
	if (len > 0)
		FUZZ_ASSERT(pwrite(fd, content, len, 0) == (ssize_t)len, "pwrite");
	/* sealed as edgegw seals them: the client refuses unsealed ones */
	FUZZ_ASSERT(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0,
		    "F_ADD_SEALS: %s", strerror(errno));
	return fd;
}

static int
reopen_ro(int fd)
{
	char p[64];
	int ro;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	ro = open(p, O_RDONLY | O_CLOEXEC);
	FUZZ_ASSERT(ro >= 0, "open %s: %s", p, strerror(errno));
	return ro;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size};
	struct serve s = {.conn = -1};
	struct egw_rxtok_welcome w = {.magic = EGW_RXTOK_HELLO_MAGIC};
	struct egw_rxtok_shm_hdr *h;
	struct egw_rxtok_client *cl;
	struct egw_rxtok_range *ranges;
	struct egw_rxtok_rec *recs;
	struct egw_rxtok_shring_view rec_ring, ret_ring;
	uint32_t rec_off, ret_off, rec_size = 0, ret_size = 0;
	uint32_t rec_prod = 0, rec_cons = 0, ret_prod = 0, ret_cons = 0;
	bool detached = false;
	int32_t status = 0;
	uint64_t region_bytes, shm_bytes, layout_end;
	unsigned int i, k, n, rec_count, ret_count, nrecs;
	int own[6], pipefd[2], fds_before, fds_after, err_no, rc;
	uint8_t flags, *buf;
	size_t buf_len;
	pthread_t th;
	char err[256];
	bool inval;

	fds_before = count_fds();
	flags = in_u8(&in);
	s.no_welcome = (flags & 1) != 0;
	s.keep_open = (flags & 2) != 0;
	n = (unsigned int)in_uint(&in, 2);
	region_bytes = (uint64_t)(n == 0 ? 16 : n % 1025) * EGW_RXTOK_PAGE_SIZE;
	n = (unsigned int)in_uint(&in, 2);
	rec_count = 1u << (1 + in_u8(&in) % 10);
	ret_count = 1u << (1 + in_u8(&in) % 10);

	/* the layout edgegw's shm_create() makes, in a private buffer */
	rec_off = RTE_ALIGN_CEIL(HDR_SIZE, RTE_CACHE_LINE_SIZE);
	ret_off = (uint32_t)(rec_off + ring_bytes(rec_count));
	layout_end = ret_off + ring_bytes(ret_count);
	shm_bytes = n == 0 ? RTE_ALIGN_CEIL(layout_end, 4096) : n;
	buf_len = RTE_MAX(layout_end, shm_bytes);
	buf = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(buf_len, RTE_CACHE_LINE_SIZE));
	FUZZ_ASSERT(buf != NULL, "aligned_alloc");
	memset(buf, 0, buf_len);
	h = (struct egw_rxtok_shm_hdr *)buf;
	*h = (struct egw_rxtok_shm_hdr){
		.magic = EGW_RXTOK_SHM_MAGIC,
		.version = EGW_RXTOK_ABI_VERSION,
		.hdr_size = HDR_SIZE,
		.region_size = region_bytes,
		.region_id = 3,
		.page_size = EGW_RXTOK_PAGE_SIZE,
		.rec_ring_off = rec_off,
		.ret_ring_off = ret_off,
		.rec_ring_size = rec_count,
		.ret_ring_size = ret_count,
		.quota = 256,
		.max_ranges = EGW_RXTOK_MAX_RANGES,
	};
	FUZZ_ASSERT(egw_rxtok_shring_init(&rec_ring, buf + rec_off, rec_count) == 0 &&
			    egw_rxtok_shring_init(&ret_ring, buf + ret_off, ret_count) == 0,
		    "egw_rxtok_shring_init");

	/* descriptors: what they are is the input's choice */
	own[0] = memfd_of("fz_region", NULL, 0, region_bytes);
	own[4] = reopen_ro(own[0]);
	FUZZ_ASSERT(pipe2(pipefd, O_CLOEXEC) == 0, "pipe2");
	own[2] = pipefd[0];
	own[3] = open("/dev/zero", O_RDWR | O_CLOEXEC);
	FUZZ_ASSERT(own[3] >= 0, "/dev/zero");
	s.nfds = in_u8(&in) % (MAX_FDS + 1);
	for (k = 0; k < s.nfds; k++)
		s.fds[k] = (in_u8(&in) + k) % 6; /* kinds for now, descriptors below */

	/* records waiting, then the input's changes to the layout */
	nrecs = in_u8(&in) % 80;
	for (i = 0; i < nrecs; i++) {
		struct egw_rxtok_rec r = {
			.token = (uint32_t)in_uint(&in, 4), .size = 1, .flags = 3};

		egw_rxtok_shring_enqueue_burst(&rec_ring, &r, 1);
	}
	n = in_u8(&in) % 12;
	for (i = 0; i < n; i++) {
		unsigned int f = in_u8(&in) % 18;

		tweak(buf, buf_len, h, f, (uint32_t)in_uint(&in, 4));
	}
	n = in_u8(&in) % 4;
	for (i = 0; i < n; i++) {
		uint32_t off = (uint32_t)in_uint(&in, 2);
		unsigned int len = in_u8(&in) % 9;

		for (k = 0; k < len; k++) {
			uint8_t b = in_u8(&in);

			if (off + k < buf_len)
				buf[off + k] = b;
		}
	}
	own[1] = memfd_of("fz_shm", buf, RTE_MIN(buf_len, shm_bytes), shm_bytes);
	own[5] = reopen_ro(own[1]);
	for (k = 0; k < s.nfds; k++)
		s.fds[k] = own[s.fds[k]];

	/* the welcome */
	w.region_size = region_bytes;
	w.shm_size = shm_bytes;
	if (flags & 4)
		w.region_size = in_uint(&in, 8);
	if (flags & 8)
		w.shm_size = in_uint(&in, 8);
	if (flags & 16)
		w.magic = (uint32_t)in_uint(&in, 4);
	if (flags & 32) {
		w.status = (int32_t)in_uint(&in, 4);
		for (i = 0; i < sizeof(w.message); i++)
			w.message[i] = (char)in_u8(&in);
	}
	memset(s.welcome, 0x5a, sizeof(s.welcome));
	memcpy(s.welcome, &w, sizeof(w));
	switch (flags >> 6) {
	case 2: s.welcome_len = in_u8(&in) % sizeof(w); break;
	case 3: s.welcome_len = sizeof(w) + 1 + in_u8(&in) % 32; break;
	default: s.welcome_len = sizeof(w); break;
	}

	FUZZ_ASSERT(pthread_create(&th, NULL, serve_one, &s) == 0, "pthread_create");
	errno = 0;
	memset(err, 0x5a, sizeof(err));
	cl = egw_rxtok_client_attach(sock_path, CONSUMER, err, sizeof(err));
	err_no = errno;
	FUZZ_ASSERT(pthread_join(th, NULL) == 0, "pthread_join");
	FUZZ_ASSERT(s.hello_ok, "the client's hello is not well-formed");
	FUZZ_ASSERT(memchr(err, '\0', sizeof(err)) != NULL, "message not NUL-terminated");

	if (cl == NULL) {
		FUZZ_ASSERT(err_no != 0, "attach failed without errno");
		FUZZ_ASSERT(err[0] != '\0' && strcmp(err, "no error") != 0,
			    "attach failed without a message");
	} else {
		const struct egw_rxtok_shm_hdr *ch = egw_rxtok_client_shm(cl);
		uint64_t pages;

		FUZZ_ASSERT(strcmp(err, "no error") == 0, "attach succeeded with message '%s'",
			    err);
		FUZZ_ASSERT(!s.no_welcome && s.welcome_len == sizeof(w) &&
				    w.magic == EGW_RXTOK_HELLO_MAGIC && w.status == 0 &&
				    s.nfds == 2,
			    "attach accepted a bad welcome (len %zu magic %#x status %d fds %u)",
			    s.welcome_len, w.magic, w.status, s.nfds);
		FUZZ_ASSERT(s.fds[1] == own[1], "attach accepted a shared memory that is not one");
		FUZZ_ASSERT(w.shm_size <= shm_bytes,
			    "shared memory of %llu bytes, welcome says %llu",
			    (unsigned long long)shm_bytes, (unsigned long long)w.shm_size);
		FUZZ_ASSERT(ref_layout_ok(buf, w.shm_size, w.region_size),
			    "attach accepted a layout the reference check refuses");
		FUZZ_ASSERT(ch != NULL && ch->magic == EGW_RXTOK_SHM_MAGIC &&
				    ch->region_size == w.region_size,
			    "client header");
		FUZZ_ASSERT(egw_rxtok_client_fd(cl) >= 0, "client fd");
		/* what the client took at attach: the memfd holds buf */
		detached = (h->flags & EGW_RXTOK_SHM_F_DETACHED) != 0;
		status = h->ret_status;
		rec_size = h->rec_ring_size;
		ret_size = h->ret_ring_size;
		rec_prod = ((const struct egw_rxtok_shring *)(buf + h->rec_ring_off))->prod_tail;
		rec_cons = ((const struct egw_rxtok_shring *)(buf + h->rec_ring_off))->cons_head;
		ret_prod = ((const struct egw_rxtok_shring *)(buf + h->ret_ring_off))->prod_tail;
		ret_cons = ((const struct egw_rxtok_shring *)(buf + h->ret_ring_off))->cons_head;
		pages = w.region_size / EGW_RXTOK_PAGE_SIZE;
		FUZZ_ASSERT(egw_rxtok_client_page(cl, (uint32_t)(pages - 1)) != NULL, "last page");
		if (pages <= UINT32_MAX)
			FUZZ_ASSERT(egw_rxtok_client_page(cl, (uint32_t)pages) == NULL,
				    "page past the region");
	}

	/* receive and give back once, as the input says */
	n = in_u8(&in) % 100;
	recs = malloc(sizeof(*recs) * (n != 0 ? n : 1));
	FUZZ_ASSERT(recs != NULL, "malloc");
	if (cl != NULL) {
		uint32_t avail = rec_prod - rec_cons;
		bool insane = avail > rec_size;

		rc = egw_rxtok_client_recv(cl, n != 0 ? recs : NULL, n);
		/* a header saying "detached": nothing is handed out */
		if (detached)
			FUZZ_ASSERT(rc == -ENOTCONN, "recv with the detached flag: %d", rc);
		FUZZ_ASSERT(rc == -EPIPE || rc == -ENOTCONN || rc == -EPROTO ||
				    (rc >= 0 && (unsigned int)rc <= n),
			    "recv of %u: %d", n, rc);
		FUZZ_ASSERT(rc < 0 || (unsigned int)rc <= rec_size,
			    "recv of %u read %d records from a ring of %u slots", n, rc, rec_size);
		if (rc != -EPIPE && n != 0 && !detached) {
			if (insane)
				FUZZ_ASSERT(rc == -EPROTO, "recv with prod %u cons %u size %u: %d",
					    rec_prod, rec_cons, rec_size, rc);
			else
				FUZZ_ASSERT(rc == (int)RTE_MIN(n, avail) ||
						    (rc == -ENOTCONN && avail == 0),
					    "recv of %u with %u there: %d", n, avail, rc);
		}
	}
	free(recs);
	n = in_u8(&in) % (EGW_RXTOK_MAX_RANGES + 3);
	ranges = malloc(sizeof(*ranges) * (n != 0 ? n : 1));
	FUZZ_ASSERT(ranges != NULL, "malloc");
	inval = n > EGW_RXTOK_MAX_RANGES;
	for (i = 0; i < n; i++) {
		ranges[i].token_start = (uint32_t)in_uint(&in, 2);
		ranges[i].token_count = (uint32_t)in_uint(&in, 2);
		if (ranges[i].token_count == 0 ||
		    ranges[i].token_count > EGW_RXTOK_MAX_RANGE_TOKENS)
			inval = true;
	}
	if (cl != NULL) {
		uint32_t used = ret_prod - ret_cons;
		uint8_t *after;

		rc = egw_rxtok_client_return(cl, n != 0 ? ranges : NULL, n);
		if (inval)
			FUZZ_ASSERT(rc == -EINVAL, "return of bad ranges: %d", rc);
		else if (detached)
			FUZZ_ASSERT(rc == -ENOTCONN, "return with the detached flag: %d", rc);
		else if (status != 0)
			/* a client an earlier call found closed says so first */
			FUZZ_ASSERT(
				rc == -ENOTCONN ||
					rc == (status >= -4095 && status < 0 ? status : -EPROTO),
				"return with verdict %d waiting: %d", status, rc);
		else
			FUZZ_ASSERT(rc == -ENOTCONN || rc == -EPROTO ||
					    (rc >= 0 && (unsigned int)rc <= n),
				    "return of %u: %d", n, rc);
		FUZZ_ASSERT(rc < 0 || (unsigned int)rc <= ret_size,
			    "return of %u wrote %d entries to a ring of %u slots", n, rc, ret_size);
		if (!inval && n != 0 && rc != -ENOTCONN && !detached && status == 0) {
			if (used > ret_size)
				FUZZ_ASSERT(rc == -EPROTO,
					    "return with prod %u cons %u size %u: %d", ret_prod,
					    ret_cons, ret_size, rc);
			else
				FUZZ_ASSERT(rc == (int)RTE_MIN(n, ret_size - used),
					    "return of %u with %u free: %d", n, ret_size - used,
					    rc);
		}
		egw_rxtok_client_detach(cl);
		/* what the client wrote in the shared memory */
		after = malloc(w.shm_size);
		FUZZ_ASSERT(after != NULL, "malloc");
		FUZZ_ASSERT(pread(own[1], after, w.shm_size, 0) == (ssize_t)w.shm_size, "pread");
		for (i = 0; i < w.shm_size; i++)
			FUZZ_ASSERT(after[i] == buf[i] || client_may_write(h, i),
				    "the client wrote shared memory byte %u", i);
		free(after);
	}
	free(ranges);

	if (s.conn >= 0)
		close(s.conn);
	close(pipefd[1]);
	for (k = 0; k < RTE_DIM(own); k++)
		close(own[k]);
	free(buf);
	fds_after = count_fds();
	FUZZ_ASSERT(fds_after == fds_before, "descriptors: %d before, %d after", fds_before,
		    fds_after);
	return 0;
}
