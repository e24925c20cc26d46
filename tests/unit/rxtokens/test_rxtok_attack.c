/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A consumer is another process: this test is edgegw's side (lib/rxtokens,
 * served in this process) against consumer processes forked from it that
 * attack what they are given, each through the real socket and memfds:
 *
 *  - memory: ftruncate/fallocate of both descriptors, a reopen of the region
 *    through /proc/self/fd read-write (as root and as user nobody),
 *    mmap(PROT_WRITE, MAP_SHARED), mprotect(PROT_WRITE), write(2), a hole
 *    punch; then edgegw touches both (a resize would SIGBUS it here) and the
 *    payloads another consumer holds must be unchanged;
 *  - detach: records waiting in the shared ring of a consumer that
 *    "rxtokens consumer del" removed are never handed out by the client;
 *  - verdicts: a rejected return reaches the client call as its -errno;
 *    per-consumer counters say so;
 *  - admission: a quota that does not leave the bound queues their reserve
 *    (65536 on a 2048-page region) is refused;
 *  - pages returned on the control lcore go to the pool's common store (an
 *    in-process consumer's on the receiving worker to that worker's cache),
 *    and a hoarder at its quota does not starve the queue;
 *  - peer credentials: a process of another uid/gid cannot attach;
 *    silent connections do not delay a legitimate attach;
 *  - read isolation: a consumer of another owner cannot join a region; a
 *    snooping consumer (user nobody) maps all it can and finds none of the
 *    other owner's payloads nor forwarded traffic, before and after it is
 *    detached, and no new traffic once its region is unbound.
 *
 * A registered thread is the worker (every delivery); the main thread is
 * the control lcore. Children use only the client library and system calls
 * (no DPDK after fork). Needs free 2 MiB hugepages and root (exits 77 without).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "egw_eth.h"
#include "egw_rxtok.h"
#include "egw_rxtok_client.h"
#include "rxtok_test.h"
#include "../app/check.h"

#define REGION_SIZE (8u << 20) /* 2048 pages */
#define SMALL_SIZE (2u << 20)  /* 512 pages */
#define NOBODY 65534u
#define MARK_LEN 16

static struct rte_rcu_qsbr *qsbr;
static struct egw_rxtok_region *reg; /* root's region, bound to (0, 0) */
static struct rte_mempool *pool;
static struct rte_mempool *plain; /* an ordinary pool: an unbound queue's */
static char sock_path[108];
static char dir[64];

/* ---- the child's side: plain C, no DPDK ---- */

static int cfail;

#define CCHECK(cond, ...)                                         \
	do {                                                      \
		if (!(cond)) {                                    \
			cfail++;                                  \
			printf("FAIL child %d: ", (int)getpid()); \
			printf(__VA_ARGS__);                      \
			printf(" (errno %s)\n", strerror(errno)); \
		}                                                 \
	} while (0)

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
connect_raw(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	if (s < 0)
		return -1;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(s);
		return -1;
	}
	return s;
}

/* The protocol by hand, keeping the descriptors the client library would
 * close: what an attacker does. Returns the socket, or -1. */
static int
raw_attach(const char *name, int fds[2], struct egw_rxtok_welcome *w)
{
	struct egw_rxtok_hello h = {.magic = EGW_RXTOK_HELLO_MAGIC,
				    .version = EGW_RXTOK_ABI_VERSION};
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = w, .iov_len = sizeof(*w)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm;
	int s = connect_raw();

	fds[0] = fds[1] = -1;
	if (s < 0)
		return -1;
	snprintf(h.consumer, sizeof(h.consumer), "%s", name);
	if (send(s, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    recvmsg(s, &mh, 0) != (ssize_t)sizeof(*w)) {
		close(s);
		return -1;
	}
	cm = CMSG_FIRSTHDR(&mh);
	if (w->status == 0 && cm != NULL && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(2 * sizeof(int)))
		memcpy(fds, CMSG_DATA(cm), 2 * sizeof(int));
	return s;
}

/* Every way to a writable mapping of the region through fd (any mode):
 * none may work. A mapping that did work is scribbled on (as an attacker
 * would) so the parent sees it. */
static void
try_write_region(int fd, size_t size, const char *who)
{
	char proc[64];
	void *m;
	int rw;

	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CCHECK(m == MAP_FAILED, "%s: mmap(PROT_WRITE, MAP_SHARED) of the region descriptor", who);
	if (m != MAP_FAILED)
		memset(m, 'Z', size);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rw = open(proc, O_RDWR | O_CLOEXEC);
	if (rw < 0) {
		/* refused outright is fine too */
		printf("  child: %s: reopen %s O_RDWR refused (%s)\n", who, proc, strerror(errno));
		return;
	}
	printf("  child: %s: reopened %s O_RDWR: fd %d\n", who, proc, rw);
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
	CCHECK(m == MAP_FAILED, "%s: mmap(PROT_WRITE, MAP_SHARED) of the O_RDWR reopen", who);
	if (m != MAP_FAILED) {
		memset(m, 'Z', size);
		munmap(m, size);
	}
	m = mmap(NULL, size, PROT_READ, MAP_SHARED, rw, 0);
	CCHECK(m != MAP_FAILED, "%s: read-only mapping of the reopen", who);
	if (m != MAP_FAILED) {
		int rc = mprotect(m, size, PROT_READ | PROT_WRITE);

		CCHECK(rc != 0, "%s: mprotect(PROT_WRITE) of a read-only shared mapping", who);
		if (rc == 0)
			memset(m, 'Z', size);
		munmap(m, size);
	}
	CCHECK(pwrite(rw, "ZZZZ", 4, 0) < 0, "%s: pwrite(2) on the region", who);
	CCHECK(write(rw, "ZZZZ", 4) < 0, "%s: write(2) on the region", who);
	CCHECK(fallocate(rw, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 2u << 20) != 0,
	       "%s: fallocate(PUNCH_HOLE) of the region's first hugepage", who);
	CCHECK(fallocate(rw, 0, 0, (off_t)size * 2) != 0, "%s: fallocate growing the region", who);
	CCHECK(ftruncate(rw, (off_t)size / 2) != 0, "%s: ftruncate shrinking the region", who);
	CCHECK(ftruncate(rw, (off_t)size * 2) != 0, "%s: ftruncate growing the region", who);
	CCHECK(fcntl(rw, F_ADD_SEALS, F_SEAL_WRITE) != 0, "%s: adding a seal", who);
	close(rw);
}

static void
become_nobody(void)
{
	if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0) {
		printf("FAIL child: cannot become nobody: %s\n", strerror(errno));
		_exit(100);
	}
	/* as a process started by nobody would be: its own /proc is its own */
	prctl(PR_SET_DUMPABLE, 1);
}

