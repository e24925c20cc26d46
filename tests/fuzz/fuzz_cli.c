/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the command language (app/edgegw/cli.c,
 * cli_rxtok.c, cli_esp.c, cli_pppoe.c and what the commands call), against a live application on
 * two net_null ports with one worker lcore, as tests/unit/app/test_cli.c
 * brings it up. EAL: no hugepages, no PCI, no shared files, no telemetry
 * socket.
 *
 * Input: up to MAX_LINES lines (split at newline), each cut to LINE_CUT
 * bytes with NUL bytes turned into spaces, each run with egw_cli_run_line().
 *
 * Checked, for each line:
 *  - no crash, no ASan or UBSan report; the status is 0 or a negative errno;
 *  - a line that fails changes nothing: the engine, the port roles, whether
 *    forwarding runs, the rxtokens regions, bindings and consumers, the
 *    listening socket, the ESP SAs and policies and the ESP state file, the
 *    PPPoE configuration (settings, service names, pools, number of users
 *    and sessions) are as before (cli.c: "a failing command ... leaves
 *    the state as it was");
 *  - only 'quit' sets egw.quit (reset after it).
 * Forwarding started by a line is stopped after the next line (so that
 * line runs against a running forwarder, and workers never run long); the
 * control path is polled once after each line, as the interactive loop does.
 *
 * Side effects, kept in bounds by the harness:
 *  - files: the target runs in its own directory, /tmp/fuzz_cli.<pid>.XXXXXX
 *    (LLVMFuzzerInitialize makes relative paths among libFuzzer's arguments
 *    absolute first, and sends crash artifacts to the directory it was
 *    started in unless -artifact_prefix says otherwise). A line that names
 *    a file to write or a socket to create ('dump', 'listen', 'state-file')
 *    or to read ('replay') is skipped if it contains a '/' or a "-" word (stdin for
 *    libpcap), so every file lands in that directory; the directory is
 *    emptied after each input that had such a line (seed.pcap, a 3-frame
 *    capture for 'set fwd replay', is written again) and removed at exit
 *    (after a crash, by the next run: fuzz_scratch.h).
 *    Note 'rxtokens listen <path>' unlinks <path> first: without this rule
 *    the fuzzer could delete any file on the machine.
 *  - hugepages: 'rxtokens region add' maps a MFD_HUGETLB memfd. A line with
 *    a 'size' word whose value (as region add parses it) is over
 *    REGION_MAX, or would bring the regions alive over REGIONS_MAX, is
 *    skipped. After each input every consumer and the listening socket go
 *    (egw_rxtok_fini(), which leaves the library usable) and so does every
 *    region without a binding. A binding cannot be undone: the region bound
 *    to a queue stays until exit (each of the two ports has one RX queue,
 *    so at most two such regions).
 *  - time: 'rxtokens wait' on an external consumer waits for a process that
 *    never comes (1 s at least): such a line is skipped.
 * The engine, the port roles, the ESP SAs and policies, the PPPoE service
 * names and pools and egw.quit are reset after each input (the ESP state
 * file stays set); the replay engine's loaded capture, bound regions, PPP
 * users (the library cannot list them) and the other PPPoE settings are
 * state that carries over (a crash found after them may need the inputs
 * before it).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include "cli.h"
#include "egw_rxtok.h"
#include "fuzz_scratch.h"
#include "fwd.h"
#include "rxtok_private.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINES 16
#define LINE_CUT 600
#define REGION_MAX (16ull << 20)
#define REGIONS_MAX (48ull << 20)
#define SEED_PCAP "seed.pcap"
#define CHECK_RXQ 16

static FILE *diag; /* stderr as it was before libFuzzer's -close_fd_mask */

#define FUZZ_ASSERT(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(diag, "fuzz_cli: invariant broken (%s:%d): ", __FILE__, __LINE__); \
			fprintf(diag, __VA_ARGS__);                                                \
			fprintf(diag, "\n");                                                       \
			fflush(diag);                                                              \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static char scratch[64];
static char **fz_argv; /* the rewritten libFuzzer arguments, kept for the process' life */

/* ---- scratch directory ------------------------------------------------- */

static void
write_seed_pcap(void)
{
	/* UDP to port 7001, an ARP request, a PPPoE PADI */
	static const uint8_t udp[60] = {
		0x02, 0,  0,    0,    0,    1,    0x02, 0,  0, 0, 0,   2,   0x08, 0x00, 0x45, 0,
		0,    32, 0,    0,    0,    0,    64,   17, 0, 0, 10,  0,   0,    2,    10,   0,
		0,    1,  0x1b, 0x59, 0x1b, 0x59, 0,    12, 0, 0, 'f', 'u', 'z',  'z',
	};
	static const uint8_t arp[60] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 2, 0x08, 0x06, 0, 1,
		0x08, 0,    6,    4,    0,    1,    0x02, 0, 0, 0, 0, 2, 10,   0,    0, 2,
	};
	static const uint8_t padi[60] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0,    0,    0, 2,
		0x88, 0x63, 0x11, 0x09, 0,    0,    0,    4, 0x01, 0x01, 0, 0,
	};
	const uint8_t *frames[] = {udp, arp, padi};
	struct pcap_pkthdr h = {.caplen = 60, .len = 60};
	pcap_dumper_t *d;
	pcap_t *p;
	unsigned int i;

	p = pcap_open_dead(DLT_EN10MB, 65535);
	FUZZ_ASSERT(p != NULL, "pcap_open_dead");
	d = pcap_dump_open(p, SEED_PCAP);
	FUZZ_ASSERT(d != NULL, "pcap_dump_open %s/%s: %s", scratch, SEED_PCAP, pcap_geterr(p));
	for (i = 0; i < RTE_DIM(frames); i++)
		pcap_dump((u_char *)d, &h, frames[i]);
	pcap_dump_close(d);
	pcap_close(p);
}

