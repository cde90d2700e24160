/* launch_overhead: per-launch cost of flowcl's kernel enqueue (fcl_kernel_set_arg_f32 +
 * fcl_kernel_enqueue) against raw OpenCL (clSetKernelArg + clEnqueueNDRangeKernel) on the same
 * tiny kernel, side by side: batches of the two loops alternate, and the medians over the
 * repeats are compared. Goal: ratio <= 1.10.
 * Usage: launch_overhead [--device SPEC] [--count LAUNCHES] [--repeats R] [--json FILE] */
#define _POSIX_C_SOURCE 200809L
#include <flowcl/flowcl.h>

#define BENCH_NAME "launch_overhead"
#include "bench_util.h"
#include "flowcl/opencl.h"

#define GOAL 1.10

int main(int argc, char **argv) {
  bench_options o = {NULL, NULL, 21, 2000};
  if (bench_parse(argc, argv, &o, "[--device SPEC] [--count LAUNCHES] [--repeats R] [--json FILE]"))
    return 2;
  const char *spec = o.device, *json = o.json;
  int launches = (int)o.count, repeats = o.repeats;
  fcl_device_entry dev;
  fcl_context *ctx = NULL;
  fcl_program *prog = NULL;
  fcl_kernel *k = NULL;
  fcl_queue *q = NULL;
  if (fcl_device_select(spec, &dev) != FCL_OK) DIE("no device");
  REQUIRE_OPENCL(dev.device);
  if (fcl_context_create(1, &dev.device, &ctx) != FCL_OK) DIE("context");
  if (fcl_queue_create(ctx, NULL, 0, &q) != FCL_OK) DIE("queue");
  const char *src = "__kernel void tiny(__global float *x, const float a) {\n"
                    "  x[get_global_id(0)] += a;\n}\n";
  if (fcl_program_create_source(ctx, src, "launch_overhead tiny kernel", &prog) != FCL_OK ||
      fcl_program_build(prog, NULL) != FCL_OK || fcl_kernel_create(prog, "tiny", &k) != FCL_OK)
    DIE("build");
  cl_int err;
  fcl_mem *buf = NULL;
  if (fcl_mem_create(ctx, FCL_MEM_DEVICE, 64 * sizeof(float), NULL, &buf) != FCL_OK) DIE("buffer");
  /* The raw loop uses its own cl_kernel so that neither path sees the other's state. */
  cl_kernel raw = clCreateKernel(fcl_program_cl(prog), "tiny", &err);
  if (err != CL_SUCCESS) DIE("clCreateKernel: %s", fcl_cl_error_name(err));
  cl_mem native = fcl_mem_cl(buf);
  clSetKernelArg(raw, 0, sizeof native, &native);
  if (fcl_kernel_set_arg_buffer(k, 0, buf) != FCL_OK) DIE("set buffer");
  const size_t global = 64;

  double *t_fcl = malloc(repeats * sizeof *t_fcl), *t_raw = malloc(repeats * sizeof *t_raw);
  for (int r = -2; r < repeats; ++r) { /* two warm-up rounds */
    for (int order = 0; order < 2; ++order) {
      bool use_fcl = (order == 0) == (r % 2 == 0); /* alternate which loop goes first */
      clFinish(fcl_queue_cl(q));
      double t0 = bench_now();
      if (use_fcl) {
        for (int i = 0; i < launches; ++i) {
          if (fcl_kernel_set_arg_f32(k, 1, (float)i) != FCL_OK ||
              fcl_kernel_enqueue(k, q, 1, &global, NULL, NULL, 0, 0, NULL, NULL) != FCL_OK)
            DIE("flowcl launch");
        }
      } else {
        for (int i = 0; i < launches; ++i) {
          float a = (float)i;
          if (clSetKernelArg(raw, 1, sizeof a, &a) != CL_SUCCESS ||
              clEnqueueNDRangeKernel(fcl_queue_cl(q), raw, 1, NULL, &global, NULL, 0, NULL, NULL) !=
                  CL_SUCCESS)
            DIE("raw launch");
        }
      }
      clFinish(fcl_queue_cl(q));
      double per_launch = (bench_now() - t0) / launches * 1e6;
      if (r >= 0) (use_fcl ? t_fcl : t_raw)[r] = per_launch;
    }
  }
  double m_fcl = bench_median(t_fcl, repeats), m_raw = bench_median(t_raw, repeats),
         ratio = m_fcl / m_raw;
  fcl_device_info info;
  fcl_device_get_info(dev.device, &info);
  printf("launch_overhead on %s (%d launches x %d repeats, medians)\n", info.name, launches,
         repeats);
  printf("  %-36s %10.3f us\n", "flowcl set_arg_f32 + enqueue", m_fcl);
  printf("  %-36s %10.3f us\n", "raw clSetKernelArg + clEnqueueNDRange", m_raw);
  printf("  %-36s %10.3f    (goal <= %.2f: %s)\n", "ratio flowcl / raw", ratio, GOAL,
         ratio <= GOAL ? "met" : "NOT MET");
  if (json) {
    FILE *f = fopen(json, "w");
    if (!f) DIE("cannot write %s", json);
    fprintf(f,
            "{\"benchmark\": \"launch_overhead\", \"device\": \"%s\", \"results\": [\n"
            "  {\"name\": \"flowcl_launch\", \"value\": %.4f, \"unit\": \"us\", \"launches\": %d, "
            "\"repeats\": %d},\n"
            "  {\"name\": \"raw_opencl_launch\", \"value\": %.4f, \"unit\": \"us\", \"launches\": "
            "%d, \"repeats\": %d},\n"
            "  {\"name\": \"ratio\", \"value\": %.4f, \"unit\": \"flowcl/raw\", \"goal_max\": "
            "%.2f}\n]}\n",
            info.name, m_fcl, launches, repeats, m_raw, launches, repeats, ratio, GOAL);
    fclose(f);
  }
  free(t_fcl);
  free(t_raw);
  clReleaseKernel(raw);
  fcl_mem_release(&buf);
  fcl_queue_release(&q);
  fcl_kernel_destroy(&k);
  fcl_program_release(&prog);
  fcl_context_release(&ctx);
  return ratio <= GOAL ? 0 : 1;
}