static int
child_memory(void)
{
	struct egw_rxtok_welcome w;
	int fds[2], s = raw_attach("atk_mem", fds, &w);
	pid_t gc;
	int st;

	CCHECK(s >= 0 && w.status == 0 && fds[0] >= 0 && fds[1] >= 0, "attach atk_mem: status %d",
	       s >= 0 ? w.status : 0);
	if (fds[0] < 0 || fds[1] < 0)
		return cfail;
	printf("  child: attached atk_mem: region %" PRIu64 " B, shm %" PRIu64 " B\n",
	       w.region_size, w.shm_size);
	try_write_region(fds[0], w.region_size, "root");
	/* as user nobody, with the descriptors it was given */
	gc = fork();
	if (gc == 0) {
		become_nobody();
		try_write_region(fds[0], w.region_size, "nobody");
		CCHECK(ftruncate(fds[1], 0) != 0, "nobody: ftruncate of the shared memory");
		_exit(cfail);
	}
	CCHECK(waitpid(gc, &st, 0) == gc && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "nobody's attempts (status %#x)", st);
	/* the shared memory is the consumer's to write, never to resize */
	CCHECK(ftruncate(fds[1], 0) != 0, "ftruncate of the shared memory to 0");
	CCHECK(ftruncate(fds[1], (off_t)w.shm_size * 4) != 0,
	       "ftruncate growing the shared memory");
	CCHECK(fallocate(fds[1], 0, 0, (off_t)w.shm_size * 4) != 0,
	       "fallocate growing the shared memory");
	CCHECK(ftruncate(fds[0], 0) != 0, "ftruncate of the read-only region descriptor");
	/* stay attached while the parent serves us */
	printf("  child: attacks done, staying attached\n");
	usleep(400 * 1000);
	close(s);
	return cfail;
}

/* ---- the parent's side ---- */

/* Fork a child running fn; serve (and call tick) until it ends. Returns
 * its exit status, or -1 on timeout (killed). */
static int
run_child(int (*fn)(void), void (*tick)(void), double timeout)
{
	double t0 = now_s();
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		cfail = 0;
		_exit(fn());
	}
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (now_s() - t0 > timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		egw_rxtok_service();
		if (tick != NULL)
			tick();
		usleep(200);
	}
	/* what a closed socket leaves to the service */
	egw_rxtok_service();
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A UDP/IPv4 frame to dport whose payload starts with a 16-byte marker,
 * from mp. */
static struct rte_mbuf *
marked(struct rte_mempool *mp, uint16_t dport, const char *mark, uint16_t plen)
{
	static uint8_t buf[T_FRAME_MAX];
	struct t_frame f = {.kind = T_UDP4, .dst4_last = 9, .dport = dport, .plen = plen};
	struct t_layout lo = t_build(&f, buf);
	struct rte_mbuf *m;
	uint16_t i;

	for (i = 0; i + MARK_LEN <= plen; i += MARK_LEN)
		memcpy(buf + lo.l4_off + i, mark, MARK_LEN);
	m = t_chain(mp, buf, lo.len, 0, 0);
	if (m == NULL)
		abort();
	return m;
}

/*
 * The worker: a thread registered with EAL (an lcore id, a mempool cache of
 * its own) that does every delivery, as edgegw's workers do, while this
 * thread is the control lcore (service, receive and return, consumer
 * creation and removal). Jobs run one at a time, synchronously.
 */
static struct {
	void (*fn)(void *arg);
	void *arg;
	int state; /* 0 idle, 1 posted, 2 quit */
	unsigned int lcore;
	pthread_t thread;
} wk;

static void *
worker_main(void *arg)
{
	RTE_SET_USED(arg);
	if (rte_thread_register() != 0)
		abort();
	wk.lcore = rte_lcore_id();
	for (;;) {
		/* acquire pairs with the release in on_worker(): the job */
		int st = __atomic_load_n(&wk.state, __ATOMIC_ACQUIRE);

		if (st == 1) {
			wk.fn(wk.arg);
			/* release pairs with on_worker()'s acquire: the results */
			__atomic_store_n(&wk.state, 0, __ATOMIC_RELEASE);
		} else if (st == 2) {
			break;
		} else {
			usleep(20);
		}
	}
	rte_thread_unregister();
	return NULL;
}

static void
on_worker(void (*fn)(void *arg), void *arg)
{
	wk.fn = fn;
	wk.arg = arg;
	__atomic_store_n(&wk.state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&wk.state, __ATOMIC_ACQUIRE) == 1)
		rte_pause();
}

struct deliver_job {
	uint16_t port, n;
	struct rte_mbuf **pkts;
	struct egw_rxtok_burst_res *res;
};

static void
deliver_job(void *arg)
{
	struct deliver_job *j = arg;
	uint16_t pass = t_deliver(qsbr, j->port, 0, j->pkts, j->n, j->res), i;

	for (i = 0; i < pass; i++)
		rte_pktmbuf_free(j->pkts[i]);
}

/* Deliver on (port, 0) on the worker; what passes is freed (forwarded). */
static void
deliver(uint16_t port, struct rte_mbuf **pkts, uint16_t n, struct egw_rxtok_burst_res *res)
{
	struct deliver_job j = {.port = port, .n = n, .pkts = pkts, .res = res};

	on_worker(deliver_job, &j);
}

