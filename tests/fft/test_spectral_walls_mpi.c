/* Spectral operators on boxes walled along some axes (fft.h's mirror extension), on 1, 2 or 4
 * ranks, every built-in backend, float and double, against trigonometric solutions: sines of
 * pi m x / L about a Dirichlet wall, cosines about a Neumann one, cos(2 pi m x / L + phase) along
 * a periodic axis. Every operator of spectral.h, on 2D and 3D boxes with walls along one axis or
 * two, slabs and pencils; free-slip conditions (a velocity's normal component Dirichlet, its
 * tangential ones Neumann; the vorticity the reverse). Results must match to 1e-12 (double) or
 * 1e-5 (float) relative to the Linf norm: the data are band-limited. Output fields with wrong
 * conditions, a mean velocity through a wall and a gravity along a wall, are refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fft_test_util.h"

enum { PER, SIN, COS }; /* a factor along an axis: periodic, odd or even about the walls */

typedef struct {
  double amp;
  int kind[3], m[3];
  double phase[3]; /* periodic factors only */
} mode;

enum { MAX_MODES = 12 };
typedef struct {
  int n;
  mode md[MAX_MODES];
} func; /* a sum of modes */

static double LEN[3];
static int DIM;

static double kappa(const mode *md, int a) {
  return (md->kind[a] == PER ? 2 * PI : PI) * md->m[a] / LEN[a];
}

static double eval(const func *f, const double *x) {
  double v = 0;
  for (int i = 0; i < f->n; ++i) {
    const mode *md = &f->md[i];
    double p = md->amp;
    for (int a = 0; a < DIM; ++a) {
      double th = kappa(md, a) * x[a];
      p *= md->kind[a] == PER ? cos(th + md->phase[a]) : md->kind[a] == SIN ? sin(th) : cos(th);
    }
    v += p;
  }
  return v;
}

/* d f / d x_a: each mode is a mode again (a sine turns into a cosine and back). */
static func deriv(func f, int a) {
  for (int i = 0; i < f.n; ++i) {
    mode *md = &f.md[i];
    const double k = kappa(md, a);
    if (md->kind[a] == PER) {
      md->amp *= k;
      md->phase[a] += PI / 2;
    } else if (md->kind[a] == SIN) {
      md->amp *= k;
      md->kind[a] = COS;
    } else {
      md->amp *= -k;
      md->kind[a] = SIN;
    }
  }
  return f;
}

static double k2(const mode *md) {
  double s = 0;
  for (int a = 0; a < DIM; ++a) s += kappa(md, a) * kappa(md, a);
  return s;
}

/* -lap(f), and f after diffusion over nu_dt (each mode by its own |k|^2). */
static func minus_lap(func f) {
  for (int i = 0; i < f.n; ++i) f.md[i].amp *= k2(&f.md[i]);
  return f;
}
static func diffused(func f, double nu_dt) {
  for (int i = 0; i < f.n; ++i) f.md[i].amp *= exp(-nu_dt * k2(&f.md[i]));
  return f;
}
static func sum(func f, func g, double s) {
  for (int i = 0; i < g.n && f.n < MAX_MODES; ++i) {
    f.md[f.n] = g.md[i];
    f.md[f.n++].amp *= s;
  }
  return f;
}

/* curl of a 3D vector; in 2D, ncurl of a scalar psi: the velocity (d_y psi, -d_x psi). */
static void curl3(const func *v, func *out) {
  for (int c = 0; c < 3; ++c) {
    const int d = (c + 1) % 3, e = (c + 2) % 3;
    out[c] = sum(deriv(v[e], d), deriv(v[d], e), -1);
  }
}
static void velocity2(const func *psi, func *u) {
  u[0] = deriv(*psi, 1);
  u[1] = deriv(*psi, 0);
  for (int i = 0; i < u[1].n && i < MAX_MODES; ++i) u[1].md[i].amp = -u[1].md[i].amp;
}

/* One mode with factor kinds from walls: periodic axes PER with m_per[a], walled ones `wall`
 * (SIN or COS) with m_wall[a]; axis `flat` (or -1) constant. */
