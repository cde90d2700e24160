/* Generated kernels against plain C loops on random data, each with several tag/split/prefetch
 * choices, in float and double: elementwise map, 2D 5-point stencil, 3D 7-point stencil with a
 * local prefetch, 2D transpose through local memory (prefetch and explicit local tile),
 * reductions along one axis, matrix-vector product, rules and temporaries. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kb_check.h"

typedef void (*variant_fn)(fcl_kbuilder *kb);
typedef struct {
  const char *name;
  variant_fn apply;
} variant;

/* Run every variant of a base kernel (each on its own copy). */
static void run_variants(kb_env *env, const fcl_kbuilder *base, const int64_t *params,
                         kb_reference ref, const variant *v, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    fcl_kbuilder *kb = NULL;
    CHECK_OK(fcl_kbuilder_copy(base, &kb));
    if (!kb) continue;
    int before = fcl_test_failures;
    v[i].apply(kb);
    if (fcl_test_failures == before) kb_check(env, kb, params, ref, v[i].name);
    fcl_kbuilder_destroy(&kb);
  }
}

static void v_none(fcl_kbuilder *kb) { (void)kb; }

/* ---------------- elementwise map ---------------- */

static void ref_map(kb_data *d, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; ++i)
    d->data[3][i] = d->scalar[0] * d->data[1][i] + sin(d->data[2][i]);
}
static void v_map_g64(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 64, "g.0", "l.0"));
}
static void v_map_vec(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 256, "g.0", NULL));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i_inner", 4, "l.0", "vec"));
}
static void v_map_auto(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 128, "g.0", "l.auto"));
}
static void v_map_ilp(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 128, "g.0", NULL));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i_inner", 4, "l.0", "ilp"));
}

