/* Global diagnostics: reductions of the fields, or of a scalar work field that a generated
 * pointwise or stencil kernel fills first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "one_pass.h"
#include "flowcl/analytics.h"
#include "str.h"

/* The diagnostics' reductions, one per quantity (those of the work field are started right
 * after the kernel that fills it, before the next one overwrites it: the queue is in order).
 * Started in this order, finished in the reverse one: the first finish is the only wait. */
enum { DIAG_ENERGY, DIAG_ENSTROPHY, DIAG_UMAX, DIAG_VORTICITY, DIAG_GRAD, DIAG_DIV, NDIAG };

struct fcl_analytics {
  fcl_field *u, *w, *work; /* work: from the pool given at creation, which the one pass uses too */
  fcl_fd *grad_norm, *divergence, *vorticity_norm;
  /* On a GPU, the dt measure with the gradient and the diagnostics with a vorticity run one
   * kernel over the fields (one_pass.h); otherwise reductions of u and of the work field, one
   * host wait for all (a CPU device runs the generated, vectorized stencil kernels faster than
   * the one pass: 128^3 on PoCL, 2 cores). */
  fcl_reduction *umax, *grad_max;
  fcl__one_pass *dt, *all;
  bool one_pass;
  fcl_reduction *diag[NDIAG]; /* fcl_analytics_compute's: one host wait for all */
  double volume;
};

void fcl_analytics_destroy(fcl_analytics **an) {
  if (!an || !*an) return;
  fcl_fd_destroy(&(*an)->grad_norm);
  fcl_fd_destroy(&(*an)->divergence);
  fcl_fd_destroy(&(*an)->vorticity_norm);
  fcl_reduction_destroy(&(*an)->umax);
  fcl_reduction_destroy(&(*an)->grad_max);
  fcl__one_pass_destroy(&(*an)->dt);
  fcl__one_pass_destroy(&(*an)->all);
  for (int r = 0; r < NDIAG; ++r) fcl_reduction_destroy(&(*an)->diag[r]);
  fcl_field_destroy(&(*an)->work);
  free(*an);
  *an = NULL;
}

/* work = |w| at every point. */
static fcl_status vorticity_norm(fcl_analytics *an) {
  static const char *const names[3] = {"w0", "w1", "w2"};
  const int n = fcl_field_ncomp(an->w);
  fcl_fd_binding b[4] = {{"s", an->work, 0, 0}};
  fcl__str text = {0};
  fcl__str_printf(&text, "s[k, j, i] = sqrt(");
  for (int c = 0; c < n; ++c) {
    b[1 + c] = (fcl_fd_binding){names[c], an->w, c, 0};
    fcl__str_printf(&text, "%s%s[k, j, i] * %s[k, j, i]", c ? " + " : "", names[c], names[c]);
  }
  fcl__str_printf(&text, ")\n");
  const fcl_status st =
      text.failed
          ? FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "analytics: the vorticity norm's kernel text")
          : fcl_fd_kernel_create("analytics.vorticity_norm", 1 + (size_t)n, b, text.s,
                                 (double)(n + 1) * (double)fcl_dtype_size(fcl_field_dtype(an->w)),
                                 &an->vorticity_norm);
  free(text.s);
  return st;
}