static unsigned int
cache_len(unsigned int lcore)
{
	struct rte_mempool_cache *c =
		lcore < RTE_MAX_LCORE ? rte_mempool_default_cache(pool, lcore) : NULL;

	return c != NULL ? c->len : 0;
}

static struct egw_rxtok_consumer *
mk(const char *name, struct egw_rxtok_region *r, uint16_t dport, uint32_t quota, int external,
   uint32_t uid, uint32_t gid)
{
	struct egw_rxtok_consumer_conf conf = {
		.name = name,
		.region = r,
		.quota = quota,
		.match = EGW_RXTOK_MATCH_UDP_DPORT,
		.udp_dport = dport,
		.external = external,
		.uid = uid,
		.gid = gid,
	};
	struct egw_rxtok_consumer *c = egw_rxtok_consumer_create(&conf);

	CHECK(c != NULL, "create consumer %s: %s", name, rte_strerror(rte_errno));
	return c;
}

/* ---- 1, 2: sealed memory ---- */

static struct egw_rxtok_consumer *mem_c;
static int mem_ticks;

/* while the attacker runs: keep delivering to it (records written into its
 * shared memory, pages of the region read back) */
static void
mem_tick(void)
{
	struct egw_rxtok_burst_res res = {0};
	struct rte_mbuf *m;

	if (++mem_ticks % 50 != 0 || !egw_rxtok_consumer_attached(mem_c))
		return;
	m = marked(pool, 7101, "ATTACKER-OWN-PAY", 64);
	deliver(0, &m, 1, &res);
}

static void
test_memory(void)
{
	struct egw_rxtok_consumer *keep = mk("atk_keep", reg, 7100, 16, 0, 0, 0);
	struct egw_rxtok_burst_res res = {0};
	struct egw_rxtok_rec recs[8];
	struct egw_rxtok_range rg[8];
	struct rte_mbuf *m[5];
	int n, i, st, same = 0;

	printf("rxtokens attack: memory (seals)\n");
	mem_c = mk("atk_mem", reg, 7101, 64, 1, 0, 0);
	if (keep == NULL || mem_c == NULL)
		return;
	for (i = 0; i < 5; i++)
		m[i] = marked(pool, 7100, "KEEP-THIS-INTACT", 200);
	deliver(0, m, 5, &res);
	n = egw_rxtok_recv(keep, recs, RTE_DIM(recs));
	CHECK(n == 5, "atk_keep holds 5 payloads (%d)", n);
	st = run_child(child_memory, mem_tick, 30);
	CHECK(st == 0, "every attack on the memory failed (child status %d)", st);
	/* still here (no SIGBUS) and touching both: serve, read pages */
	for (i = 0; i < 20; i++)
		egw_rxtok_service();
	for (i = 0; i < n && n > 0; i++) {
		const uint8_t *p = egw_rxtok_region_page(reg, recs[i].token) + recs[i].offset;

		same += memcmp(p, "KEEP-THIS-INTACT", MARK_LEN) == 0 &&
			memcmp(p + 176, "KEEP-THIS-INTACT", MARK_LEN) == 0;
		rg[i].token_start = recs[i].token;
		rg[i].token_count = 1;
	}
	CHECK(same == 5, "the 5 payloads atk_keep holds are unchanged (%d)", same);
	CHECK(n <= 0 || egw_rxtok_return(keep, egw_rxtok_region_id(reg), rg, (unsigned int)n) == n,
	      "atk_keep gives them back");
	CHECK(t_jc("atk_mem", "attaches") == 1, "atk_mem attached once");
	egw_rxtok_consumer_destroy(keep);
	egw_rxtok_consumer_destroy(mem_c);
}

/* ---- 5: no record after the detach ---- */

static int p2c[2], c2p[2];

static int
child_detach(void)
{
	char err[256], b;
	struct egw_rxtok_client *cl =
		egw_rxtok_client_attach(sock_path, "atk_det", err, sizeof(err));
	struct egw_rxtok_rec recs[64];
	int n, got = 0;

	CCHECK(cl != NULL, "attach atk_det: %s", err);
	if (cl == NULL)
		return cfail;
	CCHECK(write(c2p[1], "a", 1) == 1, "tell the parent");
	CCHECK(read(p2c[0], &b, 1) == 1, "wait for the parent");
	/* edgegw has delivered 15 records to the ring, then deleted us */
	while ((n = egw_rxtok_client_recv(cl, recs, RTE_DIM(recs))) > 0)
		got += n;
	CCHECK(got == 0, "records handed out after the detach: %d", got);
	CCHECK(n == -ENOTCONN, "receive after the detach: %d, expected -ENOTCONN", n);
	egw_rxtok_client_detach(cl);
	return cfail;
}

static struct egw_rxtok_consumer *det_c;
static int det_state;

static void
det_tick(void)
{
	struct egw_rxtok_burst_res res = {0};
	struct rte_mbuf *m[15];
	struct pollfd p = {.fd = c2p[0], .events = POLLIN};
	char b;
	int i;

	if (det_state != 0 || poll(&p, 1, 0) != 1 || read(c2p[0], &b, 1) != 1)
		return;
	for (i = 0; i < 15; i++)
		m[i] = marked(pool, 7200, "DETACH-RECORDS..", 100);
	deliver(0, m, 15, &res);
	for (i = 0; i < 10; i++)
		egw_rxtok_service(); /* records to the shared ring */
	CHECK(res.delivered == 15 && t_jc("atk_det", "held") == 15,
	      "15 records in atk_det's shared ring (delivered %u, held %lld)", res.delivered,
	      t_jc("atk_det", "held"));
	/* rxtokens consumer del */
	CHECK(egw_rxtok_consumer_destroy(det_c) == 0, "delete atk_det");
	det_state = 1;
	CHECK(write(p2c[1], "g", 1) == 1, "tell the child");
}

