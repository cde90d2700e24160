/* pool: median cost of one alloc+free pair from flowcl's memory pool (over the immediate
 * allocator: its blocks are resident) against raw buffers over the same realistic size mix,
 * side by side within each repeat:
 *   raw resident: clCreateBuffer + a migration that makes the memory exist + clReleaseMemObject
 *                 (what an allocation really costs; the goal is measured against this);
 *   raw handle:   clCreateBuffer + clReleaseMemObject alone, which on drivers that allocate
 *                 lazily (PoCL) only creates a handle and defers the cost to the first use.
 * Goals on PoCL: pool >= 20x faster than raw resident, <= 100 ns per pair.
 * Usage: pool [--device SPEC] [--count PAIRS] [--repeats R] [--json FILE] */
#define _POSIX_C_SOURCE 200809L
#include <flowcl/flowcl.h>

#define BENCH_NAME "pool benchmark"
#include "bench_util.h"
#include "flowcl/opencl.h"

enum { LIVE = 8 }; /* blocks alive at once: alloc LIVE, then free LIVE */

/* Sizes of a solver's buffers: fields, ghost slabs, staging and reduction scratch, drawn
 * log-uniformly between 256 B and 16 MiB (fixed seed, so both sides see the same sequence). */
static void size_mix(size_t *sizes, long n) {
  unsigned s = 12345u;
  for (long i = 0; i < n; ++i) {
    s = s * 1103515245u + 12345u;
    double t = (double)(s >> 8) / (double)(1u << 24); /* [0, 1) */
    sizes[i] = (size_t)(256.0 * __builtin_exp(t * __builtin_log(65536.0)));
  }
}

