/* Explicit finite-difference diffusion: f <- s + nu dt lap(s), s a copy of f taken after the
 * ghost exchange (the stencil must not read values already updated). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "fd_impl.h"
#include "str.h"

fcl_status fcl_fd_diffusion_create(fcl_field *f, double nu, int order, fcl_pool *pool,
                                   fcl_fd **out) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(pool, 4);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  if (!(nu > 0 && isfinite(nu)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (nu): %g (must be > 0)", nu);
  FCL_TRY(fcl__fd_check_field(f, order));
  fcl_topology *t = fcl_field_topology(f);
  const fcl_domain *d = fcl_topology_domain(t);
  const int ncomp = fcl_field_ncomp(f);
  fcl_fd *op = NULL;
  FCL_TRY(fcl__fd_new("fd.diffusion", &op));
  op->order = order;
  op->nu = nu;
  op->dt_param = "nudt";
  op->dt_scale = nu;
  op->irreversible = true;
  op->max_dt = fcl__fd_diffusion_max_dt(f, nu, order); /* forward Euler */
  char name[96];
  snprintf(name, sizeof name, "%s.scratch", fcl_field_name(f));
  fcl_status st = fcl__fd_use(op, f, order / 2, true, true);
  if (st == FCL_OK)
    st = fcl_field_create(t, fcl_field_context(f), fcl_field_queue(f), pool, name, ncomp,
                          fcl_field_dtype(f), &op->scratch);
  const size_t *p = fcl_field_padded_shape(f);
  const size_t bytes = p[0] * p[1] * p[2] * fcl_dtype_size(fcl_field_dtype(f));
  static const char *const fn[3] = {"f0", "f1", "f2"}, *const sn[3] = {"s0", "s1", "s2"};
  fcl__str text = {0};
  char lap[1024], lhs[96], rhs[96];
  fcl__fd_array arrays[6];
  for (int c = 0; c < ncomp && st == FCL_OK; ++c) {
    fcl_launcher *copy = NULL;
    st = fcl_launcher_create_copy_d2d("fd.diffusion.copy", fcl_field_buffer(f, c), 0,
                                      fcl_field_buffer(op->scratch, c), 0, bytes, &copy);
    if (st == FCL_OK) st = fcl_launcher_list_push(op->list, copy);
    fcl__fd_element(lhs, sizeof lhs, fn[c], f, 0, 0, 0);
    fcl__fd_element(rhs, sizeof rhs, sn[c], f, 0, 0, 0);
    fcl__str_printf(&text, "%s = %s + nudt * (", lhs, rhs);
    for (int a = 0; a < d->dim; ++a) {
      fcl__fd_second_derivative(lap, sizeof lap, sn[c], f, a, order);
      fcl__str_printf(&text, "%s%s", a ? " + " : "", lap);
    }
    fcl__str_printf(&text, ")\n");
    arrays[2 * c] = (fcl__fd_array){fn[c], f, c};
    arrays[2 * c + 1] = (fcl__fd_array){sn[c], op->scratch, c};
  }
  const int64_t *ln = fcl_topology_local_resolution(t);
  if (st == FCL_OK)
    st = fcl__fd_add_kernel(
        op, "fd_diffusion", f, 2 * (size_t)ncomp, arrays, &text,
        2.0 * ncomp * (double)(ln[0] * ln[1] * ln[2]) * (double)fcl_dtype_size(fcl_field_dtype(f)));
  free(text.s);
  if (st != FCL_OK) {
    fcl_fd_destroy(&op);
    return st;
  }
  *out = op;
  return FCL_OK;
}
