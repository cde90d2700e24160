/* FFT plans on 1, 2 or 4 ranks (run under mpirun), every built-in backend, float and double, in
 * FFTW's manner (libbench2/verify-lib.c): forward transforms equal a serial FFTW transform of the
 * gathered data (so VkFFT is checked against FFTW, and distributed layouts against the
 * documented one); an impulse transforms to the analytic phase ramp (impulse and shift);
 * transforms are linear; backward after forward gives N times the input and leaves ghosts
 * alone; the components of a field at once equal one at a time. Bad plans get errors naming
 * what is wrong. */
#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fft_test_util.h"

/* Deterministic data in [-1, 1) from the global index, the same on every decomposition. */
static double noise(const int64_t *g, unsigned salt) {
  uint64_t h = (uint64_t)(g[0] + 1000 * g[1] + 1000000 * g[2]) * 0x9E3779B97F4A7C15ull + salt;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  return (double)(h >> 11) / 9007199254740992.0 * 2 - 1;
}

typedef struct {
  const fcl_domain *d;
  unsigned salt;
  int64_t impulse[3]; /* salt 0: a unit impulse here */
} data_spec;

static void global_index(const fcl_domain *d, const double *x, int64_t *g) {
  for (int a = 0; a < 3; ++a)
    g[a] = a < d->dim ? llround((x[a] - d->origin[a]) / fcl_domain_spacing(d, a)) : 0;
}

static void init_data(void *user, const double *x, double *v) {
  const data_spec *s = user;
  int64_t g[3];
  global_index(s->d, x, g);
  if (s->salt == 0)
    v[0] = g[0] == s->impulse[0] && g[1] == s->impulse[1] && g[2] == s->impulse[2] ? 1 : 0;
  else
    v[0] = noise(g, s->salt);
}

