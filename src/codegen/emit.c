/* OpenCL C generation: hardware axes, loop nests, guards, reductions, prefetch copies,
 * barriers and vectorized instructions, from a checked working copy of the builder. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "emit_impl.h"

/* ---------------- printing ---------------- */

static bool print_hook(void *user, fcl__str *out, const fcl__expr *e);

void fcl__emit_print(emitter *em, const fcl__expr *e) {
  fcl__expr_print(&em->out, e, print_hook, em);
}

void fcl__emit_print_to(emitter *em, fcl__str *out, const fcl__expr *e) {
  fcl__expr_print(out, e, print_hook, em);
}

/* Print an index expression built here (folded on a copy). */
void fcl__emit_print_index(emitter *em, fcl__expr *e) {
  e = fcl__expr_fold(e);
  if (!e) {
    em->out.failed = true;
    return;
  }
  fcl__emit_print(em, e);
  fcl__expr_free(e);
}

/* Whether array v has more elements than an int indexes: its extents known and their product
 * past INT_MAX (a parametric extent: int, as documented in codegen.h). */
static bool needs_long_index(const fcl_kbuilder *kb, const fcl__var *v) {
  int64_t count = 1;
  for (size_t d = 0; d < v->ndim; ++d) {
    int64_t extent;
    if (!fcl__kb_const(kb, v->shape[d], &extent)) return false;
    if (__builtin_mul_overflow(count, extent, &count)) return true;
  }
  return count > INT_MAX;
}

/* idx cast to long (NULL stays NULL). */
static fcl__expr *to_long(fcl__expr *idx) {
  fcl__expr *cast = idx ? fcl__expr_new(E_CAST, "long", 1) : NULL;
  if (cast)
    cast->kids[0] = idx;
  else
    fcl__expr_free(idx);
  return cast;
}

/* Linear C-order index of a global array access; in long, every index but the last cast, where
 * the array has more than INT_MAX elements (products of int inames would overflow). Not only
 * the outer one: folding takes a cast of a constant index for a plain number, and then the first
 * non-constant index must carry the width. */
fcl__expr *fcl__emit_linear_index(const fcl_kbuilder *kb, const fcl__var *v,
                                  const fcl__expr *access) {
  const bool wide = needs_long_index(kb, v) && v->ndim > 1;
  fcl__expr *idx = fcl__expr_clone(access->kids[0]);
  if (wide) idx = to_long(idx);
  for (size_t d = 1; idx && d < v->ndim; ++d) {
    fcl__expr *next = fcl__expr_clone(access->kids[d]);
    if (wide && d + 1 < v->ndim) next = to_long(next);
    idx = fcl__expr_binary("+", fcl__expr_binary("*", idx, fcl__expr_clone(v->shape[d])), next);
  }
  return idx;
}

bool fcl__emit_depends_on(const emitter *em, const fcl__expr *e, const char *leaf) {
  char *leaves[FCL__MAX_LEAVES];
  size_t n = 0;
  fcl__kb_leaf_inames(em->kb, e, leaves, &n, FCL__MAX_LEAVES);
  return in_list((const char *const *)leaves, n, leaf);
}

static bool print_hook(void *user, fcl__str *out, const fcl__expr *e) {
  emitter *em = user;
  const fcl_kbuilder *kb = em->kb;
  if ((e->kind == E_BINARY || e->kind == E_CALL || e->kind == E_TERNARY) &&
      fcl__emit_complex_node(em, out, e))
    return true;
  switch (e->kind) {
    case E_NUM:
      if (em->literals_float && fcl__expr_is_float_literal(e)) {
        char last = e->text[strlen(e->text) - 1];
        if (last != 'f' && last != 'F') {
          fcl__str_printf(out, "%sf", e->text);
          return true;
        }
      }
      return false;
    case E_VAR: {
      const fcl__iname *in = fcl__kb_iname(kb, e->text);
      if (in && in->derived) {
        fcl__str_printf(out, "(");
        fcl__expr_print(out, in->value, print_hook, em);
        fcl__str_printf(out, ")");
        return true;
      }
      if (in && em->vec_lane >= 0 && em->vec && !strcmp(in->name, em->vec)) {
        fcl__expr *lane = fcl__expr_fold(
            fcl__expr_binary("+", fcl__expr_clone(in->lo), fcl__expr_num(em->vec_lane)));
        if (lane)
          fcl__expr_print(out, lane, print_hook, em);
        else
          out->failed = true;
        fcl__expr_free(lane);
        return true;
      }
      const fcl__var *v = fcl__kb_var(kb, e->text);
      if (v && v->kind == V_PARAM && v->fixed) {
        fcl__str_printf(out, "%lld", (long long)v->value);
        return true;
      }
      return false;
    }
    case E_SUBSCRIPT: {
      const fcl__var *v = fcl__kb_var(kb, e->text);
      if (em->vec && em->vec_blocks && em->vec_lane < 0 && fcl__emit_depends_on(em, e, em->vec)) {
        fcl__emit_print_block_lanes(em, e);
        return true;
      }
      if (em->vec && em->vec_lane < 0 && fcl__emit_depends_on(em, e, em->vec)) {
        fcl__str_printf(out, "vload%d(0, ", em->vec_width);
        em->vec_lane = 0;
        fcl__emit_print_pointer(em, e);
        em->vec_lane = -1;
        fcl__str_printf(out, ")");
        return true;
      }
      size_t pf = fcl__kb_prefetch_of_access(kb, e);
      if (pf != SIZE_MAX) {
        fcl__str_printf(out, "%s[", kb->prefetches[pf].fetch);
        fcl__emit_print_index(em, fcl__prefetch_offset(kb, &em->plans[pf], e));
        fcl__str_printf(out, "]");
        return true;
      }
      if (v->kind == V_ARRAY) {
        fcl__str_printf(out, "%s[", v->name);
        fcl__emit_print_index(em, fcl__emit_linear_index(kb, v, e));
        fcl__str_printf(out, "]");
        return true;
      }
      fcl__str_printf(out, "%s", v->name);
      for (size_t d = 0; d < e->nkids; ++d) {
        fcl__str_printf(out, "[");
        fcl__expr_print(out, e->kids[d], print_hook, em);
        fcl__str_printf(out, "]");
      }
      return true;
    }
    case E_REDUCE: fcl__str_printf(out, "acc_%d", e->id); return true;
    default: return false;
  }
}

