/* Pool logic on a budgeted host allocator: reuse (same bin, most recently freed first),
 * statistics after mixed sequences, free_held, stop_holding, the cap, out-of-memory recovery by
 * releasing held blocks largest first, and the out-of-memory error. */
#include <string.h>

#include "fake_allocator.h"

static size_t bs(size_t size) { return fcl_pool_bin_size(4, fcl_pool_bin_number(4, size)); }

static fcl_pool_stats stats(fcl_pool *p) {
  fcl_pool_stats s;
  CHECK_OK(fcl_pool_statistics(p, &s));
  return s;
}

static void reuse_and_stats(void) {
  fake_device dev = {0};
  fcl_allocator *a = NULL;
  fcl_pool *p = NULL;
  CHECK_OK(fcl_allocator_create_custom(&fake_ops, &dev, &a));
  CHECK_OK(fcl_pool_create(a, NULL, &p));
  fcl_pool_block *x, *y, *z, *w;
  CHECK_OK(fcl_pool_alloc(p, 1000, &x));
  CHECK_OK(fcl_pool_alloc(p, 5000, &y));
  CHECK(fcl_pool_block_size(x) == bs(1000) && fcl_pool_block_size(y) == bs(5000));
  fcl_pool_stats s = stats(p);
  CHECK(s.active_blocks == 2 && s.held_blocks == 0 && s.allocations == 2 && s.reuses == 0);
  CHECK(s.active_bytes == bs(1000) + bs(5000) && s.managed_bytes == s.active_bytes);
  fcl_pool_free(p, x);
  s = stats(p);
  CHECK(s.active_blocks == 1 && s.held_blocks == 1 && s.active_bytes == bs(5000));
  CHECK(s.managed_bytes == bs(1000) + bs(5000));
  /* 995 bytes falls in 1000's bin (992..1023): the held block comes back. */
  CHECK(fcl_pool_bin_number(4, 995) == fcl_pool_bin_number(4, 1000));
  CHECK_OK(fcl_pool_alloc(p, 995, &z));
  CHECK(z == x);
  s = stats(p);
  CHECK(s.reuses == 1 && s.allocations == 2 && s.held_blocks == 0);
  /* A different bin is never served from this one. */
  CHECK_OK(fcl_pool_alloc(p, 3000, &w));
  CHECK(w != x && w != y);
  /* Most recently freed first. */
  fcl_pool_block *m1, *m2, *m3;
  CHECK_OK(fcl_pool_alloc(p, 1000, &m1));
  fcl_pool_free(p, z);
  fcl_pool_free(p, m1);
  CHECK_OK(fcl_pool_alloc(p, 1000, &m2));
  CHECK_OK(fcl_pool_alloc(p, 1000, &m3));
  CHECK(m2 == m1 && m3 == z);
  s = stats(p);
  CHECK(s.high_water_bytes == 2 * bs(1000) + bs(5000) + bs(3000));
  /* Double free is refused, not corrupting. */
  fcl_pool_free(p, m2);
  fcl_log_set_level(FCL_LOG_NONE);
  fcl_pool_free(p, m2);
  fcl_log_set_level(FCL_LOG_WARNING);
  CHECK_STATUS(fcl_pool_free_after(p, m2, 0, NULL), FCL_ERR_INVALID_STATE, "freed twice");
  CHECK(stats(p).held_blocks == 1);
  /* free_held returns held memory to the allocator. */
  fcl_pool_free(p, m3);
  fcl_pool_free(p, w);
  CHECK(stats(p).held_blocks == 3);
  CHECK_OK(fcl_pool_free_held(p));
  s = stats(p);
  CHECK(s.held_blocks == 0 && s.managed_bytes == bs(5000) && s.active_blocks == 1);
  CHECK(atomic_load(&dev.outstanding) == 1);
  /* stop_holding: later frees go straight back to the allocator. */
  CHECK_OK(fcl_pool_stop_holding(p));
  fcl_pool_free(p, y);
  s = stats(p);
  CHECK(s.held_blocks == 0 && s.managed_bytes == 0 && atomic_load(&dev.outstanding) == 0);
  CHECK_STATUS(fcl_pool_alloc(p, 0, &x), FCL_ERR_INVALID_ARGUMENT, "argument 2 (size)");
  fcl_pool_release(&p);
  fcl_allocator_release(&a);
}

