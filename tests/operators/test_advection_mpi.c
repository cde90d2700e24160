/* Advection with remeshing on 1, 2 or 4 ranks, against exact solutions:
 *   - the Lambda_{p,r} tables: interpolation, continuity and the moments 0..p (checked here
 *     on the host, independently of the derivation script);
 *   - a velocity of exactly one cell per step shifts every value by one point (all formulas,
 *     float and double, the strided axes' tiles and walking kernels);
 *   - the walking kernels give the tiles' values to rounding (whole lines and segments, every
 *     RK order, both interpolations, displacements over a cell);
 *   - convergence in space: a shear flow u = (a(y), b(x)) keeps the velocity constant along each
 *     line, so the exact split solution is the initial field at the backtracked point; the
 *     measured order over three resolutions is at least the formula's order - 0.3;
 *   - the splitting's order: the shear flow against its unsplit solution, Strang and the
 *     alternating splitting at second order in dt, the first-order splitting at first;
 *   - convergence in time: a compressive 1D flow u = f(x) has the exact conservative solution
 *     q0(X0) f(X0) / f(x) (X0 the characteristic's foot): RK2, RK3, RK4 at their order;
 *   - mass is conserved to rounding in a Taylor-Green velocity (every formula, RK4);
 *   - solid-body rotation returns a blob after one turn, better at the finer resolution;
 *   - the same result on the ranks as on one rank holding the whole grid;
 *   - walls (mirror images in the ghosts): the trapezoidal mass of a scalar touching a wall is
 *     conserved to rounding (every formula); a flow into the walls converges at the formula's
 *     order up to them, against its closed-form solution;
 *   - errors: a dt over the CFL bound, missing ghosts, a velocity through a wall, bad options.
 * The grid-refinement studies in 2D (space order, rotation) run on one rank only: with more,
 * the rank check shows every result equals the one-rank run to rounding. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fcl_test_mpi.h"
#include "remesh_formulas.h"

#define PI 3.14159265358979323846

typedef fcl_test_mpi_env env;

/* ---------------- the kernel tables ---------------- */

static double kernel_w(const fcl__remesh_formula *f, double x) {
  double ax = fabs(x);
  int j = (int)ax;
  if (j >= f->support) return 0;
  double t = ax - j, v = 0;
  for (int k = f->degree; k >= 0; --k) v = v * t + f->coef[j][k];
  return v;
}

static void check_tables(void) {
  for (size_t n = 0; n < sizeof fcl__remesh_formulas / sizeof *fcl__remesh_formulas; ++n) {
    const fcl__remesh_formula *f = &fcl__remesh_formulas[n];
    CHECKF(fabs(kernel_w(f, 0) - 1) < 1e-14, "Lambda_%d,%d(0) = %g", f->p, f->r, kernel_w(f, 0));
    for (int j = 1; j <= f->support; ++j) {
      CHECKF(fabs(kernel_w(f, j - 1e-12)) < 1e-9 && fabs(kernel_w(f, j + 1e-12)) < 1e-9,
             "Lambda_%d,%d is not 0 and continuous at %d", f->p, f->r, j);
      /* C^1 at the knots (one-sided difference quotients agree) */
      double h = 1e-6, left = (kernel_w(f, j) - kernel_w(f, j - h)) / h,
             right = (kernel_w(f, j + h) - kernel_w(f, j)) / h;
      CHECKF(fabs(left - right) < 1e-4, "Lambda_%d,%d: derivative jumps at %d (%g, %g)", f->p, f->r,
             j, left, right);
    }
    for (double y = 0; y < 1; y += 0.0625)
      for (int m = 0; m <= f->p; ++m) {
        double s = 0;
        for (int j = -f->support + 1; j <= f->support; ++j) s += pow(y - j, m) * kernel_w(f, y - j);
        CHECKF(fabs(s - (m == 0)) < 1e-10, "Lambda_%d,%d: moment %d at %g is %.3g", f->p, f->r, m,
               y, s);
      }
  }
}

/* ---------------- grids and fields ---------------- */

/* A periodic box [0, 2 pi)^dim over comm (procs NULL: MPI chooses), ghosts on split axes. */
static fcl_topology *topology_split(MPI_Comm comm, int dim, const int64_t *n, const int *procs,
                                    int ghosts) {
  fcl_domain d = fcl_domain_periodic(dim, 8, 2 * PI);
  for (int a = 0; a < dim; ++a) d.resolution[a] = n[a];
  int size, p[3] = {0, 0, 0}, g[3] = {0, 0, 0};
  MPI_Comm_size(comm, &size);
  if (procs) memcpy(p, procs, (size_t)dim * sizeof *p);
  MPI_Dims_create(size, dim, p);
  for (int a = 0; a < dim; ++a) g[a] = p[a] > 1 ? ghosts : 0;
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(comm, &d, p, g, &t));
  return t;
}
static fcl_topology *topology(MPI_Comm comm, int dim, const int64_t *n, int ghosts) {
  return topology_split(comm, dim, n, NULL, ghosts);
}

typedef void (*values_fn)(const double *x, const void *p, double *v);
typedef struct {
  values_fn fn;
  const void *p;
} init_data;

static void init_cb(void *user, const double *x, double *v) {
  const init_data *d = user;
  d->fn(x, d->p, v);
}

static fcl_field *field(env *e, fcl_topology *t, const char *name, int ncomp, fcl_dtype dt,
                        values_fn fn, const void *p) {
  fcl_field *f = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, name, ncomp, dt, &f));
  init_data d = {fn, p};
  if (f && fn) CHECK_OK(fcl_field_init(f, init_cb, &d));
  return f;
}

/* The local interior of a component as doubles (malloc'd). */
static double *read_comp(fcl_field *f, int c) {
  const int64_t *n = fcl_topology_local_resolution(fcl_field_topology(f));
  size_t count = (size_t)(n[0] * n[1] * n[2]);
  double *v = malloc(count * sizeof *v);
  CHECK_OK(fcl_field_read(f, c, false, v));
  if (fcl_field_dtype(f) == FCL_FLOAT32)
    for (size_t i = count; i-- > 0;) v[i] = ((float *)v)[i];
  return v;
}

/* Coordinates of local point number at (x fastest). */
static void coords(fcl_topology *t, size_t at, double x[3]) {
  const fcl_domain *d = fcl_topology_domain(t);
  const int64_t *n = fcl_topology_local_resolution(t), *off = fcl_topology_offset(t);
  int64_t i[3] = {(int64_t)at % n[0], ((int64_t)at / n[0]) % n[1], (int64_t)at / (n[0] * n[1])};
  for (int a = 0; a < 3; ++a)
    x[a] = a < d->dim ? d->origin[a] + (double)(i[a] + off[a]) * fcl_domain_spacing(d, a) : 0;
}

