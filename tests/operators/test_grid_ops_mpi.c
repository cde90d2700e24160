/* Grid operators on 1, 2 or 4 ranks against exact solutions:
 *   - gradient, divergence and gradient norm of trigonometric fields converge at the order of
 *     their differences (2, 4);
 *   - custom kernels: a pointwise kernel and a stencil kernel equal the same formulas evaluated
 *     on the host from the analytic field (to rounding); what they read and write is found
 *     from their text; bad subscripts and reaches beyond the ghosts are errors;
 *   - penalization: every point equals the implicit formula; inside the mask the velocity is
 *     the solid's to 1 / (1 + lambda dt), outside it is untouched;
 *   - analytics of the Taylor-Green vortex: energy 1/8 and enstrophy 3/8 (exact for
 *     trigonometric data on the periodic grid), max|u_d| and max|w| equal the maxima over the
 *     grid points, max|grad u| within the differences' error, divergence at rounding level. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "one_pass.h" /* operators/analytics: the one-pass kernel of GPUs */
#include "op_fields.h"

typedef fcl_test_mpi_env env;

static void grad_u1_exact(const double *x, double *v, const void *p) {
  (void)p;
  double g[3][3];
  op_vel3_gradient(x, g);
  for (int a = 0; a < 3; ++a) v[a] = g[1][a];
}
static void div_exact(const double *x, double *v, const void *p) {
  (void)p;
  double g[3][3];
  op_vel3_gradient(x, g);
  v[0] = g[0][0] + g[1][1] + g[2][2];
}
static void grad_norm_exact(const double *x, double *v, const void *p) {
  (void)p;
  double g[3][3], s = 0;
  op_vel3_gradient(x, g);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) s += g[i][j] * g[i][j];
  v[0] = sqrt(s);
}

typedef enum { GRADIENT, DIVERGENCE, GRAD_NORM } derivative_kind;

static void check_derivative(env *e, derivative_kind kind, int order) {
  static const char *const names[] = {"gradient", "divergence", "gradient norm"};
  static const exact_fn exact[] = {grad_u1_exact, div_exact, grad_norm_exact};
  double err[2];
  for (int r = 0; r < 2; ++r) {
    fcl_topology *t = op_box(3, 16 << r, order / 2);
    fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT64, op_vel3);
    fcl_field *s = op_field(e, t, "s", kind == GRADIENT ? 3 : 1, FCL_FLOAT64, NULL);
    fcl_fd *op = NULL;
    if (kind == GRADIENT)
      CHECK_OK(fcl_fd_gradient_create(u, 1, s, order, &op));
    else if (kind == DIVERGENCE)
      CHECK_OK(fcl_fd_divergence_create(u, s, order, &op));
    else
      CHECK_OK(fcl_fd_gradient_norm_create(u, s, order, &op));
    if (op) CHECK_OK(fcl_fd_apply(op, 0));
    err[r] = op ? op_rel_error(s, exact[kind], NULL) : NAN;
    if (r == 0 && kind == GRADIENT) {
      fcl_fd *bad = NULL;
      CHECK_STATUS(fcl_fd_gradient_create(u, 3, s, order, &bad), FCL_ERR_INVALID_ARGUMENT, "comp");
      CHECK_STATUS(fcl_fd_gradient_create(u, 0, u, order, &bad), FCL_ERR_INVALID_ARGUMENT, "same");
      CHECK_STATUS(fcl_fd_divergence_create(u, u, order, &bad), FCL_ERR_INVALID_ARGUMENT, "same");
      CHECK_STATUS(fcl_fd_divergence_create(s, u, order, &bad), FCL_ERR_INVALID_ARGUMENT, "scalar");
    }
    fcl_fd_destroy(&op);
    fcl_field_destroy(&u);
    fcl_field_destroy(&s);
    fcl_topology_destroy(&t);
  }
  const double rate = log2(err[0] / err[1]);
  CHECKF(rate >= order - 0.3, "%s order %d: errors %.3g -> %.3g, rate %.2f", names[kind], order,
         err[0], err[1], rate);
}

/* ---------------- custom kernels ---------------- */

static double n16_dx(void) { return 2 * PI / 16; }
static void scal(const double *x, double *v) { v[0] = sin(x[0]) + cos(2 * x[1]) * sin(x[2]); }
static void scal_b(const double *x, double *v) { v[0] = 0.5 + cos(x[0] - x[2]); }
/* a * b + dt with dt = 0.25 */
static void pointwise_exact(const double *x, double *v, const void *p) {
  (void)p;
  double a, b;
  scal(x, &a);
  scal_b(x, &b);
  v[0] = a * b + 0.25;
}
/* a(x + dx) - a(x - dx) + a(y - 2 dy) */
static void stencil_exact(const double *x, double *v, const void *p) {
  (void)p;
  const double h = n16_dx();
  double xp[3] = {x[0] + h, x[1], x[2]}, xm[3] = {x[0] - h, x[1], x[2]},
         ym[3] = {x[0], x[1] - 2 * h, x[2]}, a, b, c;
  scal(xp, &a);
  scal(xm, &b);
  scal(ym, &c);
  v[0] = a - b + c;
}

