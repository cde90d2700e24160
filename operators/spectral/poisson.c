/* Poisson, Biot-Savart (alone, or after the diffusion of the vorticity in the same spectral
 * pass) and the divergence-free projection: forward transforms, one pointwise kernel over the
 * slots, backward transforms. */
#include <math.h>

#include "check.h"
#include "spectral_impl.h"

fcl_status fcl_spectral_poisson(fcl_spectral *s, const fcl_field *rhs, fcl_field *psi) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(rhs, 2);
  FCL_CHECK_NULL(psi, 3);
  FCL_TRY(fcl__spectral_check_ncomp(psi, fcl_field_ncomp(rhs), 3, "psi"));
  for (int c = 0; c < fcl_field_ncomp(rhs); ++c)
    FCL_TRY(fcl__spectral_check_parity(s, psi, c, fcl__spectral_parity(s, rhs, c), 3, "psi"));
  for (int c = 0; c < fcl_field_ncomp(rhs); ++c) {
    FCL_TRY(fcl_fft_forward(s->fft, rhs, c, 0));
    FCL_TRY(fcl__spectral_run(s, s->poisson, NULL));
    FCL_TRY(fcl_fft_backward(s->fft, 0, psi, c));
  }
  return FCL_OK;
}

/* u's wall conditions must be those of the velocity of omega (u = curl psi, psi with omega's),
 * and a uniform velocity can only be added to components even about every wall. */
static fcl_status check_velocity(fcl_spectral *s, const fcl_field *omega, int wpos,
                                 const fcl_field *u, int upos) {
  unsigned want[3];
  if (s->dim == 3) {
    FCL_TRY(fcl__spectral_curl_parity(s, omega, wpos, "omega", want));
  } else { /* (dy psi, -dx psi) */
    const unsigned w = fcl__spectral_parity(s, omega, 0);
    want[0] = w ^ (s->walled & 2u);
    want[1] = w ^ (s->walled & 1u);
  }
  for (int c = 0; c < s->dim; ++c) {
    FCL_TRY(fcl__spectral_check_parity(s, u, c, want[c], upos, "u"));
    if (want[c] && s->mean[c] != 0)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument %d (u): component %d of field '%s' is Dirichlet at a wall, "
                       "but the plan's mean velocity (fcl_spectral_set_mean_velocity) has %g "
                       "there; a flow through a wall",
                       upos, c, fcl_field_name(u), s->mean[c]);
  }
  return FCL_OK;
}

fcl_status fcl_spectral_biot_savart(fcl_spectral *s, const fcl_field *omega, fcl_field *u) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(omega, 2);
  FCL_CHECK_NULL(u, 3);
  FCL_TRY(fcl__spectral_check_ncomp(omega, s->dim == 3 ? 3 : 1, 2, "omega"));
  FCL_TRY(fcl__spectral_check_ncomp(u, s->dim, 3, "u"));
  if (omega == u)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 3 (u): must not be the vorticity "
                     "field '%s'",
                     fcl_field_name(omega));
  FCL_TRY(check_velocity(s, omega, 2, u, 3));
  FCL_TRY(fcl_fft_forward_components(s->fft, omega, 0));
  FCL_TRY(fcl__spectral_run(s, s->biot_savart, s->biot_savart_params));
  FCL_TRY(fcl_fft_backward_components(s->fft, 0, u));
  return FCL_OK;
}

fcl_status fcl_spectral_diffuse_biot_savart(fcl_spectral *s, fcl_field *omega, double nu, double dt,
                                            fcl_field *u) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(omega, 2);
  FCL_CHECK_ARG(isfinite(nu) && nu >= 0, 3, "nu", "must be finite and >= 0");
  FCL_CHECK_ARG(isfinite(dt) && dt >= 0, 4, "dt", "must be finite and >= 0");
  FCL_CHECK_NULL(u, 5);
  const int nw = s->dim == 3 ? 3 : 1;
  FCL_TRY(fcl__spectral_check_ncomp(omega, nw, 2, "omega"));
  FCL_TRY(fcl__spectral_check_ncomp(u, s->dim, 5, "u"));
  if (omega == u)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 5 (u): must not be the vorticity "
                     "field '%s'",
                     fcl_field_name(omega));
  FCL_TRY(check_velocity(s, omega, 2, u, 5));
  FCL_TRY(fcl__spectral_set_real(s, s->diffuse_biot_savart_params, "nu_dt", nu * dt));
  FCL_TRY(fcl_fft_forward_components(s->fft, omega, 0));
  FCL_TRY(fcl__spectral_run(s, s->diffuse_biot_savart, s->diffuse_biot_savart_params));
  FCL_TRY(fcl_fft_backward_components(s->fft, 0, omega));
  FCL_TRY(fcl_fft_backward_components(s->fft, nw, u));
  return FCL_OK;
}

fcl_status fcl_spectral_project(fcl_spectral *s, fcl_field *u) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(u, 2);
  FCL_TRY(fcl__spectral_check_ncomp(u, s->dim, 2, "u"));
  /* the divergence's terms d_a u_a must have one parity */
  const unsigned first = fcl__spectral_parity(s, u, 0) ^ (s->walled & 1u);
  for (int a = 1; a < s->dim; ++a)
    if ((fcl__spectral_parity(s, u, a) ^ (s->walled & 1u << a)) != first)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument 2 (u): the wall conditions of field '%s' are not those of a "
                       "velocity (at a wall: the normal component Dirichlet, the tangential "
                       "ones Neumann); fcl_field_set_component_bc",
                       fcl_field_name(u));
  FCL_TRY(fcl_fft_forward_components(s->fft, u, 0));
  FCL_TRY(fcl__spectral_run(s, s->project, NULL));
  FCL_TRY(fcl_fft_backward_components(s->fft, 0, u));
  return FCL_OK;
}
