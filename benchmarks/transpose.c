/* transpose: effective bandwidth of the field layer's local transposes (xy, xz, yz and the
 * cyclic 3D permutation) of an N^3 float field, each rank its block (mpirun -n P transpose ...),
 * against the device copy bandwidth of the same buffer measured in the same run. A repeat
 * times a batch of 10 transposes (host wall clock, completed); the median of repeats is
 * reported for rank 0. Effective bandwidth counts one read and one write of the block.
 * Usage: transpose [--device SPEC] [--size N] [--repeats R] [--json FILE] */
#define _POSIX_C_SOURCE 200809L
#include <flowcl/flowcl.h>

#define BENCH_NAME "transpose"
#include "field_setup.h"

enum { BATCH = 10 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long size = 0;
  char *rest[32];
  int nrest = 0;
  for (int i = 0; i < argc && nrest < 32; ++i) {
    if (i > 0 && !strcmp(argv[i], "--size") && i + 1 < argc)
      size = atol(argv[++i]);
    else
      rest[nrest++] = argv[i];
  }
  bench_options o = {NULL, NULL, 11, 1};
  if (bench_parse(nrest, rest, &o, "[--device SPEC] [--size N] [--repeats R] [--json FILE]"))
    return 2;
  fcl_device_entry probe;
  fcl_device_info pinfo;
  if (fcl_device_select(o.device, &probe) != FCL_OK || fcl_device_get_info(probe.device, &pinfo))
    DIE("no device");
  int64_t n = size > 0 ? size : (pinfo.type & FCL_DEVICE_GPU) ? 256 : 128;
  fcl_domain d = fcl_domain_periodic(3, n, 1.0);
  fcl_topology *t = NULL;
  field_env e = {0};
  if (fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t) != FCL_OK) DIE("topology");
  if (field_env_open(&e, t, o.device) != FCL_OK) DIE("device");
  const int64_t *ln = fcl_topology_local_resolution(t);
  const int *procs = fcl_topology_procs(t);
  if (n % procs[0] || n % procs[1] || n % procs[2]) DIE("--size must divide evenly over the ranks");
  size_t bytes = (size_t)(ln[0] * ln[1] * ln[2]) * sizeof(float);
  fcl_field *src = NULL;
  if (fcl_field_create(t, e.ctx, e.q, e.pool, "src", 1, FCL_FLOAT32, &src) != FCL_OK) DIE("field");
  static const int perms[][3] = {{1, 0, 2}, {2, 1, 0}, {0, 2, 1}, {1, 2, 0}};
  static const char *names[] = {"xy", "xz", "yz", "xyz cyclic"};
  double gbs[4];
  for (int k = 0; k < 4; ++k) {
    const int *pm = perms[k];
    int dprocs[3];
    fcl_domain dp = d;
    for (int a = 0; a < 3; ++a) dprocs[a] = procs[pm[a]];
    fcl_topology *tp = NULL;
    fcl_field *dst = NULL;
    if (fcl_topology_create(MPI_COMM_WORLD, &dp, dprocs, NULL, &tp) != FCL_OK) DIE("topology");
    if (fcl_field_create(tp, e.ctx, e.q, e.pool, "dst", 1, FCL_FLOAT32, &dst) != FCL_OK)
      DIE("field");
    double *times = calloc((size_t)o.repeats, sizeof *times);
    for (int r = -1; r < o.repeats; ++r) {
      double t0 = bench_now();
      for (int b = 0; b < BATCH; ++b)
        if (fcl_field_transpose(src, 0, pm, dst, 0) != FCL_OK) DIE("transpose %s", names[k]);
      if (fcl_queue_finish(e.q) != FCL_OK) DIE("transpose %s", names[k]);
      if (r >= 0) times[r] = (bench_now() - t0) / BATCH;
    }
    gbs[k] = 2.0 * (double)bytes / bench_median(times, o.repeats) / 1e9;
    free(times);
    fcl_field_destroy(&dst);
    fcl_topology_destroy(&tp);
  }
  fcl_mem *scratch = NULL;
  if (fcl_mem_create(e.ctx, FCL_MEM_DEVICE, bytes, NULL, &scratch) != FCL_OK) DIE("scratch buffer");
  double copy_gbs = field_copy_gbs(&e, fcl_field_buffer(src, 0), scratch, bytes, o.repeats);
  if (e.rank == 0) {
    printf("transpose on %s: %lld^3 float, %d rank(s) as %dx%dx%d, median of %d batches of %d\n",
           e.info.name, (long long)n, e.size, procs[0], procs[1], procs[2], o.repeats, BATCH);
    printf("  copy bandwidth (fcl_mem_copy)        %9.1f GB/s\n", copy_gbs);
    for (int k = 0; k < 4; ++k)
      printf("  %-12s %9.1f GB/s  %.3f of copy\n", names[k], gbs[k], gbs[k] / copy_gbs);
    if (o.json) {
      FILE *jf = fopen(o.json, "w");
      if (!jf) DIE("cannot write %s", o.json);
      fprintf(jf,
              "{\"benchmark\": \"transpose\", \"device\": \"%s\", \"results\": [\n"
              "  {\"name\": \"copy_bandwidth\", \"value\": %.2f, \"unit\": \"GB/s\"}",
              e.info.name, copy_gbs);
      for (int k = 0; k < 4; ++k)
        fprintf(jf,
                ",\n  {\"name\": \"transpose_%s_fraction_of_copy\", \"value\": %.4f, "
                "\"unit\": \"ratio\", \"bandwidth_gbs\": %.2f, \"size\": %lld, \"ranks\": %d}",
                k == 3 ? "cyclic" : names[k], gbs[k] / copy_gbs, gbs[k], (long long)n, e.size);
      fprintf(jf, "\n]}\n");
      fclose(jf);
    }
  }
  fcl_mem_release(&scratch);
  fcl_field_destroy(&src);
  field_env_close(&e);
  fcl_topology_destroy(&t);
  MPI_Finalize();
  return 0;
}
