/* Distributed fields on 1, 2 or 4 ranks (run under mpirun): ghost values equal the owner's
 * interior exactly (every axis, edge and corner; periodic, Dirichlet and Neumann walls; uneven
 * splits; slabs and blocks), accumulation adds exactly what a direct mapping of every ghost to
 * its owner predicts, transposes and redistributions are exact permutations, reductions equal a
 * serial computation over the global grid. The exchanges across ranks (ghosts, accumulation,
 * redistribution) run on each transport (FLOWCL_TRANSPORT mpi, staged, and device where the
 * devices link). Expected values are
 * computed here from the documented rules (splitting, mirroring), independently of the library's
 * plans. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fcl_test_mpi.h"

#define PI 3.14159265358979323846

static int rank_, size_;
static const char *transport_ = "auto"; /* FLOWCL_TRANSPORT of the exchanges */

/* A value unique to a global point, exact in float for the grids used (< 2^24). */
static double code(const int64_t *g) { return (double)(g[0] + 40 * g[1] + 1600 * g[2]); }

/* Where a possibly out-of-range coordinate lands: wrap (periodic) or mirror about the wall
 * point, with the sign of the condition. */
static int64_t land(const fcl_domain *d, int a, int64_t u, double *sign) {
  int64_t n = d->resolution[a];
  if (a >= d->dim) return u;
  if (d->bc[a][0] == FCL_BC_PERIODIC) return ((u % n) + n) % n;
  if (u < 0) {
    if (d->bc[a][0] == FCL_BC_DIRICHLET) *sign = -*sign;
    return -u;
  }
  if (u >= n) {
    if (d->bc[a][1] == FCL_BC_DIRICHLET) *sign = -*sign;
    return 2 * (n - 1) - u;
  }
  return u;
}

typedef fcl_test_mpi_env env;

static void init_code(void *user, const double *x, double *v) {
  const fcl_domain *d = user; /* x back to the global index */
  int64_t g[3] = {0, 0, 0};
  for (int a = 0; a < d->dim; ++a) g[a] = llround((x[a] - d->origin[a]) / fcl_domain_spacing(d, a));
  v[0] = code(g);
  v[1] = -code(g);
  v[2] = 0.5 * code(g);
}

static double at(const void *host, fcl_dtype t, size_t i) {
  return t == FCL_FLOAT64 ? ((const double *)host)[i] : ((const float *)host)[i];
}

static fcl_field *make_field(env *e, fcl_topology *t, const char *name, int ncomp, fcl_dtype dt) {
  fcl_field *f = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, name, ncomp, dt, &f));
  return f;
}

/* Whether the device transport runs here (every rank's device links, each its own: CUDA
 * devices with NCCL); where not, a field asking for it by name fails with
 * FCL_ERR_NOT_SUPPORTED on every rank. */
static bool device_transport(env *e) {
  fcl_domain d = fcl_domain_periodic(3, 8, 1.0);
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, (int[]){1, 1, size_}, (int[]){1, 1, 1}, &t));
  if (!t) return false;
  setenv("FLOWCL_TRANSPORT", "device", 1);
  fcl_field *f = NULL;
  fcl_status st = fcl_field_create(t, e->ctx, e->q, e->pool, "probe", 1, FCL_FLOAT32, &f);
  char why[256];
  snprintf(why, sizeof why, "the device transport (%s)", fcl_last_error());
  unsetenv("FLOWCL_TRANSPORT");
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
  if (size_ > 1 && st == FCL_ERR_NOT_SUPPORTED) { /* skipped where the devices could link */
    int could = fcl_link_supported(fcl_context_device(e->ctx, 0)) == FCL_OK, any = 0;
    MPI_Allreduce(&could, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) fcl_test_skip_part(NULL, why);
    fcl_clear_error();
    return false;
  }
  CHECK_OK(st);
  return st == FCL_OK && size_ > 1;
}

/* ---------------- ghosts ---------------- */

/* The conditions of a free-slip velocity (fcl_field_set_component_bc): component c Dirichlet
 * on both walls of axis c, Neumann on those of the other bounded axes. */
static fcl_domain free_slip_domain(fcl_domain d, int c) {
  for (int a = 0; a < d.dim; ++a)
    if (d.bc[a][0] != FCL_BC_PERIODIC)
      d.bc[a][0] = d.bc[a][1] = a == c ? FCL_BC_DIRICHLET : FCL_BC_NEUMANN;
  return d;
}

static void set_free_slip(fcl_field *f, const fcl_domain *d) {
  for (int c = 0; c < fcl_field_ncomp(f); ++c) {
    fcl_domain dc = free_slip_domain(*d, c);
    for (int a = 0; a < d->dim; ++a)
      if (d->bc[a][0] != FCL_BC_PERIODIC)
        CHECK_OK(fcl_field_set_component_bc(f, c, a, dc.bc[a][0], dc.bc[a][1]));
  }
}

