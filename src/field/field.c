/* Discrete fields: padded local storage from the pool, initialisation from a host function,
 * host read-back and write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "field_impl.h"

/* The field kernels for the field's dtype (and double accumulation where the device has it). */
static fcl_status field_program(fcl_field *f) {
  fcl_device *dev;
  FCL_TRY(fcl_queue_device(f->queue, &dev));
  fcl_device_info info;
  FCL_TRY(fcl_device_get_info(dev, &info));
  bool fp64 = info.double_fp_config != 0;
  if (f->dtype == FCL_FLOAT64 && !fp64)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "field '%s': double precision on %s, which has no "
                     "cl_khr_fp64",
                     f->name, info.name);
  char options[96];
  snprintf(options, sizeof options, "-DT=%s%s -DREDUCE_ROWS=%d",
           f->dtype == FCL_FLOAT64 ? "double" : "float", fp64 ? " -DFCL_FP64" : "",
           FCL__REDUCE_ROWS);
  FCL_TRY(fcl_program_create_builtin(f->context, "field.cl", &f->program));
  return fcl_program_build(f->program, options);
}

fcl_status fcl_field_create(fcl_topology *topo, fcl_context *context, fcl_queue *queue,
                            fcl_pool *pool, const char *name, int ncomp, fcl_dtype dtype,
                            fcl_field **out) {
  FCL_CHECK_NULL(topo, 1);
  FCL_CHECK_NULL(context, 2);
  FCL_CHECK_NULL(queue, 3);
  FCL_CHECK_NULL(pool, 4);
  FCL_CHECK_NULL(name, 5);
  FCL_CHECK_ARG(ncomp >= 1 && ncomp <= 3, 6, "ncomp", "must be 1, 2 or 3");
  FCL_CHECK_ARG(dtype == FCL_FLOAT32 || dtype == FCL_FLOAT64, 7, "dtype",
                "must be FCL_FLOAT32 or FCL_FLOAT64");
  FCL_CHECK_NULL(out, 8);
  *out = NULL;
  fcl_field *f = calloc(1, sizeof *f);
  if (!f || !(f->name = strdup(name))) {
    free(f);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "field '%s'", name);
  }
  f->topo = topo;
  f->context = fcl_context_retain(context);
  f->queue = queue;
  fcl_queue_retain(queue);
  f->pool = fcl_pool_retain(pool);
  f->ncomp = ncomp;
  f->dtype = dtype;
  f->itemsize = fcl_dtype_size(dtype);
  for (int c = 0; c < 3; ++c) memcpy(f->bc[c], topo->domain.bc, sizeof f->bc[c]);
  for (int a = 0; a < 3; ++a) f->padded[a] = (size_t)(topo->local[a] + 2 * topo->origin[a]);
  size_t shape[3] = {f->padded[2], f->padded[1], f->padded[0]};
  fcl_status st = field_program(f);
  for (int c = 0; st == FCL_OK && c < ncomp; ++c) {
    st = fcl_array_create(pool, queue, dtype, 3, shape, &f->comp[c]);
    if (st == FCL_OK) {
      double zero = 0;
      st = fcl_array_fill(f->comp[c], queue, &zero, 0, NULL, NULL);
    }
  }
  if (st == FCL_OK) st = fcl__ghost_plan_create(f, pool, false, false, &f->ghosts);
  if (st == FCL_OK) st = fcl__ghost_plan_create(f, pool, false, true, &f->local);
  if (st == FCL_OK) st = fcl__ghost_plan_create(f, pool, true, false, &f->accumulate);
  if (st == FCL_OK) st = fcl_queue_finish(queue);
  if (st != FCL_OK) {
    fcl_field_destroy(&f);
    return st;
  }
  *out = f;
  return FCL_OK;
}

