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
 * The shared-line variant keeps one local line per tile row: the velocity, then each component
 * in turn (barriers between a line's last reader and its next load), with the weights
 * recomputed per component; it takes about a third of the local memory, so tiles twice wider.
 * Lines too long for a tile's local memory are cut in segments (group axis sg), each read with
 * its halos: a point's result is the same sum over the same particles either way, and tiles
 * of adjacent strided lines stay wide at any length (at 512^3 on an H200 a tile of 8 whole
 * lines does not fit, and 2-8 lines of 4-32 bytes leave the strided substeps at 0.35 of the
 * copy bandwidth).
 * Positions are in grid units relative to the line; cdt = h / dx is the kernel's argument. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advection_impl.h"
#include "check.h"
#include "flowcl/codegen.h"
#include "flowcl/tune.h"

/* The element of a padded field array at line coordinate `line` (an expression) of line
 * (`across`, b): subscripts in C order [z, y, x]. */
static void element(fcl__str *t, const fcl__adv_kernel_spec *s, const char *across,
                    const char *array, const char *line) {
  const int d = s->axis, a = d == 0 ? 1 : 0;
  fcl__str_printf(t, "%s[", array);
  for (int x = 2; x >= 0; --x) {
    if (x == d)
      fcl__str_printf(t, "%s", line);
    else
      fcl__str_printf(t, "%s + %d", x == a ? across : "b", s->origin[x]);
    fcl__str_printf(t, x ? ", " : "]");
  }
}

/* The points of a line one work-group takes. */
static int64_t segment(const fcl__adv_kernel_spec *s) { return s->seg ? s->seg : s->n[s->axis]; }

/* Line coordinate (padded) of local position `pos` of a line (segment sg) read with `halo`
 * points before its first point. */
static void line_read(char *buf, size_t size, const fcl__adv_kernel_spec *s, const char *pos,
                      int halo) {
  const int64_t n = s->n[s->axis];
  const int o = s->origin[s->axis];
  char at[64] = "";
  if (segment(s) < n) snprintf(at, sizeof at, "sg * %lld + ", (long long)segment(s));
  if (s->wrap)
    snprintf(buf, size, "(%s%s + %lld) %% %lld + %d", at, pos, (long long)(n - halo), (long long)n,
             o);
  else
    snprintf(buf, size, "%s%s + %d", at, pos, o - halo);
}

/* The rule name(x) := Lambda_{p,r}(x), with only the pieces |x| in [lo, hi] can reach. */
static void weight_rule(fcl__str *t, const fcl__adv_kernel_spec *s, const char *name, int lo,
                        int hi) {
  fcl__str_printf(t, "%s(x) := ", name);
  fcl__adv_weight_expr(t, s, lo, hi);
  fcl__str_printf(t, "\n");
}

/* The weight rules: W over the whole support (kernel interpolation), and per offset k of the
 * gather window (x = k - displacement, |displacement| <= C) W<w>, w = hp - 1 - k, with only
 * the pieces |x| in [|k| - C, |k| + C] can reach. */
static void weight_rules(fcl__str *t, const fcl__adv_kernel_spec *s) {
  const fcl__adv_reach *R = &s->reach;
  weight_rule(t, s, "W", 0, s->formula->support);
  for (int w = 0; w < 2 * R->hp - 1; ++w) {
    const int k = abs(R->hp - 1 - w);
    char name[16];
    snprintf(name, sizeof name, "W%d", w);
    weight_rule(t, s, name, k > R->cfl ? k - R->cfl : 0, k + R->cfl);
  }
}

/* The gather of component line `line` at point i: sum_w line[al, i + 1 + w] * <weight w>,
 * the weights being the temporaries wt<w> (shared: the rules, inline). */
static void gather(fcl__str *t, const fcl__adv_kernel_spec *s, const char *line,
                   bool inline_weights) {
  const int window = 2 * s->reach.hp - 1;
  for (int w = 0; w < window; ++w) {
    fcl__str_printf(t, "%s%s[al, i + %d] * ", w ? " + " : "", line, 1 + w);
    if (inline_weights)
      fcl__str_printf(t, "W%d(%d - dl[al, i + %d])", w, s->reach.hp - 1 - w, 1 + w);
    else
      fcl__str_printf(t, "wt%d", w);
  }
}

/* Stage velocity at position y<st> (a temporary): k<st> = interpolation of the velocity line
 * ul (a local array). */
static void interpolate(fcl__str *t, const fcl__adv_kernel_spec *s, int st, const char *real,
                        const char *ul) {
  fcl__str_printf(t, "<int> m%d = convert_int(floor(y%d))\n", st, st);
  if (s->opt.interp == FCL_INTERP_LINEAR) {
    fcl__str_printf(t, "<%s> k%d = %s[al, m%d] + (y%d - m%d) * (%s[al, m%d + 1] - %s[al, m%d])\n",
                    real, st, ul, st, st, st, ul, st, ul, st);
  } else {
    const int s1 = s->formula->support - 1;
    fcl__str_printf(t, "<%s> k%d = sum(t%d, %s[al, m%d - %d + t%d] * W(y%d - (m%d - %d + t%d)))\n",
                    real, st, st, ul, st, s1, st, st, st, s1, st);
  }
}

/* Particle r's displacement into dl[al, r]; p0 = r + C + I is its position in ul. */
static void push(fcl__str *t, const fcl__adv_kernel_spec *s, const char *real, const char *ul) {
  const fcl__adv_reach *R = &s->reach;
  char c[40], m[40], half[40], quarter[40], sixth[40];
  fcl__adv_lit(c, R->cfl, s->dtype);
  fcl__adv_lit(m, -R->cfl, s->dtype);
  fcl__adv_lit(half, 0.5, s->dtype);
  fcl__adv_lit(quarter, 0.25, s->dtype);
  fcl__adv_lit(sixth, 1.0 / 6.0, s->dtype);
  const int p0 = R->cfl + R->interp;
  fcl__str_printf(t, "<%s> k1 = %s[al, r + %d]\n", real, ul, p0);
  /* stage position: p0 + clamp(h * combination of earlier stages) */
#define STAGE(st, combination)                                                                     \
  do {                                                                                             \
    fcl__str_printf(t, "<%s> y%d = r + %d + fmin(fmax(cdt * (", real, st, p0);                     \
    fcl__str_printf combination;                                                                   \
    fcl__str_printf(t, "), %s), %s)\n", m, c);                                                     \
    interpolate(t, s, st, real, ul);                                                               \
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
    default: /* midpoint */ STAGE(2, (t, "%s * k1", half)); result = "k2";
  }
#undef STAGE
  fcl__str_printf(t, "dl[al, r] = fmin(fmax(cdt * (%s), %s), %s)  {id=push}\n", result, m, c);
}

/* The row length of a local array of `tile` lines of len points, padded so that the lines of
 * a warp (tile lines x 32 / tile points) fall in distinct 4-byte banks of local memory: the
 * row stride in words is 32 / tile modulo 32. */
static int64_t row_length(int64_t len, int tile, fcl_dtype dtype) {
  const int64_t words = (int64_t)fcl_dtype_size(dtype) / 4, period = 32 / words;
  if (tile <= 1 || 32 % (tile * words)) return len;
  const int64_t target = 32 / tile / words % period;
  while (len % period != target) ++len;
  return len;
}

/* The halos of the segments of the lines, one array h<c> per component: [b][sg * 2 hp + k][a],
 * k < hp the points before the segment, the others after it (adjacent lines contiguous). */
static fcl_status add_halo_arrays(fcl_kbuilder *kb, const fcl__adv_kernel_spec *s, fcl_status st) {
  const int d = s->axis, a = d == 0 ? 1 : 0, b = d == 2 ? 1 : 2;
  char name[16], shape[96];
  snprintf(shape, sizeof shape, "%lld, %lld, %lld", (long long)s->n[b],
           (long long)(s->n[d] / segment(s) * 2 * s->reach.hp), (long long)s->n[a]);
  for (int c = s->first_comp; c < s->first_comp + s->ncomp && st == FCL_OK; ++c) {
    snprintf(name, sizeof name, "h%d", c);
    st = fcl_kbuilder_add_array(kb, name, s->dtype, shape);
  }
  return st;
}

/* The kernel that copies the segments' halos into h<c> before the remeshing kernel writes the
 * lines in place (a work-group reads its halos from there, not from its neighbours' points). */
static fcl_status describe_halo(const fcl__adv_kernel_spec *s, fcl_kbuilder **out) {
  const int d = s->axis, a = d == 0 ? 1 : 0, b = d == 2 ? 1 : 2, hp = s->reach.hp;
  const int64_t n = s->n[d], seg = segment(s);
  char name[64], shape[96], pos[128], line[160];
  snprintf(name, sizeof name, "advect_%c_halo_s%lld", "xyz"[d], (long long)seg);
  fcl__str t = {0};
  fcl_kbuilder *kb = NULL;
  fcl_status st = fcl_kbuilder_create(name, &kb);
  snprintf(shape, sizeof shape, "%zu, %zu, %zu", s->padded[2], s->padded[1], s->padded[0]);
  for (int c = s->first_comp; c < s->first_comp + s->ncomp && st == FCL_OK; ++c) {
    snprintf(name, sizeof name, "q%d", c);
    st = fcl_kbuilder_add_array(kb, name, s->dtype, shape);
  }
  st = add_halo_arrays(kb, s, st);
  fcl__str_printf(
      &t, "{ [x, b, sg, k]: 0 <= x < %lld and 0 <= b < %lld and 0 <= sg < %lld and 0 <= k < %d }",
      (long long)s->n[a], (long long)s->n[b], (long long)(n / seg), 2 * hp);
  if (st == FCL_OK && !t.failed) st = fcl_kbuilder_add_domain(kb, t.s);
  fcl__str_clear(&t);
  snprintf(pos, sizeof pos, "sg * %lld + k - %d + (k >= %d ? %lld : 0)", (long long)seg, hp, hp,
           (long long)seg);
  if (s->wrap)
    snprintf(line, sizeof line, "(%s + %lld) %% %lld + %d", pos, (long long)n, (long long)n,
             s->origin[d]);
  else
    snprintf(line, sizeof line, "%s + %d", pos, s->origin[d]);
  for (int c = s->first_comp; c < s->first_comp + s->ncomp; ++c) {
    snprintf(name, sizeof name, "q%d", c);
    fcl__str_printf(&t, "h%d[b, sg * %d + k, x] = ", c, 2 * hp);
    element(&t, s, "x", name, line);
    fcl__str_printf(&t, "\n");
  }
  if (t.failed) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "advection halo kernel text");
  if (st == FCL_OK) st = fcl_kbuilder_add_instructions(kb, t.s);
  if (st == FCL_OK) st = fcl_kbuilder_split_iname(kb, "x", 32, "g.0", "l.0");
  if (st == FCL_OK) st = fcl_kbuilder_tag_inames(kb, "b:g.1, k:g.2");
  free(t.s);
  if (st != FCL_OK) fcl_kbuilder_destroy(&kb);
  *out = kb;
  return st;
}