/* sqrt(sum (f - exact)^2 / sum exact^2) over the whole grid, component c. */
static double rel_l2(fcl_field *f, int c, values_fn exact, const void *p) {
  fcl_topology *t = fcl_field_topology(f);
  const int64_t *n = fcl_topology_local_resolution(t);
  double *v = read_comp(f, c), s[2] = {0, 0}, all[2];
  for (size_t at = 0; at < (size_t)(n[0] * n[1] * n[2]); ++at) {
    double x[3], w[3];
    coords(t, at, x);
    exact(x, p, w);
    s[0] += (v[at] - w[c]) * (v[at] - w[c]);
    s[1] += w[c] * w[c];
  }
  free(v);
  MPI_Allreduce(s, all, 2, MPI_DOUBLE, MPI_SUM, fcl_topology_comm(t));
  return sqrt(all[0] / all[1]);
}

static fcl_advection_options options(fcl_remesh_formula f, int rk, fcl_interp interp,
                                     fcl_splitting split, double cfl) {
  fcl_advection_options o = fcl_advection_default_options();
  o.formula = f;
  o.rk_order = rk;
  o.interp = interp;
  o.splitting = split;
  o.max_cfl = cfl;
  return o;
}

static const fcl_remesh_formula FORMULAS[] = {FCL_REMESH_L2_1, FCL_REMESH_L2_2, FCL_REMESH_L4_2,
                                              FCL_REMESH_L6_4, FCL_REMESH_L8_4};
static const int ORDER[] = {2, 2, 4, 6, 8};

/* ---------------- exact shift ---------------- */

typedef struct {
  double dx[3];
  long long n[3];
  int shift, dir; /* the values shifted by `shift` cells; the velocity: dir cells a unit time */
} shift_data;

/* A rough deterministic value per grid point (any indexing slip shows). */
static void hashed(const double *x, const void *p, double *v) {
  const shift_data *s = p;
  long long i[3];
  for (int a = 0; a < 3; ++a) i[a] = (llround(x[a] / s->dx[a]) - s->shift + s->n[a]) % s->n[a];
  unsigned long long h = 1469598103934665603ull;
  for (int a = 0; a < 3; ++a) h = (h ^ (unsigned long long)i[a]) * 1099511628211ull;
  v[0] = (double)(h % 1000) / 1000.0;
  v[1] = 1 - v[0];
}

static void unit_cells(const double *x, const void *p, double *v) {
  (void)x;
  const shift_data *s = p;
  for (int a = 0; a < 3; ++a) v[a] = s->dir * s->dx[a];
}

/* max_segment > 0: the lines cut in segments (max_segment 4: x 24 -> 3, y and z 16 -> 4, and
 * the lines of an axis split over ranks: x on 2 ranks, x and y on 4), each read with its halos,
 * shifted both ways (a point's value comes from the halo before its segment one way, after it
 * the other). */
static void check_shift(env *e, fcl_dtype dt, int64_t max_segment, fcl_adv_strided strided) {
  const int64_t n[3] = {24, 16, 16};
  for (size_t run = 0; run < (max_segment ? 10u : 5u); ++run) {
    const size_t fi = run % 5;
    fcl_advection_options o = options(FORMULAS[fi], 2, FCL_INTERP_LINEAR, FCL_SPLIT_FIRST_ORDER, 1);
    o.max_segment = max_segment;
    o.strided = strided;
    fcl_topology *t = topology(MPI_COMM_WORLD, 3, n, fcl_advection_ghosts_needed(&o));
    if (!t) continue;
    shift_data s = {{2 * PI / 24, 2 * PI / 16, 2 * PI / 16}, {24, 16, 16}, 0, run < 5 ? 1 : -1};
    /* velocity of one cell per unit time on each axis, hashed values on 2 components */
    fcl_field *u = field(e, t, "u", 3, dt, unit_cells, &s),
              *q = field(e, t, "q", 2, dt, hashed, &s);
    fcl_advection *adv = NULL;
    CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
    CHECK_OK(fcl_advection_step(adv, 1.0));
    s.shift = s.dir;
    for (int c = 0; c < 2; ++c) {
      double err = rel_l2(q, c, hashed, &s);
      CHECKF(err < (dt == FCL_FLOAT64 ? 1e-13 : 1e-6),
             "shift by %d cell, %s %s, max_segment %lld, %s, comp %d: error %.3g", s.dir,
             fcl_remesh_formula_name(FORMULAS[fi]), fcl_dtype_cl_name(dt), (long long)max_segment,
             strided == FCL_ADV_STRIDED_WALK ? "walk" : "tiles", c, err);
    }
    fcl_advection_destroy(&adv);
    fcl_field_destroy(&u);
    fcl_field_destroy(&q);
    fcl_topology_destroy(&t);
  }
}

/* Two runs of `steps` steps of dt from the same hashed values, with options o[0] and o[1]: the
 * largest value of the first and the largest difference between them, over the ranks. */
static void two_runs(env *e, fcl_topology *t, fcl_field *u, const fcl_advection_options o[2],
                     double dt, int steps, const shift_data *s, double red[2]) {
  double *v[2][2];
  for (int k = 0; k < 2; ++k) {
    fcl_field *q = field(e, t, "q", 2, FCL_FLOAT64, hashed, s);
    fcl_advection *adv = NULL;
    CHECK_OK(fcl_advection_create(u, 1, &q, &o[k], &adv));
    for (int step = 0; step < steps; ++step) CHECK_OK(fcl_advection_step(adv, dt));
    for (int c = 0; c < 2; ++c) v[k][c] = read_comp(q, c);
    fcl_advection_destroy(&adv);
    fcl_field_destroy(&q);
  }
  const int64_t *ln = fcl_topology_local_resolution(t);
  double all[2] = {0, 0};
  for (int c = 0; c < 2; ++c)
    for (size_t i = 0; i < (size_t)(ln[0] * ln[1] * ln[2]); ++i) {
      all[0] = fmax(all[0], fabs(v[0][c][i]));
      all[1] = fmax(all[1], fabs(v[1][c][i] - v[0][c][i]));
    }
  MPI_Allreduce(all, red, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int k = 0; k < 2; ++k)
    for (int c = 0; c < 2; ++c) free(v[k][c]);
}

/* ---------------- segments against whole lines ---------------- */

static void sheared(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = 0.2 + 0.5 * sin(x[1] + x[2]); /* both signs on every axis */
  v[1] = 0.4 * cos(x[0]) - 0.3 * sin(x[2]);
  v[2] = 0.1 + 0.5 * sin(x[0] - x[1]);
}

/* Lines cut in segments of 4 (3 along x) give the whole lines' values to rounding, where each
 * point gathers from particles at fractional distances (halo points at every offset count). */