/* Serial reference: FFTW (double) of the whole grid, as complex [mz][my][mx]. */
static double complex *reference(const fcl_domain *d, unsigned salt) {
  int64_t n[3] = {1, 1, 1};
  for (int a = 0; a < d->dim; ++a) n[a] = d->resolution[a];
  int64_t nc = n[0] / 2 + 1;
  double *in = fftw_alloc_real((size_t)(n[0] * n[1] * n[2]));
  double complex *out = fftw_alloc_complex((size_t)(nc * n[1] * n[2]));
  for (int64_t k = 0; k < n[2]; ++k)
    for (int64_t j = 0; j < n[1]; ++j)
      for (int64_t i = 0; i < n[0]; ++i) {
        int64_t g[3] = {i, j, k};
        in[(k * n[1] + j) * n[0] + i] = noise(g, salt);
      }
  int dims[3] = {(int)n[2], (int)n[1], (int)n[0]};
  fftw_plan p = d->dim == 3
                    ? fftw_plan_dft_r2c(3, dims, in, (fftw_complex *)out, FFTW_ESTIMATE)
                    : fftw_plan_dft_r2c(2, dims + 1, in, (fftw_complex *)out, FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  fftw_free(in);
  return out;
}

static double complex slot_value(const double *slot, size_t i) {
  return slot[2 * i] + I * slot[2 * i + 1];
}

static void check_plan(env *e, fcl_topology *t, fcl_dtype dt, fcl_fft_backend b) {
  const fcl_domain *d = fcl_topology_domain(t);
  const char *bn = fcl_fft_backend_name(b);
  fcl_field *f = NULL, *g = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "f", 1, dt, &f));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "g", 1, dt, &g));
  fcl_fft *fft = NULL;
  fcl_status st = fcl_fft_create(f, b, 2, e->pool, &fft);
  const bool pencils = d->dim == 3 && fcl_topology_procs(t)[1] > 1;
  bool fftw_fits = !pencils && fftw_split_matches(d->resolution[d->dim - 1], e->size);
  if (b == FCL_FFT_FFTW && !fftw_fits) { /* fftw-mpi cannot take this split: a clear error */
    fcl_test_check_status(__FILE__, __LINE__, "fcl_fft_create(fftw)", st, FCL_ERR_NOT_SUPPORTED,
                          pencils ? "fftw-mpi takes slabs only" : "fftw-mpi splits axis");
    fcl_field_destroy(&f);
    fcl_field_destroy(&g);
    return;
  }
  CHECK_OK(st);
  if (!fft) return;
  if (pencils)
    CHECKF(strstr(fcl_fft_description(fft), "pencils") != NULL, "%s: pencil plan described as %s",
           bn, fcl_fft_description(fft));
  const fcl_fft_layout *l = fcl_fft_layout_of(fft);
  /* the query (what a plan would have, nothing allocated) agrees with the plan, whose layout
   * the transforms below are checked through */
  fcl_fft_layout qy;
  fcl_fft_backend resolved = (fcl_fft_backend)-1;
  CHECK_OK(fcl_fft_layout_query(f, b, &qy, &resolved));
  CHECKF(resolved == fcl_fft_backend_used(fft) && qy.count == l->count && qy.bytes == l->bytes &&
             qy.padded_reals == l->padded_reals && qy.pitch == l->pitch &&
             !memcmp(qy.global, l->global, sizeof qy.global) &&
             !memcmp(qy.local, l->local, sizeof qy.local) &&
             !memcmp(qy.offset, l->offset, sizeof qy.offset) &&
             !memcmp(qy.order, l->order, sizeof qy.order),
         "%s: fcl_fft_layout_query differs from the plan's layout or backend", bn);
  int64_t n[3] = {1, 1, 1}, total = 1;
  for (int a = 0; a < d->dim; ++a) n[a] = d->resolution[a], total *= n[a];
  const double tol = fft_tolerance(dt);

  /* Forward of random data against the serial reference. */
  data_spec s1 = {d, 7, {0, 0, 0}}, s2 = {d, 11, {0, 0, 0}};
  CHECK_OK(fcl_field_init(f, init_data, &s1));
  CHECK_OK(fcl_fft_forward(fft, f, 0, 0));
  double *x1 = read_slot(e, fft, 0, dt);
  double complex *ref = reference(d, 7);
  double err = 0, scale = 0;
  for (size_t i = 0; i < l->count; ++i) {
    int64_t m[3];
    slot_index(l, i, m);
    double complex r = ref[(m[2] * n[1] + m[1]) * (n[0] / 2 + 1) + m[0]];
    err = fmax(err, cabs(slot_value(x1, i) - r));
    scale = fmax(scale, cabs(r));
  }
  CHECKF(err <= tol * fmax(scale, 1),
         "%s %s %lldx%lldx%lld: forward differs from serial FFTW "
         "by %g (max %g)",
         bn, fcl_dtype_cl_name(dt), (long long)n[0], (long long)n[1], (long long)n[2], err, scale);

  /* Linearity: F(2 x1 - 3 x2) = 2 F(x1) - 3 F(x2). */
  CHECK_OK(fcl_field_init(g, init_data, &s2));
  CHECK_OK(fcl_fft_forward(fft, g, 0, 1));
  double *x2 = read_slot(e, fft, 1, dt);
  size_t local = (size_t)(fcl_topology_local_resolution(t)[0] *
                          fcl_topology_local_resolution(t)[1] *
                          fcl_topology_local_resolution(t)[2]);
  size_t bytes = local * fcl_dtype_size(dt);
  char *h1 = malloc(bytes), *h2 = malloc(bytes);
  CHECK_OK(fcl_field_read(f, 0, false, h1));
  CHECK_OK(fcl_field_read(g, 0, false, h2));
  for (size_t i = 0; i < local; ++i) {
    if (dt == FCL_FLOAT64)
      ((double *)h1)[i] = 2 * ((double *)h1)[i] - 3 * ((double *)h2)[i];
    else
      ((float *)h1)[i] = 2 * ((float *)h1)[i] - 3 * ((float *)h2)[i];
  }
  CHECK_OK(fcl_field_write(g, 0, false, h1));
  CHECK_OK(fcl_fft_forward(fft, g, 0, 1));
  double *x3 = read_slot(e, fft, 1, dt);
  err = 0;
  for (size_t i = 0; i < l->count; ++i)
    err = fmax(err, cabs(slot_value(x3, i) - (2 * slot_value(x1, i) - 3 * slot_value(x2, i))));
  CHECKF(err <= 5 * tol * fmax(scale, 1), "%s %s: not linear (%g)", bn, fcl_dtype_cl_name(dt), err);

  /* Backward after forward: N times the input, ghosts untouched. */
  CHECK_OK(fcl_field_init(f, init_data, &s1));
  const size_t *p = fcl_field_padded_shape(g);
  size_t padded = p[0] * p[1] * p[2];
  double *sentinel = malloc(padded * sizeof(double));
  for (size_t i = 0; i < padded; ++i) {
    if (dt == FCL_FLOAT64)
      sentinel[i] = -123.0;
    else
      ((float *)sentinel)[i] = -123.0f;
  }
  CHECK_OK(fcl_field_write(g, 0, true, sentinel));
  CHECK_OK(fcl_fft_forward(fft, f, 0, 0));
  CHECK_OK(fcl_fft_backward(fft, 0, g, 0));
  double *back = malloc(padded * sizeof(double));
  CHECK_OK(fcl_field_read(g, 0, true, back));
  CHECK_OK(fcl_field_read(f, 0, false, h1));
  const int *gh = fcl_topology_origin(t); /* interior point 0 in the padded storage */
  const int64_t *ln = fcl_topology_local_resolution(t);
  size_t ghosts_changed = 0, at = 0;
  err = 0;
  for (size_t k = 0; k < p[2]; ++k)
    for (size_t j = 0; j < p[1]; ++j)
      for (size_t i = 0; i < p[0]; ++i) {
        size_t q = (k * p[1] + j) * p[0] + i;
        double v = dt == FCL_FLOAT64 ? back[q] : ((float *)back)[q];
        bool inside = (int64_t)i >= gh[0] && (int64_t)i < gh[0] + ln[0] && (int64_t)j >= gh[1] &&
                      (int64_t)j < gh[1] + ln[1] && (int64_t)k >= gh[2] &&
                      (int64_t)k < gh[2] + ln[2];
        if (!inside) {
          ghosts_changed += v != -123.0;
          continue;
        }
        double want = dt == FCL_FLOAT64 ? ((double *)h1)[at] : ((float *)h1)[at];
        err = fmax(err, fabs(v / (double)total - want));
        ++at;
      }
  CHECKF(err <= tol, "%s %s: backward(forward(x)) / N differs from x by %g", bn,
         fcl_dtype_cl_name(dt), err);
  CHECKF(ghosts_changed == 0, "%s: %zu ghost values changed by the backward transform", bn,
         ghosts_changed);

  /* In place: the padded real form in a slot gives the out-of-place result, and back. */
  {
    /* rows of 2 (nx / 2 + 1) reals, or twice the pitch where a VkFFT plan on one rank pads
     * them (a multiple of 8 complex values) */
    const bool pitched = b == FCL_FFT_VKFFT && !fcl_fft_distributed(fft);
    size_t row = (size_t)ln[0], rows = local / row,
           prow = 2 * (size_t)(pitched ? l->pitch : n[0] / 2 + 1);
    CHECKF(!pitched || (l->pitch % 8 == 0 && l->pitch >= n[0] / 2 + 1 && l->pitch < n[0] / 2 + 9),
           "%s: pitch %lld for rows of %lld values", bn, (long long)l->pitch,
           (long long)(n[0] / 2 + 1));
    size_t rs = fcl_dtype_size(dt), slot_bytes = l->padded_reals * rs;
    CHECK(l->padded_reals == prow * rows);
    char *pad = calloc(l->padded_reals + 1, rs), *got = calloc(l->padded_reals + 1, rs);
    for (size_t r = 0; r < rows; ++r) memcpy(pad + r * prow * rs, h1 + r * row * rs, row * rs);
    fcl_mem *slot = fcl_fft_slot(fft, 1);
    CHECK_OK(fcl_mem_write(e->q, slot, 0, slot_bytes, pad, FCL_BLOCKING, 0, NULL, NULL));
    CHECK_OK(fcl_fft_forward_inplace(fft, 1));
    double *xi = read_slot(e, fft, 1, dt);
    err = 0;
    for (size_t i = 0; i < l->count; ++i)
      err = fmax(err, cabs(slot_value(xi, i) - slot_value(x1, i)));
    CHECKF(err <= tol * fmax(scale, 1), "%s %s: in-place forward differs from out-of-place by %g",
           bn, fcl_dtype_cl_name(dt), err);
    CHECK_OK(fcl_fft_backward_inplace(fft, 1));
    CHECK_OK(fcl_mem_read(e->q, slot, 0, slot_bytes, got, FCL_BLOCKING, 0, NULL, NULL));
    err = 0;
    for (size_t r = 0; r < rows; ++r)
      for (size_t i = 0; i < row; ++i) {
        size_t q = r * prow + i, a = r * row + i;
        double v = dt == FCL_FLOAT64 ? ((double *)got)[q] : ((float *)got)[q];
        double want = dt == FCL_FLOAT64 ? ((double *)h1)[a] : ((float *)h1)[a];
        err = fmax(err, fabs(v / (double)total - want));
      }
    CHECKF(err <= tol, "%s %s: in-place round trip off by %g", bn, fcl_dtype_cl_name(dt), err);
    CHECK_STATUS(fcl_fft_forward_inplace(fft, 2), FCL_ERR_INVALID_ARGUMENT, "slot");
    free(xi);
    free(pad);
    free(got);
  }

  /* Impulse at a point: the transform is exp(-2 pi i m . x0 / n) (impulse and shift). */
  data_spec s0 = {d, 0, {n[0] / 3, n[1] - 2, d->dim == 3 ? n[2] / 2 + 1 : 0}};
  CHECK_OK(fcl_field_init(f, init_data, &s0));
  CHECK_OK(fcl_fft_forward(fft, f, 0, 0));
  double *x0 = read_slot(e, fft, 0, dt);
  err = 0;
  for (size_t i = 0; i < l->count; ++i) {
    int64_t m[3];
    slot_index(l, i, m);
    double phase = 0;
    for (int a = 0; a < 3; ++a) phase += 2 * PI * (double)(m[a] * s0.impulse[a]) / (double)n[a];
    err = fmax(err, cabs(slot_value(x0, i) - cexp(-I * phase)));
  }
  CHECKF(err <= tol, "%s %s: shifted impulse off the phase ramp by %g", bn, fcl_dtype_cl_name(dt),
         err);
  free(x0);
  free(x1);
  free(x2);
  free(x3);
  free(h1);
  free(h2);
  free(sentinel);
  free(back);
  fftw_free(ref);
  fcl_fft_destroy(&fft);
  fcl_field_destroy(&f);
  fcl_field_destroy(&g);
}

