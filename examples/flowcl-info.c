/* flowcl-info: list OpenCL platforms and devices with their characterization, then run the
 * self-check kernels on the chosen device (FLOWCL_DEVICE or --device) and verify the results.
 * Exit status 0 only when the self-check passes. */
#include <flowcl/flowcl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_device(const fcl_device_entry *e) {
  fcl_device_info d;
  fcl_device_characterization c;
  if (fcl_device_get_info(e->device, &d) != FCL_OK) {
    printf("    %u:%u  (cannot query: %s)\n", e->platform_index, e->device_index, fcl_last_error());
    return;
  }
  printf("  [%u:%u] %s (%s)\n", e->platform_index, e->device_index, d.name,
         fcl_device_type_name(d.type));
  printf("      vendor %s, %s, driver %s, %s\n", d.vendor, d.version, d.driver_version,
         d.opencl_c_version);
  printf("      %u compute units at %u MHz, global memory %.1f GiB (max allocation %.1f GiB), "
         "local memory %llu KiB (%s)\n",
         d.max_compute_units, d.max_clock_frequency_mhz, d.global_mem_size / 1073741824.0,
         d.max_mem_alloc_size / 1073741824.0, (unsigned long long)(d.local_mem_size / 1024),
         d.local_mem_dedicated ? "dedicated" : "in global memory");
  printf("      work-group size <= %zu, work-item sizes %zu x %zu x %zu, address bits %u\n",
         d.max_work_group_size, d.max_work_item_sizes[0], d.max_work_item_sizes[1],
         d.max_work_item_sizes[2], d.address_bits);
  printf("      queues: out-of-order %s, profiling %s (timer %zu ns); images %s; SVM 0x%llx; "
         "native kernels %s\n",
         d.queue_out_of_order ? "yes" : "no", d.queue_profiling ? "yes" : "no",
         d.profiling_timer_resolution_ns, d.image_support ? "yes" : "no",
         (unsigned long long)d.svm_capabilities, d.native_kernels ? "yes" : "no");
  if (fcl_device_characterize(e->device, &c) == FCL_OK) {
    printf("      SIMD group %u, local banks %u x %u bytes, usable local memory %llu bytes, "
           "double %s",
           c.simd_group_size, c.local_mem_bank_count, c.local_mem_access_granularity,
           (unsigned long long)c.usable_local_mem_size, c.double_support ? "yes" : "no");
    if (c.nv_compute_capability_major >= 0)
      printf(", compute capability %d.%d", c.nv_compute_capability_major,
             c.nv_compute_capability_minor);
    printf("\n      fast math options: %s\n", c.fast_inaccurate_options);
  }
}

