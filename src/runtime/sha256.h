/* SHA-256 for cache keys and cache-entry checksums (not installed): Nettle's (Debian 12:
 * nettle-dev), with two helpers of flowcl's own, a labelled field and the hex form. */
#ifndef FLOWCL_SRC_RUNTIME_SHA256_H
#define FLOWCL_SRC_RUNTIME_SHA256_H

#include <nettle/sha2.h>
#include <stddef.h>

typedef struct sha256_ctx fcl__sha256;

void fcl__sha256_init(fcl__sha256 *h);
void fcl__sha256_update(fcl__sha256 *h, const void *data, size_t size);
void fcl__sha256_final(fcl__sha256 *h, unsigned char digest[32]);
/* A labelled, length-prefixed string (NULL: empty): fields hashed one after another cannot be
 * confused with another split of the same bytes. */
void fcl__sha256_field(fcl__sha256 *h, const char *label, const char *s);
/* Lower-case hex of a digest into hex[65]. */
void fcl__sha256_hex(const unsigned char digest[32], char hex[65]);

#endif
