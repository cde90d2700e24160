/* Grid transfers (transfer.h): the checks that one grid refines the other and that each rank's
 * source points and ghosts cover its destination, and one launch per component of
 * kernels/transfer.cl (built for the factor and dimension). The launches follow the fields'
 * buffers through fcl_field_swap (fcl_launcher_rebind). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flowcl/transfer.h"

enum { MAX_FACTOR = 8 };

struct fcl_transfer {
  char name[96];
  fcl_field *from, *dst;
  int factor, dim;
  bool interpolates;
  int ghosts; /* read on from's topology */
  fcl_program *program;
  fcl_launcher *list;   /* one launch per component */
  fcl_mem *bound[2][3]; /* from's and dst's buffers the launches were made with */
};

static const char *axis_name(int a) { return a == 0 ? "x" : a == 1 ? "y" : "z"; }

/* The factor r with fine = coarse refined by r on axis a, or 0. */
static int64_t axis_factor(const fcl_domain *coarse, const fcl_domain *fine, int a) {
  const bool periodic = coarse->bc[a][0] == FCL_BC_PERIODIC;
  const int64_t nc = coarse->resolution[a] - (periodic ? 0 : 1);
  const int64_t nf = fine->resolution[a] - (periodic ? 0 : 1);
  return nc > 0 && nf % nc == 0 ? nf / nc : 0;
}

/* The domains: one dimension, origin, length and conditions; fine = coarse refined by one
 * factor on every axis. */
static fcl_status check_domains(fcl_transfer *t) {
  const fcl_domain *df = fcl_topology_domain(fcl_field_topology(t->from));
  const fcl_domain *dd = fcl_topology_domain(fcl_field_topology(t->dst));
  const char *fn = fcl_field_name(t->from), *dn = fcl_field_name(t->dst);
  if (df->dim != dd->dim)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "transfer from '%s' (%dD) to '%s' (%dD)", fn,
                     df->dim, dn, dd->dim);
  t->dim = df->dim;
  t->interpolates = dd->resolution[0] > df->resolution[0];
  const fcl_domain *coarse = t->interpolates ? df : dd, *fine = t->interpolates ? dd : df;
  for (int a = 0; a < t->dim; ++a) {
    if (df->origin[a] != dd->origin[a] || df->length[a] != dd->length[a] ||
        df->bc[a][0] != dd->bc[a][0] || df->bc[a][1] != dd->bc[a][1])
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "transfer from '%s' to '%s': axis %s differs in origin, length or "
                       "boundary conditions (%g + %g against %g + %g)",
                       fn, dn, axis_name(a), df->origin[a], df->length[a], dd->origin[a],
                       dd->length[a]);
    const int64_t r = axis_factor(coarse, fine, a);
    if (a == 0) t->factor = (int)(r > 0 && r <= MAX_FACTOR ? r : 0);
    if (r < 2 || r > MAX_FACTOR || r != t->factor)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "transfer from '%s' to '%s': axis %s has %lld and %lld points; the "
                       "finer grid must refine the coarser one by one factor 2 to %d on every "
                       "axis (N to r N periodic, r (N - 1) + 1 bounded: fcl_domain_refine)",
                       fn, dn, axis_name(a), (long long)df->resolution[a],
                       (long long)dd->resolution[a], MAX_FACTOR);
    for (int c = 0; c < fcl_field_ncomp(t->from); ++c)
      for (int s = 0; s < 2; ++s)
        if (fcl_field_component_bc(t->from, c, a, s) != fcl_field_component_bc(t->dst, c, a, s))
          return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                           "transfer from '%s' to '%s': component %d has other conditions on "
                           "the %s face of axis %s (fcl_field_set_component_bc)",
                           fn, dn, c, s ? "upper" : "lower", axis_name(a));
  }
  return FCL_OK;
}

