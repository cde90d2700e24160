/* Global diagnostics: reductions of the fields, or of a scalar work field that a generated
 * pointwise or stencil kernel fills first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "flowcl/analytics.h"

struct fcl_analytics {
  fcl_field *u, *w, *work;
  fcl_fd *grad_norm, *divergence, *vorticity_norm;
  fcl_reduction *umax, *grad_max; /* the dt measure's: one host wait for both */
  double volume;
};

void fcl_analytics_destroy(fcl_analytics **an) {
  if (!an || !*an) return;
  fcl_fd_destroy(&(*an)->grad_norm);
  fcl_fd_destroy(&(*an)->divergence);
  fcl_fd_destroy(&(*an)->vorticity_norm);
  fcl_reduction_destroy(&(*an)->umax);
  fcl_reduction_destroy(&(*an)->grad_max);
  fcl_field_destroy(&(*an)->work);
  free(*an);
  *an = NULL;
}

/* work = |w| at every point. */
static fcl_status vorticity_norm(fcl_analytics *an) {
  static const char *const names[3] = {"w0", "w1", "w2"};
  const int n = fcl_field_ncomp(an->w);
  fcl_fd_binding b[4] = {{"s", an->work, 0, 0}};
  char text[512];
  int len = snprintf(text, sizeof text, "s[k, j, i] = sqrt(");
  for (int c = 0; c < n; ++c) {
    b[1 + c] = (fcl_fd_binding){names[c], an->w, c, 0};
    len += snprintf(text + len, sizeof text - (size_t)len, "%s%s[k, j, i] * %s[k, j, i]",
                    c ? " + " : "", names[c], names[c]);
  }
  snprintf(text + len, sizeof text - (size_t)len, ")\n");
  return fcl_fd_kernel_create("analytics.vorticity_norm", 1 + (size_t)n, b, text,
                              (double)(n + 1) * (double)fcl_dtype_size(fcl_field_dtype(an->w)),
                              &an->vorticity_norm);
}

fcl_status fcl_analytics_create(fcl_field *u, fcl_field *w, fcl_pool *pool,
                                fcl_analytics **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(pool, 3);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  fcl_topology *t = fcl_field_topology(u);
  const fcl_domain *d = fcl_topology_domain(t);
  if (fcl_field_ncomp(u) != d->dim)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "analytics: the velocity '%s' has %d components "
                     "in %dD", fcl_field_name(u), fcl_field_ncomp(u), d->dim);
  if (w && (fcl_field_ncomp(w) != (d->dim == 3 ? 3 : 1) || fcl_field_topology(w) != t ||
            fcl_field_dtype(w) != fcl_field_dtype(u) || fcl_field_queue(w) != fcl_field_queue(u)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "analytics: the vorticity '%s' must have %d "
                     "component(s) on the topology, precision and queue of '%s'",
                     fcl_field_name(w), d->dim == 3 ? 3 : 1, fcl_field_name(u));
  fcl_analytics *an = calloc(1, sizeof *an);
  if (!an) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "analytics");
  an->u = u;
  an->w = w;
  an->volume = 1;
  for (int a = 0; a < d->dim; ++a) an->volume *= d->length[a];
  char name[96];
  snprintf(name, sizeof name, "%s.analytics", fcl_field_name(u));
  fcl_status st = fcl_field_create(t, fcl_field_context(u), fcl_field_queue(u), pool, name, 1,
                                   fcl_field_dtype(u), &an->work);
  if (st == FCL_OK) st = fcl_fd_gradient_norm_create(u, an->work, 4, &an->grad_norm);
  if (st == FCL_OK) st = fcl_fd_divergence_create(u, an->work, 4, &an->divergence);
  if (st == FCL_OK && w) st = vorticity_norm(an);
  if (st != FCL_OK) fcl_analytics_destroy(&an);
  *out = an;
  return st;
}

/* <|f|^2> over the domain: the sum of the components' squared L2 norms over the volume. */
static fcl_status mean_square(fcl_analytics *an, fcl_field *f, double *out) {
  double s = 0;
  for (int c = 0; c < fcl_field_ncomp(f); ++c) {
    double n;
    FCL_TRY(fcl_field_reduce(f, c, FCL_REDUCE_NORM_L2, &n));
    s += n * n;
  }
  *out = s / an->volume;
  return FCL_OK;
}

