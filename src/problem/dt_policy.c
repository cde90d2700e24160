/* The adaptive time step: the smallest of the CFL, Lagrangian CFL, operator and user bounds. */
#include <math.h>

#include "check.h"
#include "flowcl/problem.h"

const char *fcl_dt_limit_name(fcl_dt_limit limit) {
  static const char *const names[] = {"fixed", "cfl", "lcfl", "operator", "dt_max", "end"};
  return (unsigned)limit < sizeof names / sizeof names[0] ? names[limit] : "?";
}

fcl_status fcl_dt_policy_compute(const fcl_dt_policy *policy, const fcl_dt_inputs *in,
                                 double op_max_dt, double *dt, fcl_dt_limit *limit) {
  FCL_CHECK_NULL(policy, 1);
  FCL_CHECK_NULL(dt, 4);
  FCL_CHECK_NULL(limit, 5);
  const fcl_dt_policy *P = policy;
  if (!(P->dt_max > 0 && isfinite(P->dt_max)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "dt policy: dt_max = %g (must be > 0)", P->dt_max);
  if (!(P->dt_min >= 0 && P->dt_min <= P->dt_max))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "dt policy: dt_min = %g (must be in [0, dt_max "
                     "= %g])",
                     P->dt_min, P->dt_max);
  if (!(P->cfl >= 0 && isfinite(P->cfl)) || !(P->lcfl >= 0 && isfinite(P->lcfl)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "dt policy: cfl = %g, lcfl = %g (must be >= 0)",
                     P->cfl, P->lcfl);
  if ((P->cfl > 0 || P->lcfl > 0) && !in)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (in): NULL, but the dt policy's cfl and lcfl need measured "
                     "inputs");
  const bool adaptive = P->cfl > 0 || P->lcfl > 0;
  double d = P->dt_max;
  fcl_dt_limit l = adaptive ? FCL_DT_MAX : FCL_DT_FIXED;
  if (P->cfl > 0)
    for (int a = 0; a < in->dim && a < 3; ++a) {
      if (!(isfinite(in->umax[a]) && in->umax[a] >= 0))
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "dt policy: max|u_%d| = %g (the flow "
                         "diverged?)",
                         a, in->umax[a]);
      if (in->umax[a] > 0 && P->cfl * in->dx[a] / in->umax[a] < d) {
        d = P->cfl * in->dx[a] / in->umax[a];
        l = FCL_DT_CFL;
      }
    }
  if (P->lcfl > 0) {
    if (!(isfinite(in->grad_u_max) && in->grad_u_max >= 0))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "dt policy: max|grad u| = %g (the flow "
                       "diverged?)",
                       in->grad_u_max);
    if (in->grad_u_max > 0 && P->lcfl / in->grad_u_max < d) {
      d = P->lcfl / in->grad_u_max;
      l = FCL_DT_LCFL;
    }
  }
  if (op_max_dt < d) {
    d = op_max_dt;
    l = FCL_DT_OPERATOR;
  }
  if (d < P->dt_min)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "dt policy: the %s bound gives dt = %g, below "
                     "dt_min = %g",
                     fcl_dt_limit_name(l), d, P->dt_min);
  *dt = d;
  *limit = l;
  return FCL_OK;
}