/* shared: one local line per tile row holds the velocity, then each component in turn (less
 * local memory per line, so wider tiles; the weights are recomputed per component). */
static fcl_status describe(const fcl__adv_kernel_spec *s, int tile, bool shared,
                           fcl_kbuilder **out) {
  const int d = s->axis, a = d == 0 ? 1 : 0, b = d == 2 ? 1 : 2;
  const fcl__adv_reach *R = &s->reach;
  const int64_t n = segment(s), nu = n + 2 * R->hu, np = n + 2 * R->hp, window = 2 * R->hp - 1;
  const int64_t nseg = s->n[d] / n;
  char across[48];
  snprintf(across, sizeof across, "ag * %d + al", tile);
  const char *real = s->dtype == FCL_FLOAT64 ? "double" : "float";
  const char *ul = shared ? "lm" : "ul";
  char name[64], shape[96], pos[96];
  snprintf(name, sizeof name, "advect_%c_%s_rk%d%s", "xyz"[d],
           fcl_remesh_formula_name(s->opt.formula), s -> opt.rk_order, shared ? "_seq" : "");
  if (nseg > 1) snprintf(name + strlen(name), sizeof name - strlen(name), "_s%lld", (long long)n);
  fcl__str t = {0};
  fcl_kbuilder *kb = NULL;
  fcl_status st = fcl_kbuilder_create(name, &kb);
  snprintf(shape, sizeof shape, "%zu, %zu, %zu", s->padded[2], s->padded[1], s->padded[0]);
  if (st == FCL_OK) st = fcl_kbuilder_add_array(kb, "u", s->dtype, shape);
  for (int c = 0; c < s->ncomp && st == FCL_OK; ++c) {
    snprintf(name, sizeof name, "q%d", s->first_comp + c);
    st = fcl_kbuilder_add_array(kb, name, s->dtype, shape);
  }
  if (st == FCL_OK) st = fcl_kbuilder_add_scalar(kb, "cdt", s->dtype);
  snprintf(shape, sizeof shape, "%d, %lld", tile, (long long)row_length(nu, tile, s->dtype));
  if (st == FCL_OK) st = fcl_kbuilder_add_temporary(kb, ul, s->dtype, FCL_TEMP_LOCAL, shape);
  snprintf(shape, sizeof shape, "%d, %lld", tile, (long long)row_length(np, tile, s->dtype));
  if (st == FCL_OK) st = fcl_kbuilder_add_temporary(kb, "dl", s->dtype, FCL_TEMP_LOCAL, shape);
  if (nseg > 1) st = add_halo_arrays(kb, s, st);
  for (int c = 0; !shared && c < s->ncomp && st == FCL_OK; ++c) {
    snprintf(name, sizeof name, "ql%d", s->first_comp + c);
    st = fcl_kbuilder_add_temporary(kb, name, s->dtype, FCL_TEMP_LOCAL, shape);
  }
  const int taps = 2 * s->formula->support;
  fcl__str_printf(&t, "{ [ag, al, b%s]: 0 <= ag < %lld and 0 <= al < %d and 0 <= b < %lld",
                  nseg > 1 ? ", sg" : "", (long long)(s->n[a] / tile), tile, (long long)s->n[b]);
  if (nseg > 1) fcl__str_printf(&t, " and 0 <= sg < %lld", (long long)nseg);
  fcl__str_printf(&t, " }");
  if (st == FCL_OK && !t.failed) st = fcl_kbuilder_add_domain(kb, t.s);
  fcl__str_clear(&t);
  fcl__str_printf(&t,
                  "{ [su, r, sq, i]: 0 <= su < %lld and 0 <= r < %lld and 0 <= sq < %lld and "
                  "0 <= i < %lld }",
                  (long long)nu, (long long)np, (long long)np, (long long)n);
  if (st == FCL_OK && !t.failed) st = fcl_kbuilder_add_domain(kb, t.s);
  fcl__str_clear(&t);
  fcl__str_printf(&t, "{ [t2, t3, t4]: 0 <= t2 < %d and 0 <= t3 < %d and 0 <= t4 < %d }", taps,
                  taps, taps);
  if (st == FCL_OK && !t.failed) st = fcl_kbuilder_add_domain(kb, t.s);
  fcl__str_clear(&t);
  weight_rules(&t, s);
  line_read(pos, sizeof pos, s, "su", R->hu);
  fcl__str_printf(&t, "%s[al, su] = ", ul);
  element(&t, s, across, "u", pos);
  fcl__str_printf(&t, "  {id=load_u, dep=}\n");
  push(&t, s, real, ul);
  /* the weights of a point (temporaries): after the loads, so that they share the loop over
   * i with the remeshing that reads them */
  for (int w = 0; !shared && w < window; ++w)
    fcl__str_printf(&t, "<%s> wt%d = W%d(%d - dl[al, i + %d])  {id=weights%d, dep=push:load_q*}\n",
                    real, w, w, R->hp - 1 - w, 1 + w, w);
  const int first = s->first_comp;
  for (int c = first; c < first + s->ncomp; ++c) {
    char line[16], after[32] = "";
    snprintf(line, sizeof line, shared ? "lm" : "ql%d", c);
    if (shared) snprintf(after, sizeof after, c == first ? "push" : "remesh%d", c - 1);
    line_read(pos, sizeof pos, s, "sq", R->hp);
    snprintf(name, sizeof name, "q%d", c);
    fcl__str_printf(&t, "%s[al, sq] = ", line);
    if (nseg > 1) /* a segment's halos: as they were before any segment was written */
      fcl__str_printf(
          &t,
          "(sq < %d || sq >= %lld) ? h%d[b, sg * %d + (sq < %d ? sq : sq - %lld), %s] : ", R->hp,
          (long long)(n + R->hp), c, 2 * R->hp, R->hp, (long long)n, across);
    element(&t, s, across, name, pos);
    fcl__str_printf(&t, "  {id=load_q%d, dep=%s}\n", c,
                    after); /* shared: after the line's last reader */
    if (nseg > 1)
      snprintf(pos, sizeof pos, "sg * %lld + i + %d", (long long)n, s->origin[d]);
    else
      snprintf(pos, sizeof pos, "i + %d", s->origin[d]);
    element(&t, s, across, name, pos);
    /* shared: the weights inline (temporaries would not outlive one component's loop) */
    fcl__str_printf(&t, " = ");
    gather(&t, s, line, shared);
    fcl__str_printf(&t, "  {id=remesh%d, dep=push:load_q%d%s}\n", c, c, shared ? "" : ":weights*");
  }
  if (t.failed) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "advection kernel text");
  if (st == FCL_OK) st = fcl_kbuilder_add_instructions(kb, t.s);
  if (st == FCL_OK) {
    snprintf(name, sizeof name, "ag:g.0, al:l.0, b:g.1, t2:unr, t3:unr, t4:unr%s",
             nseg > 1 ? ", sg:g.2" : "");
    st = fcl_kbuilder_tag_inames(kb, name);
  }
  free(t.s);
  if (st != FCL_OK) fcl_kbuilder_destroy(&kb);
  *out = kb;
  return st;
}