int main(int argc, char **argv) {
  bench_options o = {NULL, NULL, 21, 4096};
  if (bench_parse(argc, argv, &o, "[--device SPEC] [--count PAIRS] [--repeats R] [--json FILE]"))
    return 2;
  long n = o.count - o.count % LIVE;
  if (n < LIVE) n = LIVE;
  fcl_device_entry dev;
  fcl_context *ctx = NULL;
  fcl_allocator *alloc = NULL;
  fcl_pool *pool = NULL;
  if (fcl_device_select(o.device, &dev) != FCL_OK) DIE("no device");
  REQUIRE_OPENCL(dev.device);
  if (fcl_context_create(1, &dev.device, &ctx) != FCL_OK) DIE("context");
  fcl_queue *q = NULL;
  if (fcl_queue_create(ctx, NULL, 0, &q) != FCL_OK) DIE("queue");
  if (fcl_allocator_create_immediate(ctx, q, FCL_MEM_DEVICE, &alloc) != FCL_OK) DIE("allocator");
  if (fcl_pool_create(alloc, NULL, &pool) != FCL_OK) DIE("pool");
  size_t *sizes = malloc((size_t)n * sizeof *sizes);
  double *t_pool = malloc((size_t)o.repeats * sizeof *t_pool);
  double *t_raw = malloc((size_t)o.repeats * sizeof *t_raw);
  double *t_handle = malloc((size_t)o.repeats * sizeof *t_handle);
  if (!sizes || !t_pool || !t_raw || !t_handle) DIE("out of host memory");
  size_mix(sizes, n);
  fcl_pool_block *blocks[LIVE];
  cl_mem raw[LIVE];
  for (int r = -1; r < o.repeats; ++r) { /* one warm-up round fills the pool's bins */
    double t0 = bench_now();
    for (long i = 0; i < n; i += LIVE) {
      for (int j = 0; j < LIVE; ++j)
        if (fcl_pool_alloc(pool, sizes[i + j], &blocks[j]) != FCL_OK) DIE("pool alloc");
      for (int j = 0; j < LIVE; ++j) fcl_pool_free(pool, blocks[j]);
    }
    double t1 = bench_now();
    for (long i = 0; i < n; i += LIVE) {
      cl_int err;
      for (int j = 0; j < LIVE; ++j) {
        raw[j] = clCreateBuffer(fcl_context_cl(ctx), CL_MEM_READ_WRITE, sizes[i + j], NULL, &err);
        if (err != CL_SUCCESS) DIE("clCreateBuffer: %s", fcl_cl_error_name(err));
        cl_event ev;
        err = clEnqueueMigrateMemObjects(fcl_queue_cl(q), 1, &raw[j],
                                         CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, &ev);
        if (err != CL_SUCCESS || clWaitForEvents(1, &ev) != CL_SUCCESS) DIE("migration");
        clReleaseEvent(ev);
      }
      for (int j = 0; j < LIVE; ++j) clReleaseMemObject(raw[j]);
    }
    double t2 = bench_now();
    for (long i = 0; i < n; i += LIVE) {
      cl_int err;
      for (int j = 0; j < LIVE; ++j) {
        raw[j] = clCreateBuffer(fcl_context_cl(ctx), CL_MEM_READ_WRITE, sizes[i + j], NULL, &err);
        if (err != CL_SUCCESS) DIE("clCreateBuffer: %s", fcl_cl_error_name(err));
      }
      for (int j = 0; j < LIVE; ++j) clReleaseMemObject(raw[j]);
    }
    double t3 = bench_now();
    if (r >= 0) {
      t_pool[r] = (t1 - t0) / (double)n * 1e9;
      t_raw[r] = (t2 - t1) / (double)n * 1e9;
      t_handle[r] = (t3 - t2) / (double)n * 1e9;
    }
  }
  fcl_pool_stats s;
  fcl_pool_statistics(pool, &s);
  double m_pool = bench_median(t_pool, o.repeats), m_raw = bench_median(t_raw, o.repeats);
  double m_handle = bench_median(t_handle, o.repeats);
  double speedup = m_raw / m_pool;
  fcl_device_info info;
  fcl_device_get_info(dev.device, &info);
  bool met = speedup >= 20.0 && m_pool <= 100.0;
  printf("pool on %s (%ld alloc+free pairs x %d repeats, sizes 256 B..16 MiB, medians)\n",
         info.name, n, o.repeats);
  printf("  %-34s %10.1f ns/pair\n", "flowcl pool alloc + free", m_pool);
  printf("  %-34s %10.1f ns/pair\n", "raw resident (create+migrate+release)", m_raw);
  printf("  %-34s %10.1f ns/pair\n", "raw handle (create+release only)", m_handle);
  printf("  %-34s %10.1f x     (goal >= 20x and <= 100 ns: %s)\n", "speedup vs raw resident",
         speedup, met ? "met" : "NOT MET");
  printf("  %-34s %10.1f x\n", "speedup vs raw handle", m_handle / m_pool);
  printf("  pool: %zu allocations, %zu reuses, %zu bytes managed\n", s.allocations, s.reuses,
         s.managed_bytes);
  if (o.json) {
    FILE *f = fopen(o.json, "w");
    if (!f) DIE("cannot write %s", o.json);
    fprintf(f,
            "{\"benchmark\": \"pool\", \"device\": \"%s\", \"results\": [\n"
            "  {\"name\": \"pool_alloc_free\", \"value\": %.2f, \"unit\": \"ns\", \"pairs\": %ld, "
            "\"repeats\": %d, \"goal_max\": 100},\n"
            "  {\"name\": \"raw_resident_create_release\", \"value\": %.2f, \"unit\": \"ns\", "
            "\"pairs\": %ld, \"repeats\": %d},\n"
            "  {\"name\": \"raw_handle_create_release\", \"value\": %.2f, \"unit\": \"ns\", "
            "\"pairs\": %ld, \"repeats\": %d},\n"
            "  {\"name\": \"speedup_vs_resident\", \"value\": %.2f, \"unit\": \"raw/pool\", "
            "\"goal_min\": 20},\n"
            "  {\"name\": \"speedup_vs_handle\", \"value\": %.2f, \"unit\": \"raw/pool\"}\n]}\n",
            info.name, m_pool, n, o.repeats, m_raw, n, o.repeats, m_handle, n, o.repeats, speedup,
            m_handle / m_pool);
    fclose(f);
  }
  free(sizes);
  free(t_pool);
  free(t_raw);
  free(t_handle);
  fcl_pool_release(&pool);
  fcl_allocator_release(&alloc);
  fcl_queue_release(&q);
  fcl_context_release(&ctx);
  return met ? 0 : 1;
}