static void cap_and_out_of_memory(void) {
  fake_device dev = {0};
  fcl_allocator *a = NULL;
  fcl_pool *p = NULL;
  CHECK_OK(fcl_allocator_create_custom(&fake_ops, &dev, &a));
  fcl_pool_options o = fcl_pool_default_options();
  o.max_managed_bytes = 3 * bs(1 << 20);
  CHECK_OK(fcl_pool_create(a, &o, &p));
  fcl_pool_block *b[4];
  for (int i = 0; i < 3; ++i) CHECK_OK(fcl_pool_alloc(p, 1 << 20, &b[i]));
  CHECK_STATUS(fcl_pool_alloc(p, 1 << 20, &b[3]), FCL_ERR_OUT_OF_MEMORY, "1048576 bytes");
  CHECK(fcl_test_contains(fcl_last_error(), "cap"));
  char figures[128];
  snprintf(figures, sizeof figures, "active %zu bytes in 3 blocks", 3 * bs(1 << 20));
  CHECK(fcl_test_contains(fcl_last_error(), figures));
  CHECK(b[3] == NULL);
  fcl_pool_free(p, b[0]);
  CHECK_OK(fcl_pool_alloc(p, 1 << 20, &b[3])); /* reuse under the cap */
  CHECK(b[3] == b[0]);
  for (int i = 1; i < 4; ++i) fcl_pool_free(p, b[i]);
  /* A request of another bin: held blocks are released, largest first, until it fits. */
  fcl_pool_block *small = NULL, *mid = NULL, *big = NULL;
  CHECK_OK(fcl_pool_free_held(p));
  CHECK_OK(fcl_pool_alloc(p, 1 << 20, &big));
  CHECK_OK(fcl_pool_alloc(p, 1 << 18, &mid));
  CHECK_OK(fcl_pool_alloc(p, 1 << 16, &small));
  fcl_pool_free(p, big);
  fcl_pool_free(p, mid);
  fcl_pool_free(p, small);
  size_t want = 3000000; /* fits beside small, not beside mid too: big and mid must go */
  CHECK(bs(want) + bs(1 << 16) <= o.max_managed_bytes &&
        bs(want) + bs(1 << 16) + bs(1 << 18) > o.max_managed_bytes);
  fcl_pool_block *huge = NULL;
  CHECK_OK(fcl_pool_alloc(p, want, &huge));
  fcl_pool_stats s = stats(p);
  CHECK(s.held_blocks == 1 && s.managed_bytes == bs(want) + bs(1 << 16));
  fcl_pool_block *again = NULL;
  CHECK_OK(fcl_pool_alloc(p, 1 << 16, &again));
  CHECK(again == small); /* the smallest survived */
  fcl_pool_free(p, again);
  fcl_pool_free(p, huge);
  fcl_pool_release(&p);

  /* The allocator itself runs out (a 2.5 MiB "device"): held blocks are freed and the request
   * retried; when nothing is left to free the error names the request and the pool. */
  fake_device small_dev = {.budget = 5u << 19};
  fcl_allocator *sa = NULL;
  CHECK_OK(fcl_allocator_create_custom(&fake_ops, &small_dev, &sa));
  CHECK_OK(fcl_pool_create(sa, NULL, &p));
  fcl_pool_block *h1, *h2, *r;
  CHECK_OK(fcl_pool_alloc(p, 1 << 20, &h1));
  CHECK_OK(fcl_pool_alloc(p, 1 << 19, &h2));
  fcl_pool_free(p, h1);
  fcl_pool_free(p, h2);
  CHECK_OK(fcl_pool_alloc(p, 2 << 20, &r)); /* only fits after releasing both */
  CHECK(stats(p).held_blocks == 0);
  fcl_pool_block *fail = (fcl_pool_block *)1;
  CHECK_STATUS(fcl_pool_alloc(p, 1 << 20, &fail), FCL_ERR_OUT_OF_MEMORY, "1048576 bytes");
  CHECK(fail == NULL);
  snprintf(figures, sizeof figures, "managed %zu bytes", bs(2 << 20));
  CHECK(fcl_test_contains(fcl_last_error(), figures));
  fcl_pool_free(p, r);
  fcl_pool_release(&p);
  CHECK(atomic_load(&small_dev.outstanding) == 0);
  fcl_allocator_release(&sa);
  fcl_allocator_release(&a);
  CHECK(atomic_load(&dev.outstanding) == 0);
}

int main(void) {
  reuse_and_stats();
  cap_and_out_of_memory();
  fcl_pool_options bad = fcl_pool_default_options();
  bad.leading_bits = 9;
  fcl_allocator *a = NULL;
  fcl_pool *p = NULL;
  fake_device dev = {0};
  CHECK_OK(fcl_allocator_create_custom(&fake_ops, &dev, &a));
  CHECK_STATUS(fcl_pool_create(a, &bad, &p), FCL_ERR_INVALID_ARGUMENT, "leading_bits 9");
  fcl_allocator_release(&a);
  return fcl_test_exit_code();
}