static void check_segments(env *e) {
  const int64_t n[3] = {24, 16, 16};
  const fcl_remesh_formula formulas[2] = {FCL_REMESH_L4_2, FCL_REMESH_L8_4};
  for (int fi = 0; fi < 2; ++fi) {
    fcl_advection_options o = options(formulas[fi], 2, FCL_INTERP_LINEAR, FCL_SPLIT_STRANG, 1);
    fcl_topology *t = topology(MPI_COMM_WORLD, 3, n, fcl_advection_ghosts_needed(&o));
    if (!t) continue;
    shift_data s = {{2 * PI / 24, 2 * PI / 16, 2 * PI / 16}, {24, 16, 16}, 0, 1};
    fcl_field *u = field(e, t, "u", 3, FCL_FLOAT64, sheared, NULL);
    fcl_advection_options two[2] = {o, o};
    two[1].max_segment = 4;
    double red[2];
    two_runs(e, t, u, two, 0.2, 2, &s, red);
    CHECKF(red[1] <= 1e-13 * red[0] && red[0] > 0.1,
           "%s: segments of 4 against whole lines differ by %.3g (values up to %.3g)",
           fcl_remesh_formula_name(formulas[fi]), red[1], red[0]);
    fcl_field_destroy(&u);
    fcl_topology_destroy(&t);
  }
}

/* ---------------- walking kernels against tiles ---------------- */

/* The walking kernels of the strided axes, on whole lines and on segments (max_segment 4: of 4
 * points, of 8 where the reach is longer), give the tiles' values to rounding: displacements
 * of both signs over a cell (max_cfl 2: the interpolation's choice among 5 intervals), every
 * RK order, both interpolations, in a velocity that varies along every line. */
static void varied(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = 0.2 + 0.5 * sin(x[0] + x[1] + x[2]); /* every component varies along its own axis */
  v[1] = 0.4 * cos(x[0] + x[1]) - 0.3 * sin(x[1] - x[2]);
  v[2] = 0.1 + 0.5 * sin(x[0] - x[1] + x[2]);
}

static void check_walk(env *e) {
  const int64_t n[3] = {24, 16, 16};
  const struct {
    fcl_remesh_formula f;
    int rk;
    fcl_interp interp;
    double cfl; /* the reach fits 8 points a rank on 4 ranks */
  } cases[] = {{FCL_REMESH_L4_2, 2, FCL_INTERP_LINEAR, 2},
               {FCL_REMESH_L8_4, 3, FCL_INTERP_LINEAR, 1},
               {FCL_REMESH_L2_1, 4, FCL_INTERP_KERNEL, 2}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k)
    for (int64_t seg = 0; seg <= 4; seg += 4) {
      fcl_advection_options o = options(cases[k].f, cases[k].rk, cases[k].interp, FCL_SPLIT_STRANG,
                                        cases[k].cfl);
      o.max_segment = seg;
      fcl_topology *t = topology(MPI_COMM_WORLD, 3, n, fcl_advection_ghosts_needed(&o));
      if (!t) continue;
      shift_data s = {{2 * PI / 24, 2 * PI / 16, 2 * PI / 16}, {24, 16, 16}, 0, 1};
      fcl_field *u = field(e, t, "u", 3, FCL_FLOAT64, varied, NULL);
      fcl_advection_options two[2] = {o, o};
      two[0].strided = FCL_ADV_STRIDED_TILES;
      two[1].strided = FCL_ADV_STRIDED_WALK;
      double red[2];
      two_runs(e, t, u, two, 0.35 * cases[k].cfl, 2, &s, red);
      CHECKF(red[1] <= 1e-12 * red[0] && red[0] > 0.1,
             "%s RK%d %s, max_segment %lld: walking against tiles differ by %.3g (values up to "
             "%.3g)",
             fcl_remesh_formula_name(cases[k].f), cases[k].rk,
             cases[k].interp == FCL_INTERP_KERNEL ? "kernel" : "linear", (long long)seg, red[1],
             red[0]);
      fcl_field_destroy(&u);
      fcl_topology_destroy(&t);
    }
}

/* A reach too long for the walking kernels' windows or text (Lambda_{8,4}, RK4, kernel
 * interpolation, max_cfl 8: 25 particles a point) takes the tiles when walking is asked for. */
static void check_walk_fallback(env *e) {
  const int64_t n[3] = {32, 32, 32};
  fcl_advection_options o = options(FCL_REMESH_L8_4, 4, FCL_INTERP_KERNEL, FCL_SPLIT_FIRST_ORDER,
                                    8);
  fcl_topology *t = topology(MPI_COMM_WORLD, 3, n, fcl_advection_ghosts_needed(&o));
  if (!t) return;
  shift_data s = {{2 * PI / 32, 2 * PI / 32, 2 * PI / 32}, {32, 32, 32}, 0, 1};
  fcl_field *u = field(e, t, "u", 3, FCL_FLOAT64, unit_cells, &s),
            *q = field(e, t, "q", 2, FCL_FLOAT64, hashed, &s);
  o.strided = FCL_ADV_STRIDED_WALK;
  fcl_advection *adv = NULL;
  CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
  CHECK_OK(fcl_advection_step(adv, 1.0));
  s.shift = 1;
  for (int c = 0; c < 2; ++c) {
    const double err = rel_l2(q, c, hashed, &s);
    CHECKF(err < 1e-13, "long reach, walking asked: shift by one cell, comp %d: error %.3g", c,
           err);
  }
  fcl_advection_destroy(&adv);
  fcl_field_destroy(&u);
  fcl_field_destroy(&q);
  fcl_topology_destroy(&t);
}

/* ---------------- space convergence: shear flow ---------------- */

enum { SHEAR_STEPS = 6 };
static const double SHEAR_DT = 0.035;

static double shear_a(double y) { return 0.6 + 0.4 * sin(y); }
static double shear_b(double x) { return 0.5 * cos(x); }
static void shear_velocity(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = shear_a(x[1]);
  v[1] = shear_b(x[0]);
}
static void shear_q0(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = exp(sin(x[0]) + 0.5 * cos(x[1] + 0.3));
}
/* Strang X(h/2) Y(h) X(h/2), repeated: backtrack through the substeps. */
static void shear_exact(const double *x, const void *p, double *v) {
  (void)p;
  double X = x[0], Y = x[1], h = SHEAR_DT;
  for (int s = 0; s < SHEAR_STEPS; ++s) {
    X -= shear_a(Y) * h / 2;
    Y -= shear_b(X) * h;
    X -= shear_a(Y) * h / 2;
  }
  double y[2] = {X, Y};
  shear_q0(y, NULL, v);
}

