/* Shared machinery of the finite-difference operators: stencil text, field checks, kernel
 * generation and tuning, apply and destroy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fd_impl.h"
#include "flowcl/codegen.h"
#include "flowcl/tune.h"

static const char *lit(char *buf, double v, fcl_dtype dtype) {
  snprintf(buf, 40, dtype == FCL_FLOAT64 ? "%.17e" : "%.9ef", v);
  return buf;
}

void fcl__fd_element(char *buf, size_t size, const char *array, const fcl_field *f, int di, int dj,
                     int dk) {
  const int *o = fcl_topology_origin(fcl_field_topology(f)); /* interior point 0 */
  snprintf(buf, size, "%s[k + %d, j + %d, i + %d]", array, o[2] + dk, o[1] + dj, o[0] + di);
}

static void shifted(char *buf, size_t size, const char *array, const fcl_field *f, int axis,
                    int s) {
  int o[3] = {0, 0, 0};
  o[axis] = s;
  fcl__fd_element(buf, size, array, f, o[0], o[1], o[2]);
}

void fcl__fd_derivative(char *buf, size_t size, const char *array, const fcl_field *f, int axis,
                        int order) {
  const double dx = fcl_domain_spacing(fcl_topology_domain(fcl_field_topology(f)), axis);
  const fcl_dtype t = fcl_field_dtype(f);
  char p1[96], m1[96], p2[96], m2[96], c1[40], c2[40];
  shifted(p1, sizeof p1, array, f, axis, 1);
  shifted(m1, sizeof m1, array, f, axis, -1);
  if (order == 2) {
    snprintf(buf, size, "%s * (%s - %s)", lit(c1, 0.5 / dx, t), p1, m1);
    return;
  }
  shifted(p2, sizeof p2, array, f, axis, 2);
  shifted(m2, sizeof m2, array, f, axis, -2);
  snprintf(buf, size, "(%s * (%s - %s) - %s * (%s - %s))", lit(c1, 2.0 / 3.0 / dx, t), p1, m1,
           lit(c2, 1.0 / 12.0 / dx, t), p2, m2);
}

double fcl__fd_diffusion_max_dt(const fcl_field *f, double nu, int order) {
  /* stable while nu dt sum_a lambda / dx_a^2 <= 2, lambda the largest |eigenvalue| of the
   * stencil times dx^2: 4 (order 2), 16 / 3 (order 4) */
  const fcl_domain *d = fcl_topology_domain(fcl_field_topology(f));
  double s = 0;
  for (int a = 0; a < d->dim; ++a) s += 1.0 / pow(fcl_domain_spacing(d, a), 2);
  return 2.0 / (nu * (order == 2 ? 4.0 : 16.0 / 3.0) * s);
}

void fcl__fd_second_derivative(char *buf, size_t size, const char *array, const fcl_field *f,
                               int axis, int order) {
  const double dx = fcl_domain_spacing(fcl_topology_domain(fcl_field_topology(f)), axis);
  const fcl_dtype t = fcl_field_dtype(f);
  char p1[96], m1[96], p2[96], m2[96], c0[96], c[40];
  shifted(p1, sizeof p1, array, f, axis, 1);
  shifted(m1, sizeof m1, array, f, axis, -1);
  shifted(c0, sizeof c0, array, f, axis, 0);
  if (order == 2) {
    snprintf(buf, size, "%s * (%s - 2 * %s + %s)", lit(c, 1.0 / (dx * dx), t), m1, c0, p1);
    return;
  }
  shifted(p2, sizeof p2, array, f, axis, 2);
  shifted(m2, sizeof m2, array, f, axis, -2);
  snprintf(buf, size, "%s * (16 * (%s + %s) - 30 * %s - (%s + %s))",
           lit(c, 1.0 / (12 * dx * dx), t), m1, p1, c0, m2, p2);
}

