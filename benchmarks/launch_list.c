/* launch_list: median cost per kernel of a list launcher of 100 small kernels with 2 parameters
 * that change on every call, against the same loop in raw OpenCL (clSetKernelArg x 2 +
 * clEnqueueNDRangeKernel per kernel), side by side (batches alternate). Goal: ratio <= 1.10.
 * When python3 can import pyopencl, the same loop through PyOpenCL
 * (benchmarks/launch_list_pyopencl.py) runs in the same process tree and is recorded as a ratio.
 * Usage: launch_list [--device SPEC] [--count CALLS_PER_BATCH] [--repeats R] [--json FILE] */
#define _POSIX_C_SOURCE 200809L
#include <flowcl/flowcl.h>

#define BENCH_NAME "launch_list"
#include "bench_util.h"
#include "flowcl/opencl.h"

enum { KERNELS = 100, GLOBAL = 64 };

static const char *source =
    "__kernel void advance(__global float *y, const float t, const int k) {\n"
    "  y[get_global_id(0)] += t * (float)k;\n}\n";

/* Median microseconds per kernel from the PyOpenCL peer, or a negative value when absent. */
static double pyopencl_peer(const char *script, const char *device, long calls, int repeats) {
  if (system("python3 -c 'import pyopencl' >/dev/null 2>&1") != 0) return -1.0;
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "python3 '%s' --calls %ld --repeats %d%s%s", script, calls, repeats,
           device ? " --device " : "", device ? device : "");
  FILE *p = popen(cmd, "r");
  if (!p) return -2.0;
  double us = -2.0;
  char line[512];
  while (fgets(line, sizeof line, p))
    if (sscanf(line, "pyopencl_us_per_kernel %lf", &us) == 1) break;
  pclose(p);
  return us;
}

