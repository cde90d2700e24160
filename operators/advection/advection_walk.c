/* The walking kernel of a strided substep (y or z): each work-item takes one line (or a segment
 * of it) and walks it point by point, the values a point needs in registers, while the
 * work-items of a work-group take adjacent lines, so that each step of the walk reads whole
 * rows of the arrays. Along the walk, at the particle j entering the window:
 *   U: the velocity u[j - C - I + 1 .. j + C + I] (one load per point),
 *   d_j: its displacement (RK2, RK3 or RK4 on U, clamped to max_cfl), entering D,
 *   Q<c>: q<c>[j - 2 hp + 2 .. j] (one load per component and point),
 * and the point P = j - hp + 1 gathers sum_w Q<c>[w] W<w>(hp - 1 - w - D[w]), written in place
 * (P is behind every point still to be read). Where a line wraps (periodic, one rank) its first
 * hp - 1 values are kept for the end; segments read their halos from the arrays h<c> that the
 * halo kernel fills first (advection_kernel.c). The tiles of advection_kernel.c read the few
 * adjacent lines that local memory holds (8 lines of 4 bytes at 512^3 on an H200). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advection_impl.h"
#include "check.h"

/* At most 8 components and 128 values in the sliding windows (the default, Lambda_{4,2} with
 * max_cfl 1 and 3 components: 32): longer reaches take the tiles, whose local memory holds
 * them, rather than spill registers or grow the unrolled text to MAX_TEXT bytes or more. */
enum { MAX_WALK_COMPS = 8, MAX_WINDOW = 128, GROUP = 128, MAX_TEXT = 1 << 18 };

typedef struct {
  const fcl__adv_kernel_spec *s;
  int d, a, b; /* the line's axis, the axis of adjacent work-items, the other */
  int64_t n, seg, nseg;
  long long stride[3];
  bool halos; /* segments: halos from h<c> */
  int block;  /* points whose loads are issued together */
} walk;

/* The velocity at relative point r of the window (r = 0: the entering particle j). */
static int uix(const fcl__adv_reach *R, int r) { return R->cfl + R->interp - 1 + r; }

/* k<st> = the velocity interpolated at offset o<st> from j. */
static void interpolate(fcl__str *t, const walk *w, int st) {
  const fcl__adv_reach *R = &w->s->reach;
  if (w->s->opt.interp == FCL_INTERP_LINEAR) {
    fcl__str_printf(t, "    { const int m = (int)floor(o%d); const R f = o%d - m;\n", st, st);
    fcl__str_printf(t, "      R lo = U%d, hi = U%d;\n", uix(R, -R->cfl), uix(R, -R->cfl + 1));
    for (int r = -R->cfl + 1; r <= R->cfl; ++r)
      fcl__str_printf(t, "      lo = m == %d ? U%d : lo; hi = m == %d ? U%d : hi;\n", r, uix(R, r),
                      r, uix(R, r + 1));
    fcl__str_printf(t, "      k%d = lo + f * (hi - lo); }\n", st);
  } else { /* every window point, weighted by W (0 beyond the support) */
    const int S = R->support;
    fcl__str_printf(t, "    k%d = 0;\n", st);
    for (int r = -R->cfl - S + 1; r <= R->cfl + S; ++r)
      fcl__str_printf(t, "    k%d += U%d * Wfull(o%d - %d);\n", st, uix(R, r), st, r);
  }
}

/* The entering particle j: shift U, u[j + C + I] (uload, NULL: loaded here) entering it, and
 * its displacement into D. */