/* The fields: distinct, same components, precision, context, queue, ranks and process grid. */
static fcl_status check_fields(const fcl_transfer *t) {
  const char *fn = fcl_field_name(t->from), *dn = fcl_field_name(t->dst);
  if (t->from == t->dst)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "transfer: from and dst are both '%s'", fn);
  if (fcl_field_ncomp(t->from) != fcl_field_ncomp(t->dst) ||
      fcl_field_dtype(t->from) != fcl_field_dtype(t->dst))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "transfer from '%s' to '%s': %d and %d components, dtypes %d and %d; they "
                     "must be equal",
                     fn, dn, fcl_field_ncomp(t->from), fcl_field_ncomp(t->dst),
                     (int)fcl_field_dtype(t->from), (int)fcl_field_dtype(t->dst));
  if (fcl_field_context(t->from) != fcl_field_context(t->dst) ||
      fcl_field_queue(t->from) != fcl_field_queue(t->dst))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "transfer from '%s' to '%s': the fields must share a context and a queue", fn,
                     dn);
  const fcl_topology *tf = fcl_field_topology(t->from), *td = fcl_field_topology(t->dst);
  int same = MPI_UNEQUAL;
  MPI_Comm_compare(fcl_topology_comm(tf), fcl_topology_comm(td), &same);
  if ((same != MPI_IDENT && same != MPI_CONGRUENT) ||
      fcl_topology_rank(tf) != fcl_topology_rank(td) ||
      memcmp(fcl_topology_procs(tf), fcl_topology_procs(td), 3 * sizeof(int)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "transfer from '%s' to '%s': the topologies must have the same ranks in "
                     "the same process grid",
                     fn, dn);
  return FCL_OK;
}

/* This rank's check that from's points and ghosts cover every source point its destination
 * points read (the message for the first axis that fails, or "" when covered). */
static void local_coverage(const fcl_transfer *t, char *why, size_t size) {
  const fcl_topology *tf = fcl_field_topology(t->from), *td = fcl_field_topology(t->dst);
  const int64_t *nf = fcl_topology_local_resolution(tf), *of = fcl_topology_offset(tf);
  const int64_t *nd = fcl_topology_local_resolution(td), *od = fcl_topology_offset(td);
  const int *g = fcl_topology_ghosts(tf);
  const int64_t r = t->factor;
  why[0] = '\0';
  for (int a = 0; a < t->dim; ++a) {
    const int64_t first = od[a], last = od[a] + nd[a] - 1;
    int64_t lo, hi; /* the source points read, global indices */
    if (t->interpolates) {
      lo = first / r - 1;
      hi = last / r + 2;
    } else {
      lo = first * r - (r - 1);
      hi = last * r + (r - 1);
    }
    if (g[a] < t->ghosts || lo < of[a] - g[a] || hi > of[a] + nf[a] - 1 + g[a]) {
      snprintf(why, size,
               "axis %s: '%s' points %lld..%lld read '%s' points %lld..%lld; this rank holds "
               "%lld..%lld with %d ghosts (%d needed on every axis)",
               axis_name(a), fcl_field_name(t->dst), (long long)first, (long long)last,
               fcl_field_name(t->from), (long long)lo, (long long)hi, (long long)of[a],
               (long long)(of[a] + nf[a] - 1), g[a], t->ghosts);
      return;
    }
  }
}

/* The coverage verdict, the same on every rank (the first failing rank's reason). */
static fcl_status check_coverage(const fcl_transfer *t) {
  char why[512];
  local_coverage(t, why, sizeof why);
  const fcl_topology *tf = fcl_field_topology(t->from);
  MPI_Comm comm = fcl_topology_comm(tf);
  int mine = why[0] ? fcl_topology_rank(tf) : fcl_topology_size(tf), first = 0;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == fcl_topology_size(tf)) return FCL_OK;
  MPI_Bcast(why, (int)sizeof why, MPI_CHAR, first, comm);
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "transfer from '%s' to '%s' on rank %d: %s",
                   fcl_field_name(t->from), fcl_field_name(t->dst), first, why);
}

/* Interpolation: the coarse cells covering dst's local points along axis a (the first's
 * global index, their number); one per point beyond dim. */
