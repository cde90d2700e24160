/* SHA-256 (FIPS 180-4), used for cache keys and cache-entry checksums (not installed). */
#ifndef FLOWCL_SRC_RUNTIME_SHA256_H
#define FLOWCL_SRC_RUNTIME_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t state[8];
  uint64_t length; /* bytes hashed so far */
  unsigned char block[64];
  size_t used;
} fcl__sha256;

void fcl__sha256_init(fcl__sha256 *h);
void fcl__sha256_update(fcl__sha256 *h, const void *data, size_t size);
void fcl__sha256_final(fcl__sha256 *h, unsigned char digest[32]);
/* A labelled, length-prefixed string (NULL: empty): fields hashed one after another cannot be
 * confused with another split of the same bytes. */
void fcl__sha256_field(fcl__sha256 *h, const char *label, const char *s);
/* Lower-case hex of a digest into hex[65]. */
void fcl__sha256_hex(const unsigned char digest[32], char hex[65]);

#endif
