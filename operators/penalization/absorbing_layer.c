/* An absorbing layer before the outflow of a periodic box: the vorticity multiplied by a profile
 * that falls from 1 to 0 across the layer (a custom kernel over a profile field). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "fd_impl.h"
#include "flowcl/penalization.h"
#include "str.h"

fcl_status fcl_absorbing_layer_create(fcl_field *w, int axis, double start, double end,
                                      fcl_pool *pool, fcl_fd **out) {
  FCL_CHECK_NULL(w, 1);
  FCL_CHECK_NULL(pool, 5);
  FCL_CHECK_NULL(out, 6);
  *out = NULL;
  fcl_topology *t = fcl_field_topology(w);
  const fcl_domain *d = fcl_topology_domain(t);
  FCL_CHECK_ARG(axis >= 0 && axis < d->dim, 2, "axis", "must be an axis of the field's domain");
  if (!(isfinite(start) && isfinite(end) && start < end))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "absorbing layer of '%s': the layer [%g, %g] must have start < end",
                     fcl_field_name(w), start, end);
  static const char *const x[3] = {"x", "y", "z"};
  char expr[512];
  snprintf(expr, sizeof expr,
           "%s <= %.17g ? 1 : %s >= %.17g ? 0 : "
           "0.5 * (1 + cos(3.141592653589793 * (%s - %.17g) / %.17g))",
           x[axis], start, x[axis], end, x[axis], start, end - start);
  char name[96];
  snprintf(name, sizeof name, "%s.absorbing_profile", fcl_field_name(w));
  fcl_field *profile = NULL;
  FCL_TRY(fcl_field_create(t, fcl_field_context(w), fcl_field_queue(w), pool, name, 1,
                           fcl_field_dtype(w), &profile));
  fcl_status st = fcl_field_init_expr(profile, 0, expr);
  static const char *const wn[3] = {"w0", "w1", "w2"};
  fcl_fd_binding b[4] = {{"p", profile, 0, 0}};
  fcl__str text = {0};
  const int ncomp = fcl_field_ncomp(w);
  for (int c = 0; c < ncomp; ++c) {
    b[1 + c] = (fcl_fd_binding){wn[c], w, c, 0};
    fcl__str_printf(&text, "%s[k, j, i] = %s[k, j, i] * p[k, j, i]\n", wn[c], wn[c]);
  }
  const double bytes = (double)(2 * ncomp + 1) * (double)fcl_dtype_size(fcl_field_dtype(w));
  snprintf(name, sizeof name, "absorbing_layer.%s", fcl_field_name(w));
  if (st == FCL_OK && text.failed)
    st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "absorbing layer of '%s': kernel text",
                   fcl_field_name(w));
  if (st == FCL_OK) st = fcl_fd_kernel_create(name, 1 + (size_t)ncomp, b, text.s, bytes, out);
  free(text.s);
  if (st != FCL_OK) {
    fcl_field_destroy(&profile);
    return st;
  }
  /* the operator owns the profile: a problem sees only w */
  fcl_fd *op = *out;
  op->scratch = profile;
  int kept = 0;
  for (int k = 0; k < op->nuses; ++k)
    if (op->uses[k].field != profile) op->uses[kept++] = op->uses[k];
  op->nuses = kept;
  return FCL_OK;
}
