/* Capture of a launch as a C reproducer: the written file is compiled with the C compiler,
 * run on the same device, and its buffers after the launch must equal flowcl's own launch. */
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

typedef struct {
  const char *cc, *cflags, *libs;
} toolchain;

static bool run_command(const char *cmd) {
  int rc = system(cmd);
  CHECKF(rc == 0, "command failed (%d): %s", rc, cmd);
  return rc == 0;
}

static unsigned char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc(n > 0 ? (size_t)n : 1);
  *size = data ? fread(data, 1, (size_t)n, f) : 0;
  fclose(f);
  return data;
}

static void check_device(const fcl_device_entry *e, void *user) {
  const toolchain *tc = user;
  enum { N = 1024, GROUP = 32 };
  fcl_context *ctx = NULL;
  fcl_program *p = NULL;
  fcl_kernel *axpy = NULL, *sum = NULL;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  CHECK_OK(fcl_program_create_builtin(ctx, "selfcheck.cl", &p));
  CHECK_OK(fcl_program_build(p, "-DCAPTURE_TEST=\"quoted\\\\path\""));
  CHECK_OK(fcl_kernel_create(p, "axpy", &axpy));
  CHECK_OK(fcl_kernel_create(p, "group_sum", &sum));
  if (!axpy || !sum || !q) return;
  if (strcmp(fcl_device_backend(e->device), "opencl")) { /* a capture is an OpenCL program */
    size_t one = 1;
    CHECK_STATUS(fcl_kernel_capture(axpy, q, 1, &one, NULL, NULL, 0, "never-written.c"),
                 FCL_ERR_INVALID_ARGUMENT, "not an OpenCL kernel");
    fcl_kernel_destroy(&axpy);
    fcl_kernel_destroy(&sum);
    fcl_program_release(&p);
    fcl_queue_release(&q);
    fcl_context_release(&ctx);
    return;
  }
  float hx[N], hy[N];
  int hi[N];
  for (int i = 0; i < N; ++i) {
    hx[i] = (float)i * 0.25f;
    hy[i] = (float)(N - i);
    hi[i] = i * 3 - 100;
  }
  fcl_mem *x = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof hx, hx, &x));
  fcl_mem *y = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof hy, hy, &y));
  fcl_mem *ints = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof hi, hi, &ints));
  fcl_mem *sums = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, N / GROUP * sizeof(int), NULL, &sums));
  CHECK_OK(fcl_kernel_set_arg_f32(axpy, 0, 1.5f));
  CHECK_OK(fcl_kernel_set_arg_buffer(axpy, 1, x));
  CHECK_OK(fcl_kernel_set_arg_buffer(axpy, 2, y));
  CHECK_OK(fcl_kernel_set_arg_i32(axpy, 3, N - 5));
  CHECK_OK(fcl_kernel_set_arg_buffer(sum, 0, ints));
  CHECK_OK(fcl_kernel_set_arg_buffer(sum, 1, sums));
  CHECK_OK(fcl_kernel_set_arg_local(sum, 2, GROUP * sizeof(int)));

  char *dir = fcl_test_temp_dir("capture");
  if (!dir) return;
  char c1[4200], c2[4200];
  snprintf(c1, sizeof c1, "%s/axpy.c", dir);
  snprintf(c2, sizeof c2, "%s/group_sum.c", dir);
  size_t n = N, groups = N / GROUP, local = GROUP;
  /* Capture first (reads the inputs), then launch for real. */
  CHECK_OK(fcl_kernel_capture(axpy, q, 1, &n, NULL, NULL, 0, c1));
  CHECK_OK(fcl_kernel_capture(sum, q, 1, &groups, &local, NULL, FCL_LAUNCH_G_TIMES_L, c2));
  CHECK_OK(fcl_kernel_enqueue(axpy, q, 1, &n, NULL, NULL, 0, 0, NULL, NULL));
  CHECK_OK(
      fcl_kernel_enqueue(sum, q, 1, &groups, &local, NULL, FCL_LAUNCH_G_TIMES_L, 0, NULL, NULL));
  int hs[N / GROUP];
  clEnqueueReadBuffer(fcl_queue_cl(q), fcl_mem_cl(x), CL_TRUE, 0, sizeof hx, hx, 0, NULL, NULL);
  clEnqueueReadBuffer(fcl_queue_cl(q), fcl_mem_cl(y), CL_TRUE, 0, sizeof hy, hy, 0, NULL, NULL);
  clEnqueueReadBuffer(fcl_queue_cl(q), fcl_mem_cl(ints), CL_TRUE, 0, sizeof hi, hi, 0, NULL, NULL);
  clEnqueueReadBuffer(fcl_queue_cl(q), fcl_mem_cl(sums), CL_TRUE, 0, sizeof hs, hs, 0, NULL, NULL);

  /* The reproducers, built and run with nothing but the C compiler and OpenCL. */
  const char *names[2] = {c1, c2};
  for (int r = 0; r < 2; ++r) {
    char cmd[16384], out[4300];
    snprintf(out, sizeof out, "%s.out", names[r]);
    snprintf(cmd, sizeof cmd, "%s %s -o %s.exe %s %s && %s.exe %u:%u %s >/dev/null", tc->cc,
             tc->cflags, names[r], names[r], tc->libs, names[r], e->platform_index, e->device_index,
             out);
    if (!run_command(cmd)) continue;
    size_t size = 0;
    unsigned char *data = read_all(out, &size);
    if (r == 0) {
      CHECK(size == sizeof hx + sizeof hy);
      CHECK(data && memcmp(data, hx, sizeof hx) == 0);
      CHECK(data && size >= sizeof hx + sizeof hy && memcmp(data + sizeof hx, hy, sizeof hy) == 0);
    } else {
      CHECK(size == sizeof hi + sizeof hs);
      CHECK(data && size >= sizeof hi + sizeof hs && memcmp(data + sizeof hi, hs, sizeof hs) == 0);
    }
    free(data);
  }
  /* An argument left unset cannot be captured. */
  fcl_kernel *fresh = NULL;
  CHECK_OK(fcl_kernel_create(p, "axpy", &fresh));
  CHECK_STATUS(fcl_kernel_capture(fresh, q, 1, &n, NULL, NULL, 0, c1), FCL_ERR_INVALID_STATE,
               "argument 0 (a) is not set");
  fcl_kernel_destroy(&fresh);
  fcl_test_remove_dir(dir);
  free(dir);
  fcl_mem_release(&x);
  fcl_mem_release(&y);
  fcl_mem_release(&ints);
  fcl_mem_release(&sums);
  fcl_queue_release(&q);
  fcl_kernel_destroy(&axpy);
  fcl_kernel_destroy(&sum);
  fcl_program_release(&p);
  fcl_context_release(&ctx);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s CC CFLAGS LIBS\n", argv[0]);
    return 2;
  }
  toolchain tc = {argv[1], argv[2], argv[3]};
  return fcl_test_run_on_devices(check_device, &tc);
}