static void check_space_order(env *e) {
  for (size_t fi = 0; fi < 5; ++fi) {
    const int64_t base = 32;
    double err[3];
    for (int r = 0; r < 3; ++r) {
      int64_t n[2] = {base << r, base << r};
      fcl_advection_options o = options(FORMULAS[fi], 2, FCL_INTERP_LINEAR, FCL_SPLIT_STRANG, 1);
      fcl_topology *t = topology(MPI_COMM_WORLD, 2, n, fcl_advection_ghosts_needed(&o));
      fcl_field *u = field(e, t, "u", 2, FCL_FLOAT64, shear_velocity, NULL);
      fcl_field *q = field(e, t, "q", 1, FCL_FLOAT64, shear_q0, NULL);
      fcl_advection *adv = NULL;
      CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
      for (int s = 0; s < SHEAR_STEPS && adv; ++s) CHECK_OK(fcl_advection_step(adv, SHEAR_DT));
      err[r] = adv ? rel_l2(q, 0, shear_exact, NULL) : NAN;
      fcl_advection_destroy(&adv);
      fcl_field_destroy(&u);
      fcl_field_destroy(&q);
      fcl_topology_destroy(&t);
    }
    for (int r = 0; r < 2; ++r) {
      double order = log2(err[r] / err[r + 1]);
      if (e->rank == 0)
        printf("  %s: N = %lld -> %lld, error %.3e -> %.3e, order %.2f\n",
               fcl_remesh_formula_name(FORMULAS[fi]), (long long)(base << r),
               (long long)(base << (r + 1)), err[r], err[r + 1], order);
      CHECKF(order >= ORDER[fi] - 0.3, "%s: order %.2f in space (N = %lld -> %lld), expected %d",
             fcl_remesh_formula_name(FORMULAS[fi]), order, (long long)(base << r),
             (long long)(base << (r + 1)), ORDER[fi]);
    }
  }
}

/* ---------------- splitting order: the same shear flow, unsplit ---------------- */

/* The exact solution of the unsplit problem over time *p: q0 at the foot of the characteristic
 * dX/dt = a(Y), dY/dt = b(X) (backward RK4 with 400 substeps: exact to 1e-13). Each directional
 * substep is exact in time (the velocity is constant along its lines), so the error of a run is
 * the splitting's, plus the space error of the remeshing. */
static void shear_unsplit(const double *x, const void *p, double *v) {
  const double T = *(const double *)p, h = -T / 400;
  double X = x[0], Y = x[1];
  for (int s = 0; s < 400; ++s) {
    const double x1 = shear_a(Y), y1 = shear_b(X);
    const double x2 = shear_a(Y + h / 2 * y1), y2 = shear_b(X + h / 2 * x1);
    const double x3 = shear_a(Y + h / 2 * y2), y3 = shear_b(X + h / 2 * x2);
    const double x4 = shear_a(Y + h * y3), y4 = shear_b(X + h * x3);
    X += h / 6 * (x1 + 2 * x2 + 2 * x3 + x4);
    Y += h / 6 * (y1 + 2 * y2 + 2 * y3 + y4);
  }
  double y[2] = {X, Y};
  shear_q0(y, NULL, v);
}

/* Strang and the alternating splitting at second order in dt, the first-order splitting at
 * first (which shows the case tells them apart): errors over 8, 16 and 32 steps to T. */
static void check_splitting_order(env *e) {
  const double T = 0.6;
  const fcl_splitting kinds[3] = {FCL_SPLIT_STRANG, FCL_SPLIT_ALTERNATING, FCL_SPLIT_FIRST_ORDER};
  const char *names[3] = {"strang", "alternating", "first order"};
  for (int k = 0; k < 3; ++k) {
    double err[3];
    for (int r = 0; r < 3; ++r) {
      const int steps = 8 << r;
      const int64_t n[2] = {96, 96};
      fcl_advection_options o = options(FCL_REMESH_L8_4, 2, FCL_INTERP_LINEAR, kinds[k], 2);
      fcl_topology *t = topology(MPI_COMM_WORLD, 2, n, fcl_advection_ghosts_needed(&o));
      fcl_field *u = field(e, t, "u", 2, FCL_FLOAT64, shear_velocity, NULL);
      fcl_field *q = field(e, t, "q", 1, FCL_FLOAT64, shear_q0, NULL);
      fcl_advection *adv = NULL;
      CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
      for (int s = 0; s < steps && adv; ++s) CHECK_OK(fcl_advection_step(adv, T / steps));
      err[r] = adv ? rel_l2(q, 0, shear_unsplit, &T) : NAN;
      fcl_advection_destroy(&adv);
      fcl_field_destroy(&u);
      fcl_field_destroy(&q);
      fcl_topology_destroy(&t);
    }
    for (int r = 0; r < 2; ++r) {
      const double order = log2(err[r] / err[r + 1]);
      if (e->rank == 0)
        printf("  %s splitting: %d -> %d steps, error %.3e -> %.3e, order %.2f\n", names[k], 8 << r,
               16 << r, err[r], err[r + 1], order);
      if (kinds[k] == FCL_SPLIT_FIRST_ORDER)
        CHECKF(order > 0.7 && order < 1.4, "first-order splitting: order %.2f (8 << %d steps)",
               order, r);
      else
        CHECKF(order >= 1.7, "%s splitting: order %.2f in dt (%d -> %d steps), expected 2",
               names[k], order, 8 << r, 16 << r);
    }
  }
}

/* ---------------- time convergence: compressive 1D flow ---------------- */

static double flow_f(double x) { return 0.8 + 0.5 * sin(x); }
static void flow_velocity(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = flow_f(x[0]);
  v[1] = 0;
}
static void flow_q0(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = 1 + 0.5 * cos(x[0]) + 0.2 * sin(x[1]);
}
/* Conservative transport by dx/dt = f(x) over time *p: q(x) = q0(X0) f(X0) / f(x), X0 the foot
 * of the characteristic through x (backward RK4 with 2000 substeps: exact to 1e-14). */