static void init_three(void *user, const double *x, double *v) {
  const data_spec *s = user;
  int64_t g[3];
  global_index(s->d, x, g);
  for (int c = 0; c < 3; ++c) v[c] = noise(g, s->salt + (unsigned)c);
}

/* The components of a field at once (one all-to-all per transpose across ranks) give bit for
 * bit what one component at a time gives, both ways; too few slots is an error. */
static void check_components(env *e, fcl_topology *t, fcl_dtype dt) {
  if (!fcl_fft_backend_available(FCL_FFT_VKFFT)) return;
  const fcl_domain *d = fcl_topology_domain(t);
  fcl_field *f = NULL, *g = NULL, *h = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "f3", 3, dt, &f));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "g3", 3, dt, &g));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "h3", 3, dt, &h));
  data_spec spec = {d, 21, {0, 0, 0}};
  CHECK_OK(fcl_field_init(f, init_three, &spec));
  fcl_fft *fft = NULL;
  CHECK_OK(fcl_fft_create(f, FCL_FFT_VKFFT, 6, e->pool, &fft));
  if (fft) {
    const fcl_fft_layout *l = fcl_fft_layout_of(fft);
    CHECK_OK(fcl_fft_forward_components(fft, f, 0));
    for (int c = 0; c < 3; ++c) CHECK_OK(fcl_fft_forward(fft, f, c, 3 + c));
    for (int c = 0; c < 3; ++c) {
      double *batch = read_slot(e, fft, c, dt), *one = read_slot(e, fft, 3 + c, dt);
      CHECKF(!memcmp(batch, one, 2 * l->count * sizeof *batch),
             "%s: component %d forward in a batch differs from alone", fcl_dtype_cl_name(dt), c);
      free(batch);
      free(one);
    }
    CHECK_OK(fcl_fft_backward_components(fft, 0, g));
    for (int c = 0; c < 3; ++c) CHECK_OK(fcl_fft_backward(fft, 3 + c, h, c));
    const int64_t *n = fcl_topology_local_resolution(t);
    const size_t bytes = (size_t)(n[0] * n[1] * n[2]) * fcl_dtype_size(dt);
    char *a = malloc(bytes), *b = malloc(bytes);
    for (int c = 0; a && b && c < 3; ++c) {
      CHECK_OK(fcl_field_read(g, c, false, a));
      CHECK_OK(fcl_field_read(h, c, false, b));
      CHECKF(!memcmp(a, b, bytes), "%s: component %d backward in a batch differs from alone",
             fcl_dtype_cl_name(dt), c);
    }
    free(a);
    free(b);
    CHECK_STATUS(fcl_fft_forward_components(fft, f, 4), FCL_ERR_INVALID_ARGUMENT,
                 "3 components and the plan 6 slots");
  }
  fcl_fft_destroy(&fft);
  fcl_field_destroy(&f);
  fcl_field_destroy(&g);
  fcl_field_destroy(&h);
}