static bool uses(const fcl_operator *op, const fcl_field *f, bool read, bool written, int g) {
  for (int u = 0; u < op->nuses; ++u)
    if (op->uses[u].field == f)
      return op->uses[u].read == read && op->uses[u].written == written && op->uses[u].ghosts == g;
  return false;
}

static void check_custom(env *e) {
  fcl_topology *t = op_box(3, 16, 2);
  fcl_field *a = op_field(e, t, "a", 1, FCL_FLOAT64, scal);
  fcl_field *b = op_field(e, t, "b", 1, FCL_FLOAT64, scal_b);
  fcl_field *s = op_field(e, t, "s", 1, FCL_FLOAT64, NULL);
  fcl_fd *op = NULL;
  fcl_operator d;
  fcl_fd_binding pb[3] = {{"a", a, 0, 0}, {"bb", b, 0, 0}, {"s", s, 0, 0}};
  CHECK_OK(fcl_fd_kernel_create("custom.pointwise", 3, pb,
                                "s[k, j, i] = a[k, j, i] * bb[k,j,i] + dt", 24, &op));
  if (op) {
    CHECK_OK(fcl_fd_apply(op, 0.25));
    const double err = op_rel_error(s, pointwise_exact, NULL);
    CHECKF(err <= 1e-14, "pointwise custom kernel: error %.3g", err);
    CHECK_OK(fcl_fd_operator(op, &d));
    CHECK(uses(&d, a, true, false, 0) && uses(&d, b, true, false, 0) &&
          uses(&d, s, false, true, 0));
    CHECK(!strcmp(d.name, "custom.pointwise"));
  }
  fcl_fd_destroy(&op);
  fcl_fd_binding sb[2] = {{"a", a, 0, 2}, {"s", s, 0, 0}};
  CHECK_OK(fcl_fd_kernel_create(
      "stencil", 2, sb, "s[k, j, i] = a[k, j, i + 1] - a[k, j, i-1] + a[k, j - 2, i]", 16, &op));
  if (op) {
    CHECK_OK(fcl_fd_apply(op, 0));
    const double err = op_rel_error(s, stencil_exact, NULL);
    CHECKF(err <= 1e-14, "stencil custom kernel: error %.3g", err);
    CHECK_OK(fcl_fd_operator(op, &d));
    CHECK(uses(&d, a, true, false, 2) && uses(&d, s, false, true, 0));
  }
  fcl_fd_destroy(&op);
  /* in place: read and written */
  fcl_fd_binding ib[1] = {{"s", s, 0, 0}};
  CHECK_OK(fcl_fd_kernel_create("scale", 1, ib, "s[k, j, i] = 2 * s[k, j, i]", 16, &op));
  if (op) {
    CHECK_OK(fcl_fd_operator(op, &d));
    CHECK(uses(&d, s, true, true, 0));
  }
  fcl_fd_destroy(&op);
  /* errors */
  CHECK_STATUS(fcl_fd_kernel_create("x", 2, sb, "s[k, j, i] = a[k, j, i + 3]", 8, &op),
               FCL_ERR_INVALID_ARGUMENT, "beyond the 2 ghosts");
  CHECK_STATUS(fcl_fd_kernel_create("x", 2, sb, "s[k, j, i] = a[j, k, i]", 8, &op),
               FCL_ERR_INVALID_ARGUMENT, "integer offsets");
  CHECK_STATUS(fcl_fd_kernel_create("x", 2, sb, "s[k, j, i] = a[k, j, 2 * i]", 8, &op),
               FCL_ERR_INVALID_ARGUMENT, "integer offsets");
  CHECK_STATUS(fcl_fd_kernel_create("x", 2, sb, "s[k, j, i] = q + a[k, j, i]", 8, &op),
               FCL_ERR_INVALID_ARGUMENT, "'q'");
  CHECK_STATUS(fcl_fd_kernel_create("x", 1, sb, "<double> z = a[k, j, i]", 8, &op),
               FCL_ERR_INVALID_ARGUMENT, "writes none");
  fcl_fd_binding gb[2] = {{"a", a, 0, 3}, {"s", s, 0, 0}};
  CHECK_STATUS(fcl_fd_kernel_create("x", 2, gb, "s[k, j, i] = a[k, j, i]", 8, &op),
               FCL_ERR_INVALID_ARGUMENT, "reads 3 ghosts");
  fcl_fd_binding db[2] = {{"a", a, 0, 0}, {"a", s, 0, 0}};
  CHECK_STATUS(fcl_fd_kernel_create("x", 2, db, "a[k, j, i] = 1", 8, &op), FCL_ERR_INVALID_ARGUMENT,
               "used twice");
  CHECK(op == NULL);
  fcl_field_destroy(&a);
  fcl_field_destroy(&b);
  fcl_field_destroy(&s);
  fcl_topology_destroy(&t);
}