static void flow_exact(const double *x, const void *p, double *v) {
  const double T = *(const double *)p;
  const int m = 2000;
  double X = x[0], h = -T / m;
  for (int s = 0; s < m; ++s) {
    double k1 = flow_f(X), k2 = flow_f(X + h / 2 * k1), k3 = flow_f(X + h / 2 * k2),
           k4 = flow_f(X + h * k3);
    X += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
  double y[2] = {X, x[1]};
  flow_q0(y, NULL, v);
  v[0] *= flow_f(X) / flow_f(x[0]);
}

static void check_time_order(env *e) {
  const double T = 1.2;
  for (int rk = 2; rk <= 4; ++rk) {
    double err[2];
    for (int r = 0; r < 2; ++r) {
      const int steps = 12 << r;
      const int64_t n[2] = {128, 24};
      const int procs[2] = {e->size, 1};
      /* the kernel-order velocity interpolation keeps the space error below the time error;
       * max|u| dt / dx reaches 2.6 */
      fcl_advection_options o = options(FCL_REMESH_L8_4, rk, FCL_INTERP_KERNEL,
                                        FCL_SPLIT_FIRST_ORDER, 3);
      fcl_topology *t = topology_split(MPI_COMM_WORLD, 2, n, procs,
                                       fcl_advection_ghosts_needed(&o));
      fcl_field *u = field(e, t, "u", 2, FCL_FLOAT64, flow_velocity, NULL);
      fcl_field *q = field(e, t, "q", 1, FCL_FLOAT64, flow_q0, NULL);
      fcl_advection *adv = NULL;
      CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
      for (int s = 0; s < steps && adv; ++s) CHECK_OK(fcl_advection_direction(adv, 0, T / steps));
      err[r] = adv ? rel_l2(q, 0, flow_exact, &T) : NAN;
      fcl_advection_destroy(&adv);
      fcl_field_destroy(&u);
      fcl_field_destroy(&q);
      fcl_topology_destroy(&t);
    }
    double order = log2(err[0] / err[1]);
    if (e->rank == 0)
      printf("  RK%d: dt = %.3g -> %.3g, error %.3e -> %.3e, order %.2f\n", rk, T / 12, T / 24,
             err[0], err[1], order);
    CHECKF(order >= rk - 0.3, "RK%d: order %.2f in time, expected %d", rk, order, rk);
  }
}

/* ---------------- mass, rotation, ranks ---------------- */

static void taylor_green(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = sin(x[0]) * cos(x[1]) * cos(x[2]);
  v[1] = -cos(x[0]) * sin(x[1]) * cos(x[2]);
  v[2] = 0.3 * sin(x[2] + x[0]);
}
static void blobs(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = exp(-2 * (pow(sin((x[0] - 2) / 2), 2) + pow(sin((x[1] - 3) / 2), 2) +
                   pow(sin((x[2] - 1) / 2), 2)));
  v[1] = cos(x[0] + 2 * x[1]) * sin(x[2]) + 0.5;
}

static double total(fcl_field *f, int c) {
  double s;
  CHECK_OK(fcl_field_reduce(f, c, FCL_REDUCE_INTEGRAL, &s));
  return s;
}

static void check_mass(env *e, fcl_dtype dt) {
  const int64_t n[3] = {24, 20, 16};
  for (size_t fi = 0; fi < 5; ++fi) {
    fcl_advection_options o = options(FORMULAS[fi], 4, FCL_INTERP_LINEAR, FCL_SPLIT_STRANG, 2);
    fcl_topology *t = topology(MPI_COMM_WORLD, 3, n, fcl_advection_ghosts_needed(&o));
    fcl_field *u = field(e, t, "u", 3, dt, taylor_green, NULL);
    fcl_field *q = field(e, t, "q", 2, dt, blobs, NULL);
    double before[2] = {total(q, 0), total(q, 1)};
    fcl_advection *adv = NULL;
    CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
    for (int s = 0; s < 4 && adv; ++s) CHECK_OK(fcl_advection_step(adv, 0.4));
    for (int c = 0; c < 2; ++c) {
      /* every substep conserves the sum up to the rounding of sum_i W(i - x) = 1 (a few
       * epsilons times the largest coefficient, about 100 for Lambda_{6,4}): 20 substeps here */
      double after = total(q, c), tol = (dt == FCL_FLOAT64 ? 1e-13 : 3e-5) * fabs(before[c]);
      CHECKF(fabs(after - before[c]) <= tol, "%s %s: mass of comp %d went from %.17g to %.17g",
             fcl_remesh_formula_name(FORMULAS[fi]), fcl_dtype_cl_name(dt), c, before[c], after);
    }
    fcl_advection_destroy(&adv);
    fcl_field_destroy(&u);
    fcl_field_destroy(&q);
    fcl_topology_destroy(&t);
  }
}

/* Solid-body rotation about the box centre; the blob stays away from the box's edges. */
static void rotation(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = -(x[1] - PI);
  v[1] = x[0] - PI;
}
static void blob2(const double *x, const void *p, double *v) {
  (void)p;
  double r2 = (x[0] - PI - 1.2) * (x[0] - PI - 1.2) + (x[1] - PI) * (x[1] - PI);
  v[0] = exp(-r2 / (2 * 0.4 * 0.4));
}

static void check_rotation(env *e) {
  double err[2];
  for (int r = 0; r < 2; ++r) {
    const int64_t n[2] = {64 << r, 64 << r};
    const int steps = 256 << r; /* CFL pi dt / dx = 0.79 at the box's edges */
    fcl_advection_options o = options(FCL_REMESH_L4_2, 2, FCL_INTERP_LINEAR, FCL_SPLIT_STRANG, 1);
    fcl_topology *t = topology(MPI_COMM_WORLD, 2, n, fcl_advection_ghosts_needed(&o));
    fcl_field *u = field(e, t, "u", 2, FCL_FLOAT64, rotation, NULL);
    fcl_field *q = field(e, t, "q", 1, FCL_FLOAT64, blob2, NULL);
    fcl_advection *adv = NULL;
    CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
    for (int s = 0; s < steps && adv; ++s) CHECK_OK(fcl_advection_step(adv, 2 * PI / steps));
    err[r] = adv ? rel_l2(q, 0, blob2, NULL) : NAN;
    fcl_advection_destroy(&adv);
    fcl_field_destroy(&u);
    fcl_field_destroy(&q);
    fcl_topology_destroy(&t);
  }
  if (e->rank == 0)
    printf("  rotation: one turn, error %.3e (64^2), %.3e (128^2)\n", err[0], err[1]);
  /* second order in time (Strang, dt ~ dx), fourth in space: the error must fall by 4 */
  CHECKF(err[0] < 2e-2 && err[1] < err[0] / 4, "rotation: errors %.3g (64^2), %.3g (128^2)", err[0],
         err[1]);
}

/* ---------------- walls ---------------- */

/* x periodic [0, 2 pi) split over the ranks, y in [0, pi] between walls, ghosts on both axes; u
 * free-slip (u_y Dirichlet, u_x Neumann), q's components even then odd about the walls. */
static fcl_topology *walled_topology(int64_t nx, int64_t ny, int ghosts) {
  fcl_domain d = fcl_domain_periodic(2, nx, 2 * PI);
  d.resolution[1] = ny;
  d.length[1] = PI;
  d.bc[1][0] = d.bc[1][1] = FCL_BC_NEUMANN;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, (int[]){size, 1},
                               (int[]){size > 1 ? ghosts : 0, ghosts}, &t));
  return t;
}

