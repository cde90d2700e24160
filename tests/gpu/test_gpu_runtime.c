/* The runtime on every GPU present: characterization, cached builds, a verified launch and
 * profiling. Skips (exit 77) when the machine has no GPU. */
#include <stdlib.h>
#include <string.h>

#include "fcl_test_gate.h"

/* A buffer's initial contents (fcl_mem_create's host) are in place before any command enqueued
 * after the create: a fill enqueued at once, while the host runs ahead, must not be overwritten
 * by the initial copy landing late (CUDA's cuMemcpyHtoD from pageable memory returns once the
 * bytes are staged, and the queues' streams do not wait for its copy). Sizes of about one
 * staging chunk, where the fill is done before the copy's last DMA. */
static void check_contents_before_commands(fcl_context *ctx, fcl_queue *q) {
  enum { MAX = 4 << 20, ROUNDS = 16 }; /* up to 16 MiB of floats */
  float *h = malloc(MAX * sizeof *h);
  if (!h) return;
  size_t bad = 0;
  for (size_t n = 16 << 10; n <= MAX; n *= 4)
    for (int r = 0; r < ROUNDS; ++r) {
      for (size_t i = 0; i < n; ++i) h[i] = 1.0f;
      fcl_mem *b = NULL;
      const float two = 2.0f;
      CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, n * sizeof *h, h, &b));
      CHECK_OK(fcl_mem_fill(q, b, &two, sizeof two, 0, n * sizeof *h, 0, NULL, NULL));
      CHECK_OK(fcl_mem_read(q, b, 0, n * sizeof *h, h, FCL_BLOCKING, 0, NULL, NULL));
      for (size_t i = 0; i < n; ++i) bad += h[i] != 2.0f;
      fcl_mem_release(&b);
    }
  CHECKF(bad == 0, "%zu values of a fill enqueued right after the create were overwritten", bad);
  free(h);
}

/* fcl_mem_release frees the memory once the commands that use it are done (runtime.h): a
 * buffer released while fills of it are queued (the host far ahead of the device), then a new
 * one of the same size created with initial contents at once (where the allocator may hand the
 * same memory back), must keep those contents when the queued fills run. */
static void check_release_waits(fcl_context *ctx, fcl_queue *q) {
  enum { N = 16 << 20, FILLS = 2000, ROUNDS = 4 }; /* 64 MiB of floats */
  float *h = malloc((size_t)N * sizeof *h);
  if (!h) return;
  size_t bad = 0;
  const float one = 1.0f;
  for (int r = 0; r < ROUNDS; ++r) {
    fcl_mem *a = NULL, *b = NULL;
    CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, (size_t)N * sizeof *h, NULL, &a));
    for (int i = 0; a && i < FILLS; ++i)
      CHECK_OK(fcl_mem_fill(q, a, &one, sizeof one, 0, (size_t)N * sizeof *h, 0, NULL, NULL));
    fcl_mem_release(&a);
    for (size_t i = 0; i < N; ++i) h[i] = 2.0f;
    CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, (size_t)N * sizeof *h, h, &b));
    CHECK_OK(fcl_mem_read(q, b, 0, (size_t)N * sizeof *h, h, FCL_BLOCKING, 0, NULL, NULL));
    for (size_t i = 0; i < N; ++i) bad += h[i] != 2.0f;
    fcl_mem_release(&b);
  }
  CHECKF(bad == 0,
         "%zu values of a buffer created after a release were overwritten by the "
         "released buffer's queued fills",
         bad);
  free(h);
}

/* Releasing memory or a user event does not wait for the device: with a queue held by a user
 * event that this thread would set later, a release that waited (CUDA's cuMemFree and
 * cuMemFreeHost wait for the whole device) would never return. The gate opens from another
 * thread after 2 s: a release that returns after that waited. The memory is freed later, and
 * a buffer made after the gate opened works. */
