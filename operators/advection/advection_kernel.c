/* The directional advection kernel, described for the codegen layer and tuned.
 *
 * One work-group takes a tile of `tile` lines along the axis (adjacent along the contiguous
 * axis when the line is not: coalesced reads of strided lines) and L work-items per line:
 *   1. the velocity lines (with the reach on both sides) into local memory ul;
 *   2. one particle per point of the lines and of their halos (hp points each side): its
 *      displacement over the substep by RK2, RK3 (SSP) or RK4, clamped to max_cfl, into dl;
 *   3. for each advected component: the lines with their halos into local ql<c>, then every
 *      point gathers sum_w ql<c>[i + w] * W(distance to particle i + w), the weights computed
 *      once per point for all components, written in place.
 * Positions are in grid units relative to the line; cdt = h / dx is the kernel's argument. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advection_impl.h"
#include "check.h"
#include "flowcl/codegen.h"
#include "flowcl/tune.h"

enum { TEXT = 1 << 16 };

typedef struct {
  char *s;
  size_t len;
  bool overflow;
} text;

static void put(text *t, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf(t->s + t->len, TEXT - t->len, format, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= TEXT - t->len) t->overflow = true;
  else t->len += (size_t)n;
}

/* A floating literal of the kernel's precision. */
static const char *lit(char *buf, double v, fcl_dtype dtype) {
  snprintf(buf, 40, dtype == FCL_FLOAT64 ? "%.17e" : "%.9ef", v);
  return buf;
}

/* The element of a padded field array at line coordinate `line` (an expression) of line
 * (ag * tile + al, b): subscripts in C order [z, y, x]. */
static void element(text *t, const fcl__adv_kernel_spec *s, int tile, const char *array,
                    const char *line) {
  const int d = s->axis, a = d == 0 ? 1 : 0, b = d == 2 ? 1 : 2;
  char c[3][96];
  snprintf(c[d], sizeof c[d], "%s", line);
  snprintf(c[a], sizeof c[a], "ag * %d + al + %d", tile, s->ghosts[a]);
  snprintf(c[b], sizeof c[b], "b + %d", s->ghosts[b]);
  put(t, "%s[%s, %s, %s]", array, c[2], c[1], c[0]);
}

/* Line coordinate (padded) of local position `pos` of a line read with `halo` points before
 * its first point. */
static void line_read(char *buf, size_t size, const fcl__adv_kernel_spec *s, const char *pos,
                      int halo) {
  const int64_t n = s->n[s->axis];
  const int g = s->ghosts[s->axis];
  if (s->wrap) snprintf(buf, size, "(%s + %lld) %% %lld + %d", pos, (long long)(n - halo),
                        (long long)n, g);
  else snprintf(buf, size, "%s + %d", pos, g - halo);
}

/* The rule W(x) := Lambda_{p,r}(x), piecewise in |x|, Horner in |x| - j. */
static void weight_rule(text *t, const fcl__adv_kernel_spec *s) {
  const fcl__remesh_formula *f = s->formula;
  char l[40];
  put(t, "W(x) := ");
  for (int j = 0; j < f->support; ++j) {
    put(t, "fabs(x) < %d ? ", j + 1);
    for (int k = 0; k <= f->degree; ++k) {
      put(t, "%s", lit(l, f->coef[j][k], s->dtype));
      if (k < f->degree) put(t, " + (fabs(x) - %d) * (", j);
    }
    for (int k = 0; k < f->degree; ++k) put(t, ")");
    put(t, " : ");
  }
  put(t, "%s\n", lit(l, 0, s->dtype));
}

/* Stage velocity at position y<st> (a temporary): k<st> = interpolation of ul. */
static void interpolate(text *t, const fcl__adv_kernel_spec *s, int st, const char *real) {
  put(t, "<int> m%d = convert_int(floor(y%d))\n", st, st);
  if (s->opt.interp == FCL_INTERP_LINEAR) {
    put(t, "<%s> k%d = ul[al, m%d] + (y%d - m%d) * (ul[al, m%d + 1] - ul[al, m%d])\n", real, st,
        st, st, st, st, st);
  } else {
    const int s1 = s->formula->support - 1;
    put(t, "<%s> k%d = sum(t%d, ul[al, m%d - %d + t%d] * W(y%d - (m%d - %d + t%d)))\n", real,
        st, st, st, s1, st, st, st, s1, st);
  }
}