fcl_status fcl__fd_check_field(const fcl_field *f, int order) {
  if (order != 2 && order != 4)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "finite differences: order %d (2 or 4)", order);
  const fcl_topology *t = fcl_field_topology(f);
  const int dim = fcl_topology_domain(t)->dim;
  for (int a = 0; a < dim; ++a)
    if (fcl_topology_ghosts(t)[a] < order / 2)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "field '%s': differences of order %d "
                       "need %d ghosts on axis %d, the topology has %d",
                       fcl_field_name(f), order, order / 2, a, fcl_topology_ghosts(t)[a]);
  return FCL_OK;
}

fcl_status fcl__fd_check_pair(const fcl_field *in, const fcl_field *out, const char *what) {
  if (in == out)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "%s: input and output are the same field '%s'", what,
                     fcl_field_name(in));
  if (fcl_field_topology(in) != fcl_field_topology(out) ||
      fcl_field_dtype(in) != fcl_field_dtype(out) || fcl_field_queue(in) != fcl_field_queue(out))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "%s: '%s' and '%s' are not on one topology, "
                     "precision and queue",
                     what, fcl_field_name(in), fcl_field_name(out));
  return FCL_OK;
}

fcl_status fcl__fd_new(const char *name, fcl_fd **out) {
  fcl_fd *op = calloc(1, sizeof *op);
  if (!op || !(op->name = strdup(name))) {
    free(op);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "%s", name);
  }
  op->max_dt = INFINITY;
  fcl_status st = fcl_launcher_create_list(name, &op->list);
  if (st != FCL_OK) {
    fcl_fd_destroy(&op);
    return st;
  }
  *out = op;
  return FCL_OK;
}

fcl_status fcl__fd_use(fcl_fd *op, fcl_field *field, int ghosts, bool read, bool written) {
  for (int u = 0; u < op->nuses; ++u)
    if (op->uses[u].field == field) {
      if (ghosts > op->uses[u].ghosts) op->uses[u].ghosts = ghosts;
      op->uses[u].read |= read;
      op->uses[u].written |= written;
      return FCL_OK;
    }
  if (op->nuses == FCL_OPERATOR_MAX_USES)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "%s: more than %d distinct fields", op->name,
                     FCL_OPERATOR_MAX_USES);
  op->uses[op->nuses++] = (fcl_field_use){
      .field = field, .ghosts = ghosts, .read = read, .written = written};
  if (written) op->out = field;
  return FCL_OK;
}

typedef struct {
  size_t max_wg;
  bool gpu;
  size_t narrays;
  const fcl__fd_array *arrays; /* the ones a streamed loop may carry in registers */
} mapping;

/* On a GPU, more planes than this per work-group: a loop (not unrolled) whose arrays' planes of k
 * are carried in registers (stream_iname: each plane loaded once per work-item). CPUs keep a
 * plain loop. */
#define STREAMED_PLANES 16

/* Carry the planes of every array read at several planes along k_inner in registers; *carried
 * counts them. An array that stream_iname refuses (read at one plane, or whose carried loads
 * would leave its bounds where the work-group overhangs the grid) keeps its loads. */
static fcl_status stream_arrays(fcl_kbuilder *kb, const mapping *m, size_t *carried) {
  *carried = 0;
  for (size_t a = 0; a < m->narrays; ++a) {
    fcl_status st = fcl_kbuilder_stream_iname(kb, "k_inner", m->arrays[a].name);
    if (st == FCL_OK)
      ++*carried;
    else if (st != FCL_ERR_INVALID_ARGUMENT)
      return st;
  }
  fcl_clear_error(); /* the arrays with nothing to carry said so */
  return FCL_OK;
}

/* The choice applied to kb; *carried: the arrays whose planes a streamed loop carries. */
static fcl_status map_choice(const mapping *m, fcl_kbuilder *kb, const int64_t *choice,
                             size_t *carried) {
  *carried = 0;
  if ((size_t)(choice[1] * choice[2]) > m->max_wg) return FCL_ERR_NOT_SUPPORTED;
  FCL_TRY(fcl_kbuilder_split_iname(kb, "i", choice[1], "g.0", "l.0"));
  FCL_TRY(fcl_kbuilder_split_iname(kb, "j", choice[2], "g.1", "l.1"));
  if (choice[0] == 1) return fcl_kbuilder_tag_inames(kb, "k:g.2");
  const bool streamed = m->gpu && choice[0] > STREAMED_PLANES;
  FCL_TRY(fcl_kbuilder_split_iname(kb, "k", choice[0], "g.2", m->gpu && !streamed ? "unr" : NULL));
  return streamed ? stream_arrays(kb, m, carried) : FCL_OK;
}