int main(int argc, char **argv) {
  bench_options o = {NULL, NULL, 21, 20};
  if (bench_parse(argc, argv, &o, "[--device SPEC] [--count CALLS] [--repeats R] [--json FILE]"))
    return 2;
  fcl_device_entry dev;
  fcl_context *ctx = NULL;
  fcl_program *prog = NULL;
  fcl_queue *q = NULL;
  if (fcl_device_select(o.device, &dev) != FCL_OK) DIE("no device");
  REQUIRE_OPENCL(dev.device);
  if (fcl_context_create(1, &dev.device, &ctx) != FCL_OK ||
      fcl_queue_create(ctx, NULL, 0, &q) != FCL_OK)
    DIE("context");
  if (fcl_program_create_source(ctx, source, "launch_list advance kernel", &prog) != FCL_OK ||
      fcl_program_build(prog, NULL) != FCL_OK)
    DIE("build");
  cl_int err;
  fcl_mem *y = NULL;
  if (fcl_mem_create(ctx, FCL_MEM_DEVICE, GLOBAL * sizeof(float), NULL, &y) != FCL_OK)
    DIE("buffer");
  cl_mem native_y = fcl_mem_cl(y); /* for the raw loop */

  fcl_launcher *list = NULL;
  if (fcl_launcher_create_list("100 steps", &list) != FCL_OK) DIE("list");
  fcl_arg fixed = fcl_arg_buffer(0, y);
  fcl_param_spec ps[2] = {{"t", 1, FCL_TYPE_F32}, {"k", 2, FCL_TYPE_I32}};
  fcl_launch_config cfg = {.work_dim = 1, .global = {GLOBAL}};
  cl_kernel raw[KERNELS];
  for (int i = 0; i < KERNELS; ++i) {
    fcl_launcher *l = NULL;
    char name[32];
    snprintf(name, sizeof name, "step%d", i);
    if (fcl_launcher_create_kernel(prog, name, "advance", 1, &fixed, 2, ps, &cfg, &l) != FCL_OK ||
        fcl_launcher_list_push(list, l) != FCL_OK)
      DIE("launcher %d", i);
    raw[i] = clCreateKernel(fcl_program_cl(prog), "advance", &err);
    if (err != CL_SUCCESS) DIE("clCreateKernel");
    clSetKernelArg(raw[i], 0, sizeof native_y, &native_y);
  }
  fcl_param_set *params = NULL;
  size_t slot_t, slot_k;
  if (fcl_param_set_create(list, &params) != FCL_OK ||
      fcl_param_set_slot(params, "t", &slot_t) != FCL_OK ||
      fcl_param_set_slot(params, "k", &slot_k) != FCL_OK)
    DIE("parameters");

  double *t_fcl = malloc((size_t)o.repeats * sizeof *t_fcl);
  double *t_raw = malloc((size_t)o.repeats * sizeof *t_raw);
  long calls = o.count, step = 0;
  for (int r = -2; r < o.repeats; ++r) {
    for (int order = 0; order < 2; ++order) {
      bool use_fcl = (order == 0) == (r % 2 == 0);
      clFinish(fcl_queue_cl(q));
      double t0 = bench_now();
      for (long c = 0; c < calls; ++c, ++step) {
        float t = 1e-3f * (float)step;
        int k = (int)(step % 7);
        if (use_fcl) {
          fcl_param_set_value(params, slot_t, FCL_TYPE_F32, (fcl_value){.f32 = t});
          fcl_param_set_value(params, slot_k, FCL_TYPE_I32, (fcl_value){.i32 = k});
          if (fcl_launcher_call(list, q, params, 0, NULL, NULL) != FCL_OK) DIE("list call");
        } else {
          for (int i = 0; i < KERNELS; ++i) {
            size_t g = GLOBAL;
            if (clSetKernelArg(raw[i], 1, sizeof t, &t) != CL_SUCCESS ||
                clSetKernelArg(raw[i], 2, sizeof k, &k) != CL_SUCCESS ||
                clEnqueueNDRangeKernel(fcl_queue_cl(q), raw[i], 1, NULL, &g, NULL, 0, NULL, NULL) !=
                    CL_SUCCESS)
              DIE("raw loop");
          }
        }
      }
      clFinish(fcl_queue_cl(q));
      double us = (bench_now() - t0) / (double)(calls * KERNELS) * 1e6;
      if (r >= 0) (use_fcl ? t_fcl : t_raw)[r] = us;
    }
  }
  double m_fcl = bench_median(t_fcl, o.repeats), m_raw = bench_median(t_raw, o.repeats);
  double ratio = m_fcl / m_raw;
  fcl_device_info info;
  fcl_device_get_info(dev.device, &info);
  /* The peer script sits next to this file in the source tree. */
  double py = pyopencl_peer(FLOWCL_BENCH_DIR "/launch_list_pyopencl.py", o.device, calls,
                            o.repeats);
  printf(
      "launch_list on %s (%d kernels x %ld calls x %d repeats, 2 changing parameters, medians)\n",
      info.name, KERNELS, calls, o.repeats);
  printf("  %-32s %10.3f us/kernel\n", "flowcl list launcher", m_fcl);
  printf("  %-32s %10.3f us/kernel\n", "raw OpenCL loop", m_raw);
  printf("  %-32s %10.3f      (goal <= 1.10: %s)\n", "ratio flowcl / raw", ratio,
         ratio <= 1.10 ? "met" : "NOT MET");
  if (py > 0)
    printf("  %-32s %10.3f us/kernel (pyopencl / flowcl = %.2f)\n", "PyOpenCL peer", py,
           py / m_fcl);
  else
    printf("  %-32s %s\n", "PyOpenCL peer",
           py == -1.0 ? "not run (pyopencl not importable)" : "failed to run");
  if (o.json) {
    FILE *f = fopen(o.json, "w");
    if (!f) DIE("cannot write %s", o.json);
    fprintf(
        f,
        "{\"benchmark\": \"launch_list\", \"device\": \"%s\", \"results\": [\n"
        "  {\"name\": \"flowcl_list_per_kernel\", \"value\": %.4f, \"unit\": \"us\", \"kernels\": "
        "%d, \"calls\": %ld, \"repeats\": %d},\n"
        "  {\"name\": \"raw_opencl_per_kernel\", \"value\": %.4f, \"unit\": \"us\"},\n"
        "  {\"name\": \"ratio\", \"value\": %.4f, \"unit\": \"flowcl/raw\", \"goal_max\": 1.10}",
        info.name, m_fcl, KERNELS, calls, o.repeats, m_raw, ratio);
    if (py > 0)
      fprintf(f,
              ",\n  {\"name\": \"pyopencl_per_kernel\", \"value\": %.4f, \"unit\": \"us\"},\n"
              "  {\"name\": \"pyopencl_ratio\", \"value\": %.4f, \"unit\": \"pyopencl/flowcl\"}",
              py, py / m_fcl);
    else
      fprintf(f, ",\n  {\"name\": \"pyopencl_per_kernel\", \"value\": null, \"unit\": \"us\", "
                 "\"note\": \"pyopencl not importable\"}");
    fprintf(f, "\n]}\n");
    fclose(f);
  }
  for (int i = 0; i < KERNELS; ++i) clReleaseKernel(raw[i]);
  free(t_fcl);
  free(t_raw);
  fcl_param_set_destroy(&params);
  fcl_launcher_destroy(&list);
  fcl_mem_release(&y);
  fcl_queue_release(&q);
  fcl_program_release(&prog);
  fcl_context_release(&ctx);
  return ratio <= 1.10 ? 0 : 1;
}
