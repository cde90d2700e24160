/* Shared setup of the field benchmarks (mpirun-able): MPI, one device per rank through the
 * topology, a context, a profiling queue and a buffer pool; the device copy bandwidth measured
 * with fcl_mem_copy (median of repeats, profiling events). */
#ifndef FLOWCL_BENCH_FIELD_SETUP_H
#define FLOWCL_BENCH_FIELD_SETUP_H

#include "bench_util.h"

typedef struct {
  fcl_context *ctx;
  fcl_queue *q;
  fcl_allocator *alloc;
  fcl_pool *pool;
  fcl_device_info info;
  int rank, size;
} field_env;

static inline fcl_status field_env_open(field_env *e, fcl_topology *t, const char *device) {
  fcl_device_entry dev;
  e->rank = fcl_topology_rank(t);
  e->size = fcl_topology_size(t);
  fcl_status st = fcl_topology_select_device(t, device, &dev);
  if (st == FCL_OK) st = fcl_device_get_info(dev.device, &e->info);
  if (st == FCL_OK) st = fcl_context_create(1, &dev.device, &e->ctx);
  if (st == FCL_OK) st = fcl_queue_create(e->ctx, dev.device, FCL_QUEUE_PROFILING, &e->q);
  if (st == FCL_OK) st = fcl_allocator_create_deferred(e->ctx, FCL_MEM_DEVICE, &e->alloc);
  if (st == FCL_OK) st = fcl_pool_create(e->alloc, NULL, &e->pool);
  return st;
}

static inline void field_env_close(field_env *e) {
  fcl_pool_release(&e->pool);
  fcl_allocator_release(&e->alloc);
  fcl_queue_release(&e->q);
  fcl_context_release(&e->ctx);
}

/* GB/s of copying bytes from a to b (read + write counted), median of repeats. */
static inline double field_copy_gbs(field_env *e, fcl_mem *a, fcl_mem *b, size_t bytes,
                                    int repeats) {
  double *t = calloc((size_t)repeats, sizeof *t);
  for (int r = -1; t && r < repeats; ++r) {
    fcl_event *ev = NULL;
    if (fcl_mem_copy(e->q, a, 0, b, 0, bytes, 0, NULL, &ev) != FCL_OK) break;
    fcl_events_wait(1, &ev);
    fcl_event_times times;
    if (r >= 0 && fcl_event_profile(ev, &times) == FCL_OK)
      t[r] = (double)(times.end_ns - times.start_ns);
    fcl_event_release(&ev);
  }
  double gbs = t ? 2.0 * (double)bytes / bench_median(t, repeats) : 0;
  free(t);
  return gbs;
}

#endif