static void check_errors(env *e) {
  fcl_field *f = NULL;
  /* Walls: along an axis split over ranks (slabs split z), or of 2 points; one condition on
   * both walls of an axis at the transform. */
  fcl_domain d = fcl_domain_periodic(3, 8, 1.0);
  d.bc[2][0] = d.bc[2][1] = FCL_BC_DIRICHLET;
  d.resolution[2] = e->size > 1 ? 8 : 2;
  int procs[3] = {1, 1, e->size};
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, procs, NULL, &t));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "walls", 1, FCL_FLOAT32, &f));
  fcl_fft *fft = NULL;
  CHECK_STATUS(fcl_fft_create(f, FCL_FFT_AUTO, 1, e->pool, &fft), FCL_ERR_NOT_SUPPORTED,
               e->size > 1 ? "walls along axis 2, which is split over" : "at least 3");
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
  d = fcl_domain_periodic(3, 8, 1.0);
  d.bc[1][0] = FCL_BC_DIRICHLET, d.bc[1][1] = FCL_BC_NEUMANN;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, procs, NULL, &t));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "mixed", 1, FCL_FLOAT32, &f));
  CHECK_OK(fcl_fft_create(f, FCL_FFT_AUTO, 1, e->pool, &fft));
  CHECK_STATUS(fcl_fft_forward(fft, f, 0, 0), FCL_ERR_NOT_SUPPORTED,
               "Dirichlet on the lower wall of axis 1 and Neumann on the upper one");
  CHECK_OK(fcl_field_set_component_bc(f, 0, 1, FCL_BC_NEUMANN, FCL_BC_NEUMANN));
  CHECK_OK(fcl_fft_forward(fft, f, 0, 0));
  fcl_fft_destroy(&fft);
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
  /* Walls along y of 9 points: VkFFT transforms them at their own size (its mirrored pass; the
   * layout holds 9 points there), FFTW through the mirror image (16); both plans' domain is the
   * mirror image's (wavenumbers, normalization) and the query gives the plan's layout. Mixed
   * walls are refused there too, and in-place transforms on walled plans. */
  d = fcl_domain_periodic(3, 8, 1.0);
  d.bc[1][0] = d.bc[1][1] = FCL_BC_DIRICHLET;
  d.resolution[1] = 9;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, procs, NULL, &t));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "walled", 1, FCL_FLOAT32, &f));
  fcl_fft_backend list[2];
  for (int bi = 0, nb = backends(list); bi < nb; ++bi) {
    fcl_fft_layout query;
    fcl_fft_backend resolved;
    CHECK_OK(fcl_fft_layout_query(f, list[bi], &query, &resolved));
    CHECK_OK(fcl_fft_create(f, list[bi], 1, e->pool, &fft));
    const fcl_fft_layout *l = fcl_fft_layout_of(fft);
    const int64_t want = resolved == FCL_FFT_VKFFT ? 9 : 16;
    CHECKF(query.count == l->count && query.bytes == l->bytes && query.pitch == l->pitch &&
               !memcmp(query.global, l->global, sizeof query.global) &&
               !memcmp(query.local, l->local, sizeof query.local) &&
               !memcmp(query.order, l->order, sizeof query.order),
           "%s: walled layout query differs from the plan's", fcl_fft_backend_name(resolved));
    CHECKF(l->global[1] == want, "%s: %lld spectral points along the walls, expected %lld",
           fcl_fft_backend_name(resolved), (long long)l->global[1], (long long)want);
    const fcl_domain *sd = fcl_fft_domain(fft);
    CHECKF(sd->resolution[1] == 16 && fabs(sd->length[1] - 2.0) < 1e-15 &&
               sd->bc[1][0] == FCL_BC_PERIODIC,
           "%s: the plan's domain is not the mirror image (%lld points over %g)",
           fcl_fft_backend_name(resolved), (long long)sd->resolution[1], sd->length[1]);
    CHECK_STATUS(fcl_fft_forward_inplace(fft, 0), FCL_ERR_NOT_SUPPORTED,
                 "in-place transforms take periodic plans");
    CHECK_OK(fcl_field_set_component_bc(f, 0, 1, FCL_BC_DIRICHLET, FCL_BC_NEUMANN));
    CHECK_STATUS(fcl_fft_forward(fft, f, 0, 0), FCL_ERR_NOT_SUPPORTED,
                 "Dirichlet on the lower wall of axis 1 and Neumann on the upper one");
    CHECK_OK(fcl_field_set_component_bc(f, 0, 1, FCL_BC_DIRICHLET, FCL_BC_DIRICHLET));
    fcl_fft_destroy(&fft);
  }
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
  /* 1D. */
  d = fcl_domain_periodic(1, 16, 1.0);
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "line", 1, FCL_FLOAT32, &f));
  CHECK_STATUS(fcl_fft_create(f, FCL_FFT_AUTO, 1, e->pool, &fft), FCL_ERR_NOT_SUPPORTED, "1D");
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
  /* Axis 0 split (neither slabs nor pencils). */
  if (e->size > 1) {
    d = fcl_domain_periodic(3, 8, 1.0);
    int xsplit[3] = {e->size, 1, 1};
    CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, xsplit, NULL, &t));
    CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "pencils", 1, FCL_FLOAT32, &f));
    CHECK_STATUS(fcl_fft_create(f, FCL_FFT_AUTO, 1, e->pool, &fft), FCL_ERR_NOT_SUPPORTED,
                 "need axis 0 whole");
    fcl_field_destroy(&f);
    fcl_topology_destroy(&t);
  }
  /* Pencils whose row transpose would split the 2 complex points of x over 4 ranks. */
  if (e->size == 4) {
    t = pencil_topology(3, (int64_t[]){2, 8, 8}, NULL, 4);
    CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "thin", 1, FCL_FLOAT32, &f));
    CHECK_STATUS(fcl_fft_create(f, FCL_FFT_AUTO, 1, e->pool, &fft), FCL_ERR_NOT_SUPPORTED,
                 "complex points of axis 0 over 4 ranks");
    fcl_field_destroy(&f);
    fcl_topology_destroy(&t);
  }
  /* Bad arguments and a field of another topology. */
  int64_t n[3] = {8, 8, 8};
  t = slab_topology(3, n, NULL);
  fcl_topology *other = slab_topology(3, (int64_t[]){8, 8, 12}, NULL);
  fcl_field *g = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "f", 1, FCL_FLOAT32, &f));
  CHECK_OK(fcl_field_create(other, e->ctx, e->q, e->pool, "elsewhere", 1, FCL_FLOAT32, &g));
  CHECK_STATUS(fcl_fft_create(f, FCL_FFT_AUTO, 0, e->pool, &fft), FCL_ERR_INVALID_ARGUMENT,
               "nslots");
  CHECK_OK(fcl_fft_create(f, FCL_FFT_AUTO, 1, e->pool, &fft));
  CHECK_STATUS(fcl_fft_forward(fft, g, 0, 0), FCL_ERR_INVALID_ARGUMENT, "elsewhere");
  CHECK_STATUS(fcl_fft_forward(fft, f, 0, 1), FCL_ERR_INVALID_ARGUMENT, "slot");
  CHECK_STATUS(fcl_fft_backward(fft, 0, f, 2), FCL_ERR_INVALID_ARGUMENT, "component");
  fcl_fft_backend b;
  CHECK_STATUS(fcl_fft_backend_parse("cufft", &b), FCL_ERR_INVALID_ARGUMENT, "cufft");
  CHECK_OK(fcl_fft_backend_parse("fftw", &b));
  CHECK(b == FCL_FFT_FFTW);
  fcl_fft_destroy(&fft);
  fcl_field_destroy(&f);
  fcl_field_destroy(&g);
  fcl_topology_destroy(&t);
  fcl_topology_destroy(&other);
}

