/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rxtokens client. Plain C, no DPDK: the two rings are egw_rxtok_shring.h
 * rings, whose geometry this side takes from the shared header once, at
 * attach, after checking it, and keeps privately; edgegw's indices are never
 * trusted beyond (prod - cons) <= size.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "egw_rxtok_client.h"
#include "egw_rxtok_shring.h"

_Static_assert(sizeof(struct egw_rxtok_rec) == EGW_RXTOK_SHRING_ESIZE,
	       "record is a 16-byte ring entry");
_Static_assert(sizeof(struct egw_rxtok_ret) == EGW_RXTOK_SHRING_ESIZE,
	       "return entry is a 16-byte ring entry");

/* Alignment of the rings in the shared memory. */
#define RING_ALIGN 64u
/* Room for more descriptors than expected, so that extra ones are received and closed
 * rather than silently dropped by the kernel (MSG_CTRUNC). */
#define WELCOME_MAX_FDS 8

struct egw_rxtok_client {
	int sock;
	bool closed; /* the server closed the connection: sticky */
	uint32_t region_id;
	uint64_t pages;
	const uint8_t *region;
	size_t region_size;
	void *shm;
	size_t shm_size;
	struct egw_rxtok_shm_hdr *hdr;
	/* private geometry and indices, taken at attach */
	struct egw_rxtok_shring_view rec; /* edgegw produces, this side consumes */
	struct egw_rxtok_shring_view ret; /* this side produces, edgegw consumes */
};