/* free_slip: the components' own conditions (set_free_slip) instead of the domain's. */
static void ghost_case(env *e, const char *label, fcl_domain d, const int *procs, const int *gw,
                       fcl_dtype dt, bool free_slip) {
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, procs, gw, &t));
  if (!t) return;
  fcl_field *f = make_field(e, t, label, 3, dt);
  if (!f) {
    fcl_topology_destroy(&t);
    return;
  }
  CHECK_OK(fcl_field_init(f, init_code, &d));
  if (free_slip) { /* after a first exchange: the plans are made again */
    CHECK_OK(fcl_field_ghosts_begin(f));
    CHECK_OK(fcl_field_ghosts_end(f));
    set_free_slip(f, &d);
    CHECK_OK(fcl_field_init(f, init_code, &d));
  }
  CHECK_OK(fcl_field_ghosts_begin(f));
  CHECK_OK(fcl_field_ghosts_end(f));
  const size_t *p = fcl_field_padded_shape(f);
  const int64_t *off = fcl_topology_offset(t);
  const int *g = fcl_topology_ghosts(t), *o = fcl_topology_origin(t);
  size_t total = p[0] * p[1] * p[2];
  void *host = malloc(total * fcl_dtype_size(dt));
  size_t wrong = 0, first = SIZE_MAX;
  double got0 = 0, want0 = 0;
  for (int c = 0; c < 3; ++c) {
    CHECK_OK(fcl_field_read(f, c, true, host));
    double scale = c == 0 ? 1 : c == 1 ? -1 : 0.5;
    const fcl_domain dc = free_slip ? free_slip_domain(d, c) : d;
    for (size_t k = 0; k < p[2]; ++k)
      for (size_t j = 0; j < p[1]; ++j)
        for (size_t i = 0; i < p[0]; ++i) {
          size_t l[3] = {i, j, k}, idx = (k * p[1] + j) * p[0] + i;
          int64_t gl[3], ll[3];
          double sign = 1;
          bool pad = false; /* beyond the ghosts (rows aligned): holds nothing */
          for (int a = 0; a < 3; ++a) {
            ll[a] = (int64_t)l[a] - o[a];
            pad = pad || ll[a] < -g[a] || ll[a] >= fcl_topology_local_resolution(t)[a] + g[a];
          }
          if (pad) continue;
          for (int a = 0; a < 3; ++a) gl[a] = land(&dc, a, off[a] + ll[a], &sign);
          double want = sign * scale * code(gl), got = at(host, dt, idx);
          if (got != want && wrong++ == 0) first = idx, got0 = got, want0 = want;
        }
  }
  CHECKF(!wrong,
         "%s (%s, %s transport, rank %d of %d, procs %dx%dx%d): %zu wrong ghost/interior values; "
         "first at padded index %zu: %g, expected %g",
         label, fcl_dtype_cl_name(dt), transport_, rank_, size_, fcl_topology_procs(t)[0],
         fcl_topology_procs(t)[1], fcl_topology_procs(t)[2], wrong, first, got0, want0);
  free(host);
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
}

/* ---------------- accumulation ---------------- */

/* The part of n points owned by coordinate c of p (the documented split). */
static void part(int64_t n, int p, int c, int64_t *count, int64_t *offset) {
  *count = n / p + (c < n % p ? 1 : 0);
  *offset = c * (n / p) + (c < n % p ? c : n % p);
}

static double contribution(const int64_t *u) {
  return 1 + (double)(((u[0] + 7) + 3 * (u[1] + 7) + 5 * (u[2] + 7)) % 11);
}

static void accumulate_case(env *e, const char *label, fcl_domain d, const int *gw, fcl_dtype dt) {
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, gw, &t));
  if (!t) return;
  fcl_field *f = make_field(e, t, label, 1, dt);
  const size_t *p = fcl_field_padded_shape(f);
  const int64_t *off = fcl_topology_offset(t), *n = fcl_topology_local_resolution(t);
  const int *g = fcl_topology_ghosts(t), *org = fcl_topology_origin(t),
            *procs = fcl_topology_procs(t);
  size_t total = p[0] * p[1] * p[2], item = fcl_dtype_size(dt);
  void *host = malloc(total * item);
  /* every padded point (ghosts included) holds the contribution of its unwrapped position */
  for (size_t k = 0; k < p[2]; ++k)
    for (size_t j = 0; j < p[1]; ++j)
      for (size_t i = 0; i < p[0]; ++i) {
        size_t l[3] = {i, j, k}, idx = (k * p[1] + j) * p[0] + i;
        int64_t u[3];
        for (int a = 0; a < 3; ++a) u[a] = off[a] + (int64_t)l[a] - org[a];
        double v = contribution(u);
        if (dt == FCL_FLOAT64)
          ((double *)host)[idx] = v;
        else
          ((float *)host)[idx] = (float)v;
      }
  CHECK_OK(fcl_field_write(f, 0, true, host));
  CHECK_OK(fcl_field_ghosts_accumulate(f));
  /* expected: over every rank's padded box, each point added (with the mirror sign) to where
   * it lands, restricted to this rank's interior */
  double *want = calloc((size_t)(n[0] * n[1] * n[2]), sizeof *want);
  for (int cz = 0; cz < procs[2]; ++cz)
    for (int cy = 0; cy < procs[1]; ++cy)
      for (int cx = 0; cx < procs[0]; ++cx) {
        int cc[3] = {cx, cy, cz};
        int64_t cnt[3], o[3];
        for (int a = 0; a < 3; ++a) part(d.resolution[a], procs[a], cc[a], &cnt[a], &o[a]);
        for (int64_t k = -g[2]; k < cnt[2] + g[2]; ++k)
          for (int64_t j = -g[1]; j < cnt[1] + g[1]; ++j)
            for (int64_t i = -g[0]; i < cnt[0] + g[0]; ++i) {
              int64_t u[3] = {o[0] + i, o[1] + j, o[2] + k}, G[3];
              double sign = 1;
              for (int a = 0; a < 3; ++a) G[a] = land(&d, a, u[a], &sign);
              int64_t L[3] = {G[0] - off[0], G[1] - off[1], G[2] - off[2]};
              if (L[0] < 0 || L[0] >= n[0] || L[1] < 0 || L[1] >= n[1] || L[2] < 0 || L[2] >= n[2])
                continue;
              want[(L[2] * n[1] + L[1]) * n[0] + L[0]] += sign * contribution(u);
            }
      }
  void *interior = malloc((size_t)(n[0] * n[1] * n[2]) * item);
  CHECK_OK(fcl_field_read(f, 0, false, interior));
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < (size_t)(n[0] * n[1] * n[2]); ++i)
    if (at(interior, dt, i) != want[i] && wrong++ == 0) first = i;
  CHECKF(!wrong,
         "%s (%s, %s transport, rank %d of %d): %zu accumulated values wrong; first at %zu: %g, "
         "expected %g",
         label, fcl_dtype_cl_name(dt), transport_, rank_, size_, wrong, first,
         wrong ? at(interior, dt, first) : 0, wrong ? want[first] : 0);
  free(interior);
  free(want);
  free(host);
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
}