/* VkFFT's kernels go to flowcl's program cache: planning adds entries once, and a second plan
 * loads them (compiles nothing) and transforms correctly (round trip). */
static void check_vkfft_cache(env *e) {
  if (!fcl_fft_backend_available(FCL_FFT_VKFFT)) return;
  const char *was = getenv("FLOWCL_CACHE_DIR");
  char *old = was ? strdup(was) : NULL;
  setenv("FLOWCL_CACHE_DIR", e->dir, 1);
  fcl_topology *t = slab_topology(3, (int64_t[]){12, 10, 8}, NULL);
  fcl_field *f = NULL, *g = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "f", 1, FCL_FLOAT32, &f));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "g", 1, FCL_FLOAT32, &g));
  const fcl_domain *d = fcl_topology_domain(t);
  data_spec s1 = {d, 5, {0, 0, 0}};
  CHECK_OK(fcl_field_init(f, init_data, &s1));
  const int64_t *ln = fcl_topology_local_resolution(t);
  size_t local = (size_t)(ln[0] * ln[1] * ln[2]);
  float *a = malloc(local * sizeof *a), *b = malloc(local * sizeof *b);
  CHECK_OK(fcl_field_read(f, 0, false, a));
  int counts[3];
  uint64_t compiled[2];
  for (int round = 0; round < 2; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (round == 0) counts[0] = fcl_test_count_files(e->dir, ".clbin");
    fcl_fft *fft = NULL;
    const uint64_t before = fcl_count_programs_compiled();
    CHECK_OK(fcl_fft_create(f, FCL_FFT_VKFFT, 1, e->pool, &fft));
    compiled[round] = fcl_count_programs_compiled() - before;
    MPI_Barrier(MPI_COMM_WORLD);
    counts[round + 1] = fcl_test_count_files(e->dir, ".clbin");
    if (!fft) break;
    CHECK_OK(fcl_fft_forward(fft, f, 0, 0));
    CHECK_OK(fcl_fft_backward(fft, 0, g, 0));
    CHECK_OK(fcl_field_read(g, 0, false, b));
    double err = 0;
    for (size_t i = 0; i < local; ++i) err = fmax(err, fabs(b[i] / (12.0 * 10 * 8) - a[i]));
    CHECKF(err <= 1e-5, "VkFFT plan %d (cache %s): round trip off by %g", round,
           round ? "hit" : "miss", err);
    fcl_fft_destroy(&fft);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECKF(counts[1] > counts[0], "VkFFT planning stored no kernel (%d -> %d cache entries)",
         counts[0], counts[1]);
  CHECKF(counts[2] == counts[1], "a second VkFFT plan compiled again (%d -> %d entries)", counts[1],
         counts[2]);
  CHECKF(compiled[1] == 0, "a second VkFFT plan compiled %llu programs (the first %llu)",
         (unsigned long long)compiled[1], (unsigned long long)compiled[0]);
  free(a);
  free(b);
  fcl_field_destroy(&f);
  fcl_field_destroy(&g);
  fcl_topology_destroy(&t);
  if (old)
    setenv("FLOWCL_CACHE_DIR", old, 1);
  else
    unsetenv("FLOWCL_CACHE_DIR");
  free(old);
}