/* Remove what the commands left in the scratch directory (cwd). */
static void
empty_scratch(void)
{
	DIR *d = opendir(".");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlink(e->d_name);
	closedir(d);
}

static void
at_exit(void)
{
	if (__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED))
		egw_fwd_stop();
	egw_app_fini();
	if (chdir("/") == 0)
		fuzz_scratch_remove(scratch);
}

/* libFuzzer reads its arguments after LLVMFuzzerInitialize: make relative
 * paths absolute before leaving the directory they are relative to. */
static char *
absolute(const char *cwd, const char *prefix, const char *path)
{
	size_t n = strlen(cwd) + strlen(prefix) + strlen(path) + 2;
	char *s = malloc(n);

	FUZZ_ASSERT(s != NULL, "malloc");
	if (path[0] == '/' || path[0] == '\0')
		snprintf(s, n, "%s%s", prefix, path);
	else
		snprintf(s, n, "%s%s/%s", prefix, cwd, path);
	return s;
}

static void
rewrite_args(int *argc, char ***argv)
{
	static const char *const path_flags[] = {
		"-artifact_prefix=",    "-exact_artifact_path=", "-dict=",
		"-merge_control_file=", "-features_dir=",        NULL,
	};
	char cwd[PATH_MAX];
	bool have_prefix = false;
	int i, n = 0;

	FUZZ_ASSERT(getcwd(cwd, sizeof(cwd)) != NULL, "getcwd");
	fz_argv = calloc((size_t)*argc + 2, sizeof(char *));
	FUZZ_ASSERT(fz_argv != NULL, "calloc");
	fz_argv[n++] = (*argv)[0];
	for (i = 1; i < *argc; i++) {
		const char *a = (*argv)[i];
		unsigned int k;

		if (a[0] != '-') {
			fz_argv[n++] = absolute(cwd, "", a);
			continue;
		}
		for (k = 0; path_flags[k] != NULL; k++)
			if (strncmp(a, path_flags[k], strlen(path_flags[k])) == 0)
				break;
		if (path_flags[k] == NULL) {
			fz_argv[n++] = (*argv)[i];
			continue;
		}
		if (k == 0 || k == 1)
			have_prefix = true;
		fz_argv[n++] = absolute(cwd, path_flags[k], a + strlen(path_flags[k]));
	}
	if (!have_prefix)
		fz_argv[n++] = absolute(cwd, "-artifact_prefix=", "./");
	fz_argv[n] = NULL;
	*argc = n;
	*argv = fz_argv;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* test_cli's EAL arguments, and no telemetry socket in /var/run/dpdk */
	char *eal_argv[] = {
		(*argv)[0],
		"--no-huge",
		"-m",
		"512",
		"--no-pci",
		"--no-shconf",
		"-l",
		"0,1",
		"--vdev",
		"net_null0",
		"--vdev",
		"net_null1",
		"--log-level=error",
		"--no-telemetry",
		NULL,
	};
	int fd;

	fd = dup(STDERR_FILENO);
	diag = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (diag == NULL)
		diag = stderr;
	rewrite_args(argc, argv);
	FUZZ_ASSERT(fuzz_scratch_make("fuzz_cli", scratch, sizeof(scratch)) == 0,
		    "scratch directory in /tmp");
	FUZZ_ASSERT(chdir(scratch) == 0, "chdir %s: %s", scratch, strerror(errno));
	write_seed_pcap();

	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		/* the environment (no net_null driver, no memory): the unit
		 * test app_cli reports a real regression */
		fprintf(diag, "fuzz_cli: SKIP: rte_eal_init: %s\n", rte_strerror(rte_errno));
		if (chdir("/") == 0)
			fuzz_scratch_remove(scratch);
		exit(77);
	}
	egw_opts_default(&egw.opts);
	egw.opts.mbufs = 4096;
	if (egw_app_init() < 0) {
		fprintf(diag, "fuzz_cli: app init failed\n");
		exit(1);
	}
	FUZZ_ASSERT(egw.nb_ports == 2 && egw.nb_workers == 1, "2 ports and 1 worker, got %u and %u",
		    egw.nb_ports, egw.nb_workers);
	atexit(at_exit);
	return 0;
}

