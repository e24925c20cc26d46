/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sequence-number state file: per outbound SA (SPI + key fingerprint) the
 * highest number edgegw may have used. Written atomically (temporary file,
 * fsync, rename, fsync of the directory) before the numbers are used.
 */
#ifndef EGW_ESP_STATE_H
#define EGW_ESP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Load (or create) the file at path. 0, or -errno with a message; on a
 * corrupt file the state becomes untrusted. */
int esp_state_open(const char *path, char *err, size_t errlen);
void esp_state_close(void);
const char *esp_state_path(void);
/* A file is set and it loaded cleanly. */
bool esp_state_trusted(void);
/* Persisted limit of (spi, fp): 0 and *limit, or -ENOENT. */
int esp_state_get(uint32_t spi, const uint8_t fp[16], uint64_t *limit);
/* Record limit for (spi, fp) and write the file durably. 0 or -errno. */
int esp_state_set(uint32_t spi, const uint8_t fp[16], uint64_t limit);

#endif /* EGW_ESP_STATE_H */