static mode make_mode(unsigned walled, double amp, const int *m_per, const int *m_wall,
                      const int *wall_kind, int flat) {
  mode md = {.amp = amp};
  for (int a = 0; a < 3; ++a) {
    md.kind[a] = walled >> a & 1 ? wall_kind[a] : PER;
    md.m[a] = a == flat ? 0 : walled >> a & 1 ? m_wall[a] : m_per[a];
    md.phase[a] = 0.3 + 0.7 * a;
    if (a == flat && md.kind[a] == SIN) md.kind[a] = COS; /* constant, even */
  }
  return md;
}

typedef struct {
  const func *f;
} init_user;

static void init_fn(void *user, const double *x, double *v) {
  const func *f = ((init_user *)user)->f;
  for (int c = 0; c < 3; ++c) v[c] = f[c].n ? eval(&f[c], x) : 0.0;
}

static void set(fcl_field *fl, const func *f) {
  func all[3] = {{0}, {0}, {0}};
  for (int c = 0; c < fcl_field_ncomp(fl); ++c) all[c] = f[c];
  init_user u = {all};
  CHECK_OK(fcl_field_init(fl, init_fn, &u));
}

/* max over ranks of |f - fn| / max |fn|, over every component. */
static double rel_error(fcl_field *fl, const func *f) {
  fcl_topology *t = fcl_field_topology(fl);
  const fcl_domain *d = fcl_topology_domain(t);
  const int64_t *n = fcl_topology_local_resolution(t), *off = fcl_topology_offset(t);
  const size_t count = (size_t)(n[0] * n[1] * n[2]);
  double *host = malloc(count * sizeof(double));
  double err = 0, norm = 0;
  for (int c = 0; c < fcl_field_ncomp(fl); ++c) {
    CHECK_OK(fcl_field_read(fl, c, false, host));
    size_t at = 0;
    for (int64_t k = 0; k < n[2]; ++k)
      for (int64_t j = 0; j < n[1]; ++j)
        for (int64_t i = 0; i < n[0]; ++i, ++at) {
          const int64_t g[3] = {i + off[0], j + off[1], k + off[2]};
          double x[3] = {0, 0, 0};
          for (int a = 0; a < d->dim; ++a) x[a] = fcl_domain_spacing(d, a) * (double)g[a];
          const double want = eval(&f[c], x);
          const double got = fcl_field_dtype(fl) == FCL_FLOAT64 ? host[at] : ((float *)host)[at];
          err = fmax(err, fabs(got - want));
          norm = fmax(norm, fabs(want));
        }
  }
  free(host);
  double local[2] = {err, norm}, all[2];
  MPI_Allreduce(local, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all[1] > 0 ? all[0] / all[1] : all[0];
}

typedef struct {
  int dim;
  unsigned walled;
  int64_t n[3];
  int p1; /* 0: slabs; else pencils 1 x p1 x (ranks / p1) */
  bool one_rank;
} box_case;

#define EXPECT(what, fl, f)                                                                        \
  do {                                                                                             \
    double r_ = rel_error((fl), (f));                                                              \
    CHECKF(r_ <= tol, "%s %s %dD walls 0x%x%s: %s off by %.3g (tolerance %.1g)", bn,               \
           fcl_dtype_cl_name(dt), bc->dim, bc->walled, bc->p1 ? " pencils" : "", (what), r_, tol); \
  } while (0)

/* A vector field's free-slip conditions: a velocity's component a is Dirichlet along walled
 * axis a and Neumann along the others; a vorticity's the reverse. */
static void free_slip(fcl_field *f, unsigned walled, bool velocity) {
  for (int c = 0; c < fcl_field_ncomp(f); ++c)
    for (int a = 0; a < DIM; ++a) {
      if (!(walled >> a & 1)) continue;
      fcl_bc bc = (c == a) == velocity ? FCL_BC_DIRICHLET : FCL_BC_NEUMANN;
      CHECK_OK(fcl_field_set_component_bc(f, c, a, bc, bc));
    }
}

static void all_bc(fcl_field *f, unsigned walled, fcl_bc bc) {
  for (int a = 0; a < DIM; ++a)
    if (walled >> a & 1) CHECK_OK(fcl_field_set_component_bc(f, 0, a, bc, bc));
}

static void check_box(env *e, const box_case *bc, fcl_fft_backend b, fcl_dtype dt) {
  const char *bn = fcl_fft_backend_name(b);
  const double tol = fft_tolerance(dt), NU_DT = 0.05;
  DIM = bc->dim;
  const unsigned w = bc->walled;
  fcl_domain d = fcl_domain_periodic(bc->dim, 8, 1.0);
  for (int a = 0; a < bc->dim; ++a) {
    d.resolution[a] = bc->n[a];
    d.length[a] = LEN[a];
    if (w >> a & 1) d.bc[a][0] = d.bc[a][1] = FCL_BC_DIRICHLET;
  }
  int procs[3] = {1, 1, 1}, ghosts[3] = {2, 2, 2};
  if (bc->p1)
    procs[1] = bc->p1, procs[2] = e->size / bc->p1;
  else
    procs[bc->dim - 1] = e->size;
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, procs, ghosts, &t));
  const int nw = bc->dim == 3 ? 3 : 1;
  fcl_field *om = NULL, *u = NULL, *sc = NULL, *ds = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "omega", nw, dt, &om));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "u", bc->dim, dt, &u));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "scalar", 1, dt, &sc));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "derivative", 1, dt, &ds));
  if (bc->dim == 3) free_slip(om, w, false);
  free_slip(u, w, true);
  fcl_spectral *s = NULL;
  CHECK_OK(fcl_spectral_create(om, b, e->pool, &s));
  if (!s) goto done;
  /* psi with the vorticity's parities, each component constant along its own axis (divergence
   * free); 2D: a scalar odd about every wall */
  const int sin_k[3] = {SIN, SIN, SIN}, cos_k[3] = {COS, COS, COS};
  func psi[3] = {{0}, {0}, {0}}, wv[3], vel[3];
  if (bc->dim == 3) {
    for (int c = 0; c < 3; ++c) {
      int kinds[3], mp[3] = {1 + c % 2, 2 - c % 2, 1}, mw[3] = {1 + c, 2, 3 - c};
      for (int a = 0; a < 3; ++a) kinds[a] = a == c ? COS : SIN;
      psi[c].n = 1;
      psi[c].md[0] = make_mode(w, 1.0 - 0.2 * c, mp, mw, kinds, c);
    }
    for (int c = 0; c < 3; ++c) wv[c] = minus_lap(psi[c]);
    curl3(psi, vel);
  } else {
    const int mp[3] = {2, 1, 0}, mw[3] = {3, 2, 0}, mp2[3] = {1, 2, 0}, mw2[3] = {1, 1, 0};
    psi[0].n = 2;
    psi[0].md[0] = make_mode(w, 1.0, mp, mw, sin_k, -1);
    psi[0].md[1] = make_mode(w, 0.5, mp2, mw2, sin_k, -1);
    wv[0] = minus_lap(psi[0]);
    velocity2(psi, vel);
  }
  set(om, wv);
  CHECK_OK(fcl_spectral_biot_savart(s, om, u));
  EXPECT("Biot-Savart", u, vel);
  CHECK_OK(fcl_spectral_curl(s, u, om));
  EXPECT("curl", om, wv);
  /* fused diffusion and Biot-Savart */
  func wd[3], pd[3], vd[3];
  for (int c = 0; c < nw; ++c) wd[c] = diffused(wv[c], NU_DT), pd[c] = diffused(psi[c], NU_DT);
  if (bc->dim == 3)
    curl3(pd, vd);
  else
    velocity2(pd, vd);
  CHECK_OK(fcl_spectral_diffuse_biot_savart(s, om, NU_DT, 1.0, u));
  EXPECT("diffused vorticity (fused pass)", om, wd);
  EXPECT("Biot-Savart (fused pass)", u, vd);
  /* a free stream along the periodic axes, none through the walls */
  double mean[3] = {0, 0, 0};
  func vm[3];
  for (int a = 0; a < bc->dim; ++a) {
    vm[a] = vel[a];
    if (w >> a & 1) continue;
    mean[a] = 0.5 + 0.25 * a;
    const mode c0 = {.amp = mean[a], .kind = {PER, PER, PER}};
    vm[a] = sum(vm[a], (func){.n = 1, .md = {c0}}, 1);
  }
  set(om, wv);
  CHECK_OK(fcl_spectral_set_mean_velocity(s, mean));
  CHECK_OK(fcl_spectral_biot_savart(s, om, u));
  EXPECT("Biot-Savart with a free stream along the walls", u, vm);
  for (int a = 0; a < bc->dim; ++a) mean[a] = 1.0;
  CHECK_OK(fcl_spectral_set_mean_velocity(s, mean));
  CHECK_STATUS(fcl_spectral_biot_savart(s, om, u), FCL_ERR_INVALID_ARGUMENT, "through a wall");
  CHECK_OK(fcl_spectral_set_mean_velocity(s, NULL));
  /* projection removes the gradient of a scalar even about the walls */
  {
    const int mp[3] = {1, 2, 1}, mw[3] = {2, 1, 1};
    func g = {.n = 1, .md = {make_mode(w, 0.8, mp, mw, cos_k, -1)}}, uv[3];
    for (int a = 0; a < bc->dim; ++a) uv[a] = sum(vel[a], deriv(g, a), 1);
    set(u, uv);
    CHECK_OK(fcl_spectral_project(s, u));
    EXPECT("projection", u, vel);
  }
  /* Poisson, derivatives and diffusion of scalars odd (Dirichlet) and even (Neumann) */
  {
    const int mp[3] = {1, 2, 1}, mw[3] = {2, 3, 1};
    func odd = {.n = 1, .md = {make_mode(w, 1.2, mp, mw, sin_k, -1)}};
    func even = {.n = 2, .md = {make_mode(w, 1.0, mp, mw, cos_k, -1)}};
    const int mp0[3] = {0, 0, 0}, mw1[3] = {1, 1, 1};
    even.md[1] = make_mode(w, 0.5, mp0, mw1, cos_k, -1); /* varies along the walls only */
    func rhs = minus_lap(odd);
    set(sc, &rhs);
    CHECK_OK(fcl_spectral_poisson(s, sc, sc));
    EXPECT("Poisson (Dirichlet)", sc, &odd);
    int wall = 0;
    while (!(w >> wall & 1)) ++wall;
    func d1 = deriv(odd, wall), d2 = deriv(d1, wall);
    CHECK_OK(fcl_field_set_component_bc(ds, 0, wall, FCL_BC_NEUMANN, FCL_BC_NEUMANN));
    CHECK_OK(fcl_spectral_derivative(s, sc, 0, wall, 1, ds, 0));
    EXPECT("first derivative across the walls", ds, &d1);
    CHECK_STATUS(fcl_spectral_derivative(s, sc, 0, wall, 2, ds, 0), FCL_ERR_INVALID_ARGUMENT,
                 "is Neumann at the walls");
    all_bc(ds, w, FCL_BC_DIRICHLET);
    CHECK_OK(fcl_spectral_derivative(s, sc, 0, wall, 2, ds, 0));
    EXPECT("second derivative across the walls", ds, &d2);
    all_bc(sc, w, FCL_BC_NEUMANN);
    rhs = minus_lap(even);
    set(sc, &rhs);
    CHECK_OK(fcl_spectral_poisson(s, sc, sc));
    EXPECT("Poisson (Neumann)", sc, &even);
    CHECK_OK(fcl_spectral_diffuse(s, sc, NU_DT, 1.0));
    func ed = diffused(even, NU_DT);
    EXPECT("diffusion (Neumann)", sc, &ed);
    CHECK_STATUS(fcl_spectral_poisson(s, sc, ds), FCL_ERR_INVALID_ARGUMENT,
                 "is Dirichlet at the walls");
  }
  /* buoyancy: omega += dt curl(b g), g normal to the walls of the first walled axis; b odd
   * there (a temperature between plates), even about any other wall (insulated) */
  {
    int wall = 0;
    while (!(w >> wall & 1)) ++wall;
    int kinds[3] = {COS, COS, COS};
    kinds[wall] = SIN;
    const int mp[3] = {1, 2, 1}, mw[3] = {1, 2, 1};
    func bf = {.n = 1, .md = {make_mode(w, 0.9, mp, mw, kinds, -1)}};
    for (int a = 0; a < DIM; ++a)
      if (a != wall && w >> a & 1)
        CHECK_OK(fcl_field_set_component_bc(sc, 0, a, FCL_BC_NEUMANN, FCL_BC_NEUMANN));
    CHECK_OK(fcl_field_set_component_bc(sc, 0, wall, FCL_BC_DIRICHLET, FCL_BC_DIRICHLET));
    set(sc, &bf);
    set(om, wv);
    double g[3] = {0, 0, 0};
    g[wall] = 2.5;
    const double h = 0.3;
    func want[3];
    if (bc->dim == 3) {
      func gb[3], c3[3];
      for (int c = 0; c < 3; ++c) {
        gb[c] = bf;
        for (int i = 0; i < gb[c].n; ++i) gb[c].md[i].amp *= g[c];
      }
      curl3(gb, c3);
      for (int c = 0; c < 3; ++c) want[c] = sum(wv[c], c3[c], h);
    } else { /* g_y d_x b - g_x d_y b */
      want[0] = sum(sum(wv[0], deriv(bf, 0), h * g[1]), deriv(bf, 1), -h * g[0]);
    }
    CHECK_OK(fcl_spectral_buoyancy(s, sc, g, h, om));
    EXPECT("buoyancy", om, want);
    g[wall] = 0;
    g[(wall + 1) % DIM] = 1;
    CHECK_STATUS(fcl_spectral_buoyancy(s, sc, g, h, om), FCL_ERR_INVALID_ARGUMENT,
                 "the gravity must be normal to the walls");
  }
  /* wrong conditions on an output or input field */
  all_bc(ds, w, FCL_BC_DIRICHLET);
  {
    fcl_field *bad = NULL;
    CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "all-dirichlet", bc->dim, dt, &bad));
    CHECK_STATUS(fcl_spectral_biot_savart(s, om, bad), FCL_ERR_INVALID_ARGUMENT,
                 "field 'all-dirichlet' is Dirichlet at the walls");
    if (bc->dim == 3)
      CHECK_STATUS(fcl_spectral_biot_savart(s, bad, u), FCL_ERR_INVALID_ARGUMENT,
                   "not those of a vector with a curl");
    fcl_field_destroy(&bad);
  }