/* ---- which lines run ---------------------------------------------------- */

struct words {
	unsigned int n;
	char *w[64];
	char buf[LINE_CUT + 1];
};

/* The words rte_cmdline sees: a command ends at '#', '\r' or '\n'. */
static void
split_words(const char *line, struct words *ws)
{
	char *save = NULL, *t;

	snprintf(ws->buf, sizeof(ws->buf), "%s", line);
	ws->buf[strcspn(ws->buf, "#\r\n")] = '\0';
	ws->n = 0;
	for (t = strtok_r(ws->buf, " \t", &save); t != NULL && ws->n < RTE_DIM(ws->w);
	     t = strtok_r(NULL, " \t", &save))
		ws->w[ws->n++] = t;
}

static bool
has_word(const struct words *ws, const char *w)
{
	unsigned int i;

	for (i = 0; i < ws->n; i++)
		if (strcmp(ws->w[i], w) == 0)
			return true;
	return false;
}

/* The size a 'size' word's value stands for, parsed as cli_rxtok.c's
 * parse_size() does; 0 if it would reject it. */
static uint64_t
region_size(const char *s)
{
	char num[32], *end;
	size_t n = strlen(s);
	uint64_t mul = 1;
	unsigned long long v;

	if (n == 0 || n >= sizeof(num))
		return 0;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'K':
	case 'k': mul = 1ull << 10; break;
	case 'M':
	case 'm': mul = 1ull << 20; break;
	case 'G':
	case 'g': mul = 1ull << 30; break;
	default: break;
	}
	if (mul != 1)
		num[n - 1] = '\0';
	if (num[0] < '0' || num[0] > '9')
		return 0;
	errno = 0;
	v = strtoull(num, &end, 10);
	if (*end != '\0' || errno == ERANGE || v == 0 || v > UINT64_MAX / mul)
		return 0;
	return v * mul;
}

static uint64_t
regions_alive(void)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < EGW_RXTOK_MAX_REGIONS; i++)
		if (rxtok.regions[i].used)
			sum += rxtok.regions[i].size;
	return sum;
}

/* False for a line the harness does not run (see the header). Sets *files
 * for a line that may leave files in the scratch directory. */
