/* Finite-difference operators on 1, 2 or 4 ranks against exact solutions:
 *   - curl of a trigonometric field (3D and 2D) converges at the differences' order (2, 4);
 *   - explicit diffusion of a Fourier mode multiplies it by exactly the scheme's amplification
 *     factor 1 + nu dt sum_a lambda_a per step (lambda_a the stencil's eigenvalue for that
 *     mode), to rounding; a dt above the stability bound is an error that changes nothing;
 *   - stretching: against the same Runge-Kutta scheme applied on the host with the analytic
 *     velocity gradient, converging at order 4 in space; self-convergence in time at the RK
 *     order (successive halvings of dt, the space error being the same in every run);
 *   - conservative stretching: one tiny step is dt (w . grad) u to the differences' order 4;
 *     self-convergence in time at the RK order (2, 3); the integral of w is conserved;
 *   - the same with diffusion: with u = 0, a Fourier mode is multiplied by exactly the RK
 *     scheme's polynomial of z = nu dt lambda per step, to rounding (a stage whose diffusion is
 *     missing, doubled or of the wrong stage value changes it at first or second order in z);
 *     with u, one tiny step is dt ((w . grad) u + nu lap w) to order 4 in space; the integral of
 *     w is conserved; a dt above the stability bound, a dt < 0 and nu <= 0 are errors;
 *   - the plane-tile stage kernels (FLOWCL_STRETCHING_KERNEL=planes) against the generated ones
 *     (RK2, RK3, with and without diffusion, grown or exchanged stages, double and float, grids
 *     that overhang the tiles or take several; on several ranks periodic images along the axes
 *     held whole, whose ghosts stay NaN), and a bad value of the variable;
 *   - the extrapolating first half (fcl_fd_stretching_extrapolated_create) against an
 *     extrapolation kernel ahead of the stretching: the same vorticity and mid-step velocity to
 *     rounding, no ghost read (NaN ghosts); refused where the plane-tile kernels cannot read
 *     periodic images (several ranks, the generated kernels) and for bad arguments;
 *   - the probe that offers a GPU's streamed planes: a kernel reading an array at several planes
 *     of k streams, one reading each array at one plane (or its neighbours along j only) does
 *     not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_impl.h" /* operators/finite_differences: the streamed planes' probe */
#include "op_fields.h"

typedef fcl_test_mpi_env env;

/* ---------------- curl ---------------- */

static void curl3_exact(const double *x, double *w, const void *p) {
  (void)p;
  double g[3][3];
  op_vel3_gradient(x, g);
  w[0] = g[2][1] - g[1][2];
  w[1] = g[0][2] - g[2][0];
  w[2] = g[1][0] - g[0][1];
}
static void vel2(const double *x, double *v) {
  v[0] = sin(x[0]) * cos(2 * x[1]);
  v[1] = cos(x[0] + x[1]);
}
static void curl2_exact(const double *x, double *w, const void *p) {
  (void)p;
  w[0] = -sin(x[0] + x[1]) + 2 * sin(x[0]) * sin(2 * x[1]);
}

static void check_curl(env *e, int dim, int order) {
  double err[2];
  for (int r = 0; r < 2; ++r) {
    fcl_topology *t = op_box(dim, 16 << r, order / 2);
    fcl_field *u = op_field(e, t, "u", dim, FCL_FLOAT64, dim == 3 ? op_vel3 : vel2);
    fcl_field *w = op_field(e, t, "w", dim == 3 ? 3 : 1, FCL_FLOAT64, NULL);
    fcl_fd *op = NULL;
    CHECK_OK(fcl_fd_curl_create(u, w, order, &op));
    CHECK_OK(fcl_fd_apply(op, 0));
    err[r] = op ? op_rel_error(w, dim == 3 ? curl3_exact : curl2_exact, NULL) : NAN;
    if (r == 0 && op) {
      fcl_fd *bad = NULL; /* a failed create sets its output to NULL */
      CHECK_STATUS(fcl_fd_curl_create(u, u, order, &bad), FCL_ERR_INVALID_ARGUMENT, "same field");
      CHECK_STATUS(fcl_fd_curl_create(u, w, 6, &bad), FCL_ERR_INVALID_ARGUMENT, "order");
    }
    fcl_fd_destroy(&op);
    fcl_field_destroy(&u);
    fcl_field_destroy(&w);
    fcl_topology_destroy(&t);
  }
  double rate = log2(err[0] / err[1]);
  CHECKF(rate >= order - 0.3, "curl %dD order %d: errors %.3g -> %.3g, rate %.2f", dim, order,
         err[0], err[1], rate);
}

/* ---------------- diffusion ---------------- */

typedef struct {
  double factor; /* amplitude after the steps */
} mode_data;
static void mode(const double *x, double *v) {
  v[0] = cos(x[0] + 2 * x[1] - x[2]);
  v[1] = 0.5 * v[0];
}
static void mode_scaled(const double *x, double *v, const void *p) {
  mode(x, v);
  v[0] *= ((const mode_data *)p)->factor;
  v[1] *= ((const mode_data *)p)->factor;
}

/* lambda dx^2 of the stencil for the mode of angle th = k dx */
static double symbol(int order, double th) {
  return order == 2 ? 2 * cos(th) - 2 : (32 * cos(th) - 2 * cos(2 * th) - 30) / 12;
}