static bool blocks_apply(emitter *em, const fcl__item *it);

static fcl_status build_insn_item(emitter *em, size_t index, fcl__item *it) {
  fcl_kbuilder *kb = em->kb;
  const fcl__insn *in = &kb->insns[index];
  char label[512];
  fcl__insn_label(in, label, sizeof label);
  it->insn = in;
  it->id = in->id;
  /* inames: given or used, plus (when inferred) those shared by the writers of the private
   * temporaries it reads, but those that index the temporary (wt[wi] = ... holds a value per
   * wi: its readers need not run inside wi) */
  const char *names[32];
  size_t nn = 0;
  for (size_t i = 0; i < in->ninames && nn < 32; ++i) names[nn++] = in->inames[i];
  if (!in->inames_given) {
    for (size_t w = 0; w < kb->ninsns; ++w) {
      const fcl__insn *wr = &kb->insns[w];
      const fcl__var *t = fcl__kb_var(kb, wr->lhs->text);
      if (w == index || t->kind != V_TEMP || t->scope != FCL_TEMP_PRIVATE ||
          !fcl__expr_uses(in->rhs, t->name))
        continue;
      for (size_t k = 0; k < wr->ninames && nn < 32; ++k)
        if (!in_list(names, nn, wr->inames[k]) && !fcl__expr_uses(wr->lhs, wr->inames[k])) {
          /* only inames every writer of t has */
          bool all = true;
          for (size_t o = 0; o < kb->ninsns; ++o)
            if (o != index && !strcmp(kb->insns[o].lhs->text, t->name))
              all = all && in_list((const char *const *)kb->insns[o].inames, kb->insns[o].ninames,
                                   wr->inames[k]);
          if (all) names[nn++] = wr->inames[k];
        }
    }
  }
  char *leaves[FCL__MAX_LEAVES];
  size_t nl = 0;
  for (size_t i = 0; i < nn; ++i) nl = leaves_of_name(kb, names[i], leaves, nl);
  /* every iname used must be one of its inames */
  char *used[FCL__MAX_LEAVES];
  size_t nu = 0;
  char *red[FCL__MAX_LEAVES];
  size_t nr = 0;
  fcl__kb_reduction_leaves(kb, in->rhs, red, &nr);
  fcl__kb_leaf_inames(kb, in->lhs, used, &nu, FCL__MAX_LEAVES);
  fcl__kb_leaf_inames(kb, in->rhs, used, &nu, FCL__MAX_LEAVES);
  for (size_t u = 0; u < nu; ++u)
    if (!in_list((const char *const *)leaves, nl, used[u]) &&
        !in_list((const char *const *)red, nr, used[u]))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': %s uses iname '%s', which is not "
                       "among its inames",
                       kb->name, label, used[u]);
  for (size_t r = 0; r < nr; ++r) {
    const fcl__iname *ri = fcl__kb_iname(kb, red[r]);
    char tag[16];
    if (in_list((const char *const *)leaves, nl, red[r]))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': %s: '%s' is both a reduction "
                       "iname and an iname of the instruction",
                       kb->name, label, red[r]);
    if (is_hw(ri))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': %s: reduction iname '%s' is tagged "
                       "%s; parallel reductions are not supported (tag it for or unr)",
                       kb->name, label, red[r], fcl__tag_text(ri, tag, sizeof tag));
  }
  /* one iname per hardware axis, at most one vector iname */
  const char *vec = NULL;
  for (size_t a = 0; a < nl; ++a) {
    const fcl__iname *ia = fcl__kb_iname(kb, leaves[a]);
    if (ia->tag == TAG_VEC) {
      if (vec)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "kernel '%s': %s: inames '%s' and '%s' are "
                         "both tagged vec",
                         kb->name, label, vec, ia->name);
      vec = ia->name;
    }
    for (size_t b = a + 1; b < nl && is_hw(ia); ++b) {
      const fcl__iname *ib = fcl__kb_iname(kb, leaves[b]);
      char tag[16];
      if (ib->tag == ia->tag && ib->axis == ia->axis)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "kernel '%s': %s: inames '%s' and '%s' are "
                         "both tagged %s",
                         kb->name, label, ia->name, ib->name, fcl__tag_text(ia, tag, sizeof tag));
    }
  }
  it->nleaves = nl;
  memcpy(it->leaves, leaves, nl * sizeof *leaves);
  return FCL_OK;
}

/* Vectorization and loops, once every item exists (a reader may come before its writer). */
static void vectorize_items(emitter *em) {
  for (size_t i = 0; i < em->nitems; ++i) {
    fcl__item *it = &em->items[i];
    if (!it->insn) continue;
    const char *vec = NULL;
    for (size_t a = 0; a < it->nleaves && !vec; ++a)
      if (fcl__kb_iname(em->kb, it->leaves[a])->tag == TAG_VEC) vec = it->leaves[a];
    it->vec = vec && fcl__emit_can_vectorize(em, it, vec, &it->vec_lanes) ? vec : NULL;
    if (!it->vec) it->vec_lanes = false;
    it->vec_blocks = it->vec && blocks_apply(em, it);
    fcl__emit_item_loops(em, it, vec);
  }
}