/* ---------------- penalization ---------------- */

/* 1 in a ball of radius 1 around (pi, pi, pi), 0.5 in the shell out to 1.5, 0 outside. */
static void ball(const double *x, double *v) {
  const double r = sqrt(pow(x[0] - PI, 2) + pow(x[1] - PI, 2) + pow(x[2] - PI, 2));
  v[0] = r < 1 ? 1 : r < 1.5 ? 0.5 : 0;
}

typedef struct {
  double lambda_dt, us[3];
} pen_data;

static void penalized(const double *x, double *v, const void *p) {
  const pen_data *d = p;
  double chi;
  op_vel3(x, v);
  ball(x, &chi);
  for (int c = 0; c < 3; ++c)
    v[c] = (v[c] + d->lambda_dt * chi * d->us[c]) / (1 + d->lambda_dt * chi);
}

static void solid(const double *x, double *v, const void *p) {
  const pen_data *d = p;
  double chi;
  op_vel3(x, v);
  ball(x, &chi);
  if (chi == 1)
    for (int c = 0; c < 3; ++c) v[c] = d->us[c];
}

static void check_penalization(env *e, fcl_dtype dtype) {
  fcl_topology *t = op_box(3, 16, 0);
  fcl_field *u = op_field(e, t, "u", 3, dtype, op_vel3);
  fcl_field *chi = op_field(e, t, "chi", 1, dtype, ball);
  const double lambda = 1e8, dt = 0.01;
  pen_data d = {lambda * dt, {0.25, -0.5, 1}};
  fcl_fd *op = NULL;
  CHECK_OK(fcl_penalization_create(u, chi, d.us, lambda, &op));
  if (op) {
    CHECK_OK(fcl_fd_apply(op, dt));
    const double tol = dtype == FCL_FLOAT64 ? 1e-15 : 4e-7;
    double err = op_rel_error(u, penalized, &d);
    CHECKF(err <= tol, "penalization (%s): %.3g from the implicit formula",
           fcl_dtype_cl_name(dtype), err);
    /* inside the solid: u_s to 1 / (1 + lambda dt); outside: untouched; the shell between */
    err = op_rel_error(u, solid, &d);
    CHECK(err > 0.01); /* the shell (chi = 1/2) is neither */
  }
  fcl_fd *bad = NULL;
  CHECK_STATUS(fcl_penalization_create(u, chi, NULL, 0, &bad), FCL_ERR_INVALID_ARGUMENT, "lambda");
  CHECK_STATUS(fcl_penalization_create(u, u, NULL, 1, &bad), FCL_ERR_INVALID_ARGUMENT, "mask");
  fcl_fd_destroy(&op);
  fcl_field_destroy(&u);
  fcl_field_destroy(&chi);
  fcl_topology_destroy(&t);
}

/* Inside the ball only (chi = 1 everywhere it is set): u is the solid's velocity. */
static void ball_only(const double *x, double *v) {
  double chi;
  ball(x, &chi);
  v[0] = chi == 1 ? 1 : 0;
}

static void check_penalization_inside(env *e) {
  fcl_topology *t = op_box(3, 16, 0);
  fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT32, op_vel3);
  fcl_field *chi = op_field(e, t, "chi", 1, FCL_FLOAT32, ball_only);
  pen_data d = {1e6 * 0.1, {0.25, -0.5, 1}};
  fcl_fd *op = NULL;
  CHECK_OK(fcl_penalization_create(u, chi, d.us, 1e6, &op));
  if (op) {
    CHECK_OK(fcl_fd_apply(op, 0.1));
    const double err = op_rel_error(u, solid, &d);
    CHECKF(err <= 2e-5, "penalization: inside the mask u = u_s, outside untouched: %.3g", err);
  }
  fcl_fd_destroy(&op);
  fcl_field_destroy(&u);
  fcl_field_destroy(&chi);
  fcl_topology_destroy(&t);
}

/* ---------------- penalization of the vorticity ---------------- */

static void tgv_u(const double *x, double *v);
static void tgv_w(const double *x, double *v);

