/* Event-fenced reuse across queues: a block freed while a command on another queue may still
 * use it is not handed out until that command completes (the command is held back by a user
 * event, so the order is deterministic; without the fence the block would come straight back).
 * Debug mode: freed blocks are poisoned so that stale reads show NaN. */
#include <math.h>
#include <string.h>

#include "fcl_test.h"

static const char *source =
    "FCL_KERNEL void stamp(FCL_GLOBAL int *x, const int v) { x[get_global_id(0)] = v; }\n";

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  enum { N = 4096 };
  fcl_context *ctx = NULL;
  fcl_allocator *alloc = NULL;
  fcl_pool *pool = NULL;
  fcl_program *prog = NULL;
  fcl_kernel *k = NULL;
  fcl_queue *qa = NULL, *qb = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &qa));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &qb));
  CHECK_OK(fcl_allocator_create_deferred(ctx, FCL_MEM_DEVICE, &alloc));
  CHECK_OK(fcl_pool_create(alloc, NULL, &pool));
  CHECK_OK(fcl_program_create_source(ctx, source, "fence test", &prog));
  CHECK_OK(fcl_program_build(prog, NULL));
  CHECK_OK(fcl_kernel_create(prog, "stamp", &k));
  if (!k || !pool || !qa || !qb) return;

  /* Queue A: a write into block X that cannot start before the gate opens. */
  fcl_pool_block *x = NULL, *y = NULL, *z = NULL;
  CHECK_OK(fcl_pool_alloc(pool, N * sizeof(int), &x));
  fcl_event *gate = NULL, *wrote = NULL;
  CHECK_OK(fcl_user_event_create(ctx, &gate));
  CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, fcl_pool_block_buffer(x)));
  CHECK_OK(fcl_kernel_set_arg_i32(k, 1, 1));
  size_t n = N;
  CHECK_OK(fcl_kernel_enqueue(k, qa, 1, &n, NULL, NULL, 0, 1, &gate, &wrote));
  CHECK_OK(fcl_queue_flush(qa));
  CHECK_OK(fcl_pool_free_after(pool, x, 1, &wrote));
  /* Queue B asks for the same size while A's write is pending: it must get other memory. */
  CHECK_OK(fcl_pool_alloc(pool, N * sizeof(int), &y));
  CHECKF(y != x, "the pool handed out a block whose fence (a pending write) had not completed");
  fcl_pool_stats s;
  CHECK_OK(fcl_pool_statistics(pool, &s));
  CHECK(s.held_blocks == 1 && s.allocations == 2 && s.reuses == 0);
  /* Open the gate; once A's write is done the block is reused. */
  CHECK_OK(fcl_user_event_complete(gate));
  CHECK_OK(fcl_events_wait(1, &wrote));
  CHECK_OK(fcl_pool_alloc(pool, N * sizeof(int), &z));
  CHECK(z == x);
  /* B writes 2 into the reused block: A's write (1) is over and cannot overwrite it. */
  CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, fcl_pool_block_buffer(z)));
  CHECK_OK(fcl_kernel_set_arg_i32(k, 1, 2));
  CHECK_OK(fcl_kernel_enqueue(k, qb, 1, &n, NULL, NULL, 0, 0, NULL, NULL));
  int host[N];
  CHECK_OK(fcl_mem_read(qb, fcl_pool_block_buffer(z), 0, sizeof host, host, FCL_BLOCKING, 0, NULL,
                        NULL));
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += host[i] != 2;
  CHECK(bad == 0);
  fcl_event_release(&gate);
  fcl_event_release(&wrote);
  fcl_pool_free(pool, y);
  fcl_pool_free(pool, z);
  fcl_pool_release(&pool);

  /* A block bound to queue A and freed with plain fcl_pool_free while A's write into it is
   * held back: not reused until that write is done (unbound, it would come straight back). */
  CHECK_OK(fcl_pool_create(alloc, NULL, &pool));
  fcl_pool_block *bx = NULL, *by = NULL, *bz = NULL;
  CHECK_OK(fcl_pool_alloc(pool, N * sizeof(int), &bx));
  CHECK_OK(fcl_pool_block_bind(bx, qa));
  CHECK(fcl_pool_block_bound_queue(bx) == qa);
  fcl_event *gate2 = NULL;
  CHECK_OK(fcl_user_event_create(ctx, &gate2));
  CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, fcl_pool_block_buffer(bx)));
  CHECK_OK(fcl_kernel_set_arg_i32(k, 1, 1));
  CHECK_OK(fcl_kernel_enqueue(k, qa, 1, &n, NULL, NULL, 0, 1, &gate2, NULL));
  CHECK_OK(fcl_queue_flush(qa));
  fcl_pool_free(pool, bx);
  CHECK_OK(fcl_pool_alloc(pool, N * sizeof(int), &by));
  CHECKF(by != bx, "a block bound to a queue came back before the queue's work on it was done");
  CHECK_OK(fcl_user_event_complete(gate2));
  CHECK_OK(fcl_queue_finish(qa));
  CHECK_OK(fcl_pool_alloc(pool, N * sizeof(int), &bz));
  CHECK(bz == bx && fcl_pool_block_bound_queue(bz) == NULL);
  CHECK_OK(fcl_pool_block_bind(bz, qb));
  CHECK_OK(fcl_pool_block_bind(bz, NULL)); /* unbound: freed at once */
  fcl_pool_free(pool, bz);
  CHECK_STATUS(fcl_pool_block_bind(bz, qa), FCL_ERR_INVALID_STATE, "not active");
  fcl_event_release(&gate2);
  fcl_pool_free(pool, by);
  fcl_pool_release(&pool);

  /* Debug mode: data left in a freed block reads back as NaN (float and double). */
  fcl_pool_options o = fcl_pool_default_options();
  o.debug = true;
  o.debug_queue = qa;
  CHECK_OK(fcl_pool_create(alloc, &o, &pool));
  fcl_pool_block *d = NULL, *d2 = NULL;
  CHECK_OK(fcl_pool_alloc(pool, N * sizeof(int), &d));
  CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, fcl_pool_block_buffer(d)));
  CHECK_OK(fcl_kernel_set_arg_i32(k, 1, 42));
  fcl_event *done = NULL;
  CHECK_OK(fcl_kernel_enqueue(k, qb, 1, &n, NULL, NULL, 0, 0, NULL, &done));
  CHECK_OK(fcl_pool_free_after(pool, d, 1, &done)); /* poisoned after the write */
  CHECK_OK(fcl_queue_finish(qb));
  CHECK_OK(fcl_queue_finish(qa)); /* the poison fill, enqueued after the write, is done */
  CHECK_OK(fcl_pool_alloc(pool, N * sizeof(int), &d2));
  CHECK(d2 == d);
  CHECK_OK(fcl_mem_read(qb, fcl_pool_block_buffer(d2), 0, sizeof host, host, FCL_BLOCKING, 0, NULL,
                        NULL));
  float f;
  double g;
  memcpy(&f, host, sizeof f);
  memcpy(&g, host + 2, sizeof g);
  CHECK(isnan(f) && isnan(g));
  bad = 0;
  for (int i = 0; i < N; ++i) bad += host[i] != -1; /* 0xFFFFFFFF: never the stale 42 */
  CHECKF(bad == 0, "%d words not poisoned", bad);
  fcl_event_release(&done);
  fcl_pool_free(pool, d2);
  fcl_pool_release(&pool);

  fcl_kernel_destroy(&k);
  fcl_program_release(&prog);
  fcl_queue_release(&qa);
  fcl_queue_release(&qb);
  fcl_allocator_release(&alloc);
  fcl_context_release(&ctx);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
