/* SHA-256 against the FIPS 180-4 / NIST CAVP example digests. */
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"
#include "sha256.h"

static void digest_of(const void *data, size_t n, size_t repeat, char hex[65]) {
  fcl__sha256 h;
  unsigned char d[32];
  fcl__sha256_init(&h);
  for (size_t i = 0; i < repeat; ++i) fcl__sha256_update(&h, data, n);
  fcl__sha256_final(&h, d);
  fcl__sha256_hex(d, hex);
}

int main(void) {
  char hex[65];
  digest_of("abc", 3, 1, hex);
  CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
  digest_of("", 0, 1, hex);
  CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  digest_of(m448, strlen(m448), 1, hex);
  CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
  /* One million 'a', fed in odd-sized pieces to exercise block boundaries. */
  char a[1000];
  memset(a, 'a', sizeof a);
  digest_of(a, 1000, 1000, hex);
  CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
  return fcl_test_exit_code();
}