/* Local memory bytes one line (or segment) of a tile of `tile` lines takes (rows padded
 * against bank conflicts); shared: the velocity and the components through one line. */
static size_t line_local_bytes(const fcl__adv_kernel_spec *s, int tile, bool shared) {
  const int64_t n = segment(s), nu = row_length(n + 2 * s->reach.hu, tile, s->dtype),
                np = row_length(n + 2 * s->reach.hp, tile, s->dtype);
  return (size_t)(nu + np * (1 + (shared ? 0 : s->ncomp))) * fcl_dtype_size(s->dtype);
}

typedef struct {
  size_t max_wg;
  int tile;
} mapping;

enum { MIN_SEGMENT = 64 }; /* shorter segments would read more halo than line */

/* The longest segment (whole lines, else n / 2^k: at most opt.max_segment, then at least
 * MIN_SEGMENT) whose tile fits the device's local memory, set in s->seg; 0 if none. */
static int64_t fitting_segment(fcl__adv_kernel_spec *s, int tile, bool shared, size_t local) {
  const int64_t n = s->n[s->axis], most = s->opt.max_segment;
  int64_t seg = n;
  while (most > 0 && seg > most && seg % 2 == 0) seg /= 2;
  for (;; seg /= 2) {
    s->seg = seg == n ? 0 : seg;
    if (line_local_bytes(s, tile, shared) * (size_t)tile <= local) return seg;
    if (seg % 2 || seg / 2 < MIN_SEGMENT) return 0;
  }
}