/* Whether a VkFFT plan for fields of t runs flowcl's column pass (its description says so);
 * expect: the status fcl_fft_create must return. */
static bool plan_has_columns(env *e, fcl_topology *t, fcl_status expect) {
  fcl_field *f = NULL;
  fcl_fft *fft = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "f", 1, FCL_FLOAT32, &f));
  fcl_status st = fcl_fft_create(f, FCL_FFT_VKFFT, 1, e->pool, &fft);
  if (expect != FCL_OK)
    fcl_test_check_status(__FILE__, __LINE__, "fcl_fft_create", st, expect, "FLOWCL_FFT_COLUMNS");
  else
    CHECK_OK(st);
  bool columns = fft && strstr(fcl_fft_description(fft), "column") != NULL;
  fcl_fft_destroy(&fft);
  fcl_field_destroy(&f);
  return columns;
}

/* flowcl's own pass along z (FLOWCL_FFT_COLUMNS=on): 8 = 4 x 2, 32 = 8 x 4, 64 = 8 x 8 and
 * 512 = 32 x 16 points along z on one rank; 8 on slabs and 32 on pencils (even numbers of ranks), against the serial FFTW
 * reference as every plan (forward, backward, in place; the three components at once on the
 * first grid); off leaves z to VkFFT; a value that is none of auto, on, off is an error naming
 * the variable. The caller's FLOWCL_FFT_COLUMNS is put back. */
