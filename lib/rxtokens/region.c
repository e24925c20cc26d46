/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Regions: hugepage memfds registered with DPDK, their page refcounts, the
 * external-buffer mempool whose buffers are the pages, and bindings to RX
 * queues.
 */
#define ALLOW_EXPERIMENTAL_API
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <linux/memfd.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "rxtok_private.h"

RTE_LOG_REGISTER_DEFAULT(egw_rxtok_logtype, INFO);

struct rxtok_state rxtok = {.listen_fd = -1};

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010 /* Linux 5.1 */
#endif

#ifndef MFD_HUGE_1GB
#define MFD_HUGE_1GB (30u << MFD_HUGE_SHIFT)
#endif
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21u << MFD_HUGE_SHIFT)
#endif

void *
rxtok_zmalloc(const char *what, size_t size)
{
	void *p = rte_zmalloc(what, size, RTE_CACHE_LINE_SIZE);

	/* count what the allocator charges, its element header included */
	if (p != NULL)
		rxtok.bookkeeping += size + rxtok.malloc_overhead;
	return p;
}

void
rxtok_free(void *p, size_t size)
{
	if (p == NULL)
		return;
	rxtok.bookkeeping -= size + rxtok.malloc_overhead;
	rte_free(p);
}

uint64_t
egw_rxtok_bookkeeping_bytes(void)
{
	/* the fixed tables count too */
	return rxtok.bookkeeping + sizeof(rxtok);
}

int
egw_rxtok_init(struct rte_rcu_qsbr *qsbr)
{
	struct rte_hash_parameters hp = {
		.name = "egw_rxtok_dst",
		.entries = EGW_RXTOK_MAX_CONSUMERS,
		.key_len = sizeof(struct rxtok_dst_key),
		.socket_id = SOCKET_ID_ANY,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};

	struct rte_malloc_socket_stats st0, st1;
	int sock = (int)rte_socket_id();
	void *probe;

	if (qsbr == NULL)
		return -EINVAL;
	if (rxtok.qsbr != NULL)
		return 0;
	/* what one allocation costs beyond its size, measured once */
	if (sock < 0)
		sock = 0;
	rte_malloc_get_socket_stats(sock, &st0);
	probe = rte_malloc_socket("egw_rxtok_probe", RTE_CACHE_LINE_SIZE, RTE_CACHE_LINE_SIZE,
				  sock);
	rte_malloc_get_socket_stats(sock, &st1);
	if (probe != NULL && st1.heap_allocsz_bytes > st0.heap_allocsz_bytes + RTE_CACHE_LINE_SIZE)
		rxtok.malloc_overhead =
			st1.heap_allocsz_bytes - st0.heap_allocsz_bytes - RTE_CACHE_LINE_SIZE;
	rte_free(probe);
	rxtok.dst_hash = rte_hash_create(&hp);
	if (rxtok.dst_hash == NULL)
		return -rte_errno;
	rxtok.qsbr = qsbr;
	rxtok.listen_fd = -1;
	return 0;
}

struct egw_rxtok_region *
egw_rxtok_region_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < EGW_RXTOK_MAX_REGIONS; i++)
		if (rxtok.regions[i].used && strcmp(rxtok.regions[i].name, name) == 0)
			return &rxtok.regions[i];
	return NULL;
}

struct egw_rxtok_region *
egw_rxtok_region_get(uint32_t id)
{
	if (id >= EGW_RXTOK_MAX_REGIONS || !rxtok.regions[id].used)
		return NULL;
	return &rxtok.regions[id];
}

uint32_t
egw_rxtok_region_id(const struct egw_rxtok_region *r)
{
	return r->id;
}

const uint8_t *
egw_rxtok_region_page(const struct egw_rxtok_region *r, uint32_t token)
{
	if (r == NULL || !r->used || token >= r->n_pages)
		return NULL;
	return r->base + ((uint64_t)token << EGW_RXTOK_PAGE_SHIFT);
}

const char *
egw_rxtok_region_name(const struct egw_rxtok_region *r)
{
	return r->name;
}