static bool
line_allowed(const char *line, bool *files)
{
	struct words ws;
	unsigned int i;

	split_words(line, &ws);
	if (has_word(&ws, "replay") || has_word(&ws, "listen") || has_word(&ws, "dump") ||
	    has_word(&ws, "state-file")) {
		if (strchr(line, '/') != NULL || has_word(&ws, "-"))
			return false;
		*files = true;
	}
	for (i = 0; i + 1 < ws.n; i++) {
		uint64_t sz;

		if (strcmp(ws.w[i], "size") != 0)
			continue;
		sz = region_size(ws.w[i + 1]);
		if (sz > REGION_MAX || regions_alive() + sz > REGIONS_MAX)
			return false;
	}
	if (has_word(&ws, "wait")) {
		for (i = 0; i < ws.n; i++) {
			struct egw_rxtok_consumer *c = egw_rxtok_consumer_find(ws.w[i]);

			if (c != NULL && !egw_rxtok_consumer_attached(c))
				return false;
		}
	}
	return true;
}

/* ---- "a bad line changes nothing" ----------------------------------------- */

struct snap {
	const struct egw_fwd_engine *engine;
	enum egw_port_role role[RTE_MAX_ETHPORTS];
	int running;
	bool region_used[EGW_RXTOK_MAX_REGIONS];
	uint64_t region_size[EGW_RXTOK_MAX_REGIONS];
	const struct egw_rxtok_region *binding[2][CHECK_RXQ];
	uint32_t n_consumers;
	uint32_t hi;
	uint64_t consumers_sum; /* of the consumers' addresses and slots */
	int listen_fd;
	unsigned int esp_sa[2], esp_policies;
	uint64_t esp_sum; /* of the SAs' settings and the policies */
	const char *esp_state;
	struct egw_pppoe_config pppoe;
	uint64_t pppoe_sum; /* of the service names and pools */
	unsigned int pppoe_sessions;
};

static void
esp_mix(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 0x100000001b3ull;
}

static int
esp_snap_sa(const struct egw_esp_sa_info *in, void *arg)
{
	esp_mix(arg, &in->conf, sizeof(in->conf));
	return 0;
}

static int
esp_snap_policy(const struct egw_esp_policy *p, uint64_t hits __rte_unused, void *arg)
{
	struct snap *s = arg;

	s->esp_policies++;
	esp_mix(&s->esp_sum, p, sizeof(*p));
	return 0;
}

static void
pppoe_snap_name(const char *name, void *arg)
{
	esp_mix(arg, name, strlen(name) + 1);
}

static void
pppoe_snap_pool(const char *prefix, unsigned int used, unsigned int size, void *arg)
{
	esp_mix(arg, prefix, strlen(prefix) + 1);
	esp_mix(arg, &used, sizeof(used));
	esp_mix(arg, &size, sizeof(size));
}

static void
snap_take(struct snap *s)
{
	unsigned int count[4];
	unsigned int i, q;

	memset(s, 0, sizeof(*s));
	s->engine = egw.engine;
	for (i = 0; i < RTE_MAX_ETHPORTS; i++)
		s->role[i] = egw.ports[i].role;
	s->running = __atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED);
	for (i = 0; i < EGW_RXTOK_MAX_REGIONS; i++) {
		s->region_used[i] = rxtok.regions[i].used;
		s->region_size[i] = rxtok.regions[i].size;
	}
	for (i = 0; i < 2; i++)
		for (q = 0; q < CHECK_RXQ; q++)
			s->binding[i][q] = egw_rxtok_binding((uint16_t)i, (uint16_t)q);
	s->n_consumers = rxtok.n_consumers;
	s->hi = rxtok.hi;
	for (i = 0; i < rxtok.hi; i++)
		s->consumers_sum += (uint64_t)(uintptr_t)rxtok.consumers[i] * (i + 1);
	s->listen_fd = rxtok.listen_fd;
	s->esp_sa[0] = egw_esp_sa_count(EGW_ESP_DIR_OUT);
	s->esp_sa[1] = egw_esp_sa_count(EGW_ESP_DIR_IN);
	s->esp_sum = 0xcbf29ce484222325ull;
	egw_esp_sa_walk(esp_snap_sa, &s->esp_sum);
	egw_esp_policy_walk(EGW_ESP_DIR_OUT, esp_snap_policy, s);
	egw_esp_policy_walk(EGW_ESP_DIR_IN, esp_snap_policy, s);
	s->esp_state = egw_esp_state_path();
	egw_pppoe_config_get(&s->pppoe);
	s->pppoe_sum = 0xcbf29ce484222325ull;
	egw_pppoe_services_walk(pppoe_snap_name, &s->pppoe_sum);
	egw_pppoe_pools_walk(pppoe_snap_pool, &s->pppoe_sum);
	s->pppoe_sessions = egw_pppoe_session_count(count);
}

