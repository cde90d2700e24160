/* Spectral operators on 1, 2 or 4 ranks, every built-in backend, float and double, against
 * trigonometric solutions on an anisotropic box (lengths 2 pi, 4 pi, 3 pi, so a mixed-up axis
 * or wavenumber shows): Biot-Savart returns the velocity whose curl is the given vorticity, curl
 * returns that vorticity, projection removes a gradient, Poisson inverts the Laplacian,
 * diffusion decays each mode by exp(-nu |k|^2 t), derivatives of first and second order. The
 * relative Linf error must stay within 1e-12 (double) or 1e-5 (float). */
#include <math.h>
#include <stdlib.h>

#include "fft_test_util.h"

static const double LENGTH[3] = {2 * PI, 4 * PI, 3 * PI};
static double K[3]; /* 2 pi / L */

/* Analytic fields of the angles th[a] = K[a] x[a]. */
typedef void (*analytic_fn)(const double *th, double *v);

static void velocity3(const double *t, double *v) {
  v[0] = sin(t[1] + 0.3) * cos(2 * t[2]);
  v[1] = cos(t[0]) * sin(t[2] + 0.5);
  v[2] = sin(2 * t[0] + 0.2) * cos(t[1]);
}
static void vorticity3(const double *t, double *w) {
  w[0] = -K[1] * sin(2 * t[0] + 0.2) * sin(t[1]) - K[2] * cos(t[0]) * cos(t[2] + 0.5);
  w[1] = -2 * K[2] * sin(t[1] + 0.3) * sin(2 * t[2]) - 2 * K[0] * cos(2 * t[0] + 0.2) * cos(t[1]);
  w[2] = -K[0] * sin(t[0]) * sin(t[2] + 0.5) - K[1] * cos(t[1] + 0.3) * cos(2 * t[2]);
}
static void velocity3_plus_gradient(const double *t, double *v) {
  velocity3(t, v);
  v[0] += K[0] * cos(t[0]) * sin(t[1]) * cos(t[2]);
  v[1] += K[1] * sin(t[0]) * cos(t[1]) * cos(t[2]);
  v[2] -= K[2] * sin(t[0]) * sin(t[1]) * sin(t[2]);
}
static void psi3(const double *t, double *v) { v[0] = sin(t[0]) * cos(2 * t[1]) * sin(t[2] + 0.1); }
static double lap3(void) { return K[0] * K[0] + 4 * K[1] * K[1] + K[2] * K[2]; }
static void minus_lap_psi3(const double *t, double *v) {
  psi3(t, v);
  v[0] *= lap3();
}
static void dpsi3_dy(const double *t, double *v) {
  v[0] = -2 * K[1] * sin(t[0]) * sin(2 * t[1]) * sin(t[2] + 0.1);
}
static void d2psi3_dz2(const double *t, double *v) {
  psi3(t, v);
  v[0] *= -K[2] * K[2];
}
static void wave3(const double *t, double *v) { v[0] = cos(t[0] + 2 * t[1] - t[2]); }
static const double NU = 0.1, DT = 0.5;
static void wave3_diffused(const double *t, double *v) {
  wave3(t, v);
  v[0] *= exp(-NU * DT * lap3());
}

/* velocity3 and vorticity3 after diffusion over DT: each mode decays by its own |k|^2 (A: the
 * mode of v[0], B: of v[1], C: of v[2]; curl keeps each mode). */
static void decays3(double d[3]) {
  d[0] = exp(-NU * DT * (K[1] * K[1] + 4 * K[2] * K[2]));
  d[1] = exp(-NU * DT * (K[0] * K[0] + K[2] * K[2]));
  d[2] = exp(-NU * DT * (4 * K[0] * K[0] + K[1] * K[1]));
}
static void velocity3_diffused(const double *t, double *v) {
  double d[3];
  decays3(d);
  velocity3(t, v);
  for (int c = 0; c < 3; ++c) v[c] *= d[c];
}
static void vorticity3_diffused(const double *t, double *w) {
  double d[3];
  decays3(d);
  w[0] = -K[1] * sin(2 * t[0] + 0.2) * sin(t[1]) * d[2] - K[2] * cos(t[0]) * cos(t[2] + 0.5) * d[1];
  w[1] = -2 * K[2] * sin(t[1] + 0.3) * sin(2 * t[2]) * d[0] -
         2 * K[0] * cos(2 * t[0] + 0.2) * cos(t[1]) * d[2];
  w[2] = -K[0] * sin(t[0]) * sin(t[2] + 0.5) * d[1] - K[1] * cos(t[1] + 0.3) * cos(2 * t[2]) * d[0];
}

