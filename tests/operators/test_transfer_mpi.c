/* Grid transfers (transfer.h) on 1, 2 or 4 ranks against exact solutions, on periodic boxes and
 * with walls along x (Dirichlet: sine, Neumann: cosine, the mirror ghosts):
 *   - interpolation of a smooth field within the cubic interpolant's error bound, and fourth
 *     order: the error falls at least 12-fold when the grids are refined twice (2D and 3D, factors
 *     2 and 4);
 *   - restriction of a Fourier mode equals the mode times the full weighting's transfer function
 *     (sin(k h r / 2) / (r sin(k h / 2)))^2 per axis, h the fine spacing, to rounding;
 *   - the transfer as a problem operator (ghosts exchanged by the problem) equals
 *     fcl_transfer_apply, and writes a field's new buffer after fcl_field_swap;
 *   - errors: one field twice, grids that do not refine, too few ghosts, other components. */
#include <math.h>
#include <stdlib.h>

#include "op_fields.h"

typedef fcl_test_mpi_env env;

/* The test field: a mode of wavenumber 1 along every axis; along x a sine (periodic or
 * Dirichlet walls at 0 and pi) or a cosine (Neumann walls). */
typedef struct {
  int dim;
  bool neumann;
} mode;

static mode current;

static double mode_value(const double *x) {
  double v = current.neumann ? cos(x[0]) : sin(x[0]);
  if (current.dim > 1) v *= cos(x[1]);
  if (current.dim > 2) v *= sin(x[2] + 1);
  return v;
}

static void mode_fn(const double *x, double *v) { v[0] = mode_value(x); }

static void mode_exact(const double *x, double *v, const void *p) {
  v[0] = *(const double *)p * mode_value(x);
}

/* [0, 2 pi)^dim, or x between walls at 0 and pi (Dirichlet or Neumann); n points per periodic
 * axis, n / 2 + 1 along the walled x; ghosts on every axis. */
static fcl_topology *box(int dim, int64_t n, int walls, int ghosts, int factor) {
  fcl_domain d = fcl_domain_periodic(dim, n, 2 * PI);
  if (walls) {
    d.resolution[0] = n / 2 + 1;
    d.length[0] = PI;
    d.bc[0][0] = d.bc[0][1] = walls == 1 ? FCL_BC_DIRICHLET : FCL_BC_NEUMANN;
  }
  if (factor > 1) d = fcl_domain_refine(&d, factor);
  const int g[3] = {ghosts, ghosts, ghosts};
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, g, &t));
  return t;
}

/* The interpolation error of the mode from n coarse points per periodic axis to factor r. */
static double interpolation_error(env *e, fcl_dtype dt, int dim, int64_t n, int walls, int r) {
  current = (mode){dim, walls == 2};
  fcl_topology *tc = box(dim, n, walls, 2, 1), *tf = box(dim, n, walls, 2, r);
  fcl_field *c = op_field(e, tc, "coarse", 1, dt, mode_fn);
  fcl_field *f = op_field(e, tf, "fine", 1, dt, NULL);
  fcl_transfer *t = NULL;
  CHECK_OK(fcl_transfer_create(c, f, &t));
  CHECK(fcl_transfer_factor(t) == r && fcl_transfer_interpolates(t));
  CHECK_OK(fcl_transfer_apply(t));
  const double one = 1, err = op_rel_error(f, mode_exact, &one);
  fcl_transfer_destroy(&t);
  fcl_field_destroy(&f);
  fcl_field_destroy(&c);
  fcl_topology_destroy(&tf);
  fcl_topology_destroy(&tc);
  return err;
}

static void check_interpolation(env *e, fcl_dtype dt, int dim, int walls, int r) {
  const int64_t n = dim == 3 ? 12 : 16;
  const double coarse = interpolation_error(e, dt, dim, n, walls, r);
  const double fine = interpolation_error(e, dt, dim, 2 * n, walls, r);
  /* the cubic's error per axis: at most 9/16 / 4! (h k)^4 |f| (midway), k = 1 */
  const double h = 2 * PI / (double)n, bound = dim * 9.0 / 16.0 / 24.0 * pow(h, 4);
  CHECKF(coarse <= bound && coarse / fine >= 12,
         "interpolation %dD, walls %d, factor %d: error %.3e at %lld points (bound %.3e), "
         "%.3e at twice as many: ratio %.1f (fourth order: 16)",
         dim, walls, r, coarse, (long long)n, bound, fine, coarse / fine);
}

static void check_restriction(env *e, fcl_dtype dt, int dim, int walls, int r) {
  const int64_t n = 8;
  current = (mode){dim, walls == 2};
  fcl_topology *tc = box(dim, n, walls, 1, 1), *tf = box(dim, n, walls, r - 1, r);
  fcl_field *f = op_field(e, tf, "fine", 1, dt, mode_fn);
  fcl_field *c = op_field(e, tc, "coarse", 1, dt, NULL);
  fcl_transfer *t = NULL;
  CHECK_OK(fcl_transfer_create(f, c, &t));
  CHECK(fcl_transfer_factor(t) == r && !fcl_transfer_interpolates(t));
  CHECK_OK(fcl_transfer_apply(t));
  double gain = 1;
  const fcl_domain *d = fcl_topology_domain(tf);
  for (int a = 0; a < dim; ++a) {
    const double h = fcl_domain_spacing(d, a), s = sin(h * r / 2) / (r * sin(h / 2));
    gain *= s * s;
  }
  const double err = op_rel_error(c, mode_exact, &gain);
  const double tol = dt == FCL_FLOAT64 ? 1e-13 : 2e-6;
  CHECKF(err <= tol, "restriction %dD, walls %d, factor %d: %.3e from the mode times %.6f", dim,
         walls, r, err, gain);
  fcl_transfer_destroy(&t);
  fcl_field_destroy(&c);
  fcl_field_destroy(&f);
  fcl_topology_destroy(&tf);
  fcl_topology_destroy(&tc);
}

