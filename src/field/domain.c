/* The physical domain: checks and grid spacing. */
#include <math.h>

#include "check.h"
#include "field_impl.h"

static const char *axis_name(int axis) { return axis == 0 ? "x" : axis == 1 ? "y" : "z"; }

fcl_domain fcl_domain_periodic(int dim, int64_t n, double length) {
  fcl_domain d = {.dim = dim};
  for (int a = 0; a < 3; ++a) {
    d.length[a] = length;
    d.resolution[a] = a < dim ? n : 1;
    d.bc[a][0] = d.bc[a][1] = FCL_BC_PERIODIC;
  }
  return d;
}

fcl_status fcl_domain_check(const fcl_domain *d) {
  FCL_CHECK_NULL(d, 1);
  if (d->dim < 1 || d->dim > 3)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "domain: dim is %d; must be 1, 2 or 3", d->dim);
  for (int a = 0; a < d->dim; ++a) {
    if (!(d->length[a] > 0) || !isfinite(d->length[a]) || !isfinite(d->origin[a]))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "domain: axis %s: length %g must be finite and "
                       "> 0 (origin %g)",
                       axis_name(a), d->length[a], d->origin[a]);
    if (d->resolution[a] < 2 || d->resolution[a] > INT32_MAX)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "domain: axis %s: resolution %lld must be in "
                       "[2, 2^31)",
                       axis_name(a), (long long)d->resolution[a]);
    for (int s = 0; s < 2; ++s)
      if (d->bc[a][s] < FCL_BC_PERIODIC || d->bc[a][s] > FCL_BC_NEUMANN)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "domain: axis %s: unknown boundary condition "
                         "%d on the %s face",
                         axis_name(a), (int)d->bc[a][s], s ? "upper" : "lower");
    if ((d->bc[a][0] == FCL_BC_PERIODIC) != (d->bc[a][1] == FCL_BC_PERIODIC))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "domain: axis %s is periodic on one face only",
                       axis_name(a));
  }
  return FCL_OK;
}

double fcl_domain_spacing(const fcl_domain *d, int axis) {
  if (!d || axis < 0 || axis >= d->dim) return 0;
  int64_t n = d->resolution[axis];
  return d->bc[axis][0] == FCL_BC_PERIODIC ? d->length[axis] / (double)n
                                           : d->length[axis] / (double)(n - 1);
}

fcl_domain fcl_domain_refine(const fcl_domain *d, int factor) {
  fcl_domain r = *d;
  for (int a = 0; a < d->dim && a < 3; ++a)
    r.resolution[a] = d->bc[a][0] == FCL_BC_PERIODIC ? d->resolution[a] * factor
                                                     : (d->resolution[a] - 1) * factor + 1;
  return r;
}