static fcl_kbuilder *make_map(fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("axpy_sin", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_scalar(kb, "a", t));
  CHECK_OK(fcl_kbuilder_add_array(kb, "x", t, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "y", t, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", t, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "out[i] = a * x[i] + sin(y[i])"));
  return kb;
}

static void map_tests(kb_env *env, fcl_dtype t) {
  static const variant v[] = {{"sequential", v_none},
                              {"g.0/l.0 by 64", v_map_g64},
                              {"vec 4 (remainder: unrolled)", v_map_vec},
                              {"l.auto", v_map_auto},
                              {"ilp 4", v_map_ilp}};
  fcl_kbuilder *kb = make_map(t);
  int64_t n = 1000;
  run_variants(env, kb, &n, ref_map, v, sizeof v / sizeof *v);
  /* n a multiple of 4 only: aligned blocks, the lanes past n in the last group not stored */
  fcl_kbuilder *rk = NULL;
  CHECK_OK(fcl_kbuilder_copy(kb, &rk));
  CHECK_OK(fcl_kbuilder_assume(rk, "n mod 4 = 0"));
  v_map_vec(rk);
  char *rsrc = NULL;
  CHECK_OK(fcl_kbuilder_generate(rk, &rsrc));
  CHECKF(rsrc && strstr(rsrc, "the lanes inside") && !strstr(rsrc, "vload"),
         "vec 4 with n mod 4 = 0 should read blocks and mask its tail:\n%s", rsrc ? rsrc : "");
  free(rsrc);
  kb_check(env, rk, &n, ref_map, "vec 4, n multiple of 4 (masked tail)");
  fcl_kbuilder_destroy(&rk);
  /* divisible sizes: the vector variant reads and writes whole aligned vectors */
  CHECK_OK(fcl_kbuilder_assume(kb, "n mod 256 = 0"));
  fcl_kbuilder *vk = NULL;
  CHECK_OK(fcl_kbuilder_copy(kb, &vk));
  v_map_vec(vk);
  char *src = NULL, load[64], store[64];
  snprintf(load, sizeof load, "*(FCL_GLOBAL const %s4 *)(x + ", fcl_dtype_cl_name(t));
  snprintf(store, sizeof store, "*(FCL_GLOBAL %s4 *)(out + ", fcl_dtype_cl_name(t));
  CHECK_OK(fcl_kbuilder_generate(vk, &src));
  CHECKF(src && strstr(src, load) && strstr(src, store) && !strstr(src, "if ("),
         "divisible vec 4 kernel should be vectorized and unguarded:\n%s", src ? src : "");
  free(src);
  n = 1024;
  kb_check(env, vk, &n, ref_map, "vec 4, n multiple of 256");
  fcl_kbuilder_destroy(&vk);
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- rules, temporaries, attributes ---------------- */

static void ref_rules(kb_data *d, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; ++i) {
    double x = d->data[0][i], y = d->data[1][i];
    double t = x * x + y;
    d->data[2][i] = t > 1.5 ? 2.0 * t : t - 1.0;
  }
}

static void rules_tests(kb_env *env, fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("rules", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "x", t, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "y", t, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", t, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(
      kb, "sq(v) := v * v\n"
          "<> tt = sq(x[i]) + y[i]          {id=make_t}\n"
          "<int> big = tt > 1.5             {id=test, dep=make*}\n"
          "out[i] = tt - 1.0                {id=low, dep=make_t}\n"
          "out[i] = 2.0 * tt                {id=high, dep=low:test, if=big}"));
  int64_t n = 777;
  static const variant v[] = {{"sequential", v_none}, {"g.0/l.0 by 64", v_map_g64}};
  run_variants(env, kb, &n, ref_rules, v, 2);
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- one reduction iname in two reductions ---------------- */

/* v[j] = sum_i a[i, j] + sum_i 2 b[i, j]: the iname i serves both sums of one instruction (loopy
 * needs it duplicated; the builder gives each reduction its own loop) */
static void ref_two_sums(kb_data *d, const int64_t *p) {
  for (int64_t j = 0; j < p[0]; ++j) {
    double s = 0, t = 0;
    for (int64_t i = 0; i < p[0]; ++i)
      s += d->data[0][i * p[0] + j], t += 2 * d->data[1][i * p[0] + j];
    d->data[2][j] = s + t;
  }
}

static void two_sums_tests(kb_env *env, fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("two_sums", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "a", t, "n, n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "b", t, "n, n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "v", t, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i, j]: 0 <= i < n and 0 <= j < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "v[j] = sum(i, a[i, j]) + sum(i, 2 * b[i, j])"));
  int64_t n = 45;
  static const variant v[] = {{"sequential", v_none}};
  run_variants(env, kb, &n, ref_two_sums, v, 1);
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- 2D 5-point stencil ---------------- */

static void ref_stencil2d(kb_data *d, const int64_t *p) {
  int64_t nx = p[0], ny = p[1];
  const double *u = d->data[0];
  for (int64_t j = 1; j < ny - 1; ++j)
    for (int64_t i = 1; i < nx - 1; ++i)
      d->data[1][j * nx + i] = u[j * nx + i - 1] + u[j * nx + i + 1] + u[(j - 1) * nx + i] +
                               u[(j + 1) * nx + i] - 4.0 * u[j * nx + i];
}
static void v_s2_tile(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 16, "g.1", "l.1"));
}
static void v_s2_prefetch(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 32, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 4, "g.1", "l.1"));
  CHECK_OK(fcl_kbuilder_add_prefetch(
      kb, (fcl_prefetch){.array = "u", .sweep = "i_inner, j_inner", .pad = 1}));
}
static void v_s2_rows(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 8, "g.0", "unr"));
}
static void v_s2_i_outer(fcl_kbuilder *kb) { /* sequential, the domain's order reversed */
  CHECK_OK(fcl_kbuilder_prioritize_loops(kb, "i, j"));
}

static void stencil2d_tests(kb_env *env, fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("laplace2d", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "nx"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "ny"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "u", t, "ny, nx"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", t, "ny, nx"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [j, i]: 1 <= j < ny - 1 and 1 <= i < nx - 1 }"));
  CHECK_OK(fcl_kbuilder_add_instructions(
      kb, "out[j, i] = u[j, i - 1] + u[j, i + 1] + u[j - 1, i] + u[j + 1, i] - 4.0 * u[j, i]"));
  static const variant v[] = {{"sequential", v_none},
                              {"16x16 tiles", v_s2_tile},
                              {"32x4 tiles, prefetch", v_s2_prefetch},
                              {"unrolled rows of 8", v_s2_rows},
                              {"sequential, i outside j (prioritize_loops)", v_s2_i_outer}};
  int64_t p[2] = {70, 45};
  run_variants(env, kb, p, ref_stencil2d, v, sizeof v / sizeof *v);
  /* prioritize_loops sets the nesting: i's loop encloses j's, against the domain's order */
  for (int prio = 0; prio < 2; ++prio) {
    fcl_kbuilder *ok = NULL;
    CHECK_OK(fcl_kbuilder_copy(kb, &ok));
    if (prio) v_s2_i_outer(ok);
    char *src = NULL;
    CHECK_OK(fcl_kbuilder_generate(ok, &src));
    const char *li = src ? strstr(src, "for (int i") : NULL,
               *lj = src ? strstr(src, "for (int j") : NULL;
    CHECKF(li && lj && (prio ? li < lj : lj < li), "%s: loop i should be %s loop j:\n%s",
           prio ? "prioritize_loops(i, j)" : "domain order", prio ? "outside" : "inside",
           src ? src : "");
    free(src);
    fcl_kbuilder_destroy(&ok);
  }
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- tagged accesses ($) ----------------
 * A stencil of u's neighbours tagged "nb" (two directly, two through a rule used as nb$nb)
 * plus u read transposed: the transposed access is not a translate of the others, so u as a
 * whole cannot be prefetched, while u$nb can; the transposed read stays in global memory. */
