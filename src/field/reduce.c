/* Reductions of field components over the domain: partial statistics per work-group on the
 * device (kernels/field.cl reduce_stats: each work-group takes whole rows in turn), read back
 * without blocking, combined on the host in double, then one MPI_Allreduce for every component
 * reduced together. fcl_field_reduce keeps one such state per field; an fcl_reduction owns its
 * own, so that one can be in flight while the field is reduced otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "field_impl.h"

/* GROUPS_PER_CU work-groups per compute unit fill a GPU (2112 on an H200's 132 units) without
 * burdening a CPU device, where each work-group is a loop over its work-items. */
enum { WG = 256, GROUPS_PER_CU = 16, NSTAT = 6 };

typedef struct {
  fcl_field *field;
  fcl_launcher *launcher[3]; /* per component, each into its own partials */
  fcl_mem *bound[3];         /* the component's buffer each reads (fcl_field_swap moves them) */
  fcl_mem *partial[3];
  void *host[3];
  fcl_event *read[3]; /* the partials' reads in flight (NULL: none) */
  size_t acc_size, groups;
} reduce_state;

static void drop(reduce_state *r, int c0, int c1);

void fcl__reduce_state_free(void *state) {
  reduce_state *r = state;
  if (!r) return;
  drop(r, 0, 3);
  for (int c = 0; c < 3; ++c) {
    fcl_launcher_destroy(&r->launcher[c]);
    if (r->partial[c]) fcl_mem_release(&r->partial[c]);
    fcl_host_free(r->field->context, r->host[c]);
  }
  free(r);
}

static fcl_status state_create(fcl_field *f, reduce_state **out) {
  const fcl_topology *t = f->topo;
  fcl_device *dev;
  FCL_TRY(fcl_queue_device(f->queue, &dev));
  fcl_device_info info;
  FCL_TRY(fcl_device_get_info(dev, &info));
  reduce_state *r = calloc(1, sizeof *r);
  if (!r) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "field '%s': reduction", f->name);
  r->field = f;
  r->acc_size = info.double_fp_config ? sizeof(double) : sizeof(float);
  size_t total = fcl__field_count(t->local);
  const size_t rows = (size_t)t->local[1] * (size_t)t->local[2];
  r->groups = (rows + FCL__REDUCE_ROWS - 1) / FCL__REDUCE_ROWS; /* each takes that many at once */
  const size_t most = GROUPS_PER_CU * (size_t)(info.max_compute_units ? info.max_compute_units : 1);
  if (r->groups > most) r->groups = most;
  const size_t bytes = r->groups * NSTAT * r->acc_size;
  int bounded = 0;
  for (int a = 0; a < t->domain.dim; ++a)
    if (t->domain.bc[a][0] != FCL_BC_PERIODIC) bounded |= 1 << a;
  long px = (long)f->padded[0], pxy = px * (long)f->padded[1];
  fcl_status st = FCL_OK;
  for (int c = 0; st == FCL_OK && c < f->ncomp; ++c) {
    st = fcl_mem_create(f->context, FCL_MEM_DEVICE, bytes, NULL, &r->partial[c]);
    if (st != FCL_OK) break;
    st = fcl_host_alloc(f->context, bytes, &r->host[c]); /* read without staging */
    if (st != FCL_OK) break;
    fcl_arg args[17] = {fcl_arg_buffer(0, fcl_field_buffer(f, c)),
                        fcl_arg_i64(1, px),
                        fcl_arg_i64(2, pxy),
                        fcl_arg_i32(3, t->origin[0]),
                        fcl_arg_i32(4, t->origin[1]),
                        fcl_arg_i32(5, t->origin[2]),
                        fcl_arg_i32(6, (int32_t)t->local[0]),
                        fcl_arg_i32(7, (int32_t)t->local[1]),
                        fcl_arg_i32(8, (int32_t)t->local[2]),
                        fcl_arg_i64(9, t->offset[0]),
                        fcl_arg_i64(10, t->offset[1]),
                        fcl_arg_i64(11, t->offset[2]),
                        fcl_arg_i64(12, t->domain.resolution[0]),
                        fcl_arg_i64(13, t->domain.resolution[1]),
                        fcl_arg_i64(14, t->domain.resolution[2]),
                        fcl_arg_i32(15, bounded),
                        fcl_arg_buffer(16, r->partial[c])};
    fcl_launch_config cfg = {.queue = f->queue,
                             .work_dim = 1,
                             .global = {r->groups * WG},
                             .local = {WG},
                             .bytes_per_launch = total * f->itemsize};
    char name[160];
    snprintf(name, sizeof name, "%s.reduce.%d", f->name, c);
    st = fcl_launcher_create_kernel(f->program, name, "reduce_stats", 17, args, 0, NULL, &cfg,
                                    &r->launcher[c]);
    r->bound[c] = fcl_field_buffer(f, c);
  }
  if (st != FCL_OK) {
    fcl__reduce_state_free(r);
    return st;
  }
  *out = r;
  return FCL_OK;
}