static void __attribute__((format(printf, 3, 4)))
set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void
close_fds(const int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

/* True if the server closed its end (or the socket failed). No blocking. */
static bool
peer_gone(int sock)
{
	struct pollfd p = {.fd = sock, .events = POLLRDHUP};

	if (poll(&p, 1, 0) <= 0)
		return false;
	return (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0;
}

/* An mmap() past the end of the file would SIGBUS on first touch: refuse it. */
static int
check_fd_size(int fd, uint64_t size, const char *what, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int e = errno;

		set_err(err, errlen, "fstat of the %s descriptor: %s", what, strerror(e));
		return -e;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < size) {
		set_err(err, errlen, "%s file is %llu bytes, welcome says %llu", what,
			(unsigned long long)st.st_size, (unsigned long long)size);
		return -EINVAL;
	}
	return 0;
}

/* Neither side can resize what the other maps (a shrink would SIGBUS the
 * other's next access): both memfds come sealed against it. */
static int
check_fd_seals(int fd, const char *what, char *err, size_t errlen)
{
	int seals = fcntl(fd, F_GET_SEALS);
	const int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

	if (seals < 0 || (seals & want) != want) {
		set_err(err, errlen, "%s descriptor is not sealed against resizing (seals %#x)",
			what, seals < 0 ? 0 : seals);
		return -EPERM;
	}
	return 0;
}

/*
 * Check the ring of @p size entries at @p off: a power-of-two size,
 * 64-byte aligned, after the header and inside the shared memory. Returns
 * its end offset (for the overlap check), or 0 with @p err set.
 */
static uint64_t
check_ring(uint64_t shm_size, uint32_t hdr_size, uint32_t off, uint32_t size, const char *what,
	   char *err, size_t errlen)
{
	uint64_t end;

	if (off % RING_ALIGN != 0) {
		set_err(err, errlen, "%s ring offset %u is not %u-byte aligned", what, off,
			RING_ALIGN);
		return 0;
	}
	if (!egw_rxtok_shring_size_ok(size)) {
		set_err(err, errlen, "%s ring size %u is not a power of two up to %u", what, size,
			EGW_RXTOK_SHRING_MAX_SIZE);
		return 0;
	}
	end = (uint64_t)off + egw_rxtok_shring_memsize(size);
	if (off < hdr_size || end > shm_size) {
		set_err(err, errlen,
			"%s ring of %u entries at %u outside the shared memory (header %u, size "
			"%llu)",
			what, size, off, hdr_size, (unsigned long long)shm_size);
		return 0;
	}
	return end;
}

/* Validate the shared header against the welcome; 0 or -EINVAL/-EPROTONOSUPPORT. */
static int
check_shm(struct egw_rxtok_client *cl, char *err, size_t errlen)
{
	const struct egw_rxtok_shm_hdr *h = cl->hdr;
	uint32_t hdr_size, rec_off, ret_off, rec_size, ret_size;
	uint64_t rec_end, ret_end;

	if (h->magic != EGW_RXTOK_SHM_MAGIC) {
		set_err(err, errlen, "shared memory header has bad magic 0x%016llx",
			(unsigned long long)h->magic);
		return -EINVAL;
	}
	if (h->version != EGW_RXTOK_ABI_VERSION) {
		set_err(err, errlen, "shared memory header has ABI version %u, expected %u",
			h->version, EGW_RXTOK_ABI_VERSION);
		return -EPROTONOSUPPORT;
	}
	hdr_size = h->hdr_size;
	if (hdr_size != sizeof(*h) || hdr_size > cl->shm_size) {
		set_err(err, errlen,
			"shared memory header size %u, expected %zu (shared memory %zu)", hdr_size,
			sizeof(*h), cl->shm_size);
		return -EINVAL;
	}
	if (h->page_size != EGW_RXTOK_PAGE_SIZE) {
		set_err(err, errlen, "shared memory header page size %u, expected %u", h->page_size,
			EGW_RXTOK_PAGE_SIZE);
		return -EINVAL;
	}
	if (h->region_size != cl->region_size) {
		set_err(err, errlen, "shared memory header region size %llu, welcome says %zu",
			(unsigned long long)h->region_size, cl->region_size);
		return -EINVAL;
	}
	/* one read of each: the server may change them behind this side */
	rec_off = h->rec_ring_off;
	ret_off = h->ret_ring_off;
	rec_size = h->rec_ring_size;
	ret_size = h->ret_ring_size;
	rec_end = check_ring(cl->shm_size, hdr_size, rec_off, rec_size, "record", err, errlen);
	if (rec_end == 0)
		return -EINVAL;
	ret_end = check_ring(cl->shm_size, hdr_size, ret_off, ret_size, "return", err, errlen);
	if (ret_end == 0)
		return -EINVAL;
	if (rec_off < ret_end && ret_off < rec_end) {
		set_err(err, errlen, "record ring [%u, %llu) and return ring [%u, %llu) overlap",
			rec_off, (unsigned long long)rec_end, ret_off, (unsigned long long)ret_end);
		return -EINVAL;
	}
	cl->region_id = h->region_id;
	/* sizes checked above */
	egw_rxtok_shring_attach(&cl->rec, (uint8_t *)cl->shm + rec_off, rec_size, false);
	egw_rxtok_shring_attach(&cl->ret, (uint8_t *)cl->shm + ret_off, ret_size, true);
	return 0;
}

static int
connect_socket(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {
		.tv_sec = EGW_RXTOK_CLIENT_ATTACH_TIMEOUT_MS / 1000,
		.tv_usec = (EGW_RXTOK_CLIENT_ATTACH_TIMEOUT_MS % 1000) * 1000,
	};
	int sock, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		set_err(err, errlen, "socket path %s longer than %zu bytes", path,
			sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		e = errno;
		set_err(err, errlen, "socket(AF_UNIX, SOCK_SEQPACKET): %s", strerror(e));
		return -e;
	}
	if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
		e = errno;
		set_err(err, errlen, "setsockopt(SO_RCVTIMEO/SO_SNDTIMEO): %s", strerror(e));
		close(sock);
		return -e;
	}
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		set_err(err, errlen, "connect to %s: %s", path, strerror(e));
		close(sock);
		return -e;
	}
	return sock;
}

/*
 * Receive the welcome and its descriptors into @p fds (*nfds of them, all
 * to be closed by the caller). Returns 0 or a negative errno with @p err set;
 * the welcome's magic and status are checked by the caller.
 */
static int
recv_welcome(int sock, const char *path, struct egw_rxtok_welcome *w, int *fds, unsigned int *nfds,
	     char *err, size_t errlen)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * WELCOME_MAX_FDS)];
	} ctl;
	struct iovec iov = {.iov_base = w, .iov_len = sizeof(*w)};
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c;
	ssize_t len;
	int e;

	*nfds = 0;
	do {
		len = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (len < 0 && errno == EINTR);
	if (len < 0) {
		e = errno;
		if (e == EAGAIN || e == EWOULDBLOCK)
			set_err(err, errlen, "no welcome from %s within %u ms", path,
				EGW_RXTOK_CLIENT_ATTACH_TIMEOUT_MS);
		else
			set_err(err, errlen, "receiving the welcome from %s: %s", path,
				strerror(e));
		return -e;
	}
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		unsigned int k, n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < n && *nfds < WELCOME_MAX_FDS; k++)
			memcpy(&fds[(*nfds)++], CMSG_DATA(c) + k * sizeof(int), sizeof(int));
	}
	if (len == 0) {
		set_err(err, errlen, "%s closed the connection without a welcome", path);
		return -ECONNRESET;
	}
	if ((size_t)len != sizeof(*w) || (msg.msg_flags & MSG_TRUNC) != 0) {
		set_err(err, errlen, "welcome from %s is %s%zd bytes, expected %zu", path,
			(msg.msg_flags & MSG_TRUNC) != 0 ? "more than " : "", len, sizeof(*w));
		return -EPROTO;
	}
	if ((msg.msg_flags & MSG_CTRUNC) != 0) {
		set_err(err, errlen, "welcome from %s carries more than %u descriptors", path,
			WELCOME_MAX_FDS);
		return -EPROTO;
	}
	return 0;
}