static void ref_tagged(kb_data *d, const int64_t *p) {
  int64_t n = p[0];
  const double *u = d->data[0];
  for (int64_t j = 1; j < n - 1; ++j)
    for (int64_t i = 1; i < n - 1; ++i)
      d->data[1][j * n + i] = u[j * n + i - 1] + 2 * u[j * n + i + 1] + u[(j - 1) * n + i] +
                              u[(j + 1) * n + i] + 0.5 * u[i * n + j];
}
static void v_tag_tiles(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 8, "g.1", "l.1"));
}
static void v_tag_prefetch(fcl_kbuilder *kb) {
  v_tag_tiles(kb);
  CHECK_STATUS(
      fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "u", .sweep = "i_inner, j_inner"}),
      FCL_ERR_INVALID_ARGUMENT, "not translates of each other");
  CHECK_OK(fcl_kbuilder_add_prefetch(
      kb, (fcl_prefetch){.array = "u$nb", .sweep = "i_inner, j_inner", .pad = 1}));
}

static void tagged_tests(kb_env *env, fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("tagged", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "u", t, "n, n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", t, "n, n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [j, i]: 1 <= j < n - 1 and 1 <= i < n - 1 }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "vert(jj, ii) := u[jj - 1, ii] + u[jj + 1, ii]\n"
                                             "out[j, i] = u$nb[j, i - 1] + 2 * u$nb[j, i + 1] + "
                                             "vert$nb(j, i) + 0.5 * u[i, j]"));
  static const variant v[] = {{"sequential", v_none},
                              {"16x8 tiles", v_tag_tiles},
                              {"16x8 tiles, u$nb prefetched", v_tag_prefetch}};
  int64_t n = 37;
  run_variants(env, kb, &n, ref_tagged, v, sizeof v / sizeof *v);
  /* the tagged accesses read the local copy, the transposed one global memory */
  fcl_kbuilder *pf = NULL;
  CHECK_OK(fcl_kbuilder_copy(kb, &pf));
  if (pf) v_tag_prefetch(pf);
  char *src = NULL;
  if (pf) CHECK_OK(fcl_kbuilder_generate(pf, &src));
  int fetches = 0;
  for (const char *s = src; s && (s = strstr(s, "u_fetch[")); ++s) ++fetches;
  const char *code = src ? strstr(src, "FCL_KERNEL") : NULL; /* after the header comment */
  CHECKF(code && fetches >= 5 && strstr(code, " u[") && !strstr(code, "$"),
         "u$nb prefetched: %d reads of u_fetch, a global read of u expected:\n%s", fetches,
         src ? src : "");
  free(src);
  fcl_kbuilder_destroy(&pf);
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- 3D 7-point stencil ---------------- */

static void ref_stencil3d(kb_data *d, const int64_t *p) {
  int64_t nx = p[0], ny = p[1], nz = p[2];
  const double *u = d->data[1];
  double a = d->scalar[0];
#define U(k, j, i) u[((k)*ny + (j)) * nx + (i)]
  for (int64_t k = 1; k < nz - 1; ++k)
    for (int64_t j = 1; j < ny - 1; ++j)
      for (int64_t i = 1; i < nx - 1; ++i)
        d->data[2][(k * ny + j) * nx + i] = a * U(k, j, i) + U(k, j, i - 1) + U(k, j, i + 1) +
                                            U(k, j - 1, i) + U(k, j + 1, i) + U(k - 1, j, i) +
                                            U(k + 1, j, i);
#undef U
}
static void v_s3_tiles(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 32, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 4, "g.1", "l.1"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "k:g.2"));
}
static void v_s3_prefetch(fcl_kbuilder *kb) {
  v_s3_tiles(kb);
  CHECK_OK(
      fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "u", .sweep = "i_inner, j_inner"}));
}
static void v_s3_march(fcl_kbuilder *kb) { /* 2.5D: a tile marches along k, refetching */
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 8, "g.1", "l.1"));
  CHECK_OK(fcl_kbuilder_add_prefetch(
      kb,
      (fcl_prefetch){.array = "u", .sweep = "i_inner, j_inner", .fetch_name = "tile", .pad = 1}));
}

