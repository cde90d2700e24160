/* The Taylor-Green vortex at Re = 1600 through flowcl-tgv's solver, against the 512^3 DNS of
 * Dairay et al. 2017 (apps/tgv/reference), on 1, 2 or 4 ranks.
 *
 * Convergence study (PoCL, double, t = 1, default options but dt_max; README "Validation"): at
 * t = 1 the flow is smooth and the grids 24^3, 32^3, 48^3 agree to 2.3e-5 in energy, while the
 * error against the DNS halves with dt (the operator splitting is first order in time): at
 * 32^3 energy 3.59e-4 at dt_max = 0.02 and 1.75e-4 at 0.01, enstrophy 1.24e-3 and 5.4e-4. So:
 *   - with dt_max = 0.01 the energy is within 2.5e-4 and the enstrophy within 8e-4 of the
 *     DNS (the measured errors plus 40%);
 *   - halving dt_max from 0.02 divides both errors by at least 1.7 (first order);
 *   - the run equals a one-rank run of the same problem (rank 0 repeats it alone) to 1e-11
 *     relative: only the order of the sums in the reductions and FFTs differs;
 *   - a box of two periods along z (--z-periods 2, the weak-scaling runs) has the same
 *     averages as one period. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fcl_test_mpi.h"
#include "tgv_options.h"
#include "tgv_solver.h"

/* The DNS at t = 1 (apps/tgv/reference/tgv_re1600_dairay2017.csv, row t = 1). */
#define E_REF 0.124515267346
#define Z_REF 0.415054960339

typedef struct {
  double t, energy, enstrophy;
} result;

static result run(fcl_test_mpi_env *e, MPI_Comm comm, fcl_dtype dtype, double dt_max,
                  double t_end, int z_periods, const char *tag) {
  char dir[600];
  snprintf(dir, sizeof dir, "%s/%s", e->dir, tag);
  char *argv[] = {"flowcl-tgv", NULL};
  tgv_options o;
  tgv_options_parse(1, argv, 1, &o);
  o.resolution = 32;
  o.z_periods = z_periods;
  o.t_end = t_end;
  o.dtype = dtype;
  o.dt_max = dt_max;
  o.output_dir = dir;
  o.quiet = true;
  o.plot = false;
  cl_device_id dev;
  fcl_device_info info;
  char spec[300];
  CHECK_OK(fcl_queue_device(e->q, &dev));
  CHECK_OK(fcl_device_get_info(dev, &info));
  snprintf(spec, sizeof spec, ":%s", info.name); /* the test's device, by name */
  o.device = spec;
  tgv *t = NULL;
  result r = {NAN, NAN, NAN};
  fcl_sim_state s;
  CHECK_OK(tgv_create(&o, comm, &t));
  if (t) CHECK_OK(tgv_run(t, &s));
  if (t) tgv_last_diagnostics(t, &r.t, &r.energy, &r.enstrophy);
  tgv_destroy(&t);
  CHECKF(r.t == t_end, "the run ended at t = %.17g, not %g", r.t, t_end);
  return r;
}

static void check(fcl_test_mpi_env *e) {
  const fcl_dtype dtype = e->fp64 ? FCL_FLOAT64 : FCL_FLOAT32;
  const result coarse = run(e, MPI_COMM_WORLD, dtype, 0.02, 1, 1, "dt02");
  const result fine = run(e, MPI_COMM_WORLD, dtype, 0.01, 1, 1, "dt01");
  const double ec = fabs(coarse.energy - E_REF), ef = fabs(fine.energy - E_REF);
  const double zc = fabs(coarse.enstrophy - Z_REF), zf = fabs(fine.enstrophy - Z_REF);
  if (e->rank == 0)
    printf("TGV 32^3, t = 1: energy %.9f (DNS %.9f), enstrophy %.9f (DNS %.9f) at dt_max 0.01; "
           "errors %.3g / %.3g (energy), %.3g / %.3g (enstrophy) at dt_max 0.02 / 0.01\n",
           fine.energy, E_REF, fine.enstrophy, Z_REF, ec, ef, zc, zf);
  CHECKF(ef <= 2.5e-4, "energy at t = 1: %.9f, %.3g from the DNS (tolerance 2.5e-4)", fine.energy, ef);
  CHECKF(zf <= 8e-4, "enstrophy at t = 1: %.9f, %.3g from the DNS (tolerance 8e-4)", fine.enstrophy, zf);
  CHECKF(ec / ef >= 1.7 && zc / zf >= 1.7, "halving dt: energy error %.3g -> %.3g, enstrophy "
         "%.3g -> %.3g (first order wants a factor 2)", ec, ef, zc, zf);
  /* the same problem on rank 0 alone */
  if (e->size > 1) {
    result one = {0};
    if (e->rank == 0) one = run(e, MPI_COMM_SELF, dtype, 0.01, 1, 1, "alone");
    MPI_Bcast(&one, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const double tol = dtype == FCL_FLOAT64 ? 1e-11 : 1e-4;
    CHECKF(fabs(one.energy - fine.energy) <= tol * fine.energy &&
           fabs(one.enstrophy - fine.enstrophy) <= tol * fine.enstrophy,
           "%d ranks: energy %.15g, enstrophy %.15g; one rank: %.15g, %.15g", e->size,
           fine.energy, fine.enstrophy, one.energy, one.enstrophy);
  }
}

/* Two periods along z (the weak-scaling box) hold the same flow: the same averages. */
static void check_z_periods(fcl_test_mpi_env *e) {
  const fcl_dtype dtype = e->fp64 ? FCL_FLOAT64 : FCL_FLOAT32;
  const result one = run(e, MPI_COMM_WORLD, dtype, 0.02, 0.2, 1, "k1");
  const result two = run(e, MPI_COMM_WORLD, dtype, 0.02, 0.2, 2, "k2");
  const double tol = dtype == FCL_FLOAT64 ? 1e-11 : 1e-5;
  CHECKF(fabs(one.energy - two.energy) <= tol * one.energy &&
         fabs(one.enstrophy - two.enstrophy) <= tol * one.enstrophy,
         "z periods 1 / 2: energy %.15g / %.15g, enstrophy %.15g / %.15g", one.energy,
         two.energy, one.enstrophy, two.enstrophy);
}

static void run_all(fcl_test_mpi_env *e) {
  check(e);
  check_z_periods(e);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, "tgv", run_all); }
