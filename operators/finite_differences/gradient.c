/* First derivatives of whole fields by centred differences: the gradient of one component,
 * the divergence of a vector field, and the pointwise norm of a vector field's gradient
 * (what the Lagrangian CFL bound needs). One generated kernel each. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "fd_impl.h"
#include "str.h"

static const char *const in_names[3] = {"f0", "f1", "f2"};
static const char *const out_names[3] = {"g0", "g1", "g2"};

/* The operator named name reading f (ghosts order / 2) and writing g, from the kernel text. */
static fcl_status finish(const char *name, const char *kernel, fcl_field *f, int nin, fcl_field *g,
                         int nout, int order, const fcl__str *text, const int *in_comps,
                         fcl_fd **out) {
  fcl__fd_array arrays[6];
  size_t n = 0;
  for (int c = 0; c < nin; ++c) arrays[n++] = (fcl__fd_array){in_names[c], f, in_comps[c]};
  for (int c = 0; c < nout; ++c) arrays[n++] = (fcl__fd_array){out_names[c], g, c};
  fcl_fd *op = NULL;
  FCL_TRY(fcl__fd_new(name, &op));
  op->order = order;
  const int64_t *ln = fcl_topology_local_resolution(fcl_field_topology(f));
  const double bytes = (double)(nin + nout) * (double)(ln[0] * ln[1] * ln[2]) *
                       (double)fcl_dtype_size(fcl_field_dtype(f));
  fcl_status st = fcl__fd_use(op, f, order / 2, true, false);
  if (st == FCL_OK) st = fcl__fd_use(op, g, 0, false, true);
  if (st == FCL_OK) st = fcl__fd_add_kernel(op, kernel, f, n, arrays, text, bytes);
  if (st != FCL_OK) fcl_fd_destroy(&op);
  *out = op;
  return st;
}

fcl_status fcl_fd_gradient_create(fcl_field *f, int comp, fcl_field *g, int order, fcl_fd **out) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(g, 3);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  FCL_TRY(fcl__fd_check_pair(f, g, "gradient"));
  FCL_TRY(fcl__fd_check_field(f, order));
  const int dim = fcl_topology_domain(fcl_field_topology(f))->dim;
  if (comp < 0 || comp >= fcl_field_ncomp(f))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (comp): %d ('%s' has %d components)",
                     comp, fcl_field_name(f), fcl_field_ncomp(f));
  if (fcl_field_ncomp(g) != dim)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "gradient: '%s' needs %d components, it has %d",
                     fcl_field_name(g), dim, fcl_field_ncomp(g));
  fcl__str text = {0};
  char d[512], lhs[96];
  for (int a = 0; a < dim; ++a) {
    fcl__fd_derivative(d, sizeof d, in_names[0], f, a, order);
    fcl__fd_element(lhs, sizeof lhs, out_names[a], g, 0, 0, 0);
    fcl__str_printf(&text, "%s = %s\n", lhs, d);
  }
  const int comps[1] = {comp};
  const fcl_status st = finish("fd.gradient", "fd_gradient", f, 1, g, dim, order, &text, comps,
                               out);
  free(text.s);
  return st;
}

/* f a dim-component vector field, s a scalar: the checks the two reductions share. */
static fcl_status check_vector_to_scalar(const fcl_field *f, const fcl_field *s, int order,
                                         const char *what) {
  FCL_TRY(fcl__fd_check_pair(f, s, what));
  FCL_TRY(fcl__fd_check_field(f, order));
  const int dim = fcl_topology_domain(fcl_field_topology(f))->dim;
  if (fcl_field_ncomp(f) != dim || fcl_field_ncomp(s) != 1)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "%s: takes a %d-component field to a scalar; "
                     "'%s' has %d components, '%s' has %d",
                     what, dim, fcl_field_name(f), fcl_field_ncomp(f), fcl_field_name(s),
                     fcl_field_ncomp(s));
  return FCL_OK;
}

fcl_status fcl_fd_divergence_create(fcl_field *u, fcl_field *s, int order, fcl_fd **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(s, 2);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  FCL_TRY(check_vector_to_scalar(u, s, order, "divergence"));
  const int dim = fcl_field_ncomp(u);
  fcl__str text = {0};
  char d[512], lhs[96];
  fcl__fd_element(lhs, sizeof lhs, out_names[0], s, 0, 0, 0);
  fcl__str_printf(&text, "%s = ", lhs);
  for (int a = 0; a < dim; ++a) {
    fcl__fd_derivative(d, sizeof d, in_names[a], u, a, order);
    fcl__str_printf(&text, "%s%s", a ? " + " : "", d);
  }
  fcl__str_printf(&text, "\n");
  const int comps[3] = {0, 1, 2};
  const fcl_status st = finish("fd.divergence", "fd_divergence", u, dim, s, 1, order, &text, comps,
                               out);
  free(text.s);
  return st;
}

fcl_status fcl_fd_gradient_norm_create(fcl_field *u, fcl_field *s, int order, fcl_fd **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(s, 2);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  FCL_TRY(check_vector_to_scalar(u, s, order, "gradient norm"));
  const int dim = fcl_field_ncomp(u);
  const char *real = fcl_field_dtype(u) == FCL_FLOAT64 ? "double" : "float";
  fcl__str text = {0};
  char d[512], lhs[96];
  for (int c = 0; c < dim; ++c)
    for (int a = 0; a < dim; ++a) {
      fcl__fd_derivative(d, sizeof d, in_names[c], u, a, order);
      fcl__str_printf(&text, "<%s> d%d%d = %s\n", real, c, a, d);
    }
  fcl__fd_element(lhs, sizeof lhs, out_names[0], s, 0, 0, 0);
  fcl__str_printf(&text, "%s = sqrt(", lhs);
  for (int c = 0; c < dim; ++c)
    for (int a = 0; a < dim; ++a)
      fcl__str_printf(&text, "%sd%d%d * d%d%d", c + a ? " + " : "", c, a, c, a);
  fcl__str_printf(&text, ")\n");
  const int comps[3] = {0, 1, 2};
  const fcl_status st = finish("fd.gradient_norm", "fd_gradient_norm", u, dim, s, 1, order, &text,
                               comps, out);
  free(text.s);
  return st;
}