bool fcl__adv_fits(const fcl__adv_kernel_spec *spec, int tile, bool shared, size_t local) {
  fcl__adv_kernel_spec s = *spec;
  return fitting_segment(&s, tile, shared, local) != 0;
}

/* choice[0]: work-items per line (the line loops split by it, inner on l.1). */
static fcl_status apply(void *user, fcl_kbuilder *kb, const int64_t *choice) {
  const mapping *m = user;
  if ((size_t)(choice[0] * m->tile) > m->max_wg) return FCL_ERR_NOT_SUPPORTED;
  static const char *const loops[] = {"su", "r", "sq", "i"};
  for (int l = 0; l < 4; ++l)
    FCL_TRY(fcl_kbuilder_split_iname(kb, loops[l], choice[0], NULL, "l.1"));
  return FCL_OK;
}

fcl_status fcl__adv_kernel_build(const fcl__adv_kernel_spec *spec, fcl_context *context,
                                 fcl_queue *queue, fcl_launcher **out, fcl_launcher **halo,
                                 size_t *halo_elements) {
  fcl__adv_kernel_spec seg_spec = *spec, *s = &seg_spec;
  fcl_device *dev;
  fcl_device_info info;
  FCL_TRY(fcl_queue_device(queue, &dev));
  FCL_TRY(fcl_device_get_info(dev, &info));
  const bool gpu = info.type & FCL_DEVICE_GPU;
  const int a = s->axis == 0 ? 1 : 0;
  if (s->axis != 0 && s->opt.strided == FCL_ADV_STRIDED_WALK) {
    fcl_status st = fcl__adv_walk_build(spec, context, queue, out, halo, halo_elements);
    if (st != FCL_ERR_NOT_SUPPORTED) return st;
    fcl_clear_error(); /* not for this spec: tiles */
  }
  /* (tile, shared line) candidates, in the order an untimed choice takes them. Strided lines
   * on GPUs want tiles of adjacent lines (one H200, 256^3, the y substep, the best of each over
   * work-group sizes: 8 lines 188 us, 16 through a shared line 270, 16 lines 558, 2 lines
   * 1134); the last, a single line, only where none of the others fits (odd lengths, which
   * segments cannot cut). */
  typedef struct {
    int tile;
    bool shared;
  } candidate;
  static const candidate gpu_strided[] = {{8, false}, {16, true}, {32, true},
                                          {8, true},  {4, false}, {1, false}},
                         contiguous[] = {{1, false}},
                         cpu_strided[] = {{1, false}, {2, false}, {4, false}, {8, false}};
  const candidate *cand = s->axis == 0 ? contiguous : gpu ? gpu_strided : cpu_strided;
  const int ncand = s->axis == 0 ? 1 : gpu ? 6 : 4;
  static const int64_t gpu_items[] = {128, 256, 64, 32}, cpu_items[] = {64, 16, 128, 256};
  const fcl_tune_axis axes[] = {{"items", 4, gpu ? gpu_items : cpu_items}};
  fcl_tune_options opt = {.effort = FCL_TUNE_AUTO}; /* measured once per GPU, remembered */
  fcl_kbuilder *best = NULL;
  double best_ns = 0;
  int64_t best_seg = 0;
  fcl_status first_error = FCL_OK;
  for (int k = 0; k < ncand; ++k) {
    const int tile = cand[k].tile;
    if (gpu && s->axis != 0 && k == ncand - 1 && best) break;
    if (s->n[a] % tile || !fitting_segment(s, tile, cand[k].shared, info.local_mem_size)) continue;
    fcl_kbuilder *base = NULL, *variant = NULL;
    fcl_tune_result r;
    mapping m = {info.max_work_group_size, tile};
    fcl_status st = describe(s, tile, cand[k].shared, &base);
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
      best_seg = s->seg;
    } else {
      fcl_kbuilder_destroy(&variant);
    }
    if (r.median_ns == 0) break; /* not timed: the first tile that builds */
  }
  if (!best)
    return first_error != FCL_OK
               ? first_error
               : FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                           "advection along axis %d: a line of %lld points does not fit the "
                           "device's %llu bytes of local memory, even cut in segments (at least "
                           "%d points, halved from the line while even)",
                           s->axis, (long long)s->n[s->axis],
                           (unsigned long long)info.local_mem_size, MIN_SEGMENT);
  fcl_status st = fcl_kbuilder_build(best, context, NULL, queue, out);
  fcl_kbuilder_destroy(&best);
  *halo = NULL;
  *halo_elements = 0;
  if (st == FCL_OK && best_seg) {
    s->seg = best_seg;
    st = fcl__adv_halo_build(s, context, queue, halo, halo_elements);
    if (st != FCL_OK) fcl_launcher_destroy(out);
  }
  return st;
}

fcl_status fcl__adv_halo_build(const fcl__adv_kernel_spec *s, fcl_context *context,
                               fcl_queue *queue, fcl_launcher **out, size_t *elements) {
  const int d = s->axis, a = d == 0 ? 1 : 0, b = d == 2 ? 1 : 2;
  *elements = (size_t)(s->n[b] * (s->n[d] / s->seg) * 2 * s->reach.hp * s->n[a]);
  fcl_kbuilder *kb = NULL;
  fcl_status st = describe_halo(s, &kb);
  if (st == FCL_OK) st = fcl_kbuilder_build(kb, context, NULL, queue, out);
  fcl_kbuilder_destroy(&kb);
  return st;
}