/* Particle r's displacement into dl[al, r]; p0 = r + C + I is its position in ul. */
static void push(text *t, const fcl__adv_kernel_spec *s, const char *real) {
  const fcl__adv_reach *R = &s->reach;
  char c[40], m[40], half[40], quarter[40], sixth[40];
  lit(c, R->cfl, s->dtype);
  lit(m, -R->cfl, s->dtype);
  lit(half, 0.5, s->dtype);
  lit(quarter, 0.25, s->dtype);
  lit(sixth, 1.0 / 6.0, s->dtype);
  const int p0 = R->cfl + R->interp;
  put(t, "<%s> k1 = ul[al, r + %d]\n", real, p0);
  /* stage position: p0 + clamp(h * combination of earlier stages) */
#define STAGE(st, combination)                                                                 \
  do {                                                                                         \
    put(t, "<%s> y%d = r + %d + fmin(fmax(cdt * (", real, st, p0);                             \
    put combination;                                                                           \
    put(t, "), %s), %s)\n", m, c);                                                             \
    interpolate(t, s, st, real);                                                               \
  } while (0)
  const char *result;
  char buf[160];
  switch (s->opt.rk_order) {
  case 3: /* SSP RK3 (Shu-Osher) */
    STAGE(2, (t, "k1"));
    STAGE(3, (t, "%s * (k1 + k2)", quarter));
    snprintf(buf, sizeof buf, "%s * (k1 + k2 + 4 * k3)", sixth);
    result = buf;
    break;
  case 4:
    STAGE(2, (t, "%s * k1", half));
    STAGE(3, (t, "%s * k2", half));
    STAGE(4, (t, "k3"));
    snprintf(buf, sizeof buf, "%s * (k1 + 2 * k2 + 2 * k3 + k4)", sixth);
    result = buf;
    break;
  default: /* midpoint */
    STAGE(2, (t, "%s * k1", half));
    result = "k2";
  }
#undef STAGE
  put(t, "dl[al, r] = fmin(fmax(cdt * (%s), %s), %s)  {id=push}\n", result, m, c);
}