static void psi2(const double *t, double *v) { v[0] = sin(t[0] + 0.4) * cos(2 * t[1]); }
static void vorticity2(const double *t, double *w) {
  psi2(t, w);
  w[0] *= K[0] * K[0] + 4 * K[1] * K[1];
}
static void velocity2(const double *t, double *v) {
  v[0] = -2 * K[1] * sin(t[0] + 0.4) * sin(2 * t[1]);
  v[1] = -K[0] * cos(t[0] + 0.4) * cos(2 * t[1]);
}
static double decay2(void) { return exp(-NU * DT * (K[0] * K[0] + 4 * K[1] * K[1])); }
static void vorticity2_diffused(const double *t, double *w) {
  vorticity2(t, w);
  w[0] *= decay2();
}
static void velocity2_diffused(const double *t, double *v) {
  velocity2(t, v);
  v[0] *= decay2();
  v[1] *= decay2();
}
static void velocity2_plus_gradient(const double *t, double *v) {
  velocity2(t, v);
  v[0] += -K[0] * sin(t[0]) * sin(t[1]);
  v[1] += K[1] * cos(t[0]) * cos(t[1]);
}

/* A free stream added by fcl_spectral_set_mean_velocity. */
static const double MEAN[3] = {0.75, -0.5, 1.25};
static void velocity3_stream(const double *t, double *v) {
  velocity3(t, v);
  for (int a = 0; a < 3; ++a) v[a] += MEAN[a];
}
static void velocity3_diffused_stream(const double *t, double *v) {
  velocity3_diffused(t, v);
  for (int a = 0; a < 3; ++a) v[a] += MEAN[a];
}
static void velocity2_stream(const double *t, double *v) {
  velocity2(t, v);
  for (int a = 0; a < 2; ++a) v[a] += MEAN[a];
}

static void init_analytic(void *user, const double *x, double *v) {
  double th[3] = {K[0] * x[0], K[1] * x[1], K[2] * x[2]};
  ((analytic_fn)user)(th, v);
}

static fcl_field *field(env *e, fcl_topology *t, const char *name, int ncomp, fcl_dtype dt,
                        analytic_fn fn) {
  fcl_field *f = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, name, ncomp, dt, &f));
  if (f && fn) CHECK_OK(fcl_field_init(f, init_analytic, (void *)fn));
  return f;
}