fcl_status fcl_analytics_create(fcl_field *u, fcl_field *w, fcl_pool *pool, fcl_analytics **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(pool, 3);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  fcl_topology *t = fcl_field_topology(u);
  const fcl_domain *d = fcl_topology_domain(t);
  if (fcl_field_ncomp(u) != d->dim)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "analytics: the velocity '%s' has %d components "
                     "in %dD",
                     fcl_field_name(u), fcl_field_ncomp(u), d->dim);
  if (w && (fcl_field_ncomp(w) != (d->dim == 3 ? 3 : 1) || fcl_field_topology(w) != t ||
            fcl_field_dtype(w) != fcl_field_dtype(u) || fcl_field_queue(w) != fcl_field_queue(u)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "analytics: the vorticity '%s' must have %d "
                     "component(s) on the topology, precision and queue of '%s'",
                     fcl_field_name(w), d->dim == 3 ? 3 : 1, fcl_field_name(u));
  fcl_analytics *an = calloc(1, sizeof *an);
  if (!an) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "analytics");
  an->u = u;
  an->w = w;
  fcl_device *dev;
  fcl_device_info info;
  fcl_status st = fcl_queue_device(fcl_field_queue(u), &dev);
  if (st == FCL_OK) st = fcl_device_get_info(dev, &info);
  an->one_pass = st == FCL_OK && (info.type & FCL_DEVICE_GPU);
  an->volume = 1;
  for (int a = 0; a < d->dim; ++a) an->volume *= d->length[a];
  char name[96];
  snprintf(name, sizeof name, "%s.analytics", fcl_field_name(u));
  if (st == FCL_OK)
    st = fcl_field_create(t, fcl_field_context(u), fcl_field_queue(u), pool, name, 1,
                          fcl_field_dtype(u), &an->work);
  if (st == FCL_OK) st = fcl_fd_gradient_norm_create(u, an->work, 4, &an->grad_norm);
  if (st == FCL_OK) st = fcl_fd_divergence_create(u, an->work, 4, &an->divergence);
  if (st == FCL_OK && w) st = vorticity_norm(an);
  if (st != FCL_OK) fcl_analytics_destroy(&an);
  *out = an;
  return st;
}

/* <|f|^2> over the domain: the sum of the components' squared L2 norms over the volume. */
/* Start reduction r of field f (created at its first use). */
static fcl_status start(fcl_analytics *an, int r, fcl_field *f, fcl_reduce_op op) {
  if (!an->diag[r]) FCL_TRY(fcl_reduction_create(f, op, &an->diag[r]));
  return fcl_reduction_start(an->diag[r]);
}

/* Enqueue the requested quantities' kernels and reductions; nothing waits. u's ghosts are
 * exchanged once, for the first stencil that reads them. */
static fcl_status start_all(fcl_analytics *an, unsigned what) {
  if (what & FCL_DIAG_ENERGY) FCL_TRY(start(an, DIAG_ENERGY, an->u, FCL_REDUCE_NORM_L2));
  if (what & FCL_DIAG_ENSTROPHY) FCL_TRY(start(an, DIAG_ENSTROPHY, an->w, FCL_REDUCE_NORM_L2));
  if (what & FCL_DIAG_UMAX) FCL_TRY(start(an, DIAG_UMAX, an->u, FCL_REDUCE_NORM_LINF));
  if (what & FCL_DIAG_MAX_VORTICITY) {
    FCL_TRY(fcl_fd_apply(an->vorticity_norm, 0));
    FCL_TRY(start(an, DIAG_VORTICITY, an->work, FCL_REDUCE_MAX));
  }
  if (what & FCL_DIAG_GRAD_U) {
    FCL_TRY(fcl_fd_apply(an->grad_norm, 0));
    FCL_TRY(start(an, DIAG_GRAD, an->work, FCL_REDUCE_MAX));
  }
  if (what & FCL_DIAG_DIVERGENCE) {
    FCL_TRY(what & FCL_DIAG_GRAD_U ? fcl_fd_enqueue(an->divergence, 0)
                                   : fcl_fd_apply(an->divergence, 0));
    FCL_TRY(start(an, DIAG_DIV, an->work, FCL_REDUCE_NORM_L2));
  }
  return FCL_OK;
}

/* Sum over components of the squared L2 norms, per unit volume. */
static double mean_square(const fcl_analytics *an, const double *norms, int ncomp) {
  double s = 0;
  for (int c = 0; c < ncomp; ++c) s += norms[c] * norms[c];
  return s / an->volume;
}