static void cells(const fcl_transfer *t, int a, int64_t *first, int64_t *count) {
  const fcl_topology *td = fcl_field_topology(t->dst);
  const int64_t n = fcl_topology_local_resolution(td)[a], o = fcl_topology_offset(td)[a];
  const int64_t r = a < t->dim ? t->factor : 1;
  *first = o / r;
  *count = (o + n - 1) / r - *first + 1;
}

/* One launch per component: a work-item per coarse cell (interpolation) or coarse point
 * (restriction). */
static fcl_status build_launches(fcl_transfer *t) {
  FCL_TRY(fcl_launcher_create_list(t->name, &t->list));
  const fcl_topology *tf = fcl_field_topology(t->from), *td = fcl_field_topology(t->dst);
  const int64_t *nd = fcl_topology_local_resolution(td), *od = fcl_topology_offset(td);
  const int64_t *of = fcl_topology_offset(tf);
  const int *qd = fcl_topology_origin(td), *qf = fcl_topology_origin(tf);
  const size_t *pd = fcl_field_padded_shape(t->dst), *pf = fcl_field_padded_shape(t->from);
  const int64_t base = qd[0] + qd[1] * (int64_t)pd[0] + qd[2] * (int64_t)(pd[0] * pd[1]);
  const size_t item = fcl_dtype_size(fcl_field_dtype(t->dst));
  const size_t points = (size_t)(nd[0] * nd[1] * nd[2]);
  size_t read = points, global[3];
  int64_t first[3], count[3];
  for (int a = 0; a < 3; ++a) {
    cells(t, a, &first[a], &count[a]);
    global[a] = (size_t)(t->interpolates ? count[a] : nd[a]);
    if (!t->interpolates && a < t->dim) read *= (size_t)t->factor;
  }
  if (t->interpolates) read = (size_t)(count[0] * count[1] * count[2]);
  for (int c = 0; c < fcl_field_ncomp(t->dst); ++c) {
    t->bound[0][c] = fcl_field_buffer(t->from, c);
    t->bound[1][c] = fcl_field_buffer(t->dst, c);
    fcl_arg args[22];
    unsigned k = 0;
    args[k] = fcl_arg_buffer(k, t->bound[1][c]), ++k;
    args[k] = fcl_arg_i64(k, base), ++k;
    args[k] = fcl_arg_i64(k, (int64_t)pd[0]), ++k;
    args[k] = fcl_arg_i64(k, (int64_t)(pd[0] * pd[1])), ++k;
    args[k] = fcl_arg_buffer(k, t->bound[0][c]), ++k;
    args[k] = fcl_arg_i64(k, (int64_t)pf[0]), ++k;
    args[k] = fcl_arg_i64(k, (int64_t)(pf[0] * pf[1])), ++k;
    if (t->interpolates) {
      for (int a = 0; a < 3; ++a) args[k] = fcl_arg_i32(k, (int32_t)count[a]), ++k;
      for (int a = 0; a < 3; ++a) args[k] = fcl_arg_i32(k, (int32_t)first[a]), ++k;
      for (int a = 0; a < 3; ++a) args[k] = fcl_arg_i32(k, (int32_t)od[a]), ++k;
    }
    for (int a = 0; a < 3; ++a) args[k] = fcl_arg_i32(k, (int32_t)nd[a]), ++k;
    if (!t->interpolates)
      for (int a = 0; a < 3; ++a) args[k] = fcl_arg_i32(k, (int32_t)od[a]), ++k;
    for (int a = 0; a < 3; ++a) args[k] = fcl_arg_i32(k, (int32_t)(qf[a] - of[a])), ++k;
    fcl_launch_config cfg = {.queue = fcl_field_queue(t->dst),
                             .work_dim = 3,
                             .global = {global[0], global[1], global[2]},
                             .bytes_per_launch = (points + read) * item};
    fcl_launcher *l = NULL;
    FCL_TRY(fcl_launcher_create_kernel(
        t->program, t->name, t->interpolates ? "transfer_interpolate" : "transfer_restrict", k,
        args, 0, NULL, &cfg, &l));
    FCL_TRY(fcl_launcher_list_push(t->list, l));
  }
  return FCL_OK;
}

