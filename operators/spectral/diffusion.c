/* Spectral diffusion: exact integration of d f / dt = nu lap(f) over dt, per component. */
#include <math.h>

#include "check.h"
#include "spectral_impl.h"

fcl_status fcl_spectral_diffuse(fcl_spectral *s, fcl_field *f, double nu, double dt) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(f, 2);
  FCL_CHECK_ARG(isfinite(nu) && nu >= 0, 3, "nu", "must be finite and >= 0");
  FCL_CHECK_ARG(isfinite(dt) && dt >= 0, 4, "dt", "must be finite and >= 0");
  FCL_TRY(fcl__spectral_set_real(s, s->diffuse_params, "nu_dt", nu * dt));
  for (int c = 0; c < fcl_field_ncomp(f); ++c) {
    FCL_TRY(fcl_fft_forward(s->fft, f, c, 0));
    FCL_TRY(fcl__spectral_run(s, s->diffuse, s->diffuse_params));
    FCL_TRY(fcl_fft_backward(s->fft, 0, f, c));
  }
  return FCL_OK;
}
