/* Kernels: argument metadata, typed scalars (wrong type or size names kernel, index, argument,
 * expected and given), buffers (NULL, sub-buffers), local memory, work-group information,
 * enqueue with offsets and g_times_l, unset arguments, unknown kernel names, on-device queues
 * as arguments. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

static const char *source =
    "FCL_KERNEL void scale(FCL_GLOBAL float *y, const float a, const int n, const double d,\n"
    "                    const long l, const uint u, const ulong ul, const float4 v) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) y[i] = a * y[i] + (float)(d + l + u + ul) + v.x + v.w;\n"
    "}\n"
    "FCL_KERNEL void is_null(FCL_GLOBAL const int *maybe, FCL_GLOBAL int *out) {\n"
    "  out[0] = maybe == 0 ? 1 : 2;\n"
    "}\n"
    "FCL_KERNEL FCL_GROUP_SIZE(16, 1, 1)\n"
    "void where(FCL_GLOBAL int *out) {\n"
    "  out[get_global_id(0)] = (int)get_global_id(0) * 1000 + (int)get_group_id(0);\n"
    "}\n";

/* Device-side enqueue: a parent kernel enqueues a child on the on-device queue it is given, and
 * the child writes 7. A device without on-device queues (PoCL's CPU device, NVIDIA's OpenCL):
 * NOT_SUPPORTED naming it, which is what is checked there. */
