/* Implicit Brinkman penalization: of the velocity (one custom kernel), and of the vorticity
 * through the velocity (the change of u is a field whose curl is added to w). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fd_impl.h"
#include "flowcl/penalization.h"
#include "str.h"

static const char *const u_names[3] = {"u0", "u1", "u2"};
static const char *const d_names[3] = {"d0", "d1", "d2"};
static const char *const w_names[3] = {"w0", "w1", "w2"};

static fcl_status check_args(fcl_field *u, fcl_field *mask, const double *solid_velocity,
                             double lambda) {
  if (!(lambda > 0 && isfinite(lambda)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "penalization: lambda = %g (must be > 0)", lambda);
  if (fcl_field_ncomp(mask) != 1)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "penalization: the mask '%s' must be a scalar "
                     "field (it has %d components)",
                     fcl_field_name(mask), fcl_field_ncomp(mask));
  if (u == mask)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "penalization: '%s' is both the field and the "
                     "mask",
                     fcl_field_name(u));
  for (int c = 0; solid_velocity && c < fcl_field_ncomp(u); ++c)
    if (!isfinite(solid_velocity[c]))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "penalization: solid velocity component %d is "
                       "%g",
                       c, solid_velocity[c]);
  return FCL_OK;
}

/* The implicit update of u's components, as instructions, the point indexed by at ("[k, j, i]"
 * in a custom kernel's text); with_change: the change of each component also goes to d<c>. */
static void velocity_text(fcl__str *text, const fcl_field *u, const double *solid_velocity,
                          double lambda, bool with_change, const char *at) {
  const bool f64 = fcl_field_dtype(u) == FCL_FLOAT64;
  const char *real = f64 ? "double" : "float", *fmt = f64 ? "%.17e" : "%.9ef";
  char lam[40];
  snprintf(lam, sizeof lam, fmt, lambda);
  fcl__str_printf(text, "<%s> c = %s * dt * chi%s\n", real, lam, at);
  for (int c = 0; c < fcl_field_ncomp(u); ++c) {
    char us[40];
    snprintf(us, sizeof us, fmt, solid_velocity ? solid_velocity[c] : 0.0);
    const char *n = u_names[c];
    if (with_change)
      fcl__str_printf(text,
                      "<%s> old%d = %s%s  {dep=}\n"
                      "<%s> new%d = (old%d + c * %s) / (1 + c)\n"
                      "%s%s = new%d - old%d\n%s%s = new%d\n",
                      real, c, n, at, real, c, c, us, d_names[c], at, c, c, n, at, c);
    else
      fcl__str_printf(text, "%s%s = (%s%s + c * %s) / (1 + c)\n", n, at, n, at, us);
  }
}

fcl_status fcl_penalization_create(fcl_field *u, fcl_field *mask, const double *solid_velocity,
                                   double lambda, fcl_fd **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(mask, 2);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  FCL_TRY(check_args(u, mask, solid_velocity, lambda));
  const int ncomp = fcl_field_ncomp(u);
  fcl__str text = {0};
  velocity_text(&text, u, solid_velocity, lambda, false, "[k, j, i]");
  fcl_fd_binding b[4] = {{"chi", mask, 0, 0}};
  for (int c = 0; c < ncomp; ++c) b[1 + c] = (fcl_fd_binding){u_names[c], u, c, 0};
  const double bytes = (double)(2 * ncomp + 1) * (double)fcl_dtype_size(fcl_field_dtype(u));
  const fcl_status st = text.failed ? FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "penalization kernel text")
                                    : fcl_fd_kernel_create("penalization", 1 + (size_t)ncomp, b,
                                                           text.s, bytes, out);
  free(text.s);
  return st;
}

static fcl_status exchange(void *user, fcl_queue *queue) {
  (void)queue;
  return fcl_field_ghosts_update(user);
}

/* w += curl(d), differences of order 4, as instructions. */
static void curl_text(fcl__str *text, const fcl_field *d, const fcl_field *w) {
  const int dim = fcl_topology_domain(fcl_field_topology(d))->dim;
  static const int terms3[3][4] = {{1, 2, 2, 1}, {2, 0, 0, 2}, {0, 1, 1, 0}};
  static const int terms2[1][4] = {{0, 1, 1, 0}};
  const int(*terms)[4] = dim == 3 ? terms3 : terms2;
  char d1[512], d2[512], lhs[96];
  for (int c = 0; c < fcl_field_ncomp(w); ++c) {
    fcl__fd_derivative(d1, sizeof d1, d_names[terms[c][1]], d, terms[c][0], 4);
    fcl__fd_derivative(d2, sizeof d2, d_names[terms[c][3]], d, terms[c][2], 4);
    fcl__fd_element(lhs, sizeof lhs, w_names[c], w, 0, 0, 0);
    fcl__str_printf(text, "%s = %s + %s - %s\n", lhs, lhs, d1, d2);
  }
}

