/* Wall parities of the spectral operators' inputs and outputs (spectral_impl.h): along a walled
 * axis each component is odd (Dirichlet) or even (Neumann), and a derivative along that axis
 * turns one into the other. */
#include "check.h"
#include "spectral_impl.h"

unsigned fcl__spectral_parity(const fcl_spectral *s, const fcl_field *f, int comp) {
  unsigned odd = 0;
  for (int a = 0; a < s->dim; ++a)
    if (s->walled >> a & 1 && fcl_field_component_bc(f, comp, a, 0) == FCL_BC_DIRICHLET)
      odd |= 1u << a;
  return odd;
}

static const char *condition(unsigned parity, int a) {
  return parity >> a & 1 ? "Dirichlet" : "Neumann";
}

fcl_status fcl__spectral_check_parity(const fcl_spectral *s, const fcl_field *f, int comp,
                                      unsigned want, int pos, const char *name) {
  const unsigned has = fcl__spectral_parity(s, f, comp);
  for (int a = 0; a < s->dim; ++a)
    if ((has ^ want) >> a & 1)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument %d (%s): component %d of field '%s' is %s at the walls of axis "
                       "%d, the result there is %s (fcl_field_set_component_bc)",
                       pos, name, comp, fcl_field_name(f), condition(has, a), a,
                       condition(want, a));
  return FCL_OK;
}

fcl_status fcl__spectral_curl_parity(const fcl_spectral *s, const fcl_field *v, int pos,
                                     const char *name, unsigned out[3]) {
  const unsigned w = s->walled;
  if (s->dim == 2) { /* the curl of (vx, vy): dx vy - dy vx */
    unsigned a = fcl__spectral_parity(s, v, 1) ^ (w & 1u),
             b = fcl__spectral_parity(s, v, 0) ^ (w & 2u);
    out[0] = a;
    if (a == b) return FCL_OK;
  } else {
    const int ok = 1;
    int good = ok;
    for (int c = 0; c < 3; ++c) { /* curl_c = d_d v_e - d_e v_d, (c, d, e) cyclic */
      const int d = (c + 1) % 3, e = (c + 2) % 3;
      unsigned a = fcl__spectral_parity(s, v, e) ^ (w & 1u << d);
      unsigned b = fcl__spectral_parity(s, v, d) ^ (w & 1u << e);
      out[c] = a;
      if (a != b) good = 0;
    }
    if (good) return FCL_OK;
  }
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "argument %d (%s): the wall conditions of field '%s' are not those of a "
                   "vector with a curl (a free-slip wall: the normal component Dirichlet, the "
                   "tangential ones Neumann; a vorticity the reverse); fcl_field_set_component_bc",
                   pos, name, fcl_field_name(v));
}
