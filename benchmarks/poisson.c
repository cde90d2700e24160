/* poisson: Biot-Savart (vorticity to velocity through the spectral Poisson solve) of an N^3
 * field, beside the bare FFTs it performs (3 forward, 3 backward, on the same plan) and the
 * device copy bandwidth, all in the same run. Slabs along z over the ranks (mpirun -n P).
 * --walls also runs each size with free-slip walls along y (N + 1 points, both walls
 * included: N intervals, fft.h's mirror extension to 2 N) right after the periodic run, and
 * prints the periodic time over the walled one.
 * A repeat is one call, completed (host wall clock, the slowest rank); medians of repeats.
 * Effective bandwidth counts one read of the vorticity and one write of the velocity.
 * Usage: poisson [--device SPEC] [--size N]... [--double] [--backend auto|vkfft|fftw]
 *                [--walls] [--repeats R] [--json FILE]
 * Default sizes: 256 and 512 on GPUs, 128 on CPUs. */
#define _POSIX_C_SOURCE 200809L
#include <flowcl/flowcl.h>

#define BENCH_NAME "poisson"
#include "field_setup.h"

typedef struct {
  long n;
  bool walls;
  double biot_ms, fft_ms, copy_gbs, gbs;
  const char *backend;
} result;

/* Slowest rank's seconds of a completed call, median of repeats (one warm-up). */
#define TIME_MEDIAN(out, repeats, q, body)                                                         \
  do {                                                                                             \
    double *ts_ = calloc((size_t)(repeats), sizeof *ts_);                                          \
    for (int r_ = -1; r_ < (repeats); ++r_) {                                                      \
      MPI_Barrier(MPI_COMM_WORLD);                                                                 \
      double t0_ = bench_now();                                                                    \
      body;                                                                                        \
      if (fcl_queue_finish(q) != FCL_OK) DIE("queue");                                             \
      double dt_ = bench_now() - t0_, max_;                                                        \
      MPI_Allreduce(&dt_, &max_, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);                          \
      if (r_ >= 0) ts_[r_] = max_;                                                                 \
    }                                                                                              \
    (out) = bench_median(ts_, (repeats));                                                          \
    free(ts_);                                                                                     \
  } while (0)