/* ---------------- reductions ---------------- */

static void init_trig(void *user, const double *x, double *v) {
  (void)user;
  v[0] = sin(x[0]) * cos(2 * x[1]) + 0.25 * cos(x[2]) + 1.5;
}

static void reduce_case(env *e, fcl_dtype dt) {
  fcl_domain d = fcl_domain_periodic(3, 12, 2 * PI);
  d.resolution[0] = 14; /* uneven on 4 ranks */
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, (int[]){1, 1, 1}, &t));
  fcl_field *f = make_field(e, t, "trig", 1, dt);
  CHECK_OK(fcl_field_init(f, init_trig, NULL));
  /* serial reference over the global grid, from the values as stored (rounded to dt) */
  double mn = INFINITY, mx = -INFINITY, ab = 0, sum = 0, sq = 0, vol = 1;
  for (int a = 0; a < 3; ++a) vol *= fcl_domain_spacing(&d, a);
  for (int64_t k = 0; k < d.resolution[2]; ++k)
    for (int64_t j = 0; j < d.resolution[1]; ++j)
      for (int64_t i = 0; i < d.resolution[0]; ++i) {
        double x[3] = {i * fcl_domain_spacing(&d, 0), j * fcl_domain_spacing(&d, 1),
                       k * fcl_domain_spacing(&d, 2)},
               v;
        init_trig(NULL, x, &v);
        if (dt == FCL_FLOAT32) v = (float)v;
        mn = fmin(mn, v), mx = fmax(mx, v), ab = fmax(ab, fabs(v)), sum += v, sq += v * v;
      }
  struct {
    fcl_reduce_op op;
    double want;
    const char *name;
  } cases[] = {{FCL_REDUCE_MIN, mn, "min"},
               {FCL_REDUCE_MAX, mx, "max"},
               {FCL_REDUCE_NORM_LINF, ab, "linf"},
               {FCL_REDUCE_SUM, sum, "sum"},
               {FCL_REDUCE_NORM_L2, sqrt(sq * vol), "l2"},
               {FCL_REDUCE_INTEGRAL, sum * vol, "integral"}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
    double got = NAN;
    CHECK_OK(fcl_field_reduce(f, 0, cases[c].op, &got));
    /* summation order differs from the serial loop: a few double roundings per term */
    bool exact = cases[c].op <= FCL_REDUCE_MAX || cases[c].op == FCL_REDUCE_NORM_LINF;
    CHECKF(exact ? got == cases[c].want : fcl_test_close(got, cases[c].want, 1e4, 0, false),
           "reduce %s (%s, %d ranks): %.17g, serial %.17g", cases[c].name, fcl_dtype_cl_name(dt),
           size_, got, cases[c].want);
  }
  /* the same field from a generated kernel: equal to the host initialisation up to the
   * device's sin/cos accuracy (a few ulps) */
  fcl_field *g = make_field(e, t, "trig_expr", 1, dt);
  CHECK_OK(fcl_field_init_expr(g, 0, "sin(x) * cos(2 * y) + 0.25 * cos(z) + 1.5"));
  const int64_t *ln = fcl_topology_local_resolution(t);
  size_t count = (size_t)(ln[0] * ln[1] * ln[2]), bad = 0, item = fcl_dtype_size(dt);
  void *hv = malloc(count * item), *dv = malloc(count * item);
  CHECK_OK(fcl_field_read(f, 0, false, hv));
  CHECK_OK(fcl_field_read(g, 0, false, dv));
  for (size_t i = 0; i < count; ++i)
    if (!fcl_test_close(at(dv, dt, i), at(hv, dt, i), 16, 0, dt == FCL_FLOAT32)) bad++;
  CHECKF(!bad, "init_expr (%s): %zu of %zu values differ from the host initialisation",
         fcl_dtype_cl_name(dt), bad, count);
  CHECK_STATUS(fcl_field_init_expr(g, 0, "sin(x) +* 2"), FCL_ERR_INVALID_ARGUMENT, NULL);
  free(hv);
  free(dv);
  fcl_field_destroy(&g);
  /* the discrete integral of a trigonometric field on a periodic grid is exact: 1.5 (2 pi)^3 */
  double integral = 0;
  CHECK_OK(fcl_field_reduce(f, 0, FCL_REDUCE_INTEGRAL, &integral));
  CHECKF(fcl_test_close(integral, 1.5 * pow(2 * PI, 3), dt == FCL_FLOAT64 ? 1e3 : 1e2, 0,
                        dt == FCL_FLOAT32),
         "integral %.10g, analytic %.10g", integral, 1.5 * pow(2 * PI, 3));
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
}

