/* ghosts: time of a ghost exchange of a float field (C components, default 1) on an N^3
 * periodic box decomposed over the ranks (mpirun -n P ghosts ...; --slabs: along z only, as
 * flowcl-tgv), ghost widths G on every axis or GX,GY,GZ per axis (0: none on that axis), against
 * the device copy bandwidth measured in the same run. The exchange time is the median over
 * repeats of the slowest rank's fcl_field_ghosts_update (begin + end, host wall clock,
 * everything completed); its effective bandwidth counts each ghost value read once and written
 * once. Beside it, the device time of
 * the exchange's own kernels and copies (fcl_field_ghost_statistics: wrapping, packing,
 * unpacking), the rest being the messages and the host.
 * Usage: ghosts [--device SPEC] [--size N] [--ghosts G|GX,GY,GZ] [--components C] [--slabs]
 *               [--repeats R] [--json FILE] */
#define _POSIX_C_SOURCE 200809L
#include <flowcl/flowcl.h>

#define BENCH_NAME "ghosts"
#include "field_setup.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long size = 0;
  int g[3] = {2, 2, 2}, ncomp = 1, slabs = 0, bad = 0;
  char *rest[32];
  int nrest = 0;
  for (int i = 0; i < argc && nrest < 32; ++i) {
    if (i > 0 && !strcmp(argv[i], "--size") && i + 1 < argc) {
      size = atol(argv[++i]);
    } else if (i > 0 && !strcmp(argv[i], "--ghosts") && i + 1 < argc) {
      const char *v = argv[++i];
      int used = 0; /* the whole value: three widths, or one for every axis */
      if (sscanf(v, "%d,%d,%d%n", &g[0], &g[1], &g[2], &used) != 3 || v[used]) {
        used = 0;
        bad |= sscanf(v, "%d%n", &g[0], &used) != 1 || v[used];
        g[1] = g[2] = g[0];
      }
      bad |= g[0] < 0 || g[1] < 0 || g[2] < 0;
    } else if (i > 0 && !strcmp(argv[i], "--components") && i + 1 < argc) {
      ncomp = atoi(argv[++i]);
      bad |= ncomp < 1 || ncomp > 3;
    } else if (i > 0 && !strcmp(argv[i], "--slabs")) {
      slabs = 1;
    } else {
      rest[nrest++] = argv[i];
    }
  }
  bench_options o = {NULL, NULL, 21, 1};
  const char *usage = "[--device SPEC] [--size N] [--ghosts G|GX,GY,GZ] [--components C (1-3)] "
                      "[--slabs] [--repeats R] [--json FILE]";
  if (bad) {
    fprintf(stderr, "ghosts: bad --ghosts or --components\nusage: ghosts %s\n", usage);
    MPI_Finalize();
    return 2;
  }
  if (bench_parse(nrest, rest, &o, usage)) return 2;
  fcl_device_entry probe;
  fcl_device_info pinfo;
  if (fcl_device_select(o.device, &probe) != FCL_OK || fcl_device_get_info(probe.device, &pinfo))
    DIE("no device");
  int64_t n = size > 0 ? size : (pinfo.type & FCL_DEVICE_GPU) ? 256 : 64;
  fcl_domain d = fcl_domain_periodic(3, n, 1.0);
  fcl_topology *t = NULL;
  field_env e = {0};
  fcl_field *f = NULL;
  int size_all = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size_all);
  if (fcl_topology_create(MPI_COMM_WORLD, &d, slabs ? (int[]){1, 1, size_all} : NULL, g, &t) !=
      FCL_OK)
    DIE("topology");
  if (field_env_open(&e, t, o.device) != FCL_OK) DIE("device");
  if (fcl_field_create(t, e.ctx, e.q, e.pool, "u", ncomp, FCL_FLOAT32, &f) != FCL_OK) DIE("field");
  const size_t *p = fcl_field_padded_shape(f);
  const int64_t *ln = fcl_topology_local_resolution(t);
  size_t padded = p[0] * p[1] * p[2] * sizeof(float);
  size_t interior = (size_t)(ln[0] * ln[1] * ln[2]) * sizeof(float),
         ghost_bytes = (padded - interior) * (size_t)ncomp;
  double *times = calloc((size_t)o.repeats, sizeof *times);
  fcl_launch_stats k0 = {0}, k1 = {0};
  for (int r = -1; r < o.repeats; ++r) {
    if (r == 0 && fcl_field_ghost_statistics(f, &k0) != FCL_OK) DIE("ghost statistics");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    if (fcl_field_ghosts_update(f) != FCL_OK || fcl_queue_finish(e.q) != FCL_OK) DIE("exchange");
    double dt = bench_now() - t0, slowest = dt;
    MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r >= 0) times[r] = slowest;
  }
  if (fcl_field_ghost_statistics(f, &k1) != FCL_OK) DIE("ghost statistics");
  const double kernels = (k1.total_ns - k0.total_ns) * 1e-9 / o.repeats,
               launches = (double)(k1.launches - k0.launches) / o.repeats;
  double exchange = bench_median(times, o.repeats);
  fcl_mem *scratch = NULL;
  if (fcl_mem_create(e.ctx, FCL_MEM_DEVICE, padded, NULL, &scratch) != FCL_OK)
    DIE("scratch buffer");
  double copy_gbs = field_copy_gbs(&e, fcl_field_buffer(f, 0), scratch, padded, o.repeats);
  double gbs = 2.0 * (double)ghost_bytes / exchange / 1e9;
  /* the time the device needs to move the same bytes at copy bandwidth */
  double copy_time = 2.0 * (double)ghost_bytes / (copy_gbs * 1e9);
  if (e.rank == 0) {
    const int *procs = fcl_topology_procs(t);
    printf("ghosts on %s: %lld^3 float, %d component(s), ghost widths %d,%d,%d, %d rank(s) as "
           "%dx%dx%d, median of %d\n",
           e.info.name, (long long)n, ncomp, g[0], g[1], g[2], e.size, procs[0], procs[1], procs[2],
           o.repeats);
    printf("  copy bandwidth (fcl_mem_copy)        %9.1f GB/s\n", copy_gbs);
    printf("  exchange                              %9.1f us  (%zu ghost bytes per rank, %.2f "
           "GB/s effective)\n",
           exchange * 1e6, ghost_bytes, gbs);
    printf("  same bytes at copy bandwidth          %9.1f us  (exchange / copy time: %.1fx)\n",
           copy_time * 1e6, exchange / copy_time);
    printf("  its kernels and copies on the device  %9.1f us  (rank 0, mean; %.0f launches an "
           "exchange; the rest: messages, host)\n",
           kernels * 1e6, launches);
    if (o.json) {
      FILE *jf = fopen(o.json, "w");
      if (!jf) DIE("cannot write %s", o.json);
      fprintf(jf,
              "{\"benchmark\": \"ghosts\", \"device\": \"%s\", \"results\": [\n"
              "  {\"name\": \"copy_bandwidth\", \"value\": %.2f, \"unit\": \"GB/s\"},\n"
              "  {\"name\": \"exchange_time\", \"value\": %.3f, \"unit\": \"us\", \"size\": %lld, "
              "\"ghosts\": [%d, %d, %d], \"components\": %d, \"ranks\": %d, \"ghost_bytes\": "
              "%zu},\n"
              "  {\"name\": \"exchange_over_copy_time\", \"value\": %.3f, \"unit\": \"ratio\"},\n"
              "  {\"name\": \"exchange_kernels_time\", \"value\": %.3f, \"unit\": \"us\"}\n]}\n",
              e.info.name, copy_gbs, exchange * 1e6, (long long)n, g[0], g[1], g[2], ncomp, e.size,
              ghost_bytes, exchange / copy_time, kernels * 1e6);
      fclose(jf);
    }
  }
  fcl_mem_release(&scratch);
  free(times);
  fcl_field_destroy(&f);
  field_env_close(&e);
  fcl_topology_destroy(&t);
  MPI_Finalize();
  return 0;
}