/* max |a - b| / max |b| over every component and rank */
static double field_distance(fcl_field *a, fcl_field *b) {
  const int64_t *n = fcl_topology_local_resolution(fcl_field_topology(a));
  const size_t count = (size_t)(n[0] * n[1] * n[2]);
  double *x = malloc(count * sizeof *x), *y = malloc(count * sizeof *y), l[2] = {0, 0}, g[2];
  for (int c = 0; c < fcl_field_ncomp(a); ++c) {
    CHECK_OK(fcl_field_read(a, c, false, x));
    CHECK_OK(fcl_field_read(b, c, false, y));
    for (size_t i = 0; i < count; ++i) {
      l[0] = fmax(l[0], fabs(x[i] - y[i]));
      l[1] = fmax(l[1], fabs(y[i]));
    }
  }
  free(x);
  free(y);
  MPI_Allreduce(l, g, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return g[0] / g[1];
}

/* w + curl(u_new - u) against the same built from the velocity penalization, a custom kernel
 * for the change and the curl operator. */
static void check_penalization_vorticity(env *e) {
  fcl_topology *t = op_box(3, 16, 2);
  fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT64, tgv_u);
  fcl_field *w = op_field(e, t, "w", 3, FCL_FLOAT64, tgv_w);
  fcl_field *chi = op_field(e, t, "chi", 1, FCL_FLOAT64, ball);
  fcl_field *u2 = op_field(e, t, "u2", 3, FCL_FLOAT64, tgv_u);
  fcl_field *u0 = op_field(e, t, "u0", 3, FCL_FLOAT64, tgv_u);
  fcl_field *du = op_field(e, t, "du", 3, FCL_FLOAT64, NULL);
  fcl_field *cw = op_field(e, t, "cw", 3, FCL_FLOAT64, NULL);
  fcl_field *w2 = op_field(e, t, "w2", 3, FCL_FLOAT64, tgv_w);
  const double us[3] = {0.5, 0, -0.25}, lambda = 50, dt = 0.1;
  fcl_fd *op = NULL, *pen = NULL, *change = NULL, *curl = NULL, *add = NULL;
  CHECK_OK(fcl_penalization_vorticity_create(u, w, chi, us, lambda, e->pool, &op));
  CHECK_OK(fcl_penalization_create(u2, chi, us, lambda, &pen));
  fcl_fd_binding cb[9];
  for (int c = 0; c < 3; ++c) {
    static const char *const n[3][3] = {{"a0", "b0", "d0"}, {"a1", "b1", "d1"}, {"a2", "b2", "d2"}};
    cb[3 * c] = (fcl_fd_binding){n[c][0], u2, c, 0};
    cb[3 * c + 1] = (fcl_fd_binding){n[c][1], u0, c, 0};
    cb[3 * c + 2] = (fcl_fd_binding){n[c][2], du, c, 0};
  }
  CHECK_OK(fcl_fd_kernel_create("change", 9, cb,
                                "d0[k, j, i] = a0[k, j, i] - b0[k, j, i]\n"
                                "d1[k, j, i] = a1[k, j, i] - b1[k, j, i]\n"
                                "d2[k, j, i] = a2[k, j, i] - b2[k, j, i]",
                                72, &change));
  CHECK_OK(fcl_fd_curl_create(du, cw, 4, &curl));
  fcl_fd_binding ab[6] = {{"w0", w2, 0, 0}, {"w1", w2, 1, 0}, {"w2", w2, 2, 0},
                          {"c0", cw, 0, 0}, {"c1", cw, 1, 0}, {"c2", cw, 2, 0}};
  CHECK_OK(fcl_fd_kernel_create("add", 6, ab,
                                "w0[k, j, i] = w0[k, j, i] + c0[k, j, i]\n"
                                "w1[k, j, i] = w1[k, j, i] + c1[k, j, i]\n"
                                "w2[k, j, i] = w2[k, j, i] + c2[k, j, i]",
                                72, &add));
  if (op && pen && change && curl && add) {
    CHECK_OK(fcl_fd_apply(op, dt));
    CHECK_OK(fcl_fd_apply(pen, dt));
    CHECK_OK(fcl_fd_apply(change, 0));
    CHECK_OK(fcl_fd_apply(curl, 0));
    CHECK_OK(fcl_fd_apply(add, 0));
    CHECK(field_distance(u, u2) == 0);
    const double dw = field_distance(w, w2);
    CHECKF(dw <= 1e-14, "vorticity penalization: %.3g from w + curl(change)", dw);
    fcl_field *w0 = op_field(e, t, "w0", 3, FCL_FLOAT64, tgv_w);
    CHECKF(field_distance(w, w0) > 0.1, "vorticity penalization changed w by %.3g only",
           field_distance(w, w0));
    fcl_field_destroy(&w0);
    fcl_operator d;
    CHECK_OK(fcl_fd_operator(op, &d));
    CHECK(d.nuses == 3); /* chi, u, w: the change is the operator's own */
  }
  fcl_fd *bad = NULL;
  CHECK_STATUS(fcl_penalization_vorticity_create(u, chi, chi, us, 1, e->pool, &bad),
               FCL_ERR_INVALID_ARGUMENT, "the vorticity 'chi' 3");
  CHECK_STATUS(fcl_penalization_vorticity_create(u, w, chi, us, -1, e->pool, &bad),
               FCL_ERR_INVALID_ARGUMENT, "lambda");
  fcl_fd *all[5] = {op, pen, change, curl, add};
  for (int i = 0; i < 5; ++i) fcl_fd_destroy(&all[i]);
  fcl_field *fields[8] = {u, w, chi, u2, u0, du, cw, w2};
  for (int i = 0; i < 8; ++i) fcl_field_destroy(&fields[i]);
  fcl_topology_destroy(&t);
}