static void
unmap(struct egw_rxtok_client *cl)
{
	if (cl->region != NULL)
		munmap((void *)(uintptr_t)cl->region, cl->region_size);
	if (cl->shm != NULL)
		munmap(cl->shm, cl->shm_size);
	cl->region = NULL;
	cl->shm = NULL;
}

static int
map_fds(struct egw_rxtok_client *cl, const struct egw_rxtok_welcome *w, const int *fds, char *err,
	size_t errlen)
{
	void *p;
	int ret, e;

	if (w->region_size == 0 || w->region_size % EGW_RXTOK_PAGE_SIZE != 0 ||
	    w->region_size > SIZE_MAX ||
	    w->region_size / EGW_RXTOK_PAGE_SIZE > (uint64_t)UINT32_MAX + 1) {
		set_err(err, errlen, "welcome region size %llu is not a whole number of pages",
			(unsigned long long)w->region_size);
		return -EINVAL;
	}
	if (w->shm_size < sizeof(struct egw_rxtok_shm_hdr) || w->shm_size > SIZE_MAX) {
		set_err(err, errlen, "welcome shared memory size %llu is too small for the header",
			(unsigned long long)w->shm_size);
		return -EINVAL;
	}
	ret = check_fd_size(fds[0], w->region_size, "region", err, errlen);
	if (ret < 0)
		return ret;
	ret = check_fd_size(fds[1], w->shm_size, "shared memory", err, errlen);
	if (ret < 0)
		return ret;
	ret = check_fd_seals(fds[0], "region", err, errlen);
	if (ret < 0)
		return ret;
	ret = check_fd_seals(fds[1], "shared memory", err, errlen);
	if (ret < 0)
		return ret;

	cl->region_size = (size_t)w->region_size;
	cl->pages = w->region_size / EGW_RXTOK_PAGE_SIZE;
	cl->shm_size = (size_t)w->shm_size;
	p = mmap(NULL, cl->region_size, PROT_READ, MAP_SHARED, fds[0], 0);
	if (p == MAP_FAILED) {
		e = errno;
		set_err(err, errlen, "mmap of the region (%zu bytes, read-only): %s",
			cl->region_size, strerror(e));
		return -e;
	}
	cl->region = p;
	p = mmap(NULL, cl->shm_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
	if (p == MAP_FAILED) {
		e = errno;
		set_err(err, errlen, "mmap of the shared memory (%zu bytes): %s", cl->shm_size,
			strerror(e));
		return -e;
	}
	cl->shm = p;
	cl->hdr = p;
	return 0;
}

struct egw_rxtok_client *
egw_rxtok_client_attach(const char *socket_path, const char *consumer, char *err, size_t errlen)
{
	struct egw_rxtok_hello hello = {
		.magic = EGW_RXTOK_HELLO_MAGIC,
		.version = EGW_RXTOK_ABI_VERSION,
	};
	struct egw_rxtok_welcome w;
	struct egw_rxtok_client *cl;
	int fds[WELCOME_MAX_FDS];
	unsigned int nfds = 0;
	size_t name_len;
	ssize_t len;
	int ret;

	set_err(err, errlen, "no error");
	if (socket_path == NULL || consumer == NULL) {
		set_err(err, errlen, "socket path and consumer name are required");
		errno = EINVAL;
		return NULL;
	}
	name_len = strlen(consumer);
	if (name_len == 0 || name_len >= sizeof(hello.consumer)) {
		set_err(err, errlen, "consumer name '%s' must have 1..%zu characters", consumer,
			sizeof(hello.consumer) - 1);
		errno = name_len == 0 ? EINVAL : ENAMETOOLONG;
		return NULL;
	}
	memcpy(hello.consumer, consumer, name_len);

	cl = calloc(1, sizeof(*cl));
	if (cl == NULL) {
		set_err(err, errlen, "out of memory for the client");
		errno = ENOMEM;
		return NULL;
	}
	cl->sock = connect_socket(socket_path, err, errlen);
	if (cl->sock < 0) {
		ret = cl->sock;
		goto fail;
	}
	do {
		len = send(cl->sock, &hello, sizeof(hello), MSG_NOSIGNAL);
	} while (len < 0 && errno == EINTR);
	memset(&w, 0, sizeof(w));
	if (len != (ssize_t)sizeof(hello)) {
		ret = len < 0 ? -errno : -EPROTO;
		set_err(err, errlen, "sending the hello to %s: %s", socket_path, strerror(-ret));
		/* a server that refuses a peer at once (its uid has no consumer)
		 * writes its refusal and closes, maybe before the hello is sent:
		 * the refusal is still queued, and it is the answer to report;
		 * without one the send's error stands */
		if ((ret != -EPIPE && ret != -ECONNRESET) ||
		    recv_welcome(cl->sock, socket_path, &w, fds, &nfds, NULL, 0) < 0 ||
		    w.magic != EGW_RXTOK_HELLO_MAGIC || w.status >= 0)
			goto fail;
	} else {
		ret = recv_welcome(cl->sock, socket_path, &w, fds, &nfds, err, errlen);
		if (ret < 0)
			goto fail;
	}
	if (w.magic != EGW_RXTOK_HELLO_MAGIC) {
		set_err(err, errlen, "welcome from %s has bad magic 0x%08x, expected 0x%08x",
			socket_path, w.magic, EGW_RXTOK_HELLO_MAGIC);
		ret = -EPROTO;
		goto fail;
	}
	if (w.status < 0) {
		/* a negative errno; anything below -4095 (INT_MIN included) is not one */
		int e = w.status >= -4095 ? -w.status : EPROTO;

		w.message[sizeof(w.message) - 1] = '\0';
		set_err(err, errlen, "%s refused consumer '%s': %s (%s)", socket_path, consumer,
			w.message[0] != '\0' ? w.message : "no reason given", strerror(e));
		ret = -e;
		goto fail;
	}
	if (w.status != 0) {
		set_err(err, errlen, "welcome from %s has unexpected status %d", socket_path,
			w.status);
		ret = -EPROTO;
		goto fail;
	}
	if (nfds != 2) {
		set_err(err, errlen, "welcome from %s carries %u descriptors, expected 2",
			socket_path, nfds);
		ret = -EPROTO;
		goto fail;
	}
	ret = map_fds(cl, &w, fds, err, errlen);
	if (ret < 0)
		goto fail;
	/* The mappings keep the memory; the descriptors are not needed any more. */
	close_fds(fds, nfds);
	nfds = 0;
	ret = check_shm(cl, err, errlen);
	if (ret < 0)
		goto fail;
	set_err(err, errlen, "no error");
	return cl;

fail:
	close_fds(fds, nfds);
	unmap(cl);
	if (cl->sock >= 0)
		close(cl->sock);
	free(cl);
	errno = -ret;
	return NULL;
}

/*
 * edgegw set F_DETACHED before releasing any page of the consumer (seq_cst
 * store in rxtok_detach()). The acquire fence orders the ring entries just
 * read before this load: if the flag is still clear, the records were taken
 * before the detach began. Sticky once seen.
 */
static bool
detached(struct egw_rxtok_client *cl)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if ((__atomic_load_n(&cl->hdr->flags, __ATOMIC_RELAXED) & EGW_RXTOK_SHM_F_DETACHED) != 0)
		cl->closed = true;
	return cl->closed;
}