/* choice: planes of k per work-group (a loop when more than one: a work-group walking k finds the
 * planes its neighbours along k just read in its own cache rather than the device's shared one;
 * unrolled on a GPU, where a work-item's loads of several planes are then in flight at once: a
 * 512^3 stretching half-step takes 5.34 ms with 8 planes unrolled, 5.58 looped, on an H100;
 * beyond STREAMED_PLANES, streamed), work-items along x, rows of y per work-group. Planes come
 * first: the search varies the first axis first, and on the H200 at 512^3 it is the one that
 * pays (the dt measure's gradient norm 1.21 -> 0.89 ms; work-group shapes within 5 %). */
static fcl_status apply_choice(void *user, fcl_kbuilder *kb, const int64_t *choice) {
  size_t carried;
  return map_choice(user, kb, choice, &carried);
}

/* The GPU work-group shape the probe maps before it streams (the first of the search). */
enum { PROBE_ITEMS = 64, PROBE_ROWS = 4 };

bool fcl__fd_streams_along_k(const fcl_kbuilder *kernel, size_t narrays,
                             const fcl__fd_array *arrays) {
  const mapping m = {
      .max_wg = PROBE_ITEMS * PROBE_ROWS, .gpu = true, .narrays = narrays, .arrays = arrays};
  const int64_t choice[3] = {2 * STREAMED_PLANES, PROBE_ITEMS, PROBE_ROWS};
  fcl_kbuilder *kb = NULL;
  size_t carried = 0;
  bool ok = fcl_kbuilder_copy(kernel, &kb) == FCL_OK &&
            map_choice(&m, kb, choice, &carried) == FCL_OK && carried > 0;
  fcl_kbuilder_destroy(&kb);
  fcl_clear_error();
  return ok;
}

/* A scalar of a custom kernel: the step index is an integer, the others the fields' type. */
static fcl_dtype scalar_dtype(const char *name, fcl_dtype field) {
  return strcmp(name, FCL__FD_STEP) ? field : FCL_INT64;
}

static fcl_status describe(const fcl_fd *op, const char *name, const fcl_field *shape,
                           size_t narrays, const fcl__fd_array *arrays, const char *text,
                           fcl_kbuilder **out) {
  fcl_kbuilder *kb = NULL;
  FCL_TRY(fcl_kbuilder_create(name, &kb));
  const int64_t *n = fcl_topology_local_resolution(fcl_field_topology(shape));
  char buf[256];
  fcl_status st = FCL_OK;
  for (size_t a = 0; a < narrays && st == FCL_OK; ++a) {
    const size_t *pa = fcl_field_padded_shape(arrays[a].field);
    snprintf(buf, sizeof buf, "%zu, %zu, %zu", pa[2], pa[1], pa[0]);
    st = fcl_kbuilder_add_array(kb, arrays[a].name, fcl_field_dtype(arrays[a].field), buf);
  }
  if (st == FCL_OK && op->dt_param)
    st = fcl_kbuilder_add_scalar(kb, op->dt_param, fcl_field_dtype(shape));
  for (size_t s = 0; s < op->nscalars && st == FCL_OK; ++s)
    st = fcl_kbuilder_add_scalar(kb, op->scalars[s],
                                 scalar_dtype(op->scalars[s], fcl_field_dtype(shape)));
  const int *g = op->grow;
  snprintf(buf, sizeof buf, "{ [k, j, i]: %d <= k < %lld and %d <= j < %lld and %d <= i < %lld }",
           -g[2], (long long)n[2] + g[2], -g[1], (long long)n[1] + g[1], -g[0],
           (long long)n[0] + g[0]);
  if (st == FCL_OK) st = fcl_kbuilder_add_domain(kb, buf);
  if (st == FCL_OK) st = fcl_kbuilder_add_instructions(kb, text);
  if (st != FCL_OK) fcl_kbuilder_destroy(&kb);
  *out = kb;
  return st;
}

