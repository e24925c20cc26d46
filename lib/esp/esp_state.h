/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sequence-number state file: per key (fingerprint of algorithm, key and
 * salt) the highest sequence number edgegw may have used with it. Written atomically (temporary file,
 * fsync, rename, fsync of the directory) before the numbers are used.
 */
#ifndef EGW_ESP_STATE_H
#define EGW_ESP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Load the file at path, or with create make a new one (-EEXIST if it
 * exists; without create a missing file is -ENOENT). 0, or -errno with a
 * message; on a corrupt file the state becomes untrusted. */
int esp_state_open(const char *path, bool create, char *err, size_t errlen);
void esp_state_close(void);
const char *esp_state_path(void);
/* A file is set and it loaded cleanly. */
bool esp_state_trusted(void);
/* Keys the file holds. */
unsigned int esp_state_count(void);
/* Persisted limit of key fp: 0 and *limit, or -ENOENT. */
int esp_state_get(const uint8_t fp[16], uint64_t *limit);
/* Record limit for key fp and write the file durably. 0, -ENOSPC (a new
 * key and the table is full: nothing is forgotten to make room) or -errno. */
int esp_state_set(const uint8_t fp[16], uint64_t limit);
/* Drop the keys keep() says no to and write the file. 0 or -errno. */
int esp_state_prune(bool (*keep)(const uint8_t fp[16], void *arg), void *arg,
		    unsigned int *dropped);

#endif /* EGW_ESP_STATE_H */
