/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sequence-number state file.
 *
 * AES-GCM and ChaCha20-Poly1305 must never see one nonce twice under a key;
 * the nonce carries the packet's sequence number, so an outbound SA that
 * starts again at 1 after a restart with the same configured key would
 * repeat nonces. Each outbound SA therefore has a limit on disk: the
 * highest number it may use. Workers never pass the limit; the control path
 * raises it ahead of them and writes it durably before they may use the new
 * numbers. After a restart an SA with the same SPI and key starts above the
 * stored limit.
 *
 * Format (text, one SA per line, then a CRC-32C of everything before the
 * last line):
 *   edgegw-esp-state 1
 *   sa <spi hex> <fingerprint 32 hex> <limit>
 *   crc <8 hex>
 * A file that does not parse or whose CRC does not match is not trusted:
 * outbound SAs are refused until the operator removes or replaces it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_hash_crc.h>

#include "esp_private.h"
#include "esp_state.h"

#define STATE_MAX EGW_ESP_STATE_MAX
#define STATE_MAGIC "edgegw-esp-state 2\n"
#define STATE_MAGIC_V1 "edgegw-esp-state 1\n"

struct state_ent {
	uint8_t fp[16];
	uint64_t limit;
};

static char state_path[PATH_MAX];
static bool state_set_, state_ok;
static struct state_ent *ents;
static unsigned int n_ents;
static char *wbuf; /* file image, STATE_MAX lines */
#define LINE_MAX_LEN 80
#define WBUF_LEN (sizeof(STATE_MAGIC) + (size_t)STATE_MAX * LINE_MAX_LEN + 32)

const char *
esp_state_path(void)
{
	return state_set_ ? state_path : NULL;
}

bool
esp_state_trusted(void)
{
	return state_set_ && state_ok;
}

void
esp_state_close(void)
{
	free(ents);
	free(wbuf);
	ents = NULL;
	wbuf = NULL;
	n_ents = 0;
	state_set_ = state_ok = false;
	state_path[0] = '\0';
}

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

static int
parse_fp(const char *s, uint8_t fp[16])
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		int hi = hexval(s[2 * i]), lo = hi < 0 ? -1 : hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		fp[i] = (uint8_t)(hi << 4 | lo);
	}
	return s[32] == '\0' ? 0 : -1;
}

/* Parse a whole file image into tab; -EINVAL with a reason. */
static int
parse(char *buf, size_t len, struct state_ent *tab, unsigned int *n, char *err, size_t errlen)
{
	char *line, *end = buf + len, *crc_line;
	unsigned int lineno = 1;
	uint32_t crc;

	bool v1;

	*n = 0;
	if (len < sizeof(STATE_MAGIC) - 1) {
		snprintf(err, errlen, "not an edgegw ESP state file (bad first line)");
		return -EINVAL;
	}
	v1 = memcmp(buf, STATE_MAGIC_V1, sizeof(STATE_MAGIC_V1) - 1) == 0;
	if (!v1 && memcmp(buf, STATE_MAGIC, sizeof(STATE_MAGIC) - 1) != 0) {
		snprintf(err, errlen, "not an edgegw ESP state file (bad first line)");
		return -EINVAL;
	}
	if (len == 0 || end[-1] != '\n') {
		snprintf(err, errlen, "truncated (no final newline)");
		return -EINVAL;
	}
	/* the CRC line is the last line */
	crc_line = end - 1;
	while (crc_line > buf && crc_line[-1] != '\n')
		crc_line--;
	if (sscanf(crc_line, "crc %8" SCNx32 "\n", &crc) != 1 ||
	    (uint32_t)(end - crc_line) != sizeof("crc 01234567\n") - 1) {
		snprintf(err, errlen, "truncated (no CRC line)");
		return -EINVAL;
	}
	if (rte_hash_crc(buf, (uint32_t)(crc_line - buf), 0) != crc) {
		snprintf(err, errlen, "CRC mismatch: the file was changed or partly written");
		return -EINVAL;
	}
	line = buf + sizeof(STATE_MAGIC) - 1;
	while (line < crc_line) {
		char *nl = memchr(line, '\n', (size_t)(crc_line - line));
		char fp[40];
		struct state_ent e;
		uint32_t spi;
		unsigned int i;
		int used = 0, got;

		lineno++;
		if (nl == NULL)
			break;
		*nl = '\0';
		if (v1)
			got = sscanf(line, "sa %8" SCNx32 " %32s %" SCNu64 "%n", &spi, fp, &e.limit,
				     &used) == 3;
		else
			got = sscanf(line, "key %32s %" SCNu64 "%n", fp, &e.limit, &used) == 2;
		if (!got || line[used] != '\0' || parse_fp(fp, e.fp) < 0) {
			snprintf(err, errlen, "line %u does not parse", lineno);
			return -EINVAL;
		}
		line = nl + 1;
		/* version 1: one line per SPI; the key's numbering is the highest */
		for (i = 0; i < *n; i++)
			if (memcmp(tab[i].fp, e.fp, 16) == 0)
				break;
		if (i < *n) {
			if (!v1) {
				snprintf(err, errlen, "line %u repeats a key", lineno);
				return -EINVAL;
			}
			tab[i].limit = RTE_MAX(tab[i].limit, e.limit);
			continue;
		}
		if (*n >= STATE_MAX) {
			snprintf(err, errlen, "more than %u keys", STATE_MAX);
			return -EINVAL;
		}
		tab[(*n)++] = e;
	}
	return 0;
}