/* ---------------- analytics ---------------- */

static void tgv_u(const double *x, double *v) {
  v[0] = sin(x[0]) * cos(x[1]) * cos(x[2]);
  v[1] = -cos(x[0]) * sin(x[1]) * cos(x[2]);
  v[2] = 0;
}
static void tgv_w(const double *x, double *v) {
  v[0] = -cos(x[0]) * sin(x[1]) * sin(x[2]);
  v[1] = -sin(x[0]) * cos(x[1]) * sin(x[2]);
  v[2] = 2 * sin(x[0]) * sin(x[1]) * cos(x[2]);
}

static void check_analytics(env *e, fcl_dtype dtype) {
  const int64_t n = 32;
  fcl_topology *t = op_box(3, n, 2);
  fcl_field *u = op_field(e, t, "u", 3, dtype, tgv_u);
  fcl_field *w = op_field(e, t, "w", 3, dtype, tgv_w);
  fcl_analytics *an = NULL;
  CHECK_OK(fcl_analytics_create(u, w, e->pool, &an));
  fcl_diagnostics d = {0};
  if (an) CHECK_OK(fcl_analytics_compute(an, FCL_DIAG_ALL, &d));
  /* maxima over the grid points, from the formulas */
  double wmax = 0, gmax = 0;
  const double h = 2 * PI / (double)n;
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) {
        double x[3] = {i * h, j * h, k * h}, v[3], g[3][3], s = 0;
        tgv_w(x, v);
        wmax = fmax(wmax, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
        const double sx = sin(x[0]), cx = cos(x[0]), sy = sin(x[1]), cy = cos(x[1]), sz = sin(x[2]),
                     cz = cos(x[2]);
        g[0][0] = cx * cy * cz, g[0][1] = -sx * sy * cz, g[0][2] = -sx * cy * sz;
        g[1][0] = sx * sy * cz, g[1][1] = -cx * cy * cz, g[1][2] = cx * sy * sz;
        for (int a = 0; a < 3; ++a) s += g[0][a] * g[0][a] + g[1][a] * g[1][a];
        gmax = fmax(gmax, sqrt(s));
      }
  const double eps = dtype == FCL_FLOAT64 ? 1e-13 : 2e-6;
  CHECKF(fabs(d.energy - 0.125) <= 0.125 * eps, "energy %.15g (1/8)", d.energy);
  CHECKF(fabs(d.enstrophy - 0.375) <= 0.375 * eps, "enstrophy %.15g (3/8)", d.enstrophy);
  CHECKF(fabs(d.max_vorticity - wmax) <= wmax * eps, "max|w| %.15g (%.15g)", d.max_vorticity, wmax);
  CHECKF(fabs(d.umax[0] - 1) <= eps && fabs(d.umax[1] - 1) <= eps && d.umax[2] == 0,
         "umax %g %g %g (1 1 0)", d.umax[0], d.umax[1], d.umax[2]);
  /* 4th-order differences of sin at 32 points: relative error h^4 / 30 */
  CHECKF(fabs(d.max_grad_u - gmax) <= gmax * (pow(h, 4) / 30 + eps), "max|grad u| %.12g (%.12g)",
         d.max_grad_u, gmax);
  /* the discrete divergence of the TGV cancels term by term */
  CHECKF(d.divergence <= 10 * eps, "divergence %.3g", d.divergence);
  /* again: the same values after one host wait (on one rank, where the ghosts wrap on the
   * device without one; the reductions started before the first finish) */
  int size = 1;
  MPI_Comm_size(fcl_topology_comm(t), &size);
  fcl_diagnostics d2 = {0};
  const uint64_t s0 = fcl_count_host_syncs();
  if (an) CHECK_OK(fcl_analytics_compute(an, FCL_DIAG_ALL, &d2));
  const uint64_t waits = fcl_count_host_syncs() - s0;
  CHECKF(size > 1 || waits <= 1, "analytics: %llu host waits for every diagnostic (1)",
         (unsigned long long)waits);
  CHECK(d2.energy == d.energy && d2.enstrophy == d.enstrophy &&
        d2.max_vorticity == d.max_vorticity && d2.max_grad_u == d.max_grad_u &&
        d2.divergence == d.divergence && d2.umax[1] == d.umax[1]);
  fcl_dt_inputs in;
  if (an) CHECK_OK(fcl_analytics_dt_inputs(an, true, &in));
  CHECK(in.dim == 3 && fabs(in.dx[2] - h) < 1e-15 && in.umax[0] == d.umax[0] &&
        fabs(in.grad_u_max - d.max_grad_u) <= eps * d.max_grad_u);
  fcl_analytics_destroy(&an);
  CHECK_OK(fcl_analytics_create(u, NULL, e->pool, &an));
  if (an)
    CHECK_STATUS(fcl_analytics_compute(an, FCL_DIAG_ENSTROPHY, &d), FCL_ERR_INVALID_ARGUMENT,
                 "vorticity");
  fcl_analytics_destroy(&an);
  fcl_field *scalar = op_field(e, t, "scalar", 1, dtype, NULL);
  CHECK_STATUS(fcl_analytics_create(scalar, w, e->pool, &an), FCL_ERR_INVALID_ARGUMENT,
               "the velocity 'scalar' has 1 components in 3D");
  CHECK_STATUS(fcl_analytics_create(u, scalar, e->pool, &an), FCL_ERR_INVALID_ARGUMENT,
               "the vorticity 'scalar' must have 3");
  fcl_field_destroy(&scalar);
  fcl_field_destroy(&u);
  fcl_field_destroy(&w);
  fcl_topology_destroy(&t);
}

