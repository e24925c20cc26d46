/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command language against a live application on two net_null ports:
 * each line's status, and that a failing line changes nothing.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>

#include "fwd.h"
#include "check.h"

static int
run(const char *line)
{
	int rc = egw_cli_run_line(line);

	printf("[test] '%.60s' -> %d\n", line, rc);
	return rc;
}

#define OK(line) CHECK(run(line) == 0, "'%s' should succeed", line)
#define BAD(line) CHECK(run(line) < 0, "'%s' should fail", line)

static int
write_pcap(const char *path, unsigned int n)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d;
	uint8_t frame[60] = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45};
	struct pcap_pkthdr h = {.caplen = sizeof(frame), .len = sizeof(frame)};
	unsigned int i;

	if (p == NULL)
		return -1;
	d = pcap_dump_open(p, path);
	if (d == NULL) {
		pcap_close(p);
		return -1;
	}
	for (i = 0; i < n; i++)
		pcap_dump((u_char *)d, &h, frame);
	pcap_dump_close(d);
	pcap_close(p);
	return 0;
}

static void
check_identity(void)
{
	uint16_t pid;

	RTE_ETH_FOREACH_DEV (pid) {
		struct egw_qstats s;

		egw_qstats_sum(pid, &s);
		CHECK(egw_stats_identity_ok(pid, &s), "port %u: accounting identity", pid);
	}
}

int
main(int argc, char **argv)
{
	char longline[700], pcap_path[] = "/tmp/egw_test_cli_XXXXXX";
	uint64_t gen = 0;
	struct egw_qstats s;
	int fd;

	if (rte_eal_init(argc, argv) < 0) {
		printf("EAL init failed\n");
		return 1;
	}
	egw_opts_default(&egw.opts);
	egw.opts.mbufs = 4096;
	if (egw_app_init() < 0) {
		printf("app init failed\n");
		return 1;
	}
	CHECK(egw.nb_ports == 2 && egw.nb_workers == 1, "2 ports, 1 worker");

	OK("help");
	OK("help ports");
	OK("help all");
	BAD("help nosuchtopic");
	OK("show config");

	/* port role: bad input leaves the role alone */
	OK("port role 0 access");
	CHECK(egw.ports[0].role == EGW_ROLE_ACCESS, "role access");
	BAD("port role 0 sideways");
	CHECK(egw.ports[0].role == EGW_ROLE_ACCESS, "role unchanged after bad role");
	BAD("port role 5 uplink");
	BAD("port role x uplink");
	BAD("port role 0");
	OK("port role 1 uplink");
	CHECK(egw.ports[1].role == EGW_ROLE_UPLINK, "role uplink");

	/* set fwd */
	OK("set fwd mac");
	CHECK(egw.engine == &egw_fwd_mac, "engine mac");
	BAD("set fwd nosuch");
	BAD("set fwd io extra");
	BAD("set fwd replay /nonexistent/x.pcap");
	BAD("set fwd replay");
	CHECK(egw.engine == &egw_fwd_mac, "engine unchanged after bad set fwd");

	/* show/clear */
	OK("show port stats all");
	OK("show port stats 1");
	BAD("show port stats 2");
	BAD("show port stats abc");
	BAD("show port stats -1");
	OK("show port xstats 0");
	BAD("show port xstats all");
	OK("clear port stats all");
	OK("clear port stats 0");
	BAD("clear port stats 7");
	OK("show fwd stats");
	BAD("show fwd nonsense");

	/* syntax errors */
	BAD("nosuch command");
	BAD("show");
	BAD("start now");
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	CHECK(run(longline) == -E2BIG, "long line");

	/* start/stop and what is refused while running */
	OK("set fwd io");
	OK("start");
	CHECK(__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED) == 1, "running");
	BAD("start");
	BAD("set fwd mac");
	CHECK(egw.engine == &egw_fwd_io, "engine unchanged while running");
	BAD("port role 1 access");
	CHECK(egw.ports[1].role == EGW_ROLE_UPLINK, "role unchanged while running");
	rte_delay_us_sleep(100 * 1000);
	OK("show fwd stats");
	OK("stop");
	BAD("stop");
	egw_qstats_sum(0, &s);
	CHECK(s.rx > 0, "net_null frames received (%lu)", (unsigned long)s.rx);
	check_identity();

	/* gateway on net_null frames (64 bytes, ethertype 0: an 802.3 frame of
	 * length 0): every one is classified and dropped, none forwarded */
	{
		struct egw_qstats before;

		egw_qstats_sum(0, &before);
		OK("set fwd gateway");
		OK("start");
		rte_delay_us_sleep(50 * 1000);
		OK("stop");
		egw_qstats_sum(0, &s);
		CHECK(s.rx > before.rx, "gateway received");
		CHECK(s.tx == before.tx, "gateway forwarded nothing");
		CHECK(s.drop[EGW_DROP_BAD_FRAME] - before.drop[EGW_DROP_BAD_FRAME] +
				      s.drop[EGW_DROP_OTHERHOST] -
				      before.drop[EGW_DROP_OTHERHOST] ==
			      s.rx - before.rx,
		      "gateway dropped every null frame as bad or otherhost");
		check_identity();
	}

	/* replay at a fixed rate on port 0 */
	fd = mkstemp(pcap_path);
	CHECK(fd >= 0 && write_pcap(pcap_path, 3) == 0, "write pcap");
	if (fd >= 0)
		close(fd);
	BAD("set fwd replay /nonexistent.pcap 1000");
	{
		char line[128];

		snprintf(line, sizeof(line), "set fwd replay %s 1000 port 0", pcap_path);
		OK(line);
		snprintf(line, sizeof(line), "set fwd replay %s 0", pcap_path);
		BAD(line);
		snprintf(line, sizeof(line), "set fwd replay %s 1000 port 9", pcap_path);
		BAD(line);
	}
	CHECK(egw.engine == &egw_fwd_replay, "engine replay");
	OK("show config");
	OK("start");
	rte_delay_us_sleep(300 * 1000);
	OK("stop");
	for (uint16_t i = 0; i < egw.nb_workers; i++)
		gen += EGW_CNT_READ(egw.workers[i]->stats.gen_tx);
	/* 1000 pps for 0.3 s: about 300, never a whole second's worth */
	CHECK(gen >= 150 && gen <= 600, "replay rate: %lu frames in 0.3 s at 1000 pps",
	      (unsigned long)gen);
	CHECK(EGW_CNT_READ(egw.workers[0]->stats.tx_out[1]) ==
		      EGW_CNT_READ(egw.workers[0]->stats.tx_out[1]),
	      "tx_out readable");
	check_identity();
	unlink(pcap_path);

	OK("quit");
	CHECK(__atomic_load_n(&egw.quit, __ATOMIC_RELAXED) == 1, "quit sets quit");

	egw_app_fini();
	rte_eal_cleanup();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
