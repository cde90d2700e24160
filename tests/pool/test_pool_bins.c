/* Bin arithmetic against its definition: a bin's size is >= the request, exact below 2^(L+1),
 * at most a factor 1 + 2^-L above it (worst case a power of two: 2^k + 2^(k-L) - 1), bins are
 * monotonic in the size and bin(bin_size(b)) == b. */
#include <stdint.h>

#include "fcl_test.h"

static void check_size(unsigned L, size_t s) {
  size_t bin = fcl_pool_bin_number(L, s), bs = fcl_pool_bin_size(L, bin);
  CHECKF(bs >= s, "L=%u size %zu: bin size %zu is smaller", L, s, bs);
  CHECKF(fcl_pool_bin_number(L, bs) == bin, "L=%u size %zu: bin size %zu is in another bin", L, s,
         bs);
  if (s < ((size_t)2 << L)) CHECKF(bs == s, "L=%u small size %zu rounded to %zu", L, s, bs);
  /* growth below 2^-L of the request */
  CHECKF(bs - s < (s >> L) + 1, "L=%u size %zu: bin size %zu grows by more than 2^-L", L, s, bs);
}

int main(void) {
  const unsigned Ls[] = {0, 1, 2, 4, 8};
  for (size_t li = 0; li < sizeof Ls / sizeof *Ls; ++li) {
    unsigned L = Ls[li];
    size_t prev_bin = 0;
    for (size_t s = 1; s <= 70000; ++s) {
      check_size(L, s);
      size_t bin = fcl_pool_bin_number(L, s);
      CHECKF(bin >= prev_bin, "L=%u: bins not monotonic at %zu", L, s);
      prev_bin = bin;
    }
    for (unsigned k = 1; k < 63; ++k) {
      size_t p = (size_t)1 << k;
      check_size(L, p - 1);
      check_size(L, p);
      check_size(L, p + 1);
      check_size(L, p + p / 3);
      /* The worst case: a power of two grows by 2^(k-L) - 1. */
      if (k > L) CHECK(fcl_pool_bin_size(L, fcl_pool_bin_number(L, p)) == p + (p >> L) - 1);
    }
    check_size(L, SIZE_MAX / 2);
  }
  /* Hand-worked values for L = 2: 8 and 9 share bin (3 << 2) | 0 of size 9; 5 is exact. */
  CHECK(fcl_pool_bin_number(2, 8) == 12 && fcl_pool_bin_number(2, 9) == 12);
  CHECK(fcl_pool_bin_size(2, 12) == 9);
  CHECK(fcl_pool_bin_size(2, fcl_pool_bin_number(2, 5)) == 5);
  /* L = 4, 1 MiB request: 1 MiB + 64 KiB - 1. */
  CHECK(fcl_pool_bin_size(4, fcl_pool_bin_number(4, 1u << 20)) == (1u << 20) + (1u << 16) - 1);
  return fcl_test_exit_code();
}