static void check_diffusion(env *e, fcl_dtype dt, int order) {
  const int64_t n = 16;
  const double nu = 0.05, dx = 2 * PI / (double)n;
  fcl_topology *t = op_box(3, n, order / 2);
  fcl_field *f = op_field(e, t, "f", 2, dt, mode);
  fcl_fd *op = NULL;
  CHECK_OK(fcl_fd_diffusion_create(f, nu, order, e->pool, &op));
  if (op) {
    const double step = 0.9 * fcl_fd_max_dt(op);
    double lambda = 0;
    const int k[3] = {1, 2, -1};
    for (int a = 0; a < 3; ++a) lambda += symbol(order, k[a] * dx) / (dx * dx);
    mode_data m = {pow(1 + nu * step * lambda, 5)};
    for (int s = 0; s < 5; ++s) CHECK_OK(fcl_fd_apply(op, step));
    double err = op_rel_error(f, mode_scaled, &m), tol = dt == FCL_FLOAT64 ? 1e-12 : 1e-5;
    CHECKF(err <= tol, "diffusion order %d %s: off the scheme's amplification by %.3g", order,
           fcl_dtype_cl_name(dt), err);
    CHECK_STATUS(fcl_fd_apply(op, 2 * fcl_fd_max_dt(op)), FCL_ERR_INVALID_ARGUMENT, "stability");
    CHECK(op_rel_error(f, mode_scaled, &m) <= tol); /* nothing changed */
  }
  fcl_fd *bad = NULL;
  CHECK_STATUS(fcl_fd_diffusion_create(f, -1, order, e->pool, &bad), FCL_ERR_INVALID_ARGUMENT,
               "nu");
  fcl_fd_destroy(&op);
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
}

/* ---------------- stretching ---------------- */

static void vort0(const double *x, double *w) {
  w[0] = cos(x[1]);
  w[1] = sin(x[2]);
  w[2] = cos(x[0] + x[1]);
}

typedef struct {
  int rk;
  double dt;
  int steps;
} rk_data;

/* The RK scheme of the kernel on w' = G w with the analytic G. */
static void stretched(const double *x, double *w, const void *p) {
  const rk_data *d = p;
  double g[3][3];
  op_vel3_gradient(x, g);
  vort0(x, w);
#define F(out, in)                                                                                 \
  for (int i_ = 0; i_ < 3; ++i_) out[i_] = g[i_][0] * in[0] + g[i_][1] * in[1] + g[i_][2] * in[2]
  for (int s = 0; s < d->steps; ++s) {
    double k1[3], k2[3], k3[3], k4[3], p2[3], h = d->dt;
    F(k1, w);
    if (d->rk == 2) {
      for (int i = 0; i < 3; ++i) p2[i] = w[i] + h * k1[i] / 2;
      F(k2, p2);
      for (int i = 0; i < 3; ++i) w[i] += h * k2[i];
    } else if (d->rk == 3) {
      for (int i = 0; i < 3; ++i) p2[i] = w[i] + h * k1[i];
      F(k2, p2);
      for (int i = 0; i < 3; ++i) p2[i] = w[i] + h * (k1[i] + k2[i]) / 4;
      F(k3, p2);
      for (int i = 0; i < 3; ++i) w[i] += h * (k1[i] + k2[i] + 4 * k3[i]) / 6;
    } else {
      for (int i = 0; i < 3; ++i) p2[i] = w[i] + h * k1[i] / 2;
      F(k2, p2);
      for (int i = 0; i < 3; ++i) p2[i] = w[i] + h * k2[i] / 2;
      F(k3, p2);
      for (int i = 0; i < 3; ++i) p2[i] = w[i] + h * k3[i];
      F(k4, p2);
      for (int i = 0; i < 3; ++i) w[i] += h * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) / 6;
    }
  }
#undef F
}

/* Run the device stretching from vort0; returns the field (caller destroys). */
static fcl_field *stretch(env *e, fcl_topology *t, int rk, double dt, int steps) {
  fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT64, op_vel3),
            *w = op_field(e, t, "w", 3, FCL_FLOAT64, vort0);
  fcl_fd *op = NULL;
  CHECK_OK(fcl_fd_stretching_create(u, w, rk, &op));
  for (int s = 0; s < steps && op; ++s) CHECK_OK(fcl_fd_apply(op, dt));
  fcl_fd_destroy(&op);
  fcl_field_destroy(&u);
  return w;
}

