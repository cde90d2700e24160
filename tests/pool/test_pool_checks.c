/* A fenced block is neither reused nor given back to its allocator before its fence completes,
 * with the host ahead of the device (pool.h: "the pool reuses it only once every event has
 * completed"; fcl_pool_alloc "waits for fenced blocks, and retries"; fcl_pool_free_held "Free
 * every held block whose fence has completed"). The fence is a user event that a second thread
 * completes after a delay (fcl_test_gate.h); the blocks come from a budgeted host allocator, so
 * the allocator's own count of outstanding blocks shows what the pool gave back:
 *   - free_held keeps a block whose fence is pending, and frees it once the fence completes;
 *   - at the pool's cap, and when the allocator runs out, fcl_pool_alloc waits for the fenced
 *     block, frees it and succeeds (it neither fails nor takes the block early);
 *   - stop_holding, a free after it, and the last release wait for pending fences;
 *   - a pool released with a block still active logs the leak ("a leak is logged");
 *   - the immediate allocator's first touch waits for its queue, as a counted host sync
 *     (runtime.h: flowcl's layers make the waits of their work through the counted calls). */
#include <string.h>

#include "fake_allocator.h"
#include "fcl_test_gate.h"

enum { MIB = 1 << 20 };

static size_t bs(size_t size) { return fcl_pool_bin_size(4, fcl_pool_bin_number(4, size)); }

static fcl_pool_stats stats(fcl_pool *p) {
  fcl_pool_stats s = {0};
  CHECK_OK(fcl_pool_statistics(p, &s));
  return s;
}

/* A pool over dev (cap: 0 for none) with a block freed behind a gate that opens after seconds;
 * the gate in *gate, the block's pool in *pool. */
static fcl_allocator *fenced_pool(fcl_context *ctx, fake_device *dev, size_t cap, double seconds,
                                  fcl_pool **pool, fcl_test_gate **gate) {
  fcl_allocator *a = NULL;
  CHECK_OK(fcl_allocator_create_custom(&fake_ops, dev, &a));
  fcl_pool_options o = fcl_pool_default_options();
  o.max_managed_bytes = cap;
  o.debug = false;
  CHECK_OK(fcl_pool_create(a, &o, pool));
  fcl_pool_block *x = NULL;
  CHECK_OK(fcl_pool_alloc(*pool, MIB, &x));
  *gate = fcl_test_gate_hold(ctx, NULL, seconds, FCL_EVENT_COMPLETE);
  fcl_event *const g = fcl_test_gate_event(*gate);
  if (x && *gate) CHECK_OK(fcl_pool_free_after(*pool, x, 1, &g));
  return a;
}

static void free_held_keeps_pending(fcl_context *ctx) {
  fake_device dev = {0};
  fcl_pool *p = NULL;
  fcl_test_gate *gate = NULL;
  fcl_allocator *a = fenced_pool(ctx, &dev, 0, 1.0, &p, &gate);
  if (!p || !gate) return;
  CHECK_OK(fcl_pool_free_held(p));
  CHECKF(!fcl_test_gate_opened(gate), "%s", "the gate opened before free_held was called");
  CHECKF(stats(p).held_blocks == 1 && atomic_load(&dev.outstanding) == 1,
         "free_held gave back a block whose fence was pending (held %zu, outstanding %d)",
         stats(p).held_blocks, atomic_load(&dev.outstanding));
  fcl_event *const g = fcl_test_gate_event(gate);
  CHECK_OK(fcl_events_wait(1, &g));
  CHECK_OK(fcl_pool_free_held(p));
  CHECK(stats(p).held_blocks == 0 && atomic_load(&dev.outstanding) == 0);
  fcl_test_gate_join(&gate);
  fcl_pool_release(&p);
  fcl_allocator_release(&a);
}

/* The next request of the block's size finds no room (the cap, or the allocator's budget): it
 * must wait for the fence, free the block and allocate anew. */
static void alloc_waits_for_the_fence(fcl_context *ctx, bool cap) {
  fake_device dev = {.budget = cap ? 0 : bs(MIB) + bs(MIB) / 2};
  fcl_pool *p = NULL;
  fcl_test_gate *gate = NULL;
  fcl_allocator *a = fenced_pool(ctx, &dev, cap ? bs(MIB) : 0, 0.3, &p, &gate);
  if (!p || !gate) return;
  const char *what = cap ? "at the pool's cap" : "with the allocator out of memory";
  fcl_pool_block *y = NULL;
  CHECK_OK(fcl_pool_alloc(p, MIB, &y));
  CHECKF(fcl_test_gate_opened(gate), "%s: fcl_pool_alloc returned before the fence completed",
         what);
  const fcl_pool_stats s = stats(p);
  CHECKF(y && s.held_blocks == 0 && s.managed_bytes == bs(MIB) && atomic_load(&dev.allocs) == 2,
         "%s: held %zu, managed %zu bytes, %d allocations (expected 0, %zu, 2)", what,
         s.held_blocks, s.managed_bytes, atomic_load(&dev.allocs), bs(MIB));
  fcl_pool_free(p, y);
  fcl_test_gate_join(&gate);
  fcl_pool_release(&p);
  fcl_allocator_release(&a);
}