static fcl_status build_items(emitter *em) {
  fcl_kbuilder *kb = em->kb;
  em->plans = calloc(kb->nprefetches ? kb->nprefetches : 1, sizeof *em->plans);
  em->items = calloc(kb->ninsns + kb->nprefetches + 1, sizeof *em->items);
  if (!em->plans || !em->items) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "generate");
  for (size_t p = 0; p < kb->nprefetches; ++p) {
    FCL_TRY(fcl__prefetch_plan_make(kb, p, &em->plans[p]));
    fcl__item *it = &em->items[em->nitems++];
    it->plan = &em->plans[p];
    it->id = kb->prefetches[p].fetch;
    it->nloops = em->plans[p].nloops;
    memcpy(it->loops, em->plans[p].loops, it->nloops * sizeof *it->loops);
    fcl__emit_sort_loops(em, it->loops, it->nloops, NULL);
  }
  for (size_t i = 0; i < kb->ninsns; ++i) FCL_TRY(build_insn_item(em, i, &em->items[em->nitems++]));
  vectorize_items(em);
  return fcl__items_resolve_deps(kb, em->items, em->nitems);
}

/* ---------------- statements ---------------- */

static void line(emitter *em, const char *text) {
  fcl__str_indent(&em->out, em->depth);
  fcl__str_printf(&em->out, "%s\n", text);
}

static void open_loop(emitter *em, const char *leaf) {
  const fcl__iname *in = fcl__kb_iname(em->kb, leaf);
  if (in->tag == TAG_UNR || in->tag == TAG_ILP || in->tag == TAG_VEC) line(em, "#pragma unroll");
  fcl__str_indent(&em->out, em->depth);
  fcl__str_printf(&em->out, "for (int %s = ", in->name);
  fcl__emit_print(em, in->lo);
  fcl__str_printf(&em->out, "; %s < ", in->name);
  fcl__emit_print(em, in->hi);
  fcl__str_printf(&em->out, "; ++%s) {\n", in->name);
  em->depth++;
}

static void close_block(emitter *em) {
  em->depth--;
  line(em, "}");
}

/* The guards of iname d (remainder, aligned lower bound), joined to em->out. */
static void print_guard(emitter *em, const fcl__iname *d) {
  fcl__expr v = {.kind = E_VAR, .text = d->name};
  if (fcl__emit_guarded_derived(em, d)) {
    fcl__str_printf(&em->out, "%s", em->out.len ? " && " : "");
    fcl__emit_print(em, &v);
    fcl__str_printf(&em->out, " < ");
    fcl__emit_print(em, d->hi);
  }
  if (d->min) {
    fcl__str_printf(&em->out, "%s", em->out.len ? " && " : "");
    fcl__emit_print(em, &v);
    fcl__str_printf(&em->out, " >= ");
    fcl__emit_print(em, d->min);
  }
}

/* Guards of the inames whose leaves are all in set and (when need is given) touch need, but
 * those involving skip (a vector iname whose lanes are known inside); hardware guards for
 * set's local/group inames running short of their axis. */
static void guards(emitter *em, const char *const *set, size_t nset, const char *const *need,
                   size_t nneed, bool hw, const char *skip, fcl__str *cond) {
  const fcl_kbuilder *kb = em->kb;
  fcl__str saved = em->out;
  em->out = *cond;
  for (size_t i = 0; i < kb->ninames; ++i) {
    const fcl__iname *d = &kb->inames[i];
    if (!fcl__emit_has_guard(em, d)) continue;
    char *lv[FCL__MAX_LEAVES];
    size_t n = leaves_of_name(kb, d->name, lv, 0);
    bool inside = n > 0, touches = !need;
    for (size_t k = 0; k < n; ++k) {
      inside = inside && in_list(set, nset, lv[k]);
      touches = touches || in_list(need, nneed, lv[k]);
    }
    if (!inside || !touches || (skip && in_list((const char *const *)lv, n, skip))) continue;
    print_guard(em, d);
  }
  for (size_t k = 0; hw && k < nset; ++k) {
    const fcl__iname *in = fcl__kb_iname(kb, set[k]);
    if (!is_hw(in)) continue;
    bool short_axis;
    int64_t ext = 0;
    fcl__expr *e = fcl__expr_fold(
        fcl__expr_binary("-", fcl__expr_clone(in->hi), fcl__expr_clone(in->lo)));
    if (in->tag == TAG_L)
      short_axis = !fcl__kb_const(kb, e, &ext) || ext < em->axes.local[in->axis];
    else
      short_axis = em->axes.groups[in->axis] && em->axes.groups[in->axis]->kind == E_CALL &&
                   !strcmp(em->axes.groups[in->axis]->text, "max");
    fcl__expr_free(e);
    if (!short_axis) continue;
    if (em->out.len) fcl__str_printf(&em->out, " && ");
    fcl__str_printf(&em->out, "%s < ", in->name);
    fcl__emit_print(em, in->hi);
  }
  *cond = em->out;
  em->out = saved;
}

static void number_reductions(emitter *em, fcl__expr *e) {
  if (e->kind == E_REDUCE) e->id = em->next_acc++;
  for (size_t i = 0; i < e->nkids; ++i) number_reductions(em, e->kids[i]);
}

static void emit_reductions(emitter *em, const fcl__item *it, const fcl__expr *e, const char **red,
                            size_t *nred);