static double diff_fields(fcl_field *a, fcl_field *b) {
  const int64_t *n = fcl_topology_local_resolution(fcl_field_topology(a));
  size_t count = (size_t)(n[0] * n[1] * n[2]);
  double *va = malloc(count * sizeof *va), *vb = malloc(count * sizeof *vb), m = 0, all;
  for (int c = 0; c < 3; ++c) {
    CHECK_OK(fcl_field_read(a, c, false, va));
    CHECK_OK(fcl_field_read(b, c, false, vb));
    for (size_t i = 0; i < count; ++i) m = fmax(m, fabs(va[i] - vb[i]));
  }
  free(va);
  free(vb);
  MPI_Allreduce(&m, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

static void check_stretching(env *e) {
  double err[2];
  for (int r = 0; r < 2; ++r) { /* space: the same RK4 step with the analytic gradient */
    fcl_topology *t = op_box(3, 16 << r, 2);
    fcl_field *w = stretch(e, t, 4, 0.3, 1);
    rk_data d = {4, 0.3, 1};
    err[r] = w ? op_rel_error(w, stretched, &d) : NAN;
    fcl_field_destroy(&w);
    fcl_topology_destroy(&t);
  }
  double rate = log2(err[0] / err[1]);
  CHECKF(rate >= 3.7, "stretching: space errors %.3g -> %.3g, rate %.2f", err[0], err[1], rate);
  fcl_topology *t = op_box(3, 16, 2);
  for (int rk = 2; rk <= 4; ++rk) { /* time: halving dt, the space error is common */
    fcl_field *w[3];
    for (int h = 0; h < 3; ++h) w[h] = stretch(e, t, rk, 0.4 / (1 << h), 1 << h);
    double e1 = diff_fields(w[0], w[1]), e2 = diff_fields(w[1], w[2]);
    CHECKF(log2(e1 / e2) >= rk - 0.3, "stretching RK%d: differences %.3g -> %.3g, rate %.2f", rk,
           e1, e2, log2(e1 / e2));
    for (int h = 0; h < 3; ++h) fcl_field_destroy(&w[h]);
  }
  fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT64, op_vel3),
            *w = op_field(e, t, "w", 3, FCL_FLOAT64, NULL);
  fcl_fd *op = NULL;
  CHECK_STATUS(fcl_fd_stretching_create(u, w, 5, &op), FCL_ERR_INVALID_ARGUMENT, "rk_order");
  CHECK_STATUS(fcl_fd_stretching_create(u, u, 2, &op), FCL_ERR_INVALID_ARGUMENT, "same field");
  fcl_field_destroy(&u);
  fcl_field_destroy(&w);
  fcl_topology_destroy(&t);
  fcl_topology *t1 = op_box(3, 16, 1);
  u = op_field(e, t1, "u", 3, FCL_FLOAT64, NULL);
  w = op_field(e, t1, "w", 3, FCL_FLOAT64, NULL);
  CHECK_STATUS(fcl_fd_stretching_create(u, w, 2, &op), FCL_ERR_INVALID_ARGUMENT, "ghosts");
  fcl_field_destroy(&u);
  fcl_field_destroy(&w);
  fcl_topology_destroy(&t1);
}

/* ---------------- conservative stretching ---------------- */

/* divergence-free velocity and vorticity (nonzero means, to see conservation) */
static void vel_free(const double *x, double *v) {
  v[0] = sin(x[0]) * cos(x[1]) * cos(x[2]);
  v[1] = -cos(x[0]) * sin(x[1]) * cos(x[2]);
  v[2] = 0.3 * sin(x[0] + x[1]);
}
static void vort_free(const double *x, double *w) {
  w[0] = cos(x[1]) + 0.5;
  w[1] = sin(x[2]) - 0.25;
  w[2] = cos(x[0] + x[1]) + 0.125;
}
/* w0 + dt (w0 . grad) u: one step's exact change to first order in dt */
static void tendency(const double *x, double *w, const void *p) {
  const double dt = *(const double *)p;
  double w0[3], sx = sin(x[0]), cx = cos(x[0]), sy = sin(x[1]), cy = cos(x[1]), sz = sin(x[2]),
                cz = cos(x[2]), c = 0.3 * cos(x[0] + x[1]);
  const double g[3][3] = {{cx * cy * cz, -sx * sy * cz, -sx * cy * sz},
                          {sx * sy * cz, -cx * cy * cz, cx * sy * sz},
                          {c, c, 0}};
  vort_free(x, w0);
  for (int i = 0; i < 3; ++i)
    w[i] = w0[i] + dt * (g[i][0] * w0[0] + g[i][1] * w0[1] + g[i][2] * w0[2]);
}

static fcl_field *stretch_conservative(env *e, fcl_topology *t, int rk, double dt, int steps) {
  fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT64, vel_free);
  fcl_field *w = op_field(e, t, "w", 3, FCL_FLOAT64, vort_free);
  fcl_fd *op = NULL;
  CHECK_OK(fcl_fd_stretching_conservative_create(u, w, rk, e->pool, &op));
  for (int s = 0; op && s < steps; ++s) CHECK_OK(fcl_fd_apply(op, dt));
  fcl_fd_destroy(&op);
  fcl_field_destroy(&u);
  return w;
}

static void check_stretching_conservative(env *e) {
  for (int rk = 2; rk <= 3; ++rk) {
    /* space: one tiny step is dt (w . grad) u up to the differences' error */
    double err[2], dt = 1e-6;
    for (int r = 0; r < 2; ++r) {
      fcl_topology *t = op_box(3, 16 << r, 2);
      fcl_field *w = stretch_conservative(e, t, rk, dt, 1);
      err[r] = op_rel_error(w, tendency, &dt);
      fcl_field_destroy(&w);
      fcl_topology_destroy(&t);
    }
    CHECKF(log2(err[0] / err[1]) >= 3.7,
           "conservative stretching RK%d: space errors %.3g -> "
           "%.3g, rate %.2f",
           rk, err[0], err[1], log2(err[0] / err[1]));
    /* time: halving dt */
    fcl_topology *t = op_box(3, 16, 2);
    fcl_field *w[3];
    for (int h = 0; h < 3; ++h) w[h] = stretch_conservative(e, t, rk, 0.4 / (1 << h), 1 << h);
    const double e1 = diff_fields(w[0], w[1]), e2 = diff_fields(w[1], w[2]);
    CHECKF(log2(e1 / e2) >= rk - 0.3,
           "conservative stretching RK%d: differences %.3g -> %.3g, "
           "rate %.2f",
           rk, e1, e2, log2(e1 / e2));
    /* the sum of w is conserved to rounding (the initial sums are 0.5, -0.25, 0.125 * 8 pi^3) */
    for (int c = 0; c < 3; ++c) {
      double sum;
      CHECK_OK(fcl_field_reduce(w[2], c, FCL_REDUCE_INTEGRAL, &sum));
      const double want = (c == 0 ? 0.5 : c == 1 ? -0.25 : 0.125) * 8 * PI * PI * PI;
      CHECKF(fabs(sum - want) <= 1e-12 * 8 * PI * PI * PI,
             "conservative stretching RK%d: "
             "integral of w_%d %.17g, initially %.17g",
             rk, c, sum, want);
    }
    if (e->rank == 0)
      printf("conservative stretching RK%d: space rate %.2f, time rate %.2f\n", rk,
             log2(err[0] / err[1]), log2(e1 / e2));
    /* with 4 ghosts an RK2 first stage also computes the ghost layers of the split axes the
     * second reads (no stage value crosses ranks): the same values as exchanging them (RK3
     * exchanges with either width) */
    fcl_topology *narrow = op_box(3, 24, 2), *wide = op_box(3, 24, 4);
    fcl_field *exchanged = stretch_conservative(e, narrow, rk, 0.4, 2),
              *grown = stretch_conservative(e, wide, rk, 0.4, 2);
    const double gap = diff_fields(exchanged, grown);
    CHECKF(gap <= 1e-13,
           "conservative stretching RK%d: grown stages differ from exchanged ones by %.3g", rk,
           gap);
    fcl_field_destroy(&exchanged);
    fcl_field_destroy(&grown);
    fcl_topology_destroy(&narrow);
    fcl_topology_destroy(&wide);
    for (int h = 0; h < 3; ++h) fcl_field_destroy(&w[h]);
    fcl_topology_destroy(&t);
  }
  fcl_topology *t = op_box(3, 8, 2);
  fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT64, NULL),
            *w = op_field(e, t, "w", 3, FCL_FLOAT64, NULL);
  fcl_fd *op = NULL;
  CHECK_STATUS(fcl_fd_stretching_conservative_create(u, w, 4, e->pool, &op),
               FCL_ERR_INVALID_ARGUMENT, "2 or 3");
  fcl_field_destroy(&u);
  fcl_field_destroy(&w);
  fcl_topology_destroy(&t);
}

