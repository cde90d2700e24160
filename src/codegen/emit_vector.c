/* Vectorized instructions: which ones vectorize along their vec iname, and their accesses read
 * as aligned blocks of the vector width. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "emit_impl.h"

/* ---------------- aligned vector blocks ----------------
 * A vector access reads lanes lane0 + l (l < w). When the array's last extent is a multiple of
 * w and every term of the last index but the vector iname and constants is one too, lane0 sits
 * r = (constant) mod w past an aligned position: the lanes are one aligned block (r = 0) or are
 * shuffled from two. A block holding an element that some lane inside the domain reads lies in
 * that lane's row (the extent is a multiple of w), so only blocks read by lanes that may be
 * outside (r != 0 while lanes have guards) are loaded under a test of their position. */

int64_t fcl__emit_vec_width(const emitter *em, const char *v) {
  const fcl__iname *vi = fcl__kb_iname(em->kb, v);
  int64_t lo = 0, hi = 0;
  fcl__kb_const(em->kb, vi->lo, &lo);
  fcl__kb_const(em->kb, vi->hi, &hi);
  return hi - lo;
}

/* r of an access along v of width w (false: not a block access). *f: its last index. */
bool fcl__emit_block_offset(const emitter *em, const fcl__expr *e, const char *v, int64_t w,
                            int64_t *r, fcl__affine *f) {
  const fcl_kbuilder *kb = em->kb;
  const fcl__var *a = fcl__kb_var(kb, e->text);
  if (!a || a->kind != V_ARRAY || fcl__kb_prefetch_of_access(kb, e) != SIZE_MAX ||
      e->nkids != a->ndim || !fcl__affine_of(e->kids[e->nkids - 1], fcl__kb_expand, (void *)kb, f))
    return false;
  fcl__expr *zero = fcl__expr_num(0);
  bool rows = zero && fcl__kb_divisible(kb, zero, a->shape[a->ndim - 1], w);
  fcl__expr_free(zero);
  int64_t c = f->constant, lo = 0;
  if (!rows || !fcl__kb_const(kb, fcl__kb_iname(kb, v)->lo, &lo)) return false;
  for (size_t k = 0; k < f->n; ++k) {
    const fcl__var *p = fcl__kb_var(kb, f->sym[k]);
    if (!strcmp(f->sym[k], v))
      c += f->coef[k] * lo;
    else if (p && p->kind == V_PARAM && p->fixed)
      c += f->coef[k] * p->value;
    else if (p && (p->kind != V_PARAM || !p->modulus || (f->coef[k] * p->modulus) % w))
      return false;
    else if (!p && f->coef[k] % w)
      return false; /* an iname */
  }
  *r = ((c % w) + w) % w;
  return true;
}

/* The last index of block b of an access (lane0 - r + b * w), term by term. */
static fcl__expr *block_start(const emitter *em, const fcl__affine *f, const char *v,
                              int64_t delta) {
  int64_t c = f->constant + delta, lo = 0;
  fcl__kb_const(em->kb, fcl__kb_iname(em->kb, v)->lo, &lo);
  fcl__expr *e = NULL;
  for (size_t k = 0; k < f->n; ++k) {
    const fcl__var *p = fcl__kb_var(em->kb, f->sym[k]);
    if (!strcmp(f->sym[k], v) || (p && p->kind == V_PARAM && p->fixed)) {
      c += f->coef[k] * (strcmp(f->sym[k], v) ? p->value : lo);
      continue;
    }
    fcl__expr *t = fcl__expr_new(E_VAR, f->sym[k], 0);
    if (f->coef[k] != 1) t = fcl__expr_binary("*", fcl__expr_num(f->coef[k]), t);
    e = e ? fcl__expr_binary("+", e, t) : t;
  }
  if (!e || !c) return e ? e : fcl__expr_num(c);
  return fcl__expr_binary(c > 0 ? "+" : "-", e, fcl__expr_num(c > 0 ? c : -c));
}

/* Text of an expression built here, folded and printed by the emitter (e is consumed). */
static char *printed(emitter *em, fcl__expr *e) {
  fcl__str saved = em->out;
  em->out = (fcl__str){0};
  fcl__emit_print_index(em, e);
  char *text = em->out.failed ? NULL : em->out.s;
  if (!text) free(em->out.s);
  em->out = saved;
  return text;
}