/* acc = neutral; loops over the reduction's leaves { nested reductions; acc = acc op body; } */
static void emit_reduce(emitter *em, const fcl__item *it, const fcl__expr *e, const char **red,
                        size_t *nred) {
  const fcl_kbuilder *kb = em->kb;
  fcl_dtype t = fcl__kb_type_of(kb, e->kids[0]);
  bool real = t == FCL_FLOAT32 || t == FCL_FLOAT64;
  const char *neutral = !strcmp(e->text, "sum")   ? "0"
                        : !strcmp(e->text, "max") ? (real ? "-INFINITY" : "INT_MIN")
                                                  : (real ? "INFINITY" : "INT_MAX");
  fcl__str_indent(&em->out, em->depth);
  if (fcl__dtype_complex(t))
    fcl__str_printf(&em->out, "%s acc_%d = FCL_SPLAT(%s, 0);\n", type_name(t), e->id, type_name(t));
  else
    fcl__str_printf(&em->out, "%s acc_%d = %s;\n", type_name(t), e->id, neutral);
  char *lv[FCL__MAX_LEAVES];
  size_t n = leaves_of_name(kb, e->iname, lv, 0);
  const char *loops[FCL__MAX_LEAVES];
  memcpy(loops, lv, n * sizeof *lv);
  fcl__emit_sort_loops(em, loops, n, NULL);
  for (size_t k = 0; k < n; ++k) open_loop(em, loops[k]);
  size_t base = *nred;
  for (size_t k = 0; k < n && *nred < FCL__MAX_LEAVES; ++k) red[(*nred)++] = loops[k];
  /* remainder guards that involve the reduction inames */
  const char *set[2 * FCL__MAX_LEAVES];
  size_t nset = 0;
  for (size_t k = 0; k < it->nleaves; ++k) set[nset++] = it->leaves[k];
  for (size_t k = 0; k < *nred; ++k) set[nset++] = red[k];
  fcl__str cond = {0};
  guards(em, set, nset, red + base, *nred - base, false, NULL, &cond);
  bool guarded = cond.len > 0;
  if (guarded) {
    fcl__str_indent(&em->out, em->depth);
    fcl__str_printf(&em->out, "if (%s) {\n", cond.s);
    em->depth++;
  }
  free(cond.s);
  emit_reductions(em, it, e->kids[0], red, nred);
  fcl__str_indent(&em->out, em->depth);
  if (!strcmp(e->text, "sum"))
    fcl__str_printf(&em->out, "acc_%d += ", e->id);
  else
    fcl__str_printf(&em->out, "acc_%d = %s(acc_%d, ", e->id, e->text, e->id);
  fcl__emit_print(em, e->kids[0]);
  fcl__str_printf(&em->out, "%s;\n", !strcmp(e->text, "sum") ? "" : ")");
  if (guarded) close_block(em);
  for (size_t k = 0; k < n; ++k) close_block(em);
  *nred = base;
}

static void emit_reductions(emitter *em, const fcl__item *it, const fcl__expr *e, const char **red,
                            size_t *nred) {
  if (e->kind == E_REDUCE) {
    emit_reduce(em, it, e, red, nred);
    return;
  }
  for (size_t i = 0; i < e->nkids; ++i) emit_reductions(em, it, e->kids[i], red, nred);
}

/* The guards of iname d that involve the vector iname, printed with its upper bound tested at
 * lane hi_lane and its lower one at lane lo_lane (guards grow with the lane: the last lane
 * decides the upper bounds of all lanes, the first the lower ones), joined to cond. */
static void lane_guard(emitter *em, const fcl__iname *d, int hi_lane, int lo_lane, fcl__str *cond) {
  fcl__str saved = em->out;
  fcl__expr v = {.kind = E_VAR, .text = d->name};
  for (int bound = 0; bound < 2; ++bound) {
    if (bound == 0 ? !fcl__emit_guarded_derived(em, d) : !d->min) continue;
    em->out = (fcl__str){0};
    em->vec_lane = bound == 0 ? hi_lane : lo_lane;
    fcl__emit_print(em, &v);
    fcl__str_printf(&em->out, bound == 0 ? " < " : " >= ");
    fcl__emit_print(em, bound == 0 ? d->hi : d->min);
    em->vec_lane = -1;
    if (em->out.s)
      fcl__str_printf(cond, "%s%s", cond->len ? " && " : "", em->out.s);
    else
      cond->failed = true;
    free(em->out.s);
  }
  em->out = saved;
}

/* An iname with guards on the lanes of item it (see can_vectorize). */
static bool lane_guarded(const emitter *em, const fcl__item *it, const fcl__iname *d) {
  char *lv[FCL__MAX_LEAVES];
  size_t n = fcl__emit_has_guard(em, d) ? leaves_of_name(em->kb, d->name, lv, 0) : 0;
  if (!n || !in_list((const char *const *)lv, n, it->vec)) return false;
  for (size_t k = 0; k < n; ++k)
    if (!in_list(it->leaves, it->nleaves, lv[k])) return false;
  return true;
}

static void lane_guards(emitter *em, const fcl__item *it, int hi_lane, int lo_lane,
                        fcl__str *cond) {
  for (size_t i = 0; i < em->kb->ninames; ++i)
    if (lane_guarded(em, it, &em->kb->inames[i]))
      lane_guard(em, &em->kb->inames[i], hi_lane, lo_lane, cond);
}

/* Every access along the vector iname reads aligned blocks, and the store is one. */
static bool blocks_apply(emitter *em, const fcl__item *it) {
  int64_t r;
  fcl__affine f;
  em->vec = it->vec;
  em->vec_width = (int)fcl__emit_vec_width(em, it->vec);
  bool ok = fcl__emit_block_offset(em, it->insn->lhs, it->vec, em->vec_width, &r, &f) && r == 0 &&
            fcl__emit_collect_blocks(em, it->insn->rhs, it->vec_lanes);
  for (size_t b = 0; ok && b < em->nblocks; ++b) /* vector types do not convert implicitly */
    ok = em->blocks[b].dtype == fcl__kb_var(em->kb, it->insn->lhs->text)->dtype;
  fcl__emit_free_blocks(em);
  em->vec = NULL;
  return ok;
}

/* A vector instruction over aligned blocks. With guards on its lanes, one code path: it runs
 * when some lane is inside, reads the blocks (those that may lie outside under a position
 * test), and stores the whole vector or, at the edges, the lanes inside. */
