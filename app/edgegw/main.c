/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * edgegw: DPDK dataplane for the network edge, driven like dpdk-testpmd.
 *
 *   edgegw [EAL options] -- [options]
 *
 * The main lcore runs the command line, stats and (unless --control-lcore)
 * the control path; it sleeps in poll() when idle, until a worker hands the
 * control path work (egw_control_wake()). Workers forward.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "fwd.h"

/* The main lcore's sleep when the control path runs on a lcore of its own:
 * the granularity of the stats period and of --idle-exit */
#define MAIN_IDLE_MS 10

static void
on_signal(int sig __rte_unused)
{
	__atomic_store_n(&egw.quit, 1, __ATOMIC_RELAXED);
}

/* Main lcore loop until quit: command line, control path, periodic stats,
 * idle exit. */
static void
main_loop(void)
{
	const uint64_t hz = rte_get_tsc_hz();
	uint64_t next_stats = rte_get_tsc_cycles() + (uint64_t)egw.opts.stats_period * hz;
	uint64_t last_rx = 0, last_rx_tsc = rte_get_tsc_cycles();
	const bool ctrl_here = egw.control_lcore == rte_get_main_lcore();

	while (!__atomic_load_n(&egw.quit, __ATOMIC_RELAXED)) {
		uint64_t now;
		unsigned int work = 0;
		bool input;

		if (ctrl_here) {
			unsigned int n, rounds = 0;

			while ((n = egw_control_poll()) != 0 && rounds++ < 64)
				work += n;
			/* until a worker or the terminal wakes it, or the
			 * timeout the control path's work sets */
			input = egw_control_wait(work, egw.opts.interactive ? STDIN_FILENO : -1);
		} else if (egw.opts.interactive) {
			struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};

			input = poll(&pfd, 1, MAIN_IDLE_MS) > 0;
		} else {
			rte_delay_us_sleep(MAIN_IDLE_MS * 1000);
			input = false;
		}
		if (input && egw_cli_interactive_poll(0) != 0)
			break;
		now = rte_get_tsc_cycles();
		if (egw.opts.stats_period != 0 && now >= next_stats) {
			uint16_t pid;

			RTE_ETH_FOREACH_DEV (pid)
				egw_show_port_stats(stdout, pid);
			egw_show_fwd_stats(stdout);
			fflush(stdout);
			next_stats = now + (uint64_t)egw.opts.stats_period * hz;
		}
		if (egw.opts.idle_exit_set && __atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED)) {
			uint64_t rx = egw_total_rx();

			if (last_rx_tsc < egw.fwd_start_tsc)
				last_rx_tsc = egw.fwd_start_tsc;
			if (rx != last_rx) {
				last_rx = rx;
				last_rx_tsc = now;
			} else if ((now - last_rx_tsc) * 1000 / hz >= egw.opts.idle_exit_ms) {
				printf("edgegw: no frame received for %llu ms: exiting\n",
				       (unsigned long long)egw.opts.idle_exit_ms);
				break;
			}
		}
	}
}

int
main(int argc, char **argv)
{
	char err[512];
	int ret, rc, exit_code = 0;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "edgegw: error: EAL initialisation failed: %s\n",
			rte_strerror(rte_errno));
		return 2;
	}
	argc -= ret;
	argv += ret;

	rc = egw_opts_parse(argc, argv, &egw.opts, err, sizeof(err));
	if (rc != 0) {
		if (rc < 0)
			fprintf(stderr, "edgegw: error: %s\n", err);
		rte_eal_cleanup();
		return rc < 0 ? 2 : 0;
	}
	if (egw_app_init() < 0) {
		exit_code = 1;
		goto out;
	}
	if (egw.opts.forward_mode != NULL &&
	    egw_fwd_select(egw.opts.forward_mode, err, sizeof(err)) < 0) {
		fprintf(stderr, "edgegw: error: --forward-mode: %s\n", err);
		exit_code = 2;
		goto out;
	}
	if (egw.opts.cmdline_file != NULL) {
		rc = egw_cli_run_file(egw.opts.cmdline_file);
		if (rc != 0) {
			fprintf(stderr, "edgegw: %s: stopped at the first error\n",
				egw.opts.cmdline_file);
			exit_code = 1;
			goto out;
		}
	}
	if ((egw.opts.auto_start || !egw.opts.interactive) &&
	    !__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&egw.quit, __ATOMIC_RELAXED)) {
		if (egw_fwd_start(err, sizeof(err)) < 0) {
			fprintf(stderr, "edgegw: error: start: %s\n", err);
			exit_code = 1;
			goto out;
		}
		printf("edgegw: forwarding started (engine %s)%s\n", egw.engine->name,
		       egw.opts.interactive ? "" : "; Ctrl-C or SIGTERM to quit");
	}
	if (egw.opts.interactive && egw_cli_interactive_init() < 0) {
		fprintf(stderr, "edgegw: error: cannot open the command line\n");
		exit_code = 1;
		goto out;
	}
	main_loop();
out:
	if (egw.launched) {
		egw_app_stop();
		/* sessions end (PADTs) before the counters are printed and
		 * written, so the shutdown appears in them */
		egw_pppoe_stage_shutdown();
		/* their accounting Stops answered, then Accounting-Off */
		egw_radius_stage_shutdown();
		egw_stats_print_final(stdout);
		if (egw.opts.stats_json != NULL && egw_stats_json(egw.opts.stats_json) < 0)
			exit_code = exit_code ? exit_code : 1;
	}
	egw_cli_interactive_exit();
	egw_app_fini();
	rte_eal_cleanup();
	return exit_code;
}