static void push(fcl__str *t, const walk *w, const char *uload) {
  const fcl__adv_kernel_spec *s = w->s;
  const fcl__adv_reach *R = &s->reach;
  const int nu = 2 * (R->cfl + R->interp);
  for (int k = 0; k + 1 < nu; ++k) fcl__str_printf(t, "    U%d = U%d;\n", k, k + 1);
  if (uload)
    fcl__str_printf(t, "    U%d = %s;\n", nu - 1, uload);
  else
    fcl__str_printf(t, "    U%d = ul[AT(j + %d) * SD];\n", nu - 1, R->cfl + R->interp);
  char c[40], m[40], half[40], quarter[40], sixth[40], result[128];
  fcl__adv_lit(c, R->cfl, s->dtype);
  fcl__adv_lit(m, -R->cfl, s->dtype);
  fcl__adv_lit(half, 0.5, s->dtype);
  fcl__adv_lit(quarter, 0.25, s->dtype);
  fcl__adv_lit(sixth, 1.0 / 6.0, s->dtype);
  fcl__str_printf(t, "    R k1 = U%d, k2, k3, k4, o2, o3, o4;\n", uix(R, 0));
  snprintf(result, sizeof result, "k2");
  switch (s->opt.rk_order) {
    case 3: /* SSP RK3 (Shu-Osher) */
      fcl__str_printf(t, "    o2 = fmin(fmax(cdt * k1, %s), %s);\n", m, c);
      interpolate(t, w, 2);
      fcl__str_printf(t, "    o3 = fmin(fmax(cdt * (%s * (k1 + k2)), %s), %s);\n", quarter, m, c);
      interpolate(t, w, 3);
      snprintf(result, sizeof result, "%s * (k1 + k2 + 4 * k3)", sixth);
      break;
    case 4:
      fcl__str_printf(t, "    o2 = fmin(fmax(cdt * (%s * k1), %s), %s);\n", half, m, c);
      interpolate(t, w, 2);
      fcl__str_printf(t, "    o3 = fmin(fmax(cdt * (%s * k2), %s), %s);\n", half, m, c);
      interpolate(t, w, 3);
      fcl__str_printf(t, "    o4 = fmin(fmax(cdt * k3, %s), %s);\n", m, c);
      interpolate(t, w, 4);
      snprintf(result, sizeof result, "%s * (k1 + 2 * k2 + 2 * k3 + k4)", sixth);
      break;
    default: /* midpoint */
      fcl__str_printf(t, "    o2 = fmin(fmax(cdt * (%s * k1), %s), %s);\n", half, m, c);
      interpolate(t, w, 2);
  }
  fcl__str_printf(t, "    (void)k3; (void)k4; (void)o3; (void)o4;\n");
  const int win = 2 * R->hp - 1;
  for (int k = 0; k + 1 < win; ++k) fcl__str_printf(t, "    D%d = D%d;\n", k, k + 1);
  fcl__str_printf(t, "    D%d = fmin(fmax(cdt * (%s), %s), %s);\n", win - 1, result, m, c);
}

/* Shift the component windows, the entering value of component c being load, a format with
 * one %d for c. */
static void enter(fcl__str *t, const walk *w, const char *load) {
  const int win = 2 * w->s->reach.hp - 1;
  for (int c = 0; c < w->s->ncomp; ++c) {
    for (int k = 0; k + 1 < win; ++k) fcl__str_printf(t, "    Q%d_%d = Q%d_%d;\n", c, k, c, k + 1);
    fcl__str_printf(t, "    Q%d_%d = ", c, win - 1);
    fcl__str_printf(t, load, c);
    fcl__str_printf(t, ";\n");
  }
}

/* Point P = j - hp + 1 gathers its particles and is written. */
static void gather(fcl__str *t, const walk *w) {
  const int hp = w->s->reach.hp, win = 2 * hp - 1;
  for (int k = 0; k < win; ++k)
    fcl__str_printf(t, "    const R w%d = W%d(%d - D%d);\n", k, k, hp - 1 - k, k);
  for (int c = 0; c < w->s->ncomp; ++c) {
    fcl__str_printf(t, "    ql%d[(j - %d) * SD] = ", c, hp - 1);
    for (int k = 0; k < win; ++k) fcl__str_printf(t, "%sQ%d_%d * w%d", k ? " + " : "", c, k, k);
    fcl__str_printf(t, ";\n");
  }
}

/* The load format of halo value k of the segment (k < hp: before it). */
static const char *halo_load(char *buf, size_t size, const walk *w, int k) {
  snprintf(buf, size, "hl%%d[%d * %lldL]", k, (long long)w->s->n[w->a]);
  return buf;
}