/* The verdict edgegw left on an earlier return, once: 0 or -errno (a
 * value that is no negative errno, -4095..-1, is -EPROTO). */
static int
take_status(struct egw_rxtok_client *cl)
{
	int32_t st;

	if (__atomic_load_n(&cl->hdr->ret_status, __ATOMIC_RELAXED) == 0)
		return 0;
	st = __atomic_exchange_n(&cl->hdr->ret_status, 0, __ATOMIC_ACQUIRE);
	if (st == 0)
		return 0;
	return st >= -4095 && st < 0 ? st : -EPROTO;
}

int
egw_rxtok_client_recv(struct egw_rxtok_client *cl, struct egw_rxtok_rec *recs, unsigned int n)
{
	int got;

	if (cl == NULL || (recs == NULL && n > 0))
		return -EINVAL;
	if (cl->closed || detached(cl))
		return -ENOTCONN;
	/*
	 * Relaxed: the flag publishes no data, it only says that packets were
	 * not delivered. edgegw sets it, the consumer clears it; the and tells
	 * whether this call is the one that saw it set.
	 */
	if ((__atomic_load_n(&cl->hdr->flags, __ATOMIC_RELAXED) & EGW_RXTOK_SHM_F_STEERED) != 0 &&
	    (__atomic_fetch_and(&cl->hdr->flags, ~(uint32_t)EGW_RXTOK_SHM_F_STEERED,
				__ATOMIC_RELAXED) &
	     EGW_RXTOK_SHM_F_STEERED) != 0)
		return -EPIPE;
	if (n == 0)
		return 0;
	/* never more than the ring holds, at slots of the private mask */
	got = egw_rxtok_shring_dequeue_burst(&cl->rec, recs, n);
	if (got < 0)
		return -EPROTO;
	if (detached(cl)) {
		/* edgegw detached the consumer, maybe before these records were
		 * taken: their pages are being released, never hand them out */
		memset(recs, 0, sizeof(*recs) * (size_t)got);
		return -ENOTCONN;
	}
	/* Only when idle: a poll() per call would cost a syscall per burst. */
	if (got == 0 && peer_gone(cl->sock)) {
		cl->closed = true;
		return -ENOTCONN;
	}
	return got;
}

