/* SHA-256 through Nettle; the labelled field and the hex form are flowcl's. */
#include "sha256.h"

#include <stdint.h>
#include <string.h>

void fcl__sha256_init(fcl__sha256 *h) { sha256_init(h); }

void fcl__sha256_update(fcl__sha256 *h, const void *data, size_t size) {
  if (size) sha256_update(h, size, data);
}

void fcl__sha256_final(fcl__sha256 *h, unsigned char digest[32]) {
  sha256_digest(h, SHA256_DIGEST_SIZE, digest); /* also resets h */
}

void fcl__sha256_hex(const unsigned char digest[32], char hex[65]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
  hex[64] = '\0';
}

void fcl__sha256_field(fcl__sha256 *h, const char *label, const char *s) {
  uint64_t n = s ? strlen(s) : 0;
  fcl__sha256_update(h, label, strlen(label) + 1);
  fcl__sha256_update(h, &n, sizeof n);
  if (n) fcl__sha256_update(h, s, n);
}