/* A reduction of every component at once equals fcl_field_reduce of each, with one host wait
 * for all of them (fcl_field_reduce waits once per component). */
static void init_three(void *user, const double *x, double *v) {
  (void)user;
  v[0] = sin(x[0]) + 2, v[1] = -3 * cos(x[1]) * sin(x[2]), v[2] = 0.5 * x[0] - x[2];
}

static void reduction_case(env *e, fcl_dtype dt) {
  fcl_domain d = fcl_domain_periodic(3, 10, 2 * PI);
  d.resolution[1] = 13;
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, (int[]){1, 1, 1}, &t));
  fcl_field *f = make_field(e, t, "three", 3, dt);
  CHECK_OK(fcl_field_init(f, init_three, NULL));
  const fcl_reduce_op ops[] = {FCL_REDUCE_NORM_LINF, FCL_REDUCE_SUM, FCL_REDUCE_MIN};
  for (int o = 0; o < 3; ++o) {
    fcl_reduction *r = NULL;
    CHECK_OK(fcl_reduction_create(f, ops[o], &r));
    double each[3], all[3] = {NAN, NAN, NAN};
    uint64_t s0 = fcl_count_host_syncs();
    for (int c = 0; c < 3; ++c) CHECK_OK(fcl_field_reduce(f, c, ops[o], &each[c]));
    uint64_t s1 = fcl_count_host_syncs();
    CHECK_OK(fcl_reduction_start(r));
    CHECK(fcl_reduction_in_flight(r));
    CHECK_OK(fcl_reduction_finish(r, all));
    uint64_t s2 = fcl_count_host_syncs();
    CHECK(!fcl_reduction_in_flight(r));
    for (int c = 0; c < 3; ++c)
      CHECKF(all[c] == each[c],
             "reduction %d of component %d (%s): %.17g, fcl_field_reduce "
             "%.17g",
             (int)ops[o], c, fcl_dtype_cl_name(dt), all[c], each[c]);
    CHECKF(s2 - s1 <= 1,
           "a reduction of 3 components waited %llu times (one wait expected; "
           "fcl_field_reduce waited %llu times)",
           (unsigned long long)(s2 - s1), (unsigned long long)(s1 - s0));
    /* once the device is done, finishing does not wait */
    CHECK_OK(fcl_reduction_start(r));
    CHECK_STATUS(fcl_reduction_start(r), FCL_ERR_INVALID_STATE, "already in flight");
    CHECK_OK(fcl_queue_finish(fcl_field_queue(f)));
    CHECK(fcl_reduction_done(r));
    uint64_t s3 = fcl_count_host_syncs();
    CHECK_OK(fcl_reduction_finish(r, all));
    CHECKF(fcl_count_host_syncs() == s3, "finishing a reduction the device had done waited");
    CHECK_STATUS(fcl_reduction_finish(r, all), FCL_ERR_INVALID_STATE, "no reduction in flight");
    fcl_reduction_destroy(&r);
  }
  CHECK_STATUS(fcl_reduction_create(f, (fcl_reduce_op)42, &(fcl_reduction *){NULL}),
               FCL_ERR_INVALID_ARGUMENT, "unknown reduction");
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
}

/* An expression object: values equal the formula for every parameter value set, into any field
 * of the layout, and no program is built after its creation. */
static double expr_host(const double *x, double t, double amp, double period) {
  return amp * sin(x[0]) * cos(x[1] + x[2]) + cos(PI * t / period);
}