static void
test_detach(void)
{
	int st;

	printf("rxtokens attack: records of a deleted consumer\n");
	if (pipe(p2c) != 0 || pipe(c2p) != 0)
		abort();
	det_c = mk("atk_det", reg, 7200, 64, 1, 0, 0);
	if (det_c == NULL)
		return;
	st = run_child(child_detach, det_tick, 30);
	CHECK(st == 0 && det_state == 1, "the client handed out no record after the detach (%d)",
	      st);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "pool full again (%u/%u)",
	      rte_mempool_avail_count(pool), pool->size);
	close(p2c[0]);
	close(p2c[1]);
	close(c2p[0]);
	close(c2p[1]);
}

/* ---- 7: verdicts reach the client ---- */

static uint32_t reg_pages;

static int
child_errno(void)
{
	char err[256];
	struct egw_rxtok_client *cl =
		egw_rxtok_client_attach(sock_path, "atk_err", err, sizeof(err));
	struct egw_rxtok_range bad = {reg_pages - 1, 1}, past = {reg_pages + 5, 1};
	const struct egw_rxtok_shm_hdr *h;
	int rc;

	CCHECK(cl != NULL, "attach atk_err: %s", err);
	if (cl == NULL)
		return cfail;
	h = egw_rxtok_client_shm(cl);
	CCHECK(egw_rxtok_client_return(cl, &bad, 1) == 1, "enqueue a token never held");
	rc = egw_rxtok_client_sync(cl, 5000);
	CCHECK(rc == -ENOENT, "sync after returning a token not held: %d, expected -ENOENT", rc);
	rc = egw_rxtok_client_sync(cl, 5000);
	CCHECK(rc == 0, "the verdict is reported once: %d", rc);
	CCHECK(egw_rxtok_client_return(cl, &past, 1) == 1, "enqueue a token past the region");
	while (__atomic_load_n(&h->ret_done, __ATOMIC_ACQUIRE) != 2)
		usleep(100);
	rc = egw_rxtok_client_return(cl, &bad, 1);
	CCHECK(rc == -ERANGE, "the next return reports the earlier -ERANGE: %d", rc);
	CCHECK(h->ret_failed == 2, "shared header counts 2 rejected entries (%" PRIu64 ")",
	       h->ret_failed);
	egw_rxtok_client_detach(cl);
	return cfail;
}

static void
test_errno(void)
{
	struct egw_rxtok_consumer *c = mk("atk_err", reg, 7300, 16, 1, 0, 0);
	struct egw_rxtok_consumer *d = mk("atk_drop", reg, 7301, 16, 1, 0, 0);
	struct egw_rxtok_burst_res res = {0};
	struct rte_mbuf *m[3];
	int st, i;

	printf("rxtokens attack: a rejected return's -errno reaches the client\n");
	if (c == NULL || d == NULL)
		return;
	st = run_child(child_errno, NULL, 30);
	CHECK(st == 0, "client saw -ENOENT and -ERANGE (child status %d)", st);
	CHECK(t_jc("atk_err", "ret_failed") == 2 && t_jc("atk_err", "enoent") == 1 &&
		      t_jc("atk_err", "erange") == 1,
	      "atk_err: ret_failed %lld enoent %lld erange %lld (2 1 1)",
	      t_jc("atk_err", "ret_failed"), t_jc("atk_err", "enoent"), t_jc("atk_err", "erange"));
	/* per-consumer drops: nobody attached to atk_drop */
	for (i = 0; i < 3; i++)
		m[i] = marked(pool, 7301, "DROPPED-DETACHED", 100);
	deliver(0, m, 3, &res);
	CHECK(t_jc("atk_drop", "rxtok_detached") == 3 && t_jc("atk_err", "rxtok_detached") == 0,
	      "per-consumer drops: atk_drop rxtok_detached %lld (3), atk_err %lld (0)",
	      t_jc("atk_drop", "rxtok_detached"), t_jc("atk_err", "rxtok_detached"));
	egw_rxtok_consumer_destroy(c);
	egw_rxtok_consumer_destroy(d);
}

/* ---- 6: admission ---- */

static void
test_admission(void)
{
	struct egw_rxtok_region *r = egw_rxtok_region_create("atk_adm", REGION_SIZE, RTE_PGSIZE_2M);
	struct egw_rxtok_consumer_conf conf = {
		.name = "atk_big",
		.region = r,
		.match = EGW_RXTOK_MATCH_UDP_DPORT,
		.udp_dport = 7400,
	};
	struct egw_rxtok_consumer *c, *c2;
	uint64_t room, reserve;

	printf("rxtokens attack: admission control\n");
	CHECK(r != NULL && egw_rxtok_bind(r, 3, 0) == 0, "region atk_adm bound to (3, 0)");
	if (r == NULL)
		return;
	reserve = egw_rxtok_region_reserve(r);
	room = egw_rxtok_region_quota_room(r);
	printf("  admission: 2048 pages, reserve %" PRIu64 ", room %" PRIu64 "\n", reserve, room);
	CHECK(reserve == EGW_RXTOK_RXQ_DESC_DEFAULT +
				      rte_lcore_count() *
					      (256 * 3 / 2 + EGW_RXTOK_LCORE_BURST_PAGES) &&
		      room == 2048 - reserve,
	      "reserve: descriptors + per lcore the cache flush threshold and a burst");
	conf.quota = 65536;
	c = egw_rxtok_consumer_create(&conf);
	CHECK(c == NULL && rte_errno == EDQUOT, "quota 65536 on 2048 pages refused: %s",
	      c == NULL ? rte_strerror(rte_errno) : "accepted");
	if (c != NULL)
		egw_rxtok_consumer_destroy(c);
	conf.quota = (uint32_t)room + 1;
	c = egw_rxtok_consumer_create(&conf);
	CHECK(c == NULL && rte_errno == EDQUOT, "quota room + 1 refused");
	if (c != NULL)
		egw_rxtok_consumer_destroy(c);
	conf.quota = (uint32_t)room;
	c = egw_rxtok_consumer_create(&conf);
	CHECK(c != NULL, "quota = room accepted");
	conf.name = "atk_big2";
	conf.udp_dport = 7401;
	conf.quota = 1;
	c2 = egw_rxtok_consumer_create(&conf);
	CHECK(c2 == NULL && rte_errno == EDQUOT, "a second consumer with quota 1 refused");
	CHECK(egw_rxtok_bind(r, 3, 1) == -ENOSPC, "binding one more queue refused (-ENOSPC)");
	if (c != NULL)
		egw_rxtok_consumer_destroy(c);
	CHECK(egw_rxtok_region_quota_room(r) == room, "room back after the delete");
	CHECK(egw_rxtok_bind(r, 3, 1) == 0, "now the queue fits");
	CHECK(egw_rxtok_unbind(r, 3, 1) == 0 && egw_rxtok_unbind(r, 3, 0) == 0 &&
		      egw_rxtok_unbind(r, 3, 0) == -ENOENT,
	      "unbind both queues, a third time -ENOENT");
	CHECK(egw_rxtok_region_destroy(r) == 0, "region atk_adm deleted");
}