/* A velocity whose components and axes differ (3 in 3D, 2 in 2D), and its gradient. */
static void aniso_u(const double *x, double *v) {
  v[0] = sin(x[0]) * cos(2 * x[1]) * cos(x[2]);
  v[1] = -0.5 * cos(x[0]) * sin(x[1]) * cos(3 * x[2]);
  v[2] = 0.3 * sin(x[2] + x[0]) + 0.2 * cos(2 * x[1]);
}
static double aniso_grad_norm(const double *x, int dim) {
  const double g[3][3] = {
      {cos(x[0]) * cos(2 * x[1]) * cos(x[2]), -2 * sin(x[0]) * sin(2 * x[1]) * cos(x[2]),
       -sin(x[0]) * cos(2 * x[1]) * sin(x[2])},
      {0.5 * sin(x[0]) * sin(x[1]) * cos(3 * x[2]), -0.5 * cos(x[0]) * cos(x[1]) * cos(3 * x[2]),
       1.5 * cos(x[0]) * sin(x[1]) * sin(3 * x[2])},
      {0.3 * cos(x[2] + x[0]), -0.4 * sin(2 * x[1]), 0.3 * cos(x[2] + x[0])}};
  double s = 0;
  for (int c = 0; c < dim; ++c)
    for (int a = 0; a < dim; ++a) s += g[c][a] * g[c][a];
  return sqrt(s);
}

/* Every ghost of every component of f set to 1e30 (the interior kept). */
static void spoil_ghosts(fcl_field *f) {
  const fcl_topology *t = fcl_field_topology(f);
  const size_t *p = fcl_field_padded_shape(f);
  const int *o = fcl_topology_origin(t);
  const int64_t *n = fcl_topology_local_resolution(t);
  const int dim = fcl_topology_domain(t)->dim;
  const size_t size = fcl_dtype_size(fcl_field_dtype(f)), count = p[0] * p[1] * p[2];
  unsigned char *h = malloc(count * size);
  if (!h) return;
  for (int c = 0; c < fcl_field_ncomp(f); ++c) {
    CHECK_OK(fcl_field_read(f, c, true, h));
    for (size_t q = 0; q < count; ++q) {
      const size_t x[3] = {q % p[0], q / p[0] % p[1], q / (p[0] * p[1])};
      bool ghost = false;
      for (int a = 0; a < dim; ++a) ghost |= (int64_t)x[a] < o[a] || (int64_t)x[a] >= o[a] + n[a];
      if (!ghost) continue;
      if (size == sizeof(double))
        ((double *)h)[q] = 1e30;
      else
        ((float *)h)[q] = 1e30f;
    }
    CHECK_OK(fcl_field_write(f, c, true, h));
  }
  free(h);
}

/* fcl_analytics_dt_inputs with the gradient and its one-pass kernel (one_pass.h) against the
 * gradient-norm field's reduction and the maxima of |u| (fcl_analytics_compute, generated
 * kernels), on a box whose spacing differs along each axis (a mixed-up stride or spacing shows),
 * and against the formula's maximum over the grid points within the differences' error. 40
 * points along x: the kernel's 32-wide tiles meet (a rim read wrong shows). */