/* Key and position test of block b of access e (whose r and last index are given). */
static bool block_texts(emitter *em, const fcl__expr *e, const fcl__affine *f, int64_t r, int b,
                        char **key, char **pos) {
  const fcl__var *a = fcl__kb_var(em->kb, e->text);
  int64_t w = em->vec_width;
  fcl__expr *access = fcl__expr_clone(e), *start = block_start(em, f, em->vec, b * w - r);
  if (!access || !start) {
    fcl__expr_free(access);
    fcl__expr_free(start);
    return false;
  }
  fcl__expr_free(access->kids[access->nkids - 1]);
  access->kids[access->nkids - 1] = fcl__expr_clone(start);
  char *index = printed(em, fcl__emit_linear_index(em->kb, a, access)), *s = printed(em, start);
  char *l = printed(
      em, fcl__expr_binary("-", fcl__expr_clone(a->shape[a->ndim - 1]), fcl__expr_num(w)));
  fcl__expr_free(access);
  fcl__str k = {0}, p = {0};
  if (index) fcl__str_printf(&k, "%s + %s", a->name, index);
  if (s && l) fcl__str_printf(&p, "%s >= 0 && %s <= %s", s, s, l);
  free(index);
  free(s);
  free(l);
  if (k.failed || p.failed || !k.s || !p.s) {
    free(k.s);
    free(p.s);
    return false;
  }
  *key = k.s;
  *pos = p.s;
  return true;
}

static struct vblock *find_block(emitter *em, const char *key) {
  for (size_t b = 0; b < em->nblocks; ++b)
    if (!strcmp(em->blocks[b].key, key)) return &em->blocks[b];
  return NULL;
}

/* The blocks the accesses along the vector iname read (an unguarded use wins). */
bool fcl__emit_collect_blocks(emitter *em, const fcl__expr *e, bool lanes) {
  if (e->kind == E_SUBSCRIPT && fcl__emit_depends_on(em, e, em->vec)) {
    int64_t r;
    fcl__affine f;
    if (!fcl__emit_block_offset(em, e, em->vec, em->vec_width, &r, &f)) return false;
    for (int b = 0; b < (r ? 2 : 1); ++b) {
      char *key = NULL, *pos = NULL;
      if (!block_texts(em, e, &f, r, b, &key, &pos)) return false;
      bool guarded = lanes && r;
      struct vblock *x = find_block(em, key);
      if (!x) {
        struct vblock *nb = realloc(em->blocks, (em->nblocks + 1) * sizeof *nb);
        if (!nb) return false;
        em->blocks = nb;
        x = &em->blocks[em->nblocks++];
        *x = (struct vblock){.key = key,
                             .guard = guarded ? pos : NULL,
                             .dtype = fcl__kb_var(em->kb, e->text)->dtype};
        fcl__str nm = {0};
        fcl__str_printf(&nm, "%s_blk%zu", e->text, em->nblocks - 1);
        x->name = nm.s;
        if (!x->name) return false;
        if (!guarded) free(pos);
      } else {
        if (!guarded) {
          free(x->guard);
          x->guard = NULL;
        }
        free(key);
        free(pos);
      }
    }
    return true;
  }
  for (size_t i = 0; i < e->nkids; ++i)
    if (!fcl__emit_collect_blocks(em, e->kids[i], lanes)) return false;
  return true;
}

void fcl__emit_free_blocks(emitter *em) {
  for (size_t b = 0; b < em->nblocks; ++b) {
    free(em->blocks[b].key);
    free(em->blocks[b].name);
    free(em->blocks[b].guard);
  }
  free(em->blocks);
  em->blocks = NULL;
  em->nblocks = 0;
}

/* The lanes of an access from its blocks: a block, or a shuffle of two. */
void fcl__emit_print_block_lanes(emitter *em, const fcl__expr *e) {
  static const char hex[] = "0123456789abcdef";
  int64_t r, w = em->vec_width;
  fcl__affine f;
  const char *name[2] = {NULL, NULL};
  if (!fcl__emit_block_offset(em, e, em->vec, w, &r, &f)) {
    em->out.failed = true;
    return;
  }
  for (int b = 0; b < (r ? 2 : 1); ++b) {
    char *key = NULL, *pos = NULL;
    struct vblock *x = block_texts(em, e, &f, r, b, &key, &pos) ? find_block(em, key) : NULL;
    free(key);
    free(pos);
    if (!x) {
      em->out.failed = true;
      return;
    }
    name[b] = x->name;
  }
  if (!r) {
    fcl__str_printf(&em->out, "%s", name[0]);
    return;
  }
  fcl__str_printf(&em->out, "FCL_VEC%lld(%s%lld", (long long)w,
                  type_name(fcl__kb_var(em->kb, e->text)->dtype), (long long)w);
  for (int64_t l = 0; l < w; ++l)
    fcl__str_printf(&em->out, ", FCL_LANE(%s, %c)", name[(r + l) / w], hex[(r + l) % w]);
  fcl__str_printf(&em->out, ")");
}

