/* Spectral derivatives and curl. */
#include "check.h"
#include "spectral_impl.h"

fcl_status fcl_spectral_derivative(fcl_spectral *s, const fcl_field *f, int comp, int axis,
                                   int order, fcl_field *df, int dcomp) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(f, 2);
  FCL_CHECK_ARG(axis >= 0 && axis < s->dim, 4, "axis", "must be an axis of the domain");
  FCL_CHECK_ARG(order >= 1 && order <= 8, 5, "order", "must be 1 to 8");
  FCL_CHECK_NULL(df, 6);
  FCL_CHECK_ARG(comp >= 0 && comp < fcl_field_ncomp(f), 3, "comp", "not a component of f");
  FCL_CHECK_ARG(dcomp >= 0 && dcomp < fcl_field_ncomp(df), 7, "dcomp", "not a component of df");
  const unsigned flip = order % 2 ? s->walled & 1u << axis : 0;
  FCL_TRY(
      fcl__spectral_check_parity(s, df, dcomp, fcl__spectral_parity(s, f, comp) ^ flip, 6, "df"));
  if (!s->empty) {
    FCL_TRY(fcl_param_set_i32(s->derivative_params, "axis", axis));
    FCL_TRY(fcl_param_set_i32(s->derivative_params, "order", order));
  }
  FCL_TRY(fcl_fft_forward(s->fft, f, comp, 0));
  FCL_TRY(fcl__spectral_run(s, s->derivative, s->derivative_params));
  return fcl_fft_backward(s->fft, 0, df, dcomp);
}

fcl_status fcl_spectral_curl(fcl_spectral *s, const fcl_field *u, fcl_field *w) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(u, 2);
  FCL_CHECK_NULL(w, 3);
  FCL_TRY(fcl__spectral_check_ncomp(u, s->dim, 2, "u"));
  FCL_TRY(fcl__spectral_check_ncomp(w, s->dim == 3 ? 3 : 1, 3, "w"));
  if (u == w)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 3 (w): must not be the velocity "
                     "field '%s'",
                     fcl_field_name(u));
  unsigned want[3];
  FCL_TRY(fcl__spectral_curl_parity(s, u, 2, "u", want));
  for (int c = 0; c < fcl_field_ncomp(w); ++c)
    FCL_TRY(fcl__spectral_check_parity(s, w, c, want[c], 3, "w"));
  FCL_TRY(fcl_fft_forward_components(s->fft, u, 0));
  FCL_TRY(fcl__spectral_run(s, s->curl, NULL));
  FCL_TRY(fcl_fft_backward_components(s->fft, 0, w));
  return FCL_OK;
}