static fcl_status check_op(fcl_reduce_op op, int pos) {
  if (op < FCL_REDUCE_MIN || op > FCL_REDUCE_INTEGRAL)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument %d (op): unknown reduction %d", pos,
                     (int)op);
  return FCL_OK;
}

/* Wait for the reads of [c0, c1) in flight and drop them (their results unused). */
static void drop(reduce_state *r, int c0, int c1) {
  for (int c = c0; c < c1; ++c)
    if (r->read[c]) {
      fcl_events_wait(1, &r->read[c]); /* the read writes host[c] */
      fcl_event_release(&r->read[c]);
      r->read[c] = NULL;
    }
}

/* Enqueue the statistics of components [c0, c1) and their reads, and submit them (a poll of
 * their events must see them progress); no wait. On an error none stays in flight. */
static fcl_status start(reduce_state *r, int c0, int c1) {
  fcl_field *f = r->field;
  for (int c = c0; c < c1; ++c)
    if (r->read[c])
      return FCL_ERROR(FCL_ERR_INVALID_STATE,
                       "field '%s': a reduction of "
                       "component %d is already in flight",
                       f->name, c);
  fcl_status st = FCL_OK;
  for (int c = c0; c < c1 && st == FCL_OK; ++c) {
    fcl_mem *now = fcl_field_buffer(f, c); /* the field's buffers since fcl_field_swap */
    if (now != r->bound[c]) st = fcl_launcher_rebind(r->launcher[c], 1, &r->bound[c], &now);
    if (st == FCL_OK) r->bound[c] = now;
    if (st == FCL_OK) st = fcl_launcher_call(r->launcher[c], f->queue, NULL, 0, NULL, NULL);
    if (st == FCL_OK)
      st = fcl_mem_read(f->queue, r->partial[c], 0, r->groups * NSTAT * r->acc_size, r->host[c],
                        FCL_NON_BLOCKING, 0, NULL, &r->read[c]);
  }
  if (st == FCL_OK) st = fcl_queue_flush(f->queue);
  if (st != FCL_OK) drop(r, c0, c1);
  return st;
}