/* ---- 4: returned pages reach the common store ---- */

struct return_job {
	struct egw_rxtok_consumer *c;
	struct egw_rxtok_range *rg;
	int n, rc;
};

static void
return_job(void *arg)
{
	struct return_job *j = arg;

	j->rc = egw_rxtok_return(j->c, egw_rxtok_region_id(reg), j->rg, (unsigned int)j->n);
}

static void
test_common_store(void)
{
	struct egw_rxtok_consumer *c = mk("atk_ret", reg, 7500, 64, 0, 0, 0);
	unsigned int me = rte_lcore_id(), ring0, ring1, me0, me1, wk0, wk1, round;
	struct egw_rxtok_rec recs[32];
	struct egw_rxtok_range rg[32];
	struct rte_mbuf *m[32];
	int i, n;

	printf("rxtokens attack: returned pages go where the region's receivers allocate\n");
	if (c == NULL)
		return;
	for (round = 0; round < 2; round++) {
		struct egw_rxtok_burst_res res = {0};
		struct return_job j = {.c = c, .rg = rg};

		for (i = 0; i < 32; i++)
			m[i] = marked(pool, 7500, "RETURN-TO-RING..", 100);
		deliver(0, m, 32, &res);
		n = egw_rxtok_recv(c, recs, 32);
		CHECK(n == 32, "32 records (%d)", n);
		for (i = 0; i < n; i++) {
			rg[i].token_start = recs[i].token;
			rg[i].token_count = 1;
		}
		j.n = n;
		/* one lcore here, the worker a registered thread: what is in
		 * neither cache is in the common store */
		me0 = cache_len(me);
		wk0 = cache_len(wk.lcore);
		ring0 = rte_mempool_avail_count(pool) - me0 - wk0;
		if (round == 0)
			j.rc = egw_rxtok_return(c, egw_rxtok_region_id(reg), rg, (unsigned int)n);
		else
			on_worker(return_job, &j); /* an in-process consumer on the worker */
		me1 = cache_len(me);
		wk1 = cache_len(wk.lcore);
		ring1 = rte_mempool_avail_count(pool) - me1 - wk1;
		CHECK(j.rc == n, "return them (%d)", j.rc);
		printf("  returned on the %s: common store %u -> %u, control cache %u -> %u, "
		       "worker cache %u -> %u\n",
		       round == 0 ? "control lcore" : "worker", ring0, ring1, me0, me1, wk0, wk1);
		if (round == 0)
			CHECK(ring1 == ring0 + 32 && me1 == me0,
			      "returned on the control lcore: the 32 pages are in the common "
			      "store, "
			      "none in its cache");
		else
			CHECK(wk1 == wk0 + 32 || (wk1 < wk0 && ring1 > ring0),
			      "returned on the worker that receives into the region: its cache");
	}
	egw_rxtok_consumer_destroy(c);
}

/* The worker receives one frame for each flow: mbufs from the pool as an
 * RX queue takes them (its lcore cache, then the common store). */
struct hoard_job {
	uint32_t nombuf;
};

static void
hoard_job(void *arg)
{
	static const uint16_t ports[2] = {7600, 7601};
	static uint8_t buf[T_FRAME_MAX];
	struct hoard_job *j = arg;
	struct egw_rxtok_burst_res res = {0};
	struct rte_mbuf *m[2];
	uint16_t k = 0, i, pass;

	for (i = 0; i < 2; i++) {
		struct t_frame f = {.kind = T_UDP4, .dst4_last = 9, .dport = ports[i], .plen = 100};
		struct t_layout lo = t_build(&f, buf);

		m[k] = t_chain(pool, buf, lo.len, 0, 0);
		if (m[k] == NULL)
			j->nombuf++;
		else
			k++;
	}
	pass = t_deliver(qsbr, 0, 0, m, k, &res);
	for (i = 0; i < pass; i++)
		rte_pktmbuf_free(m[i]);
}

static void
test_hoarder(void)
{
	struct egw_rxtok_consumer *o = mk("atk_other", reg, 7601, 32, 0, 0, 0), *h;
	uint32_t got = 0, nombuf = 0, held, i;
	struct egw_rxtok_rec recs[4];
	uint64_t room;

	printf("rxtokens attack: a hoarder at its quota cannot starve the queue\n");
	room = egw_rxtok_region_quota_room(reg);
	h = mk("atk_hog", reg, 7600, (uint32_t)room, 0, 0, 0);
	if (o == NULL || h == NULL)
		return;
	printf("  hoarder quota %" PRIu64 " (all the room) on %u pages\n", room, pool->size);
	for (i = 0; i < 2400; i++) {
		struct hoard_job hj = {0};
		int n, j;

		on_worker(hoard_job, &hj);
		nombuf += hj.nombuf;
		/* the hoarder reads and never gives back; the other returns (on
		 * this, the control lcore) */
		while (egw_rxtok_recv(h, recs, RTE_DIM(recs)) > 0)
			;
		n = egw_rxtok_recv(o, recs, RTE_DIM(recs));
		for (j = 0; j < n; j++) {
			struct egw_rxtok_range r = {recs[j].token, 1};

			got++;
			egw_rxtok_return(o, egw_rxtok_region_id(reg), &r, 1);
		}
	}
	held = (uint32_t)t_jc("atk_hog", "held");
	printf("  hoarder holds %u, other got %u of 2400, allocation failures %u\n", held, got,
	       nombuf);
	CHECK(held == room, "the hoarder holds its whole quota");
	CHECK(got == 2400 && nombuf == 0, "the other consumer got every payload (%u, %u failures)",
	      got, nombuf);
	egw_rxtok_consumer_destroy(h);
	egw_rxtok_consumer_destroy(o);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "pool full again");
}