/* Pointer to the element an access names (for vload/vstore). */
void fcl__emit_print_pointer(emitter *em, const fcl__expr *e) {
  const fcl__var *v = fcl__kb_var(em->kb, e->text);
  size_t pf = fcl__kb_prefetch_of_access(em->kb, e);
  if (pf != SIZE_MAX) {
    fcl__str_printf(&em->out, "%s + ", em->kb->prefetches[pf].fetch);
    fcl__emit_print_index(em, fcl__prefetch_offset(em->kb, &em->plans[pf], e));
  } else if (v->kind == V_ARRAY) {
    fcl__str_printf(&em->out, "%s + ", v->name);
    fcl__emit_print_index(em, fcl__emit_linear_index(em->kb, v, e));
  } else {
    fcl__str_printf(&em->out, "&%s", v->name);
    for (size_t d = 0; d < e->nkids; ++d) {
      fcl__str_printf(&em->out, "[");
      fcl__emit_print(em, e->kids[d]);
      fcl__str_printf(&em->out, "]");
    }
  }
}

/* ---------------- items ---------------- */

static bool has_unvectorizable(const fcl__expr *e) {
  if (e->kind == E_REDUCE || e->kind == E_TERNARY) return true;
  if (e->kind == E_BINARY) {
    static const char *bad[] = {"<",  "<=", ">",  ">=", "==", "!=", "&&",
                                "||", "%",  "<<", ">>", "&",  "|",  "^"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i)
      if (!strcmp(e->text, bad[i])) return true;
  }
  if (e->kind == E_UNARY && (e->text[0] == '!' || e->text[0] == '~')) return true;
  for (size_t i = 0; i < e->nkids; ++i)
    if (has_unvectorizable(e->kids[i])) return true;
  return false;
}

/* An access along v: v with coefficient 1 in the last index only (vload and vstore take
 * global, local and private pointers alike). */
static bool vector_access(const emitter *em, const fcl__expr *e, const char *v) {
  const fcl__var *var = fcl__kb_var(em->kb, e->text);
  if (!var || !e->nkids) return false;
  for (size_t d = 0; d < e->nkids; ++d) {
    fcl__affine f;
    if (!fcl__affine_of(e->kids[d], fcl__kb_expand, em->kb, &f)) return false;
    if (fcl__affine_coef(&f, v) != (d + 1 == e->nkids ? 1 : 0)) return false;
  }
  return true;
}

/* Every use of v is inside such an access (returns false at the first other use). */
static bool vec_uses_ok(const emitter *em, const fcl__expr *e, const char *v) {
  if (e->kind == E_SUBSCRIPT && fcl__emit_depends_on(em, e, v)) {
    if (!vector_access(em, e, v)) return false;
    for (size_t d = 0; d < e->nkids; ++d) {
      const fcl__expr *stack[64];
      size_t top = 0;
      stack[top++] = e->kids[d];
      while (top) { /* no nested accesses in the indices */
        const fcl__expr *x = stack[--top];
        if (x->kind == E_SUBSCRIPT) return false;
        for (size_t k = 0; k < x->nkids && top < 64; ++k) stack[top++] = x->kids[k];
      }
    }
    return true;
  }
  if (e->kind == E_VAR && fcl__emit_depends_on(em, e, v)) return false;
  for (size_t i = 0; i < e->nkids; ++i)
    if (!vec_uses_ok(em, e->kids[i], v)) return false;
  return true;
}

bool fcl__emit_guarded_derived(const emitter *em, const fcl__iname *d) {
  return d->derived && !fcl__kb_divisible(em->kb, d->lo, d->hi, d->factor);
}

/* A remainder guard (d < hi) or an aligned lower bound (d >= min). */
bool fcl__emit_has_guard(const emitter *em, const fcl__iname *d) {
  return fcl__emit_guarded_derived(em, d) || d->min;
}

/* Local memory makes barriers, which may not sit in a branch that depends on the local id. */
static bool uses_barriers(const fcl_kbuilder *kb) {
  if (kb->nprefetches) return true;
  for (size_t i = 0; i < kb->nvars; ++i)
    if (kb->vars[i].kind == V_TEMP && kb->vars[i].scope == FCL_TEMP_LOCAL) return true;
  return false;
}