done:
  fcl_spectral_destroy(&s);
  fcl_field_destroy(&om);
  fcl_field_destroy(&u);
  fcl_field_destroy(&sc);
  fcl_field_destroy(&ds);
  fcl_topology_destroy(&t);
}

static void run(env *e) {
  LEN[0] = 2.0, LEN[1] = 3.0, LEN[2] = 2.5;
  /* walls along x on slabs and pencils (any ranks), along y on 3D slabs, along z on pencils
   * 1 x 2 x 1, elsewhere on one rank; the last axis has a multiple of 4 points (fftw-mpi's
   * split). VkFFT transforms walled y and z of 2^k + 1 points by its mirrored pass (9, 17; both
   * directions of a component in one pass, so an error shows in every operator), the others
   * (13, 11) through the extended field, and x always so. */
  const box_case cases[] = {
      {2, 1u, {13, 16, 1}, 0, false}, {2, 2u, {16, 13, 1}, 0, true},  {2, 2u, {16, 9, 1}, 0, true},
      {2, 3u, {13, 11, 1}, 0, true},  {3, 2u, {12, 9, 8}, 0, false},  {3, 3u, {9, 11, 8}, 0, false},
      {3, 3u, {9, 17, 8}, 0, false},  {3, 6u, {8, 9, 17}, 0, true},   {3, 4u, {8, 12, 9}, 0, true},
      {3, 1u, {9, 10, 12}, 2, false}, {3, 4u, {10, 12, 9}, 2, false},
  };
  fcl_fft_backend list[2];
  const int nb = backends(list);
  if (!e->fp64) fcl_test_skip_part(NULL, "the double-precision cases (no cl_khr_fp64)");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    const box_case *bc = &cases[i];
    if (bc->one_rank && e->size > 1) continue;
    if (bc->p1 && e->size % bc->p1) continue;
    if (bc->p1 && (bc->walled & 4u) && e->size != bc->p1) continue; /* z whole: 1 x p1 x 1 */
    for (int bi = 0; bi < nb; ++bi) {
      if (bc->p1 && list[bi] != FCL_FFT_VKFFT) continue; /* fftw-mpi takes slabs only */
      for (int prec = 0; prec < 2; ++prec) {
        const fcl_dtype dt = prec ? FCL_FLOAT64 : FCL_FLOAT32;
        if (dt == FCL_FLOAT64 && !e->fp64) continue;
        check_box(e, bc, list[bi], dt);
      }
    }
  }
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
