/* Obstacle masks: the indicator of a sphere or a cylinder, sharp or smoothed across the surface,
 * written on the device by a field expression of the grid point's coordinates. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "flowcl/penalization.h"

/* mask = the indicator of the points whose squared distance d2 (an expression) is within
 * the radius, smoothed over [radius - smoothing, radius + smoothing]. */
static fcl_status fill(fcl_field *mask, const char *d2, double radius, double smoothing) {
  char expr[1536];
  if (smoothing > 0) /* compact: no tail that a large lambda would turn into a penalization */
    snprintf(expr, sizeof expr,
             "sqrt(%s) <= %.17g ? 1 : sqrt(%s) >= %.17g ? 0 : "
             "0.5 * (1 - sin(1.5707963267948966 * (sqrt(%s) - %.17g) / %.17g))",
             d2, radius - smoothing, d2, radius + smoothing, d2, radius, smoothing);
  else
    snprintf(expr, sizeof expr, "%s <= %.17g ? 1 : 0", d2, radius * radius);
  return fcl_field_init_expr(mask, 0, expr);
}

static fcl_status check(const fcl_field *mask, const double *center, double diameter,
                        double smoothing) {
  if (fcl_field_ncomp(mask) != 1)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 1 (mask): '%s' has %d components, a mask has 1",
                     fcl_field_name(mask), fcl_field_ncomp(mask));
  const int dim = fcl_topology_domain(fcl_field_topology(mask))->dim;
  for (int a = 0; a < dim; ++a)
    if (!isfinite(center[a]))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (center): coordinate %d is %g", a,
                       center[a]);
  if (!(diameter > 0 && isfinite(diameter)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "diameter %g (must be > 0)", diameter);
  if (!(smoothing >= 0 && smoothing < diameter / 2))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "smoothing %g (must be >= 0 and below the radius %g)", smoothing,
                     diameter / 2);
  return FCL_OK;
}

fcl_status fcl_mask_sphere(fcl_field *mask, const double *center, double diameter,
                           double smoothing) {
  FCL_CHECK_NULL(mask, 1);
  FCL_CHECK_NULL(center, 2);
  FCL_TRY(check(mask, center, diameter, smoothing));
  const int dim = fcl_topology_domain(fcl_field_topology(mask))->dim;
  static const char *const x[3] = {"x", "y", "z"};
  char d2[320] = "0";
  size_t len = 1;
  for (int a = 0; a < dim && len < sizeof d2; ++a)
    len += (size_t)snprintf(d2 + len, sizeof d2 - len, " + (%s - %.17g) * (%s - %.17g)", x[a],
                            center[a], x[a], center[a]);
  return fill(mask, d2, diameter / 2, smoothing);
}

fcl_status fcl_mask_cylinder(fcl_field *mask, const double *center, int axis, double diameter,
                             double smoothing) {
  FCL_CHECK_NULL(mask, 1);
  FCL_CHECK_NULL(center, 2);
  const int dim = fcl_topology_domain(fcl_field_topology(mask))->dim;
  if (dim != 3)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "a cylinder needs a 3D field ('%s' is %dD: use fcl_mask_sphere for a disc)",
                     fcl_field_name(mask), dim);
  FCL_CHECK_ARG(axis >= 0 && axis < 3, 3, "axis", "must be 0, 1 or 2");
  FCL_TRY(check(mask, center, diameter, smoothing));
  static const char *const x[3] = {"x", "y", "z"};
  const int a = (axis + 1) % 3, b = (axis + 2) % 3;
  char d2[320];
  snprintf(d2, sizeof d2, "(%s - %.17g) * (%s - %.17g) + (%s - %.17g) * (%s - %.17g)", x[a],
           center[a], x[a], center[a], x[b], center[b], x[b], center[b]);
  return fill(mask, d2, diameter / 2, smoothing);
}