static void emit_block_insn(emitter *em, const fcl__item *it) {
  const fcl__insn *in = it->insn;
  const fcl__var *target = fcl__kb_var(em->kb, in->lhs->text);
  const char *t = type_name(target->dtype);
  int w = (int)fcl__emit_vec_width(em, it->vec);
  fcl__str cond = {0};
  /* its other guards (a vector instruction has no if=, see can_vectorize) */
  guards(em, it->leaves, it->nleaves, NULL, 0, true, it->vec, &cond);
  em->vec = it->vec;
  em->vec_width = w;
  if (it->vec_lanes) lane_guards(em, it, 0, w - 1, &cond); /* some lane inside */
  fcl__str_indent(&em->out, em->depth);
  fcl__str_printf(&em->out, "/* %s: aligned %s%d blocks */\n", in->id, t, w);
  fcl__str_indent(&em->out, em->depth);
  if (cond.len)
    fcl__str_printf(&em->out, "if (%s) {\n", cond.s);
  else
    fcl__str_printf(&em->out, "{\n");
  free(cond.s);
  em->depth++;
  if (!fcl__emit_collect_blocks(em, in->rhs, it->vec_lanes)) em->out.failed = true;
  for (size_t b = 0; b < em->nblocks; ++b) {
    const struct vblock *x = &em->blocks[b];
    fcl__str_indent(&em->out, em->depth);
    fcl__str_printf(&em->out, "const %s%d %s = ", t, w, x->name);
    if (x->guard) fcl__str_printf(&em->out, "(%s) ? ", x->guard);
    fcl__str_printf(&em->out, "*(FCL_GLOBAL const %s%d *)(%s)", t, w, x->key);
    if (x->guard) fcl__str_printf(&em->out, " : FCL_SPLAT(%s%d, 0)", t, w);
    fcl__str_printf(&em->out, ";\n");
  }
  bool scalar_rhs = !fcl__emit_depends_on(em, in->rhs, it->vec);
  em->vec_blocks = true;
  fcl__str_indent(&em->out, em->depth);
  fcl__str_printf(&em->out, "const %s%d vec_result = ", t, w);
  if (scalar_rhs) fcl__str_printf(&em->out, "FCL_SPLAT(%s%d, ", t, w);
  fcl__emit_print(em, in->rhs);
  fcl__str_printf(&em->out, "%s;\n", scalar_rhs ? ")" : "");
  em->vec_blocks = false;
  fcl__str all = {0};
  if (it->vec_lanes) lane_guards(em, it, w - 1, 0, &all);
  fcl__str_indent(&em->out, em->depth);
  if (all.len) fcl__str_printf(&em->out, "if (%s) ", all.s);
  fcl__str_printf(&em->out, "*(FCL_GLOBAL %s%d *)(", t, w);
  em->vec_lane = 0;
  fcl__emit_print_pointer(em, in->lhs);
  em->vec_lane = -1;
  fcl__str_printf(&em->out, ") = vec_result;\n");
  if (all.len) {
    line(em, "else { /* the lanes inside */");
    em->depth++;
    for (int l = 0; l < w; ++l) {
      fcl__str one = {0};
      lane_guards(em, it, l, l, &one);
      fcl__str_indent(&em->out, em->depth);
      fcl__str_printf(&em->out, "if (%s) (", one.s ? one.s : "1");
      em->vec_lane = 0;
      fcl__emit_print_pointer(em, in->lhs);
      em->vec_lane = -1;
      fcl__str_printf(&em->out, ")[%d] = FCL_LANE(vec_result, %c);\n", l, "0123456789abcdef"[l]);
      free(one.s);
    }
    close_block(em);
  }
  free(all.s);
  fcl__emit_free_blocks(em);
  em->vec = NULL;
  close_block(em);
}

/* A C block in its own scope: first the derived inames (of its loops) and fixed parameters that
 * its code names, as constants, then the code line by line. */
static void emit_c_block(emitter *em, const fcl__item *it) {
  const fcl_kbuilder *kb = em->kb;
  const char *code = it->insn->code;
  line(em, "{");
  em->depth++;
  const char *done[64];
  size_t ndone = 0;
  for (const char *p = code; *p;) {
    if (!(isalpha((unsigned char)*p) || *p == '_') ||
        (p > code && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.'))) {
      p++;
      continue;
    }
    size_t len = 1;
    while (isalnum((unsigned char)p[len]) || p[len] == '_') len++;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(len < 127 ? len : 127), p);
    p += len;
    const fcl__iname *in = fcl__kb_iname(kb, name);
    const fcl__var *v = fcl__kb_var(kb, name);
    if (in_list(done, ndone, name) || ndone == 64) continue;
    if (in && in->derived) {
      char *lv[FCL__MAX_LEAVES];
      size_t n = leaves_of_name(kb, name, lv, 0), inside = 0;
      for (size_t k = 0; k < n; ++k) inside += in_list(it->leaves, it->nleaves, lv[k]);
      if (inside != n) continue; /* not one of its loops: the code's own name */
      fcl__str_indent(&em->out, em->depth);
      fcl__str_printf(&em->out, "const int %s = ", in->name);
      fcl__emit_print(em, in->value);
      fcl__str_printf(&em->out, ";\n");
      done[ndone++] = in->name;
    } else if (v && v->kind == V_PARAM && v->fixed) {
      fcl__str_indent(&em->out, em->depth);
      fcl__str_printf(&em->out, "const int %s = %lld;\n", v->name, (long long)v->value);
      done[ndone++] = v->name;
    }
  }
  for (const char *p = code; *p;) {
    size_t len = strcspn(p, "\n");
    fcl__str_indent(&em->out, em->depth);
    fcl__str_printf(&em->out, "%.*s\n", (int)len, p);
    p += len + (p[len] == '\n');
  }
  em->depth--;
  line(em, "}");
}