void fcl_field_destroy(fcl_field **field) {
  if (!field || !*field) return;
  fcl_field *f = *field;
  if (f->queue) fcl_queue_finish(f->queue);
  fcl__ghost_plan_destroy(&f->ghosts);
  fcl__ghost_plan_destroy(&f->local);
  fcl__ghost_plan_destroy(&f->accumulate);
  fcl__reduce_state_free(f->reduce);
  fcl__transpose_cache_free(f);
  for (int c = 0; c < 3; ++c) fcl_array_destroy(&f->comp[c]);
  fcl_pool_release(&f->pool);
  fcl_program_release(&f->program);
  fcl_queue_release(&f->queue);
  fcl_context_release(&f->context);
  free(f->name);
  free(f);
  *field = NULL;
}

fcl_status fcl_field_set_component_bc(fcl_field *f, int comp, int axis, fcl_bc lower,
                                      fcl_bc upper) {
  FCL_CHECK_NULL(f, 1);
  FCL_TRY(fcl__field_check_comp(f, comp, 2));
  const fcl_domain *d = &f->topo->domain;
  FCL_CHECK_ARG(axis >= 0 && axis < d->dim, 3, "axis", "not an axis of the domain");
  if (d->bc[axis][0] == FCL_BC_PERIODIC)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 3 (axis): field '%s' is periodic along axis %d; component "
                     "conditions are for walls",
                     f->name, axis);
  if (lower != FCL_BC_DIRICHLET && lower != FCL_BC_NEUMANN)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 4 (lower): %s (%d); a wall is FCL_BC_DIRICHLET or FCL_BC_NEUMANN",
                     lower == FCL_BC_PERIODIC ? "FCL_BC_PERIODIC" : "not a condition", (int)lower);
  if (upper != FCL_BC_DIRICHLET && upper != FCL_BC_NEUMANN)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 5 (upper): %s (%d); a wall is FCL_BC_DIRICHLET or FCL_BC_NEUMANN",
                     upper == FCL_BC_PERIODIC ? "FCL_BC_PERIODIC" : "not a condition", (int)upper);
  fcl__ghost_plan *plans[3] = {f->ghosts, f->local, f->accumulate};
  for (int i = 0; i < 3; ++i)
    if (fcl__ghost_plan_begun(plans[i]))
      return FCL_ERROR(FCL_ERR_INVALID_STATE,
                       "field '%s': a ghost exchange is in flight (begun, not ended); set "
                       "component conditions between exchanges",
                       f->name);
  if (f->bc[comp][axis][0] == lower && f->bc[comp][axis][1] == upper) return FCL_OK;
  /* the wall mirrors are kernels of the exchange plans: plan them again, the old ones kept
   * until the new ones exist (a failure leaves the field as it was) */
  const fcl_bc was[2] = {f->bc[comp][axis][0], f->bc[comp][axis][1]};
  f->bc[comp][axis][0] = lower;
  f->bc[comp][axis][1] = upper;
  fcl__ghost_plan *now[3] = {NULL, NULL, NULL};
  /* each creation is collective where the exchange has messages: every rank makes all three,
   * then the ranks agree, and only then is anything committed */
  fcl_status st = FCL_OK, s2;
  for (int i = 0; i < 3; ++i) {
    s2 = fcl__ghost_plan_create(f, f->pool, i == 2, i == 1, &now[i]);
    if (st == FCL_OK) st = s2;
  }
  /* the old plans' commands may still be queued */
  s2 = fcl_queue_finish(f->queue);
  if (st == FCL_OK) st = s2;
  int ok = st == FCL_OK, all = ok;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, f->topo->comm);
  if (st == FCL_OK && !all)
    st = FCL_ERROR(FCL_ERR_INVALID_STATE,
                   "field '%s': planning the exchanges again failed on another rank (see its "
                   "error)",
                   f->name);
  fcl__ghost_plan **drop = now;
  if (st == FCL_OK) {
    f->ghosts = now[0], f->local = now[1], f->accumulate = now[2];
    drop = plans;
  } else {
    f->bc[comp][axis][0] = was[0];
    f->bc[comp][axis][1] = was[1];
  }
  for (int i = 0; i < 3; ++i) fcl__ghost_plan_destroy(&drop[i]);
  return st;
}

