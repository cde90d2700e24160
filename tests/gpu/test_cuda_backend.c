/* The CUDA backend on every CUDA device ("cuda" specifications; exit 77 without one): transfers,
 * fills of every pattern width at aligned and unaligned offsets, rectangles (one of them slice
 * by slice), maps of device and pinned memory, kernels with every kind of argument and local
 * memory, the argument checks, a queue held back by a user event while the host runs ahead,
 * callbacks, profiling, and a program's metadata after a load from the binary cache. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fcl_test.h"
#include "fcl_test_gate.h"

static const char *source =
    "FCL_KERNEL void values(FCL_GLOBAL double *out, const int i, const uint u, const long l,\n"
    "                       const ulong ul, const float f, const double d, const float4 v) {\n"
    "  out[0] = i; out[1] = u; out[2] = l; out[3] = ul; out[4] = f; out[5] = d;\n"
    "  out[6] = v.x + 10 * v.y + 100 * v.z + 1000 * v.w;\n"
    "}\n"
    "FCL_KERNEL void group_sums(FCL_GLOBAL const int *x, FCL_GLOBAL int *sums,\n"
    "                           FCL_LOCAL_PARAM(int, scratch), FCL_LOCAL_PARAM(int, twice)) {\n"
    "  const int l = (int)get_local_id(0), n = (int)get_local_size(0);\n"
    "  scratch[l] = x[get_global_id(0)];\n"
    "  twice[l] = 2 * scratch[l];\n"
    "  FCL_BARRIER_LOCAL();\n"
    "  for (int s = n / 2; s > 0; s /= 2) {\n"
    "    if (l < s) { scratch[l] += scratch[l + s]; twice[l] += twice[l + s]; }\n"
    "    FCL_BARRIER_LOCAL();\n"
    "  }\n"
    "  if (l == 0) { sums[2 * get_group_id(0)] = scratch[0]; sums[2 * get_group_id(0) + 1] = "
    "twice[0]; }\n"
    "}\n";

enum { N = 4096 };

static void transfers(fcl_context *ctx, fcl_queue *q) {
  unsigned char *h = malloc(N), *back = malloc(N), *want = malloc(N);
  for (int i = 0; i < N; ++i) h[i] = (unsigned char)(i * 13 + 1);
  fcl_mem *a = NULL, *b = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, N, h, &a));
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, N, NULL, &b));
  CHECK_OK(fcl_mem_copy(q, a, 100, b, 0, N - 100, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(q, b, 0, N - 100, back, FCL_BLOCKING, 0, NULL, NULL));
  CHECK(memcmp(back, h + 100, N - 100) == 0);
  /* fills: each pattern width (1 to 128 bytes: memsets of 1, 2 and 4 bytes, columns of 32-bit
   * words beyond) at an offset of an odd number of widths */
  for (size_t w = 1; w <= 128; w *= 2) {
    unsigned char pattern[128];
    for (size_t i = 0; i < w; ++i) pattern[i] = (unsigned char)(0xA0 + 7 * w + i);
    const size_t offset = w * 3, bytes = w * 21;
    CHECK_OK(fcl_mem_write(q, a, 0, N, h, FCL_BLOCKING, 0, NULL, NULL));
    CHECK_OK(fcl_mem_fill(q, a, pattern, w, offset, bytes, 0, NULL, NULL));
    CHECK_OK(fcl_mem_read(q, a, 0, N, back, FCL_BLOCKING, 0, NULL, NULL));
    memcpy(want, h, N);
    for (size_t i = 0; i < bytes; ++i) want[offset + i] = pattern[i % w];
    CHECKF(memcmp(back, want, N) == 0, "fill of %zu-byte patterns at offset %zu", w, offset);
  }
  /* rectangles: host to device with an x origin past the row pitch (OpenCL's rectangles allow
   * it), device to host, device to device with a slice pitch not a multiple of the row pitch */
  memset(back, 0, N);
  CHECK_OK(fcl_mem_write(q, b, 0, N, back, FCL_BLOCKING, 0, NULL, NULL));
  fcl_rect in = {.src_origin = {40, 1, 0},
                 .dst_origin = {8, 2, 1},
                 .region = {16, 3, 2},
                 .src_row_pitch = 32,
                 .src_slice_pitch = 160,
                 .dst_row_pitch = 64,
                 .dst_slice_pitch = 700};
  CHECK_OK(fcl_mem_write_rect(q, b, h, &in, FCL_BLOCKING, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(q, b, 0, N, back, FCL_BLOCKING, 0, NULL, NULL));
  memset(want, 0, N);
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 3; ++y)
      for (size_t x = 0; x < 16; ++x)
        want[8 + x + (2 + y) * 64 + (1 + z) * 700] = h[40 + x + (1 + y) * 32 + z * 160];
  CHECK(memcmp(back, want, N) == 0);
  fcl_rect out = {
      .src_origin = {8, 2, 1}, .region = {16, 3, 2}, .src_row_pitch = 64, .src_slice_pitch = 700};
  unsigned char packed[96];
  CHECK_OK(fcl_mem_read_rect(q, b, packed, &out, FCL_BLOCKING, 0, NULL, NULL));
  for (size_t z = 0, bad = 0; z < 2; ++z)
    for (size_t y = 0; y < 3; ++y)
      for (size_t x = 0; x < 16; ++x)
        if (packed[x + 16 * y + 48 * z] != h[40 + x + (1 + y) * 32 + z * 160] && !bad++)
          CHECKF(false, "read_rect: (%zu, %zu, %zu) differs", x, y, z);
  /* maps: device memory through a host copy, pinned memory in place */
  fcl_mem *pinned = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_PINNED, N, h, &pinned));
  void *m = NULL;
  unsigned char before[64];
  CHECK_OK(fcl_mem_read(q, a, 16, 64, before, FCL_BLOCKING, 0, NULL, NULL));
  CHECK_OK(fcl_mem_map(q, a, FCL_MAP_READ | FCL_MAP_WRITE, 16, 64, 0, NULL, &m));
  if (m) {
    CHECK(memcmp(m, before, 64) == 0);
    memset(m, 0x5A, 64);
    CHECK_OK(fcl_mem_unmap(q, a, m, 0, NULL, NULL));
    CHECK_OK(fcl_mem_read(q, a, 16, 64, back, FCL_BLOCKING, 0, NULL, NULL));
    for (int i = 0; i < 64; ++i) CHECKF(back[i] == 0x5A, "mapped write %d lost", i);
  }
  CHECK_OK(fcl_mem_copy(q, a, 16, pinned, 0, 64, 0, NULL, NULL));
  CHECK_OK(fcl_mem_map(q, pinned, FCL_MAP_READ, 0, N, 0, NULL, &m));
  if (m) {
    CHECK(((unsigned char *)m)[63] == 0x5A && ((unsigned char *)m)[64] == h[64]);
    CHECK_OK(fcl_mem_unmap(q, pinned, m, 0, NULL, NULL));
  }
  fcl_mem_release(&pinned);
  fcl_mem_release(&a);
  fcl_mem_release(&b);
  free(h);
  free(back);
  free(want);
}