static void emit_insn(emitter *em, const fcl__item *it) {
  if (it->vec_blocks) {
    emit_block_insn(em, it);
    return;
  }
  const fcl__insn *in = it->insn;
  fcl__str cond = {0};
  guards(em, it->leaves, it->nleaves, NULL, 0, true, it->vec, &cond);
  for (size_t c = 0; c < in->nconds; ++c)
    fcl__str_printf(&cond, "%s%s", cond.len ? " && " : "", in->conds[c]);
  fcl__str_indent(&em->out, em->depth);
  fcl__str_printf(&em->out, "/* %s */\n", in->id);
  bool guarded = cond.len > 0;
  if (guarded) {
    fcl__str_indent(&em->out, em->depth);
    fcl__str_printf(&em->out, "if (%s) {\n", cond.s);
    em->depth++;
  }
  free(cond.s);
  if (in->code) {
    emit_c_block(em, it);
    if (guarded) close_block(em);
    return;
  }
  const char *red[FCL__MAX_LEAVES];
  size_t nred = 0;
  emit_reductions(em, it, in->rhs, red, &nred);
  fcl__str_indent(&em->out, em->depth);
  if (it->vec) {
    em->vec = it->vec;
    em->vec_width = (int)fcl__emit_vec_width(em, it->vec);
    const fcl__var *target = fcl__kb_var(em->kb, in->lhs->text);
    bool scalar_rhs = !fcl__expr_uses(in->rhs, it->vec) &&
                      !fcl__emit_depends_on(em, in->rhs, it->vec);
    fcl__str_printf(&em->out, "vstore%d(", em->vec_width);
    if (scalar_rhs)
      fcl__str_printf(&em->out, "FCL_SPLAT(%s%d, ", type_name(target->dtype), em->vec_width);
    fcl__emit_print(em, in->rhs);
    fcl__str_printf(&em->out, "%s, 0, ", scalar_rhs ? ")" : "");
    em->vec_lane = 0;
    fcl__emit_print_pointer(em, in->lhs);
    em->vec_lane = -1;
    fcl__str_printf(&em->out, ");\n");
    em->vec = NULL;
  } else {
    fcl__emit_print(em, in->lhs);
    fcl__str_printf(&em->out, " = ");
    fcl__emit_print_as(em, &em->out, in->rhs, fcl__kb_type_of(em->kb, in->lhs));
    fcl__str_printf(&em->out, ";\n");
  }
  if (guarded) close_block(em);
}

/* The cooperative copy of a prefetch, between barriers. */
static void emit_prefetch(emitter *em, const fcl__item *it, bool in_loop) {
  const fcl__prefetch_plan *p = it->plan;
  const fcl__var *a = p->array;
  int64_t wg = em->axes.local[0] * em->axes.local[1] * em->axes.local[2], total = 1;
  for (size_t d = 0; d < p->ndim; ++d) total *= p->box[d];
  fcl__str_indent(&em->out, em->depth);
  fcl__str_printf(&em->out, "/* prefetch %s into %s: a %lld-element box */\n", a->name,
                  em->kb->prefetches[p->index].fetch, (long long)total);
  if (in_loop) line(em, "FCL_BARRIER_LOCAL(); /* earlier readers are done */");
  fcl__str_indent(&em->out, em->depth);
  fcl__str_printf(&em->out,
                  "for (int f = (int)(get_local_id(0) + %lld * (get_local_id(1) + %lld * "
                  "get_local_id(2))); f < %lld; f += %lld) {\n",
                  (long long)em->axes.local[0], (long long)em->axes.local[1], (long long)total,
                  (long long)wg);
  em->depth++;
  int64_t div = 1;
  for (size_t d = p->ndim; d-- > 0;) {
    fcl__str_indent(&em->out, em->depth);
    fcl__str_printf(&em->out, "const int c%zu = f", d);
    if (div > 1) fcl__str_printf(&em->out, " / %lld", (long long)div);
    if (d > 0) fcl__str_printf(&em->out, " %% %lld", (long long)p->box[d]);
    fcl__str_printf(&em->out, ";\n");
    div *= p->box[d];
    fcl__str_indent(&em->out, em->depth);
    fcl__str_printf(&em->out, "const int g%zu = ", d);
    fcl__emit_print(em, p->base[d]);
    fcl__str_printf(&em->out, " + c%zu;\n", d);
  }
  fcl__str_indent(&em->out, em->depth);
  fcl__str_printf(&em->out, "if (");
  for (size_t d = 0; d < p->ndim; ++d) {
    fcl__str_printf(&em->out, "%s0 <= g%zu && g%zu < ", d ? " && " : "", d, d);
    fcl__emit_print(em, a->shape[d]);
  }
  fcl__str_printf(&em->out, ")\n");
  fcl__str_indent(&em->out, em->depth + 1);
  fcl__str_printf(&em->out, "%s[", em->kb->prefetches[p->index].fetch);
  for (size_t d = 0; d < p->ndim; ++d) {
    fcl__str_printf(&em->out, "%sc%zu", d ? " + " : "", d);
    if (p->stride[d] != 1) fcl__str_printf(&em->out, " * %lld", (long long)p->stride[d]);
  }
  fcl__str_printf(&em->out, "] = %s[", a->name);
  fcl__expr *g = fcl__expr_new(E_SUBSCRIPT, a->name, p->ndim);
  for (size_t d = 0; g && d < p->ndim; ++d) {
    char nm[24];
    snprintf(nm, sizeof nm, "g%zu", d);
    g->kids[d] = fcl__expr_new(E_VAR, nm, 0);
  }
  if (g) fcl__emit_print_index(em, fcl__emit_linear_index(em->kb, a, g));
  fcl__expr_free(g);
  fcl__str_printf(&em->out, "];\n");
  close_block(em);
  line(em, "FCL_BARRIER_LOCAL(); /* the copy is complete */");
}

/* ---------------- the kernel ---------------- */

static bool is_local(const fcl_kbuilder *kb, const char *name) {
  const fcl__var *v = fcl__kb_var(kb, name);
  return v && v->kind == V_TEMP && v->scope == FCL_TEMP_LOCAL;
}

/* Local memory an item reads (user local temporaries and prefetch copies). */
static bool reads_local(const fcl_kbuilder *kb, const fcl__item *it, const char *const *dirty,
                        size_t ndirty) {
  if (!it->insn) return false;
  for (size_t i = 0; i < kb->nvars; ++i)
    if (is_local(kb, kb->vars[i].name) && in_list(dirty, ndirty, kb->vars[i].name) &&
        fcl__expr_uses(it->insn->rhs, kb->vars[i].name))
      return true;
  return false;
}