/* Fill the work field with op, then reduce it. */
static fcl_status work_reduce(fcl_analytics *an, fcl_fd *op, fcl_reduce_op r, double *out) {
  FCL_TRY(fcl_fd_apply(op, 0));
  return fcl_field_reduce(an->work, 0, r, out);
}

fcl_status fcl_analytics_compute(fcl_analytics *an, unsigned what, fcl_diagnostics *d) {
  FCL_CHECK_NULL(an, 1);
  FCL_CHECK_NULL(d, 3);
  if (what & ~(unsigned)FCL_DIAG_ALL)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (what): unknown flags 0x%x",
                     what & ~(unsigned)FCL_DIAG_ALL);
  if (!an->w && (what & (FCL_DIAG_ENSTROPHY | FCL_DIAG_MAX_VORTICITY)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "analytics of '%s': enstrophy and max|w| need a "
                     "vorticity field (created without one)", fcl_field_name(an->u));
  if (what & FCL_DIAG_ENERGY) {
    FCL_TRY(mean_square(an, an->u, &d->energy));
    d->energy /= 2;
  }
  if (what & FCL_DIAG_ENSTROPHY) {
    FCL_TRY(mean_square(an, an->w, &d->enstrophy));
    d->enstrophy /= 2;
  }
  if (what & FCL_DIAG_MAX_VORTICITY)
    FCL_TRY(work_reduce(an, an->vorticity_norm, FCL_REDUCE_MAX, &d->max_vorticity));
  if (what & FCL_DIAG_UMAX)
    for (int c = 0; c < 3; ++c) {
      d->umax[c] = 0;
      if (c < fcl_field_ncomp(an->u))
        FCL_TRY(fcl_field_reduce(an->u, c, FCL_REDUCE_NORM_LINF, &d->umax[c]));
    }
  if (what & FCL_DIAG_GRAD_U)
    FCL_TRY(work_reduce(an, an->grad_norm, FCL_REDUCE_MAX, &d->max_grad_u));
  if (what & FCL_DIAG_DIVERGENCE) {
    double l2;
    FCL_TRY(work_reduce(an, an->divergence, FCL_REDUCE_NORM_L2, &l2));
    d->divergence = l2 / sqrt(an->volume);
  }
  return FCL_OK;
}

fcl_status fcl_analytics_dt_inputs(fcl_analytics *an, bool with_gradient, fcl_dt_inputs *in) {
  FCL_CHECK_NULL(an, 1);
  FCL_CHECK_NULL(in, 3);
  fcl_diagnostics d = {0};
  /* every reduction enqueued before the one wait, for the last of them (the queue runs in
   * order: the earlier ones are done by then, so their finish does not wait) */
  if (!an->umax) FCL_TRY(fcl_reduction_create(an->u, FCL_REDUCE_NORM_LINF, &an->umax));
  if (with_gradient && !an->grad_max)
    FCL_TRY(fcl_reduction_create(an->work, FCL_REDUCE_MAX, &an->grad_max));
  FCL_TRY(fcl_reduction_start(an->umax));
  fcl_status st = FCL_OK;
  if (with_gradient) {
    st = fcl_fd_apply(an->grad_norm, 0);
    if (st == FCL_OK) st = fcl_reduction_start(an->grad_max);
    if (st == FCL_OK) st = fcl_reduction_finish(an->grad_max, &d.max_grad_u);
  }
  if (st != FCL_OK) { /* no reduction stays in flight for the next measure */
    fcl_reduction_cancel(an->grad_max);
    fcl_reduction_cancel(an->umax);
    return st;
  }
  FCL_TRY(fcl_reduction_finish(an->umax, d.umax));
  const fcl_domain *dom = fcl_topology_domain(fcl_field_topology(an->u));
  *in = (fcl_dt_inputs){.dim = dom->dim, .grad_u_max = d.max_grad_u};
  for (int a = 0; a < 3; ++a) {
    in->umax[a] = d.umax[a];
    in->dx[a] = a < dom->dim ? fcl_domain_spacing(dom, a) : 0;
  }
  return FCL_OK;
}
