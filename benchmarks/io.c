/* io: write bandwidth of fcl_io_write for an N^3 float vector field (3 components, N = 256 by
 * default), from the device to one shared HDF5 file (MPI-IO, each rank its hyperslab), against
 * a plain fwrite of the same bytes from host memory (each rank its own file) in the same run.
 * Median of repeats of the slowest rank; files are written to --dir (default $TMPDIR or /tmp)
 * and removed. mpirun-able.
 * Usage: io [--device SPEC] [--size N] [--dir DIR] [--repeats R] [--json FILE] */
#define _POSIX_C_SOURCE 200809L
#include <flowcl/flowcl.h>
#include <unistd.h>

#define BENCH_NAME "io"
#include "field_setup.h"

static double slowest(double t) {
  double m = t;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long size = 256;
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char *rest[32];
  int nrest = 0;
  for (int i = 0; i < argc && nrest < 32; ++i) {
    if (i > 0 && !strcmp(argv[i], "--size") && i + 1 < argc)
      size = atol(argv[++i]);
    else if (i > 0 && !strcmp(argv[i], "--dir") && i + 1 < argc)
      dir = argv[++i];
    else
      rest[nrest++] = argv[i];
  }
  bench_options o = {NULL, NULL, 5, 1};
  if (bench_parse(nrest, rest, &o,
                  "[--device SPEC] [--size N] [--dir DIR] [--repeats R] "
                  "[--json FILE]"))
    return 2;
  fcl_domain d = fcl_domain_periodic(3, size, 1.0);
  fcl_topology *t = NULL;
  field_env e = {0};
  fcl_field *w = NULL;
  if (fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t) != FCL_OK) DIE("topology");
  if (field_env_open(&e, t, o.device) != FCL_OK) DIE("device");
  if (fcl_field_create(t, e.ctx, e.q, e.pool, "w", 3, FCL_FLOAT32, &w) != FCL_OK) DIE("field");
  for (int c = 0; c < 3; ++c)
    if (fcl_field_init_expr(w, c, "sin(x) * cos(y) + z") != FCL_OK) DIE("init");
  const int64_t *n = fcl_topology_local_resolution(t);
  size_t local = (size_t)(n[0] * n[1] * n[2]) * sizeof(float) * 3;
  double total = (double)size * (double)size * (double)size * 12.0;
  char path[1024], raw[1024];
  snprintf(path, sizeof path, "%s/flowcl-io-bench-%d.h5", dir, (int)getpid());
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  snprintf(raw, sizeof raw, "%s/flowcl-io-bench-raw-%d-%d.bin", dir, (int)getpid(), e.rank);
  char *host = malloc(local);
  if (!host) DIE("host memory");
  for (int c = 0; c < 3; ++c)
    if (fcl_field_read(w, c, false, host + c * local / 3) != FCL_OK) DIE("read");
  double *th = calloc((size_t)o.repeats, sizeof *th), *tr = calloc((size_t)o.repeats, sizeof *tr);
  for (int r = -1; r < o.repeats; ++r) { /* alternate the two so that both see the same disk */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    if (fcl_io_write(path, 1, &w, 0.0, r) != FCL_OK) DIE("write %s", path);
    double h = slowest(bench_now() - t0);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = bench_now();
    FILE *f = fopen(raw, "wb");
    if (!f || fwrite(host, 1, local, f) != local || fclose(f) != 0) DIE("fwrite %s", raw);
    double p = slowest(bench_now() - t0);
    if (r >= 0) th[r] = h, tr[r] = p;
  }
  double hdf5 = bench_median(th, o.repeats), plain = bench_median(tr, o.repeats);
  if (e.rank == 0) {
    unlink(path);
    printf("io on %s: %ld^3 float vector field (%.0f MB), %d rank(s), %s, median of %d\n",
           e.info.name, size, total / 1e6, e.size, dir, o.repeats);
    printf("  fcl_io_write (device -> HDF5)  %8.1f ms  %8.1f MB/s\n", hdf5 * 1e3,
           total / hdf5 / 1e6);
    printf("  fwrite of the same bytes       %8.1f ms  %8.1f MB/s\n", plain * 1e3,
           total / plain / 1e6);
    printf("  ratio (flowcl / fwrite bandwidth) %.3f\n", plain / hdf5);
    if (o.json) {
      FILE *jf = fopen(o.json, "w");
      if (!jf) DIE("cannot write %s", o.json);
      fprintf(jf,
              "{\"benchmark\": \"io\", \"device\": \"%s\", \"results\": [\n"
              "  {\"name\": \"hdf5_write_bandwidth\", \"value\": %.1f, \"unit\": \"MB/s\", "
              "\"size\": %ld, \"ranks\": %d},\n"
              "  {\"name\": \"fwrite_bandwidth\", \"value\": %.1f, \"unit\": \"MB/s\"},\n"
              "  {\"name\": \"hdf5_over_fwrite\", \"value\": %.4f, \"unit\": \"ratio\"}\n]}\n",
              e.info.name, total / hdf5 / 1e6, size, e.size, total / plain / 1e6, plain / hdf5);
      fclose(jf);
    }
  }
  unlink(raw);
  free(th);
  free(tr);
  free(host);
  fcl_field_destroy(&w);
  field_env_close(&e);
  fcl_topology_destroy(&t);
  MPI_Finalize();
  return 0;
}