/* ---- 8: peer credentials, silent peers ---- */

static int
child_attach_as_nobody(const char *name, int expect)
{
	char err[256];
	struct egw_rxtok_client *cl;

	become_nobody();
	cl = egw_rxtok_client_attach(sock_path, name, err, sizeof(err));
	if (expect == 0)
		CCHECK(cl != NULL, "nobody attaches %s: %s", name, err);
	else
		CCHECK(cl == NULL && errno == expect, "nobody attaching %s refused with %s: %s",
		       name, strerror(expect), cl == NULL ? err : "attached");
	printf("  child: nobody -> %s: %s\n", name, cl != NULL ? "attached" : err);
	egw_rxtok_client_detach(cl);
	return cfail;
}

static int
child_nobody_root_consumer(void)
{
	return child_attach_as_nobody("atk_cred", EACCES);
}

/*
 * Fault injection (the test links with -Wl,--wrap=send): the client's
 * hello is sent late, so a server that refuses the uid at accept has
 * written its refusal and closed first, as on a loaded machine. The client
 * must report the refusal (EACCES), not the EPIPE of its late hello.
 */
static volatile unsigned int send_delay_ms;
ssize_t __real_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags);

ssize_t
__wrap_send(int fd, const void *buf, size_t len, int flags)
{
	if (send_delay_ms != 0)
		usleep(send_delay_ms * 1000);
	return __real_send(fd, buf, len, flags);
}

static int
child_nobody_late_hello(void)
{
	send_delay_ms = 300;
	return child_attach_as_nobody("atk_cred", EACCES);
}

static int
child_nobody_own(void)
{
	return child_attach_as_nobody("atk_nob", 0);
}

static int
child_nobody_gid(void)
{
	return child_attach_as_nobody("atk_gid", EACCES);
}

static int
child_silent(void)
{
	char err[256];
	int s[100], i, k;

	for (k = 0; k < 2; k++) {
		int n = k == 0 ? 16 : 100;
		struct egw_rxtok_client *cl;
		double t0, dt;

		for (i = 0; i < n; i++)
			s[i] = connect_raw();
		t0 = now_s();
		cl = egw_rxtok_client_attach(sock_path, "atk_fast", err, sizeof(err));
		dt = now_s() - t0;
		printf("  child: %d silent connections, then attach in %.1f ms\n", n, dt * 1e3);
		CCHECK(cl != NULL, "attach atk_fast past %d silent connections: %s", n, err);
		CCHECK(dt < 0.3, "attach past %d silent connections took %.3f s", n, dt);
		egw_rxtok_client_detach(cl);
		for (i = 0; i < n; i++)
			if (s[i] >= 0)
				close(s[i]);
		usleep(50 * 1000);
	}
	return cfail;
}

static struct egw_rxtok_region *rn; /* nobody's region, bound to (1, 0) */

static void
test_creds(void)
{
	struct egw_rxtok_region *rg = egw_rxtok_region_create("atk_rg", SMALL_SIZE, RTE_PGSIZE_2M);
	struct egw_rxtok_consumer *cr = mk("atk_cred", reg, 7700, 16, 1, 0, 0);
	struct egw_rxtok_consumer *cf = mk("atk_fast", reg, 7701, 16, 1, 0, 0);
	struct egw_rxtok_consumer *cn, *cg;
	int st;

	printf("rxtokens attack: peer credentials and silent peers\n");
	st = run_child(child_nobody_root_consumer, NULL, 30);
	CHECK(st == 0, "nobody cannot attach root's consumer, no consumer of its own (%d)", st);
	st = run_child(child_nobody_late_hello, NULL, 30);
	CHECK(st == 0,
	      "nobody's hello sent after the server refused it: the refusal is reported "
	      "(%d)",
	      st);
	cn = mk("atk_nob", rn, 7800, 16, 1, NOBODY, NOBODY);
	st = run_child(child_nobody_own, NULL, 30);
	CHECK(st == 0, "nobody attaches its own consumer (%d)", st);
	st = run_child(child_nobody_root_consumer, NULL, 30);
	CHECK(st == 0, "nobody, now with a consumer of its own, still cannot attach root's (%d)",
	      st);
	CHECK(t_jc("atk_cred", "cred_refused") == 1, "atk_cred: cred_refused %lld (1)",
	      t_jc("atk_cred", "cred_refused"));
	cg = mk("atk_gid", rg, 7801, 16, 1, NOBODY, 12345);
	st = run_child(child_nobody_gid, NULL, 30);
	CHECK(st == 0, "nobody of gid 65534 cannot attach a consumer for gid 12345 (%d)", st);
	st = run_child(child_silent, NULL, 60);
	CHECK(st == 0, "silent connections do not delay an attach (%d)", st);
	CHECK(t_jtop("cred_refused") >= 3 && t_jtop("evicted") >= 1,
	      "connections: cred_refused %lld (>= 3), evicted %lld (>= 1)", t_jtop("cred_refused"),
	      t_jtop("evicted"));
	egw_rxtok_consumer_destroy(cr);
	egw_rxtok_consumer_destroy(cf);
	egw_rxtok_consumer_destroy(cg);
	egw_rxtok_consumer_destroy(cn);
	egw_rxtok_region_destroy(rg);
}

/* ---- 3: read isolation ---- */

/* What the snooper looks for: another owner's payloads, forwarded traffic,
 * its own flow (attached, after its detach, after its region's unbind). */