static void free_slip(fcl_field *u) {
  CHECK_OK(fcl_field_set_component_bc(u, 1, 1, FCL_BC_DIRICHLET, FCL_BC_DIRICHLET));
}

/* The trapezoidal sum over y of component c (the wall points weigh half; x periodic): what the
 * mirrored remeshing conserves, the sum over the mirror image's period halved. */
static double trapezoid(fcl_field *f, int c) {
  fcl_topology *t = fcl_field_topology(f);
  const int64_t *n = fcl_topology_local_resolution(t);
  const int64_t ny = fcl_topology_domain(t)->resolution[1];
  double *v = read_comp(f, c), s = 0, all;
  for (int64_t j = 0; j < n[1]; ++j)
    for (int64_t i = 0; i < n[0]; ++i) s += v[j * n[0] + i] * (j == 0 || j == ny - 1 ? 0.5 : 1);
  free(v);
  MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

static void cellular(const double *x, const void *p, double *v) { /* psi = sin x sin y */
  (void)p;
  v[0] = sin(x[0]) * cos(x[1]);
  v[1] = -cos(x[0]) * sin(x[1]);
}
static void wall_blobs(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = exp(-((x[0] - 2) * (x[0] - 2) + x[1] * x[1]) / 0.3) + 0.2 * cos(2 * x[1]);
  v[1] = sin(x[1]) * (1 + 0.5 * cos(x[0]));
}

/* A flow into the walls along y, f = 0.5 sin y (0 on both walls), conservative: q = q0(Y0) dY0/dy
 * with tan(Y0 / 2) = tan(y / 2) exp(-T / 2) (closed form, finite on the walls). */
static void wall_flow(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = 0;
  v[1] = 0.5 * sin(x[1]);
}
static void wall_q0(const double *x, const void *p, double *v) {
  (void)p;
  v[0] = 1 + 0.5 * cos(x[1]) + 0.2 * sin(x[0]) * cos(2 * x[1]);
}
static void wall_exact(const double *x, const void *p, double *v) {
  const double g = exp(-*(const double *)p / 2), c = cos(x[1] / 2), s = sin(x[1] / 2);
  const double y0 = 2 * atan2(s * g, c), jac = g / (c * c + s * s * g * g);
  double y[2] = {x[0], y0};
  wall_q0(y, NULL, v);
  v[0] *= jac;
}

static void check_walls(env *e, fcl_dtype dt) {
  /* mass: a blob touching the lower wall in a cellular flow, every formula */
  for (size_t fi = 0; fi < 5; ++fi) {
    fcl_advection_options o = options(FORMULAS[fi], 4, FCL_INTERP_LINEAR, FCL_SPLIT_STRANG, 2);
    fcl_topology *t = walled_topology(64, 25, fcl_advection_ghosts_needed(&o));
    fcl_field *u = field(e, t, "u", 2, dt, cellular, NULL);
    fcl_field *q = field(e, t, "q", 2, dt, wall_blobs, NULL);
    free_slip(u);
    CHECK_OK(fcl_field_set_component_bc(q, 1, 1, FCL_BC_DIRICHLET, FCL_BC_DIRICHLET));
    const double before = trapezoid(q, 0);
    fcl_advection *adv = NULL;
    CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
    for (int st = 0; st < 6 && adv; ++st) CHECK_OK(fcl_advection_step(adv, 0.15));
    const double after = trapezoid(q, 0), tol = (dt == FCL_FLOAT64 ? 1e-13 : 3e-5) * before;
    CHECKF(fabs(after - before) <= tol,
           "walls, %s %s: the even scalar's mass went from %.17g to %.17g",
           fcl_remesh_formula_name(FORMULAS[fi]), fcl_dtype_cl_name(dt), before, after);
    fcl_advection_destroy(&adv);
    fcl_field_destroy(&u);
    fcl_field_destroy(&q);
    fcl_topology_destroy(&t);
  }
  if (dt != FCL_FLOAT64 || e->size > 1) return; /* a refinement study: one rank (see above) */
  /* order in space up to the walls: the flow into them, refined */
  const double T = 1.0;
  double err[3];
  for (int r = 0; r < 3; ++r) {
    fcl_advection_options o = options(FCL_REMESH_L4_2, 4, FCL_INTERP_KERNEL, FCL_SPLIT_FIRST_ORDER,
                                      2);
    fcl_topology *t = walled_topology(16, (16 << r) + 1, fcl_advection_ghosts_needed(&o));
    fcl_field *u = field(e, t, "u", 2, dt, wall_flow, NULL);
    fcl_field *q = field(e, t, "q", 1, dt, wall_q0, NULL);
    free_slip(u);
    fcl_advection *adv = NULL;
    CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
    /* 256 steps: with 16, a time error of 1.5e-4 (the same on the periodic mirror image, so
     * the scheme's, not the walls') hides the space order below 64 intervals */
    for (int st = 0; st < 256 && adv; ++st) CHECK_OK(fcl_advection_direction(adv, 1, T / 256));
    err[r] = adv ? rel_l2(q, 0, wall_exact, &T) : NAN;
    fcl_advection_destroy(&adv);
    fcl_field_destroy(&u);
    fcl_field_destroy(&q);
    fcl_topology_destroy(&t);
  }
  for (int r = 0; r < 2; ++r) {
    const double order = log2(err[r] / err[r + 1]);
    if (e->rank == 0)
      printf("  walls: %d -> %d intervals, error %.3e -> %.3e, order %.2f\n", 16 << r, 32 << r,
             err[r], err[r + 1], order);
    CHECKF(order >= 3.7, "walls: order %.2f in space (%d -> %d intervals), expected 4", order,
           16 << r, 32 << r);
  }
}

/* The ranks' blocks equal the same run on one rank holding the whole grid. */
static void check_ranks(env *e) {
  const int64_t n[3] = {24, 20, 16};
  fcl_advection_options o = options(FCL_REMESH_L4_2, 3, FCL_INTERP_KERNEL, FCL_SPLIT_STRANG, 2);
  const int g = fcl_advection_ghosts_needed(&o);
  fcl_topology *t[2] = {topology(MPI_COMM_WORLD, 3, n, g), topology(MPI_COMM_SELF, 3, n, 0)};
  fcl_field *q[3];
  for (int r = 0; r < 3; ++r) { /* the split run twice: the header promises the same bits */
    fcl_field *u = field(e, t[r % 2], "u", 3, FCL_FLOAT64, taylor_green, NULL);
    q[r] = field(e, t[r % 2], "q", 2, FCL_FLOAT64, blobs, NULL);
    fcl_advection *adv = NULL;
    CHECK_OK(fcl_advection_create(u, 1, &q[r], &o, &adv));
    for (int s = 0; s < 3 && adv; ++s) CHECK_OK(fcl_advection_step(adv, 0.5));
    fcl_advection_destroy(&adv);
    fcl_field_destroy(&u);
  }
  const int64_t *ln = fcl_topology_local_resolution(t[0]), *off = fcl_topology_offset(t[0]);
  for (int c = 0; c < 2; ++c) {
    if (!q[0] || !q[1] || !q[2]) break;
    double *part = read_comp(q[0], c), *whole = read_comp(q[1], c), *again = read_comp(q[2], c);
    double diff = 0;
    CHECKF(!memcmp(part, again, (size_t)(ln[0] * ln[1] * ln[2]) * sizeof *part),
           "rank %d: a repeated run of component %d is not bitwise the same", e->rank, c);
    free(again);
    size_t at = 0;
    for (int64_t k = 0; k < ln[2]; ++k)
      for (int64_t j = 0; j < ln[1]; ++j)
        for (int64_t i = 0; i < ln[0]; ++i, ++at)
          diff = fmax(
              diff, fabs(part[at] - whole[((k + off[2]) * n[1] + j + off[1]) * n[0] + i + off[0]]));
    CHECKF(diff < 1e-13, "rank %d (of %d): comp %d differs from the one-rank run by %.3g", e->rank,
           e->size, c, diff);
    free(part);
    free(whole);
  }
  fcl_field_destroy(&q[2]);
  for (int r = 0; r < 2; ++r) {
    fcl_field_destroy(&q[r]);
    fcl_topology_destroy(&t[r]);
  }
}

/* ---------------- errors ---------------- */

static void check_errors(env *e) {
  const int64_t n[3] = {16, 16, 16};
  fcl_advection_options o = fcl_advection_default_options();
  fcl_topology *t = topology(MPI_COMM_WORLD, 3, n, fcl_advection_ghosts_needed(&o));
  fcl_field *u = field(e, t, "u", 3, FCL_FLOAT32, taylor_green, NULL);
  fcl_field *q = field(e, t, "q", 1, FCL_FLOAT32, blobs, NULL);
  fcl_field *qd = field(e, t, "qd", 1, FCL_FLOAT64, NULL, NULL);
  fcl_advection *adv = NULL;
  CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
  double *before = read_comp(q, 0);
  /* max|u| = 1, dx = 2 pi / 16: dt = 0.5 moves 1.27 cells */
  CHECK_STATUS(fcl_advection_step(adv, 0.5), FCL_ERR_INVALID_ARGUMENT, "exceeds max_cfl");
  double *after = read_comp(q, 0);
  const int64_t *ln = fcl_topology_local_resolution(t);
  CHECKF(!memcmp(before, after, (size_t)(ln[0] * ln[1] * ln[2]) * sizeof(double)),
         "a refused step changed the field");
  free(before);
  free(after);
  CHECK_STATUS(fcl_advection_step(adv, NAN), FCL_ERR_INVALID_ARGUMENT, "dt");
  CHECK_STATUS(fcl_advection_direction(adv, 3, 0.1), FCL_ERR_INVALID_ARGUMENT, "axis");
  fcl_advection_destroy(&adv);
  fcl_advection *none = NULL;
  CHECK_STATUS(fcl_advection_create(u, 1, &qd, &o, &none), FCL_ERR_INVALID_ARGUMENT, "precision");
  CHECK_STATUS(fcl_advection_create(u, 1, &u, &o, &none), FCL_ERR_INVALID_ARGUMENT, "velocity");
  CHECK_STATUS(fcl_advection_create(q, 1, &u, &o, &none), FCL_ERR_INVALID_ARGUMENT, "components");
  fcl_advection_options bad = o;
  bad.rk_order = 5;
  CHECK_STATUS(fcl_advection_create(u, 1, &q, &bad, &none), FCL_ERR_INVALID_ARGUMENT, "rk_order");
  bad = o;
  bad.max_cfl = -1;
  CHECK_STATUS(fcl_advection_create(u, 1, &q, &bad, &none), FCL_ERR_INVALID_ARGUMENT, "max_cfl");
  bad = o;
  bad.max_segment = -1;
  CHECK_STATUS(fcl_advection_create(u, 1, &q, &bad, &none), FCL_ERR_INVALID_ARGUMENT,
               "max_segment");
  bad = o;
  bad.strided = (fcl_adv_strided)7;
  CHECK_STATUS(fcl_advection_create(u, 1, &q, &bad, &none), FCL_ERR_INVALID_ARGUMENT, "strided");
  { /* a wrong FLOWCL_ADVECTION_STRIDED, the caller's value put back */
    const char *was = getenv("FLOWCL_ADVECTION_STRIDED");
    char *saved = was ? strdup(was) : NULL;
    setenv("FLOWCL_ADVECTION_STRIDED", "diagonal", 1);
    CHECK_STATUS(fcl_advection_create(u, 1, &q, &o, &none), FCL_ERR_INVALID_ARGUMENT,
                 "FLOWCL_ADVECTION_STRIDED");
    if (saved)
      setenv("FLOWCL_ADVECTION_STRIDED", saved, 1);
    else
      unsetenv("FLOWCL_ADVECTION_STRIDED");
    free(saved);
  }
  fcl_remesh_formula f;
  CHECK_OK(fcl_remesh_formula_parse("m4'", &f));
  CHECK(f == FCL_REMESH_L2_1);
  CHECK_OK(fcl_remesh_formula_parse("Lambda_6,4", &f));
  CHECK(f == FCL_REMESH_L6_4);
  CHECK_STATUS(fcl_remesh_formula_parse("L3_1", &f), FCL_ERR_INVALID_ARGUMENT, "L8_4");
  CHECK(none == NULL);
  fcl_field_destroy(&u);
  fcl_field_destroy(&q);
  fcl_field_destroy(&qd);
  fcl_topology_destroy(&t);
  if (e->size > 1) { /* a split axis without ghosts */
    fcl_topology *t0 = topology(MPI_COMM_WORLD, 3, n, 1);
    fcl_field *u0 = field(e, t0, "u", 3, FCL_FLOAT32, taylor_green, NULL);
    fcl_field *q0 = field(e, t0, "q", 1, FCL_FLOAT32, blobs, NULL);
    CHECK_STATUS(fcl_advection_create(u0, 1, &q0, &o, &none), FCL_ERR_INVALID_ARGUMENT, "ghosts");
    fcl_field_destroy(&u0);
    fcl_field_destroy(&q0);
    fcl_topology_destroy(&t0);
  }
  fcl_domain wall = fcl_domain_periodic(2, 16, 1.0);
  wall.bc[1][0] = wall.bc[1][1] = FCL_BC_NEUMANN;
  fcl_topology *tw = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &wall, NULL, NULL, &tw));
  fcl_field *uw = field(e, tw, "u", 2, FCL_FLOAT32, NULL, NULL),
            *qw = field(e, tw, "q", 1, FCL_FLOAT32, NULL, NULL);
  CHECK_STATUS(fcl_advection_create(uw, 1, &qw, &o, &none), FCL_ERR_INVALID_ARGUMENT,
               "component 1 of the velocity 'u' is Neumann at the lower wall of axis 1");
  CHECK_OK(fcl_field_set_component_bc(uw, 1, 1, FCL_BC_DIRICHLET, FCL_BC_DIRICHLET));
  CHECK_STATUS(fcl_advection_create(uw, 1, &qw, &o, &none), FCL_ERR_INVALID_ARGUMENT,
               e->size > 1 ? "is split over ranks and needs" : "axis 1 has walls and needs");
  fcl_field_destroy(&uw);
  fcl_field_destroy(&qw);
  fcl_topology_destroy(&tw);
  /* a condition changed after creation: the next step refuses it */
  const int g = fcl_advection_ghosts_needed(&o), gw[3] = {g, g, 0};
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &wall, NULL, gw, &tw));
  uw = field(e, tw, "u", 2, FCL_FLOAT32, NULL, NULL);
  qw = field(e, tw, "q", 1, FCL_FLOAT32, NULL, NULL);
  fcl_advection *walled = NULL;
  CHECK_OK(fcl_field_set_component_bc(uw, 1, 1, FCL_BC_DIRICHLET, FCL_BC_DIRICHLET));
  CHECK_OK(fcl_advection_create(uw, 1, &qw, &o, &walled));
  CHECK_OK(fcl_advection_step(walled, 1e-3));
  CHECK_OK(fcl_field_set_component_bc(uw, 1, 1, FCL_BC_NEUMANN, FCL_BC_NEUMANN));
  CHECK_STATUS(fcl_advection_step(walled, 1e-3), FCL_ERR_INVALID_ARGUMENT,
               "component 1 of the velocity 'u' is Neumann at the lower wall of axis 1");
  fcl_advection_destroy(&walled);
  fcl_field_destroy(&uw);
  fcl_field_destroy(&qw);
  fcl_topology_destroy(&tw);
}