static atomic_int called;
static void on_done(fcl_event *event, int status, void *user) {
  (void)event;
  (void)user;
  if (status == FCL_EVENT_COMPLETE) atomic_fetch_add(&called, 1);
}

static void kernels(fcl_context *ctx, fcl_queue *q, const char *cache) {
  fcl_program *p = NULL;
  CHECK_OK(fcl_program_create_source(ctx, source, "cuda backend test", &p));
  CHECK_OK(fcl_program_build(p, NULL));
  fcl_kernel *values = NULL, *sums = NULL;
  CHECK_OK(fcl_kernel_create(p, "values", &values));
  CHECK_OK(fcl_kernel_create(p, "group_sums", &sums));
  if (!values || !sums) return;
  fcl_kernel_arg_info info;
  CHECK_OK(fcl_kernel_get_arg_info(values, 7, &info));
  CHECK(!strcmp(info.name, "v") && !strcmp(info.type_name, "float4") && info.size == 16);
  CHECK_OK(fcl_kernel_get_arg_info(sums, 3, &info));
  CHECK(info.kind == FCL_ARG_LOCAL && !strcmp(info.name, "twice"));
  /* by-value arguments of every scalar type and a vector */
  fcl_mem *out = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, 7 * sizeof(double), NULL, &out));
  const float v[4] = {1, 2, 3, 4};
  CHECK_OK(fcl_kernel_set_arg_buffer(values, 0, out));
  CHECK_OK(fcl_kernel_set_arg_i32(values, 1, -7));
  CHECK_OK(fcl_kernel_set_arg_u32(values, 2, 4000000000u));
  CHECK_OK(fcl_kernel_set_arg_i64(values, 3, -5000000000LL));
  CHECK_OK(fcl_kernel_set_arg_u64(values, 4, 9000000000ULL));
  CHECK_OK(fcl_kernel_set_arg_f32(values, 5, 0.5f));
  CHECK_STATUS(fcl_kernel_set_arg_f32(values, 6, 0.25f), FCL_ERR_INVALID_ARGUMENT, "double");
  size_t one = 1;
  CHECK_STATUS(fcl_kernel_enqueue(values, q, 1, &one, &one, NULL, 0, 0, NULL, NULL),
               FCL_ERR_INVALID_ARGUMENT, "not set");
  CHECK_OK(fcl_kernel_set_arg_f64(values, 6, 0.125));
  CHECK_OK(fcl_kernel_set_arg(values, 7, sizeof v, v));
  fcl_event *ev = NULL;
  CHECK_OK(fcl_kernel_enqueue(values, q, 1, &one, &one, NULL, 0, 0, NULL, &ev));
  atomic_store(&called, 0);
  if (ev) CHECK_OK(fcl_event_on_complete(ev, on_done, NULL));
  double got[7] = {0};
  CHECK_OK(fcl_mem_read(q, out, 0, sizeof got, got, FCL_BLOCKING, 0, NULL, NULL));
  const double expect[7] = {-7, 4000000000.0, -5000000000.0, 9000000000.0, 0.5, 0.125, 4321};
  for (int i = 0; i < 7; ++i)
    CHECKF(got[i] == expect[i], "value %d: %g, not %g", i, got[i], expect[i]);
  fcl_event_times t;
  if (ev) CHECK_OK(fcl_event_profile(ev, &t));
  if (ev) CHECK(t.end_ns > t.start_ns);
  for (int i = 0; i < 1000 && atomic_load(&called) == 0; ++i) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  CHECKF(atomic_load(&called) == 1, "callback called %d times", atomic_load(&called));
  fcl_event_release(&ev);
  /* local memory of two host-sized parameters, behind a gate: the host runs ahead */
  int x[N], s[2 * N / 256];
  for (int i = 0; i < N; ++i) x[i] = i % 97;
  fcl_mem *bx = NULL, *bs = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof x, x, &bx));
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof s, NULL, &bs));
  CHECK_OK(fcl_kernel_set_arg_buffer(sums, 0, bx));
  CHECK_OK(fcl_kernel_set_arg_buffer(sums, 1, bs));
  CHECK_OK(fcl_kernel_set_arg_local(sums, 2, 256 * sizeof(int)));
  CHECK_OK(fcl_kernel_set_arg_local(sums, 3, 256 * sizeof(int)));
  size_t g = N, l = 256, odd = 100;
  CHECK_STATUS(fcl_kernel_enqueue(sums, q, 1, &g, &odd, NULL, 0, 0, NULL, NULL),
               FCL_ERR_INVALID_ARGUMENT, "multiple");
  fcl_test_gate *gate = fcl_test_gate_hold(ctx, q, 0.3, FCL_EVENT_COMPLETE);
  CHECK_OK(fcl_kernel_enqueue(sums, q, 1, &g, &l, NULL, 0, 0, NULL, &ev));
  int st = 0;
  if (ev) CHECK_OK(fcl_event_status(ev, &st));
  CHECKF(st != FCL_EVENT_COMPLETE || fcl_test_gate_opened(gate),
         "a kernel behind a closed gate completed");
  CHECK_OK(fcl_events_wait(1, &ev));
  CHECK(fcl_test_gate_opened(gate));
  fcl_test_gate_join(&gate);
  CHECK_OK(fcl_mem_read(q, bs, 0, sizeof s, s, FCL_BLOCKING, 0, NULL, NULL));
  for (int grp = 0, bad = 0; grp < N / 256; ++grp) {
    int sum = 0;
    for (int i = 0; i < 256; ++i) sum += x[grp * 256 + i];
    if ((s[2 * grp] != sum || s[2 * grp + 1] != 2 * sum) && !bad++)
      CHECKF(false, "group %d: %d and %d, not %d and %d", grp, s[2 * grp], s[2 * grp + 1], sum,
             2 * sum);
  }
  fcl_event_release(&ev);
  fcl_kernel_destroy(&values);
  fcl_kernel_destroy(&sums);
  fcl_program_release(&p);
  /* the same program again: from the binary cache, with its signatures */
  CHECK_OK(fcl_program_create_source(ctx, source, "cuda backend test", &p));
  CHECK_OK(fcl_program_build(p, NULL));
  CHECKF(cache == NULL || fcl_program_from_cache(p), "%s", "the second build missed the cache");
  CHECK_OK(fcl_kernel_create(p, "values", &values));
  if (values) {
    CHECK_OK(fcl_kernel_get_arg_info(values, 2, &info));
    CHECK(!strcmp(info.name, "u") && !strcmp(info.type_name, "uint") && info.size == 4);
  }
  fcl_kernel_destroy(&values);
  fcl_program_release(&p);
  fcl_mem_release(&out);
  fcl_mem_release(&bx);
  fcl_mem_release(&bs);
}

int main(void) {
  fcl_device_entry *list = NULL;
  size_t n = 0;
  if (fcl_device_select_list("cuda", &list, &n) != FCL_OK || n == 0) {
    printf("no CUDA device (%s): skipped\n", fcl_last_error());
    return FCL_TEST_SKIP;
  }
  const char *cache = getenv("FLOWCL_CACHE_DIR");
  for (size_t i = 0; i < n; ++i) {
    const int before = fcl_test_failures;
    CHECK(!strcmp(fcl_device_backend(list[i].device), "cuda"));
    fcl_context *ctx = NULL;
    fcl_queue *q = NULL;
    CHECK_OK(fcl_context_create(1, &list[i].device, &ctx));
    CHECK_OK(fcl_queue_create(ctx, NULL, FCL_QUEUE_PROFILING, &q));
    if (q) {
      transfers(ctx, q);
      kernels(ctx, q, cache);
    }
    fcl_queue_release(&q);
    fcl_context_release(&ctx);
    printf("[%u:%u] %s: %s\n", list[i].platform_index, list[i].device_index,
           fcl_test_device_name(list[i].device), fcl_test_failures == before ? "passed" : "FAILED");
  }
  free(list);
  return fcl_test_exit_code();
}