static int run_size(long n, bool walls, fcl_dtype dt, fcl_fft_backend backend,
                    const bench_options *o, result *res) {
  fcl_domain d = fcl_domain_periodic(3, n, 6.283185307179586);
  if (walls) { /* y in [0, pi], N + 1 points (N intervals, as the periodic N): the vorticity
                 below is free-slip there */
    d.bc[1][0] = d.bc[1][1] = FCL_BC_DIRICHLET;
    d.length[1] = 3.141592653589793;
    d.resolution[1] = n + 1;
  }
  int procs[3] = {1, 1, 0};
  MPI_Comm_size(MPI_COMM_WORLD, &procs[2]);
  fcl_topology *t = NULL;
  field_env e = {0};
  if (fcl_topology_create(MPI_COMM_WORLD, &d, procs, NULL, &t) != FCL_OK) DIE("topology");
  if (field_env_open(&e, t, o->device) != FCL_OK) DIE("device");
  fcl_field *w = NULL, *u = NULL;
  if (fcl_field_create(t, e.ctx, e.q, e.pool, "vorticity", 3, dt, &w) != FCL_OK ||
      fcl_field_create(t, e.ctx, e.q, e.pool, "velocity", 3, dt, &u) != FCL_OK)
    DIE("fields of %ld^3", n);
  for (int c = 0; walls && c < 3; ++c) { /* free slip: u_y, omega_x, omega_z Dirichlet */
    fcl_bc wb = c == 1 ? FCL_BC_NEUMANN : FCL_BC_DIRICHLET,
           ub = c == 1 ? FCL_BC_DIRICHLET : FCL_BC_NEUMANN;
    if (fcl_field_set_component_bc(w, c, 1, wb, wb) != FCL_OK ||
        fcl_field_set_component_bc(u, c, 1, ub, ub) != FCL_OK)
      DIE("wall conditions");
  }
  const char *ex[3] = {"-sin(x) * sin(y) * cos(z)", "-cos(x) * cos(y) * sin(z)",
                       "2 * cos(x) * sin(y) * sin(z)"};
  for (int c = 0; c < 3; ++c)
    if (fcl_field_init_expr(w, c, ex[c]) != FCL_OK) DIE("init");
  fcl_spectral *s = NULL;
  if (fcl_spectral_create(w, backend, e.pool, &s) != FCL_OK) DIE("spectral plan at %ld^3", n);
  fcl_fft *fft = fcl_spectral_fft(s);
  double biot, ffts;
  TIME_MEDIAN(biot, o->repeats, e.q, {
    if (fcl_spectral_biot_savart(s, w, u) != FCL_OK) DIE("biot-savart");
  });
  TIME_MEDIAN(ffts, o->repeats, e.q, {
    for (int c = 0; c < 3; ++c)
      if (fcl_fft_forward(fft, w, c, c) != FCL_OK) DIE("forward");
    for (int c = 0; c < 3; ++c)
      if (fcl_fft_backward(fft, c, u, c) != FCL_OK) DIE("backward");
  });
  const int64_t *ln = fcl_topology_local_resolution(t);
  size_t comp_bytes = (size_t)(ln[0] * ln[1] * ln[2]) * fcl_dtype_size(dt);
  double copy = field_copy_gbs(&e, fcl_field_buffer(w, 0), fcl_field_buffer(u, 0), comp_bytes,
                               o->repeats);
  res->n = n;
  res->walls = walls;
  res->biot_ms = biot * 1e3;
  res->fft_ms = ffts * 1e3;
  res->copy_gbs = copy;
  res->gbs = 6.0 * (double)comp_bytes / biot / 1e9;
  res->backend = fcl_fft_description(fft);
  if (e.rank == 0)
    printf("  %4ld^3%s %-8s  biot-savart %9.3f ms   6 FFTs %9.3f ms (%.2f of it)   %7.1f GB/s "
           "effective = %.3f of copy (%.1f GB/s)\n",
           n, walls ? " walls y" : "", res->backend, res->biot_ms, res->fft_ms,
           res->fft_ms / res->biot_ms, res->gbs, res->gbs / copy, copy);
  fcl_spectral_destroy(&s);
  fcl_field_destroy(&w);
  fcl_field_destroy(&u);
  field_env_close(&e);
  fcl_topology_destroy(&t);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long sizes[8];
  int nsizes = 0;
  fcl_dtype dt = FCL_FLOAT32;
  fcl_fft_backend backend = FCL_FFT_AUTO;
  bool walls = false;
  char *rest[32];
  int nrest = 0;
  for (int i = 0; i < argc && nrest < 32; ++i) {
    if (i > 0 && !strcmp(argv[i], "--size") && i + 1 < argc && nsizes < 8)
      sizes[nsizes++] = atol(argv[++i]);
    else if (i > 0 && !strcmp(argv[i], "--double"))
      dt = FCL_FLOAT64;
    else if (i > 0 && !strcmp(argv[i], "--walls"))
      walls = true;
    else if (i > 0 && !strcmp(argv[i], "--backend") && i + 1 < argc) {
      if (fcl_fft_backend_parse(argv[++i], &backend) != FCL_OK) DIE("--backend");
    } else
      rest[nrest++] = argv[i];
  }
  bench_options o = {NULL, NULL, 11, 1};
  if (bench_parse(nrest, rest, &o,
                  "[--device SPEC] [--size N]... [--double] [--backend B] [--walls] "
                  "[--repeats R] [--json FILE]"))
    return 2;
  fcl_device_entry probe;
  fcl_device_info info;
  if (fcl_device_select(o.device, &probe) != FCL_OK || fcl_device_get_info(probe.device, &info))
    DIE("no device");
  bool gpu = (info.type & FCL_DEVICE_GPU) != 0;
  if (!nsizes) {
    sizes[nsizes++] = gpu ? 256 : 128;
    if (gpu) sizes[nsizes++] = 512;
  }
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0)
    printf("poisson on %s: Biot-Savart, %s, %d rank(s), median of %d calls\n", info.name,
           dt == FCL_FLOAT64 ? "double" : "float", size, o.repeats);
  result res[16];
  int nres = 0;
  for (int k = 0; k < nsizes; ++k) {
    if (run_size(sizes[k], false, dt, backend, &o, &res[nres++])) return 1;
    if (!walls) continue;
    if (run_size(sizes[k], true, dt, backend, &o, &res[nres++])) return 1;
    if (rank == 0)
      printf("  %4ld^3 walls along y: Biot-Savart at %.3f of the periodic speed, the 6 FFTs at "
             "%.3f\n",
             sizes[k], res[nres - 2].biot_ms / res[nres - 1].biot_ms,
             res[nres - 2].fft_ms / res[nres - 1].fft_ms);
  }
  if (rank == 0 && o.json) {
    FILE *jf = fopen(o.json, "w");
    if (!jf) DIE("cannot write %s", o.json);
    fprintf(jf, "{\"benchmark\": \"poisson\", \"device\": \"%s\", \"results\": [", info.name);
    for (int k = 0; k < nres; ++k) {
      const result *r = &res[k];
      const char *tag = r->walls ? "_walls" : "";
      const char *prec = dt == FCL_FLOAT64 ? "double" : "float";
      fprintf(jf,
              "%s\n  {\"name\": \"biot_savart_%ld%s\", \"value\": %.4f, \"unit\": \"ms\", "
              "\"backend\": \"%s\", \"precision\": \"%s\", \"ranks\": %d},\n"
              "  {\"name\": \"ffts_%ld%s\", \"value\": %.4f, \"unit\": \"ms\", "
              "\"transforms\": 6},\n"
              "  {\"name\": \"copy_bandwidth_%ld%s\", \"value\": %.2f, \"unit\": \"GB/s\"},\n"
              "  {\"name\": \"biot_savart_%ld%s_fraction_of_copy\", \"value\": %.4f, "
              "\"unit\": \"ratio\", \"bandwidth_gbs\": %.2f}",
              k ? "," : "", r->n, tag, r->biot_ms, r->backend, prec, size, r->n, tag, r->fft_ms,
              r->n, tag, r->copy_gbs, r->n, tag, r->gbs / r->copy_gbs, r->gbs);
    }
    fprintf(jf, "\n]}\n");
    fclose(jf);
  }
  MPI_Finalize();
  return 0;
}