/* The transfer inside a problem: the problem exchanges the coarse ghosts, the values equal
 * fcl_transfer_apply's. */
static void check_operator(env *e, fcl_dtype dt) {
  current = (mode){3, false};
  fcl_topology *tc = box(3, 12, 0, 2, 1), *tf = box(3, 12, 0, 2, 2);
  fcl_field *c = op_field(e, tc, "coarse", 1, dt, mode_fn);
  fcl_field *f = op_field(e, tf, "fine", 1, dt, NULL), *g = op_field(e, tf, "fine2", 1, dt, NULL);
  fcl_transfer *direct = NULL, *inside = NULL;
  CHECK_OK(fcl_transfer_create(c, f, &direct));
  CHECK_OK(fcl_transfer_create(c, g, &inside));
  CHECK_OK(fcl_transfer_apply(direct));
  fcl_problem *p = NULL;
  fcl_operator op;
  CHECK_OK(fcl_problem_create("transfer", &p));
  CHECK_OK(fcl_problem_add_field(p, c, true));
  CHECK_OK(fcl_problem_add_field(p, g, false));
  CHECK_OK(fcl_transfer_operator(inside, &op));
  CHECK(op.nuses == 2 && op.uses[0].ghosts == 2 && op.uses[1].written);
  CHECK_OK(fcl_problem_add_operator(p, &op));
  CHECK_OK(fcl_problem_setup(p));
  CHECK_OK(fcl_problem_step(p, &(fcl_step_info){.dt = 1}));
  const int64_t *n = fcl_topology_local_resolution(tf);
  const size_t count = (size_t)(n[0] * n[1] * n[2]);
  double *a = malloc(count * sizeof *a), *b = malloc(count * sizeof *b);
  CHECK_OK(fcl_field_read(f, 0, false, a));
  CHECK_OK(fcl_field_read(g, 0, false, b));
  size_t differ = 0;
  const size_t bytes = count * fcl_dtype_size(dt);
  for (size_t i = 0; i < bytes; ++i) differ += ((unsigned char *)a)[i] != ((unsigned char *)b)[i];
  CHECKF(differ == 0, "the transfer operator differs from fcl_transfer_apply in %zu bytes", differ);
  /* after a swap the transfer writes the field's new buffer */
  fcl_field *h = op_field(e, tf, "fine3", 1, dt, NULL);
  CHECK_OK(fcl_field_swap(g, h));
  CHECK_OK(fcl_transfer_apply(inside));
  CHECK_OK(fcl_field_read(g, 0, false, b));
  differ = 0;
  for (size_t i = 0; i < bytes; ++i) differ += ((unsigned char *)a)[i] != ((unsigned char *)b)[i];
  CHECKF(differ == 0, "after fcl_field_swap the transfer differs in %zu bytes", differ);
  fcl_field_destroy(&h);
  free(a);
  free(b);
  fcl_problem_destroy(&p);
  fcl_transfer_destroy(&inside);
  fcl_transfer_destroy(&direct);
  fcl_field_destroy(&g);
  fcl_field_destroy(&f);
  fcl_field_destroy(&c);
  fcl_topology_destroy(&tf);
  fcl_topology_destroy(&tc);
}

static void check_errors(env *e) {
  fcl_topology *tc = box(2, 8, 0, 1, 1), *tf = box(2, 8, 0, 2, 2);
  fcl_domain odd = fcl_domain_periodic(2, 12, 2 * PI);
  const int g[3] = {2, 2, 2};
  fcl_topology *t12 = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &odd, NULL, g, &t12));
  fcl_field *c = op_field(e, tc, "coarse", 1, FCL_FLOAT32, NULL);
  fcl_field *f = op_field(e, tf, "fine", 1, FCL_FLOAT32, NULL);
  fcl_field *v = op_field(e, tf, "fine_vector", 2, FCL_FLOAT32, NULL);
  fcl_field *x = op_field(e, t12, "other", 1, FCL_FLOAT32, NULL);
  fcl_transfer *t = NULL;
  const fcl_status bad = FCL_ERR_INVALID_ARGUMENT;
  CHECK_STATUS(fcl_transfer_create(c, c, &t), bad, "both 'coarse'");
  CHECK_STATUS(fcl_transfer_create(c, v, &t), bad, "components");
  CHECK_STATUS(fcl_transfer_create(f, x, &t), bad, "one factor 2 to 8");
  /* interpolating from coarse needs 2 ghosts, it has 1 */
  CHECK_STATUS(fcl_transfer_create(c, f, &t), bad, "1 ghosts (2 needed");
  CHECK(t == NULL);
  fcl_field *fields[4] = {x, v, f, c};
  for (int i = 0; i < 4; ++i) fcl_field_destroy(&fields[i]);
  fcl_topology_destroy(&t12);
  fcl_topology_destroy(&tf);
  fcl_topology_destroy(&tc);
}

static void run(env *e) {
  check_errors(e);
  const fcl_dtype dt = e->fp64 ? FCL_FLOAT64 : FCL_FLOAT32;
  for (int walls = 0; walls <= 2; ++walls) {
    check_interpolation(e, dt, 2, walls, 4);
    check_interpolation(e, dt, 3, walls, 2);
    check_restriction(e, dt, 2, walls, 4);
    check_restriction(e, dt, 3, walls, 2);
  }
  check_interpolation(e, FCL_FLOAT32, 2, 0, 2);
  check_restriction(e, FCL_FLOAT32, 3, 1, 4);
  check_operator(e, dt);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