/* ---------------- conservative stretching with diffusion ---------------- */

typedef struct {
  double dt, nu;
} viscous_step;
static void mode3(const double *x, double *v) {
  v[0] = cos(x[0] + 2 * x[1] - x[2]);
  v[1] = 0.5 * v[0];
  v[2] = -0.25 * v[0];
}
/* the grid's highest mode (16 points per axis): the Laplacian's largest |eigenvalue| */
static void checkerboard(const double *x, double *v) {
  v[0] = v[1] = v[2] = cos(8 * x[0]) * cos(8 * x[1]) * cos(8 * x[2]);
}
static void mode3_scaled(const double *x, double *v, const void *p) {
  mode3(x, v);
  for (int c = 0; c < 3; ++c) v[c] *= ((const mode_data *)p)->factor;
}
/* w0 + dt ((w0 . grad) u + nu lap w0), the exact change to first order in dt */
static void viscous_tendency(const double *x, double *w, const void *p) {
  const viscous_step *s = p;
  tendency(x, w, &s->dt);
  const double lap[3] = {-cos(x[1]), -sin(x[2]), -2 * cos(x[0] + x[1])};
  for (int c = 0; c < 3; ++c) w[c] += s->dt * s->nu * lap[c];
}

static void check_stretching_diffusion(env *e, fcl_dtype dtype) {
  const int64_t n = 16;
  const double nu = 0.05, dx = 2 * PI / (double)n, tol = dtype == FCL_FLOAT64 ? 1e-12 : 2e-5;
  fcl_topology *t = op_box(3, n, 2);
  for (int rk = 2; rk <= 3; ++rk) {
    /* u = 0: the RK polynomial of the fourth-order Laplacian's eigenvalue */
    fcl_field *u = op_field(e, t, "u", 3, dtype, NULL), *w = op_field(e, t, "w", 3, dtype, mode3);
    fcl_fd *op = NULL;
    CHECK_OK(fcl_fd_stretching_diffusion_create(u, w, nu, rk, e->pool, &op));
    if (op) {
      const double step = 0.9 * fcl_fd_max_dt(op);
      double lambda = 0;
      const int k[3] = {1, 2, -1};
      for (int a = 0; a < 3; ++a) lambda += symbol(4, k[a] * dx) / (dx * dx);
      const double z = nu * step * lambda;
      const double g = 1 + z + z * z / 2 + (rk == 3 ? z * z * z / 6 : 0);
      mode_data m = {pow(g, 5)};
      for (int s = 0; s < 5; ++s) CHECK_OK(fcl_fd_apply(op, step));
      double err = op_rel_error(w, mode3_scaled, &m);
      CHECKF(err <= tol,
             "stretching with diffusion RK%d %s: off the scheme's amplification by %.3g", rk,
             fcl_dtype_cl_name(dtype), err);
      CHECK_STATUS(fcl_fd_apply(op, 2 * fcl_fd_max_dt(op)), FCL_ERR_INVALID_ARGUMENT, "stability");
      CHECK_STATUS(fcl_fd_apply(op, -step), FCL_ERR_INVALID_ARGUMENT, "dt");
      CHECK(op_rel_error(w, mode3_scaled, &m) <= tol); /* nothing changed */
    }
    fcl_fd_destroy(&op);
    fcl_field_destroy(&w);
    /* the bound: at it, the highest mode does not grow (|1 + z + ...| <= 1 at z = -2) */
    w = op_field(e, t, "w", 3, dtype, checkerboard);
    CHECK_OK(fcl_fd_stretching_diffusion_create(u, w, nu, rk, e->pool, &op));
    for (int s = 0; op && s < 20; ++s) CHECK_OK(fcl_fd_apply(op, fcl_fd_max_dt(op)));
    double amplitude = 0;
    for (int c = 0; c < 3; ++c) {
      double m = 0;
      CHECK_OK(fcl_field_reduce(w, c, FCL_REDUCE_NORM_LINF, &m));
      amplitude = fmax(amplitude, m);
    }
    CHECKF(amplitude <= 1 + tol,
           "stretching with diffusion RK%d: the highest mode grew to %.3g in 20 steps at the bound",
           rk, amplitude);
    fcl_fd_destroy(&op);
    fcl_field_destroy(&u);
    fcl_field_destroy(&w);
  }
  if (dtype == FCL_FLOAT64) {
    /* with u: one tiny step against the exact right side, order 4 in space; w's sum conserved */
    const viscous_step vs = {1e-6, 0.3};
    double err[2];
    for (int r = 0; r < 2; ++r) {
      fcl_topology *tr = op_box(3, 16 << r, 2);
      fcl_field *u = op_field(e, tr, "u", 3, FCL_FLOAT64, vel_free),
                *w = op_field(e, tr, "w", 3, FCL_FLOAT64, vort_free);
      fcl_fd *op = NULL;
      CHECK_OK(fcl_fd_stretching_diffusion_create(u, w, vs.nu, 2, e->pool, &op));
      if (op) CHECK_OK(fcl_fd_apply(op, vs.dt));
      err[r] = op_rel_error(w, viscous_tendency, &vs);
      for (int s = 0; op && r == 0 && s < 4; ++s) CHECK_OK(fcl_fd_apply(op, 0.01));
      for (int c = 0; r == 0 && c < 3; ++c) {
        double sum;
        CHECK_OK(fcl_field_reduce(w, c, FCL_REDUCE_INTEGRAL, &sum));
        const double want = (c == 0 ? 0.5 : c == 1 ? -0.25 : 0.125) * 8 * PI * PI * PI;
        CHECKF(fabs(sum - want) <= 1e-12 * 8 * PI * PI * PI,
               "stretching with diffusion: integral of w_%d %.17g, initially %.17g", c, sum, want);
      }
      fcl_fd_destroy(&op);
      fcl_field_destroy(&u);
      fcl_field_destroy(&w);
      fcl_topology_destroy(&tr);
    }
    CHECKF(log2(err[0] / err[1]) >= 3.7,
           "stretching with diffusion: space errors %.3g -> %.3g, rate %.2f", err[0], err[1],
           log2(err[0] / err[1]));
    if (e->rank == 0) printf("stretching with diffusion: space rate %.2f\n", log2(err[0] / err[1]));
  }
  fcl_field *u = op_field(e, t, "u", 3, dtype, NULL), *w = op_field(e, t, "w", 3, dtype, NULL);
  fcl_fd *bad = NULL;
  CHECK_STATUS(fcl_fd_stretching_diffusion_create(u, w, 0, 2, e->pool, &bad),
               FCL_ERR_INVALID_ARGUMENT, "nu");
  CHECK_STATUS(fcl_fd_stretching_diffusion_create(u, w, NAN, 2, e->pool, &bad),
               FCL_ERR_INVALID_ARGUMENT, "nu");
  CHECK_STATUS(fcl_fd_stretching_diffusion_create(u, w, nu, 4, e->pool, &bad),
               FCL_ERR_INVALID_ARGUMENT, "argument 4 (rk_order)");
  fcl_field_destroy(&u);
  fcl_field_destroy(&w);
  fcl_topology_destroy(&t);
}