/* The CFL check's modes: one host wait per step (it was one per velocity component), none with
 * a stated bound, none when deferred while the device keeps up, which reports a bad step
 * cfl_lag steps later (tests/operators/test_cfl_checks_mpi.c checks when, in detail). */
static void check_cfl_modes(env *e) {
  const int64_t n[3] = {16, 16, 16};
  fcl_advection_options o = fcl_advection_default_options();
  fcl_topology *t = topology(MPI_COMM_WORLD, 3, n, fcl_advection_ghosts_needed(&o));
  fcl_field *u = field(e, t, "u", 3, FCL_FLOAT32, taylor_green, NULL);
  fcl_field *q = field(e, t, "q", 1, FCL_FLOAT32, blobs, NULL);
  fcl_queue *queue = fcl_field_queue(q);
  const fcl_cfl_check modes[] = {FCL_CFL_CHECK_NOW, FCL_CFL_CHECK_BOUND, FCL_CFL_CHECK_DEFERRED};
  const uint64_t most[] = {1, 0, 0};
  for (int m = 0; m < 3; ++m) {
    o.cfl_check = modes[m];
    o.velocity_bound = 1; /* max|u| = 1 */
    fcl_advection *adv = NULL;
    CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
    if (!adv) continue;
    /* dx = 2 pi / 16: dt = 0.1 moves 0.25 cells, dt = 0.5 moves 1.27 */
    const uint64_t s0 = fcl_count_host_syncs();
    CHECK_OK(fcl_advection_step(adv, 0.1));
    const uint64_t syncs = fcl_count_host_syncs() - s0;
    /* on one rank nothing else waits (more ranks wait for their ghost exchanges) */
    CHECKF(e->size > 1 || syncs <= most[m],
           "CFL check mode %d: %llu host waits in a step (at "
           "most %llu)",
           m, (unsigned long long)syncs, (unsigned long long)most[m]);
    CHECK_OK(fcl_queue_finish(queue));
    if (modes[m] != FCL_CFL_CHECK_DEFERRED) {
      CHECK_STATUS(fcl_advection_step(adv, 0.5), FCL_ERR_INVALID_ARGUMENT, "exceeds max_cfl");
    } else {
      CHECK_OK(fcl_advection_step(adv, 0.5)); /* step 1, checked cfl_lag = 2 steps later */
      CHECK_OK(fcl_queue_finish(queue));
      CHECK_OK(fcl_advection_step(adv, 0.1)); /* checks step 0 */
      CHECK_STATUS(fcl_advection_step(adv, 0.1), FCL_ERR_INVALID_ARGUMENT,
                   "advection, step 1 (deferred check, at step 3)");
    }
    fcl_advection_destroy(&adv);
  }
  fcl_advection *none = NULL;
  o.cfl_check = FCL_CFL_CHECK_BOUND;
  o.velocity_bound = 0;
  CHECK_STATUS(fcl_advection_create(u, 1, &q, &o, &none), FCL_ERR_INVALID_ARGUMENT,
               "velocity_bound");
  fcl_field_destroy(&u);
  fcl_field_destroy(&q);
  fcl_topology_destroy(&t);
}

