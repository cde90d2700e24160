/* Implicit Brinkman penalization as a custom grid kernel. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "flowcl/penalization.h"

fcl_status fcl_penalization_create(fcl_field *u, fcl_field *mask, const double *solid_velocity,
                                   double lambda, fcl_fd **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(mask, 2);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  if (!(lambda > 0 && isfinite(lambda)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 4 (lambda): %g (must be > 0)", lambda);
  if (fcl_field_ncomp(mask) != 1)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "penalization: the mask '%s' must be a scalar "
                     "field (it has %d components)", fcl_field_name(mask), fcl_field_ncomp(mask));
  if (u == mask)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "penalization: '%s' is both the field and the "
                     "mask", fcl_field_name(u));
  const int ncomp = fcl_field_ncomp(u);
  const bool f64 = fcl_field_dtype(u) == FCL_FLOAT64;
  const char *real = f64 ? "double" : "float", *fmt = f64 ? "%.17e" : "%.9ef";
  char lam[40], text[2048];
  snprintf(lam, sizeof lam, fmt, lambda);
  int len = snprintf(text, sizeof text, "<%s> c = %s * dt * chi[k, j, i]\n", real, lam);
  static const char *const names[3] = {"u0", "u1", "u2"};
  for (int c = 0; c < ncomp; ++c) {
    char us[40];
    snprintf(us, sizeof us, fmt, solid_velocity ? solid_velocity[c] : 0.0);
    if (solid_velocity && !isfinite(solid_velocity[c]))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (solid_velocity): component %d is "
                       "%g", c, solid_velocity[c]);
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "%s[k, j, i] = (%s[k, j, i] + c * %s) / (1 + c)\n", names[c], names[c], us);
  }
  fcl_fd_binding b[4] = {{"chi", mask, 0, 0}};
  for (int c = 0; c < ncomp; ++c) b[1 + c] = (fcl_fd_binding){names[c], u, c, 0};
  const double bytes = (double)(2 * ncomp + 1) * (double)fcl_dtype_size(fcl_field_dtype(u));
  return fcl_fd_kernel_create("penalization", 1 + (size_t)ncomp, b, text, bytes, out);
}