fcl_status fcl_analytics_compute(fcl_analytics *an, unsigned what, fcl_diagnostics *d) {
  FCL_CHECK_NULL(an, 1);
  FCL_CHECK_NULL(d, 3);
  if (what & ~(unsigned)FCL_DIAG_ALL)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (what): unknown flags 0x%x",
                     what & ~(unsigned)FCL_DIAG_ALL);
  if (!an->w && (what & (FCL_DIAG_ENSTROPHY | FCL_DIAG_MAX_VORTICITY)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "analytics of '%s': enstrophy and max|w| need a "
                     "vorticity field (created without one)",
                     fcl_field_name(an->u));
  /* a stencil or the vorticity's norm asked for: every quantity in one kernel, those asked for
   * copied (plain reductions read only the fields they need) */
  if (an->one_pass && an->w &&
      (what & (FCL_DIAG_GRAD_U | FCL_DIAG_DIVERGENCE | FCL_DIAG_MAX_VORTICITY))) {
    fcl_diagnostics all = {0};
    if (!an->all) FCL_TRY(fcl__one_pass_create(an->u, an->w, fcl_field_pool(an->work), &an->all));
    FCL_TRY(fcl__one_pass_measure(an->all, &all));
    if (what & FCL_DIAG_ENERGY) d->energy = all.energy;
    if (what & FCL_DIAG_ENSTROPHY) d->enstrophy = all.enstrophy;
    if (what & FCL_DIAG_MAX_VORTICITY) d->max_vorticity = all.max_vorticity;
    if (what & FCL_DIAG_UMAX)
      for (int c = 0; c < 3; ++c) d->umax[c] = all.umax[c];
    if (what & FCL_DIAG_GRAD_U) d->max_grad_u = all.max_grad_u;
    if (what & FCL_DIAG_DIVERGENCE) d->divergence = all.divergence;
    return FCL_OK;
  }
  fcl_status st = start_all(an, what);
  double v[NDIAG][3] = {{0}};
  for (int r = NDIAG - 1; r >= 0 && st == FCL_OK; --r)
    if (fcl_reduction_in_flight(an->diag[r])) st = fcl_reduction_finish(an->diag[r], v[r]);
  if (st != FCL_OK) { /* nothing stays in flight for the next call */
    for (int r = 0; r < NDIAG; ++r) fcl_reduction_cancel(an->diag[r]);
    return st;
  }
  if (what & FCL_DIAG_ENERGY)
    d->energy = mean_square(an, v[DIAG_ENERGY], fcl_field_ncomp(an->u)) / 2;
  if (what & FCL_DIAG_ENSTROPHY)
    d->enstrophy = mean_square(an, v[DIAG_ENSTROPHY], fcl_field_ncomp(an->w)) / 2;
  if (what & FCL_DIAG_MAX_VORTICITY) d->max_vorticity = v[DIAG_VORTICITY][0];
  if (what & FCL_DIAG_UMAX)
    for (int c = 0; c < 3; ++c) d->umax[c] = c < fcl_field_ncomp(an->u) ? v[DIAG_UMAX][c] : 0;
  if (what & FCL_DIAG_GRAD_U) d->max_grad_u = v[DIAG_GRAD][0];
  if (what & FCL_DIAG_DIVERGENCE) d->divergence = v[DIAG_DIV][0] / sqrt(an->volume);
  return FCL_OK;
}

fcl_status fcl_analytics_dt_inputs(fcl_analytics *an, bool with_gradient, fcl_dt_inputs *in) {
  FCL_CHECK_NULL(an, 1);
  FCL_CHECK_NULL(in, 3);
  fcl_diagnostics d = {0};
  if (with_gradient && an->one_pass) {
    if (!an->dt) FCL_TRY(fcl__one_pass_create(an->u, NULL, fcl_field_pool(an->work), &an->dt));
    FCL_TRY(fcl__one_pass_measure(an->dt, &d));
  } else {
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
  }
  const fcl_domain *dom = fcl_topology_domain(fcl_field_topology(an->u));
  *in = (fcl_dt_inputs){.dim = dom->dim, .grad_u_max = d.max_grad_u};
  for (int a = 0; a < 3; ++a) {
    in->umax[a] = a < dom->dim ? d.umax[a] : 0;
    in->dx[a] = a < dom->dim ? fcl_domain_spacing(dom, a) : 0;
  }
  return FCL_OK;
}