static void expr_case(env *e, fcl_dtype dt) {
  fcl_domain d = fcl_domain_periodic(3, 12, 2 * PI);
  d.resolution[0] = 14;
  d.resolution[2] = 70; /* z planes walked by work-items (32 or more per rank), a partial last */
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, (int[]){1, 1, 1}, &t));
  fcl_field *f = make_field(e, t, "expr_a", 1, dt), *g = make_field(e, t, "expr_b", 2, dt);
  const char *params[] = {"amp", "period"};
  fcl_field_expr *x = NULL;
  const uint64_t p0 = fcl_count_programs_built();
  CHECK_OK(fcl_field_expr_create(f,
                                 "amp * sin(x) * cos(y + z) + cos(3.14159265358979323846 * "
                                 "t / period)",
                                 2, params, &x));
  const uint64_t p1 = fcl_count_programs_built();
  CHECKF(p1 - p0 == 1, "creating an expression built %llu programs", (unsigned long long)(p1 - p0));
  const int64_t *ln = fcl_topology_local_resolution(t), *off = fcl_topology_offset(t);
  size_t count = (size_t)(ln[0] * ln[1] * ln[2]), item = fcl_dtype_size(dt);
  void *v = malloc(count * item);
  const double cases[][3] = {{0, 1, 2}, {0.3, -2, 2}, {1.7, 0.5, 0.75}}; /* t, amp, period */
  for (int c = 0; c < 3; ++c) {
    CHECK_OK(fcl_field_expr_set(x, "t", cases[c][0]));
    CHECK_OK(fcl_field_expr_set(x, "amp", cases[c][1]));
    CHECK_OK(fcl_field_expr_set(x, "period", cases[c][2]));
    fcl_field *into = c == 2 ? g : f;
    const int comp = c == 2 ? 1 : 0;
    CHECK_OK(fcl_field_expr_eval(x, into, comp));
    CHECK_OK(fcl_field_read(into, comp, false, v));
    size_t bad = 0, n = 0;
    for (int64_t k = 0; k < ln[2]; ++k)
      for (int64_t j = 0; j < ln[1]; ++j)
        for (int64_t i = 0; i < ln[0]; ++i, ++n) {
          double xc[3] = {(double)(i + off[0]) * fcl_domain_spacing(&d, 0),
                          (double)(j + off[1]) * fcl_domain_spacing(&d, 1),
                          (double)(k + off[2]) * fcl_domain_spacing(&d, 2)};
          double want = expr_host(xc, cases[c][0], cases[c][1], cases[c][2]);
          /* float: the coordinates and parameters are rounded to float first */
          double tol = dt == FCL_FLOAT32 ? 2e-5 * (fabs(cases[c][1]) + 1) : 1e-13;
          if (!fcl_test_close(at(v, dt, n), want, 0, tol, dt == FCL_FLOAT32)) bad++;
        }
    CHECKF(!bad, "expression (%s) at t = %g: %zu of %zu values differ from the formula",
           fcl_dtype_cl_name(dt), cases[c][0], bad, count);
  }
  CHECKF(fcl_count_programs_built() == p1,
         "evaluating an expression with new parameters built "
         "%llu programs",
         (unsigned long long)(fcl_count_programs_built() - p1));
  CHECK_STATUS(fcl_field_expr_set(x, "omega", 1), FCL_ERR_NOT_FOUND, "t, amp, period");
  CHECK_STATUS(fcl_field_expr_create(f, "x", 1, (const char *[]){"x"}, &(fcl_field_expr *){NULL}),
               FCL_ERR_INVALID_ARGUMENT, "taken");
  CHECK_STATUS(
      fcl_field_expr_create(f, "a", 2, (const char *[]){"a", "a"}, &(fcl_field_expr *){NULL}),
      FCL_ERR_INVALID_ARGUMENT, "twice");
  CHECK_STATUS(fcl_field_expr_create(f, "sin(x) +* 2", 0, NULL, &(fcl_field_expr *){NULL}),
               FCL_ERR_INVALID_ARGUMENT, NULL);
  /* unknown names: refused with the expression, the name and the parameters (not the generated
   * kernel's text), the kernel's own names i, j, k, u included; built-ins pass */
  static const struct {
    const char *expression, *message;
  } unknown[] = {
      {"sin(amp * x) + b", "expression 'sin(amp * x) + b': unknown name 'b' (parameters: amp, "
                           "period; coordinates x, y, z; time t)"},
      {"amp * x + i", "unknown name 'i' (parameters: amp, period;"},
      {"u[0, 0, 0] + x", "unknown name 'u' (parameters: amp, period;"},
      {"amp * besselj(x)", "unknown function 'besselj' (not an OpenCL C built-in; parameters: amp, "
                           "period;"}};
  for (size_t u = 0; u < sizeof unknown / sizeof *unknown; ++u) {
    CHECK_STATUS(
        fcl_field_expr_create(f, unknown[u].expression, 2, params, &(fcl_field_expr *){NULL}),
        FCL_ERR_INVALID_ARGUMENT, unknown[u].message);
    CHECKF(!fcl_test_contains(fcl_last_error(), "kernel '"),
           "the error quotes the generated kernel: %s", fcl_last_error());
  }
  CHECK_STATUS(fcl_field_init_expr(g, 0, "sin(q * x)"), FCL_ERR_INVALID_ARGUMENT,
               "field 'expr_b': expression 'sin(q * x)': unknown name 'q' (parameters: none;");
  fcl_field_expr *builtins = NULL;
  CHECK_OK(fcl_field_expr_create(f, "M_PI_F * amp * rsqrt(x + 1) + (y < 0 ? INFINITY : z)", 2,
                                 params, &builtins));
  fcl_field_expr_destroy(&builtins);
  fcl_domain d2 = d;
  d2.resolution[0] = 9;
  fcl_topology *t2 = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d2, NULL, (int[]){1, 1, 1}, &t2));
  fcl_field *h = make_field(e, t2, "expr_other", 1, dt);
  CHECK_STATUS(fcl_field_expr_eval(x, h, 0), FCL_ERR_INVALID_ARGUMENT, "layout");
  fcl_field_destroy(&h);
  fcl_topology_destroy(&t2);
  fcl_field_expr_destroy(&x);
  free(v);
  fcl_field_destroy(&g);
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
}