static void emit_body(emitter *em, const size_t *order) {
  const fcl_kbuilder *kb = em->kb;
  const char *stack[FCL__MAX_LEAVES];
  /* per open loop: the local arrays its body writes and reads (bit i: variable i) */
  uint64_t wrote[FCL__MAX_LEAVES + 1] = {0}, read[FCL__MAX_LEAVES + 1] = {0};
  size_t depth = 0;
  const char *dirty[64], *read_since[64]; /* local arrays written / read since a barrier */
  size_t ndirty = 0, nread = 0;
  for (size_t o = 0; o < em->nitems; ++o) {
    const fcl__item *it = &em->items[order[o]];
    size_t c = 0;
    while (c < depth && c < it->nloops && !strcmp(stack[c], it->loops[c])) c++;
    while (depth > c) { /* close, with a barrier when the body reuses local memory */
      if (wrote[depth] & read[depth]) { /* an array both written and read in the loop */
        line(em, "FCL_BARRIER_LOCAL(); /* next iteration writes */");
        ndirty = nread = 0; /* it also ends the loop: everything above is visible */
      }
      close_block(em);
      depth--;
    }
    /* barriers go before the loops the item opens (once, not per iteration): the work-items
     * all run the loops they are in */
    if (reads_local(kb, it, dirty, ndirty)) {
      line(em, "FCL_BARRIER_LOCAL(); /* local writes above are visible */");
      ndirty = nread = 0;
    }
    /* the local arrays it writes (an assignment one, a C block maybe several) */
    const char *wl[FCL__MAX_LEAVES];
    size_t nwl = 0;
    for (size_t i = 0; it->insn && i < kb->nvars && nwl < FCL__MAX_LEAVES; ++i)
      if (is_local(kb, kb->vars[i].name) && fcl__insn_writes(it->insn, kb->vars[i].name))
        wl[nwl++] = kb->vars[i].name;
    bool reused = false;
    for (size_t k = 0; k < nwl; ++k) reused = reused || in_list(read_since, nread, wl[k]);
    if (reused) {
      /* the array is reused: every item must be done reading what it held */
      line(em, "FCL_BARRIER_LOCAL(); /* earlier readers are done */");
      ndirty = nread = 0;
    }
    for (; depth < it->nloops; ++depth) {
      open_loop(em, it->loops[depth]);
      stack[depth] = it->loops[depth];
      wrote[depth + 1] = read[depth + 1] = 0;
    }
    if (it->insn)
      emit_insn(em, it);
    else
      emit_prefetch(em, it, depth > 0);
    uint64_t wmask = 0, rmask = 0;
    for (size_t i = 0; it->insn && i < kb->nvars; ++i) {
      if (!is_local(kb, kb->vars[i].name)) continue;
      const uint64_t bit = i < 64 ? (uint64_t)1 << i : ~(uint64_t)0; /* beyond 64: any */
      if (fcl__insn_writes(it->insn, kb->vars[i].name)) wmask |= bit;
      if (!fcl__expr_uses(it->insn->rhs, kb->vars[i].name)) continue;
      rmask |= bit;
      if (nread < 64 && !in_list(read_since, nread, kb->vars[i].name))
        read_since[nread++] = kb->vars[i].name;
    }
    for (size_t d = 1; d <= depth; ++d) {
      wrote[d] |= wmask;
      read[d] |= rmask;
    }
    for (size_t k = 0; k < nwl; ++k)
      if (ndirty < 64 && !in_list(dirty, ndirty, wl[k])) dirty[ndirty++] = wl[k];
  }
  while (depth > 0) {
    if (wrote[depth] & read[depth]) line(em, "FCL_BARRIER_LOCAL(); /* next iteration writes */");
    close_block(em);
    depth--;
  }
}

/* The condition that every lane of the guarded vector items is inside its domain: guards are
 * affine and increasing in the lane, so the last lane decides the upper bounds and the first
 * the lower ones. Each guard is printed once, from the first item it applies to. */
static void lane_condition(emitter *em, fcl__str *cond) {
  const fcl_kbuilder *kb = em->kb;
  for (size_t i = 0; i < kb->ninames; ++i)
    for (size_t t = 0; t < em->nitems; ++t) {
      const fcl__item *it = &em->items[t];
      if (!it->vec_lanes || it->vec_blocks || !lane_guarded(em, it, &kb->inames[i])) continue;
      em->vec = it->vec;
      int w = (int)fcl__emit_vec_width(em, it->vec);
      lane_guard(em, &kb->inames[i], w - 1, 0, cond);
      em->vec = NULL;
      break; /* one item per guard: the same vector iname gives the same text */
    }
}

/* The body; when vector items have guards on their lanes, twice: vector statements when all
 * lanes are inside, scalar (unrolled) ones at the edges. The test hangs on hardware ids only. */
static void emit_unswitched(emitter *em, const size_t *order) {
  fcl__str cond = {0};
  lane_condition(em, &cond);
  if (!cond.len) {
    free(cond.s);
    emit_body(em, order);
    return;
  }
  fcl__str_indent(&em->out, em->depth);
  fcl__str_printf(&em->out, "if (%s) { /* every vector lane is inside the domain */\n", cond.s);
  free(cond.s);
  em->depth++;
  emit_body(em, order);
  em->depth--;
  line(em, "} else { /* partial vectors, lane by lane */");
  em->depth++;
  for (size_t t = 0; t < em->nitems; ++t) {
    fcl__item *it = &em->items[t];
    if (!it->vec_lanes || it->vec_blocks) continue;
    const char *v = it->vec;
    it->vec = NULL;
    fcl__emit_item_loops(em, it, v);
  }
  emit_body(em, order);
  close_block(em);
}

