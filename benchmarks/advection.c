/* advection: one Strang-split advection step (X Y Z Y X, remeshed particles) of a 3-component
 * vorticity in a Taylor-Green velocity at N^3, per remeshing formula, beside the device copy
 * bandwidth measured in the same run. Slabs along z over the ranks (mpirun -n P), with the
 * ghosts the operator needs along z.
 * A repeat is one step, completed (host wall clock, slowest rank), with the velocity bound
 * given (fcl_advection_step_bounded, as a time loop that computes max|u| for its dt does); the
 * kernels' own time, per direction too, comes from profiling events; "checked" is the step that
 * reduces max|u| itself (fcl_advection_step). Effective bandwidth counts
 * what the kernels must move: per substep, one read of the velocity component and one read and
 * one write of each advected component.
 * Usage: advection [--device SPEC] [--size N]... [--formula F]... [--double] [--rk 2|3|4]
 *                  [--repeats R] [--json FILE]
 * Defaults: 256 on GPUs, 128 on CPUs; formulas L2_1 L4_2 L6_4 L8_4 (and L2_2 when named). */
#define _POSIX_C_SOURCE 200809L
#include <flowcl/flowcl.h>

#define BENCH_NAME "advection"
#include "field_setup.h"

typedef struct {
  long n;
  fcl_remesh_formula formula;
  double step_ms, checked_ms, kernel_ms, axis_ms[3], copy_gbs, step_gbs, kernel_gbs;
} result;