#define TRY(call)                                                                                  \
  do {                                                                                             \
    if ((call) != FCL_OK) {                                                                        \
      fprintf(stderr, "flowcl-info: %s failed: %s\n%s\n", #call,                                   \
              fcl_status_name(fcl_last_status()), fcl_last_error());                               \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

/* Runs axpy, iota and group_sum and compares with exact host results. */
static int self_check(const fcl_device_entry *e) {
  enum { N = 1 << 16, GROUP = 64 };
  int failures = -1;
  fcl_context *ctx = NULL;
  fcl_program *prog = NULL;
  fcl_kernel *axpy = NULL, *iota = NULL, *sum = NULL;
  fcl_queue *q = NULL;
  fcl_mem *x = NULL, *y = NULL, *ix = NULL, *sums = NULL;
  float *hx = malloc(N * sizeof *hx), *hy = malloc(N * sizeof *hy);
  int *hi = malloc(N * sizeof *hi), *hs = malloc(N / GROUP * sizeof *hs);
  if (!hx || !hy || !hi || !hs) goto done;
  for (int i = 0; i < N; ++i) {
    hx[i] = (float)i;
    hy[i] = 2.0f * (float)i;
  }
  TRY(fcl_context_create(1, &e->device, &ctx));
  TRY(fcl_queue_create(ctx, e->device, 0, &q));
  TRY(fcl_program_create_builtin(ctx, "selfcheck.cl", &prog));
  TRY(fcl_program_build(prog, NULL));
  TRY(fcl_kernel_create(prog, "axpy", &axpy));
  TRY(fcl_kernel_create(prog, "iota", &iota));
  TRY(fcl_kernel_create(prog, "group_sum", &sum));
  TRY(fcl_mem_create(ctx, FCL_MEM_DEVICE, N * sizeof(float), hx, &x));
  TRY(fcl_mem_create(ctx, FCL_MEM_DEVICE, N * sizeof(float), hy, &y));
  TRY(fcl_mem_create(ctx, FCL_MEM_DEVICE, N * sizeof(int), NULL, &ix));
  TRY(fcl_mem_create(ctx, FCL_MEM_DEVICE, N / GROUP * sizeof(int), NULL, &sums));
  const size_t n = N, n3[3] = {16, 64, N / 1024}, group = GROUP;
  TRY(fcl_kernel_set_arg_f32(axpy, 0, 0.5f));
  TRY(fcl_kernel_set_arg_buffer(axpy, 1, x));
  TRY(fcl_kernel_set_arg_buffer(axpy, 2, y));
  TRY(fcl_kernel_set_arg_i32(axpy, 3, N));
  TRY(fcl_kernel_enqueue(axpy, q, 1, &n, NULL, NULL, 0, 0, NULL, NULL));
  TRY(fcl_kernel_set_arg_buffer(iota, 0, ix));
  TRY(fcl_kernel_set_arg_i32(iota, 1, 7));
  TRY(fcl_kernel_enqueue(iota, q, 3, n3, NULL, NULL, 0, 0, NULL, NULL));
  TRY(fcl_kernel_set_arg_buffer(sum, 0, ix));
  TRY(fcl_kernel_set_arg_buffer(sum, 1, sums));
  TRY(fcl_kernel_set_arg_local(sum, 2, GROUP * sizeof(int)));
  TRY(fcl_kernel_enqueue(sum, q, 1, &n, &group, NULL, 0, 0, NULL, NULL));
  if (fcl_mem_read(q, y, 0, N * sizeof(float), hy, FCL_BLOCKING, 0, NULL, NULL) != FCL_OK ||
      fcl_mem_read(q, ix, 0, N * sizeof(int), hi, FCL_BLOCKING, 0, NULL, NULL) != FCL_OK ||
      fcl_mem_read(q, sums, 0, N / GROUP * sizeof(int), hs, FCL_BLOCKING, 0, NULL, NULL) !=
          FCL_OK) {
    fprintf(stderr, "flowcl-info: reading results failed\n");
    goto done;
  }
  failures = 0;
  for (int i = 0; i < N; ++i) {
    failures += hy[i] != 2.5f * (float)i; /* exact: 0.5 i + 2 i needs 18 bits */
    failures += hi[i] != i + 7;
  }
  for (int g = 0; g < N / GROUP; ++g) {
    long long expect = 0;
    for (int i = 0; i < GROUP; ++i) expect += g * GROUP + i + 7;
    failures += hs[g] != expect;
  }
  printf("self-check on %s: axpy, iota (3D), group_sum (local memory): %s (%d mismatches of %d "
         "values)%s\n",
         fcl_program_origin(prog), failures ? "FAILED" : "passed", failures, 2 * N + N / GROUP,
         fcl_program_from_cache(prog) ? " [program from cache]" : "");
done:
  if (x) fcl_mem_release(&x);
  if (y) fcl_mem_release(&y);
  if (ix) fcl_mem_release(&ix);
  if (sums) fcl_mem_release(&sums);
  fcl_queue_release(&q);
  fcl_kernel_destroy(&axpy);
  fcl_kernel_destroy(&iota);
  fcl_kernel_destroy(&sum);
  fcl_program_release(&prog);
  fcl_context_release(&ctx);
  free(hx);
  free(hy);
  free(hi);
  free(hs);
  return failures;
}

int main(int argc, char **argv) {
  const char *spec = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
      spec = argv[++i];
    else {
      printf(
          "usage: %s [--device platform:device]\n"
          "Lists the platforms and devices of every backend (OpenCL, CUDA) and runs a self-check\n"
          "on the chosen device\n"
          "(--device, else FLOWCL_DEVICE, else the first GPU, else the first device).\n",
          argv[0]);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  printf("flowcl %s\n", fcl_version());
  fcl_device_entry *list = NULL;
  size_t n = 0;
  if (fcl_device_list(&list, &n) != FCL_OK) {
    fprintf(stderr, "flowcl-info: %s\n", fcl_last_error());
    return 1;
  }
  unsigned last_platform = (unsigned)-1;
  for (size_t i = 0; i < n; ++i) {
    if (list[i].platform_index != last_platform) {
      fcl_platform_info p;
      last_platform = list[i].platform_index;
      if (fcl_platform_get_info(list[i].platform, &p) == FCL_OK)
        printf("platform %u: %s (%s), %s, %s\n", last_platform, p.name, p.vendor, p.version,
               p.profile);
    }
    print_device(&list[i]);
  }
  free(list);
  fcl_device_entry chosen;
  if (fcl_device_select(spec, &chosen) != FCL_OK) {
    fprintf(stderr, "flowcl-info: %s\n", fcl_last_error());
    return 1;
  }
  fcl_device_info d;
  if (fcl_device_get_info(chosen.device, &d) == FCL_OK)
    printf("chosen device: [%u:%u] %s\n", chosen.platform_index, chosen.device_index, d.name);
  return self_check(&chosen) == 0 ? 0 : 1;
}