enum { M_ALICE, M_FWD, M_OWN, M_NEW, M_LATE, M_N };
static const char *const marks[M_N] = {"ALICE-SECRET-PAY", "FORWARDED-SECRET", "MALLORY-OWN-DATA",
				       "MALLORY-NEW-DATA", "MALLORY-LATE-DAT"};

/* Count the markers in len readable bytes. */
static void
snoop(const uint8_t *p, size_t len, unsigned int hits[M_N])
{
	size_t i;
	int k;

	for (i = 0; i + MARK_LEN <= len; i++) {
		if (p[i] != 'A' && p[i] != 'F' && p[i] != 'M')
			continue;
		for (k = 0; k < M_N; k++)
			if (memcmp(p + i, marks[k], MARK_LEN) == 0)
				hits[k]++;
	}
}

static pid_t parent_pid;

/* Everything the process can open of the parent's: its memfds through
 * /proc, its memory. */
static void
snoop_parent(unsigned int hits[M_N])
{
	char path[64];
	int fd, i, opened = 0;

	for (i = 0; i < 1024; i++) {
		struct stat st;
		void *m;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)parent_pid, i);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		opened++;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
			m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
			if (m != MAP_FAILED) {
				snoop(m, (size_t)st.st_size, hits);
				munmap(m, (size_t)st.st_size);
			}
		}
		close(fd);
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)parent_pid);
	fd = open(path, O_RDONLY);
	CCHECK(fd < 0 && opened == 0, "nobody opened %d of edgegw's descriptors, mem %s", opened,
	       fd < 0 ? "refused" : "opened");
	if (fd >= 0)
		close(fd);
}

static int
child_snoop(void)
{
	char err[256], b;
	struct egw_rxtok_client *cl;
	const uint8_t *base;
	size_t size;
	unsigned int att[M_N] = {0}, det[M_N] = {0}, unb[M_N] = {0};

	become_nobody();
	cl = egw_rxtok_client_attach(sock_path, "atk_nob", err, sizeof(err));
	CCHECK(cl != NULL, "snooper attaches atk_nob: %s", err);
	if (cl == NULL)
		return cfail;
	base = egw_rxtok_client_page(cl, 0);
	size = egw_rxtok_client_shm(cl)->region_size;
	CCHECK(write(c2p[1], "a", 1) == 1, "tell the parent");
	/* attached, while the parent sends everyone's traffic */
	while (read(p2c[0], &b, 1) == 1 && b == 's') {
		snoop(base, size, att);
		snoop_parent(att);
		CCHECK(write(c2p[1], "s", 1) == 1, "ack");
	}
	/* b == 'd': detached (consumer del), the mapping kept */
	while (read(p2c[0], &b, 1) == 1 && b == 's') {
		snoop(base, size, det);
		snoop_parent(det);
		CCHECK(write(c2p[1], "s", 1) == 1, "ack");
	}
	/* b == 'u': its region's queue unbound */
	while (read(p2c[0], &b, 1) == 1 && b == 's') {
		snoop(base, size, unb);
		CCHECK(write(c2p[1], "s", 1) == 1, "ack");
	}
	printf("  child: snooper (nobody) found, as alice / forwarded / own / own after detach / "
	       "own after unbind:\n"
	       "    attached  %u %u %u %u %u\n    detached  %u %u %u %u %u\n"
	       "    unbound   %u %u %u %u %u\n",
	       att[0], att[1], att[2], att[3], att[4], det[0], det[1], det[2], det[3], det[4],
	       unb[0], unb[1], unb[2], unb[3], unb[4]);
	CCHECK(att[M_ALICE] + det[M_ALICE] + unb[M_ALICE] == 0, "another owner's payloads seen");
	CCHECK(att[M_FWD] + det[M_FWD] + unb[M_FWD] == 0, "forwarded traffic seen");
	CCHECK(att[M_OWN] > 0, "the snooper sees its own payloads (the scan works)");
	CCHECK(unb[M_LATE] == 0, "after the unbind: new traffic of its flow seen");
	egw_rxtok_client_detach(cl);
	return cfail;
}

static int snoop_state;
static struct egw_rxtok_consumer *alice, *mallory;

/* One round: alice's flow and forwarded frames (no consumer's flow) on
 * root's bound queue (0, 0), forwarded frames on an unbound queue (2, 0),
 * and the snooper's own flow on (1, 0), as mark: bound to its region
 * until the unbind, then an ordinary queue. */
static void
traffic(int own, struct rte_mempool *own_pool)
{
	struct egw_rxtok_burst_res res = {0};
	struct egw_rxtok_rec recs[16];
	struct rte_mbuf *m[8];
	int n, i;

	for (i = 0; i < 4; i++)
		m[i] = marked(pool, 7900, marks[M_ALICE], 256);
	for (; i < 8; i++)
		m[i] = marked(pool, 7999, marks[M_FWD], 256);
	deliver(0, m, 8, &res);
	for (i = 0; i < 4; i++)
		m[i] = marked(plain, 7998, marks[M_FWD], 256);
	deliver(2, m, 4, &res);
	for (i = 0; i < 2; i++)
		m[i] = marked(own_pool, 7800, marks[own], 128);
	deliver(1, m, 2, &res);
	/* alice reads and gives back at once */
	while ((n = egw_rxtok_recv(alice, recs, RTE_DIM(recs))) > 0)
		for (i = 0; i < n; i++) {
			struct egw_rxtok_range r = {recs[i].token, 1};

			egw_rxtok_return(alice, egw_rxtok_region_id(reg), &r, 1);
		}
}

