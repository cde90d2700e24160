/* What a flow past an obstacle needs, against exact values (1, 2 and 4 ranks):
 *   - masks: the integral of a smoothed sphere's mask against the volume of the smoothed
 *     indicator, (4 pi / 3) (R^3 + 3 R v) for the half-sine profile of half-width e (its
 *     derivative is a density of variance v = e^2 (1 - 8 / pi^2)), of a cylinder's against
 *     L pi (R^2 + v) and a disc's against pi (R^2 + v), of a sharp
 *     sphere against the grid points within its radius counted on the host;
 *   - force: a uniform flow U through a penalized sphere; the force against the sum over the
 *     grid of lambda chi / (1 + lambda dt chi) U h^3 computed on the host from the mask;
 *   - absorbing layer: a uniform vorticity multiplied by the half-cosine profile at every
 *     point;
 *   - the refusals. */
#include <math.h>
#include <stdlib.h>

#include "op_fields.h"

typedef fcl_test_mpi_env env;

static const double CENTER[3] = {PI, PI, PI};

static double integral(fcl_field *f) {
  double v = 0;
  CHECK_OK(fcl_field_reduce(f, 0, FCL_REDUCE_INTEGRAL, &v));
  return v;
}

static void check_masks(env *e, fcl_dtype dtype) {
  fcl_topology *t = op_box(3, 32, 0);
  fcl_field *chi = op_field(e, t, "chi", 1, dtype, NULL);
  const double r = 1, eps = 0.4, var = eps * eps * (1 - 8 / (PI * PI));
  CHECK_OK(fcl_mask_sphere(chi, CENTER, 2 * r, eps));
  double want = 4 * PI / 3 * (r * r * r + 3 * r * var), got = integral(chi);
  CHECKF(fabs(got - want) <= 1e-3 * want, "smoothed sphere: volume %.7g, expected %.7g", got, want);
  CHECK_OK(fcl_mask_cylinder(chi, CENTER, 2, 2 * r, eps));
  want = 2 * PI * PI * (r * r + var), got = integral(chi);
  CHECKF(fabs(got - want) <= 1e-3 * want, "smoothed cylinder: volume %.7g, expected %.7g", got,
         want);
  /* sharp: the grid points within the radius, counted on the host */
  CHECK_OK(fcl_mask_sphere(chi, CENTER, 2 * r, 0));
  const double h = 2 * PI / 32;
  long inside = 0;
  for (int k = 0; k < 32; ++k)
    for (int j = 0; j < 32; ++j)
      for (int i = 0; i < 32; ++i)
        inside += pow(i * h - PI, 2) + pow(j * h - PI, 2) + pow(k * h - PI, 2) <= r * r;
  want = (double)inside * h * h * h, got = integral(chi);
  CHECKF(fabs(got - want) <= 1e-6 * want, "sharp sphere: volume %.7g, expected %.7g (%ld points)",
         got, want, inside);
  /* refusals */
  CHECK_STATUS(fcl_mask_sphere(chi, CENTER, 0, eps), FCL_ERR_INVALID_ARGUMENT, "diameter");
  CHECK_STATUS(fcl_mask_sphere(chi, CENTER, 1, -1), FCL_ERR_INVALID_ARGUMENT, "smoothing");
  CHECK_STATUS(fcl_mask_sphere(chi, CENTER, 1, 0.5), FCL_ERR_INVALID_ARGUMENT, "below the radius");
  CHECK_STATUS(fcl_mask_cylinder(chi, CENTER, 3, 1, 0), FCL_ERR_INVALID_ARGUMENT, "axis");
  const double bad[3] = {PI, NAN, PI};
  CHECK_STATUS(fcl_mask_sphere(chi, bad, 1, 0), FCL_ERR_INVALID_ARGUMENT, "coordinate 1");
  fcl_field *v = op_field(e, t, "v", 3, dtype, NULL);
  CHECK_STATUS(fcl_mask_sphere(v, CENTER, 1, 0), FCL_ERR_INVALID_ARGUMENT, "3 components");
  fcl_field_destroy(&v);
  fcl_field_destroy(&chi);
  fcl_topology_destroy(&t);
  fcl_topology *t2 = op_box(2, 64, 0);
  fcl_field *chi2 = op_field(e, t2, "chi2", 1, dtype, NULL);
  CHECK_STATUS(fcl_mask_cylinder(chi2, CENTER, 0, 1, 0), FCL_ERR_INVALID_ARGUMENT, "3D");
  CHECK_OK(fcl_mask_sphere(chi2, CENTER, 2 * r, eps)); /* a disc */
  want = PI * (r * r + var), got = integral(chi2);
  CHECKF(fabs(got - want) <= 1e-3 * want, "smoothed disc: area %.7g, expected %.7g", got, want);
  fcl_field_destroy(&chi2);
  fcl_topology_destroy(&t2);
}

static const double U[3] = {1, 0.5, -0.25};
static void uniform_u(const double *x, double *v) {
  (void)x;
  for (int c = 0; c < 3; ++c) v[c] = U[c];
}

