/* Bin arithmetic: a bin is the size's exponent e (position of the leading 1) and the next L bits.
 * Sizes below 2^(L+1) are exact; above, the bin's size is the largest size with the same leading
 * L+1 bits, so a request grows by less than a factor 1 + 2^-L (worst case: a power of two). */
#include "flowcl/pool.h"

static unsigned exponent(size_t size) {
  return (unsigned)(sizeof(unsigned long long) * 8 - 1) - (unsigned)__builtin_clzll(size);
}

size_t fcl_pool_bin_number(unsigned leading_bits, size_t size) {
  if (size == 0) return 0;
  unsigned e = exponent(size), L = leading_bits;
  size_t mask = ((size_t)1 << L) - 1;
  size_t top = e >= L ? size >> (e - L) : size << (L - e); /* the leading L+1 bits */
  return ((size_t)e << L) | (top & mask);
}

size_t fcl_pool_bin_size(unsigned leading_bits, size_t bin) {
  unsigned L = leading_bits, e = (unsigned)(bin >> L);
  size_t top = (bin & (((size_t)1 << L) - 1)) | ((size_t)1 << L);
  if (e < L) return top >> (L - e);
  unsigned shift = e - L;
  return (top << shift) | (((size_t)1 << shift) - 1);
}