const uint8_t *
egw_rxtok_client_page(const struct egw_rxtok_client *cl, uint32_t token)
{
	if (cl == NULL || token >= cl->pages)
		return NULL;
	return cl->region + (size_t)token * EGW_RXTOK_PAGE_SIZE;
}

int
egw_rxtok_client_return(struct egw_rxtok_client *cl, const struct egw_rxtok_range *ranges,
			unsigned int n)
{
	struct egw_rxtok_ret rets[EGW_RXTOK_MAX_RANGES];
	unsigned int i;
	int done, status;

	if (cl == NULL || (ranges == NULL && n > 0) || n > EGW_RXTOK_MAX_RANGES)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (ranges[i].token_count == 0 ||
		    ranges[i].token_count > EGW_RXTOK_MAX_RANGE_TOKENS)
			return -EINVAL;
		rets[i] = (struct egw_rxtok_ret){
			.region = cl->region_id,
			.token_start = ranges[i].token_start,
			.token_count = ranges[i].token_count,
			.reserved = 0,
		};
	}
	if (cl->closed || detached(cl))
		return -ENOTCONN;
	/* an earlier range was rejected: say so before taking more */
	status = take_status(cl);
	if (status < 0)
		return status;
	if (n == 0)
		return 0;
	done = egw_rxtok_shring_enqueue_burst(&cl->ret, rets, n);
	if (done < 0)
		return -EPROTO;
	/* A full ring may mean nobody drains it any more. */
	if (done == 0 && peer_gone(cl->sock)) {
		cl->closed = true;
		return -ENOTCONN;
	}
	return done;
}

int
egw_rxtok_client_sync(struct egw_rxtok_client *cl, int timeout_ms)
{
	uint64_t waited_us = 0;

	if (cl == NULL)
		return -EINVAL;
	for (;;) {
		/* acquire pairs with edgegw's release store of ret_done after
		 * it judged the entries: their verdicts are in ret_status */
		uint32_t done = __atomic_load_n(&cl->hdr->ret_done, __ATOMIC_ACQUIRE);

		if (cl->closed || detached(cl))
			return -ENOTCONN;
		/* every entry this side enqueued has been judged (wrapping
		 * counters; a done past ours is edgegw lying: treat as done) */
		if ((int32_t)(done - cl->ret.own) >= 0)
			return take_status(cl);
		if (peer_gone(cl->sock)) {
			cl->closed = true;
			return -ENOTCONN;
		}
		if (timeout_ms >= 0 && waited_us >= (uint64_t)timeout_ms * 1000)
			return -ETIMEDOUT;
		usleep(100);
		waited_us += 100;
	}
}

const struct egw_rxtok_shm_hdr *
egw_rxtok_client_shm(const struct egw_rxtok_client *cl)
{
	return cl == NULL ? NULL : cl->hdr;
}

int
egw_rxtok_client_fd(const struct egw_rxtok_client *cl)
{
	return cl == NULL ? -1 : cl->sock;
}

void
egw_rxtok_client_detach(struct egw_rxtok_client *cl)
{
	if (cl == NULL)
		return;
	unmap(cl);
	close(cl->sock);
	free(cl);
}