fcl_status fcl_penalization_vorticity_create(fcl_field *u, fcl_field *w, fcl_field *mask,
                                             const double *solid_velocity, double lambda,
                                             fcl_pool *pool, fcl_fd **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(w, 2);
  FCL_CHECK_NULL(mask, 3);
  FCL_CHECK_NULL(pool, 6);
  FCL_CHECK_NULL(out, 7);
  *out = NULL;
  FCL_TRY(check_args(u, mask, solid_velocity, lambda));
  FCL_TRY(fcl__fd_check_pair(u, w, "penalization"));
  FCL_TRY(fcl__fd_check_pair(u, mask, "penalization"));
  const int dim = fcl_topology_domain(fcl_field_topology(u))->dim;
  const int ncomp = fcl_field_ncomp(u), wcomp = dim == 3 ? 3 : 1;
  if (dim < 2 || ncomp != dim || fcl_field_ncomp(w) != wcomp)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "penalization: in %dD the velocity '%s' needs %d "
                     "components and the vorticity '%s' %d",
                     dim, fcl_field_name(u), dim, fcl_field_name(w), wcomp);
  fcl_topology *t = fcl_field_topology(u);
  for (int a = 0; a < dim; ++a)
    if (fcl_topology_ghosts(t)[a] < 2)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "penalization of '%s': the curl of the change "
                       "needs 2 ghosts on axis %d, the topology has %d",
                       fcl_field_name(w), a, fcl_topology_ghosts(t)[a]);
  fcl_fd *op = NULL;
  FCL_TRY(fcl__fd_new("penalization_vorticity", &op));
  char name[96];
  snprintf(name, sizeof name, "%s.change", fcl_field_name(u));
  fcl_status st = fcl_field_create(t, fcl_field_context(u), fcl_field_queue(u), pool, name, ncomp,
                                   fcl_field_dtype(u), &op->scratch);
  fcl_field *d = op->scratch;
  if (st == FCL_OK) st = fcl__fd_use(op, mask, 0, true, false);
  if (st == FCL_OK) st = fcl__fd_use(op, u, 0, true, true);
  if (st == FCL_OK) st = fcl__fd_use(op, w, 0, true, true);
  op->dt_param = "dt";
  op->dt_scale = 1;
  const int64_t *ln = fcl_topology_local_resolution(t);
  const double points = (double)(ln[0] * ln[1] * ln[2]),
               size = (double)fcl_dtype_size(fcl_field_dtype(u));
  fcl__fd_array arrays[7] = {{"chi", mask, 0}};
  for (int c = 0; c < ncomp; ++c) {
    arrays[1 + c] = (fcl__fd_array){u_names[c], u, c};
    arrays[1 + ncomp + c] = (fcl__fd_array){d_names[c], d, c};
  }
  if (st == FCL_OK) { /* a generated kernel: the interior point in the padded storage */
    char el[96];
    fcl__fd_element(el, sizeof el, "", u, 0, 0, 0);
    fcl__str text = {0};
    velocity_text(&text, u, solid_velocity, lambda, true, el);
    st = fcl__fd_add_kernel(op, "penalization_velocity_change", u, 1 + 2 * (size_t)ncomp, arrays,
                            &text, (3.0 * ncomp + 1) * points * size);
    free(text.s);
  }
  fcl_launcher *host = NULL;
  if (st == FCL_OK) st = fcl_launcher_create_host_enqueue("ghosts(change)", exchange, d, &host);
  if (st == FCL_OK) {
    st = fcl_launcher_list_push(op->list, host);
    if (st != FCL_OK) fcl_launcher_destroy(&host); /* not taken */
  }
  if (st == FCL_OK) {
    fcl__fd_array carrays[6];
    for (int c = 0; c < ncomp; ++c) carrays[c] = (fcl__fd_array){d_names[c], d, c};
    for (int c = 0; c < wcomp; ++c) carrays[ncomp + c] = (fcl__fd_array){w_names[c], w, c};
    fcl__str text = {0};
    curl_text(&text, d, w);
    st = fcl__fd_add_kernel(op, "penalization_vorticity_curl", u, (size_t)(ncomp + wcomp), carrays,
                            &text, (ncomp + 2.0 * wcomp) * points * size);
    free(text.s);
  }
  if (st != FCL_OK) fcl_fd_destroy(&op);
  *out = op;
  return st;
}

fcl_status fcl_penalization_force(fcl_fd *op, double dt, double *force) {
  FCL_CHECK_NULL(op, 1);
  FCL_CHECK_NULL(force, 3);
  if (strcmp(op->name, "penalization_vorticity") != 0 || !op->scratch)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 1 (op): '%s' is not a vorticity penalization "
                     "(fcl_penalization_vorticity_create keeps the change the force comes from)",
                     op->name);
  FCL_CHECK_ARG(dt > 0 && isfinite(dt), 2, "dt", "must be the dt of the last application (> 0)");
  /* the momentum the step took from the fluid, per unit time: the fluid's force on the body */
  for (int c = 0; c < fcl_field_ncomp(op->scratch); ++c) {
    double change;
    FCL_TRY(fcl_field_reduce(op->scratch, c, FCL_REDUCE_INTEGRAL, &change));
    force[c] = -change / dt;
  }
  return FCL_OK;
}