/* ---------------- plane-tile stretching kernels ---------------- */

/* modes of many wavenumbers along every axis, so that no symmetry hides a neighbour off by one */
static void rough(const double *x, double *v) {
  for (int c = 0; c < 3; ++c)
    v[c] = sin(3 * x[0] + c) * cos(5 * x[1] - 2 * c) + cos(7 * x[2] + x[0] + 0.5 * c) +
           0.3 * sin(9 * x[1] + 4 * x[2] - c);
}
static void rough_u(const double *x, double *v) {
  rough(x, v);
  v[0] += 1;
}

/* Set FLOWCL_STRETCHING_KERNEL to value (NULL: unset), returning the old value (caller frees). */
static char *swap_kernel_env(const char *value) {
  const char *was = getenv("FLOWCL_STRETCHING_KERNEL");
  char *saved = was ? strdup(was) : NULL;
  if (value)
    setenv("FLOWCL_STRETCHING_KERNEL", value, 1);
  else
    unsetenv("FLOWCL_STRETCHING_KERNEL");
  return saved;
}

/* Every ghost (and padding) value of f NaN, the interior kept: a kernel that reads a ghost the
 * operator did not ask to be filled makes its result NaN. */
static void poison_ghosts(env *e, fcl_field *f) {
  const int64_t *n = fcl_topology_local_resolution(fcl_field_topology(f));
  const size_t *p = fcl_field_padded_shape(f), item = fcl_dtype_size(fcl_field_dtype(f));
  double *v = malloc((size_t)(n[0] * n[1] * n[2]) * sizeof *v);
  const double nan64 = NAN;
  const float nan32 = NAN;
  for (int c = 0; c < fcl_field_ncomp(f); ++c) {
    CHECK_OK(fcl_field_read(f, c, false, v));
    CHECK_OK(fcl_mem_fill(e->q, fcl_field_buffer(f, c),
                          item == 8 ? (const void *)&nan64 : (const void *)&nan32, item, 0,
                          p[0] * p[1] * p[2] * item, 0, NULL, NULL));
    CHECK_OK(fcl_field_write(f, c, false, v));
  }
  free(v);
}

/* Two steps of the conservative stretching (with diffusion if nu > 0) from the rough fields, the
 * stages' kernels chosen by FLOWCL_STRETCHING_KERNEL = kind, every ghost NaN until a fill the
 * operator asks for; *planes: whether the operator's list holds plane-tile kernels, *reach: the
 * widest ghost read it declares. */