fcl_bc fcl_field_component_bc(const fcl_field *f, int comp, int axis, int side) {
  if (!f || comp < 0 || comp >= f->ncomp || axis < 0 || axis > 2 || side < 0 || side > 1)
    return FCL_BC_PERIODIC;
  return f->bc[comp][axis][side];
}

fcl_status fcl_field_swap(fcl_field *a, fcl_field *b) {
  FCL_CHECK_NULL(a, 1);
  FCL_CHECK_NULL(b, 2);
  if (a == b) return FCL_OK;
  if (a->topo != b->topo || a->ncomp != b->ncomp || a->dtype != b->dtype ||
      a->context != b->context || a->queue != b->queue)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "swap of '%s' and '%s': they differ in topology, components, precision, "
                     "context or queue",
                     a->name, b->name);
  if (memcmp(a->bc, b->bc, sizeof a->bc) != 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "swap of '%s' and '%s': their components' wall conditions differ "
                     "(fcl_field_set_component_bc)",
                     a->name, b->name);
  if (fcl__ghost_plan_begun(a->ghosts) || fcl__ghost_plan_begun(b->ghosts))
    return FCL_ERROR(FCL_ERR_INVALID_STATE,
                     "swap of '%s' and '%s': an exchange of '%s' is in flight (begun, not ended)",
                     a->name, b->name, fcl__ghost_plan_begun(a->ghosts) ? a->name : b->name);
  const size_t n = (size_t)a->ncomp;
  fcl_mem *old[6], *now[6];
  for (size_t c = 0; c < n; ++c) {
    old[c] = now[n + c] = fcl_field_buffer(a, (int)c);
    old[n + c] = now[c] = fcl_field_buffer(b, (int)c);
    fcl_array *keep = a->comp[c];
    a->comp[c] = b->comp[c];
    b->comp[c] = keep;
  }
  /* each field keeps its exchange plans (their staging and messages): their copies and kernels
   * follow the buffers */
  fcl__ghost_plan *plans[6] = {a->ghosts, a->local, a->accumulate,
                               b->ghosts, b->local, b->accumulate};
  for (int p = 0; p < 6; ++p) FCL_TRY(fcl__ghost_plan_rebind(plans[p], 2 * n, old, now));
  return FCL_OK;
}

const char *fcl_field_name(const fcl_field *f) { return f ? f->name : NULL; }
int fcl_field_ncomp(const fcl_field *f) { return f ? f->ncomp : 0; }
fcl_dtype fcl_field_dtype(const fcl_field *f) { return f ? f->dtype : FCL_FLOAT32; }
fcl_topology *fcl_field_topology(const fcl_field *f) { return f ? f->topo : NULL; }
fcl_context *fcl_field_context(const fcl_field *f) { return f ? f->context : NULL; }
fcl_pool *fcl_field_pool(const fcl_field *f) { return f ? f->pool : NULL; }
fcl_queue *fcl_field_queue(const fcl_field *f) { return f ? f->queue : NULL; }
const size_t *fcl_field_padded_shape(const fcl_field *f) { return f ? f->padded : NULL; }
fcl_mem *fcl_field_buffer(const fcl_field *f, int comp) {
  return f && comp >= 0 && comp < f->ncomp ? fcl_array_buffer(f->comp[comp]) : NULL;
}

size_t fcl_field_index(const fcl_field *f, int64_t i, int64_t j, int64_t k) {
  const int *o = f->topo->origin;
  return ((size_t)(k + o[2]) * f->padded[1] + (size_t)(j + o[1])) * f->padded[0] +
         (size_t)(i + o[0]);
}