/* ---------------- transposes and redistribution ---------------- */

static void transpose_case(env *e, fcl_dtype dt, const int *perm) {
  fcl_domain d = fcl_domain_periodic(3, 0, 1.0), dp = d;
  int64_t res[3] = {19, 13, 7};
  for (int a = 0; a < 3; ++a) d.resolution[a] = res[a], dp.resolution[a] = res[perm[a]];
  fcl_topology *ts = NULL, *td = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_SELF, &d, NULL, (int[]){1, 2, 1}, &ts));
  CHECK_OK(fcl_topology_create(MPI_COMM_SELF, &dp, NULL, (int[]){2, 0, 1}, &td));
  fcl_field *src = make_field(e, ts, "src", 1, dt), *dst = make_field(e, td, "dst", 1, dt);
  CHECK_OK(fcl_field_init(src, init_code, &d));
  CHECK_OK(fcl_field_transpose(src, 0, perm, dst, 0));
  size_t count = (size_t)(res[0] * res[1] * res[2]), wrong = 0;
  void *host = malloc(count * fcl_dtype_size(dt));
  CHECK_OK(fcl_field_read(dst, 0, false, host));
  for (int64_t k = 0; k < dp.resolution[2]; ++k)
    for (int64_t j = 0; j < dp.resolution[1]; ++j)
      for (int64_t i = 0; i < dp.resolution[0]; ++i) {
        int64_t q[3] = {i, j, k}, s[3];
        for (int a = 0; a < 3; ++a) s[perm[a]] = q[a];
        if (at(host, dt, (size_t)((k * dp.resolution[1] + j) * dp.resolution[0] + i)) != code(s))
          wrong++;
      }
  CHECKF(!wrong, "transpose perm (%d %d %d), %s: %zu wrong values", perm[0], perm[1], perm[2],
         fcl_dtype_cl_name(dt), wrong);
  free(host);
  fcl_field_destroy(&src);
  fcl_field_destroy(&dst);
  fcl_topology_destroy(&ts);
  fcl_topology_destroy(&td);
}

static void redistribute_case(env *e, fcl_dtype dt) {
  fcl_domain d = fcl_domain_periodic(3, 0, 1.0);
  d.resolution[0] = 11, d.resolution[1] = 9, d.resolution[2] = 10;
  fcl_topology *blocks = NULL, *slabs = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, (int[]){1, 1, 1}, &blocks));
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, (int[]){1, 1, size_}, NULL, &slabs));
  fcl_field *a = make_field(e, blocks, "blocks", 1, dt), *b = make_field(e, slabs, "slabs", 1, dt);
  fcl_field *c = make_field(e, blocks, "back", 1, dt);
  CHECK_OK(fcl_field_init(a, init_code, &d));
  CHECK_OK(fcl_field_redistribute(a, 0, b, 0));
  CHECK_OK(fcl_field_redistribute(b, 0, c, 0));
  const fcl_field *check[2] = {b, c};
  for (int w = 0; w < 2; ++w) {
    const fcl_topology *t = fcl_field_topology(check[w]);
    const int64_t *n = fcl_topology_local_resolution(t), *o = fcl_topology_offset(t);
    size_t count = (size_t)(n[0] * n[1] * n[2]), wrong = 0;
    void *host = malloc(count * fcl_dtype_size(dt));
    CHECK_OK(fcl_field_read(check[w], 0, false, host));
    for (int64_t k = 0; k < n[2]; ++k)
      for (int64_t j = 0; j < n[1]; ++j)
        for (int64_t i = 0; i < n[0]; ++i) {
          int64_t g[3] = {o[0] + i, o[1] + j, o[2] + k};
          if (at(host, dt, (size_t)((k * n[1] + j) * n[0] + i)) != code(g)) wrong++;
        }
    CHECKF(!wrong, "redistribute to %s (%s, %s transport, rank %d of %d): %zu wrong values",
           w ? "blocks again" : "slabs", fcl_dtype_cl_name(dt), transport_, rank_, size_, wrong);
    free(host);
  }
  fcl_field_destroy(&a);
  fcl_field_destroy(&b);
  fcl_field_destroy(&c);
  fcl_topology_destroy(&blocks);
  fcl_topology_destroy(&slabs);
}

/* ---------------- index conversion ---------------- */

/* Every global point has one owner; a rank's own points name it, and the points owned add up
 * to the grid over all ranks. */