int
rxtok_check_seals(int fd, unsigned int want)
{
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0)
		return -errno;
	return ((unsigned int)seals & want) == want ? 0 : -EPERM;
}

/*
 * Seal the region once edgegw's own writable mapping exists: no size change
 * (a consumer's ftruncate or fallocate would make edgegw's next access
 * SIGBUS, or free pages a NIC still writes), no new writable mapping and no
 * write(2) or hole punch by anyone (F_SEAL_FUTURE_WRITE: the existing
 * mapping stays writable, so the NIC and edgegw keep working; a reopen of
 * the descriptor through /proc, read-write and by any user, still gets a
 * read-only file), and no seal removed or added later (F_SEAL_SEAL). The
 * seals belong to the inode, so they hold for every descriptor of it.
 * hugetlbfs takes all four (checked here: a kernel that refuses one fails
 * the region, closed).
 */
int
rxtok_seal_region(int fd)
{
	const unsigned int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL;

	if (fcntl(fd, F_ADD_SEALS, want) != 0) {
		rte_errno = errno;
		return -1;
	}
	if (rxtok_check_seals(fd, want) != 0) {
		rte_errno = EPERM;
		return -1;
	}
	return 0;
}

struct egw_rxtok_region *
egw_rxtok_region_create(const char *name, uint64_t size, uint64_t hugepage_size)
{
	struct egw_rxtok_region *r = NULL;
	rte_iova_t *iova = NULL;
	unsigned int flags, i;
	uint64_t n_huge, k;
	void *base;
	int fd;

	if (name == NULL || name[0] == '\0' || strlen(name) >= sizeof(r->name) ||
	    (hugepage_size != RTE_PGSIZE_2M && hugepage_size != RTE_PGSIZE_1G) || size == 0 ||
	    size % hugepage_size != 0 || size >> EGW_RXTOK_PAGE_SHIFT > UINT32_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (egw_rxtok_region_find(name) != NULL) {
		rte_errno = EEXIST;
		return NULL;
	}
	for (i = 0; i < EGW_RXTOK_MAX_REGIONS; i++) {
		if (!rxtok.regions[i].used) {
			r = &rxtok.regions[i];
			break;
		}
	}
	if (r == NULL) {
		rte_errno = ENOSPC;
		return NULL;
	}
	/* sealable: the seals are what keeps a consumer from resizing or
	 * writing the region (see rxtok_seal_region()) */
	flags = MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB |
		(hugepage_size == RTE_PGSIZE_2M ? MFD_HUGE_2MB : MFD_HUGE_1GB);
	fd = memfd_create(name, flags);
	if (fd < 0) {
		rte_errno = errno;
		return NULL;
	}
	if (ftruncate(fd, (off_t)size) != 0) {
		rte_errno = errno;
		close(fd);
		return NULL;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (base == MAP_FAILED) {
		rte_errno = ENOMEM;
		close(fd);
		return NULL;
	}
	/* hugetlb reserves the pages at mmap(): too few hugepages fail here */
	if (rxtok_seal_region(fd) != 0) {
		RXTOK_LOG(ERR, "region %s: cannot seal the memfd: %s\n", name, strerror(rte_errno));
		munmap(base, size);
		close(fd);
		return NULL;
	}
	/* one IOVA per hugepage: with IOVA as PA the pages are not contiguous */
	n_huge = size / hugepage_size;
	iova = malloc(sizeof(*iova) * n_huge);
	if (iova == NULL)
		goto nomem;
	for (k = 0; k < n_huge; k++)
		iova[k] = rte_eal_iova_mode() == RTE_IOVA_VA
				  ? (rte_iova_t)(uintptr_t)((uint8_t *)base + k * hugepage_size)
				  : rte_mem_virt2iova((uint8_t *)base + k * hugepage_size);
	if (rte_extmem_register(base, size, iova, (unsigned int)n_huge, hugepage_size) != 0) {
		RXTOK_LOG(ERR, "region %s: rte_extmem_register: %s\n", name,
			  rte_strerror(rte_errno));
		free(iova);
		munmap(base, size);
		close(fd);
		return NULL;
	}
	free(iova);

	memset(r, 0, sizeof(*r));
	r->id = (uint32_t)(r - rxtok.regions);
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->memfd = fd;
	r->base = base;
	r->size = size;
	r->hugepage_size = hugepage_size;
	r->n_pages = (uint32_t)(size >> EGW_RXTOK_PAGE_SHIFT);
	r->state = rxtok_zmalloc("egw_rxtok_state", sizeof(*r->state) * r->n_pages);
	if (r->state == NULL) {
		rte_extmem_unregister(base, size);
		munmap(base, size);
		close(fd);
		rte_errno = ENOMEM;
		return NULL;
	}
	r->used = true;
	return r;
nomem:
	munmap(base, size);
	close(fd);
	rte_errno = ENOMEM;
	return NULL;
}

struct page_runs {
	struct egw_rxtok_region *r;
	uint32_t n;    /* runs found */
	uint32_t prev; /* token of the previous object */
	uint8_t *prev_m;
	bool ordered; /* runs come in increasing token order */
};

/* Objects in pool order: a new run starts wherever the next page is not
 * the next mbuf. The first pass counts, the second (runs set) fills. */
static void
page_run_cb(struct rte_mempool *mp __rte_unused, void *arg, void *obj, unsigned int idx)
{
	struct page_runs *pr = arg;
	struct egw_rxtok_region *r = pr->r;
	struct rte_mbuf *m = obj;
	uint32_t token = (uint32_t)(((uint8_t *)m->buf_addr - r->base) >> EGW_RXTOK_PAGE_SHIFT);

	if (idx == 0 || token != pr->prev + 1 || (uint8_t *)obj != pr->prev_m + r->mbuf_stride) {
		if (r->runs != NULL) {
			r->runs[pr->n].first_token = token;
			r->runs[pr->n].mbuf = obj;
		}
		if (pr->n != 0 && token < pr->prev)
			pr->ordered = false;
		pr->n++;
	}
	pr->prev = token;
	pr->prev_m = obj;
}

static int
run_cmp(const void *a, const void *b)
{
	const struct rxtok_run *x = a, *y = b;

	return x->first_token < y->first_token ? -1 : x->first_token > y->first_token;
}

/* The runs, then the run index of each hugepage, in one allocation. */
static size_t
runs_bytes(uint32_t n_runs, uint32_t n_huge)
{
	return sizeof(struct rxtok_run) * n_runs + sizeof(uint32_t) * n_huge;
}

static int
page_map(struct egw_rxtok_region *r)
{
	struct page_runs pr = {.r = r, .ordered = true};
	uint32_t h, k = 0;

	r->mbuf_stride = r->pool->header_size + r->pool->elt_size + r->pool->trailer_size;
	r->n_huge = (uint32_t)(r->size / r->hugepage_size);
	r->huge_shift = (uint32_t)rte_log2_u64(r->hugepage_size) - EGW_RXTOK_PAGE_SHIFT;
	rte_mempool_obj_iter(r->pool, page_run_cb, &pr);
	r->runs = rxtok_zmalloc("egw_rxtok_runs", runs_bytes(pr.n, r->n_huge));
	if (r->runs == NULL)
		return -ENOMEM;
	r->n_runs = pr.n;
	r->huge_run = (uint32_t *)(r->runs + pr.n);
	pr.n = 0;
	rte_mempool_obj_iter(r->pool, page_run_cb, &pr);
	if (!pr.ordered)
		qsort(r->runs, r->n_runs, sizeof(*r->runs), run_cmp);
	/* the pool covers every page, from page 0: runs[0] starts there */
	for (h = 0; h < r->n_huge; h++) {
		uint32_t first = h << r->huge_shift;

		while (k + 1 < r->n_runs && r->runs[k + 1].first_token <= first)
			k++;
		r->huge_run[h] = k;
	}
	return 0;
}

struct rte_mempool *
egw_rxtok_region_pool(struct egw_rxtok_region *r)
{
	struct rte_pktmbuf_extmem *ext;
	char name[RTE_MEMPOOL_NAMESIZE];
	uint64_t n_huge, k;

	if (r == NULL || !r->used) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (r->pool != NULL)
		return r->pool;
	n_huge = r->size / r->hugepage_size;
	ext = malloc(sizeof(*ext) * n_huge);
	if (ext == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	for (k = 0; k < n_huge; k++) {
		uint8_t *va = r->base + k * r->hugepage_size;

		ext[k].buf_ptr = va;
		ext[k].buf_iova = rte_mem_virt2iova(va);
		if (ext[k].buf_iova == RTE_BAD_IOVA)
			ext[k].buf_iova = (rte_iova_t)(uintptr_t)va;
		ext[k].buf_len = r->hugepage_size;
		ext[k].elt_size = EGW_RXTOK_PAGE_SIZE;
	}
	snprintf(name, sizeof(name), "egw_rxtok_r%u", r->id);
	/* rte_mempool_avail_count() counts the lcore caches too, so "the
	 * pool is full again" stays exact with them */
	r->pool = rte_pktmbuf_pool_create_extbuf(name, r->n_pages, r->n_pages >= 1024 ? 256 : 0, 0,
						 EGW_RXTOK_PAGE_SIZE, SOCKET_ID_ANY, ext,
						 (unsigned int)n_huge);
	free(ext);
	if (r->pool == NULL) {
		RXTOK_LOG(ERR, "region %s: mempool: %s\n", r->name, rte_strerror(rte_errno));
		return NULL;
	}
	if (page_map(r) < 0) {
		rte_mempool_free(r->pool);
		r->pool = NULL;
		rte_errno = ENOMEM;
		return NULL;
	}
	return r->pool;
}

int
egw_rxtok_region_destroy(struct egw_rxtok_region *r)
{
	unsigned int lc;

	if (r == NULL || !r->used)
		return -EINVAL;
	if (r->n_bindings != 0 || r->n_consumers != 0)
		return -EBUSY;
	/* no lcore receives into it any more (no binding): forget it, so that
	 * a region that reuses the id starts afresh */
	for (lc = 0; lc < RTE_MAX_LCORE; lc++)
		__atomic_fetch_and(&rxtok_lcores[lc].rx_regions, (uint16_t) ~(1u << r->id),
				   __ATOMIC_RELAXED);
	if (r->pool != NULL)
		rte_mempool_free(r->pool);
	if (r->runs != NULL)
		rxtok_free(r->runs, runs_bytes(r->n_runs, r->n_huge));
	rxtok_free(r->state, sizeof(*r->state) * r->n_pages);
	rte_extmem_unregister(r->base, r->size);
	munmap(r->base, r->size);
	close(r->memfd);
	memset(r, 0, sizeof(*r));
	return 0;
}

/* The region's pool cache size (egw_rxtok_region_pool()). */
static unsigned int
pool_cache_size(const struct egw_rxtok_region *r)
{
	return r->n_pages >= 1024 ? 256 : 0;
}

static uint64_t
reserve_of(const struct egw_rxtok_region *r, uint64_t rxq_desc)
{
	/* what each lcore's cache may keep: rte_mempool's flush threshold */
	uint64_t per_lcore = pool_cache_size(r) * 3 / 2 + EGW_RXTOK_LCORE_BURST_PAGES;

	return rxq_desc + (uint64_t)rte_lcore_count() * per_lcore;
}

uint64_t
egw_rxtok_region_reserve(const struct egw_rxtok_region *r)
{
	if (r == NULL || !r->used)
		return 0;
	return reserve_of(r, r->rxq_desc);
}

uint64_t
egw_rxtok_region_quota_room(const struct egw_rxtok_region *r)
{
	uint64_t res;

	if (r == NULL || !r->used)
		return 0;
	res = reserve_of(r, r->rxq_desc) + r->quota_sum;
	return res < r->n_pages ? r->n_pages - res : 0;
}

int
egw_rxtok_region_owner(const struct egw_rxtok_region *r, uint32_t *uid, uint32_t *gid)
{
	if (r == NULL || !r->used || !r->owned)
		return 0;
	if (uid != NULL)
		*uid = r->owner_uid;
	if (gid != NULL)
		*gid = r->owner_gid;
	return 1;
}

int
egw_rxtok_bind(struct egw_rxtok_region *r, uint16_t port, uint16_t queue)
{
	return egw_rxtok_bind_flags(r, port, queue, 0);
}

int
egw_rxtok_bind_flags(struct egw_rxtok_region *r, uint16_t port, uint16_t queue, unsigned int flags)
{
	struct rte_eth_rxq_info qi;
	uint64_t desc = EGW_RXTOK_RXQ_DESC_DEFAULT;
	bool shared = (flags & EGW_RXTOK_BIND_SHARED) != 0;
	unsigned int i;

	if (r == NULL || !r->used || port >= RTE_MAX_ETHPORTS || queue >= RTE_MAX_QUEUES_PER_PORT ||
	    (flags & ~EGW_RXTOK_BIND_SHARED) != 0)
		return -EINVAL;
	if (rxtok.bind_tbl[port][queue] != 0)
		return -EBUSY;
	/* a shared port is one owner's: one region, and no steered queue
	 * beside it (its steering would not hold for the shared queues) */
	for (i = 0; i < RTE_MAX_QUEUES_PER_PORT; i++) {
		uint8_t b = rxtok.bind_tbl[port][i];

		if (b != 0 && ((bool)egw_rxtok_binding_shared(port, (uint16_t)i) != shared ||
			       (shared && b != r->id + 1)))
			return -EXDEV;
	}
	memset(&qi, 0, sizeof(qi));
	if (rte_eth_dev_is_valid_port(port) && rte_eth_rx_queue_info_get(port, queue, &qi) == 0 &&
	    qi.nb_desc != 0)
		desc = qi.nb_desc;
	/* admission control holds for bindings too: a queue's descriptors
	 * come out of the pages the consumers' quotas leave */
	if (reserve_of(r, r->rxq_desc + desc) + r->quota_sum > r->n_pages) {
		RXTOK_LOG(ERR,
			  "region %s: binding port %u queue %u (%" PRIu64
			  " descriptors) leaves too few pages for the quotas (%" PRIu64
			  " of %u pages)\n",
			  r->name, port, queue, desc, r->quota_sum, r->n_pages);
		return -ENOSPC;
	}
	r->rxq_desc += desc;
	rxtok_steer_set_shared(port, queue, shared);
	/* workers read it with acquire; set while forwarding is stopped */
	__atomic_store_n(&rxtok.bind_tbl[port][queue], (uint8_t)(r->id + 1), __ATOMIC_RELEASE);
	r->n_bindings++;
	return 0;
}

int
egw_rxtok_unbind(struct egw_rxtok_region *r, uint16_t port, uint16_t queue)
{
	struct rte_eth_rxq_info qi;
	uint64_t desc = EGW_RXTOK_RXQ_DESC_DEFAULT;

	if (r == NULL || !r->used || port >= RTE_MAX_ETHPORTS || queue >= RTE_MAX_QUEUES_PER_PORT)
		return -EINVAL;
	if (rxtok.bind_tbl[port][queue] != r->id + 1)
		return -ENOENT;
	memset(&qi, 0, sizeof(qi));
	if (rte_eth_dev_is_valid_port(port) && rte_eth_rx_queue_info_get(port, queue, &qi) == 0 &&
	    qi.nb_desc != 0)
		desc = qi.nb_desc;
	/* workers read it with acquire; cleared while forwarding is stopped
	 * (the caller then sets the queue up with another pool) */
	__atomic_store_n(&rxtok.bind_tbl[port][queue], 0, __ATOMIC_RELEASE);
	rxtok_steer_set_shared(port, queue, false);
	r->rxq_desc -= RTE_MIN(desc, r->rxq_desc);
	r->n_bindings--;
	return 0;
}

int
egw_rxtok_region_dma_map(struct egw_rxtok_region *r, uint16_t port)
{
	struct rte_eth_dev_info info;
	uint64_t k;
	int rc;

	if (r == NULL || !r->used)
		return -EINVAL;
	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	for (k = 0; k < r->size / r->hugepage_size; k++) {
		uint8_t *va = r->base + k * r->hugepage_size;
		rte_iova_t iova = rte_mem_virt2iova(va);

		rc = rte_dev_dma_map(info.device, va,
				     iova != RTE_BAD_IOVA ? iova : (rte_iova_t)(uintptr_t)va,
				     r->hugepage_size);
		if (rc != 0)
			return rte_errno == ENOTSUP ? -ENOTSUP : -rte_errno;
	}
	return 0;
}

struct egw_rxtok_region *
egw_rxtok_binding(uint16_t port, uint16_t queue)
{
	uint8_t b;

	if (port >= RTE_MAX_ETHPORTS || queue >= RTE_MAX_QUEUES_PER_PORT)
		return NULL;
	b = __atomic_load_n(&rxtok.bind_tbl[port][queue], __ATOMIC_ACQUIRE);
	return b != 0 ? &rxtok.regions[b - 1] : NULL;
}

struct rxtok_lcore rxtok_lcores[RTE_MAX_LCORE];

/*
 * A page whose only reference drops: its state goes back to FREE and its
 * mbuf into the batch, which goes back where the region's receivers
 * allocate: the pool's common store (the ring every lcore allocates from),
 * or the giving lcore's own cache when that lcore itself receives into the
 * region (an in-process consumer on a worker). Never to the cache of an
 * lcore that does not receive into it: that is the control lcore for
 * external consumers, and pages parked in its cache would be out of reach
 * of the workers (no worker allocates from another lcore's cache), so a
 * hoarding consumer plus a cache's worth of returned pages could leave the
 * bound queues with nothing to receive into.
 */
void
rxtok_page_put(struct egw_rxtok_region *r, uint32_t token, struct rxtok_put *p)
{
	/* the page's only reference (one record per page): the thread giving
	 * it back is the one that held it, and the pool's enqueue publishes
	 * the mbuf to its next user */
	__atomic_store_n(&r->state[token], RXTOK_PAGE_FREE, __ATOMIC_RELAXED);
	struct rte_mbuf *m = rxtok_page_mbuf(r, token);

	/* the usual case, raw: the mbuf is already as rte_pktmbuf_prefree_seg()
	 * would leave it (one segment, next NULL: set at delivery) and its
	 * pinned buffer's refcount was never taken; only another holder of
	 * the mbuf itself (refcnt > 1: a capture, a mirror) needs the generic
	 * path, which leaves the page to the last of them */
	if (unlikely(rte_mbuf_refcnt_read(m) != 1)) {
		m = rte_pktmbuf_prefree_seg(m);
		if (m == NULL)
			return;
	}
	p->objs[p->n++] = m;
	if (p->n == RTE_DIM(p->objs))
		rxtok_put_flush(r, p);
}

void
rxtok_put_flush(struct egw_rxtok_region *r, struct rxtok_put *p)
{
	unsigned int lc = rte_lcore_id();

	if (p->n == 0)
		return;
	if (lc < RTE_MAX_LCORE &&
	    (__atomic_load_n(&rxtok_lcores[lc].rx_regions, __ATOMIC_RELAXED) >> r->id & 1) != 0)
		/* this lcore receives into r: its cache, where it allocates */
		rte_mempool_put_bulk(r->pool, p->objs, p->n);
	else
		/* no cache: straight to the common store, one bulk enqueue */
		rte_mempool_generic_put(r->pool, p->objs, p->n, NULL);
	p->n = 0;
}

void
rxtok_page_release(struct egw_rxtok_region *r, uint32_t token)
{
	struct rxtok_put p = {.n = 0};

	rxtok_page_put(r, token, &p);
	rxtok_put_flush(r, &p);
}