fcl_status fcl__field_check_comp(const fcl_field *f, int comp, int pos) {
  if (comp < 0 || comp >= f->ncomp)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument %d (comp): %d is not a component of "
                     "field '%s' (components 0 to %d)",
                     pos, comp, f->name, f->ncomp - 1);
  return FCL_OK;
}

/* The interior as a rectangular copy between the padded buffer and packed host data. */
static fcl_rect interior_rect(const fcl_field *f, bool to_host) {
  const int64_t *n = f->topo->local;
  const int *o = f->topo->origin;
  size_t origin[3] = {(size_t)o[0] * f->itemsize, (size_t)o[1], (size_t)o[2]};
  fcl_rect r = {.region = {(size_t)n[0] * f->itemsize, (size_t)n[1], (size_t)n[2]}};
  size_t row = f->padded[0] * f->itemsize, slice = row * f->padded[1];
  if (to_host) {
    memcpy(r.src_origin, origin, sizeof origin);
    r.src_row_pitch = row, r.src_slice_pitch = slice;
  } else {
    memcpy(r.dst_origin, origin, sizeof origin);
    r.dst_row_pitch = row, r.dst_slice_pitch = slice;
  }
  return r;
}

fcl_status fcl_field_read(const fcl_field *f, int comp, bool with_ghosts, void *host) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(host, 4);
  FCL_TRY(fcl__field_check_comp(f, comp, 2));
  if (with_ghosts)
    return fcl_array_read(f->comp[comp], f->queue, FCL_BLOCKING, host, 0, NULL, NULL);
  fcl_rect r = interior_rect(f, true);
  return fcl_mem_read_rect(f->queue, fcl_field_buffer(f, comp), host, &r, FCL_BLOCKING, 0, NULL,
                           NULL);
}

fcl_status fcl_field_write(fcl_field *f, int comp, bool with_ghosts, const void *host) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(host, 4);
  FCL_TRY(fcl__field_check_comp(f, comp, 2));
  if (with_ghosts)
    return fcl_array_write(f->comp[comp], f->queue, FCL_BLOCKING, host, 0, NULL, NULL);
  fcl_rect r = interior_rect(f, false);
  return fcl_mem_write_rect(f->queue, fcl_field_buffer(f, comp), host, &r, FCL_BLOCKING, 0, NULL,
                            NULL);
}

fcl_status fcl_field_init(fcl_field *f, fcl_field_init_fn fn, void *user) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(fn, 2);
  const fcl_topology *t = f->topo;
  size_t total = f->padded[0] * f->padded[1] * f->padded[2];
  void *host = calloc(total * (size_t)f->ncomp, f->itemsize);
  if (!host) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "field '%s': init staging", f->name);
  double h[3], x[3] = {0, 0, 0}, v[3];
  for (int a = 0; a < 3; ++a) h[a] = fcl_domain_spacing(&t->domain, a);
  for (int64_t k = 0; k < t->local[2]; ++k)
    for (int64_t j = 0; j < t->local[1]; ++j)
      for (int64_t i = 0; i < t->local[0]; ++i) {
        int64_t l[3] = {i, j, k};
        for (int a = 0; a < t->domain.dim; ++a)
          x[a] = t->domain.origin[a] + (double)(t->offset[a] + l[a]) * h[a];
        fn(user, x, v);
        size_t at = fcl_field_index(f, i, j, k);
        for (int c = 0; c < f->ncomp; ++c) {
          if (f->dtype == FCL_FLOAT64)
            ((double *)host)[c * total + at] = v[c];
          else
            ((float *)host)[c * total + at] = (float)v[c];
        }
      }
  fcl_status st = FCL_OK;
  for (int c = 0; st == FCL_OK && c < f->ncomp; ++c)
    st = fcl_field_write(f, c, true, (char *)host + c * total * f->itemsize);
  free(host);
  return st;
}