static void check_columns(env *e) {
  if (!fcl_fft_backend_available(FCL_FFT_VKFFT)) return;
  const int64_t grids[4][3] = {{16, 12, 8}, {10, 8, 32}, {8, 4, 64}, {6, 2, 512}};
  const char *was = getenv("FLOWCL_FFT_COLUMNS");
  char saved[64] = "";
  if (was) snprintf(saved, sizeof saved, "%s", was);
  setenv("FLOWCL_FFT_COLUMNS", "on", 1);
  for (int gi = 0; gi < 5; ++gi) {
    const bool pencils = gi == 4;
    if (pencils ? e->size == 1 || e->size % 2 : gi > 0 && e->size > 1)
      continue; /* several ranks: one grid of slabs and one of pencils (oversubscribed ranks) */
    const int64_t *n = pencils ? (const int64_t[]){16, 8, 32} : grids[gi];
    fcl_topology *t = pencils ? pencil_topology(3, n, NULL, 2) : slab_topology(3, n, NULL);
    if (!t) continue;
    CHECKF(plan_has_columns(e, t, FCL_OK), "FLOWCL_FFT_COLUMNS=on: no column pass for %lld points",
           (long long)n[2]);
    for (int prec = 0; prec < 2; ++prec) {
      fcl_dtype dt = prec ? FCL_FLOAT64 : FCL_FLOAT32;
      if (dt == FCL_FLOAT64 && !e->fp64) continue;
      check_plan(e, t, dt, FCL_FFT_VKFFT);
      if (gi == 0) check_components(e, t, dt);
    }
    fcl_topology_destroy(&t);
  }
  fcl_topology *t = slab_topology(3, grids[0], NULL);
  setenv("FLOWCL_FFT_COLUMNS", "off", 1);
  CHECKF(!plan_has_columns(e, t, FCL_OK), "FLOWCL_FFT_COLUMNS=off: a column pass");
  setenv("FLOWCL_FFT_COLUMNS", "sideways", 1);
  plan_has_columns(e, t, FCL_ERR_INVALID_ARGUMENT);
  if (was)
    setenv("FLOWCL_FFT_COLUMNS", saved, 1);
  else
    unsetenv("FLOWCL_FFT_COLUMNS");
  fcl_topology_destroy(&t);
}