static void v_s3_aligned(fcl_kbuilder *kb, int64_t vec) { /* i from 0: aligned vector lanes */
  CHECK_OK(fcl_kbuilder_align_iname(kb, "i", vec));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 8 * vec, "g.0", NULL));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i_inner", vec, "l.0", "vec"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 4, "g.1", "l.1"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "k", 4, "g.2", "unr"));
}
static void v_s3_aligned2(fcl_kbuilder *kb) { v_s3_aligned(kb, 2); }
static void v_s3_aligned4(fcl_kbuilder *kb) { v_s3_aligned(kb, 4); }
static void v_s3_aligned_prefetch(fcl_kbuilder *kb) { /* barriers: lanes go scalar */
  v_s3_aligned(kb, 2);
  CHECK_OK(fcl_kbuilder_add_prefetch(
      kb, (fcl_prefetch){.array = "u", .sweep = "i_inner_outer, i_inner_inner, j_inner"}));
}

/* Planes carried in registers along k: each plane loaded once per work-item. */
static void v_s3_stream(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 4, "g.1", "l.1"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "k", 4, "g.2", NULL)); /* 11 planes: a partial chunk */
  CHECK_OK(fcl_kbuilder_stream_iname(kb, "k_inner", "u"));
}
static void v_s3_stream_unr(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 8, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 8, "g.1", "l.1"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "k", 16, "g.2", "unr"));
  CHECK_OK(fcl_kbuilder_stream_iname(kb, "k_inner", "u"));
}
static void v_s3_stream_vec(fcl_kbuilder *kb) { /* registers per vector lane */
  v_s3_aligned(kb, 2);
  CHECK_OK(fcl_kbuilder_stream_iname(kb, "k_inner", "u"));
}

/* nx a multiple of the vector width: lanes read aligned blocks, i -+ 1 shuffled from two; the
 * blocks left and right of a row are read under a position test, lanes outside the domain are
 * not stored, and vectors wholly past nx (the last group's) do nothing. */
static void block_tests(kb_env *env, const fcl_kbuilder *base) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_copy(base, &kb));
  CHECK_OK(fcl_kbuilder_assume(kb, "nx mod 8 = 0"));
  static const variant v[] = {{"aligned blocks, vec 2", v_s3_aligned2},
                              {"aligned blocks, vec 4", v_s3_aligned4}};
  int64_t p[2][3] = {{64, 9, 7}, {40, 6, 5}}; /* 40: groups of 16 and 32 run past the row */
  for (int k = 0; k < 2; ++k) run_variants(env, kb, p[k], ref_stencil3d, v, 2);
  for (int k = 0; k < 2; ++k) {
    fcl_kbuilder *vk = NULL;
    CHECK_OK(fcl_kbuilder_copy(kb, &vk));
    v[k].apply(vk);
    char *src = NULL;
    CHECK_OK(fcl_kbuilder_generate(vk, &src));
    CHECKF(src && strstr(src, "aligned") && strstr(src, ", 1), FCL_LANE(u_blk") &&
               strstr(src, ") ? *(") && strstr(src, "the lanes inside") && !strstr(src, "vload"),
           "%s: expected blocks, shuffles, tested edge blocks and masked stores:\n%s", v[k].name,
           src ? src : "");
    free(src);
    fcl_kbuilder_destroy(&vk);
  }
  fcl_kbuilder_destroy(&kb);
}

