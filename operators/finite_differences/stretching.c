/* Vortex stretching, gradient formulation: d w_i / dt = w_j d_j u_i with u frozen over dt. The
 * velocity gradient at a point is a 3x3 matrix G (fourth-order centred differences), so the
 * stretching is the linear system w' = G w, integrated in registers by a Runge-Kutta scheme. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "fd_impl.h"
#include "str.h"

fcl_status fcl__fd_check_stretching(const fcl_field *u, const fcl_field *w) {
  const int dim = fcl_topology_domain(fcl_field_topology(u))->dim;
  if (dim != 3 || fcl_field_ncomp(u) != 3 || fcl_field_ncomp(w) != 3)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "stretching: 3D, 3-component u and w ('%s' is "
                     "%dD with %d components, '%s' has %d)",
                     fcl_field_name(u), dim, fcl_field_ncomp(u), fcl_field_name(w),
                     fcl_field_ncomp(w));
  FCL_TRY(fcl__fd_check_pair(u, w, "stretching"));
  return fcl__fd_check_field(u, 4);
}

fcl_status fcl_fd_stretching_create(fcl_field *u, fcl_field *w, int rk_order, fcl_fd **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(w, 2);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  FCL_TRY(fcl__fd_check_stretching(u, w));
  if (rk_order < 2 || rk_order > 4)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (rk_order): %d (2, 3 or 4)", rk_order);
  const char *real = fcl_field_dtype(u) == FCL_FLOAT64 ? "double" : "float";
  static const char *const un[3] = {"u0", "u1", "u2"}, *const wn[3] = {"w0", "w1", "w2"};
  fcl__str text = {0};
  char d[512], e[96], decl[32];
  snprintf(decl, sizeof decl, "<%s> ", real);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) { /* g_ij = d_j u_i */
      fcl__fd_derivative(d, sizeof d, un[i], u, j, 4);
      fcl__str_printf(&text, "%sg%d%d = %s\n", decl, i, j, d);
    }
  for (int i = 0; i < 3; ++i)
    fcl__str_printf(&text, "F%d(a, b, c) := g%d0 * a + g%d1 * b + g%d2 * c\n", i, i, i, i);
  for (int i = 0; i < 3; ++i) {
    fcl__fd_element(e, sizeof e, wn[i], w, 0, 0, 0);
    /* in place: the loads depend on nothing (the final writes depend on them) */
    fcl__str_printf(&text, "%sa%d = %s  {dep=}\n", decl, i, e);
  }
  /* stage s: position p<s>_i = a_i + dt * (combination), slope k<s>_i = F_i(p<s>) */
  /* (exact divisions by integers keep the literals out of the precision question) */
  static const char *const rk2[] = {"0", "k1%d / 2"};
  static const char *const rk3[] = {"0", "k1%d", "(k1%d + k2%d) / 4"};
  static const char *const rk4[] = {"0", "k1%d / 2", "k2%d / 2", "k3%d"};
  const char *const *stages = rk_order == 2 ? rk2 : rk_order == 3 ? rk3 : rk4;
  const char *final = rk_order == 2   ? "k2%d"
                      : rk_order == 3 ? "(k1%d + k2%d + 4 * k3%d) / 6"
                                      : "(k1%d + 2 * k2%d + 2 * k3%d + k4%d) / 6";
  for (int s = 1; s <= rk_order; ++s) {
    for (int i = 0; i < 3; ++i) {
      char comb[96];
      snprintf(comb, sizeof comb, stages[s - 1], i, i);
      if (s == 1)
        fcl__str_printf(&text, "%sp1%d = a%d\n", decl, i, i);
      else
        fcl__str_printf(&text, "%sp%d%d = a%d + dt * (%s)\n", decl, s, i, i, comb);
    }
    for (int i = 0; i < 3; ++i)
      fcl__str_printf(&text, "%sk%d%d = F%d(p%d0, p%d1, p%d2)\n", decl, s, i, i, s, s, s);
  }
  for (int i = 0; i < 3; ++i) {
    char comb[96];
    snprintf(comb, sizeof comb, final, i, i, i, i);
    fcl__fd_element(e, sizeof e, wn[i], w, 0, 0, 0);
    fcl__str_printf(&text, "%s = a%d + dt * (%s)\n", e, i, comb);
  }
  fcl__fd_array arrays[6];
  for (int c = 0; c < 3; ++c) {
    arrays[c] = (fcl__fd_array){un[c], u, c};
    arrays[3 + c] = (fcl__fd_array){wn[c], w, c};
  }
  fcl_fd *op = NULL;
  fcl_status st = fcl__fd_new("fd.stretching", &op);
  if (st == FCL_OK) {
    op->order = 4;
    op->dt_param = "dt";
    op->dt_scale = 1;
  }
  char name[32];
  snprintf(name, sizeof name, "fd_stretching_rk%d", rk_order);
  const int64_t *ln = fcl_topology_local_resolution(fcl_field_topology(u));
  if (st == FCL_OK) st = fcl__fd_use(op, u, 2, true, false);
  if (st == FCL_OK) st = fcl__fd_use(op, w, 0, true, true);
  if (st == FCL_OK)
    st = fcl__fd_add_kernel(
        op, name, u, 6, arrays, &text,
        9.0 * (double)(ln[0] * ln[1] * ln[2]) * (double)fcl_dtype_size(fcl_field_dtype(u)));
  free(text.s);
  if (st != FCL_OK) {
    fcl_fd_destroy(&op);
    return st;
  }
  *out = op;
  return FCL_OK;
}