static fcl_status describe(const fcl__adv_kernel_spec *s, int tile, fcl_kbuilder **out) {
  const int d = s->axis, a = d == 0 ? 1 : 0, b = d == 2 ? 1 : 2;
  const fcl__adv_reach *R = &s->reach;
  const int64_t n = s->n[d], nu = n + 2 * R->hu, np = n + 2 * R->hp, window = 2 * R->hp - 1;
  const char *real = s->dtype == FCL_FLOAT64 ? "double" : "float";
  char name[64], shape[96], pos[96];
  snprintf(name, sizeof name, "advect_%c_%s_rk%d", "xyz"[d], fcl_remesh_formula_name(s->opt.formula),
           s->opt.rk_order);
  text t = {malloc(TEXT), 0, false};
  if (!t.s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "advection kernel text");
  fcl_kbuilder *kb = NULL;
  fcl_status st = fcl_kbuilder_create(name, &kb);
  snprintf(shape, sizeof shape, "%zu, %zu, %zu", s->padded[2], s->padded[1], s->padded[0]);
  if (st == FCL_OK) st = fcl_kbuilder_add_array(kb, "u", s->dtype, shape);
  for (int c = 0; c < s->ncomp && st == FCL_OK; ++c) {
    snprintf(name, sizeof name, "q%d", s->first_comp + c);
    st = fcl_kbuilder_add_array(kb, name, s->dtype, shape);
  }
  if (st == FCL_OK) st = fcl_kbuilder_add_scalar(kb, "cdt", s->dtype);
  snprintf(shape, sizeof shape, "%d, %lld", tile, (long long)nu);
  if (st == FCL_OK) st = fcl_kbuilder_add_temporary(kb, "ul", s->dtype, FCL_TEMP_LOCAL, shape);
  snprintf(shape, sizeof shape, "%d, %lld", tile, (long long)np);
  if (st == FCL_OK) st = fcl_kbuilder_add_temporary(kb, "dl", s->dtype, FCL_TEMP_LOCAL, shape);
  for (int c = 0; c < s->ncomp && st == FCL_OK; ++c) {
    snprintf(name, sizeof name, "ql%d", s->first_comp + c);
    st = fcl_kbuilder_add_temporary(kb, name, s->dtype, FCL_TEMP_LOCAL, shape);
  }
  snprintf(shape, sizeof shape, "%lld", (long long)window);
  if (st == FCL_OK) st = fcl_kbuilder_add_temporary(kb, "wt", s->dtype, FCL_TEMP_PRIVATE, shape);
  const int taps = 2 * s->formula->support;
  put(&t, "{ [ag, al, b]: 0 <= ag < %lld and 0 <= al < %d and 0 <= b < %lld }",
      (long long)(s->n[a] / tile), tile, (long long)s->n[b]);
  if (st == FCL_OK && !t.overflow) st = fcl_kbuilder_add_domain(kb, t.s);
  t.len = 0;
  put(&t, "{ [su, r, sq, i]: 0 <= su < %lld and 0 <= r < %lld and 0 <= sq < %lld and "
          "0 <= i < %lld }", (long long)nu, (long long)np, (long long)np, (long long)n);
  if (st == FCL_OK && !t.overflow) st = fcl_kbuilder_add_domain(kb, t.s);
  t.len = 0;
  put(&t, "{ [wi, wr, t2, t3, t4]: 0 <= wi < %lld and 0 <= wr < %lld and 0 <= t2 < %d and "
          "0 <= t3 < %d and 0 <= t4 < %d }", (long long)window, (long long)window, taps, taps,
      taps);
  if (st == FCL_OK && !t.overflow) st = fcl_kbuilder_add_domain(kb, t.s);
  t.len = 0;
  weight_rule(&t, s);
  line_read(pos, sizeof pos, s, "su", R->hu);
  put(&t, "ul[al, su] = ");
  element(&t, s, tile, "u", pos);
  put(&t, "  {id=load_u, dep=}\n");
  push(&t, s, real);
  line_read(pos, sizeof pos, s, "sq", R->hp);
  for (int c = s->first_comp; c < s->first_comp + s->ncomp; ++c) {
    put(&t, "ql%d[al, sq] = ", c);
    snprintf(name, sizeof name, "q%d", c);
    element(&t, s, tile, name, pos);
    put(&t, "  {id=load_q%d, dep=}\n", c);
  }
  put(&t, "wt[wi] = W(%d - wi - dl[al, i + 1 + wi])  {id=weights}\n", R->hp - 1);
  snprintf(pos, sizeof pos, "i + %d", s->ghosts[d]);
  for (int c = s->first_comp; c < s->first_comp + s->ncomp; ++c) {
    snprintf(name, sizeof name, "q%d", c);
    element(&t, s, tile, name, pos);
    put(&t, " = sum(wr, ql%d[al, i + 1 + wr] * wt[wr])  {id=remesh%d, dep=weights:load_q%d}\n",
        c, c, c);
  }
  if (t.overflow) st = FCL_ERROR(FCL_ERR_INTERNAL, "advection kernel text too long");
  if (st == FCL_OK) st = fcl_kbuilder_add_instructions(kb, t.s);
  if (st == FCL_OK) {
    snprintf(name, sizeof name, "ag:g.0, al:l.0, b:g.1, wi:unr, wr:unr, t2:unr, t3:unr, t4:unr");
    st = fcl_kbuilder_tag_inames(kb, name);
  }
  free(t.s);
  if (st != FCL_OK) fcl_kbuilder_destroy(&kb);
  *out = kb;
  return st;
}