/* stop_holding, a fenced free once the pool no longer holds, and the last release: each gives
 * a fenced block back only after its fence. */
static void giving_back_waits(fcl_context *ctx) {
  for (int how = 0; how < 3; ++how) {
    static const char *const name[3] = {"fcl_pool_stop_holding", "fcl_pool_free_after",
                                        "fcl_pool_release"};
    fake_device dev = {0};
    fcl_pool *p = NULL;
    fcl_test_gate *gate = NULL;
    fcl_allocator *a = NULL;
    if (how == 1) { /* not holding first, then the fenced free */
      CHECK_OK(fcl_allocator_create_custom(&fake_ops, &dev, &a));
      CHECK_OK(fcl_pool_create(a, NULL, &p));
      CHECK_OK(fcl_pool_stop_holding(p));
      fcl_pool_block *x = NULL;
      CHECK_OK(fcl_pool_alloc(p, MIB, &x));
      gate = fcl_test_gate_hold(ctx, NULL, 0.3, FCL_EVENT_COMPLETE);
      fcl_event *const g = fcl_test_gate_event(gate);
      if (x && gate) CHECK_OK(fcl_pool_free_after(p, x, 1, &g));
    } else {
      a = fenced_pool(ctx, &dev, 0, 0.3, &p, &gate);
      if (how == 0) CHECK_OK(fcl_pool_stop_holding(p));
      if (how == 2) fcl_pool_release(&p);
    }
    CHECKF(atomic_load(&dev.outstanding) == 0 && fcl_test_gate_opened(gate),
           "%s: %d blocks outstanding (expected 0), the fence %s when it returned", name[how],
           atomic_load(&dev.outstanding),
           fcl_test_gate_opened(gate) ? "complete" : "still pending");
    fcl_test_gate_join(&gate);
    fcl_pool_release(&p);
    fcl_allocator_release(&a);
  }
}

static char logged[1024];
static void capture(fcl_log_level level, const char *message, void *user) {
  (void)user;
  if (level >= FCL_LOG_WARNING) snprintf(logged, sizeof logged, "%s", message);
}

static void leak_logged(void) {
  fake_device dev = {0};
  fcl_allocator *a = NULL;
  fcl_pool *p = NULL;
  fcl_pool_block *x = NULL;
  CHECK_OK(fcl_allocator_create_custom(&fake_ops, &dev, &a));
  CHECK_OK(fcl_pool_create(a, NULL, &p));
  CHECK_OK(fcl_pool_alloc(p, MIB, &x));
  logged[0] = '\0';
  fcl_log_set_handler(capture, NULL);
  fcl_pool_release(&p);
  fcl_log_set_handler(NULL, NULL);
  char want[64];
  snprintf(want, sizeof want, "1 active blocks (%zu bytes)", bs(MIB));
  CHECKF(fcl_test_contains(logged, want), "a released pool with an active block logged: '%s'",
         logged);
  /* what the pool leaked, freed here so that a leak checker sees none: the memory (the fake
   * allocator's) and the block's record (src/pool/pool.c callocs it, fences inline) */
  if (x) fake_free(&dev, &(fcl_allocation){NULL, fcl_pool_block_svm(x), fcl_pool_block_size(x)});
  free(x);
  fcl_allocator_release(&a);
}

static void immediate_waits_counted(fcl_context *ctx, fcl_device *device) {
  fcl_queue *q = NULL;
  fcl_allocator *a = NULL;
  CHECK_OK(fcl_queue_create(ctx, device, 0, &q));
  CHECK_OK(fcl_allocator_create_immediate(ctx, q, FCL_MEM_DEVICE, &a));
  fcl_test_gate *gate = fcl_test_gate_hold(ctx, q, 0.3, FCL_EVENT_COMPLETE);
  if (a && gate) {
    fcl_allocation m = {0};
    const uint64_t s0 = fcl_count_host_syncs();
    CHECK_OK(fcl_allocator_alloc(a, 4096, &m));
    const uint64_t syncs = fcl_count_host_syncs() - s0;
    const bool opened = fcl_test_gate_opened(gate);
    /* runtime.h, fcl_mem_commit: OpenCL waits for the queue; CUDA's memory exists at once */
    const bool waits = !strcmp(fcl_device_backend(device), "opencl");
    CHECKF(opened == waits && syncs == (waits ? 1u : 0u),
           "an immediate allocation behind a held queue: returned %s the gate opened, %llu host "
           "syncs counted (%d)",
           opened ? "after" : "before", (unsigned long long)syncs, waits ? 1 : 0);
    fcl_allocator_free(a, &m);
  }
  fcl_test_gate_join(&gate);
  fcl_allocator_release(&a);
  fcl_queue_release(&q);
}

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  fcl_context *ctx = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  if (!ctx) return;
  free_held_keeps_pending(ctx);
  alloc_waits_for_the_fence(ctx, true);
  alloc_waits_for_the_fence(ctx, false);
  giving_back_waits(ctx);
  leak_logged();
  immediate_waits_counted(ctx, e->device);
  fcl_context_release(&ctx);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