static int run_one(long n, fcl_remesh_formula formula, fcl_dtype dt, int rk, const bench_options *o,
                   result *res) {
  fcl_advection_options opt = fcl_advection_default_options();
  opt.formula = formula;
  opt.rk_order = rk;
  fcl_domain d = fcl_domain_periodic(3, n, 6.283185307179586);
  int procs[3] = {1, 1, 0}, ghosts[3] = {0, 0, 0};
  MPI_Comm_size(MPI_COMM_WORLD, &procs[2]);
  if (procs[2] > 1) ghosts[2] = fcl_advection_ghosts_needed(&opt);
  fcl_topology *t = NULL;
  field_env e = {0};
  if (fcl_topology_create(MPI_COMM_WORLD, &d, procs, ghosts, &t) != FCL_OK) DIE("topology");
  if (field_env_open(&e, t, o->device) != FCL_OK) DIE("device");
  fcl_field *u = NULL, *w = NULL;
  if (fcl_field_create(t, e.ctx, e.q, e.pool, "velocity", 3, dt, &u) != FCL_OK ||
      fcl_field_create(t, e.ctx, e.q, e.pool, "vorticity", 3, dt, &w) != FCL_OK)
    DIE("fields of %ld^3", n);
  const char *vel[3] = {"sin(x) * cos(y) * cos(z)", "-cos(x) * sin(y) * cos(z)", "0"};
  const char *vor[3] = {"-cos(x) * sin(y) * sin(z)", "-sin(x) * cos(y) * sin(z)",
                        "2 * sin(x) * sin(y) * cos(z)"};
  for (int c = 0; c < 3; ++c)
    if (fcl_field_init_expr(u, c, vel[c]) != FCL_OK || fcl_field_init_expr(w, c, vor[c]) != FCL_OK)
      DIE("init");
  fcl_advection *adv = NULL;
  if (fcl_advection_create(u, 1, &w, &opt, &adv) != FCL_OK)
    DIE("advection plan at %ld^3: %s", n, fcl_last_error());
  const double step = 0.5 * fcl_domain_spacing(&d, 0); /* CFL 0.5 (max|u| = 1) */
  double umax[3];
  for (int a = 0; a < 3; ++a)
    if (fcl_field_reduce(u, a, FCL_REDUCE_NORM_LINF, &umax[a]) != FCL_OK) DIE("max|u|");
  double *ts = calloc((size_t)o->repeats, sizeof *ts), *tc = calloc((size_t)o->repeats, sizeof *tc);
  for (int checked = 0; checked < 2; ++checked)
    for (int r = -1; r < o->repeats; ++r) {
      if (r == 0 && !checked)
        for (int a = 0; a < 3; ++a) fcl_launcher_reset_statistics(fcl_advection_launcher(adv, a));
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = bench_now();
      fcl_status st = checked ? fcl_advection_step(adv, step)
                              : fcl_advection_step_bounded(adv, step, umax);
      if (st != FCL_OK) DIE("step: %s", fcl_last_error());
      if (fcl_queue_finish(e.q) != FCL_OK) DIE("step: %s", fcl_last_error());
      double dt_s = bench_now() - t0, max_s;
      MPI_Allreduce(&dt_s, &max_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= 0) (checked ? tc : ts)[r] = max_s;
      if (r == o->repeats - 1 && !checked)
        for (int a = 0; a < 3; ++a) {
          fcl_launch_stats s;
          if (fcl_launcher_statistics(fcl_advection_launcher(adv, a), &s) != FCL_OK)
            DIE("statistics");
          res->axis_ms[a] = s.total_ns / o->repeats * 1e-6;
          if (!(res->axis_ms[a] > 0)) /* a queue that did not profile, or a step not waited for */
            DIE("no kernel time profiled along %c", "xyz"[a]);
        }
    }
  double kernel_ns = 0;
  for (int a = 0; a < 3; ++a) kernel_ns += res->axis_ms[a] * 1e6 * o->repeats;
  const int64_t *ln = fcl_topology_local_resolution(t);
  size_t comp_bytes = (size_t)(ln[0] * ln[1] * ln[2]) * fcl_dtype_size(dt);
  double copy = field_copy_gbs(&e, fcl_field_buffer(w, 0), fcl_field_buffer(u, 0), comp_bytes,
                               o->repeats);
  const double bytes = fcl_advection_step_bytes(adv);
  res->n = n;
  res->formula = formula;
  res->step_ms = bench_median(ts, o->repeats) * 1e3;
  res->checked_ms = bench_median(tc, o->repeats) * 1e3;
  res->kernel_ms = kernel_ns / o->repeats * 1e-6;
  res->copy_gbs = copy;
  res->step_gbs = bytes / (res->step_ms * 1e-3) / 1e9;
  res->kernel_gbs = bytes / (res->kernel_ms * 1e-3) / 1e9;
  if (e.rank == 0)
    printf("  %4ld^3 %-5s  step %8.3f ms  %7.1f GB/s = %.3f of copy   kernels %8.3f ms (x %.3f, "
           "y %.3f, z %.3f)  %7.1f GB/s = %.3f of copy   checked step %8.3f ms   (copy %.1f "
           "GB/s)\n",
           n, fcl_remesh_formula_name(formula), res->step_ms, res->step_gbs, res->step_gbs / copy,
           res->kernel_ms, res->axis_ms[0], res->axis_ms[1], res->axis_ms[2], res->kernel_gbs,
           res->kernel_gbs / copy, res->checked_ms, copy);
  free(ts);
  free(tc);
  fcl_advection_destroy(&adv);
  fcl_field_destroy(&u);
  fcl_field_destroy(&w);
  field_env_close(&e);
  fcl_topology_destroy(&t);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long sizes[8];
  fcl_remesh_formula formulas[8];
  int nsizes = 0, nformulas = 0, rk = 2;
  fcl_dtype dt = FCL_FLOAT32;
  char *rest[32];
  int nrest = 0;
  for (int i = 0; i < argc && nrest < 32; ++i) {
    if (i > 0 && !strcmp(argv[i], "--size") && i + 1 < argc && nsizes < 8)
      sizes[nsizes++] = atol(argv[++i]);
    else if (i > 0 && !strcmp(argv[i], "--double"))
      dt = FCL_FLOAT64;
    else if (i > 0 && !strcmp(argv[i], "--rk") && i + 1 < argc)
      rk = atoi(argv[++i]);
    else if (i > 0 && !strcmp(argv[i], "--formula") && i + 1 < argc && nformulas < 8) {
      if (fcl_remesh_formula_parse(argv[++i], &formulas[nformulas++]) != FCL_OK)
        DIE("--formula: %s", fcl_last_error());
    } else
      rest[nrest++] = argv[i];
  }
  bench_options o = {NULL, NULL, 11, 1};
  if (bench_parse(nrest, rest, &o,
                  "[--device SPEC] [--size N]... [--formula F]... [--double] "
                  "[--rk 2|3|4] [--repeats R] [--json FILE]"))
    return 2;
  fcl_device_entry probe;
  fcl_device_info info;
  if (fcl_device_select(o.device, &probe) != FCL_OK || fcl_device_get_info(probe.device, &info))
    DIE("no device");
  if (!nsizes) sizes[nsizes++] = (info.type & FCL_DEVICE_GPU) ? 256 : 128;
  if (!nformulas) {
    static const fcl_remesh_formula all[] = {FCL_REMESH_L2_1, FCL_REMESH_L4_2, FCL_REMESH_L6_4,
                                             FCL_REMESH_L8_4};
    for (int f = 0; f < 4; ++f) formulas[nformulas++] = all[f];
  }
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0)
    printf("advection on %s: Strang step of 3 components, RK%d, %s, %d rank(s), median of %d "
           "steps\n",
           info.name, rk, dt == FCL_FLOAT64 ? "double" : "float", size, o.repeats);
  result res[64];
  int nres = 0;
  for (int k = 0; k < nsizes; ++k)
    for (int f = 0; f < nformulas; ++f)
      if (run_one(sizes[k], formulas[f], dt, rk, &o, &res[nres++])) return 1;
  if (rank == 0 && o.json) {
    FILE *jf = fopen(o.json, "w");
    if (!jf) DIE("cannot write %s", o.json);
    fprintf(jf, "{\"benchmark\": \"advection\", \"device\": \"%s\", \"results\": [", info.name);
    for (int k = 0; k < nres; ++k) {
      const result *r = &res[k];
      const char *f = fcl_remesh_formula_name(r->formula);
      fprintf(jf,
              "%s\n  {\"name\": \"step_%s_%ld\", \"value\": %.4f, \"unit\": \"ms\", "
              "\"precision\": \"%s\", \"rk\": %d, \"ranks\": %d, \"bandwidth_gbs\": %.2f},\n"
              "  {\"name\": \"step_%s_%ld_fraction_of_copy\", \"value\": %.4f, "
              "\"unit\": \"ratio\"},\n"
              "  {\"name\": \"kernels_%s_%ld\", \"value\": %.4f, \"unit\": \"ms\", "
              "\"bandwidth_gbs\": %.2f, \"fraction_of_copy\": %.4f, \"x_ms\": %.4f, "
              "\"y_ms\": %.4f, \"z_ms\": %.4f},\n"
              "  {\"name\": \"checked_step_%s_%ld\", \"value\": %.4f, \"unit\": \"ms\"},\n"
              "  {\"name\": \"copy_bandwidth_%ld\", \"value\": %.2f, \"unit\": \"GB/s\"}",
              k ? "," : "", f, r->n, r->step_ms, dt == FCL_FLOAT64 ? "double" : "float", rk, size,
              r->step_gbs, f, r->n, r->step_gbs / r->copy_gbs, f, r->n, r->kernel_ms, r->kernel_gbs,
              r->kernel_gbs / r->copy_gbs, r->axis_ms[0], r->axis_ms[1], r->axis_ms[2], f, r->n,
              r->checked_ms, r->n, r->copy_gbs);
    }
    fprintf(jf, "\n]}\n");
    fclose(jf);
  }
  MPI_Finalize();
  return 0;
}