static fcl_field *stretch_kind(env *e, fcl_topology *t, fcl_dtype dtype, int rk, double nu,
                               const char *kind, bool *planes, int *reach, bool *images) {
  fcl_field *u = op_field(e, t, "u", 3, dtype, rough_u), *w = op_field(e, t, "w", 3, dtype, rough);
  poison_ghosts(e, u);
  poison_ghosts(e, w);
  char *saved = swap_kernel_env(kind);
  fcl_fd *op = NULL;
  CHECK_OK(nu > 0 ? fcl_fd_stretching_diffusion_create(u, w, nu, rk, e->pool, &op)
                  : fcl_fd_stretching_conservative_create(u, w, rk, e->pool, &op));
  free(swap_kernel_env(saved));
  free(saved);
  *planes = false;
  const fcl_launcher *list = fcl_fd_launcher(op);
  for (size_t i = 0; op && i < fcl_launcher_list_size(list); ++i)
    *planes |= strstr(fcl_launcher_name(fcl_launcher_list_get(list, i)), "_planes") != NULL;
  fcl_operator desc = {0};
  if (op) CHECK_OK(fcl_fd_operator(op, &desc));
  *reach = 0;
  *images = desc.nuses > 0;
  for (int i = 0; i < desc.nuses; ++i) {
    if (desc.uses[i].ghosts > *reach) *reach = desc.uses[i].ghosts;
    *images = *images && desc.uses[i].periodic_images;
  }
  for (int s = 0; s < 2 && op; ++s) CHECK_OK(fcl_fd_apply(op, 0.01));
  fcl_fd_destroy(&op);
  fcl_field_destroy(&u);
  return w;
}

/* max |a - b| / max |a| over the interiors, in either precision */
static double relative_gap(fcl_field *a, fcl_field *b) {
  const int64_t *n = fcl_topology_local_resolution(fcl_field_topology(a));
  const size_t count = (size_t)(n[0] * n[1] * n[2]);
  const bool f64 = fcl_field_dtype(a) == FCL_FLOAT64;
  double *va = malloc(count * sizeof *va), *vb = malloc(count * sizeof *vb), m[2] = {0, 0}, all[2];
  for (int c = 0; c < 3; ++c) {
    CHECK_OK(fcl_field_read(a, c, false, va));
    CHECK_OK(fcl_field_read(b, c, false, vb));
    for (size_t i = 0; i < count; ++i) {
      const double x = f64 ? va[i] : ((float *)va)[i], y = f64 ? vb[i] : ((float *)vb)[i];
      const double d = fabs(x - y);
      m[0] = fmax(m[0], isnan(d) ? INFINITY : d); /* a NaN is a gap */
      m[1] = fmax(m[1], fabs(x));
    }
  }
  free(va);
  free(vb);
  MPI_Allreduce(m, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all[0] / all[1];
}

/* A box of 2 pi per axis, n[a] points along axis a, periodic or (walls) with Neumann walls on y
 * and split along z only. */
static fcl_topology *box3(const int64_t n[3], int ghosts, bool walls) {
  fcl_domain d = fcl_domain_periodic(3, n[0], 2 * PI);
  for (int a = 0; a < 3; ++a) d.resolution[a] = n[a];
  if (walls) d.bc[1][0] = d.bc[1][1] = FCL_BC_NEUMANN;
  const int g[3] = {ghosts, ghosts, ghosts}, slabs[3] = {1, 1, 0};
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, walls ? slabs : NULL, g, &t));
  return t;
}

/* The plane-tile kernels against the generated ones: RK2 and RK3, with and without diffusion,
 * stages grown over the split axes (4 ghosts, RK2) or exchanged, double to 1e-12 and float to
 * 1e-5; on slabs with walls on y (held whole, so read from its mirrored ghosts, not wrapped).
 * 20^3 points overhang the tiles of 32 x 8 and the chunks of 32 planes; 37 x 19 x 35 (one
 * rank) takes two tiles along x, whose halos come from each other, and a second chunk of 3
 * planes, an odd count that skips the loop's second plane. A neighbour, a halo or a plane off by
 * one changes the result by far more than the tolerances (the rough fields). Every ghost starts
 * NaN: on one rank the plane-tile kernels read periodic images (the last tiles' items past the
 * points wrap to the first columns and rows), never a ghost; 70 x 21 x 67 takes three tiles of
 * x (the last overhanging), three of y and three chunks of planes, the first and last of which
 * wrap along z. */
