/* Allocators on the device: deferred, immediate, host-pinned (mappable), SVM where supported,
 * and their errors. */
#include <string.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

static void round_trip(fcl_queue *q, fcl_allocator *a, size_t n) {
  fcl_allocation m;
  CHECK_OK(fcl_allocator_alloc(a, n, &m));
  if (!m.buffer) return;
  CHECK(m.size == n);
  unsigned char *in = malloc(n), *out = malloc(n);
  for (size_t i = 0; i < n; ++i) in[i] = (unsigned char)(i * 7);
  CHECK_OK(fcl_mem_write(q, m.buffer, 0, n, in, FCL_BLOCKING, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(q, m.buffer, 0, n, out, FCL_BLOCKING, 0, NULL, NULL));
  CHECK(memcmp(in, out, n) == 0);
  free(in);
  free(out);
  fcl_allocator_free(a, &m);
  CHECK(m.buffer == NULL);
}

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  fcl_context *ctx = NULL;
  fcl_queue *q = NULL;
  fcl_allocator *a = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  fcl_device_info d;
  CHECK_OK(fcl_device_get_info(e->device, &d));
  const bool on_opencl = !strcmp(fcl_device_backend(e->device), "opencl");

  /* More than the device's memory, at once or in parts: refused with the figures, though the
   * deferred allocator's driver would accept it lazily (NVIDIA does; PoCL then aborts at first
   * use); the immediate allocator refuses it too. */
  CHECK_OK(fcl_allocator_create_deferred(ctx, FCL_MEM_DEVICE, &a));
  round_trip(q, a, 12345);
  fcl_allocation m;
  size_t too_big = (size_t)d.global_mem_size * 2;
  char size_text[64];
  snprintf(size_text, sizeof size_text, "%zu bytes", too_big);
  fcl_status st = fcl_allocator_alloc(a, too_big, &m);
  CHECKF((st == FCL_ERR_INVALID_ARGUMENT || st == FCL_ERR_OUT_OF_MEMORY) &&
             fcl_test_contains(fcl_last_error(), size_text) && m.buffer == NULL,
         "deferred allocation of %zu bytes: %s: %s", too_big, fcl_status_name(st),
         fcl_last_error());
  if (st == FCL_OK) fcl_allocator_free(a, &m);
  /* in parts no larger than the largest allocation: the one past the device memory fails (on
   * CUDA, which allocates at once, the one past what the context leaves free: within 10 %) */
  enum { PARTS = 64 };
  fcl_allocation parts[PARTS];
  size_t part = d.max_mem_alloc_size < d.global_mem_size / 3 ? (size_t)d.max_mem_alloc_size
                                                             : (size_t)(d.global_mem_size / 3);
  int held = 0;
  for (; held < PARTS; ++held)
    if ((st = fcl_allocator_alloc(a, part, &parts[held])) != FCL_OK) break;
  CHECKF(
      st == FCL_ERR_OUT_OF_MEMORY && fcl_test_contains(fcl_last_error(), "device memory") &&
          (double)(held + 1) * (double)part > (on_opencl ? 1.0 : 0.9) * (double)d.global_mem_size,
      "%d parts of %zu bytes held, then %s: %s", held, part, fcl_status_name(st), fcl_last_error());
  while (held > 0) fcl_allocator_free(a, &parts[--held]);
  round_trip(q, a, 12345); /* freeing gave the room back */
  CHECK_STATUS(fcl_allocator_alloc(a, 0, &m), FCL_ERR_INVALID_ARGUMENT, "argument 2 (size)");
  fcl_allocator_release(&a);
  CHECK(a == NULL);

  CHECK_OK(fcl_allocator_create_immediate(ctx, q, FCL_MEM_DEVICE, &a));
  round_trip(q, a, 1 << 20);
  st = fcl_allocator_alloc(a, too_big, &m);
  CHECKF((st == FCL_ERR_INVALID_ARGUMENT || st == FCL_ERR_OUT_OF_MEMORY) &&
             fcl_test_contains(fcl_last_error(), size_text),
         "immediate allocation of %zu bytes: %s: %s", too_big, fcl_status_name(st),
         fcl_last_error());
  CHECK(m.buffer == NULL && m.svm == NULL);
  fcl_allocator_release(&a);
  CHECK_STATUS(fcl_allocator_create_immediate(ctx, NULL, FCL_MEM_DEVICE, &a),
               FCL_ERR_INVALID_ARGUMENT, "argument 2 (queue)");

  /* Host-pinned: mappable staging memory. */
  CHECK_OK(fcl_allocator_create_host_pinned(ctx, &a));
  CHECK_OK(fcl_allocator_alloc(a, 4096, &m));
  CHECK(fcl_mem_where(m.buffer) == FCL_MEM_PINNED);
  if (on_opencl) { /* OpenCL's own view of it */
    cl_mem_flags flags = 0;
    clGetMemObjectInfo(fcl_mem_cl(m.buffer), CL_MEM_FLAGS, sizeof flags, &flags, NULL);
    CHECK(flags & CL_MEM_ALLOC_HOST_PTR);
  }
  int *p = NULL;
  CHECK_OK(fcl_mem_map(q, m.buffer, FCL_MAP_WRITE, 0, 4096, 0, NULL, (void **)&p));
  if (p) {
    for (int i = 0; i < 1024; ++i) p[i] = i * i;
    CHECK_OK(fcl_mem_unmap(q, m.buffer, p, 0, NULL, NULL));
    int back[1024];
    CHECK_OK(fcl_mem_read(q, m.buffer, 0, sizeof back, back, FCL_BLOCKING, 0, NULL, NULL));
    CHECK(back[1023] == 1023 * 1023 && back[5] == 25);
  }
  fcl_allocator_free(a, &m);
  fcl_allocator_release(&a);

  /* SVM where the device has it; otherwise a clear refusal. */
  if (d.svm_capabilities & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) {
    CHECK_OK(fcl_allocator_create_svm(ctx, &a));
    CHECK_OK(fcl_allocator_alloc(a, 1 << 16, &m));
    CHECK(m.svm != NULL && m.buffer == NULL);
    const int pattern = 0x01020304;
    CHECK(clEnqueueSVMMemFill(fcl_queue_cl(q), m.svm, &pattern, sizeof pattern, 1 << 16, 0, NULL,
                              NULL) == CL_SUCCESS);
    CHECK(clEnqueueSVMMap(fcl_queue_cl(q), CL_TRUE, CL_MAP_READ, m.svm, 1 << 16, 0, NULL, NULL) ==
          CL_SUCCESS);
    CHECK(((int *)m.svm)[100] == pattern);
    clEnqueueSVMUnmap(fcl_queue_cl(q), m.svm, 0, NULL, NULL);
    clFinish(fcl_queue_cl(q));
    fcl_allocator_free(a, &m);
    fcl_allocator_release(&a);
  } else {
    CHECK_STATUS(fcl_allocator_create_svm(ctx, &a), FCL_ERR_NOT_SUPPORTED,
                 "shared virtual memory is not supported by this device");
  }
  fcl_queue_release(&q);
  fcl_context_release(&ctx);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