static int
fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, rc = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Write the table durably: temporary file, fsync, rename, fsync dir. */
static int
write_file(void)
{
	char tmp[PATH_MAX + 8];
	size_t len = 0, off;
	unsigned int i, j;
	int fd, rc = 0;

	len += (size_t)snprintf(wbuf, WBUF_LEN, "%s", STATE_MAGIC);
	for (i = 0; i < n_ents; i++) {
		char fp[33];

		for (j = 0; j < 16; j++)
			snprintf(fp + 2 * j, 3, "%02x", ents[i].fp[j]);
		len += (size_t)snprintf(wbuf + len, WBUF_LEN - len, "key %s %" PRIu64 "\n", fp,
					ents[i].limit);
	}
	len += (size_t)snprintf(wbuf + len, WBUF_LEN - len, "crc %08" PRIx32 "\n",
				rte_hash_crc(wbuf, (uint32_t)len, 0));

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", state_path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	for (off = 0; off < len;) {
		ssize_t w = write(fd, wbuf + off, len - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		off += (size_t)w;
	}
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, state_path) < 0)
		rc = -errno;
	if (rc == 0)
		rc = fsync_dir(state_path);
	if (rc < 0)
		unlink(tmp);
	return rc;
}

int
esp_state_open(const char *path, bool create, char *err, size_t errlen)
{
	struct state_ent *tab = NULL;
	char *buf = NULL, *nwbuf = NULL;
	unsigned int n = 0;
	struct stat st;
	int fd, rc;

	if (path == NULL || path[0] == '\0' || strlen(path) >= sizeof(state_path) - 8) {
		snprintf(err, errlen, "state file: bad path");
		return -EINVAL;
	}
	tab = calloc(STATE_MAX, sizeof(*tab));
	nwbuf = malloc(WBUF_LEN);
	if (tab == NULL || nwbuf == NULL) {
		rc = -ENOMEM;
		snprintf(err, errlen, "state file: out of memory");
		goto fail;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT) {
		rc = -errno;
		snprintf(err, errlen, "state file %s: %s", path, strerror(errno));
		goto fail;
	}
	/* a lost file would restart every key's numbering at 1: only the
	 * operator can say the file is new */
	if (fd < 0 && !create) {
		rc = -ENOENT;
		snprintf(err, errlen,
			 "state file %s does not exist: if edgegw never used it, add 'create'; "
			 "if it was lost, every key used outbound before must be replaced",
			 path);
		goto fail;
	}
	if (fd >= 0 && create) {
		close(fd);
		rc = -EEXIST;
		snprintf(err, errlen, "state file %s exists: 'create' is only for a new file",
			 path);
		goto fail;
	}
	if (fd >= 0) {
		ssize_t got;

		/* not a file at all (a directory...): a wrong path, nothing changes */
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			rc = -EINVAL;
			snprintf(err, errlen, "state file %s: not a regular file", path);
			goto fail;
		}
		if (st.st_size > (off_t)WBUF_LEN) {
			close(fd);
			rc = -EINVAL;
			snprintf(err, errlen, "state file %s: larger than %zu bytes", path,
				 (size_t)WBUF_LEN);
			goto untrusted;
		}
		buf = malloc((size_t)st.st_size + 1);
		if (buf == NULL) {
			close(fd);
			rc = -ENOMEM;
			snprintf(err, errlen, "state file: out of memory");
			goto fail;
		}
		got = read(fd, buf, (size_t)st.st_size);
		close(fd);
		if (got != st.st_size) {
			rc = -EIO;
			snprintf(err, errlen, "state file %s: short read", path);
			goto untrusted;
		}
		buf[got] = '\0';
		rc = parse(buf, (size_t)got, tab, &n, err, errlen);
		if (rc < 0)
			goto untrusted;
	}
	esp_state_close();
	snprintf(state_path, sizeof(state_path), "%s", path);
	ents = tab;
	n_ents = n;
	wbuf = nwbuf;
	state_set_ = true;
	state_ok = true;
	free(buf);
	if (fd < 0) {
		/* a new file: prove now that it can be written */
		rc = write_file();
		if (rc < 0) {
			snprintf(err, errlen, "state file %s: cannot write: %s", path,
				 strerror(-rc));
			esp_state_close();
			return rc;
		}
	}
	ESP_LOG(INFO, "state file %s: %u entries", path, n);
	return 0;