static fcl_status plan(fcl_transfer *t) {
  FCL_TRY(check_fields(t));
  FCL_TRY(check_domains(t));
  t->ghosts = t->interpolates ? 2 : t->factor - 1;
  FCL_TRY(check_coverage(t));
  snprintf(t->name, sizeof t->name, "%s.%s", fcl_field_name(t->dst),
           t->interpolates ? "interpolate" : "restrict");
  const bool f64 = fcl_field_dtype(t->dst) == FCL_FLOAT64;
  char options[64];
  snprintf(options, sizeof options, "-DT=%s -DR=%d -DDIM=%d", f64 ? "double -DFCL_FP64" : "float",
           t->factor, t->dim);
  FCL_TRY(fcl_program_create_builtin(fcl_field_context(t->dst), "transfer.cl", &t->program));
  FCL_TRY(fcl_program_build(t->program, options));
  return build_launches(t);
}

fcl_status fcl_transfer_create(fcl_field *from, fcl_field *dst, fcl_transfer **out) {
  FCL_CHECK_NULL(from, 1);
  FCL_CHECK_NULL(dst, 2);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  fcl_transfer *t = calloc(1, sizeof *t);
  if (!t) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "transfer to '%s'", fcl_field_name(dst));
  t->from = from;
  t->dst = dst;
  fcl_status st = plan(t);
  if (st != FCL_OK) {
    fcl_transfer_destroy(&t);
    return st;
  }
  *out = t;
  return FCL_OK;
}

int fcl_transfer_factor(const fcl_transfer *t) { return t ? t->factor : 0; }

bool fcl_transfer_interpolates(const fcl_transfer *t) { return t && t->interpolates; }

/* Enqueue, after giving the launches the fields' buffers where fcl_field_swap changed them. */
static fcl_status enqueue(fcl_transfer *t) {
  fcl_mem *old[6], *now[6];
  size_t n = 0;
  for (int c = 0; c < fcl_field_ncomp(t->dst); ++c)
    for (int side = 0; side < 2; ++side) {
      fcl_mem *current = fcl_field_buffer(side ? t->dst : t->from, c);
      if (current == t->bound[side][c]) continue;
      old[n] = t->bound[side][c];
      now[n++] = current;
      t->bound[side][c] = current;
    }
  if (n) FCL_TRY(fcl_launcher_rebind(t->list, n, old, now));
  return fcl_launcher_call(t->list, NULL, NULL, 0, NULL, NULL);
}

fcl_status fcl_transfer_apply(fcl_transfer *t) {
  FCL_CHECK_NULL(t, 1);
  FCL_TRY(fcl_field_ghosts_update(t->from));
  return enqueue(t);
}

static fcl_status operator_apply(void *data, const fcl_step_info *info) {
  (void)info;
  return enqueue(data);
}

static fcl_launcher *operator_launcher(void *data, int index) {
  fcl_transfer *t = data;
  return index == 0 ? t->list : NULL;
}

fcl_status fcl_transfer_operator(fcl_transfer *t, fcl_operator *out) {
  FCL_CHECK_NULL(t, 1);
  FCL_CHECK_NULL(out, 2);
  *out = (fcl_operator){.name = t->name,
                        .data = t,
                        .apply = operator_apply,
                        .launcher = operator_launcher,
                        .nuses = 2};
  out->uses[0] = (fcl_field_use){.field = t->from, .ghosts = t->ghosts, .read = true};
  out->uses[1] = (fcl_field_use){.field = t->dst, .written = true};
  return FCL_OK;
}

void fcl_transfer_destroy(fcl_transfer **t) {
  if (!t || !*t) return;
  fcl_launcher_destroy(&(*t)->list);
  fcl_program_release(&(*t)->program);
  free(*t);
  *t = NULL;
}
