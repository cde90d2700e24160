/* Statistics of the velocity and the vorticity in one pass (see one_pass.h). */
#include "one_pass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flowcl/launch.h"

/* tiles of TX x TY columns (analytics.cl); the planes shared among enough work-groups to give
 * each compute unit about GROUPS_PER_CU, none fewer than MIN_PLANES (the window's warm-up
 * reads 5 planes) */
enum { TX = 32, TY = 8, GROUPS_PER_CU = 16, MIN_PLANES = 6 };

struct fcl__one_pass {
  fcl_field *u, *w;
  fcl_program *program;
  fcl_launcher *launcher;
  fcl_mem *bound[6];  /* u's then w's buffers as the kernel's first arguments (fcl_field_swap) */
  fcl_array *partial; /* per work-group partials, from the analytics' pool */
  void *host;
  size_t groups, itemsize; /* partials in the field's precision */
  int dim, nmax, nstats;   /* the maxima first, then the sums (with w) */
  double cell, volume;     /* a cell's and the domain's */
};

void fcl__one_pass_destroy(fcl__one_pass **s) {
  if (!s || !*s) return;
  fcl_launcher_destroy(&(*s)->launcher);
  fcl_program_release(&(*s)->program);
  fcl_array_destroy(&(*s)->partial);
  fcl_host_free(fcl_field_context((*s)->u), (*s)->host);
  free(*s);
  *s = NULL;
}

/* The kernel's six field arguments: u's components, then w's; 2D: u1 stands in for the third,
 * unread; without w, u's buffers stand in for it. */
static void buffers(const fcl__one_pass *s, fcl_mem *out[6]) {
  const int nw = s->w ? fcl_field_ncomp(s->w) : 0;
  for (int c = 0; c < 3; ++c) {
    out[c] = fcl_field_buffer(s->u, c < s->dim ? c : s->dim - 1);
    out[3 + c] = c < nw ? fcl_field_buffer(s->w, c) : fcl_field_buffer(s->u, c < s->dim ? c : 0);
  }
}

static fcl_status launcher(fcl__one_pass *s, fcl_pool *pool, const fcl_device_info *info) {
  fcl_field *u = s->u;
  const fcl_topology *t = fcl_field_topology(u);
  const fcl_domain *d = fcl_topology_domain(t);
  const int64_t *n = fcl_topology_local_resolution(t);
  const int *o = fcl_topology_origin(t);
  const size_t *p = fcl_field_padded_shape(u);
  const bool f64 = fcl_field_dtype(u) == FCL_FLOAT64;
  char options[96];
  snprintf(options, sizeof options, "-DT=%s -DDIM=%d -DWITH_W=%d -DTX=%d -DTY=%d%s",
           f64 ? "double" : "float", s->dim, s->w != NULL, TX, TY,
           info->double_fp_config ? " -DFCL_FP64" : "");
  FCL_TRY(fcl_program_create_builtin(fcl_field_context(u), "analytics.cl", &s->program));
  FCL_TRY(fcl_program_build(s->program, options));
  const size_t tiles[2] = {((size_t)n[0] + TX - 1) / TX, ((size_t)n[1] + TY - 1) / TY};
  const size_t most = GROUPS_PER_CU *
                      (size_t)(info->max_compute_units ? info->max_compute_units : 1);
  const size_t planes = s->dim == 3 ? (size_t)n[2] : 1;
  size_t shares = (most + tiles[0] * tiles[1] - 1) / (tiles[0] * tiles[1]);
  if (shares > planes / MIN_PLANES) shares = planes / MIN_PLANES;
  if (shares < 1) shares = 1;
  s->groups = tiles[0] * tiles[1] * shares;
  s->itemsize = info->double_fp_config ? sizeof(double) : sizeof(float);
  const size_t count = s->groups * (size_t)s->nstats;
  FCL_TRY(fcl_array_create(pool, fcl_field_queue(u),
                           info->double_fp_config ? FCL_FLOAT64 : FCL_FLOAT32, 1, &count,
                           &s->partial));
  /* read each call without staging (fcl_host_alloc) */
  FCL_TRY(fcl_host_alloc(fcl_field_context(u), count * s->itemsize, &s->host));
  fcl_arg args[28];
  int k = 0;
  const int nw = s->w ? fcl_field_ncomp(s->w) : 0;
  buffers(s, s->bound);
  for (; k < 6; ++k) args[k] = fcl_arg_buffer((unsigned)k, s->bound[k]);
  args[k] = fcl_arg_i64((unsigned)k, (int64_t)p[0]), ++k;
  args[k] = fcl_arg_i64((unsigned)k, (int64_t)(p[0] * p[1])), ++k;
  for (int a = 0; a < 3; ++a) args[k] = fcl_arg_i32((unsigned)k, a < s->dim ? o[a] : 0), ++k;
  for (int a = 0; a < 3; ++a)
    args[k] = fcl_arg_i32((unsigned)k, a < s->dim ? (int32_t)n[a] : 1), ++k;
  const int64_t *off = fcl_topology_offset(t);
  for (int a = 0; a < 3; ++a) args[k] = fcl_arg_i64((unsigned)k, a < s->dim ? off[a] : 0), ++k;
  int bounded = 0;
  for (int a = 0; a < 3; ++a) {
    args[k] = fcl_arg_i64((unsigned)k, a < s->dim ? d->resolution[a] : 1), ++k;
    if (a < s->dim && d->bc[a][0] != FCL_BC_PERIODIC) bounded |= 1 << a;
  }
  args[k] = fcl_arg_i32((unsigned)k, bounded), ++k;
  for (int a = 0; a < 3; ++a) {
    const double h = a < s->dim ? fcl_domain_spacing(d, a) : 1;
    const double c1 = 2.0 / 3.0 / h, c2 = 1.0 / 12.0 / h; /* as fd.c writes them */
    args[k] = f64 ? fcl_arg_f64((unsigned)k, c1) : fcl_arg_f32((unsigned)k, (float)c1), ++k;
    args[k] = f64 ? fcl_arg_f64((unsigned)k, c2) : fcl_arg_f32((unsigned)k, (float)c2), ++k;
  }
  args[k] = fcl_arg_buffer((unsigned)k, fcl_array_buffer(s->partial)), ++k;
  size_t points = 1;
  for (int a = 0; a < s->dim; ++a) points *= (size_t)n[a];
  fcl_launch_config cfg = {
      .queue = fcl_field_queue(u),
      .work_dim = 3,
      .global = {tiles[0] * TX, tiles[1] * TY, shares},
      .local = {TX, TY, 1},
      .bytes_per_launch = points * (size_t)(s->dim + nw) * fcl_dtype_size(fcl_field_dtype(u))};
  char name[160];
  snprintf(name, sizeof name, "%s.analytics.%s", fcl_field_name(u), s->w ? "diagnostics" : "dt");
  return fcl_launcher_create_kernel(s->program, name, "field_stats", (size_t)k, args, 0, NULL, &cfg,
                                    &s->launcher);
}

