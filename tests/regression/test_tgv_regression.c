/* The Taylor-Green vortex at Re = 1600 through flowcl-tgv's solver (default options: the
 * second-order splitting), against the 512^3 DNS of Dairay et al. 2017 (apps/tgv/reference),
 * on 1, 2 or 4 ranks, 32^3, double, to t = 1.
 *
 * Convergence study (PoCL; docs/validation.md): at t = 1 the flow is smooth. With dt_max 0.02
 * the energy is 6.6e-7 and the enstrophy 1.49e-4 from the DNS (advection's directions
 * alternating, the default; Strang directions: 3.1e-6 and 1.49e-4; 1.55e-4 at dt_max 0.01: the
 * enstrophy's error is the 32^3 grid's, 48^3 gives 2.5e-5); the first-order Lie splitting
 * gives 3.59e-4 and 1.25e-3. Successive halvings of dt (0.08, 0.04, 0.02, lcfl 0.5 so that
 * dt_max sets dt) shrink the differences by 2.36 (energy) and 3.43 (enstrophy) (Strang
 * directions: 2.6 and 3.4); Lie by 2.0. So:
 *   - at dt_max 0.02 the energy is within 2e-5 and the enstrophy within 3e-4 of the DNS;
 *   - halving dt divides the successive differences by at least 2.3 for both (more than a
 *     first-order scheme gives);
 *   - the run equals a one-rank run of the same problem (rank 0 repeats it alone) to 1e-11
 *     relative: only the order of the sums in the reductions and FFTs differs;
 *   - a box of two periods along z (--z-periods 2, the weak-scaling runs) has the same
 *     averages as one period;
 *   - a run restarted from its checkpoint at step 10 ends as the straight run, bit for bit;
 *   - after a run, the velocity that the diagnostics read is the vorticity's: an independent
 *     Biot-Savart of the final w gives it to rounding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcl_test_mpi.h"
#include "tgv_impl.h"
#include "tgv_options.h"
#include "tgv_solver.h"

/* The DNS at t = 1 (apps/tgv/reference/tgv_re1600_dairay2017.csv, row t = 1). */
#define E_REF 0.124515267346
#define Z_REF 0.415054960339

typedef struct {
  double t, energy, enstrophy;
} result;

typedef struct {
  int64_t max_steps, checkpoint_every;
  const char *restart;
} run_extra;

/* flowcl-tgv's defaults at 32^3 on the test's device (by name), quiet, into e->dir/tag;
 * dir[600] and spec[300] hold the strings the options point to. */
static void test_options(fcl_test_mpi_env *e, fcl_dtype dtype, double dt_max, double t_end,
                         const char *tag, char *dir, char *spec, tgv_options *o) {
  snprintf(dir, 600, "%s/%s", e->dir, tag);
  char *argv[] = {"flowcl-tgv", NULL};
  tgv_options_parse(1, argv, 1, o);
  o->resolution = 32;
  o->t_end = t_end;
  o->dtype = dtype;
  o->dt_max = dt_max;
  o->output_dir = dir;
  o->quiet = true;
  o->plot = false;
  fcl_device *dev;
  fcl_device_info info;
  CHECK_OK(fcl_queue_device(e->q, &dev));
  CHECK_OK(fcl_device_get_info(dev, &info));
  snprintf(spec, 300, ":%s", info.name);
  o->device = spec;
}

static result run_with(fcl_test_mpi_env *e, MPI_Comm comm, fcl_dtype dtype, double dt_max,
                       double lcfl, double t_end, int z_periods, const char *tag,
                       const run_extra *x) {
  char dir[600], spec[300];
  tgv_options o;
  test_options(e, dtype, dt_max, t_end, tag, dir, spec, &o);
  o.z_periods = z_periods;
  o.lcfl = lcfl;
  if (x) {
    o.max_steps = x->max_steps;
    o.checkpoint_every = x->checkpoint_every;
    o.restart = x->restart;
  }
  tgv *t = NULL;
  result r = {NAN, NAN, NAN};
  fcl_sim_state s;
  CHECK_OK(tgv_create(&o, comm, &t));
  if (t) CHECK_OK(tgv_run(t, &s));
  if (t) tgv_last_diagnostics(t, &r.t, &r.energy, &r.enstrophy);
  tgv_destroy(&t);
  if (!x) CHECKF(r.t == t_end, "the run ended at t = %.17g, not %g", r.t, t_end);
  return r;
}

