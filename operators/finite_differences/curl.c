/* w = curl u by centred differences (one generated kernel over the interior). */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "fd_impl.h"
#include "str.h"

fcl_status fcl_fd_curl_create(fcl_field *u, fcl_field *w, int order, fcl_fd **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(w, 2);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  FCL_TRY(fcl__fd_check_pair(u, w, "curl"));
  FCL_TRY(fcl__fd_check_field(u, order));
  const int dim = fcl_topology_domain(fcl_field_topology(u))->dim;
  const int want = dim == 3 ? 3 : 1;
  if (dim < 2 || fcl_field_ncomp(u) != dim || fcl_field_ncomp(w) != want)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "curl: a %dD curl takes a %d-component u to a "
                     "%d-component w; '%s' has %d, '%s' has %d",
                     dim, dim, want, fcl_field_name(u), fcl_field_ncomp(u), fcl_field_name(w),
                     fcl_field_ncomp(w));
  fcl_fd *op = NULL;
  FCL_TRY(fcl__fd_new("fd.curl", &op));
  op->order = order;
  fcl__str text = {0};
  char d1[512], d2[512], lhs[96];
  /* w_c = d_{b} u_{a} - d_{a'} u_{b'}: (component, +axis, +comp, -axis, -comp) */
  static const int terms3[3][4] = {{1, 2, 2, 1}, {2, 0, 0, 2}, {0, 1, 1, 0}};
  static const int terms2[1][4] = {{0, 1, 1, 0}};
  const int(*terms)[4] = dim == 3 ? terms3 : terms2;
  static const char *const un[3] = {"u0", "u1", "u2"}, *const wn[3] = {"w0", "w1", "w2"};
  for (int c = 0; c < want; ++c) {
    fcl__fd_derivative(d1, sizeof d1, un[terms[c][1]], u, terms[c][0], order);
    fcl__fd_derivative(d2, sizeof d2, un[terms[c][3]], u, terms[c][2], order);
    fcl__fd_element(lhs, sizeof lhs, wn[c], w, 0, 0, 0);
    fcl__str_printf(&text, "%s = %s - %s\n", lhs, d1, d2);
  }
  fcl__fd_array arrays[6];
  size_t n = 0;
  for (int c = 0; c < dim; ++c) arrays[n++] = (fcl__fd_array){un[c], u, c};
  for (int c = 0; c < want; ++c) arrays[n++] = (fcl__fd_array){wn[c], w, c};
  const int64_t *ln = fcl_topology_local_resolution(fcl_field_topology(u));
  const double bytes = (double)(dim + want) * (double)(ln[0] * ln[1] * ln[2]) *
                       (double)fcl_dtype_size(fcl_field_dtype(u));
  fcl_status st = fcl__fd_use(op, u, order / 2, true, false);
  if (st == FCL_OK) st = fcl__fd_use(op, w, 0, false, true);
  if (st == FCL_OK)
    st = fcl__fd_add_kernel(op, dim == 3 ? "fd_curl3" : "fd_curl2", u, n, arrays, &text, bytes);
  free(text.s);
  if (st != FCL_OK) {
    fcl_fd_destroy(&op);
    return st;
  }
  *out = op;
  return FCL_OK;
}