static void stencil3d_tests(kb_env *env, fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("laplace3d", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "nx"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "ny"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "nz"));
  CHECK_OK(fcl_kbuilder_add_scalar(kb, "a", t));
  CHECK_OK(fcl_kbuilder_add_array(kb, "u", t, "nz, ny, nx"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", t, "nz, ny, nx"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [k, j, i]: 1 <= k < nz - 1 and 1 <= j < ny - 1 and "
                                       "1 <= i < nx - 1 }"));
  CHECK_OK(fcl_kbuilder_add_instructions(
      kb, "out[k, j, i] = a * u[k, j, i] + u[k, j, i - 1] + u[k, j, i + 1] + u[k, j - 1, i]"
          " + u[k, j + 1, i] + u[k - 1, j, i] + u[k + 1, j, i]"));
  static const variant v[] = {{"tiles 32x4, k on groups", v_s3_tiles},
                              {"tiles 32x4, k on groups, prefetch", v_s3_prefetch},
                              {"tiles 16x8 marching in k, prefetch", v_s3_march},
                              {"aligned vec 2, 4 planes per item", v_s3_aligned2},
                              {"aligned vec 4, 4 planes per item", v_s3_aligned4},
                              {"aligned vec 2, prefetch", v_s3_aligned_prefetch},
                              {"streamed along k, 4 planes per item", v_s3_stream},
                              {"streamed along k, 16 unrolled planes", v_s3_stream_unr},
                              {"aligned vec 2, streamed along k", v_s3_stream_vec}};
  int64_t p[3] = {37, 21, 13};
  run_variants(env, kb, p, ref_stencil3d, v, sizeof v / sizeof *v);
  int64_t even[3] = {64, 9, 7}; /* whole vectors in the interior, partial ones at both edges */
  run_variants(env, kb, even, ref_stencil3d, v + 3, 2);
  block_tests(env, kb);
  /* the aligned variant branches once between vector and scalar statements */
  fcl_kbuilder *ak = NULL;
  CHECK_OK(fcl_kbuilder_copy(kb, &ak));
  v_s3_aligned4(ak);
  char *src = NULL;
  CHECK_OK(fcl_kbuilder_generate(ak, &src));
  CHECKF(src && strstr(src, "vload4(") && strstr(src, "vstore4(") && strstr(src, "} else {"),
         "aligned vec 4 stencil should have a vector path and a scalar one:\n%s", src ? src : "");
  free(src);
  fcl_kbuilder_destroy(&ak);
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- two arrays streamed along k, and a private value ---------------- */

/* Arrays a, u, v (read) and out (written), all of one shape. */
static void add_a_u_v_out(fcl_kbuilder *kb, fcl_dtype t, const char *shape) {
  static const char *names[] = {"a", "u", "v", "out"};
  for (int i = 0; i < 4; ++i) CHECK_OK(fcl_kbuilder_add_array(kb, names[i], t, shape));
}

/* out = a + (u[k-1] - u[k+1]) + v[k-1] v[k+1], a read into a private value first: streaming u
 * and v must keep that value's writer in the same loop as its reader (scheduled apart, the
 * reader saw the last plane's value). */
static void ref_stream2(kb_data *d, const int64_t *p) {
  int64_t nx = p[0], ny = p[1], nz = p[2];
  const double *a = d->data[0], *u = d->data[1], *v = d->data[2];
  for (int64_t k = 1; k < nz - 1; ++k)
    for (int64_t j = 0; j < ny; ++j)
      for (int64_t i = 0; i < nx; ++i) {
        int64_t at = (k * ny + j) * nx + i, up = at + nx * ny, down = at - nx * ny;
        d->data[3][at] = a[at] + (u[down] - u[up]) + v[down] * v[up];
      }
}
static void v_stream2(fcl_kbuilder *kb, int64_t planes) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 4, "g.1", "l.1"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "k", planes, "g.2", NULL));
  CHECK_OK(fcl_kbuilder_stream_iname(kb, "k_inner", "u"));
  CHECK_OK(fcl_kbuilder_stream_iname(kb, "k_inner", "v"));
}
static void v_stream2_4(fcl_kbuilder *kb) { v_stream2(kb, 4); }
static void v_stream2_16(fcl_kbuilder *kb) { v_stream2(kb, 16); }

static void stream2_tests(kb_env *env, fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("stream2", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "nx"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "ny"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "nz"));
  add_a_u_v_out(kb, t, "nz, ny, nx");
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [k, j, i]: 1 <= k < nz - 1 and 0 <= j < ny and "
                                       "0 <= i < nx }"));
  CHECK_OK(fcl_kbuilder_add_instructions(
      kb, "<> c = a[k, j, i]  {id=center, dep=}\n"
          "out[k, j, i] = c + (u[k - 1, j, i] - u[k + 1, j, i]) + v[k - 1, j, i] * v[k + 1, j, i]"
          "  {dep=center}"));
  static const variant v[] = {{"sequential", v_none},
                              {"u, v streamed, 4 planes per group", v_stream2_4},
                              {"u, v streamed, 16 planes per group (partial)", v_stream2_16}};
  int64_t p[3] = {21, 9, 13};
  run_variants(env, kb, p, ref_stream2, v, sizeof v / sizeof *v);
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- private values of vector lanes ---------------- */

/* out = c + f with c = a and f = u[i-1] v[i-1] - u[i+1] v[i+1] held in private values first (as
 * the finite-difference stages write them): each vector lane must keep its own. */