static result run(fcl_test_mpi_env *e, MPI_Comm comm, fcl_dtype dtype, double dt_max, double lcfl,
                  double t_end, int z_periods, const char *tag) {
  return run_with(e, comm, dtype, dt_max, lcfl, t_end, z_periods, tag, NULL);
}

static void check(fcl_test_mpi_env *e) {
  const fcl_dtype dtype = e->fp64 ? FCL_FLOAT64 : FCL_FLOAT32;
  const result r = run(e, MPI_COMM_WORLD, dtype, 0.02, 0.125, 1, 1, "default");
  const double de = fabs(r.energy - E_REF), dz = fabs(r.enstrophy - Z_REF);
  if (e->rank == 0)
    printf("TGV 32^3, t = 1, dt_max 0.02: energy %.9f (DNS %.9f), enstrophy %.9f (DNS %.9f)\n",
           r.energy, E_REF, r.enstrophy, Z_REF);
  CHECKF(de <= 2e-5, "energy at t = 1: %.9f, %.3g from the DNS (tolerance 2e-5)", r.energy, de);
  CHECKF(dz <= 3e-4, "enstrophy at t = 1: %.9f, %.3g from the DNS (tolerance 3e-4)", r.enstrophy,
         dz);
  /* order in time: dt set by dt_max alone */
  result h[3];
  static const char *const tags[3] = {"dt08", "dt04", "dt02"};
  for (int k = 0; k < 3; ++k)
    h[k] = run(e, MPI_COMM_WORLD, dtype, 0.08 / (1 << k), 0.5, 1, 1, tags[k]);
  const double re = fabs(h[0].energy - h[1].energy) / fabs(h[1].energy - h[2].energy),
               rz = fabs(h[0].enstrophy - h[1].enstrophy) / fabs(h[1].enstrophy - h[2].enstrophy);
  if (e->rank == 0)
    printf("halving dt: differences shrink by %.2f (energy), %.2f (enstrophy)\n", re, rz);
  CHECKF(re >= 2.3 && rz >= 2.3,
         "halving dt shrinks the differences by %.2f (energy) and %.2f "
         "(enstrophy); the second-order splitting wants more than 2.3",
         re, rz);
  /* the same problem on rank 0 alone */
  if (e->size > 1) {
    result one = {0};
    if (e->rank == 0) one = run(e, MPI_COMM_SELF, dtype, 0.02, 0.125, 1, 1, "alone");
    MPI_Bcast(&one, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const double tol = dtype == FCL_FLOAT64 ? 1e-11 : 1e-4;
    CHECKF(fabs(one.energy - r.energy) <= tol * r.energy &&
               fabs(one.enstrophy - r.enstrophy) <= tol * r.enstrophy,
           "%d ranks: energy %.15g, enstrophy %.15g; one rank: %.15g, %.15g", e->size, r.energy,
           r.enstrophy, one.energy, one.enstrophy);
  }
}

/* Two periods along z (the weak-scaling box) hold the same flow: the same averages. */
static void check_z_periods(fcl_test_mpi_env *e) {
  const fcl_dtype dtype = e->fp64 ? FCL_FLOAT64 : FCL_FLOAT32;
  const result one = run(e, MPI_COMM_WORLD, dtype, 0.02, 0.125, 0.2, 1, "k1");
  const result two = run(e, MPI_COMM_WORLD, dtype, 0.02, 0.125, 0.2, 2, "k2");
  const double tol = dtype == FCL_FLOAT64 ? 1e-11 : 1e-5;
  CHECKF(fabs(one.energy - two.energy) <= tol * one.energy &&
             fabs(one.enstrophy - two.enstrophy) <= tol * one.enstrophy,
         "z periods 1 / 2: energy %.15g / %.15g, enstrophy %.15g / %.15g", one.energy, two.energy,
         one.enstrophy, two.enstrophy);
}

/* The energy and the divergence printed beside the enstrophy come from a velocity that is the
 * vorticity's at the end of the step, not a stage behind it: u against an independent
 * Biot-Savart of the final w, to rounding. A velocity one diffusion behind (Biot-Savart before
 * the step's diffusion) is about 1e-4 |u| away at 32^3 after 5 steps of 0.02. */
static void check_u_current(fcl_test_mpi_env *e) {
  const fcl_dtype dtype = e->fp64 ? FCL_FLOAT64 : FCL_FLOAT32;
  char dir[600], spec[300];
  tgv_options o;
  test_options(e, dtype, 0.02, 0.1, "current", dir, spec, &o);
  tgv *t = NULL;
  fcl_sim_state s;
  fcl_field *check = NULL;
  CHECK_OK(tgv_create(&o, MPI_COMM_WORLD, &t));
  if (t) CHECK_OK(tgv_run(t, &s));
  if (t) CHECK_OK(fcl_field_create(t->topo, t->ctx, t->q, t->pool, "u_check", 3, dtype, &check));
  if (check) CHECK_OK(fcl_spectral_biot_savart(t->spectral, t->w, check));
  if (check) {
    const int64_t *n = fcl_topology_local_resolution(t->topo);
    const size_t count = (size_t)(n[0] * n[1] * n[2]);
    double *a = malloc(count * sizeof *a), *b = malloc(count * sizeof *b);
    double diff = 0, umax = 0;
    for (int c = 0; c < 3 && a && b; ++c) {
      if (dtype == FCL_FLOAT64) {
        CHECK_OK(fcl_field_read(t->u, c, false, a));
        CHECK_OK(fcl_field_read(check, c, false, b));
      } else { /* floats read into the front of the buffers, widened from the back */
        CHECK_OK(fcl_field_read(t->u, c, false, a));
        CHECK_OK(fcl_field_read(check, c, false, b));
        for (size_t i = count; i-- > 0;) {
          a[i] = ((float *)a)[i];
          b[i] = ((float *)b)[i];
        }
      }
      for (size_t i = 0; i < count; ++i) {
        diff = fmax(diff, fabs(a[i] - b[i]));
        umax = fmax(umax, fabs(b[i]));
      }
    }
    free(a);
    free(b);
    MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &umax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double tol = dtype == FCL_FLOAT64 ? 1e-12 : 2e-6;
    CHECKF(diff <= tol * umax,
           "after t = 0.1, u is %.3g from Biot-Savart of w (max|u| %.3g): "
           "the diagnostics' velocity lags the vorticity",
           diff, umax);
  }
  fcl_field_destroy(&check);
  tgv_destroy(&t);
}

#if FLOWCL_ENABLE_HDF5
/* 10 steps with checkpoints every 5, then on from the latest to step 15 (max_steps is the last
 * step, as flowcl-tgv's --max-steps): the same as 15 at once. */
static void check_restart(fcl_test_mpi_env *e) {
  const fcl_dtype dtype = e->fp64 ? FCL_FLOAT64 : FCL_FLOAT32;
  const run_extra first = {10, 5, NULL}, again = {15, 0, "latest"}, straight = {15, 0, NULL};
  run_with(e, MPI_COMM_WORLD, dtype, 0.02, 0.125, 20, 1, "restart", &first);
  const result r = run_with(e, MPI_COMM_WORLD, dtype, 0.02, 0.125, 20, 1, "restart", &again);
  const result s = run_with(e, MPI_COMM_WORLD, dtype, 0.02, 0.125, 20, 1, "straight", &straight);
  CHECKF(r.t == s.t && r.energy == s.energy && r.enstrophy == s.enstrophy,
         "restarted at step 10: t %.17g, energy %.17g, enstrophy %.17g; straight: %.17g, "
         "%.17g, %.17g",
         r.t, r.energy, r.enstrophy, s.t, s.energy, s.enstrophy);
}
#endif

static void run_all(fcl_test_mpi_env *e) {
  check(e);
  check_z_periods(e);
  check_u_current(e);
#if FLOWCL_ENABLE_HDF5
  check_restart(e);
#endif
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, "tgv", run_all); }