static void ownership(void) {
  fcl_domain d = fcl_domain_periodic(3, 0, 1.0);
  d.resolution[0] = 7, d.resolution[1] = 10, d.resolution[2] = 13;
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t));
  if (!t) return;
  const int64_t *n = fcl_topology_local_resolution(t), *o = fcl_topology_offset(t);
  long mine = 0, wrong = 0;
  for (int64_t k = 0; k < d.resolution[2]; ++k)
    for (int64_t j = 0; j < d.resolution[1]; ++j)
      for (int64_t i = 0; i < d.resolution[0]; ++i) {
        int64_t g[3] = {i, j, k};
        bool inside = true;
        for (int a = 0; a < 3; ++a) {
          int64_t l = g[a] - o[a];
          inside = inside && l >= 0 && l < n[a] && fcl_topology_global_index(t, a, l) == g[a];
        }
        int owner = fcl_topology_owner(t, g);
        if (inside) mine++;
        if (inside != (owner == rank_)) wrong++;
      }
  long total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECKF(!wrong && total == 7 * 10 * 13,
         "ownership (rank %d of %d): %ld points disagree, %ld "
         "owned in all",
         rank_, size_, wrong, total);
  fcl_topology_destroy(&t);
}

/* ---------------- bad input ---------------- */

static void errors(env *e) {
  fcl_domain d = fcl_domain_periodic(3, 8, 1.0);
  fcl_topology *t = NULL;
  d.bc[1][0] = FCL_BC_DIRICHLET;
  CHECK_STATUS(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t), FCL_ERR_INVALID_ARGUMENT,
               "axis y is periodic on one face only");
  d = fcl_domain_periodic(3, 8, 1.0);
  d.length[2] = -1;
  CHECK_STATUS(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t), FCL_ERR_INVALID_ARGUMENT,
               "axis z: length -1");
  d = fcl_domain_periodic(3, 8, 1.0);
  CHECK_STATUS(fcl_topology_create(MPI_COMM_WORLD, &d, (int[]){3, 0, 0}, NULL, &t),
               FCL_ERR_INVALID_ARGUMENT, size_ % 3 ? "does not fit" : NULL);
  CHECK_STATUS(fcl_topology_create(MPI_COMM_WORLD, &d, (int[]){size_, 1, 1}, (int[]){9, 0, 0}, &t),
               FCL_ERR_INVALID_ARGUMENT, "fewer than 9 (the ghost width)");
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t));
  /* one device per rank: a GPU when there is one (node-local rank modulo their number) */
  fcl_device_entry *all = NULL, mine;
  size_t ndev = 0, gpus = 0;
  CHECK_OK(fcl_device_list(&all, &ndev));
  for (size_t i = 0; i < ndev; ++i) {
    fcl_device_info info;
    if (fcl_device_get_info(all[i].device, &info) == FCL_OK && (info.type & FCL_DEVICE_GPU)) gpus++;
  }
  free(all);
  /* before any topology: the same choice */
  fcl_device_entry early;
  CHECK_OK(fcl_comm_select_device(MPI_COMM_WORLD, NULL, &early));
  CHECK_OK(fcl_topology_select_device(t, NULL, &mine));
  CHECK(early.device == mine.device);
  fcl_device_info mi;
  CHECK_OK(fcl_device_get_info(mine.device, &mi));
  CHECKF(gpus ? (mi.type & FCL_DEVICE_GPU) != 0 : (mi.type & FCL_DEVICE_CPU) != 0,
         "rank %d was given %s with %zu GPU(s) present", rank_, mi.name, gpus);
  /* FLOWCL_DEVICE is the default spec (it was ignored here once) */
  const char *was = getenv("FLOWCL_DEVICE");
  char *saved = was ? strdup(was) : NULL;
  setenv("FLOWCL_DEVICE", "no-such-device-xyz", 1);
  CHECK_STATUS(fcl_topology_select_device(t, NULL, &mine), FCL_ERR_NOT_FOUND, "no-such-device-xyz");
  CHECK_STATUS(fcl_comm_select_device(MPI_COMM_WORLD, NULL, &mine), FCL_ERR_NOT_FOUND,
               "no-such-device-xyz");
  if (saved)
    setenv("FLOWCL_DEVICE", saved, 1);
  else
    unsetenv("FLOWCL_DEVICE");
  free(saved);
  fcl_field *f = NULL;
  CHECK_STATUS(fcl_field_create(t, e->ctx, e->q, e->pool, "u", 4, FCL_FLOAT32, &f),
               FCL_ERR_INVALID_ARGUMENT, "ncomp");
  CHECK_STATUS(fcl_field_create(t, e->ctx, e->q, e->pool, "u", 1, FCL_INT32, &f),
               FCL_ERR_INVALID_ARGUMENT, "dtype");
  f = make_field(e, t, "u", 1, FCL_FLOAT32);
  double r;
  CHECK_STATUS(fcl_field_reduce(f, 1, FCL_REDUCE_SUM, &r), FCL_ERR_INVALID_ARGUMENT,
               "1 is not a component of field 'u' (components 0 to 0)");
  CHECK_STATUS(fcl_field_transpose(f, 0, (int[]){0, 0, 1}, f, 0), FCL_ERR_INVALID_ARGUMENT,
               "not a permutation");
  CHECK_STATUS(fcl_field_set_component_bc(f, 0, 0, FCL_BC_NEUMANN, FCL_BC_NEUMANN),
               FCL_ERR_INVALID_ARGUMENT, "periodic along axis 0");
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
  /* component conditions: walls only, between exchanges; swaps keep them together */
  d = fcl_domain_periodic(3, 8, 1.0);
  d.bc[2][0] = d.bc[2][1] = FCL_BC_DIRICHLET;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, (int[]){1, 1, 1}, &t));
  f = make_field(e, t, "v", 3, FCL_FLOAT32);
  fcl_field *g = make_field(e, t, "v_prev", 3, FCL_FLOAT32);
  CHECK_STATUS(fcl_field_set_component_bc(f, 1, 2, FCL_BC_PERIODIC, FCL_BC_NEUMANN),
               FCL_ERR_INVALID_ARGUMENT, "argument 4 (lower): FCL_BC_PERIODIC");
  CHECK_STATUS(fcl_field_set_component_bc(f, 3, 2, FCL_BC_NEUMANN, FCL_BC_NEUMANN),
               FCL_ERR_INVALID_ARGUMENT, "comp");
  CHECK_OK(fcl_field_set_component_bc(f, 1, 2, FCL_BC_NEUMANN, FCL_BC_NEUMANN));
  CHECK(fcl_field_component_bc(f, 1, 2, 1) == FCL_BC_NEUMANN);
  CHECK(fcl_field_component_bc(f, 0, 2, 0) == FCL_BC_DIRICHLET);
  CHECK_STATUS(fcl_field_swap(f, g), FCL_ERR_INVALID_ARGUMENT, "wall conditions differ");
  CHECK_OK(fcl_field_ghosts_begin(f));
  CHECK_STATUS(fcl_field_set_component_bc(f, 0, 2, FCL_BC_NEUMANN, FCL_BC_NEUMANN),
               FCL_ERR_INVALID_STATE, "in flight");
  CHECK_OK(fcl_field_ghosts_end(f));
  CHECK(fcl_field_component_bc(f, 0, 2, 0) == FCL_BC_DIRICHLET);
  fcl_field_destroy(&f);
  fcl_field_destroy(&g);
  fcl_topology_destroy(&t);
}