static void ref_lanes(kb_data *d, const int64_t *p) {
  int64_t nx = p[0], ny = p[1], nz = p[2];
  const double *a = d->data[0], *u = d->data[1], *v = d->data[2];
  for (int64_t k = 0; k < nz; ++k)
    for (int64_t j = 0; j < ny; ++j)
      for (int64_t i = 1; i < nx - 1; ++i) {
        int64_t at = (k * ny + j) * nx + i;
        d->data[3][at] = a[at] + (u[at - 1] * v[at - 1] - u[at + 1] * v[at + 1]);
      }
}
static void v_lanes(fcl_kbuilder *kb, int64_t vec, bool align) {
  if (align) CHECK_OK(fcl_kbuilder_align_iname(kb, "i", vec));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 8 * vec, "g.0", NULL));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i_inner", vec, "l.0", "vec"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 4, "g.1", "l.1"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "k:g.2"));
}
static void v_lanes_ilp(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 8 * 4, "g.0", NULL));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i_inner", 4, "l.0", "ilp"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "k:g.2"));
}
static void v_lanes2(fcl_kbuilder *kb) { v_lanes(kb, 2, false); }
static void v_lanes4(fcl_kbuilder *kb) { v_lanes(kb, 4, false); }
static void v_lanes2_aligned(fcl_kbuilder *kb) { v_lanes(kb, 2, true); }

static void lanes_tests(kb_env *env, fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("lanes", &kb));
  add_a_u_v_out(kb, t, "5, 6, 20");
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [k, j, i]: 0 <= k < 5 and 0 <= j < 6 and "
                                       "1 <= i < 19 }"));
  CHECK_OK(fcl_kbuilder_add_instructions(
      kb, "<> c = a[k, j, i]  {dep=}\n"
          "<> f = u[k, j, i - 1] * v[k, j, i - 1] - u[k, j, i + 1] * v[k, j, i + 1]  {dep=}\n"
          "out[k, j, i] = c + f\n"));
  static const variant v[] = {{"scalar", v_none},
                              {"vec 2", v_lanes2},
                              {"vec 4", v_lanes4},
                              {"vec 2, aligned", v_lanes2_aligned},
                              {"ilp 4", v_lanes_ilp}};
  int64_t p[3] = {20, 6, 5};
  run_variants(env, kb, p, ref_lanes, v, sizeof v / sizeof *v);
  fcl_kbuilder_destroy(&kb);
}

/* A temporary c holding one lane at a time, in orders where a vector statement would read
 * another lane's value: its reader listed before its writer; a vector statement scheduled
 * between writer and reader; a C block writing it after an array. out = u + a, and v = 2 a in
 * the second (v = 0 in the third). */
static void ref_lanes_order(kb_data *d, const int64_t *p, double v) {
  const double *a = d->data[0], *u = d->data[1];
  for (int64_t k = 0; k < p[2]; ++k)
    for (int64_t j = 0; j < p[1]; ++j)
      for (int64_t i = 1; i < p[0] - 1; ++i) {
        int64_t at = (k * p[1] + j) * p[0] + i;
        d->data[3][at] = u[at] + a[at];
        if (v >= 0) d->data[2][at] = v * a[at];
      }
}
static void ref_reader_first(kb_data *d, const int64_t *p) { ref_lanes_order(d, p, -1); }
static void ref_between(kb_data *d, const int64_t *p) { ref_lanes_order(d, p, 2); }
static void ref_c_block(kb_data *d, const int64_t *p) { ref_lanes_order(d, p, 0); }