static void check_dt_inputs(env *e, fcl_dtype dtype, int dim) {
  static const int64_t res[3] = {40, 32, 20};
  fcl_domain d = fcl_domain_periodic(dim, 1, 2 * PI);
  for (int a = 0; a < dim; ++a) d.resolution[a] = res[a];
  const int g[3] = {2, 2, 2};
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, g, &t));
  fcl_field *u = t ? op_field(e, t, "u", dim, dtype, aniso_u) : NULL;
  fcl_analytics *an = NULL;
  if (u) CHECK_OK(fcl_analytics_create(u, NULL, e->pool, &an));
  fcl_diagnostics ref = {0};
  fcl_dt_inputs in = {0};
  if (an) {
    CHECK_OK(fcl_analytics_compute(an, FCL_DIAG_UMAX | FCL_DIAG_GRAD_U, &ref));
    CHECK_OK(fcl_analytics_dt_inputs(an, true, &in));
  }
  /* the one-pass kernel itself (what a GPU runs; a CPU device reduces the gradient field), its
   * ghosts spoiled first: it exchanges them itself */
  fcl__one_pass *one = NULL;
  fcl_diagnostics op = {0};
  if (u) spoil_ghosts(u);
  if (u) CHECK_OK(fcl__one_pass_create(u, NULL, fcl_field_pool(u), &one));
  if (one) CHECK_OK(fcl__one_pass_measure(one, &op));
  fcl__one_pass_destroy(&one);
  const double grad = op.max_grad_u, *umax = op.umax;
  double gmax = 0;
  for (int64_t k = 0; k < (dim == 3 ? res[2] : 1); ++k)
    for (int64_t j = 0; j < res[1]; ++j)
      for (int64_t i = 0; i < res[0]; ++i) {
        const double x[3] = {2 * PI * (double)i / (double)res[0],
                             2 * PI * (double)j / (double)res[1],
                             dim == 3 ? 2 * PI * (double)k / (double)res[2] : 0};
        gmax = fmax(gmax, aniso_grad_norm(x, dim));
      }
  const double eps = dtype == FCL_FLOAT64 ? 1e-12 : 4e-6;
  CHECKF(fabs(in.grad_u_max - ref.max_grad_u) <= eps * ref.max_grad_u,
         "%dD %s: max|grad u| %.12g, the gradient-norm field's %.12g", dim,
         dtype == FCL_FLOAT64 ? "double" : "float", in.grad_u_max, ref.max_grad_u);
  /* order 4 at 20 points per period of cos(3 z): relative error below (3 h)^4 / 30 = 0.026 */
  CHECKF(fabs(in.grad_u_max - gmax) <= 0.03 * gmax, "%dD: max|grad u| %.6g, formula %.6g", dim,
         in.grad_u_max, gmax);
  CHECKF(fabs(grad - ref.max_grad_u) <= eps * ref.max_grad_u,
         "%dD %s: one pass: max|grad u| %.12g, the gradient-norm field's %.12g", dim,
         dtype == FCL_FLOAT64 ? "double" : "float", grad, ref.max_grad_u);
  for (int c = 0; c < 3; ++c) {
    CHECKF(in.umax[c] == (c < dim ? ref.umax[c] : 0), "%dD: umax[%d] %.9g (%.9g)", dim, c,
           in.umax[c], ref.umax[c]);
    CHECKF(umax[c] == in.umax[c], "%dD: one pass: umax[%d] %.9g (%.9g)", dim, c, umax[c],
           in.umax[c]);
  }
  CHECK(in.dim == dim && fabs(in.dx[1] - 2 * PI / 32) < 1e-15);
  fcl_analytics_destroy(&an);
  fcl_field_destroy(&u);
  fcl_topology_destroy(&t);
}

/* A vorticity for the 2D case (one component). */
static void w_2d(const double *x, double *v) { v[0] = sin(x[0]) * cos(2 * x[1]) + 0.3; }

/* The diagnostics from public pieces, independent of fcl_analytics (which takes the one pass on
 * a GPU): reductions of u and w, and the generated gradient-norm, divergence and |w| kernels. */
static fcl_diagnostics reference_diagnostics(env *e, fcl_field *u, fcl_field *w) {
  fcl_diagnostics d = {0};
  fcl_topology *t = fcl_field_topology(u);
  const fcl_domain *dom = fcl_topology_domain(t);
  double volume = 1;
  for (int a = 0; a < dom->dim; ++a) volume *= dom->length[a];
  for (int c = 0; c < fcl_field_ncomp(u); ++c) {
    double l2 = 0;
    CHECK_OK(fcl_field_reduce(u, c, FCL_REDUCE_NORM_L2, &l2));
    CHECK_OK(fcl_field_reduce(u, c, FCL_REDUCE_NORM_LINF, &d.umax[c]));
    d.energy += l2 * l2 / volume / 2;
  }
  for (int c = 0; c < fcl_field_ncomp(w); ++c) {
    double l2 = 0;
    CHECK_OK(fcl_field_reduce(w, c, FCL_REDUCE_NORM_L2, &l2));
    d.enstrophy += l2 * l2 / volume / 2;
  }
  fcl_field *s = op_field(e, t, "s", 1, fcl_field_dtype(u), NULL);
  fcl_fd *op = NULL;
  CHECK_OK(fcl_fd_gradient_norm_create(u, s, 4, &op));
  if (op) CHECK_OK(fcl_fd_apply(op, 0));
  fcl_fd_destroy(&op);
  CHECK_OK(fcl_field_reduce(s, 0, FCL_REDUCE_MAX, &d.max_grad_u));
  CHECK_OK(fcl_fd_divergence_create(u, s, 4, &op));
  if (op) CHECK_OK(fcl_fd_apply(op, 0));
  fcl_fd_destroy(&op);
  CHECK_OK(fcl_field_reduce(s, 0, FCL_REDUCE_NORM_L2, &d.divergence));
  d.divergence /= sqrt(volume);
  const bool three = fcl_field_ncomp(w) == 3;
  fcl_fd_binding b[4] = {{"s", s, 0, 0}, {"w0", w, 0, 0}, {"w1", w, 1, 0}, {"w2", w, 2, 0}};
  CHECK_OK(fcl_fd_kernel_create(
      "test.vorticity_norm", three ? 4 : 2, b,
      three ? "s[k, j, i] = sqrt(w0[k, j, i] * w0[k, j, i] + w1[k, j, i] * w1[k, j, i] + "
              "w2[k, j, i] * w2[k, j, i])\n"
            : "s[k, j, i] = sqrt(w0[k, j, i] * w0[k, j, i])\n",
      8, &op));
  if (op) CHECK_OK(fcl_fd_apply(op, 0));
  fcl_fd_destroy(&op);
  CHECK_OK(fcl_field_reduce(s, 0, FCL_REDUCE_MAX, &d.max_vorticity));
  fcl_field_destroy(&s);
  return d;
}