fcl_status fcl__fd_add_kernel(fcl_fd *op, const char *name, const fcl_field *shape, size_t narrays,
                              const fcl__fd_array *arrays, const fcl__str *text, double bytes) {
  if (text->failed) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "%s: the kernel's text", name);
  fcl_queue *q = fcl_field_queue(shape);
  fcl_device *dev;
  fcl_device_info info;
  FCL_TRY(fcl_queue_device(q, &dev));
  FCL_TRY(fcl_device_get_info(dev, &info));
  const bool gpu = info.type & FCL_DEVICE_GPU;
  fcl_kbuilder *base = NULL, *best = NULL;
  fcl_status st = describe(op, name, shape, narrays, arrays, text->s, &base);
  memset(op->grow, 0, sizeof op->grow);
  mapping m = {
      .max_wg = info.max_work_group_size, .gpu = gpu, .narrays = narrays, .arrays = arrays};
  /* On a GPU the first choice of planes (the estimate's, and the default a measured search
   * starts from, which the 3 s budget often keeps for the larger kernels) of a kernel that reads
   * neighbours along k follows the size of a plane, and only such a kernel is offered the
   * streamed choice (the others start from 16 on planes of 256 x 256 to 512 x 512 points, else
   * 8). One H200, a
   * stretching half-step (FLOWCL_TUNE=estimate, device time): 512^3 4.30 ms with 8
   * planes unrolled, 4.18 with 16, 4.34 with 32 streamed; 1024^3 37.0 ms with 8, 37.7 with 16,
   * 32.5 with 32 or 64 streamed. On an H100 the 256^3 step is faster with 8 (4.72-4.75 against
   * 4.82-4.85 ms), the 512^3 half-step with 16 (5.34 -> 5.16 ms). Why streaming pays only on
   * the largest planes is a guess (the cache's reuse of a chunk's neighbour planes, which
   * OpenCL cannot observe). */
  const int64_t *ln = fcl_topology_local_resolution(fcl_field_topology(shape)),
                plane = ln[0] * ln[1];
  static const int64_t gpu_items[] = {PROBE_ITEMS, 128, 32, 256},
                       gpu_rows[] = {PROBE_ROWS, 1, 2, 8}, cpu_items[] = {16, 64, 8},
                       cpu_rows[] = {1, 4}, gpu_planes_small[] = {8, 16, 1, 32},
                       gpu_planes_mid[] = {16, 8, 1, 32}, gpu_planes_large[] = {32, 8, 16, 1},
                       cpu_planes[] = {1, 8, 32};
  const bool streams = gpu && st == FCL_OK && m.max_wg >= PROBE_ITEMS * PROBE_ROWS &&
                       fcl__fd_streams_along_k(base, narrays, arrays);
  const int64_t *planes = !gpu                                      ? cpu_planes
                          : plane > 512 * 512 && streams            ? gpu_planes_large
                          : plane > 256 * 256 && plane <= 512 * 512 ? gpu_planes_mid
                                                                    : gpu_planes_small;
  const fcl_tune_axis axes[] = {{"planes", streams ? 4 : 3, planes},
                                {"items", gpu ? 4 : 3, gpu ? gpu_items : cpu_items},
                                {"rows", gpu ? 4 : 2, gpu ? gpu_rows : cpu_rows}};
  fcl_tune_options opt = {.effort = FCL_TUNE_AUTO}; /* measured once per GPU, remembered */
  fcl_tune_result r;
  fcl_launcher *k = NULL;
  if (st == FCL_OK)
    st = fcl_tune(base, 3, axes, apply_choice, &m, fcl_field_context(shape), dev, &opt, &r, &best);
  if (st == FCL_OK) st = fcl_kbuilder_build(best, fcl_field_context(shape), NULL, q, &k);
  fcl_kbuilder_destroy(&base);
  fcl_kbuilder_destroy(&best);
  if (st == FCL_OK) st = fcl_launcher_set_bytes_per_launch(k, (size_t)bytes);
  if (st != FCL_OK) {
    fcl_launcher_destroy(&k);
    return st;
  }
  return fcl__fd_push_kernel(op, k, narrays, arrays);
}

