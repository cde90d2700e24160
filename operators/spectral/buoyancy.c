/* Buoyancy: the vorticity source curl(b g) of a force b g (Boussinesq), added over a step in
 * spectral space. */
#include <math.h>

#include "check.h"
#include "spectral_impl.h"

/* omega's wall conditions must be those of curl(b g): component c = g_e d_d b - g_d d_e b,
 * (c, d, e) cyclic (2D: g_y d_x b - g_x d_y b), each term with g nonzero. */
static fcl_status check_parities(fcl_spectral *s, const fcl_field *b, const double *g,
                                 const fcl_field *omega) {
  const unsigned pb = fcl__spectral_parity(s, b, 0), w = s->walled;
  const int nw = s->dim == 3 ? 3 : 1;
  for (int c = 0; c < nw; ++c) {
    const int d = s->dim == 3 ? (c + 1) % 3 : 0, e = s->dim == 3 ? (c + 2) % 3 : 1;
    /* the term g_e d_d b, then g_d d_e b */
    const double gs[2] = {g[e], g[d]};
    const int along[2] = {d, e};
    for (int t = 0; t < 2; ++t) {
      if (gs[t] == 0) continue;
      const unsigned want = pb ^ (w & 1u << along[t]);
      if (fcl__spectral_parity(s, omega, c) != want)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "buoyancy: component %d of '%s' has other wall conditions than its "
                         "source g_%d d_%d b (b '%s'): the gravity must be normal to the walls, "
                         "and omega's conditions those of a free-slip vorticity "
                         "(fcl_field_set_component_bc)",
                         c, fcl_field_name(omega), t ? d : e, along[t], fcl_field_name(b));
    }
  }
  return FCL_OK;
}

fcl_status fcl_spectral_buoyancy(fcl_spectral *s, const fcl_field *b, const double *g, double dt,
                                 fcl_field *omega) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(b, 2);
  FCL_CHECK_NULL(g, 3);
  FCL_CHECK_ARG(isfinite(dt), 4, "dt", "must be finite");
  FCL_CHECK_NULL(omega, 5);
  FCL_TRY(fcl__spectral_check_ncomp(b, 1, 2, "b"));
  FCL_TRY(fcl__spectral_check_ncomp(omega, s->dim == 3 ? 3 : 1, 5, "omega"));
  for (int a = 0; a < s->dim; ++a)
    if (!isfinite(g[a]))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (g): component %d is %g", a, g[a]);
  if (b == omega)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 5 (omega): must not be b ('%s')",
                     fcl_field_name(b));
  FCL_TRY(check_parities(s, b, g, omega));
  static const char *const names[3] = {"gx", "gy", "gz"};
  for (int a = 0; a < s->dim; ++a)
    FCL_TRY(fcl__spectral_set_real(s, s->buoyancy_params, names[a], dt * g[a]));
  FCL_TRY(fcl_fft_forward(s->fft, b, 0, 0));
  FCL_TRY(fcl_fft_forward_components(s->fft, omega, 1));
  FCL_TRY(fcl__spectral_run(s, s->buoyancy, s->buoyancy_params));
  return fcl_fft_backward_components(s->fft, 1, omega);
}
