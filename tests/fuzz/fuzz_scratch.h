/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A scratch directory per fuzzer process: /tmp/<prefix>.<pid>.XXXXXX. A
 * crash ends the process with _Exit() (libFuzzer's handler), so atexit()
 * cleanup does not run: each new process first removes the directories of
 * processes of the same prefix that no longer exist. Only plain entries are
 * expected inside (files, sockets), never subdirectories.
 */
#ifndef EGW_FUZZ_SCRATCH_H
#define EGW_FUZZ_SCRATCH_H

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Remove the entries of a directory, then the directory. */
static inline void
fuzz_scratch_remove(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* Make /tmp/<prefix>.<pid>.XXXXXX in buf, after removing the directories
 * left by dead processes. Returns 0 or -errno. */
static inline int
fuzz_scratch_make(const char *prefix, char *buf, size_t len)
{
	char mine[64], path[PATH_MAX];
	size_t plen = strlen(prefix);
	struct dirent *e;
	DIR *d = opendir("/tmp");

	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			long pid;
			char *end;

			if (strncmp(e->d_name, prefix, plen) != 0 || e->d_name[plen] != '.')
				continue;
			pid = strtol(e->d_name + plen + 1, &end, 10);
			if (*end != '.' || pid <= 0 || pid == (long)getpid())
				continue;
			if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue;
			snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
			fuzz_scratch_remove(path);
		}
		closedir(d);
	}
	snprintf(mine, sizeof(mine), "/tmp/%s.%ld.XXXXXX", prefix, (long)getpid());
	if (strlen(mine) >= len)
		return -ENAMETOOLONG;
	memcpy(buf, mine, strlen(mine) + 1);
	return mkdtemp(buf) != NULL ? 0 : -errno;
}

#endif /* EGW_FUZZ_SCRATCH_H */
