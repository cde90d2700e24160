/* Programs: source build, failed build with its log, build status and logs, FLOWCL_BUILD_OPTIONS,
 * binaries round trip, compile + link with an embedded header, all kernels, SPIR-V support,
 * embedded kernel sources. The binary cache is off here (test_program_cache covers it). */
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

/* Runs kernel "k(__global int *out)" with one work-item and returns out[0]. */
static int run_one(fcl_context *ctx, fcl_program *prog, const char *name) {
  int value = -1;
  fcl_kernel *k = NULL;
  fcl_queue *q = NULL;
  fcl_mem *out = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof(int), NULL, &out));
  CHECK_OK(fcl_kernel_create(prog, name, &k));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  if (k && q && out) {
    CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, out));
    CHECK_OK(fcl_kernel_enqueue_task(k, q, 0, NULL, NULL));
    CHECK_OK(fcl_mem_read(q, out, 0, sizeof value, &value, FCL_BLOCKING, 0, NULL, NULL));
  }
  fcl_queue_release(&q);
  if (out) fcl_mem_release(&out);
  fcl_kernel_destroy(&k);
  return value;
}

static void check_device(const fcl_device_entry *e, void *user) {
  const char *kernels_dir = user;
  fcl_context *ctx = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  if (!ctx) return;
  fcl_device *dev = e->device;

  /* Source build, options recorded, FLOWCL_BUILD_OPTIONS appended. */
  const char *src = "FCL_KERNEL void k(FCL_GLOBAL int *out) { out[0] = VALUE * 2; }\n";
  fcl_program *p = NULL;
  CHECK_OK(fcl_program_create_source(ctx, src, "test: VALUE", &p));
  setenv("FLOWCL_BUILD_OPTIONS", "-DVALUE=21", 1);
  CHECK_OK(fcl_program_build(p, "-cl-std=CL1.2"));
  unsetenv("FLOWCL_BUILD_OPTIONS");
  CHECK(fcl_test_contains(fcl_program_options(p), "-cl-std=CL1.2 -DVALUE=21"));
  CHECK(!fcl_program_from_cache(p));
  fcl_build_status bs = FCL_BUILD_NONE;
  CHECK_OK(fcl_program_build_status(p, dev, &bs));
  CHECK(bs == FCL_BUILD_SUCCESS);
  CHECK(run_one(ctx, p, "k") == 42);
  CHECK(strcmp(fcl_program_source(p), src) == 0);
  CHECK(strcmp(fcl_program_origin(p), "test: VALUE") == 0);

  /* Binaries round trip into a program of their own. */
  const unsigned char *bin = NULL;
  size_t size = 0;
  CHECK_OK(fcl_program_binary(p, dev, &bin, &size));
  CHECK(bin && size > 0);
  fcl_program *pb = NULL;
  CHECK_OK(fcl_program_create_binaries(ctx, 1, &dev, &size, &bin, &pb));
  CHECK_OK(fcl_program_build(pb, NULL));
  CHECK(run_one(ctx, pb, "k") == 42);
  fcl_program_release(&pb);
  const unsigned char *garbage = (const unsigned char *)"not a binary at all";
  size_t gsize = strlen((const char *)garbage);
  fcl_status gs = fcl_program_create_binaries(ctx, 1, &dev, &gsize, &garbage, &pb);
  if (gs == FCL_OK) gs = fcl_program_build(pb, NULL);
  CHECK(gs != FCL_OK); /* refused at creation or at build, never accepted */
  fcl_program_release(&pb);
  size_t zero = 0;
  CHECK_STATUS(fcl_program_create_binaries(ctx, 1, &dev, &zero, &bin, &pb),
               FCL_ERR_INVALID_ARGUMENT, "argument 5 (binaries)");
  fcl_program_release(&p);

  /* A failed build carries the log line, the options and the origin. */
  const char *bad =
      "FCL_KERNEL void broken(FCL_GLOBAL int *out) {\n  out[0] = undeclared_flowcl_var;\n}\n";
  CHECK_OK(fcl_program_create_source(ctx, bad, "tests/bad_kernel.cl", &p));
  CHECK_STATUS(fcl_program_build(p, "-DMARKER_OPTION=1"), FCL_ERR_BUILD_FAILED,
               "undeclared_flowcl_var");
  CHECK(fcl_test_contains(fcl_last_error(), "-DMARKER_OPTION=1"));
  CHECK(fcl_test_contains(fcl_last_error(), "tests/bad_kernel.cl"));
  if (!strcmp(fcl_device_backend(dev), "opencl")) { /* OpenCL's code; NVRTC's on CUDA */
    CHECK(fcl_test_contains(fcl_last_error(), "CL_BUILD_PROGRAM_FAILURE"));
    CHECK(fcl_last_native_error() == CL_BUILD_PROGRAM_FAILURE);
  }
  CHECK(fcl_test_contains(fcl_program_build_log(p, dev), "undeclared_flowcl_var"));
  CHECK_OK(fcl_program_build_status(p, dev, &bs));
  CHECK(bs == FCL_BUILD_ERROR);
  fcl_kernel *k = NULL;
  CHECK_STATUS(fcl_kernel_create(p, "broken", &k), FCL_ERR_INVALID_STATE, "not built");
  fcl_program_release(&p);

  /* Compile with an embedded header, then link. */
  fcl_device_info d;
  CHECK_OK(fcl_device_get_info(dev, &d));
  if (d.linker_available) {
    fcl_program *header = NULL, *unit = NULL, *lib = NULL, *linked = NULL;
    CHECK_OK(fcl_program_create_source(ctx, "#define FROM_HEADER 17\nint helper(int x);\n",
                                       "flowcl_test.h", &header));
    CHECK_OK(
        fcl_program_create_source(ctx,
                                  "#include \"flowcl_test.h\"\nFCL_KERNEL void k(FCL_GLOBAL int "
                                  "*out) { out[0] = helper(FROM_HEADER); }\n",
                                  "unit.cl", &unit));
    CHECK_OK(
        fcl_program_create_source(ctx, "int helper(int x) { return x + 1; }\n", "lib.cl", &lib));
    const char *names[] = {"flowcl_test.h"};
    CHECK_OK(fcl_program_compile(unit, NULL, 1, &header, names));
    CHECK_OK(fcl_program_compile(lib, NULL, 0, NULL, NULL));
    fcl_program *parts[] = {unit, lib};
    CHECK_OK(fcl_program_link(ctx, 2, parts, NULL, &linked));
    if (linked) CHECK(run_one(ctx, linked, "k") == 18);
    CHECK(fcl_test_contains(fcl_program_origin(linked), "unit.cl"));
    fcl_program *broken_unit = NULL;
    CHECK_OK(fcl_program_create_source(ctx,
                                       "FCL_KERNEL void k(FCL_GLOBAL int *o) { o[0] = nope_; }",
                                       "broken_unit.cl", &broken_unit));
    CHECK_STATUS(fcl_program_compile(broken_unit, NULL, 0, NULL, NULL), FCL_ERR_BUILD_FAILED,
                 "nope_");
    fcl_program_release(&broken_unit);
    fcl_program_release(&header);
    fcl_program_release(&unit);
    fcl_program_release(&lib);
    fcl_program_release(&linked);
  } else if (strcmp(fcl_device_backend(dev), "opencl")) {
    /* OpenCL's entries (flowcl/opencl.h) refuse another backend's objects, naming it */
    fcl_program *unit = NULL, *linked = NULL;
    CHECK_OK(fcl_program_create_source(ctx, "FCL_KERNEL void k(FCL_GLOBAL int *o) { o[0] = 1; }",
                                       "unit.cl", &unit));
    CHECK_STATUS(fcl_program_compile(unit, NULL, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
                 "this entry is OpenCL's");
    CHECK_STATUS(fcl_program_link(ctx, 1, &unit, NULL, &linked), FCL_ERR_INVALID_ARGUMENT,
                 "this entry is OpenCL's");
    CHECK(linked == NULL);
    CHECK_STATUS(fcl_platform_unload_compiler(e->platform), FCL_ERR_INVALID_ARGUMENT,
                 fcl_device_backend(dev));
    fcl_program_release(&unit);
  }

  /* all_kernels gives every kernel of the program. */
  CHECK_OK(fcl_program_create_builtin(ctx, "selfcheck.cl", &p));
  CHECK_OK(fcl_program_build(p, NULL));
  fcl_kernel **all = NULL;
  size_t count = 0;
  CHECK_OK(fcl_program_all_kernels(p, &all, &count));
  CHECK(count == 3);
  int found = 0;
  for (size_t i = 0; i < count; ++i)
    found += !strcmp(fcl_kernel_name(all[i]), "axpy") + !strcmp(fcl_kernel_name(all[i]), "iota") +
             !strcmp(fcl_kernel_name(all[i]), "group_sum");
  CHECK(found == 3);
  fcl_kernel_list_destroy(&all, count);
  CHECK(all == NULL);
  fcl_program_release(&p);
  CHECK_STATUS(fcl_program_create_builtin(ctx, "missing.cl", &p), FCL_ERR_NOT_FOUND, "missing.cl");

  /* The embedded source is the file of kernels/, byte for byte. */
  const char *embedded = NULL;
  CHECK_OK(fcl_builtin_source("selfcheck.cl", &embedded));
  char path[4096];
  snprintf(path, sizeof path, "%s/selfcheck.cl", kernels_dir);
  FILE *f = fopen(path, "rb");
  CHECKF(f != NULL, "cannot open %s", path);
  if (f && embedded) {
    static char disk[1 << 16];
    size_t n = fread(disk, 1, sizeof disk - 1, f);
    disk[n] = '\0';
    CHECK(strcmp(disk, embedded) == 0);
    fclose(f);
  }

  /* SPIR-V: accepted where the device lists an IL version, refused clearly otherwise. */
  const unsigned int spirv_magic[2] = {0x07230203u, 0};
  if (!d.il_version[0])
    CHECK_STATUS(fcl_program_create_il(ctx, spirv_magic, sizeof spirv_magic, &p),
                 FCL_ERR_NOT_SUPPORTED, "not supported by this device");
  else /* a header-only module is invalid: the driver's error must come back, not a crash */
    CHECK(fcl_program_create_il(ctx, spirv_magic, sizeof spirv_magic, &p) != FCL_OK ||
          fcl_program_build(p, NULL) != FCL_OK);
  fcl_program_release(&p);
  /* bytes: the SPIR-V magic (either byte order) takes the IL path, text the source path */
  const unsigned char swapped[8] = {0x07, 0x23, 0x02, 0x03, 0, 0, 0, 0};
  if (!d.il_version[0]) {
    CHECK_STATUS(fcl_program_create_bytes(ctx, spirv_magic, sizeof spirv_magic, NULL, &p),
                 FCL_ERR_NOT_SUPPORTED, "SPIR-V");
    CHECK_STATUS(fcl_program_create_bytes(ctx, swapped, sizeof swapped, NULL, &p),
                 FCL_ERR_NOT_SUPPORTED, "SPIR-V");
  }
  const char text[] = "FCL_KERNEL void k(FCL_GLOBAL int *x) { x[0] = 1; }";
  CHECK_OK(fcl_program_create_bytes(ctx, text, sizeof text - 1, "bytes", &p));
  CHECK_OK(fcl_program_build(p, NULL));
  fcl_program_release(&p);
  CHECK_STATUS(fcl_program_create_bytes(ctx, "ab\0cd", 5, NULL, &p), FCL_ERR_INVALID_ARGUMENT,
               "NUL byte at 2");
  /* built-in kernels: PoCL's pocl.add.i8 (c = a + b, bytes) where the device lists it; a name
   * it does not list is refused naming what it has */
  CHECK_STATUS(fcl_program_create_built_in(ctx, "no.such.kernel", &p), FCL_ERR_NOT_FOUND,
               "no.such.kernel");
  fcl_status bst = FCL_ERR_NOT_FOUND;
  if (strstr(d.built_in_kernels, "pocl.add.i8") &&
      (bst = fcl_program_create_built_in(ctx, "pocl.add.i8", &p)) != FCL_OK) {
    /* PoCL 3.1's CPU device lists it but fails clBuildProgram on it (checked with raw OpenCL:
     * CL_BUILD_PROGRAM_FAILURE, and clCreateKernel CL_INVALID_PROGRAM_EXECUTABLE): the error
     * must say so */
    CHECKF(bst == FCL_ERR_OPENCL && fcl_test_contains(fcl_last_error(), "built-in kernels"),
           "built-in kernels: %s", fcl_last_error());
    printf("  %s lists pocl.add.i8 but its driver cannot build it: %s\n", d.name, fcl_last_error());
  }
  if (bst == FCL_OK) {
    fcl_kernel *bk = NULL;
    CHECK_OK(fcl_program_build(p, NULL));
    CHECK_OK(fcl_kernel_create(p, "pocl.add.i8", &bk));
    fcl_queue *q = NULL;
    CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
    enum { N = 100 };
    signed char a[N], b[N], c[N];
    for (int i = 0; i < N; ++i) a[i] = (signed char)(i - 50), b[i] = (signed char)(3 * i % 77);
    fcl_mem *ba = NULL;
    CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, N, a, &ba));
    fcl_mem *bb = NULL;
    CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, N, b, &bb));
    fcl_mem *bc = NULL;
    CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, N, NULL, &bc));
    if (bk && q && fcl_kernel_num_args(bk) == 3) {
      CHECK_OK(fcl_kernel_set_arg_buffer(bk, 0, ba));
      CHECK_OK(fcl_kernel_set_arg_buffer(bk, 1, bb));
      CHECK_OK(fcl_kernel_set_arg_buffer(bk, 2, bc));
      CHECK_OK(fcl_kernel_enqueue(bk, q, 1, (size_t[]){N}, NULL, NULL, 0, 0, NULL, NULL));
      CHECK_OK(fcl_mem_read(q, bc, 0, N, c, FCL_BLOCKING, 0, NULL, NULL));
      int wrong = 0;
      for (int i = 0; i < N; ++i) wrong += c[i] != (signed char)(a[i] + b[i]);
      CHECKF(!wrong, "pocl.add.i8: %d wrong sums of %d", wrong, N);
    } else {
      CHECKF(bk && q, "pocl.add.i8: no kernel or queue");
      CHECKF(!bk || fcl_kernel_num_args(bk) == 3, "pocl.add.i8 has %u arguments (3 expected)",
             bk ? fcl_kernel_num_args(bk) : 0);
    }
    fcl_mem_release(&ba);
    fcl_mem_release(&bb);
    fcl_mem_release(&bc);
    fcl_queue_release(&q);
    fcl_kernel_destroy(&bk);
    fcl_program_release(&p);
  }
  /* OpenCL's hint (another backend's platform is refused above); the compiler works after it */
  if (!strcmp(fcl_device_backend(dev), "opencl"))
    CHECK_OK(fcl_platform_unload_compiler(e->platform));
  CHECK_OK(fcl_program_create_source(ctx, text, "after unload", &p));
  CHECK_OK(fcl_program_build(p, NULL));
  fcl_program_release(&p);
  fcl_context_release(&ctx);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s KERNELS_DIR\n", argv[0]);
    return 2;
  }
  setenv("FLOWCL_NO_CACHE", "1", 1);
  return fcl_test_run_on_devices(check_device, argv[1]);
}