/* Wait for the reads of [c0, c1) (one wait), fold each on the host, one MPI_Allreduce. */
static fcl_status finish(reduce_state *r, int c0, int c1, fcl_reduce_op op, double *result) {
  fcl_field *f = r->field;
  fcl_event *ev[3] = {NULL, NULL, NULL};
  int n = 0;
  for (int c = c0; c < c1; ++c)
    if (r->read[c]) ev[n++] = r->read[c];
  if (n != c1 - c0)
    return FCL_ERROR(FCL_ERR_INVALID_STATE, "field '%s': no reduction in flight to finish",
                     f->name);
  fcl_status st = fcl_events_wait((unsigned)n, ev);
  for (int c = c0; c < c1; ++c) {
    fcl_event_release(&r->read[c]);
    r->read[c] = NULL;
  }
  FCL_TRY(st);
  double local[3];
  for (int c = c0; c < c1; ++c) {
    double s[NSTAT] = {INFINITY, -INFINITY, 0, 0, 0, 0};
    for (size_t g = 0; g < r->groups; ++g)
      for (int q = 0; q < NSTAT; ++q) {
        double v = r->acc_size == sizeof(double) ? ((double *)r->host[c])[g * NSTAT + q]
                                                 : ((float *)r->host[c])[g * NSTAT + q];
        if (q == 0)
          s[0] = fmin(s[0], v);
        else if (q < 3)
          s[q] = fmax(s[q], v);
        else
          s[q] += v;
      }
    local[c - c0] = op == FCL_REDUCE_MIN         ? s[0]
                    : op == FCL_REDUCE_MAX       ? s[1]
                    : op == FCL_REDUCE_NORM_LINF ? s[2]
                    : op == FCL_REDUCE_SUM       ? s[3]
                    : op == FCL_REDUCE_INTEGRAL  ? s[4]
                                                 : s[5];
  }
  MPI_Op mop = op == FCL_REDUCE_MIN                                 ? MPI_MIN
               : op == FCL_REDUCE_MAX || op == FCL_REDUCE_NORM_LINF ? MPI_MAX
                                                                    : MPI_SUM;
  double global[3];
  FCL_MPI_TRY(MPI_Allreduce(local, global, c1 - c0, MPI_DOUBLE, mop, f->topo->comm),
              "field reduce: MPI_Allreduce");
  double volume = 1;
  for (int a = 0; a < f->topo->domain.dim; ++a) volume *= fcl_domain_spacing(&f->topo->domain, a);
  for (int c = 0; c < c1 - c0; ++c) {
    if (op == FCL_REDUCE_INTEGRAL) global[c] *= volume;
    if (op == FCL_REDUCE_NORM_L2) global[c] = sqrt(global[c] * volume);
    result[c] = global[c];
  }
  return FCL_OK;
}

fcl_status fcl_field_reduce(fcl_field *f, int comp, fcl_reduce_op op, double *result) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(result, 4);
  FCL_TRY(fcl__field_check_comp(f, comp, 2));
  FCL_TRY(check_op(op, 3));
  if (!f->reduce) FCL_TRY(state_create(f, (reduce_state **)&f->reduce));
  FCL_TRY(start(f->reduce, comp, comp + 1));
  return finish(f->reduce, comp, comp + 1, op, result);
}

struct fcl_reduction {
  reduce_state *state;
  fcl_reduce_op op;
};

fcl_status fcl_reduction_create(fcl_field *f, fcl_reduce_op op, fcl_reduction **out) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  FCL_TRY(check_op(op, 2));
  fcl_reduction *r = calloc(1, sizeof *r);
  if (!r) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "field '%s': reduction", f->name);
  r->op = op;
  fcl_status st = state_create(f, &r->state);
  if (st != FCL_OK) {
    free(r);
    return st;
  }
  *out = r;
  return FCL_OK;
}

fcl_status fcl_reduction_start(fcl_reduction *r) {
  FCL_CHECK_NULL(r, 1);
  return start(r->state, 0, r->state->field->ncomp);
}

bool fcl_reduction_in_flight(const fcl_reduction *r) { return r && r->state->read[0]; }

bool fcl_reduction_done(const fcl_reduction *r) {
  if (!fcl_reduction_in_flight(r)) return false;
  for (int c = 0; c < r->state->field->ncomp; ++c) {
    int s = FCL_EVENT_QUEUED;
    if (fcl_event_status(r->state->read[c], &s) != FCL_OK || s > FCL_EVENT_COMPLETE) return false;
  }
  return true;
}

fcl_status fcl_reduction_finish(fcl_reduction *r, double *results) {
  FCL_CHECK_NULL(r, 1);
  FCL_CHECK_NULL(results, 2);
  return finish(r->state, 0, r->state->field->ncomp, r->op, results);
}

void fcl_reduction_cancel(fcl_reduction *r) {
  if (r) drop(r->state, 0, 3);
}

void fcl_reduction_destroy(fcl_reduction **r) {
  if (!r || !*r) return;
  fcl__reduce_state_free((*r)->state);
  free(*r);
  *r = NULL;
}
