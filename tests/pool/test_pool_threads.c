/* Many threads allocating and freeing at once: no block is ever handed to two owners (each
 * owner stamps its blocks and checks the stamp before freeing), the statistics balance, and
 * every allocation is returned. Also on the device's deferred allocator. */
#include <pthread.h>
#include <string.h>

#include "fake_allocator.h"

enum { THREADS = 4, OPS = 20000, SLOTS = 16 };

typedef struct {
  fcl_pool *pool;
  unsigned seed;
  int id;
  bool stamp; /* host blocks: write and verify an owner stamp */
} worker;

static unsigned next_random(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

static void *hammer(void *arg) {
  worker *w = arg;
  fcl_pool_block *slots[SLOTS] = {0};
  for (int op = 0; op < OPS; ++op) {
    unsigned r = next_random(&w->seed);
    int slot = (int)(r % SLOTS);
    if (slots[slot]) {
      if (w->stamp) {
        int *mem = fcl_pool_block_svm(slots[slot]);
        CHECKF(mem[0] == w->id * 1000000 + slot, "block of thread %d slot %d was taken by %d",
               w->id, slot, mem[0]);
      }
      fcl_pool_free(w->pool, slots[slot]);
      slots[slot] = NULL;
    } else {
      size_t size = 16 + (r >> 4) % 200000;
      fcl_status st = fcl_pool_alloc(w->pool, size, &slots[slot]);
      CHECKF(st == FCL_OK, "alloc of %zu failed: %s", size, fcl_last_error());
      if (st == FCL_OK && w->stamp)
        ((int *)fcl_pool_block_svm(slots[slot]))[0] = w->id * 1000000 + slot;
    }
  }
  for (int i = 0; i < SLOTS; ++i) fcl_pool_free(w->pool, slots[i]);
  return NULL;
}

static void run(fcl_pool *pool, bool stamp) {
  pthread_t t[THREADS];
  worker w[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    w[i] = (worker){pool, 1234u + 77u * (unsigned)i, i + 1, stamp};
    CHECK(pthread_create(&t[i], NULL, hammer, &w[i]) == 0);
  }
  for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  fcl_pool_stats s;
  CHECK_OK(fcl_pool_statistics(pool, &s));
  CHECK(s.active_blocks == 0 && s.active_bytes == 0);
  CHECK(s.allocations + s.reuses > 0 && s.reuses > s.allocations); /* the pool did its job */
  CHECK(s.managed_bytes <= s.high_water_bytes);
}

static void on_device(const fcl_device_entry *e, void *user) {
  (void)user;
  fcl_context *ctx = NULL;
  fcl_allocator *a = NULL;
  fcl_pool *p = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  CHECK_OK(fcl_allocator_create_deferred(ctx, FCL_MEM_DEVICE, &a));
  CHECK_OK(fcl_pool_create(a, NULL, &p));
  if (p) run(p, false);
  fcl_pool_release(&p);
  fcl_allocator_release(&a);
  fcl_context_release(&ctx);
}

int main(void) {
  fake_device dev = {0};
  fcl_allocator *a = NULL;
  fcl_pool *p = NULL;
  CHECK_OK(fcl_allocator_create_custom(&fake_ops, &dev, &a));
  CHECK_OK(fcl_pool_create(a, NULL, &p));
  run(p, true);
  fcl_pool_stats s;
  CHECK_OK(fcl_pool_statistics(p, &s));
  CHECK((size_t)atomic_load(&dev.outstanding) == s.held_blocks);
  fcl_pool_release(&p);
  CHECK(atomic_load(&dev.outstanding) == 0);
  CHECK(atomic_load(&dev.allocs) == atomic_load(&dev.frees));
  fcl_allocator_release(&a);
  int code = fcl_test_run_on_devices(on_device, NULL);
  return code == FCL_TEST_SKIP ? code : fcl_test_exit_code();
}