fcl_status fcl__fd_push_kernel(fcl_fd *op, fcl_launcher *k, size_t narrays,
                               const fcl__fd_array *arrays) {
  fcl_status st = fcl_launcher_list_push(op->list, k);
  if (st != FCL_OK) fcl_launcher_destroy(&k);
  for (size_t a = 0; a < narrays && st == FCL_OK; ++a) {
    size_t same = 0; /* a name the list already binds (kernels share their arrays' names) */
    while (same < op->nbinds && strcmp(op->binds[same].name, arrays[a].name)) ++same;
    if (same < op->nbinds) continue;
    fcl__fd_bind *b = &op->binds[op->nbinds];
    if (op->nbinds == sizeof op->binds / sizeof op->binds[0] ||
        strlen(arrays[a].name) >= sizeof b->name) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "%s: too many arrays, or name '%s' too long",
                     op->name, arrays[a].name);
    } else {
      strcpy(b->name, arrays[a].name);
      b->field = arrays[a].field;
      b->comp = arrays[a].comp;
      b->buffer = fcl_field_buffer(arrays[a].field, arrays[a].comp);
      ++op->nbinds;
    }
  }
  /* the list's parameters changed: a new set binding every kernel's arrays */
  fcl_param_set_destroy(&op->params);
  if (st == FCL_OK) st = fcl_param_set_create(op->list, &op->params);
  for (size_t a = 0; a < op->nbinds && st == FCL_OK; ++a)
    st = fcl_param_set_buffer(op->params, op->binds[a].name, op->binds[a].buffer);
  for (size_t s = 0; s < op->nscalars && st == FCL_OK; ++s)
    st = fcl_fd_set_scalar(op, op->scalars[s], 0);
  return st;
}

fcl_status fcl_fd_set_scalar(fcl_fd *op, const char *name, double value) {
  FCL_CHECK_NULL(op, 1);
  FCL_CHECK_NULL(name, 2);
  size_t s = 0;
  while (s < op->nscalars && strcmp(op->scalars[s], name)) ++s;
  if (s == op->nscalars) {
    char list[FCL_FD_MAX_SCALARS * 34 + 8] = "";
    size_t len = 0;
    for (size_t i = 0; i < op->nscalars; ++i)
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", op->scalars[i]);
    return FCL_ERROR(FCL_ERR_NOT_FOUND, "%s: no scalar '%s' (it has: %s)", op->name, name,
                     op->nscalars ? list : "none");
  }
  if (!isfinite(value))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "%s: scalar '%s' = %g (must be finite)", op->name,
                     name, value);
  if (scalar_dtype(name, fcl_field_dtype(op->out)) == FCL_INT64)
    return fcl_param_set_i64(op->params, name, (int64_t)value);
  if (fcl_field_dtype(op->out) == FCL_FLOAT64) return fcl_param_set_f64(op->params, name, value);
  return fcl_param_set_f32(op->params, name, (float)value);
}

/* Bind the fields' buffers again where fcl_field_swap changed them: the kernels' parameters,
 * and the copies of the list (diffusion's) in one pass. */
static fcl_status follow_swaps(fcl_fd *op) {
  fcl_mem *old[sizeof op->binds / sizeof op->binds[0]], *now[sizeof old / sizeof old[0]];
  size_t n = 0;
  for (size_t a = 0; a < op->nbinds; ++a) {
    fcl__fd_bind *b = &op->binds[a];
    fcl_mem *const m = fcl_field_buffer(b->field, b->comp);
    if (m == b->buffer) continue;
    FCL_TRY(fcl_param_set_buffer(op->params, b->name, m));
    old[n] = b->buffer;
    now[n++] = b->buffer = m;
  }
  return n ? fcl_launcher_rebind(op->list, n, old, now) : FCL_OK;
}