size_t fcl__adv_line_local_bytes(const fcl__adv_kernel_spec *s) {
  const int64_t n = s->n[s->axis];
  return (size_t)((n + 2 * s->reach.hu) + (n + 2 * s->reach.hp) * (1 + s->ncomp)) *
         fcl_dtype_size(s->dtype);
}

typedef struct {
  size_t max_wg;
  int tile;
} mapping;

/* choice[0]: work-items per line (the line loops split by it, inner on l.1). */
static fcl_status apply(void *user, fcl_kbuilder *kb, const int64_t *choice) {
  const mapping *m = user;
  if ((size_t)(choice[0] * m->tile) > m->max_wg) return FCL_ERR_NOT_SUPPORTED;
  static const char *const loops[] = {"su", "r", "sq", "i"};
  for (int l = 0; l < 4; ++l) FCL_TRY(fcl_kbuilder_split_iname(kb, loops[l], choice[0], NULL, "l.1"));
  return FCL_OK;
}

fcl_status fcl__adv_kernel_build(const fcl__adv_kernel_spec *s, fcl_context *context,
                                 cl_command_queue queue, fcl_launcher **out) {
  cl_device_id dev;
  fcl_device_info info;
  FCL_TRY(fcl_queue_device(queue, &dev));
  FCL_TRY(fcl_device_get_info(dev, &info));
  const bool gpu = info.type & CL_DEVICE_TYPE_GPU;
  const int a = s->axis == 0 ? 1 : 0;
  /* tiles across lines: strided lines on GPUs want a few adjacent ones per group */
  static const int gpu_tiles[] = {8, 4, 16, 2, 1}, cpu_tiles[] = {1, 2, 4, 8};
  const int *tiles = gpu ? gpu_tiles : cpu_tiles;
  const int ntiles = s->axis == 0 ? 1 : gpu ? 5 : 4;
  static const int64_t gpu_items[] = {128, 256, 64, 32}, cpu_items[] = {64, 16, 128, 256};
  const fcl_tune_axis axes[] = {{"items", 4, gpu ? gpu_items : cpu_items}};
  fcl_tune_options opt = {.effort = getenv("FLOWCL_TUNE") ? FCL_TUNE_DEFAULT : FCL_TUNE_ESTIMATE};
  const size_t line_bytes = fcl__adv_line_local_bytes(s);
  fcl_kbuilder *best = NULL;
  double best_ns = 0;
  fcl_status first_error = FCL_OK;
  for (int k = 0; k < ntiles; ++k) {
    const int tile = s->axis == 0 ? 1 : tiles[k];
    if (s->n[a] % tile || line_bytes * (size_t)tile > info.local_mem_size) continue;
    fcl_kbuilder *base = NULL, *variant = NULL;
    fcl_tune_result r;
    mapping m = {info.max_work_group_size, tile};
    fcl_status st = describe(s, tile, &base);
    if (st == FCL_OK) st = fcl_tune(base, 1, axes, apply, &m, context, dev, &opt, &r, &variant);
    fcl_kbuilder_destroy(&base);
    if (st != FCL_OK) {
      if (first_error == FCL_OK) first_error = st;
      continue;
    }
    if (!best || (r.median_ns > 0 && r.median_ns < best_ns)) {
      fcl_kbuilder_destroy(&best);
      best = variant;
      best_ns = r.median_ns;
    } else {
      fcl_kbuilder_destroy(&variant);
    }
    if (r.median_ns == 0) break; /* not timed: the first tile that builds */
  }
  if (!best)
    return first_error != FCL_OK
               ? first_error
               : FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "advection along axis %d: a line of %lld "
                           "points (%zu bytes of local memory) does not fit the device's %llu "
                           "bytes", s->axis, (long long)s->n[s->axis], line_bytes,
                           (unsigned long long)info.local_mem_size);
  fcl_status st = fcl_kbuilder_build(best, context, NULL, queue, out);
  fcl_kbuilder_destroy(&best);
  return st;
}