static void source(fcl__str *t, const walk *w, const char *name) {
  char load[48];
  const fcl__adv_kernel_spec *s = w->s;
  const fcl__adv_reach *R = &s->reach;
  const int hp = R->hp, win = 2 * hp - 1, nu = 2 * (R->cfl + R->interp), nc = s->ncomp;
  const bool f64 = s->dtype == FCL_FLOAT64;
  if (f64) fcl__str_printf(t, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
  fcl__str_printf(t, "#define R %s\n", f64 ? "double" : "float");
  for (int k = 0; k < win; ++k) {
    const int dist = abs(hp - 1 - k);
    fcl__str_printf(t, "static inline R W%d(R x) { return ", k);
    fcl__adv_weight_expr(t, s, dist > R->cfl ? dist - R->cfl : 0, dist + R->cfl);
    fcl__str_printf(t, "; }\n");
  }
  if (s->opt.interp == FCL_INTERP_KERNEL) {
    fcl__str_printf(t, "static inline R Wfull(R x) { return ");
    fcl__adv_weight_expr(t, s, 0, R->support);
    fcl__str_printf(t, "; }\n");
  }
  if (s->wrap) /* positions within [-n, 2n) */
    fcl__str_printf(t, "#define AT(p) ((p) < 0 ? (p) + %lld : (p) >= %lld ? (p) - %lld : (p))\n",
                    (long long)w->n, (long long)w->n, (long long)w->n);
  else
    fcl__str_printf(t, "#define AT(p) (p)\n");
  fcl__str_printf(t, "#define SD %lldL\n", w->stride[w->d]);
  fcl__str_printf(t, "FCL_KERNEL FCL_GROUP_SIZE(%d, 1, 1)\nvoid %s(", GROUP, name);
  fcl__str_printf(t, "FCL_GLOBAL const R *restrict u");
  for (int c = 0; c < nc; ++c)
    fcl__str_printf(t, ", FCL_GLOBAL R *restrict q%d", s->first_comp + c);
  for (int c = 0; w->halos && c < nc; ++c)
    fcl__str_printf(t, ", FCL_GLOBAL const R *restrict h%d", s->first_comp + c);
  fcl__str_printf(t, ", const R cdt) {\n");
  fcl__str_printf(t, "  const int x = get_global_id(0);\n  if (x >= %lld) return;\n",
                  (long long)s->n[w->a]);
  fcl__str_printf(t, "  const int b = get_global_id(1), sg = get_global_id(2), s0 = sg * %lld;\n",
                  (long long)w->seg);
  fcl__str_printf(
      t, "  const long base = (long)(x + %d) * %lld + (long)(b + %d) * %lld + %dL * SD;\n",
      s->origin[w->a], w->stride[w->a], s->origin[w->b], w->stride[w->b], s->origin[w->d]);
  fcl__str_printf(t, "  FCL_GLOBAL const R *ul = u + base;\n");
  for (int c = 0; c < nc; ++c)
    fcl__str_printf(t, "  FCL_GLOBAL R *ql%d = q%d + base;\n", c, s->first_comp + c);
  for (int c = 0; w->halos && c < nc; ++c)
    fcl__str_printf(
        t, "  FCL_GLOBAL const R *hl%d = h%d + ((long)b * %lld + sg * %d) * %lld + x;\n", c,
        s->first_comp + c, (long long)(w->nseg * 2 * hp), 2 * hp, (long long)s->n[w->a]);
  /* the windows; U preloaded for the first particle, j = s0 - hp + 1 */
  for (int k = 0; k < nu; ++k)
    fcl__str_printf(t, "%s U%d = ul[AT(s0 + %d) * SD]", k ? "," : "  R", k,
                    -hp + 1 - R->cfl - R->interp + k);
  /* the windows start at 0: their first shifts move values no sum reads yet, but a compiler
   * (NVRTC) warns of a read before a write */
  fcl__str_printf(t, ";\n  R D0 = 0");
  for (int k = 1; k < win; ++k) fcl__str_printf(t, ", D%d = 0", k);
  fcl__str_printf(t, ";\n");
  for (int c = 0; c < nc; ++c) {
    fcl__str_printf(t, "  R Q%d_0 = 0", c);
    for (int k = 1; k < win; ++k) fcl__str_printf(t, ", Q%d_%d = 0", c, k);
    fcl__str_printf(t, ";\n");
  }
  const bool keep_head = s->wrap && !w->halos; /* a whole wrapping line's first values */
  for (int c = 0; keep_head && c < nc; ++c) {
    fcl__str_printf(t, "  R H%d_0", c);
    for (int k = 1; k < hp - 1; ++k) fcl__str_printf(t, ", H%d_%d", c, k);
    fcl__str_printf(t, ";\n");
  }
  /* the particles before the segment: hp - 1 of them, then its first hp - 1 */
  for (int k = 1; k < hp; ++k) {
    fcl__str_printf(t, "  { const int j = s0 - %d;\n", hp - k);
    push(t, w, NULL);
    enter(t, w, w->halos ? halo_load(load, sizeof load, w, k) : "ql%d[AT(j) * SD]");
    fcl__str_printf(t, "  }\n");
  }
  for (int k = 0; k < hp - 1; ++k) {
    fcl__str_printf(t, "  { const int j = s0 + %d;\n", k);
    push(t, w, NULL);
    enter(t, w, "ql%d[j * SD]");
    for (int c = 0; keep_head && c < nc; ++c)
      fcl__str_printf(t, "    H%d_%d = Q%d_%d;\n", c, k, c, win - 1);
    fcl__str_printf(t, "  }\n");
  }
  /* the walk: the points whose particles are all in the segment's values, in blocks of
   * BLOCK points whose loads are issued together (more loads in flight), then one by one */
  fcl__str_printf(t, "  int j0 = s0 + %d;\n", hp - 1);
  const int block = w->block;
  if (block > 1) {
    fcl__str_printf(t, "  for (; j0 + %d <= s0 + %lld; j0 += %d) {\n", block, (long long)w->seg,
                    block);
    for (int k = 0; k < block; ++k) {
      fcl__str_printf(t, "    const R LU%d = ul[AT(j0 + %d) * SD]", k, k + R->cfl + R->interp);
      for (int c = 0; c < nc; ++c)
        fcl__str_printf(t, ", LQ%d_%d = ql%d[(j0 + %d) * SD]", c, k, c, k);
      fcl__str_printf(t, ";\n");
    }
    for (int k = 0; k < block; ++k) {
      char uload[16], qload[16];
      snprintf(uload, sizeof uload, "LU%d", k);
      snprintf(qload, sizeof qload, "LQ%%d_%d", k);
      fcl__str_printf(t, "  { const int j = j0 + %d;\n", k);
      push(t, w, uload);
      enter(t, w, qload);
      gather(t, w);
      fcl__str_printf(t, "  }\n");
    }
    fcl__str_printf(t, "  }\n");
  }
  fcl__str_printf(t, "  for (int j = j0; j < s0 + %lld; ++j) {\n", (long long)w->seg);
  push(t, w, NULL);
  enter(t, w, "ql%d[j * SD]");
  gather(t, w);
  fcl__str_printf(t, "  }\n");
  /* its last hp - 1 points, whose last particles are past it */
  for (int k = 0; k < hp - 1; ++k) {
    fcl__str_printf(t, "  { const int j = s0 + %lld;\n", (long long)w->seg + k);
    push(t, w, NULL);
    if (w->halos) {
      enter(t, w, halo_load(load, sizeof load, w, hp + k));
    } else if (keep_head) {
      snprintf(load, sizeof load, "H%%d_%d", k);
      enter(t, w, load);
    } else {
      enter(t, w, "ql%d[j * SD]"); /* the ghosts past the rank's line */
    }
    gather(t, w);
    fcl__str_printf(t, "  }\n");
  }
  fcl__str_printf(t, "}\n");
}

/* The segment length: whole lines (one H200, blocks of 8 points: faster than segments of 128
 * at 256^3, 512^3 and 1024^3; docs/benchmarks.md, seventeenth session), halved while longer than opt.max_segment
 * (if set) and even, while at least the hp - 1 points a segment's ends take. */
static int64_t segment_length(const fcl__adv_kernel_spec *s, const walk *w) {
  int64_t seg = w->n;
  while (s->opt.max_segment > 0 && seg > s->opt.max_segment && seg % 2 == 0 &&
         seg / 2 >= s->reach.hp - 1)
    seg /= 2;
  return seg;
}

fcl_status fcl__adv_walk_build(const fcl__adv_kernel_spec *spec, fcl_context *context,
                               fcl_queue *queue, fcl_launcher **out, fcl_launcher **halo,
                               size_t *halo_elements) {
  *out = *halo = NULL;
  *halo_elements = 0;
  const fcl__adv_reach *R = &spec->reach;
  const int window = (2 * R->hp - 1) * (spec->ncomp + 1) + 2 * (R->cfl + R->interp);
  if (spec->axis == 0 || spec->ncomp > MAX_WALK_COMPS || window > MAX_WINDOW)
    return FCL_ERR_NOT_SUPPORTED;
  fcl_device *dev;
  fcl_device_info info;
  FCL_TRY(fcl_queue_device(queue, &dev));
  FCL_TRY(fcl_device_get_info(dev, &info));
  if (info.max_work_group_size < GROUP || info.max_work_item_sizes[0] < GROUP)
    return FCL_ERR_NOT_SUPPORTED;
  fcl__adv_kernel_spec s = *spec;
  walk w = {.s = &s, .d = s.axis, .a = 0, .b = s.axis == 2 ? 1 : 2, .n = s.n[s.axis]};
  w.stride[0] = 1;
  w.stride[1] = (long long)s.padded[0];
  w.stride[2] = (long long)(s.padded[0] * s.padded[1]);
  w.seg = segment_length(&s, &w);
  /* one H200, 512^3 and 1024^3: blocks of 8 points a little faster than 4, and 4 than 1 by
   * 1.2-1.3 times; more components take more registers per point */
  w.block = s.ncomp <= 3 ? 8 : 4;
  if (w.seg < s.reach.hp - 1) return FCL_ERR_NOT_SUPPORTED;
  w.nseg = w.n / w.seg;
  w.halos = w.nseg > 1;
  s.seg = w.halos ? w.seg : 0;
  char name[64];
  snprintf(name, sizeof name, "advect_%c_walk_%s_rk%d", "xyz"[w.d],
           fcl_remesh_formula_name(s.opt.formula), s.opt.rk_order);
  if (w.halos)
    snprintf(name + strlen(name), sizeof name - strlen(name), "_s%lld", (long long)w.seg);
  fcl__str t = {0};
  source(&t, &w, name);
  if (t.failed || t.len >= MAX_TEXT) { /* MAX_TEXT: a reach too long for the text, tiles */
    free(t.s);
    return t.failed ? FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "advection walking kernel text")
                    : FCL_ERR_NOT_SUPPORTED;
  }
  fcl_program *prog = NULL;
  fcl_status st = fcl_program_create_source(context, t.s, name, &prog);
  free(t.s);
  if (st == FCL_OK) st = fcl_program_build(prog, NULL);
  bool fits = false; /* the compiled kernel takes a work-group of GROUP (registers) */
  if (st == FCL_OK) {
    fcl_kernel *k = NULL;
    fcl_kernel_work_group_info wi;
    st = fcl_kernel_create(prog, name, &k);
    if (st == FCL_OK) st = fcl_kernel_get_work_group_info(k, dev, &wi);
    fits = st == FCL_OK && wi.work_group_size >= GROUP;
    fcl_kernel_destroy(&k);
  }
  if (st == FCL_OK && !fits) {
    fcl_program_release(&prog);
    return FCL_ERR_NOT_SUPPORTED;
  }
  const fcl_value_type real = s.dtype == FCL_FLOAT64 ? FCL_TYPE_F64 : FCL_TYPE_F32;
  fcl_param_spec params[2 + 2 * MAX_WALK_COMPS];
  char names[2 * MAX_WALK_COMPS][8];
  unsigned np = 0;
  params[np] = (fcl_param_spec){"u", np, FCL_TYPE_BUFFER};
  ++np;
  for (int h = 0; h <= (int)w.halos; ++h)
    for (int c = 0; c < s.ncomp; ++c, ++np) {
      char *nm = names[np - 1];
      snprintf(nm, sizeof names[0], "%c%d", h ? 'h' : 'q', s.first_comp + c);
      params[np] = (fcl_param_spec){nm, np, FCL_TYPE_BUFFER};
    }
  params[np] = (fcl_param_spec){"cdt", np, real};
  ++np;
  fcl_launch_config cfg = {.queue = queue, .work_dim = 3, .local = {GROUP, 1, 1}};
  cfg.global[0] = (size_t)((s.n[w.a] + GROUP - 1) / GROUP * GROUP);
  cfg.global[1] = (size_t)s.n[w.b];
  cfg.global[2] = (size_t)w.nseg;
  if (st == FCL_OK)
    st = fcl_launcher_create_kernel(prog, name, name, 0, NULL, np, params, &cfg, out);
  fcl_program_release(&prog);
  if (st == FCL_OK && w.halos) st = fcl__adv_halo_build(&s, context, queue, halo, halo_elements);
  if (st != FCL_OK) fcl_launcher_destroy(out);
  return st;
}