static void
snap_check(const struct snap *a, const struct snap *b, const char *line, int rc)
{
	unsigned int i, q;

#define SAME(field, what)                                                                       \
	FUZZ_ASSERT(a->field == b->field, "line '%.100s' failed (%d) but changed %s", line, rc, \
		    what)
	SAME(engine, "the engine");
	for (i = 0; i < RTE_MAX_ETHPORTS; i++)
		SAME(role[i], "a port role");
	SAME(running, "whether forwarding runs");
	for (i = 0; i < EGW_RXTOK_MAX_REGIONS; i++) {
		SAME(region_used[i], "the regions");
		SAME(region_size[i], "a region's size");
	}
	for (i = 0; i < 2; i++)
		for (q = 0; q < CHECK_RXQ; q++)
			SAME(binding[i][q], "a binding");
	SAME(n_consumers, "the consumer count");
	SAME(hi, "the consumer table");
	SAME(consumers_sum, "the consumers");
	SAME(listen_fd, "the listening socket");
	SAME(esp_sa[0], "the outbound SAs");
	SAME(esp_sa[1], "the inbound SAs");
	SAME(esp_policies, "the ESP policies");
	SAME(esp_sum, "an SA or a policy");
	SAME(pppoe_sum, "the PPPoE service names or pools");
	SAME(pppoe_sessions, "the PPPoE sessions");
	SAME(pppoe.nb_users, "the PPP users");
	SAME(pppoe.dns[0], "the DNS servers");
	SAME(pppoe.dns[1], "the DNS servers");
	SAME(pppoe.max_sessions, "the session limit");
	SAME(pppoe.max_per_mac, "the per-MAC limit");
	SAME(pppoe.mru, "the MRU");
	SAME(pppoe.mss_mode, "the MSS clamping");
	SAME(pppoe.mss_value, "the MSS clamping");
	SAME(pppoe.keepalive_s, "the keepalive");
	SAME(pppoe.keepalive_misses, "the keepalive");
	SAME(pppoe.auth, "the authentication");
	FUZZ_ASSERT(strcmp(a->pppoe.ac_name, b->pppoe.ac_name) == 0,
		    "line '%.100s' failed (%d) but changed the AC-Name", line, rc);
	FUZZ_ASSERT((a->esp_state == NULL) == (b->esp_state == NULL) &&
			    (a->esp_state == NULL || strcmp(a->esp_state, b->esp_state) == 0),
		    "line '%.100s' failed (%d) but changed the ESP state file", line, rc);
#undef SAME
}

/* ---- the input -------------------------------------------------------------- */

static int
esp_first_policy(const struct egw_esp_policy *p, uint64_t hits __rte_unused, void *arg)
{
	*(uint32_t *)arg = p->id;
	return 1;
}

static int
esp_first_sa(const struct egw_esp_sa_info *in, void *arg)
{
	struct egw_esp_sa_conf *c = arg;

	c->spi = in->conf.spi;
	c->dir = in->conf.dir;
	return 1;
}

/* Delete every ESP policy, then every SA. */
static void
esp_reset(void)
{
	struct egw_esp_sa_conf c;
	enum egw_esp_dir d;
	char err[256];
	uint32_t id;

	for (d = EGW_ESP_DIR_OUT; d <= EGW_ESP_DIR_IN; d++)
		while (egw_esp_policy_walk(d, esp_first_policy, &id) != 0)
			FUZZ_ASSERT(egw_esp_policy_del(d, id) == 0, "ESP policy %u: delete", id);
	while (egw_esp_sa_walk(esp_first_sa, &c) != 0)
		FUZZ_ASSERT(egw_esp_sa_del(c.spi, c.dir, err, sizeof(err)) == 0,
			    "ESP SA 0x%x: delete: %s", c.spi, err);
	egw_esp_stage_update();
}