static void check_force(env *e, fcl_dtype dtype) {
  fcl_topology *t = op_box(3, 24, 2);
  fcl_field *u = op_field(e, t, "u", 3, dtype, uniform_u);
  fcl_field *w = op_field(e, t, "w", 3, dtype, NULL);
  fcl_field *chi = op_field(e, t, "chi", 1, dtype, NULL);
  CHECK_OK(fcl_mask_sphere(chi, CENTER, 2, 0.3));
  const double lambda = 100, dt = 0.01;
  fcl_fd *op = NULL, *velocity_only = NULL;
  CHECK_OK(fcl_penalization_vorticity_create(u, w, chi, NULL, lambda, e->pool, &op));
  CHECK_OK(fcl_penalization_create(u, chi, NULL, lambda, &velocity_only));
  if (op && velocity_only) {
    /* the host's sum, from the mask as the device holds it */
    const int64_t *n = fcl_topology_local_resolution(t);
    const size_t count = (size_t)(n[0] * n[1] * n[2]);
    double *host = malloc(count * sizeof *host), sum = 0, all;
    CHECK_OK(fcl_field_read(chi, 0, false, host));
    for (size_t i = 0; i < count; ++i) {
      double c = dtype == FCL_FLOAT64 ? host[i] : ((float *)host)[i];
      sum += lambda * c / (1 + lambda * dt * c);
    }
    free(host);
    MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double h = 2 * PI / 24, cell = h * h * h;
    CHECK_OK(fcl_fd_apply(op, dt));
    double force[3];
    CHECK_OK(fcl_penalization_force(op, dt, force));
    const double tol = dtype == FCL_FLOAT64 ? 1e-12 : 2e-5;
    for (int c = 0; c < 3; ++c) {
      const double want = all * U[c] * cell;
      CHECKF(fabs(force[c] - want) <= tol * fabs(all * cell),
             "force[%d] = %.9g, expected %.9g (%s)", c, force[c], want, fcl_dtype_cl_name(dtype));
    }
    CHECK(force[0] > 0); /* a drag along the flow */
    CHECK_STATUS(fcl_penalization_force(op, 0, force), FCL_ERR_INVALID_ARGUMENT, "dt");
    CHECK_STATUS(fcl_penalization_force(velocity_only, dt, force), FCL_ERR_INVALID_ARGUMENT,
                 "not a vorticity penalization");
  }
  fcl_fd_destroy(&op);
  fcl_fd_destroy(&velocity_only);
  fcl_field_destroy(&u);
  fcl_field_destroy(&w);
  fcl_field_destroy(&chi);
  fcl_topology_destroy(&t);
}

static const double START = 4, END = 6;
static void ones(const double *x, double *v) {
  (void)x;
  v[0] = v[1] = v[2] = 1;
}
static void profile(const double *x, double *v, const void *p) {
  (void)p;
  const double s = x[0] <= START ? 1
                   : x[0] >= END ? 0
                                 : 0.5 * (1 + cos(PI * (x[0] - START) / (END - START)));
  v[0] = v[1] = v[2] = s;
}

static void check_absorbing_layer(env *e, fcl_dtype dtype) {
  fcl_topology *t = op_box(3, 16, 0);
  fcl_field *w = op_field(e, t, "w", 3, dtype, ones);
  fcl_fd *op = NULL;
  CHECK_OK(fcl_absorbing_layer_create(w, 0, START, END, e->pool, &op));
  if (op) {
    CHECK_OK(fcl_fd_apply(op, 0.1));
    const double err = op_rel_error(w, profile, NULL);
    CHECKF(err <= (dtype == FCL_FLOAT64 ? 1e-15 : 1e-6), "absorbing layer: %.3g from the profile",
           err);
    fcl_operator d; /* a problem sees w only: the profile is the operator's own */
    CHECK_OK(fcl_fd_operator(op, &d));
    CHECK(d.nuses == 1 && d.uses[0].field == w && d.uses[0].read && d.uses[0].written);
  }
  fcl_fd *bad = NULL;
  CHECK_STATUS(fcl_absorbing_layer_create(w, 0, END, START, e->pool, &bad),
               FCL_ERR_INVALID_ARGUMENT, "start < end");
  CHECK_STATUS(fcl_absorbing_layer_create(w, 3, START, END, e->pool, &bad),
               FCL_ERR_INVALID_ARGUMENT, "axis");
  fcl_fd_destroy(&op);
  fcl_field_destroy(&w);
  fcl_topology_destroy(&t);
}

static void run(env *e) {
  fcl_dtype types[2] = {FCL_FLOAT32, FCL_FLOAT64};
  for (int k = 0; k < 2; ++k) {
    if (types[k] == FCL_FLOAT64 && !e->fp64) {
      fcl_test_skip_part(NULL, "the double-precision cases (no cl_khr_fp64)");
      continue;
    }
    check_masks(e, types[k]);
    check_force(e, types[k]);
    check_absorbing_layer(e, types[k]);
  }
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