fcl_status fcl__one_pass_create(fcl_field *u, fcl_field *w, fcl_pool *pool, fcl__one_pass **out) {
  *out = NULL;
  const fcl_topology *t = fcl_field_topology(u);
  const fcl_domain *d = fcl_topology_domain(t);
  const int *g = fcl_topology_ghosts(t);
  for (int a = 0; a < d->dim; ++a)
    if (g[a] < 2)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "analytics of '%s': the gradient's differences of order 4 need 2 ghosts, "
                       "axis %d has %d",
                       fcl_field_name(u), a, g[a]);
  fcl_device *dev;
  FCL_TRY(fcl_queue_device(fcl_field_queue(u), &dev));
  fcl_device_info info;
  FCL_TRY(fcl_device_get_info(dev, &info));
  fcl__one_pass *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "analytics of '%s'", fcl_field_name(u));
  s->u = u;
  s->w = w;
  s->dim = d->dim;
  s->nmax = d->dim + 1 + (w != NULL);
  s->nstats = s->nmax + (w ? 3 : 0);
  s->cell = s->volume = 1;
  for (int a = 0; a < d->dim; ++a) {
    s->cell *= fcl_domain_spacing(d, a);
    s->volume *= d->length[a];
  }
  fcl_status st = launcher(s, pool, &info);
  if (st != FCL_OK) {
    fcl__one_pass_destroy(&s);
    return st;
  }
  *out = s;
  return FCL_OK;
}

fcl_status fcl__one_pass_measure(fcl__one_pass *s, fcl_diagnostics *d) {
  fcl_queue *const q = fcl_field_queue(s->u);
  FCL_TRY(fcl_field_ghosts_update(s->u));
  fcl_mem *now[6];
  buffers(s, now);
  if (memcmp(now, s->bound, sizeof now)) { /* a field was swapped */
    FCL_TRY(fcl_launcher_rebind(s->launcher, 6, s->bound, now));
    memcpy(s->bound, now, sizeof now);
  }
  FCL_TRY(fcl_launcher_call(s->launcher, q, NULL, 0, NULL, NULL));
  const int nq = s->nstats;
  fcl_event *read; /* waited for through fcl_events_wait: the wait counts as a host sync */
  FCL_TRY(fcl_array_read(s->partial, q, FCL_NON_BLOCKING, s->host, 0, NULL, &read));
  fcl_status st = fcl_events_wait(1, &read);
  fcl_event_release(&read);
  FCL_TRY(st);
  double local[8] = {0}, global[8];
  for (size_t g = 0; g < s->groups; ++g)
    for (int k = 0; k < nq; ++k) {
      const size_t i = g * (size_t)nq + (size_t)k;
      const double v = s->itemsize == sizeof(double) ? ((double *)s->host)[i]
                                                     : ((float *)s->host)[i];
      local[k] = k < s->nmax ? fmax(local[k], v) : local[k] + v;
    }
  const MPI_Comm comm = fcl_topology_comm(fcl_field_topology(s->u));
  if (MPI_Allreduce(local, global, s->nmax, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS ||
      (nq > s->nmax && MPI_Allreduce(local + s->nmax, global + s->nmax, nq - s->nmax, MPI_DOUBLE,
                                     MPI_SUM, comm) != MPI_SUCCESS))
    return FCL_ERROR(FCL_ERR_MPI, "analytics of '%s': MPI_Allreduce of the statistics",
                     fcl_field_name(s->u));
  for (int c = 0; c < 3; ++c) d->umax[c] = c < s->dim ? global[c] : 0;
  d->max_grad_u = global[s->dim];
  if (s->w) {
    const double per_volume = s->cell / s->volume;
    d->max_vorticity = global[s->dim + 1];
    d->energy = global[s->nmax] * per_volume / 2;
    d->enstrophy = global[s->nmax + 1] * per_volume / 2;
    d->divergence = sqrt(global[s->nmax + 2] * per_volume);
  }
  return FCL_OK;
}
