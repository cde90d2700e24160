/* Reductions of a field component over the domain: partial statistics per work-group on the
 * device (kernels/field.cl reduce_stats: each work-group takes whole rows in turn), combined on
 * the host in double, then MPI_Allreduce. */
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
  fcl_launcher *launcher[3]; /* per component */
  cl_mem partial;
  size_t acc_size, groups;
  void *host;
} reduce_state;

void fcl__reduce_state_free(void *state) {
  reduce_state *r = state;
  if (!r) return;
  for (int c = 0; c < 3; ++c) fcl_launcher_destroy(&r->launcher[c]);
  if (r->partial) clReleaseMemObject(r->partial);
  free(r->host);
  free(r);
}

static fcl_status state_create(fcl_field *f, reduce_state **out) {
  const fcl_topology *t = f->topo;
  cl_device_id dev;
  FCL_TRY(fcl_queue_device(f->queue, &dev));
  fcl_device_info info;
  FCL_TRY(fcl_device_get_info(dev, &info));
  reduce_state *r = calloc(1, sizeof *r);
  if (!r) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "field '%s': reduction", f->name);
  r->acc_size = info.double_fp_config ? sizeof(double) : sizeof(float);
  size_t total = fcl__field_count(t->local);
  r->groups = (size_t)t->local[1] * (size_t)t->local[2]; /* rows */
  const size_t most = GROUPS_PER_CU * (size_t)(info.max_compute_units ? info.max_compute_units : 1);
  if (r->groups > most) r->groups = most;
  cl_int err;
  r->partial = clCreateBuffer(fcl_context_cl(f->context), CL_MEM_READ_WRITE,
                              r->groups * NSTAT * r->acc_size, NULL, &err);
  r->host = malloc(r->groups * NSTAT * r->acc_size);
  fcl_status st = FCL_OK;
  if (err != CL_SUCCESS) st = FCL_CL_ERROR(err, "field '%s': reduction buffer", f->name);
  else if (!r->host) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "field '%s': reduction", f->name);
  int bounded = 0;
  for (int a = 0; a < t->domain.dim; ++a)
    if (t->domain.bc[a][0] != FCL_BC_PERIODIC) bounded |= 1 << a;
  long px = (long)f->padded[0], pxy = px * (long)f->padded[1];
  for (int c = 0; st == FCL_OK && c < f->ncomp; ++c) {
    fcl_arg args[17] = {
        fcl_arg_buffer(0, fcl_field_buffer(f, c)), fcl_arg_i64(1, px), fcl_arg_i64(2, pxy),
        fcl_arg_i32(3, t->ghosts[0]), fcl_arg_i32(4, t->ghosts[1]), fcl_arg_i32(5, t->ghosts[2]),
        fcl_arg_i32(6, (int32_t)t->local[0]), fcl_arg_i32(7, (int32_t)t->local[1]),
        fcl_arg_i32(8, (int32_t)t->local[2]), fcl_arg_i64(9, t->offset[0]),
        fcl_arg_i64(10, t->offset[1]), fcl_arg_i64(11, t->offset[2]),
        fcl_arg_i64(12, t->domain.resolution[0]), fcl_arg_i64(13, t->domain.resolution[1]),
        fcl_arg_i64(14, t->domain.resolution[2]), fcl_arg_i32(15, bounded),
        fcl_arg_buffer(16, r->partial)};
    fcl_launch_config cfg = {.queue = f->queue, .work_dim = 1, .global = {r->groups * WG},
                             .local = {WG}, .bytes_per_launch = total * f->itemsize};
    char name[160];
    snprintf(name, sizeof name, "%s.reduce.%d", f->name, c);
    st = fcl_launcher_create_kernel(name, f->program, "reduce_stats", 17, args, 0, NULL, &cfg,
                                    &r->launcher[c]);
  }
  if (st != FCL_OK) {
    fcl__reduce_state_free(r);
    return st;
  }
  *out = r;
  return FCL_OK;
}

fcl_status fcl_field_reduce(fcl_field *f, int comp, fcl_reduce_op op, double *result) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(result, 4);
  FCL_TRY(fcl__field_check_comp(f, comp, 2));
  if (op < FCL_REDUCE_MIN || op > FCL_REDUCE_INTEGRAL)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (op): unknown reduction %d", (int)op);
  if (!f->reduce) FCL_TRY(state_create(f, (reduce_state **)&f->reduce));
  reduce_state *r = f->reduce;
  FCL_TRY(fcl_launcher_call(r->launcher[comp], f->queue, 0, NULL, NULL, NULL));
  FCL_CL_TRY(clEnqueueReadBuffer(f->queue, r->partial, CL_TRUE, 0, r->groups * NSTAT * r->acc_size,
                                 r->host, 0, NULL, NULL),
             "field '%s': read reduction partials", f->name);
  double s[NSTAT] = {INFINITY, -INFINITY, 0, 0, 0, 0};
  for (size_t g = 0; g < r->groups; ++g)
    for (int q = 0; q < NSTAT; ++q) {
      double v = r->acc_size == sizeof(double) ? ((double *)r->host)[g * NSTAT + q]
                                               : ((float *)r->host)[g * NSTAT + q];
      if (q == 0) s[0] = fmin(s[0], v);
      else if (q < 3) s[q] = fmax(s[q], v);
      else s[q] += v;
    }
  double local = op == FCL_REDUCE_MIN ? s[0] : op == FCL_REDUCE_MAX ? s[1]
               : op == FCL_REDUCE_NORM_LINF ? s[2] : op == FCL_REDUCE_SUM ? s[3]
               : op == FCL_REDUCE_INTEGRAL ? s[4] : s[5];
  MPI_Op mop = op == FCL_REDUCE_MIN ? MPI_MIN
             : op == FCL_REDUCE_MAX || op == FCL_REDUCE_NORM_LINF ? MPI_MAX : MPI_SUM;
  double global = 0;
  FCL_MPI_TRY(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, mop, f->topo->comm),
              "field reduce: MPI_Allreduce");
  double volume = 1;
  for (int a = 0; a < f->topo->domain.dim; ++a) volume *= fcl_domain_spacing(&f->topo->domain, a);
  if (op == FCL_REDUCE_INTEGRAL) global *= volume;
  if (op == FCL_REDUCE_NORM_L2) global = sqrt(global * volume);
  *result = global;
  return FCL_OK;
}