/* The diagnostics' one-pass kernel (what a GPU runs) against the generated kernels and the
 * field reductions, on a box with walls on every axis when bounded (the trapezoidal weights) and
 * a different spacing per axis, in 2D and 3D. */
static void check_one_pass_diagnostics(env *e, fcl_dtype dtype, int dim, bool bounded) {
  static const int64_t res[3] = {24, 20, 16};
  fcl_domain d = fcl_domain_periodic(dim, 1, 2 * PI);
  for (int a = 0; a < dim; ++a) d.resolution[a] = res[a];
  for (int a = 0; a < dim && bounded; ++a) d.bc[a][0] = d.bc[a][1] = FCL_BC_DIRICHLET;
  const int g[3] = {2, 2, 2};
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, g, &t));
  fcl_field *u = t ? op_field(e, t, "u", dim, dtype, aniso_u) : NULL;
  fcl_field *w = t ? op_field(e, t, "w", dim == 3 ? 3 : 1, dtype, dim == 3 ? tgv_w : w_2d) : NULL;
  fcl_diagnostics ref = {0}, one = {0};
  if (u && w) ref = reference_diagnostics(e, u, w);
  fcl__one_pass *op = NULL;
  if (u && w) spoil_ghosts(u);
  if (u && w) CHECK_OK(fcl__one_pass_create(u, w, fcl_field_pool(u), &op));
  if (op) CHECK_OK(fcl__one_pass_measure(op, &one));
  fcl__one_pass_destroy(&op);
  const double eps = dtype == FCL_FLOAT64 ? 1e-12 : 4e-6;
  const double got[8] = {one.energy,     one.enstrophy, one.max_vorticity, one.max_grad_u,
                         one.divergence, one.umax[0],   one.umax[1],       one.umax[2]},
               want[8] = {ref.energy,     ref.enstrophy, ref.max_vorticity, ref.max_grad_u,
                          ref.divergence, ref.umax[0],   ref.umax[1],       ref.umax[2]};
  static const char *const names[8] = {"energy",     "enstrophy", "max|w|",  "max|grad u|",
                                       "divergence", "umax[0]",   "umax[1]", "umax[2]"};
  for (int q = 0; q < 8; ++q)
    CHECKF(fabs(got[q] - want[q]) <= eps * fabs(want[q]) + (q == 4 ? eps : 0),
           "%dD %s, %s walls: one pass %s %.12g, generated kernels %.12g", dim,
           dtype == FCL_FLOAT64 ? "double" : "float", bounded ? "with" : "no", names[q], got[q],
           want[q]);
  fcl_field_destroy(&u);
  fcl_field_destroy(&w);
  fcl_topology_destroy(&t);
}

static void run(env *e) {
  check_penalization(e, FCL_FLOAT32);
  check_penalization_inside(e);
  check_analytics(e, FCL_FLOAT32);
  check_dt_inputs(e, FCL_FLOAT32, 3);
  check_dt_inputs(e, FCL_FLOAT32, 2);
  for (int dim = 2; dim <= 3; ++dim) {
    check_one_pass_diagnostics(e, FCL_FLOAT32, dim, false);
    check_one_pass_diagnostics(e, FCL_FLOAT32, dim, true);
  }
  if (!e->fp64) {
    fcl_test_skip_part(NULL, "the double-precision cases (no cl_khr_fp64)");
    return;
  }
  check_penalization(e, FCL_FLOAT64);
  check_analytics(e, FCL_FLOAT64);
  check_dt_inputs(e, FCL_FLOAT64, 3);
  check_one_pass_diagnostics(e, FCL_FLOAT64, 3, false);
  check_one_pass_diagnostics(e, FCL_FLOAT64, 2, true);
  for (int order = 2; order <= 4; order += 2) {
    check_derivative(e, GRADIENT, order);
    check_derivative(e, DIVERGENCE, order);
    check_derivative(e, GRAD_NORM, order);
  }
  check_custom(e);
  check_penalization_vorticity(e);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