static void lanes_order_tests(kb_env *env, fcl_dtype t) {
  static const char *const text[3] = {
      "out[k, j, i] = c + a[k, j, i]\nc = u[k, j, i]\n",
      "c = u[k, j, i]  {id=wc}\nv[k, j, i] = 2 * a[k, j, i]  {id=x, dep=wc}\n"
      "out[k, j, i] = c + a[k, j, i]  {dep=x:wc}\n",
      "out[k, j, i] = c + a[k, j, i]  {dep=blk}\n"};
  static const char *const name[3] = {"reader_first", "vector_between", "c_block"};
  const kb_reference ref[3] = {ref_reader_first, ref_between, ref_c_block};
  const bool f64 = t == FCL_FLOAT64;
  for (int c = 0; c < 3; ++c) {
    fcl_kbuilder *kb = NULL;
    CHECK_OK(fcl_kbuilder_create(name[c], &kb));
    add_a_u_v_out(kb, t, "5, 6, 20");
    CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [k, j, i]: 0 <= k < 5 and 0 <= j < 6 and "
                                         "1 <= i < 19 }"));
    CHECK_OK(fcl_kbuilder_add_temporary(kb, "c", t, FCL_TEMP_PRIVATE, NULL));
    if (c == 2)
      CHECK_OK(fcl_kbuilder_add_c_block(
          kb,
          f64 ? "v[(k * 6 + j) * 20 + i] = 0.0; c = u[(k * 6 + j) * 20 + i];"
              : "v[(k * 6 + j) * 20 + i] = 0.0f; c = u[(k * 6 + j) * 20 + i];",
          "v[k, j, i], c", "u[k, j, i]", "{id=blk}"));
    CHECK_OK(fcl_kbuilder_add_instructions(kb, text[c]));
    const variant v[] = {
        {"scalar", v_none}, {"vec 4", v_lanes4}, {"vec 2, aligned", v_lanes2_aligned}};
    int64_t p[3] = {20, 6, 5};
    run_variants(env, kb, p, ref[c], v, sizeof v / sizeof *v);
    fcl_kbuilder_destroy(&kb);
  }
}

/* ---------------- transpose ---------------- */

static void ref_transpose(kb_data *d, const int64_t *p) {
  int64_t n = p[0], m = p[1];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) d->data[1][i * m + j] = d->data[0][j * n + i];
}
static void ref_transpose_two(kb_data *d, const int64_t *p) {
  int64_t n = p[0], m = p[1];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      d->data[1][i * m + j] = d->data[0][j * n + i];
      d->data[3][i * m + j] = d->data[2][j * n + i];
    }
}
static void v_tr_prefetch(fcl_kbuilder *kb, int pad) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 16, "g.1", "l.1"));
  CHECK_OK(fcl_kbuilder_add_prefetch(
      kb, (fcl_prefetch){.array = "a", .sweep = "i_inner, j_inner", .pad = pad}));
}
static void v_tr_pad0(fcl_kbuilder *kb) { v_tr_prefetch(kb, 0); }
static void v_tr_pad1(fcl_kbuilder *kb) { v_tr_prefetch(kb, 1); }
static void v_tr_plain(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 16, "g.1", "l.1"));
}

static void transpose_tests(kb_env *env, fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("transpose", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "a", t, "m, n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", t, "n, m"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i, j]: 0 <= i < n and 0 <= j < m }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "out[i, j] = a[j, i]"));
  static const variant v[] = {{"16x16 direct", v_tr_plain},
                              {"16x16 prefetch", v_tr_pad0},
                              {"16x16 prefetch, padded", v_tr_pad1}};
  int64_t p[2] = {50, 35};
  run_variants(env, kb, p, ref_transpose, v, sizeof v / sizeof *v);
  fcl_kbuilder_destroy(&kb);

  /* the same with an explicit local tile: the barrier between load and store is inserted */
  CHECK_OK(fcl_kbuilder_create("transpose_tile", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "a", t, "m, n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", t, "n, m"));
  CHECK_OK(fcl_kbuilder_add_temporary(kb, "tile", t, FCL_TEMP_LOCAL, "16, 17"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [bi, bj, li, lj]: 0 <= bi < n / 16 and "
                                       "0 <= bj < m / 16 and 0 <= li < 16 and 0 <= lj < 16 }"));
  CHECK_OK(fcl_kbuilder_add_instructions(
      kb, "tile[lj, li] = a[bj * 16 + lj, bi * 16 + li]         {id=load}\n"
          "out[bi * 16 + lj, bj * 16 + li] = tile[li, lj]       {id=store}"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "bi:g.0, bj:g.1, li:l.0, lj:l.1"));
  char *src = NULL;
  CHECK_OK(fcl_kbuilder_generate(kb, &src));
  CHECKF(src && strstr(src, "FCL_BARRIER_LOCAL()"), "no barrier:\n%s", src ? src : "");
  free(src);
  int64_t q[2] = {48, 32};
  kb_check(env, kb, q, ref_transpose, "explicit local tile");
  fcl_kbuilder_destroy(&kb);

  /* one local tile reused for a second array: a barrier before it is overwritten too */
  CHECK_OK(fcl_kbuilder_create("transpose_two", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "a", t, "m, n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", t, "n, m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "b", t, "m, n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out2", t, "n, m"));
  CHECK_OK(fcl_kbuilder_add_temporary(kb, "tile", t, FCL_TEMP_LOCAL, "16, 17"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [bi, bj, li, lj]: 0 <= bi < n / 16 and "
                                       "0 <= bj < m / 16 and 0 <= li < 16 and 0 <= lj < 16 }"));
  CHECK_OK(fcl_kbuilder_add_instructions(
      kb, "tile[lj, li] = a[bj * 16 + lj, bi * 16 + li]         {id=load}\n"
          "out[bi * 16 + lj, bj * 16 + li] = tile[li, lj]       {id=store}\n"
          "tile[lj, li] = b[bj * 16 + lj, bi * 16 + li]         {id=load2, dep=store}\n"
          "out2[bi * 16 + lj, bj * 16 + li] = tile[li, lj]      {id=store2, dep=load2}"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "bi:g.0, bj:g.1, li:l.0, lj:l.1"));
  CHECK_OK(fcl_kbuilder_generate(kb, &src));
  CHECKF(src && strstr(src, "earlier readers are done"), "no barrier before the reuse:\n%s",
         src ? src : "");
  free(src);
  kb_check(env, kb, q, ref_transpose_two, "reused local tile");
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- reductions ---------------- */

static void ref_reduce(kb_data *d, const int64_t *p) {
  int64_t n = p[0], m = p[1];
  for (int64_t i = 0; i < n; ++i) {
    double s = 0, mx = -INFINITY;
    for (int64_t j = 0; j < m; ++j) {
      s += d->data[0][i * m + j];
      mx = fmax(mx, d->data[0][i * m + j]);
    }
    d->data[1][i] = s;
    d->data[2][i] = mx;
  }
}
static void v_red_rows(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 32, "g.0", "l.0"));
}
static void v_red_unr(fcl_kbuilder *kb) {
  v_red_rows(kb);
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 8, NULL, "unr"));
}