untrusted : {
	/* keep the path so the operator sees which file is bad; refuse
	 * outbound SAs until another file is set */
	char msg[256];

	snprintf(msg, sizeof(msg), "%s", err);
	snprintf(err, errlen, "state file %s not trusted: %s", path, msg);
	esp_state_close();
	snprintf(state_path, sizeof(state_path), "%s", path);
	state_set_ = true;
	state_ok = false;
}
fail:
	free(tab);
	free(nwbuf);
	free(buf);
	return rc;
}

unsigned int
esp_state_count(void)
{
	return n_ents;
}

int
esp_state_get(const uint8_t fp[16], uint64_t *limit)
{
	unsigned int i;

	for (i = 0; i < n_ents; i++)
		if (memcmp(ents[i].fp, fp, 16) == 0) {
			*limit = ents[i].limit;
			return 0;
		}
	return -ENOENT;
}

int
esp_state_set(const uint8_t fp[16], uint64_t limit)
{
	struct state_ent old = {0};
	unsigned int i;
	bool added = false;
	int rc;

	if (!esp_state_trusted())
		return -EINVAL;
	for (i = 0; i < n_ents; i++)
		if (memcmp(ents[i].fp, fp, 16) == 0)
			break;
	if (i == n_ents) {
		/* never forget a key to make room: its numbering would restart */
		if (n_ents == STATE_MAX)
			return -ENOSPC;
		memcpy(ents[i].fp, fp, 16);
		ents[i].limit = 0;
		n_ents++;
		added = true;
	}
	old = ents[i];
	ents[i].limit = limit;
	rc = write_file();
	if (rc < 0) {
		/* the file on disk still holds the old table */
		if (added)
			n_ents--;
		else
			ents[i] = old;
	}
	return rc;
}

int
esp_state_prune(bool (*keep)(const uint8_t fp[16], void *arg), void *arg, unsigned int *dropped)
{
	struct state_ent *copy;
	unsigned int i, n = 0;
	int rc;

	*dropped = 0;
	if (!esp_state_trusted())
		return -EINVAL;
	copy = malloc(sizeof(*copy) * (n_ents ? n_ents : 1));
	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, ents, sizeof(*copy) * n_ents);
	for (i = 0; i < n_ents; i++)
		if (keep(copy[i].fp, arg))
			ents[n++] = copy[i];
	if (n == n_ents) {
		free(copy);
		return 0;
	}
	*dropped = n_ents - n;
	i = n_ents;
	n_ents = n;
	rc = write_file();
	if (rc < 0) {
		/* the file on disk still holds every key */
		memcpy(ents, copy, sizeof(*copy) * i);
		n_ents = i;
		*dropped = 0;
	}
	free(copy);
	return rc;
}