static void emit_declarations(emitter *em) {
  const fcl_kbuilder *kb = em->kb;
  for (size_t i = 0; i < kb->ninames; ++i) {
    const fcl__iname *in = &kb->inames[i];
    if (in->derived || !is_hw(in)) continue;
    int64_t lo = 0;
    bool zero = fcl__kb_const(kb, in->lo, &lo) && lo == 0;
    fcl__str_indent(&em->out, em->depth);
    fcl__str_printf(&em->out, "const int %s = ", in->name);
    if (!zero) {
      fcl__emit_print(em, in->lo);
      fcl__str_printf(&em->out, " + ");
    }
    if (in->tag != TAG_G && em->axes.local[in->axis] == 1) /* the one item along the axis: */
      fcl__str_printf(&em->out, "0;\n"); /* CUDA's launch bounds do not tell its compiler */
    else
      fcl__str_printf(&em->out, "(int)get_%s_id(%d);\n", in->tag == TAG_G ? "group" : "local",
                      in->axis);
  }
  for (size_t p = 0; p < kb->nprefetches; ++p) {
    fcl__str_indent(&em->out, em->depth);
    fcl__str_printf(&em->out, "FCL_LOCAL %s %s[%lld];\n", type_name(em->plans[p].array->dtype),
                    kb->prefetches[p].fetch, (long long)em->plans[p].size);
  }
  for (size_t i = 0; i < kb->nvars; ++i) {
    const fcl__var *v = &kb->vars[i];
    if (v->kind != V_TEMP) continue;
    fcl__expr var = {.kind = E_VAR, .text = v->name};
    fcl__str_indent(&em->out, em->depth);
    fcl__str_printf(&em->out, "%s%s %s", v->scope == FCL_TEMP_LOCAL ? "FCL_LOCAL " : "",
                    type_name(fcl__kb_type_of(kb, &var)), v->name);
    for (size_t d = 0; d < v->ndim; ++d) {
      fcl__str_printf(&em->out, "[");
      fcl__emit_print(em, v->shape[d]);
      fcl__str_printf(&em->out, "]");
    }
    fcl__str_printf(&em->out, ";\n");
  }
}

static void emit_signature(emitter *em) {
  const fcl_kbuilder *kb = em->kb;
  fcl__str_printf(&em->out,
                  "FCL_KERNEL FCL_GROUP_SIZE(%lld, %lld, %lld)\n"
                  "void %s(",
                  (long long)em->axes.local[0], (long long)em->axes.local[1],
                  (long long)em->axes.local[2], kb->name);
  bool first = true;
  for (size_t i = 0; i < kb->nvars; ++i) {
    const fcl__var *v = &kb->vars[i];
    const char *sep = first ? "" : ",\n    ";
    if (v->kind == V_PARAM && !v->fixed)
      fcl__str_printf(&em->out, "%sconst int %s", sep, v->name);
    else if (v->kind == V_ARRAY)
      fcl__str_printf(&em->out, "%sFCL_GLOBAL %s%s *restrict %s", sep, v->written ? "" : "const ",
                      type_name(v->dtype), v->name);
    else if (v->kind == V_SCALAR)
      fcl__str_printf(&em->out, "%sconst %s %s", sep, type_name(v->dtype), v->name);
    else
      continue;
    first = false;
  }
  fcl__str_printf(&em->out, ")\n");
}

static void emit_header(emitter *em) {
  const fcl_kbuilder *kb = em->kb;
  fcl__str_printf(&em->out, "/* flowcl codegen: kernel '%s'\n", kb->name);
  for (size_t i = 0; i < kb->nhistory; ++i) fcl__str_printf(&em->out, " *   %s\n", kb->history[i]);
  fcl__str_printf(&em->out, " * local size  (%lld, %lld, %lld)\n * global size (",
                  (long long)em->axes.local[0], (long long)em->axes.local[1],
                  (long long)em->axes.local[2]);
  for (unsigned d = 0; d < em->axes.dim; ++d) {
    fcl__str_printf(&em->out, "%s", d ? ", " : "");
    if (em->axes.groups[d]) {
      fcl__str_printf(&em->out, "(");
      fcl__emit_print(em, em->axes.groups[d]);
      fcl__str_printf(&em->out, ") * ");
    }
    fcl__str_printf(&em->out, "%lld", (long long)em->axes.local[d]);
  }
  fcl__str_printf(&em->out, ") */\n");
  if (!em->literals_float)
    fcl__str_printf(&em->out, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
}

fcl_status fcl_kbuilder_generate(const fcl_kbuilder *kb, char **source) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(source, 2);
  *source = NULL;
  if (!kb->ninsns)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s' has no instructions", kb->name);
  emitter em;
  fcl_status st = fcl__emit_prepare(kb, &em);
  if (st == FCL_OK) {
    for (size_t i = 0; i < em.kb->ninsns; ++i) number_reductions(&em, em.kb->insns[i].rhs);
    st = build_items(&em);
  }
  size_t *order = st == FCL_OK ? calloc(em.nitems, sizeof *order) : NULL;
  if (st == FCL_OK && !order) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "generate");
  if (st == FCL_OK) st = fcl__items_schedule(em.kb, em.items, em.nitems, order);
  if (st == FCL_OK) {
    emit_header(&em);
    fcl__str head = em.out; /* the complex helpers go between it and the kernel */
    em.out = (fcl__str){0};
    emit_signature(&em);
    fcl__str_printf(&em.out, "{\n");
    em.depth = 1;
    emit_declarations(&em);
    emit_unswitched(&em, order);
    fcl__str_printf(&em.out, "}\n");
    fcl__emit_complex_helpers(&em, &head);
    fcl__str_printf(&head, "%s", em.out.s ? em.out.s : "");
    head.failed = head.failed || em.out.failed || !em.out.s;
    free(em.out.s);
    em.out = head;
    if (em.out.failed) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel '%s': source", kb->name);
  }
  free(order);
  if (st == FCL_OK) {
    *source = em.out.s;
    em.out.s = NULL;
  }
  fcl__emit_free(&em);
  return st;
}