static void run(env *e) {
  check_tables();
  check_shift(e, FCL_FLOAT32, 0, FCL_ADV_STRIDED_TILES);
  check_shift(e, FCL_FLOAT32, 4, FCL_ADV_STRIDED_TILES);
  check_shift(e, FCL_FLOAT32, 0, FCL_ADV_STRIDED_WALK);
  check_shift(e, FCL_FLOAT32, 4, FCL_ADV_STRIDED_WALK);
  check_mass(e, FCL_FLOAT32);
  check_walls(e, FCL_FLOAT32);
  check_errors(e);
  check_cfl_modes(e);
  if (e->fp64) {
    check_shift(e, FCL_FLOAT64, 0, FCL_ADV_STRIDED_AUTO);
    check_shift(e, FCL_FLOAT64, 4, FCL_ADV_STRIDED_AUTO);
    check_segments(e);
    check_walk(e);
    if (e->size == 1) check_walk_fallback(e);
    check_mass(e, FCL_FLOAT64);
    check_walls(e, FCL_FLOAT64);
    check_time_order(e);
    check_ranks(e);
    if (e->size == 1) {
      check_space_order(e);
      check_splitting_order(e);
      check_rotation(e);
    }
  } else {
    fcl_test_skip_part(NULL, "the double-precision cases (no cl_khr_fp64)");
  }
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