static void check_planes(env *e) {
  static const struct {
    fcl_dtype dtype;
    int rk, ghosts;
    double nu;
    int64_t n[3];
    bool walls;
  } cases[] = {{FCL_FLOAT64, 2, 4, 0, {37, 19, 35}, false},
               {FCL_FLOAT64, 3, 2, 0.05, {20, 20, 20}, false},
               {FCL_FLOAT32, 2, 2, 0.05, {37, 19, 35}, false},
               {FCL_FLOAT32, 3, 4, 0, {70, 21, 67}, false},
               {FCL_FLOAT32, 2, 4, 0, {37, 19, 36}, true},
               {FCL_FLOAT32, 3, 4, 0.05, {37, 19, 36}, true}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    if (cases[i].dtype == FCL_FLOAT64 && !e->fp64) continue;
    fcl_topology *t = box3(cases[i].n, cases[i].ghosts, cases[i].walls);
    bool planes[2], images[2];
    int reach[2];
    fcl_field *w[2];
    w[0] = stretch_kind(e, t, cases[i].dtype, cases[i].rk, cases[i].nu, "generated", &planes[0],
                        &reach[0], &images[0]);
    w[1] = stretch_kind(e, t, cases[i].dtype, cases[i].rk, cases[i].nu, "planes", &planes[1],
                        &reach[1], &images[1]);
    const double gap = relative_gap(w[0], w[1]), tol = cases[i].dtype == FCL_FLOAT64 ? 1e-12 : 1e-5;
    CHECKF(!planes[0] && planes[1], "stretching case %zu: plane-tile kernels %d (generated), %d", i,
           planes[0], planes[1]);
    /* one rank holds the whole periodic box: the plane-tile kernels read no ghost */
    const int whole = e->size == 1 && !cases[i].walls ? 0 : 2;
    CHECKF(reach[0] == 2 && reach[1] == whole,
           "stretching case %zu: ghosts read %d (generated), %d (plane-tile; %d expected)", i,
           reach[0], reach[1], whole);
    /* the plane-tile kernels read periodic images along the axes held whole (several ranks: x,
     * and y on slabs), so the exchanges fcl_fd_apply makes leave those axes out and their
     * ghosts stay NaN */
    CHECKF(!images[0] && images[1],
           "stretching case %zu: periodic images read %d (generated), %d (plane-tile)", i,
           images[0], images[1]);
    CHECKF(gap <= tol,
           "stretching case %zu (RK%d, nu %g, %d ghosts, %s): plane-tile kernels off "
           "the generated ones by %.3g",
           i, cases[i].rk, cases[i].nu, cases[i].ghosts,
           cases[i].dtype == FCL_FLOAT64 ? "double" : "float", gap);
    if (e->rank == 0) printf("stretching case %zu: plane-tile against generated %.3g\n", i, gap);
    fcl_field_destroy(&w[0]);
    fcl_field_destroy(&w[1]);
    fcl_topology_destroy(&t);
  }
  /* a bad FLOWCL_STRETCHING_KERNEL is an error naming it */
  fcl_topology *t = op_box(3, 8, 2);
  fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT32, NULL),
            *w = op_field(e, t, "w", 3, FCL_FLOAT32, NULL);
  char *saved = swap_kernel_env("fast");
  fcl_fd *op = NULL;
  CHECK_STATUS(fcl_fd_stretching_conservative_create(u, w, 2, e->pool, &op),
               FCL_ERR_INVALID_ARGUMENT, "FLOWCL_STRETCHING_KERNEL='fast'");
  free(swap_kernel_env(saved));
  free(saved);
  fcl_field_destroy(&u);
  fcl_field_destroy(&w);
  fcl_topology_destroy(&t);
}