static void run(env *e) {
  /* Powers of two, and odd sizes that split unevenly (and that fftw-mpi cannot always take). */
  const int64_t grids[4][3] = {{16, 12, 8}, {10, 9, 9}, {12, 10, 1}, {9, 11, 1}};
  fcl_fft_backend list[2];
  int nb = backends(list);
  CHECKF(nb > 0, "no FFT backend built in");
  for (int gi = 0; gi < 4; ++gi) {
    int dim = grids[gi][2] == 1 ? 2 : 3;
    fcl_topology *t = slab_topology(dim, grids[gi], NULL);
    if (!t) continue;
    for (int prec = 0; prec < 2; ++prec) {
      fcl_dtype dt = prec ? FCL_FLOAT64 : FCL_FLOAT32;
      if (dt == FCL_FLOAT64 && !e->fp64) continue;
      for (int bi = 0; bi < nb; ++bi) check_plan(e, t, dt, list[bi]);
      if (gi == 0) check_components(e, t, dt);
    }
    fcl_topology_destroy(&t);
  }
  /* Pencils (procs 1 x P1 x P2): 2 ranks as 1 x 2 x 1; 4 as 1 x 2 x 2, where {16, 6, 3} has
   * more ranks than points along z (slabs cannot take it), and as 1 x 4 x 1. */
  const int64_t pgrids[3][3] = {{16, 6, 3}, {10, 9, 9}, {16, 8, 4}};
  for (int gi = 0; e->size > 1 && e->size % 2 == 0 && gi < 3; ++gi) {
    int p1 = gi == 2 ? e->size : 2;
    if (e->size / p1 > 2) continue;
    fcl_topology *t = pencil_topology(3, pgrids[gi], NULL, p1);
    if (!t) continue;
    for (int prec = 0; prec < 2; ++prec) {
      fcl_dtype dt = prec ? FCL_FLOAT64 : FCL_FLOAT32;
      if (dt == FCL_FLOAT64 && !e->fp64) continue;
      for (int bi = 0; bi < nb; ++bi) check_plan(e, t, dt, list[bi]);
      check_components(e, t, dt);
    }
    fcl_topology_destroy(&t);
  }
  check_errors(e);
  check_vkfft_cache(e);
  check_columns(e);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, "fft", run); }