/* A private temporary that an instruction over v writes with one storage for every lane (a
 * scalar, or an element not indexed by v): it holds one lane's value at a time, so its writer
 * runs lane by lane and so must every reader, in the writer's lane loop. Then nothing over v is
 * vectorized: a vector statement scheduled between them would split that loop. */
static bool lane_shared_temporary(const emitter *em, const char *v) {
  const fcl_kbuilder *kb = em->kb;
  for (size_t i = 0; i < em->nitems; ++i) {
    const fcl__item *it = &em->items[i];
    if (!it->insn || !in_list(it->leaves, it->nleaves, v)) continue;
    for (size_t t = 0; t < kb->nvars; ++t) {
      const fcl__var *var = &kb->vars[t];
      if (var->kind != V_TEMP || var->scope != FCL_TEMP_PRIVATE ||
          !fcl__insn_writes(it->insn, var->name))
        continue;
      const fcl__expr *lhs = it->insn->lhs;
      const bool per_lane = !it->insn->code && lhs && lhs->kind == E_SUBSCRIPT &&
                            !strcmp(lhs->text, var->name) && fcl__emit_depends_on(em, lhs, v);
      if (!per_lane) return true;
    }
  }
  return false;
}

/* *lanes: its vector lanes have guards (see unswitched emission in fcl_kbuilder_generate).
 * Called once every item exists. */
bool fcl__emit_can_vectorize(const emitter *em, const fcl__item *it, const char *v, bool *lanes) {
  const fcl__insn *in = it->insn;
  if (lane_shared_temporary(em, v)) return false;
  const fcl__iname *vi = fcl__kb_iname(em->kb, v);
  int64_t lo, hi;
  if (!fcl__kb_const(em->kb, vi->lo, &lo) || !fcl__kb_const(em->kb, vi->hi, &hi)) return false;
  int64_t w = hi - lo;
  if (w != 2 && w != 3 && w != 4 && w != 8 && w != 16) return false;
  if (in->code || in->nconds || has_unvectorizable(in->rhs) || fcl__emit_involves_complex(em, in))
    return false; /* C blocks are opaque; complex values are float2/double2: no vloadN */
  /* Guards on v (remainders, aligned lower bounds) are fine when their other leaves are
   * hardware inames: the kernel then branches once between all-lanes-inside and scalar. */
  *lanes = false;
  for (size_t i = 0; i < em->kb->ninames; ++i) {
    const fcl__iname *d = &em->kb->inames[i];
    char *lv[FCL__MAX_LEAVES];
    size_t n = fcl__emit_has_guard(em, d) ? leaves_of_name(em->kb, d->name, lv, 0) : 0;
    if (!n || !in_list((const char *const *)lv, n, v)) continue;
    bool inside = true, invariant = true;
    for (size_t k = 0; k < n; ++k) {
      inside = inside && in_list(it->leaves, it->nleaves, lv[k]);
      invariant = invariant && (!strcmp(lv[k], v) || is_hw(fcl__kb_iname(em->kb, lv[k])));
    }
    if (!inside) continue;
    if (!invariant || uses_barriers(em->kb)) return false;
    *lanes = true;
  }
  if (in->lhs->kind != E_SUBSCRIPT || !vector_access(em, in->lhs, v)) return false;
  if (!vec_uses_ok(em, in->rhs, v)) return false;
  const fcl__var *target = fcl__kb_var(em->kb, in->lhs->text);
  fcl_dtype t = fcl__kb_type_of(em->kb, in->rhs);
  bool narrower = target->dtype == t || (target->dtype == FCL_FLOAT32 && t == FCL_INT32) ||
                  (target->dtype == FCL_FLOAT64 && (t == FCL_FLOAT32 || t == FCL_INT32));
  return narrower;
}

/* The sequential loops of an item: its leaves but the hardware ones and the vectorized one;
 * a vec-tagged iname it does not vectorize becomes the innermost unrolled loop. */
void fcl__emit_item_loops(const emitter *em, fcl__item *it, const char *vec_tagged) {
  it->nloops = 0;
  for (size_t a = 0; a < it->nleaves; ++a) {
    const fcl__iname *ia = fcl__kb_iname(em->kb, it->leaves[a]);
    if (!is_hw(ia) && !(it->vec && !strcmp(it->vec, ia->name))) it->loops[it->nloops++] = ia->name;
  }
  fcl__emit_sort_loops(em, it->loops, it->nloops, it->vec ? NULL : vec_tagged);
}