/* A kernel over 64^3 interior points of arrays with 2 ghosts, its text given. */
static bool probe_streams(const char *text) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("probe", &kb));
  CHECK_OK(fcl_kbuilder_add_array(kb, "a", FCL_FLOAT32, "68, 68, 68"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", FCL_FLOAT32, "68, 68, 68"));
  CHECK_OK(
      fcl_kbuilder_add_domain(kb, "{ [k, j, i]: 0 <= k < 64 and 0 <= j < 64 and 0 <= i < 64 }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, text));
  const fcl__fd_array arrays[2] = {{"a", NULL, 0}, {"out", NULL, 0}};
  bool streams = fcl__fd_streams_along_k(kb, 2, arrays);
  fcl_kbuilder_destroy(&kb);
  return streams;
}

/* Half-steps of the Strang splitting from the rough fields: u_mid = 3/2 u - 1/2 u_prev, then the
 * stretching over u_mid twice, either folded (the extrapolating first half, then the
 * stretching) or not (an extrapolation kernel, then the stretching twice); w and u_mid out. */
static void strang_halves(env *e, fcl_topology *t, fcl_dtype dtype, int rk, double nu, bool fold,
                          fcl_field *out[2]) {
  fcl_field *u = op_field(e, t, "u", 3, dtype, rough_u), *w = op_field(e, t, "w", 3, dtype, rough);
  fcl_field *up = op_field(e, t, "u_prev", 3, dtype, rough),
            *um = op_field(e, t, "u_mid", 3, dtype, NULL);
  fcl_field *poisoned[4] = {u, w, up, um};
  for (int i = 0; i < 4; ++i) poison_ghosts(e, poisoned[i]);
  char *saved = swap_kernel_env("planes");
  fcl_fd *half = NULL, *first = NULL, *extrap = NULL;
  CHECK_OK(nu > 0 ? fcl_fd_stretching_diffusion_create(um, w, nu, rk, e->pool, &half)
                  : fcl_fd_stretching_conservative_create(um, w, rk, e->pool, &half));
  if (fold) {
    CHECK_OK(fcl_fd_stretching_extrapolated_create(u, up, half, &first));
    fcl_operator desc = {0};
    if (first) CHECK_OK(fcl_fd_operator(first, &desc));
    for (int i = 0; i < desc.nuses; ++i) {
      CHECKF(desc.uses[i].ghosts == 0, "the extrapolating half reads %d ghosts of %s",
             desc.uses[i].ghosts, fcl_field_name(desc.uses[i].field));
      CHECKF(desc.uses[i].field != um || (!desc.uses[i].read && desc.uses[i].written), "%s",
             "the extrapolating half must declare u_mid written, not read");
    }
  } else {
    fcl_fd_binding b[9];
    char text[1024];
    int len = 0;
    static const char *const names[3][3] = {
        {"a0", "b0", "m0"}, {"a1", "b1", "m1"}, {"a2", "b2", "m2"}};
    for (int c = 0; c < 3; ++c) {
      b[3 * c] = (fcl_fd_binding){names[c][0], u, c, 0};
      b[3 * c + 1] = (fcl_fd_binding){names[c][1], up, c, 0};
      b[3 * c + 2] = (fcl_fd_binding){names[c][2], um, c, 0};
      len += snprintf(text + len, sizeof text - (size_t)len,
                      "m%d[k, j, i] = 1.5 * a%d[k, j, i] - 0.5 * b%d[k, j, i]\n", c, c, c);
    }
    CHECK_OK(fcl_fd_kernel_create("extrapolate", 9, b, text, 36, &extrap));
  }
  free(swap_kernel_env(saved));
  free(saved);
  if (extrap) CHECK_OK(fcl_fd_apply(extrap, 0));
  if (first || extrap) CHECK_OK(fcl_fd_apply(first ? first : half, 0.01));
  if (first || extrap) CHECK_OK(fcl_fd_apply(half, 0.01));
  /* a third half-step; folded, once the stretching whose stage values the first half shares is
   * destroyed (they stay until the last of the two goes) */
  if (first) fcl_fd_destroy(&half);
  if (extrap) CHECK_OK(fcl_fd_apply(extrap, 0));
  if (first || extrap) CHECK_OK(fcl_fd_apply(first ? first : half, 0.01));
  fcl_fd_destroy(&first);
  fcl_fd_destroy(&extrap);
  fcl_fd_destroy(&half);
  fcl_field_destroy(&u);
  fcl_field_destroy(&up);
  out[0] = w;
  out[1] = um;
}

/* The extrapolating first half against an extrapolation kernel ahead of the stretching, on one
 * rank (RK2 double on 37 x 19 x 35; RK3 float with diffusion on 66 x 18 x 8: three tiles of x,
 * one chunk of planes wrapping at both ends), to the tolerances of check_planes;
 * where it cannot apply, the refusal. */
static void check_extrapolated(env *e) {
  static const struct {
    fcl_dtype dtype;
    int rk;
    double nu;
    int64_t n[3];
  } cases[] = {{FCL_FLOAT64, 2, 0, {37, 19, 35}}, {FCL_FLOAT32, 3, 0.05, {66, 18, 8}}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0] && e->size == 1; ++i) {
    if (cases[i].dtype == FCL_FLOAT64 && !e->fp64) continue;
    fcl_topology *t = box3(cases[i].n, 2, false);
    fcl_field *ref[2], *got[2];
    strang_halves(e, t, cases[i].dtype, cases[i].rk, cases[i].nu, false, ref);
    strang_halves(e, t, cases[i].dtype, cases[i].rk, cases[i].nu, true, got);
    const double tol = cases[i].dtype == FCL_FLOAT64 ? 1e-12 : 1e-5;
    const double gw = relative_gap(ref[0], got[0]), gm = relative_gap(ref[1], got[1]);
    CHECKF(gw <= tol && gm <= tol,
           "extrapolated case %zu (RK%d, nu %g): w off by %.3g, u_mid by %.3g", i, cases[i].rk,
           cases[i].nu, gw, gm);
    if (e->rank == 0) printf("extrapolated case %zu: w %.3g, u_mid %.3g\n", i, gw, gm);
    for (int f = 0; f < 2; ++f) {
      fcl_field_destroy(&ref[f]);
      fcl_field_destroy(&got[f]);
    }
    fcl_topology_destroy(&t);
  }
  fcl_topology *t = op_box(3, 16, 2);
  fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT32, NULL),
            *up = op_field(e, t, "u_prev", 3, FCL_FLOAT32, NULL),
            *um = op_field(e, t, "u_mid", 3, FCL_FLOAT32, NULL),
            *w = op_field(e, t, "w", 3, FCL_FLOAT32, NULL);
  fcl_fd *half = NULL, *first = NULL;
  char *saved = swap_kernel_env(e->size == 1 ? "generated" : "planes");
  CHECK_OK(fcl_fd_stretching_conservative_create(um, w, 2, e->pool, &half));
  /* one rank with the generated kernels, or several ranks: no periodic images to read */
  CHECK_STATUS(fcl_fd_stretching_extrapolated_create(u, up, half, &first), FCL_ERR_NOT_SUPPORTED,
               "plane-tile");
  CHECK_STATUS(fcl_fd_stretching_extrapolated_create(u, u, half, &first), FCL_ERR_INVALID_ARGUMENT,
               "'u' twice");
  fcl_fd *curl = NULL;
  CHECK_OK(fcl_fd_curl_create(u, w, 4, &curl));
  CHECK_STATUS(fcl_fd_stretching_extrapolated_create(u, up, curl, &first), FCL_ERR_INVALID_ARGUMENT,
               "not a conservative stretching");
  CHECK(first == NULL);
  free(swap_kernel_env(saved));
  free(saved);
  fcl_fd_destroy(&curl);
  fcl_fd_destroy(&half);
  fcl_field *all[4] = {u, up, um, w};
  for (int i = 0; i < 4; ++i) fcl_field_destroy(&all[i]);
  fcl_topology_destroy(&t);
}

static void check_streams_probe(void) {
  CHECKF(
      probe_streams("out[k + 2, j + 2, i + 2] = a[k + 1, j + 2, i + 2] - a[k + 3, j + 2, i + 2]"),
      "a difference along k: the probe finds nothing to stream");
  CHECKF(!probe_streams("out[k + 2, j + 2, i + 2] = 2 * a[k + 2, j + 2, i + 2]"),
         "a pointwise kernel: the probe would stream it");
  CHECKF(
      !probe_streams("out[k + 2, j + 2, i + 2] = a[k + 2, j + 1, i + 2] - a[k + 2, j + 3, i + 2]"),
      "a difference along j: the probe would stream it");
}

static void run(env *e) {
  check_streams_probe();
  check_planes(e);
  check_extrapolated(e);
  check_diffusion(e, FCL_FLOAT32, 2);
  check_diffusion(e, FCL_FLOAT32, 4);
  check_stretching_diffusion(e, FCL_FLOAT32);
  if (!e->fp64) {
    fcl_test_skip_part(NULL, "the double-precision cases (no cl_khr_fp64)");
    return;
  }
  for (int order = 2; order <= 4; order += 2) {
    check_curl(e, 3, order);
    check_curl(e, 2, order);
    check_diffusion(e, FCL_FLOAT64, order);
  }
  check_stretching(e);
  check_stretching_conservative(e);
  check_stretching_diffusion(e, FCL_FLOAT64);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