static void check_device_queue(fcl_context *ctx, fcl_queue *q, fcl_device *device,
                               const char *name) {
  fcl_queue *dq = NULL;
  fcl_status st = fcl_queue_create_on_device(ctx, device, 0, true, &dq);
  if (st == FCL_ERR_NOT_SUPPORTED) {
    CHECKF(fcl_test_contains(fcl_last_error(), "has no on-device queues") &&
               fcl_test_contains(fcl_last_error(), name),
           "unexpected message: %s", fcl_last_error());
    CHECK(dq == NULL);
    printf("  %s: no on-device queues, refused as it should be\n", name);
    return;
  }
  CHECK_OK(st);
  fcl_queue *big = NULL;
  CHECK_STATUS(fcl_queue_create_on_device(ctx, device, UINT_MAX, false, &big),
               FCL_ERR_INVALID_ARGUMENT, "over the");
  static const char *src =
      "FCL_KERNEL void parent(queue_t dq, FCL_GLOBAL int *out) {\n"
      "  enqueue_kernel(dq, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), ^{ out[0] = 7; });\n"
      "}\n";
  fcl_program *p = NULL;
  fcl_kernel *k = NULL;
  CHECK_OK(fcl_program_create_source(ctx, src, "device enqueue", &p));
  CHECK_OK(fcl_program_build(p, "-cl-std=CL2.0"));
  CHECK_OK(fcl_kernel_create(p, "parent", &k));
  cl_int out = 0;
  fcl_mem *buf = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof out, &out, &buf));
  if (k && dq && buf) {
    fcl_kernel_arg_info info;
    CHECK_OK(fcl_kernel_get_arg_info(k, 0, &info));
    CHECK(info.kind == FCL_ARG_QUEUE);
    CHECK_STATUS(fcl_kernel_set_arg_queue(k, 1, dq), FCL_ERR_INVALID_ARGUMENT, "not a queue_t");
    CHECK_OK(fcl_kernel_set_arg_queue(k, 0, dq));
    CHECK_OK(fcl_kernel_set_arg_buffer(k, 1, buf));
    size_t one = 1;
    CHECK_OK(fcl_kernel_enqueue(k, q, 1, &one, NULL, NULL, 0, 0, NULL, NULL));
    CHECK_OK(fcl_mem_read(q, buf, 0, sizeof out, &out, FCL_BLOCKING, 0, NULL, NULL));
    CHECKF(out == 7, "the child kernel wrote %d, not 7", out);
  }
  fcl_mem_release(&buf);
  fcl_kernel_destroy(&k);
  fcl_program_release(&p);
  fcl_queue_release(&dq);
}

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  fcl_context *ctx = NULL;
  fcl_program *p = NULL;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  if (!ctx) return;
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  CHECK_OK(fcl_program_create_source(ctx, source, "kernel test", &p));
  const bool on_opencl = !strcmp(fcl_device_backend(e->device), "opencl");
  fcl_device_info d;
  CHECK_OK(fcl_device_get_info(e->device, &d));
  bool fp64 = fcl_device_has_extension(&d, "cl_khr_fp64");
  if (!fp64) fcl_test_skip_part(d.name, "the typed check of a double argument (no cl_khr_fp64)");
  /* Without fp64 the double argument becomes a float and its typed check is skipped below. */
  CHECK_OK(fcl_program_build(p, fp64 ? NULL : "-Ddouble=float"));
  fcl_kernel *k = NULL, *n = NULL, *w = NULL, *typo = NULL;
  CHECK_OK(fcl_kernel_create(p, "scale", &k));
  CHECK_OK(fcl_kernel_create(p, "is_null", &n));
  CHECK_OK(fcl_kernel_create(p, "where", &w));
  CHECK_STATUS(fcl_kernel_create(p, "scael", &typo), FCL_ERR_NOT_FOUND, "no kernel 'scael'");
  CHECK(fcl_test_contains(fcl_last_error(), "scale") &&
        fcl_test_contains(fcl_last_error(), "where"));
  CHECK(typo == NULL);
  if (!k || !n || !w || !q) goto done;
  CHECK(fcl_kernel_program(k) == p && fcl_program_context(p) == ctx);
  if (on_opencl) { /* the native objects (flowcl/opencl.h) */
    CHECK(fcl_kernel_cl(k) && fcl_program_cl(p));
    cl_program of_kernel = NULL;
    clGetKernelInfo(fcl_kernel_cl(k), CL_KERNEL_PROGRAM, sizeof of_kernel, &of_kernel, NULL);
    CHECK(of_kernel == fcl_program_cl(p));
  }

  /* Metadata. */
  CHECK(fcl_kernel_num_args(k) == 8);
  fcl_kernel_arg_info info;
  CHECK_OK(fcl_kernel_get_arg_info(k, 0, &info));
  CHECK(info.kind == FCL_ARG_GLOBAL && strcmp(info.name, "y") == 0);
  CHECK_OK(fcl_kernel_get_arg_info(k, 1, &info));
  CHECK(info.kind == FCL_ARG_SCALAR && strcmp(info.type_name, "float") == 0 && info.size == 4);
  CHECK_OK(fcl_kernel_get_arg_info(k, 7, &info));
  CHECK(info.kind == FCL_ARG_SCALAR && info.size == 16);
  CHECK_STATUS(fcl_kernel_get_arg_info(k, 8, &info), FCL_ERR_INVALID_ARGUMENT, "out of range");
  cl_uint idx = 99;
  CHECK_OK(fcl_kernel_arg_index(k, "n", &idx));
  CHECK(idx == 2);
  CHECK_STATUS(fcl_kernel_arg_index(k, "nope", &idx), FCL_ERR_NOT_FOUND, "'nope'");

  /* Typed scalars: mix-ups are refused with the full context. */
  CHECK_STATUS(fcl_kernel_set_arg_i32(k, 1, 3), FCL_ERR_INVALID_ARGUMENT,
               "kernel 'scale' argument 1 (a, float): wrong type, expected float (4 bytes), "
               "given int32_t (int) (4 bytes)");
  CHECK_STATUS(fcl_kernel_set_arg_f32(k, 2, 3.0f), FCL_ERR_INVALID_ARGUMENT, "argument 2 (n, int)");
  CHECK_STATUS(fcl_kernel_set_arg_f64(k, 1, 2.0), FCL_ERR_INVALID_ARGUMENT,
               "given double (8 bytes)");
  CHECK_STATUS(fcl_kernel_set_arg_i64(k, 2, 2), FCL_ERR_INVALID_ARGUMENT, "expected int");
  double wrong = 1.0;
  CHECK_STATUS(fcl_kernel_set_arg(k, 1, sizeof wrong, &wrong), FCL_ERR_INVALID_ARGUMENT,
               "kernel 'scale' argument 1 (a, float): wrong size, expected 4 bytes, given 8 bytes");
  CHECK_STATUS(fcl_kernel_set_arg_f32(k, 8, 1.0f), FCL_ERR_INVALID_ARGUMENT, "index 8");
  CHECK_STATUS(fcl_kernel_set_arg_f32(k, 0, 1.0f), FCL_ERR_INVALID_ARGUMENT, "argument 0 (y");
  CHECK_STATUS(fcl_kernel_set_arg_buffer(k, 1, NULL), FCL_ERR_INVALID_ARGUMENT, "not a buffer");
  CHECK_STATUS(fcl_kernel_set_arg_local(k, 0, 64), FCL_ERR_INVALID_ARGUMENT, "not a local pointer");

  /* A correct launch: y = 2 y + (0.5 + 1 + 2 + 3) + 10 + 40 over the sub-buffer [64, 128)
   * (OpenCL; on CUDA, which has no sub-buffers, over [0, 64) of the buffer). */
  enum { N = 256 };
  float host[N];
  for (int i = 0; i < N; ++i) host[i] = (float)i;
  fcl_mem *y = NULL, *sub = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof host, host, &y));
  size_t origin = 0;
  if (on_opencl) {
    cl_int err;
    cl_uint align_bits = d.mem_base_addr_align ? d.mem_base_addr_align : 1024;
    origin = (align_bits / 8 + sizeof(float) - 1) / sizeof(float) * sizeof(float);
    cl_buffer_region region = {origin, 64 * sizeof(float)};
    cl_mem native_sub = clCreateSubBuffer(fcl_mem_cl(y), CL_MEM_READ_WRITE,
                                          CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CHECK(err == CL_SUCCESS);
    /* a sub-buffer through the interop: the flowcl object holds it */
    CHECK_OK(fcl_mem_wrap(ctx, native_sub, &sub));
    CHECK(fcl_mem_size(sub) == 64 * sizeof(float) && fcl_mem_where(sub) == FCL_MEM_DEVICE);
    clReleaseMemObject(native_sub);
  }
  /* Leave argument 7 unset: the enqueue error names it. */
  CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, sub ? sub : y));
  CHECK_OK(fcl_kernel_set_arg_f32(k, 1, 2.0f));
  CHECK_OK(fcl_kernel_set_arg_i32(k, 2, 64));
  if (fp64)
    CHECK_OK(fcl_kernel_set_arg_f64(k, 3, 0.5));
  else
    CHECK_OK(fcl_kernel_set_arg_f32(k, 3, 0.5f));
  CHECK_OK(fcl_kernel_set_arg_i64(k, 4, 1));
  CHECK_OK(fcl_kernel_set_arg_u32(k, 5, 2));
  CHECK_OK(fcl_kernel_set_arg_u64(k, 6, 3));
  size_t global = 64, local = 16;
  fcl_status st = fcl_kernel_enqueue(k, q, 1, &global, NULL, NULL, 0, 0, NULL, NULL);
  if (on_opencl)
    CHECK(st == FCL_ERR_OPENCL && fcl_test_contains(fcl_last_error(), "CL_INVALID_KERNEL_ARGS"));
  else
    CHECK(st == FCL_ERR_INVALID_ARGUMENT && fcl_test_contains(fcl_last_error(), "is not set"));
  CHECKF(fcl_test_contains(fcl_last_error(), "7 (v)"), "unset argument: %s", fcl_last_error());
  const float v[4] = {10, 0, 0, 40};
  CHECK_OK(fcl_kernel_set_arg(k, 7, sizeof v, v));
  CHECK_OK(fcl_kernel_enqueue(k, q, 1, &global, &local, NULL, 0, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(q, y, 0, sizeof host, host, FCL_BLOCKING, 0, NULL, NULL));
  size_t first = origin / sizeof(float);
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    float expect = (size_t)i >= first && (size_t)i < first + 64 ? 2.0f * i + 6.5f + 50.0f
                                                                : (float)i;
    bad += !fcl_test_close(host[i], expect, 4, 0, true);
  }
  CHECKF(bad == 0, "%d wrong values after the sub-buffer launch", bad);
  CHECK_STATUS(fcl_kernel_enqueue(k, q, 4, &global, NULL, NULL, 0, 0, NULL, NULL),
               FCL_ERR_INVALID_ARGUMENT, "work_dim");
  CHECK_STATUS(
      fcl_kernel_enqueue(k, q, 1, &global, NULL, NULL, FCL_LAUNCH_G_TIMES_L, 0, NULL, NULL),
      FCL_ERR_INVALID_ARGUMENT, "needs local sizes");

  /* NULL buffer argument. */
  int flag = 0;
  fcl_mem *out = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, 64 * sizeof(int), NULL, &out));
  CHECK_OK(fcl_kernel_set_arg_buffer(n, 0, NULL));
  CHECK_OK(fcl_kernel_set_arg_buffer(n, 1, out));
  CHECK_OK(fcl_kernel_enqueue_task(n, q, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(q, out, 0, sizeof flag, &flag, FCL_BLOCKING, 0, NULL, NULL));
  CHECK(flag == 1);
  CHECK_OK(fcl_kernel_set_arg_buffer(n, 0, out));
  CHECK_OK(fcl_kernel_enqueue_task(n, q, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(q, out, 0, sizeof flag, &flag, FCL_BLOCKING, 0, NULL, NULL));
  CHECK(flag == 2);

  /* Work-group information honours reqd_work_group_size (OpenCL; CUDA's launch bounds are a
   * maximum, not reported). */
  fcl_kernel_work_group_info wg;
  CHECK_OK(fcl_kernel_get_work_group_info(w, e->device, &wg));
  if (on_opencl) CHECK(wg.compile_work_group_size[0] == 16 && wg.compile_work_group_size[1] == 1);
  CHECK(wg.work_group_size >= 16 && wg.preferred_work_group_size_multiple >= 1);

  /* g_times_l: 2 groups of 16 with an offset of 16 (CUDA grids have none: 0 there): items
   * 16..47; group ids do not include the offset (OpenCL 1.2, 3.2), so they are 0 and 1. */
  int where[64];
  memset(where, 0xff, sizeof where);
  CHECK_OK(fcl_mem_write(q, out, 0, sizeof where, where, FCL_BLOCKING, 0, NULL, NULL));
  size_t groups = 2, wl = 16, offset = on_opencl ? 16 : 0;
  CHECK_OK(fcl_kernel_set_arg_buffer(w, 0, out));
  CHECK_OK(fcl_kernel_enqueue(w, q, 1, &groups, &wl, &offset, FCL_LAUNCH_G_TIMES_L, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(q, out, 0, sizeof where, where, FCL_BLOCKING, 0, NULL, NULL));
  bad = 0;
  for (int i = 0; i < 64; ++i)
    bad += where[i] != ((size_t)i >= offset && (size_t)i < offset + 32
                            ? i * 1000 + (i - (int)offset) / 16
                            : -1);
  CHECKF(bad == 0, "%d wrong items in the g_times_l launch", bad);
  /* A work-group size that contradicts reqd_work_group_size: the driver's code comes back
   * (OpenCL; under CUDA's launch bounds a smaller block is valid). */
  size_t g8 = 8, l8 = 8;
  if (on_opencl) {
    st = fcl_kernel_enqueue(w, q, 1, &g8, &l8, NULL, 0, 0, NULL, NULL);
    CHECK(st == FCL_ERR_OPENCL && fcl_last_native_error() == CL_INVALID_WORK_GROUP_SIZE &&
          fcl_test_contains(fcl_last_error(), "'where' (global (8), local (8))"));
  }

  /* On-device queues (OpenCL's): a queue for an argument of another type, or none, is refused. */
  if (on_opencl)
    CHECK_STATUS(fcl_kernel_set_arg_queue(n, 0, q), FCL_ERR_INVALID_ARGUMENT,
                 "is a global pointer, not a queue_t");
  else
    CHECK_STATUS(fcl_kernel_set_arg_queue(n, 0, q), FCL_ERR_INVALID_ARGUMENT, "not an OpenCL");
  CHECK_STATUS(fcl_kernel_set_arg_queue(n, 0, NULL), FCL_ERR_INVALID_ARGUMENT, "argument 3");
  if (on_opencl) check_device_queue(ctx, q, e->device, d.name); /* OpenCL 2's */

  fcl_mem_release(&out);
  fcl_mem_release(&sub);
  fcl_mem_release(&y);
done:
  fcl_kernel_destroy(&k);
  fcl_kernel_destroy(&n);
  fcl_kernel_destroy(&w);
  CHECK(k == NULL);
  fcl_queue_release(&q);
  fcl_program_release(&p);
  fcl_context_release(&ctx);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