/* max over ranks of |f - fn| / max |fn|, over every component of f. */
static double rel_error(fcl_field *f, analytic_fn fn) {
  fcl_topology *t = fcl_field_topology(f);
  const fcl_domain *d = fcl_topology_domain(t);
  const int64_t *n = fcl_topology_local_resolution(t), *off = fcl_topology_offset(t);
  size_t count = (size_t)(n[0] * n[1] * n[2]);
  double *host = malloc(count * sizeof(double));
  double err = 0, norm = 0;
  for (int c = 0; c < fcl_field_ncomp(f); ++c) {
    CHECK_OK(fcl_field_read(f, c, false, host));
    size_t at = 0;
    for (int64_t k = 0; k < n[2]; ++k)
      for (int64_t j = 0; j < n[1]; ++j)
        for (int64_t i = 0; i < n[0]; ++i, ++at) {
          int64_t g[3] = {i + off[0], j + off[1], k + off[2]};
          double th[3] = {0, 0, 0}, v[3];
          for (int a = 0; a < d->dim; ++a) th[a] = K[a] * fcl_domain_spacing(d, a) * (double)g[a];
          fn(th, v);
          double got = fcl_field_dtype(f) == FCL_FLOAT64 ? host[at] : ((float *)host)[at];
          err = fmax(err, fabs(got - v[c]));
          norm = fmax(norm, fabs(v[c]));
        }
  }
  free(host);
  double local[2] = {err, norm}, all[2];
  MPI_Allreduce(local, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all[0] / all[1];
}

#define EXPECT(what, f, fn)                                                                        \
  do {                                                                                             \
    double r_ = rel_error((f), (fn));                                                              \
    CHECKF(r_ <= tol, "%s %s %dD: %s off by %.3g (tolerance %.1g)", bn, fcl_dtype_cl_name(dt),     \
           dim, (what), r_, tol);                                                                  \
  } while (0)

/* p1 = 0: slabs; else pencils 1 x p1 x (ranks / p1). */
static void check_3d(env *e, fcl_fft_backend b, fcl_dtype dt, int p1) {
  const int dim = 3;
  const char *bn = fcl_fft_backend_name(b);
  const double tol = fft_tolerance(dt);
  int64_t n[3] = {16, 10, 12};
  fcl_topology *t = p1 ? pencil_topology(3, n, LENGTH, p1) : slab_topology(3, n, LENGTH);
  fcl_field *w = field(e, t, "vorticity", 3, dt, vorticity3), *u = field(e, t, "u", 3, dt, NULL);
  fcl_spectral *s = NULL;
  CHECK_OK(fcl_spectral_create(w, b, e->pool, &s));
  if (s) {
    CHECK_OK(fcl_spectral_biot_savart(s, w, u));
    EXPECT("Biot-Savart", u, velocity3);
    CHECK_OK(fcl_spectral_curl(s, u, w));
    EXPECT("curl", w, vorticity3);
    CHECK_OK(fcl_spectral_diffuse_biot_savart(s, w, NU, DT, u));
    EXPECT("diffused vorticity (fused pass)", w, vorticity3_diffused);
    EXPECT("Biot-Savart (fused pass)", u, velocity3_diffused);
    /* with a free stream, then without it again */
    CHECK_OK(fcl_field_init(w, init_analytic, (void *)vorticity3));
    CHECK_OK(fcl_spectral_set_mean_velocity(s, MEAN));
    CHECK_OK(fcl_spectral_biot_savart(s, w, u));
    EXPECT("Biot-Savart with a free stream", u, velocity3_stream);
    CHECK_OK(fcl_spectral_diffuse_biot_savart(s, w, NU, DT, u));
    EXPECT("Biot-Savart with a free stream (fused pass)", u, velocity3_diffused_stream);
    CHECK_OK(fcl_spectral_set_mean_velocity(s, NULL));
    CHECK_OK(fcl_spectral_biot_savart(s, w, u));
    EXPECT("Biot-Savart after the free stream is removed", u, velocity3_diffused);
    const double bad[3] = {0, NAN, 0};
    CHECK_STATUS(fcl_spectral_set_mean_velocity(s, bad), FCL_ERR_INVALID_ARGUMENT, "component 1");
    CHECK_STATUS(fcl_spectral_diffuse_biot_savart(s, w, NU, DT, w), FCL_ERR_INVALID_ARGUMENT,
                 "vorticity");
    CHECK_STATUS(fcl_spectral_diffuse_biot_savart(s, w, NU, -1, u), FCL_ERR_INVALID_ARGUMENT, "dt");
    CHECK_OK(fcl_field_init(w, init_analytic, (void *)vorticity3));
    CHECK_OK(fcl_field_init(u, init_analytic, (void *)velocity3_plus_gradient));
    CHECK_OK(fcl_spectral_project(s, u));
    EXPECT("projection", u, velocity3);
    fcl_field *p = field(e, t, "psi", 1, dt, minus_lap_psi3);
    CHECK_OK(fcl_spectral_poisson(s, p, p));
    EXPECT("Poisson", p, psi3);
    fcl_field *dp = field(e, t, "dpsi", 1, dt, NULL);
    CHECK_OK(fcl_spectral_derivative(s, p, 0, 1, 1, dp, 0));
    EXPECT("d/dy", dp, dpsi3_dy);
    CHECK_OK(fcl_spectral_derivative(s, p, 0, 2, 2, dp, 0));
    EXPECT("d2/dz2", dp, d2psi3_dz2);
    CHECK_OK(fcl_field_init(dp, init_analytic, (void *)wave3));
    CHECK_OK(fcl_spectral_diffuse(s, dp, NU, DT));
    EXPECT("diffusion", dp, wave3_diffused);
    /* Bad input. */
    CHECK_STATUS(fcl_spectral_biot_savart(s, w, w), FCL_ERR_INVALID_ARGUMENT, "vorticity");
    CHECK_STATUS(fcl_spectral_biot_savart(s, p, u), FCL_ERR_INVALID_ARGUMENT, "needs 3");
    CHECK_STATUS(fcl_spectral_diffuse(s, dp, -1, DT), FCL_ERR_INVALID_ARGUMENT, "nu");
    CHECK_STATUS(fcl_spectral_derivative(s, p, 0, 3, 1, dp, 0), FCL_ERR_INVALID_ARGUMENT, "axis");
    fcl_field_destroy(&p);
    fcl_field_destroy(&dp);
  }
  fcl_spectral_destroy(&s);
  fcl_field_destroy(&w);
  fcl_field_destroy(&u);
  fcl_topology_destroy(&t);
}

static void check_2d(env *e, fcl_fft_backend b, fcl_dtype dt) {
  const int dim = 2;
  const char *bn = fcl_fft_backend_name(b);
  const double tol = fft_tolerance(dt);
  int64_t n[2] = {16, 12};
  fcl_topology *t = slab_topology(2, n, LENGTH);
  fcl_field *w = field(e, t, "vorticity", 1, dt, vorticity2), *u = field(e, t, "u", 2, dt, NULL);
  fcl_spectral *s = NULL;
  CHECK_OK(fcl_spectral_create(w, b, e->pool, &s));
  if (s) {
    CHECK_OK(fcl_spectral_biot_savart(s, w, u));
    EXPECT("Biot-Savart", u, velocity2);
    CHECK_OK(fcl_spectral_curl(s, u, w));
    EXPECT("curl", w, vorticity2);
    CHECK_OK(fcl_spectral_diffuse_biot_savart(s, w, NU, DT, u));
    EXPECT("diffused vorticity (fused pass)", w, vorticity2_diffused);
    EXPECT("Biot-Savart (fused pass)", u, velocity2_diffused);
    CHECK_OK(fcl_field_init(w, init_analytic, (void *)vorticity2));
    CHECK_OK(fcl_spectral_set_mean_velocity(s, MEAN));
    CHECK_OK(fcl_spectral_biot_savart(s, w, u));
    EXPECT("Biot-Savart with a free stream", u, velocity2_stream);
    CHECK_OK(fcl_spectral_set_mean_velocity(s, NULL));
    CHECK_OK(fcl_field_init(u, init_analytic, (void *)velocity2_plus_gradient));
    CHECK_OK(fcl_spectral_project(s, u));
    EXPECT("projection", u, velocity2);
  }
  fcl_spectral_destroy(&s);
  fcl_field_destroy(&w);
  fcl_field_destroy(&u);
  fcl_topology_destroy(&t);
}

static void run(env *e) {
  for (int a = 0; a < 3; ++a) K[a] = 2 * PI / LENGTH[a];
  fcl_fft_backend list[2];
  int nb = backends(list);
  if (!e->fp64) fcl_test_skip_part(NULL, "the double-precision cases (no cl_khr_fp64)");
  for (int bi = 0; bi < nb; ++bi)
    for (int prec = 0; prec < 2; ++prec) {
      fcl_dtype dt = prec ? FCL_FLOAT64 : FCL_FLOAT32;
      if (dt == FCL_FLOAT64 && !e->fp64) continue;
      check_3d(e, list[bi], dt, 0);
      check_2d(e, list[bi], dt);
      /* pencils (VkFFT only): 1 x 2 x 1 on 2 ranks, 1 x 2 x 2 on 4 */
      if (list[bi] == FCL_FFT_VKFFT && e->size % 2 == 0) check_3d(e, list[bi], dt, 2);
    }
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