static void run_all(env *e) {
  rank_ = e->rank, size_ = e->size;
  fcl_dtype types[2] = {FCL_FLOAT32, FCL_FLOAT64};
  if (!e->fp64) fcl_test_skip_part(NULL, "the double-precision cases (no cl_khr_fp64)");
  for (int ti = 0; ti < (e->fp64 ? 2 : 1); ++ti) {
    fcl_dtype dt = types[ti];
    fcl_domain d = fcl_domain_periodic(3, 0, 1.0);
    d.resolution[0] = 13, d.resolution[1] = 11, d.resolution[2] = 9;
    static const char *const transports[] = {"mpi", "staged", "device"};
    const int ntr = device_transport(e) ? 3 : 2;
    for (int tr = 0; tr < ntr; ++tr) { /* read when a field (its exchange plans) is made */
      transport_ = transports[tr];
      setenv("FLOWCL_TRANSPORT", transport_, 1);
      ghost_case(e, "periodic blocks", d, NULL, (int[]){2, 2, 2}, dt, false);
      ghost_case(e, "periodic slabs along x", d, (int[]){size_, 1, 1}, (int[]){2, 1, 1}, dt, false);
      fcl_domain w = d;
      w.bc[1][0] = w.bc[1][1] = FCL_BC_DIRICHLET;
      w.bc[2][0] = w.bc[2][1] = FCL_BC_NEUMANN;
      w.bc[0][0] = FCL_BC_NEUMANN, w.bc[0][1] = FCL_BC_DIRICHLET;
      ghost_case(e, "walls", w, NULL, (int[]){1, 2, 1}, dt, false);
      ghost_case(e, "walls in pencils", w, (int[]){1, 0, 0}, (int[]){2, 1, 2}, dt, false);
      ghost_case(e, "free-slip walls", w, NULL, (int[]){2, 1, 2}, dt, true);
      fcl_domain d2 = fcl_domain_periodic(2, 0, 1.0);
      d2.resolution[0] = 10, d2.resolution[1] = 15;
      d2.bc[1][0] = d2.bc[1][1] = FCL_BC_NEUMANN;
      ghost_case(e, "2D", d2, NULL, (int[]){2, 3}, dt, false);
      fcl_domain d1 = fcl_domain_periodic(1, 23, 1.0);
      ghost_case(e, "1D periodic", d1, NULL, (int[]){3}, dt, false);
      d1.bc[0][0] = FCL_BC_DIRICHLET, d1.bc[0][1] = FCL_BC_NEUMANN;
      ghost_case(e, "1D walls", d1, NULL, (int[]){2}, dt, false);
      accumulate_case(e, "accumulate 1D walls", d1, (int[]){2}, dt);
      accumulate_case(e, "accumulate periodic", d, (int[]){2, 1, 2}, dt);
      accumulate_case(e, "accumulate walls", w, (int[]){1, 2, 1}, dt);
      redistribute_case(e, dt);
    }
    unsetenv("FLOWCL_TRANSPORT");
    transport_ = "auto";
    reduce_case(e, dt);
    reduction_case(e, dt);
    expr_case(e, dt);
    static const int perms[][3] = {{1, 0, 2}, {2, 1, 0}, {0, 2, 1}, {1, 2, 0}};
    for (int p = 0; p < 4; ++p) transpose_case(e, dt, perms[p]);
  }
  ownership();
  errors(e);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run_all); }