fcl_status fcl_fd_enqueue(fcl_fd *op, double dt) {
  FCL_CHECK_NULL(op, 1);
  if (op->dt_param && !isfinite(dt))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (dt): %g (must be finite)", dt);
  if (op->dt_param && dt < 0 && op->irreversible)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "%s: dt = %g < 0, but the operator is not "
                     "reversible (explicit diffusion backward in time is unstable)",
                     op->name, dt);
  if (dt > op->max_dt * (1 + 1e-12))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "diffusion of '%s': dt = %g exceeds the explicit "
                     "scheme's stability bound %g (nu = %g, order %d)",
                     fcl_field_name(op->out), dt, op->max_dt, op->nu, op->order);
  if (op->dt_param) {
    if (fcl_field_dtype(op->out) == FCL_FLOAT64)
      FCL_TRY(fcl_param_set_f64(op->params, op->dt_param, dt * op->dt_scale));
    else
      FCL_TRY(fcl_param_set_f32(op->params, op->dt_param, (float)(dt * op->dt_scale)));
  }
  FCL_TRY(follow_swaps(op));
  return fcl_launcher_call(op->list, fcl_field_queue(op->out), op->params, 0, NULL, NULL);
}

fcl_status fcl_fd_enqueue_step(fcl_fd *op, const fcl_step_info *info) {
  FCL_CHECK_NULL(op, 1);
  FCL_CHECK_NULL(info, 2);
  for (size_t s = 0; s < op->nscalars; ++s) {
    if (!strcmp(op->scalars[s], FCL__FD_T)) FCL_TRY(fcl_fd_set_scalar(op, FCL__FD_T, info->t));
    if (!strcmp(op->scalars[s], FCL__FD_STEP))
      FCL_TRY(fcl_param_set_i64(op->params, FCL__FD_STEP, info->step));
  }
  return fcl_fd_enqueue(op, info->dt);
}

fcl_status fcl_fd_apply(fcl_fd *op, double dt) {
  FCL_CHECK_NULL(op, 1);
  for (int u = 0; u < op->nuses; ++u)
    if (op->uses[u].ghosts > 0)
      FCL_TRY(op->uses[u].periodic_images ? fcl_field_ghosts_update_unwrapped(op->uses[u].field)
                                          : fcl_field_ghosts_update(op->uses[u].field));
  return fcl_fd_enqueue(op, dt);
}

static void free_fields(fcl_fd *op) {
  fcl_field_destroy(&op->scratch);
  fcl_field_destroy(&op->scratch2);
  free(op);
}

/* An operator whose scratch fields another one borrows (the extrapolating stretching shares its
 * stretching's stage values) keeps them, and itself, until the last borrower goes: either may be
 * destroyed first. */
void fcl_fd_destroy(fcl_fd **op) {
  if (!op || !*op) return;
  fcl_fd *o = *op;
  *op = NULL;
  fcl_param_set_destroy(&o->params);
  fcl_launcher_destroy(&o->list);
  free(o->name);
  o->name = NULL;
  if (o->lender) {
    fcl_fd *lender = o->lender;
    free(o);
    if (--lender->borrowers == 0 && lender->released) free_fields(lender);
  } else if (o->borrowers > 0) {
    o->released = true;
  } else {
    free_fields(o);
  }
}

fcl_launcher *fcl_fd_launcher(const fcl_fd *op) { return op ? op->list : NULL; }

double fcl_fd_max_dt(const fcl_fd *op) { return op ? op->max_dt : 0; }

static fcl_status operator_apply(void *data, const fcl_step_info *info) {
  return fcl_fd_enqueue_step(data, info);
}

static fcl_launcher *operator_launcher(void *data, int index) {
  return index == 0 ? fcl_fd_launcher(data) : NULL;
}

static double operator_max_dt(void *data) { return fcl_fd_max_dt(data); }

fcl_status fcl_fd_operator(fcl_fd *op, fcl_operator *out) {
  FCL_CHECK_NULL(op, 1);
  FCL_CHECK_NULL(out, 2);
  *out = (fcl_operator){.name = op->name,
                        .data = op,
                        .apply = operator_apply,
                        .launcher = operator_launcher,
                        .max_dt = operator_max_dt,
                        .nuses = op->nuses};
  memcpy(out->uses, op->uses, sizeof op->uses);
  return FCL_OK;
}