/* Collect the PPPoE service names and pools, then delete them. */
struct pppoe_names {
	unsigned int n;
	char name[64][EGW_PPPOE_NAME_MAX + 1];
};

static void
pppoe_collect(const char *name, void *arg)
{
	struct pppoe_names *pn = arg;

	if (pn->n < RTE_DIM(pn->name))
		snprintf(pn->name[pn->n++], sizeof(pn->name[0]), "%s", name);
}

static void
pppoe_collect_pool(const char *prefix, unsigned int used __rte_unused,
		   unsigned int size __rte_unused, void *arg)
{
	pppoe_collect(prefix, arg);
}

static void
pppoe_reset(void)
{
	static struct pppoe_names pn;
	char err[256];
	unsigned int i;

	pn.n = 0;
	egw_pppoe_services_walk(pppoe_collect, &pn);
	for (i = 0; i < pn.n; i++)
		FUZZ_ASSERT(egw_pppoe_service_del(pn.name[i]) == 0, "service %s: delete",
			    pn.name[i]);
	pn.n = 0;
	egw_pppoe_pools_walk(pppoe_collect_pool, &pn);
	for (i = 0; i < pn.n; i++)
		FUZZ_ASSERT(egw_pppoe_pool_del(pn.name[i], err, sizeof(err)) == 0,
			    "pool %s: delete: %s", pn.name[i], err);
}

static void
reset(bool files)
{
	unsigned int i;
	char err[128];

	if (__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED))
		egw_fwd_stop();
	egw_control_poll();
	rte_spinlock_lock(&egw.ctrl_lock);
	egw_rxtok_fini();
	for (i = 0; i < EGW_RXTOK_MAX_REGIONS; i++) {
		struct egw_rxtok_region *r = egw_rxtok_region_get(i);

		if (r != NULL && r->n_bindings == 0)
			FUZZ_ASSERT(egw_rxtok_region_destroy(r) == 0, "region %u: destroy", i);
	}
	if (egw.esp)
		esp_reset();
	if (egw.pppoe)
		pppoe_reset();
	rte_spinlock_unlock(&egw.ctrl_lock);
	FUZZ_ASSERT(egw_fwd_select("io", err, sizeof(err)) == 0, "set fwd io: %s", err);
	for (i = 0; i < RTE_MAX_ETHPORTS; i++)
		egw.ports[i].role = EGW_ROLE_NONE;
	__atomic_store_n(&egw.quit, 0, __ATOMIC_RELAXED);
	if (files) {
		empty_scratch();
		write_seed_pcap();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[LINE_CUT + 1];
	size_t pos = 0;
	unsigned int nl;
	bool files = false;
	int started = 0; /* lines run since forwarding started; 0: not running */

	for (nl = 0; nl < MAX_LINES && pos < size; nl++) {
		const uint8_t *end = memchr(data + pos, '\n', size - pos);
		size_t len = (end != NULL ? (size_t)(end - data) : size) - pos, i;
		struct snap before, after;
		int rc;

		for (i = 0; i < len && i < LINE_CUT; i++)
			line[i] = data[pos + i] == '\0' ? ' ' : (char)data[pos + i];
		line[i] = '\0';
		pos += len + 1;
		if (!line_allowed(line, &files))
			continue;

		snap_take(&before);
		rc = egw_cli_run_line(line);
		snap_take(&after);
		FUZZ_ASSERT(rc <= 0, "line '%.100s' returned %d", line, rc);
		if (rc < 0)
			snap_check(&before, &after, line, rc);
		if (__atomic_load_n(&egw.quit, __ATOMIC_RELAXED)) {
			struct words ws;

			split_words(line, &ws);
			FUZZ_ASSERT(rc == 0 && ws.n == 1 && strcmp(ws.w[0], "quit") == 0,
				    "line '%.100s' (%d) set quit", line, rc);
			__atomic_store_n(&egw.quit, 0, __ATOMIC_RELAXED);
		}

		if (__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED)) {
			if (started++ != 0) {
				FUZZ_ASSERT(egw_fwd_stop() == 0, "stop");
				started = 0;
			}
		} else {
			started = 0;
		}
		egw_control_poll();
	}
	reset(files);
	return 0;
}