static void
snoop_tick(void)
{
	struct pollfd p = {.fd = c2p[0], .events = POLLIN};
	char b;

	if (poll(&p, 1, 0) != 1 || read(c2p[0], &b, 1) != 1)
		return;
	snoop_state++;
	if (snoop_state <= 10) {
		traffic(M_OWN, egw_rxtok_region_pool(rn));
		CHECK(write(p2c[1], "s", 1) == 1, "go");
	} else if (snoop_state == 11) {
		/* rxtokens consumer del: the process keeps its mapping */
		egw_rxtok_consumer_destroy(mallory);
		mallory = NULL;
		CHECK(write(p2c[1], "d", 1) == 1 && write(p2c[1], "s", 1) == 1, "detached");
	} else if (snoop_state <= 20) {
		traffic(M_NEW, egw_rxtok_region_pool(rn));
		CHECK(write(p2c[1], "s", 1) == 1, "go");
	} else if (snoop_state == 21) {
		/* the trust domain goes: rxtokens unbind */
		CHECK(egw_rxtok_unbind(rn, 1, 0) == 0, "unbind nobody's region");
		CHECK(write(p2c[1], "u", 1) == 1 && write(p2c[1], "s", 1) == 1, "unbound");
	} else if (snoop_state <= 30) {
		traffic(M_LATE, plain);
		CHECK(write(p2c[1], "s", 1) == 1, "go");
	} else if (snoop_state == 31) {
		CHECK(write(p2c[1], "e", 1) == 1, "end");
	}
}

static void
test_isolation(void)
{
	struct egw_rxtok_consumer_conf conf = {
		.name = "atk_intruder",
		.region = reg,
		.quota = 16,
		.match = EGW_RXTOK_MATCH_UDP_DPORT,
		.udp_dport = 7801,
		.external = 1,
		.uid = NOBODY,
		.gid = NOBODY,
	};
	struct egw_rxtok_consumer *x;
	uint32_t uid = 1, gid = 1;
	int st;

	printf("rxtokens attack: read isolation (a snooping consumer)\n");
	x = egw_rxtok_consumer_create(&conf);
	CHECK(x == NULL && rte_errno == EACCES,
	      "a consumer of uid %u on root's region refused (EACCES): %s", NOBODY,
	      x == NULL ? rte_strerror(rte_errno) : "accepted");
	if (x != NULL)
		egw_rxtok_consumer_destroy(x);
	CHECK(egw_rxtok_region_owner(reg, &uid, &gid) == 1 && uid == 0 && gid == 0,
	      "root's region belongs to uid 0 gid 0 (%u %u)", uid, gid);
	alice = mk("alice", reg, 7900, 64, 0, 0, 0);
	mallory = mk("atk_nob", rn, 7800, 64, 1, NOBODY, NOBODY);
	if (pipe(p2c) != 0 || pipe(c2p) != 0)
		abort();
	parent_pid = getpid();
	snoop_state = 0;
	st = run_child(child_snoop, snoop_tick, 60);
	CHECK(st == 0 && snoop_state >= 31, "the snooper found nothing of others (status %d, %d)",
	      st, snoop_state);
	if (mallory != NULL)
		egw_rxtok_consumer_destroy(mallory);
	egw_rxtok_consumer_destroy(alice);
	close(p2c[0]);
	close(p2c[1]);
	close(c2p[0]);
	close(c2p[1]);
}

/* EGW_RXTOK_ATTACK_ONLY=memory,detach,...: run only those (default all). */
static bool
want(const char *name)
{
	const char *only = getenv("EGW_RXTOK_ATTACK_ONLY");
	const char *p;
	size_t n = strlen(name);

	if (only == NULL || only[0] == '\0')
		return true;
	for (p = strstr(only, name); p != NULL; p = strstr(p + 1, name))
		if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

int
main(int argc, char **argv)
{
	long hp = t_free_hugepages();
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		printf("SKIP: needs root (consumers of other uids, setuid)\n");
		return T_SKIP;
	}
	if (hp >= 0 && hp < 64 + 12) {
		printf("SKIP: %ld free 2 MiB hugepages, need %d\n", hp, 64 + 12);
		return T_SKIP;
	}
	rc = t_setup(argc, argv, &qsbr);
	if (rc != 0)
		return rc;
	reg = egw_rxtok_region_create("atk_root", REGION_SIZE, RTE_PGSIZE_2M);
	rn = egw_rxtok_region_create("atk_nobody", SMALL_SIZE, RTE_PGSIZE_2M);
	pool = reg != NULL ? egw_rxtok_region_pool(reg) : NULL;
	plain = rte_pktmbuf_pool_create("atk_plain", 1024, 0, 0, 4096, SOCKET_ID_ANY);
	if (pool == NULL || rn == NULL || egw_rxtok_region_pool(rn) == NULL || plain == NULL) {
		printf("%s: regions and pools: %s\n", rte_errno == ENOMEM ? "SKIP" : "FAIL",
		       rte_strerror(rte_errno));
		return rte_errno == ENOMEM ? T_SKIP : 1;
	}
	reg_pages = REGION_SIZE / EGW_RXTOK_PAGE_SIZE;
	CHECK(egw_rxtok_bind(reg, 0, 0) == 0 && egw_rxtok_bind(rn, 1, 0) == 0,
	      "bind root's region to (0, 0), nobody's to (1, 0)");
	if (pthread_create(&wk.thread, NULL, worker_main, NULL) != 0)
		abort();
	snprintf(dir, sizeof(dir), "/tmp/rxh-attack.XXXXXX");
	if (mkdtemp(dir) == NULL || chmod(dir, 0755) != 0)
		abort();
	snprintf(sock_path, sizeof(sock_path), "%s/sock", dir);
	CHECK(egw_rxtok_listen(sock_path) == 0, "listen on %s", sock_path);
	/* nobody must reach the socket: the peer check is the barrier */
	chmod(sock_path, 0777);

	if (want("memory"))
		test_memory();
	if (want("detach"))
		test_detach();
	if (want("errno"))
		test_errno();
	if (want("admission"))
		test_admission();
	if (want("store"))
		test_common_store();
	if (want("hoarder"))
		test_hoarder();
	if (want("creds"))
		test_creds();
	if (want("isolation"))
		test_isolation();

	__atomic_store_n(&wk.state, 2, __ATOMIC_RELEASE);
	pthread_join(wk.thread, NULL);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "at the end the pool is full (%u/%u)",
	      rte_mempool_avail_count(pool), pool->size);
	egw_rxtok_fini();
	unlink(sock_path);
	rmdir(dir);
	rte_eal_cleanup();
	printf("rxtokens attack: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