static void check_release_with_a_held_queue(fcl_context *ctx, fcl_queue *q) {
  fcl_queue *held = NULL;
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &held));
  fcl_test_gate *gate = fcl_test_gate_hold(ctx, held, 2.0, FCL_EVENT_COMPLETE);
  if (!held || !gate) return;
  for (int kind = 0; kind < 2; ++kind) {
    fcl_mem *b = NULL;
    CHECK_OK(fcl_mem_create(ctx, kind ? FCL_MEM_PINNED : FCL_MEM_DEVICE, 1 << 20, NULL, &b));
    fcl_mem_release(&b);
  }
  fcl_event *other = NULL;
  CHECK_OK(fcl_user_event_create(ctx, &other));
  CHECK_OK(fcl_user_event_complete(other));
  fcl_event_release(&other);
  CHECKF(!fcl_test_gate_opened(gate), "%s",
         "a release waited for a queue held by a user event (it would never return if this "
         "thread were to set the event)");
  fcl_test_gate_join(&gate);
  CHECK_OK(fcl_queue_finish(held));
  fcl_queue_release(&held);
  int v = 0;
  fcl_mem *after = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof v, &(int){7}, &after));
  CHECK_OK(fcl_mem_read(q, after, 0, sizeof v, &v, FCL_BLOCKING, 0, NULL, NULL));
  CHECK(v == 7);
  fcl_mem_release(&after);
}

static void check_gpu(const fcl_device_entry *e) {
  fcl_device_info d;
  fcl_device_characterization c;
  CHECK_OK(fcl_device_get_info(e->device, &d));
  CHECK_OK(fcl_device_characterize(e->device, &c));
  CHECK(c.simd_group_size >= 8 && c.local_mem_bank_count >= 16);
  if (strstr(d.vendor, "NVIDIA")) CHECK(c.nv_compute_capability_major >= 2);
  enum { N = 1 << 20 };
  fcl_context *ctx = NULL;
  fcl_program *p = NULL;
  fcl_kernel *k = NULL;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, NULL, FCL_QUEUE_PROFILING, &q));
  CHECK_OK(fcl_program_create_builtin(ctx, "selfcheck.cl", &p));
  CHECK_OK(fcl_program_build(p, NULL));
  CHECK_OK(fcl_kernel_create(p, "axpy", &k));
  if (!k || !q) return;
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(i % 4096);
    y[i] = 1.0f;
  }
  fcl_mem *bx = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, N * sizeof *x, x, &bx));
  fcl_mem *by = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, N * sizeof *y, y, &by));
  CHECK_OK(fcl_kernel_set_arg_f32(k, 0, 0.25f));
  CHECK_OK(fcl_kernel_set_arg_buffer(k, 1, bx));
  CHECK_OK(fcl_kernel_set_arg_buffer(k, 2, by));
  CHECK_OK(fcl_kernel_set_arg_i32(k, 3, N));
  size_t g = N, l = 256;
  fcl_event *ev = NULL;
  CHECK_OK(fcl_kernel_enqueue(k, q, 1, &g, &l, NULL, 0, 0, NULL, &ev));
  check_contents_before_commands(ctx, q);
  check_release_waits(ctx, q);
  check_release_with_a_held_queue(ctx, q);
  CHECK_OK(fcl_mem_read(q, by, 0, N * sizeof *y, y, FCL_BLOCKING, 0, NULL, NULL));
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += y[i] != 0.25f * (float)(i % 4096) + 1.0f;
  CHECKF(bad == 0, "%d wrong values", bad);
  fcl_event_times t;
  CHECK_OK(fcl_event_profile(ev, &t));
  CHECK(t.end_ns > t.start_ns);
  printf("  axpy over %d floats: %.1f us\n", N, (t.end_ns - t.start_ns) / 1e3);
  fcl_event_release(&ev);
  fcl_mem_release(&bx);
  fcl_mem_release(&by);
  free(x);
  free(y);
  fcl_queue_release(&q);
  fcl_kernel_destroy(&k);
  fcl_program_release(&p);
  fcl_context_release(&ctx);
}

int main(void) {
  fcl_device_entry *list = NULL;
  size_t n = 0, gpus = 0;
  if (fcl_device_list(&list, &n) != FCL_OK) return FCL_TEST_SKIP;
  for (size_t i = 0; i < n; ++i) {
    fcl_device_info info;
    if (fcl_device_get_info(list[i].device, &info) != FCL_OK || !(info.type & FCL_DEVICE_GPU))
      continue;
    ++gpus;
    int before = fcl_test_failures;
    check_gpu(&list[i]);
    printf("[%u:%u] %s: %s\n", list[i].platform_index, list[i].device_index,
           fcl_test_device_name(list[i].device), fcl_test_failures == before ? "passed" : "FAILED");
  }
  free(list);
  if (gpus == 0) {
    printf("no GPU: skipped\n");
    return FCL_TEST_SKIP;
  }
  return fcl_test_exit_code();
}