static void reduction_tests(kb_env *env, fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("row_reduce", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "a", t, "n, m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "total", t, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "largest", t, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i, j]: 0 <= i < n and 0 <= j < m }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "total[i] = sum(j, a[i, j])\n"
                                             "largest[i] = max(j, a[i, j])"));
  static const variant v[] = {{"sequential", v_none},
                              {"rows on l.0", v_red_rows},
                              {"rows on l.0, j unrolled by 8 with remainder", v_red_unr}};
  int64_t p[2] = {75, 37};
  run_variants(env, kb, p, ref_reduce, v, sizeof v / sizeof *v);
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- matrix-vector ---------------- */

static void ref_matvec(kb_data *d, const int64_t *p) {
  int64_t n = p[0], m = p[1];
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t j = 0; j < m; ++j) s += d->data[0][i * m + j] * d->data[1][j];
    d->data[2][i] = s;
  }
}
static void v_mv_rows(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 64, "g.0", "l.0"));
}
static void v_mv_ilp(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 128, "g.0", NULL));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i_inner", 4, "l.0", "ilp"));
}
static void v_mv_unr(fcl_kbuilder *kb) {
  v_mv_rows(kb);
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 4, NULL, "unr"));
}

static void matvec_tests(kb_env *env, fcl_dtype t) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("matvec", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "A", t, "n, m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "x", t, "m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "y", t, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i, j]: 0 <= i < n and 0 <= j < m }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "y[i] = sum(j, A[i, j] * x[j])"));
  static const variant v[] = {
      {"rows on l.0", v_mv_rows}, {"ilp 4", v_mv_ilp}, {"j unrolled by 4", v_mv_unr}};
  int64_t p[2] = {300, 97};
  run_variants(env, kb, p, ref_matvec, v, sizeof v / sizeof *v);
  /* x in local memory: the sweep covers the whole reduction, so m must be fixed */
  CHECK_OK(fcl_kbuilder_fix_parameters(kb, "m=97"));
  v_mv_rows(kb);
  CHECK_OK(fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "x", .sweep = "j"}));
  CHECK(fcl_kbuilder_num_params(kb) == 1);
  kb_check(env, kb, p, ref_matvec, "rows on l.0, x prefetched");
  fcl_kbuilder_destroy(&kb);
}

static void typed_tests(kb_env *env, fcl_dtype type) {
  map_tests(env, type);
  rules_tests(env, type);
  two_sums_tests(env, type);
  stencil2d_tests(env, type);
  tagged_tests(env, type);
  stencil3d_tests(env, type);
  stream2_tests(env, type);
  lanes_tests(env, type);
  lanes_order_tests(env, type);
  transpose_tests(env, type);
  reduction_tests(env, type);
  matvec_tests(env, type);
}

int main(void) { return kb_run_typed(typed_tests); }
