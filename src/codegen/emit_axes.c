/* The emitter's preparation: a working copy of the builder with l.auto resolved, the hardware
 * axes and the order of the loops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "emit_impl.h"

/* ---------------- preparation ---------------- */

static void rank_dfs(const fcl_kbuilder *kb, size_t i, size_t *rank, size_t *next) {
  const fcl__iname *in = &kb->inames[i];
  if (in->derived) {
    rank_dfs(kb, in->outer, rank, next);
    rank_dfs(kb, in->inner, rank, next);
  } else {
    rank[i] = (*next)++;
  }
}

static size_t loop_key(const emitter *em, const char *leaf, bool vec_unrolled) {
  size_t i = fcl__kb_iname_index(em->kb, leaf);
  const fcl__iname *in = &em->kb->inames[i];
  if (in->tag == TAG_ILP || vec_unrolled) return 2000000 + em->rank[i];
  if (in->priority >= 0) return (size_t)in->priority;
  return 1000000 + em->rank[i];
}

void fcl__emit_sort_loops(const emitter *em, const char **loops, size_t n,
                          const char *vec_unrolled) {
  for (size_t a = 1; a < n; ++a)
    for (size_t b = a; b > 0; --b) {
      size_t kb1 = loop_key(em, loops[b - 1], vec_unrolled && !strcmp(loops[b - 1], vec_unrolled));
      size_t kb2 = loop_key(em, loops[b], vec_unrolled && !strcmp(loops[b], vec_unrolled));
      if (kb1 <= kb2) break;
      const char *t = loops[b];
      loops[b] = loops[b - 1];
      loops[b - 1] = t;
    }
}

/* Whether leaf appears with coefficient +-1 in the last index of a global array access. */
static bool contiguous_in(const fcl_kbuilder *kb, const fcl__expr *e, const char *leaf) {
  if (e->kind == E_SUBSCRIPT) {
    const fcl__var *v = fcl__kb_var(kb, e->text);
    fcl__affine f;
    if (v && v->kind == V_ARRAY &&
        fcl__affine_of(e->kids[e->nkids - 1], fcl__kb_expand, (void *)kb, &f)) {
      int64_t c = fcl__affine_coef(&f, leaf);
      if (c == 1 || c == -1) return true;
    }
  }
  for (size_t i = 0; i < e->nkids; ++i)
    if (contiguous_in(kb, e->kids[i], leaf)) return true;
  return false;
}

/* l.auto: the lowest free local axis, contiguous inames first (loopy's rule, per kernel). */
static fcl_status resolve_auto(fcl_kbuilder *kb, const size_t *rank) {
  bool used[3] = {false, false, false};
  for (size_t i = 0; i < kb->ninames; ++i)
    if (!kb->inames[i].derived && kb->inames[i].tag == TAG_L) used[kb->inames[i].axis] = true;
  for (int pass = 0; pass < 2; ++pass) {
    size_t picked[16], np = 0;
    for (size_t i = 0; i < kb->ninames; ++i) {
      fcl__iname *in = &kb->inames[i];
      if (in->derived || in->tag != TAG_L_AUTO) continue;
      bool contiguous = false;
      for (size_t k = 0; k < kb->ninsns && !contiguous; ++k)
        contiguous = contiguous_in(kb, kb->insns[k].rhs, in->name) ||
                     contiguous_in(kb, kb->insns[k].lhs, in->name);
      if (contiguous == (pass == 0) && np < 16) picked[np++] = i;
    }
    for (size_t a = 1; a < np; ++a) /* creation order */
      for (size_t b = a; b > 0 && rank[picked[b]] < rank[picked[b - 1]]; --b) {
        size_t t = picked[b];
        picked[b] = picked[b - 1];
        picked[b - 1] = t;
      }
    for (size_t k = 0; k < np; ++k) {
      fcl__iname *in = &kb->inames[picked[k]];
      int axis = 0;
      while (axis < 3 && used[axis]) axis++;
      if (axis == 3)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "kernel '%s': iname '%s' is tagged l.auto but "
                         "the three local axes are taken; tag it unr or for",
                         kb->name, in->name);
      used[axis] = true;
      in->tag = TAG_L;
      in->axis = axis;
    }
  }
  return FCL_OK;
}

void fcl__axes_free(fcl__axes *axes) {
  for (int d = 0; d < 3; ++d) fcl__expr_free(axes->groups[d]);
  memset(axes, 0, sizeof *axes);
}

fcl_status fcl__kb_axes(const fcl_kbuilder *kb, fcl__axes *axes) {
  memset(axes, 0, sizeof *axes);
  axes->dim = 1;
  for (int d = 0; d < 3; ++d) axes->local[d] = 1;
  for (size_t i = 0; i < kb->ninames; ++i) {
    const fcl__iname *in = &kb->inames[i];
    if (in->derived || !is_hw(in)) continue;
    if ((unsigned)in->axis + 1 > axes->dim) axes->dim = (unsigned)in->axis + 1;
    fcl__expr *ext = fcl__expr_fold(
        fcl__expr_binary("-", fcl__expr_clone(in->hi), fcl__expr_clone(in->lo)));
    if (!ext) {
      fcl__axes_free(axes);
      return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "axes");
    }
    if (in->tag == TAG_L) {
      int64_t n;
      bool ok = fcl__kb_const(kb, ext, &n);
      fcl__expr_free(ext);
      if (!ok || n < 1) {
        fcl__axes_free(axes);
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "kernel '%s': iname '%s' is tagged l.%d but "
                         "its extent is not a positive constant; split it or fix the parameters",
                         kb->name, in->name, in->axis);
      }
      if (n > axes->local[in->axis]) axes->local[in->axis] = n;
    } else if (!axes->groups[in->axis]) {
      axes->groups[in->axis] = ext;
    } else {
      fcl__expr *m = fcl__expr_new(E_CALL, "max", 2);
      if (!m) {
        fcl__expr_free(ext);
        fcl__axes_free(axes);
        return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "axes");
      }
      m->kids[0] = axes->groups[in->axis];
      m->kids[1] = ext;
      axes->groups[in->axis] = m;
    }
  }
  return FCL_OK;
}

/* A working copy with l.auto resolved and the axes computed. */
fcl_status fcl__emit_prepare(const fcl_kbuilder *kb, emitter *em) {
  memset(em, 0, sizeof *em);
  em->vec_lane = -1;
  FCL_TRY(fcl_kbuilder_copy(kb, &em->kb));
  em->rank = calloc(em->kb->ninames ? em->kb->ninames : 1, sizeof *em->rank);
  if (!em->rank) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "generate");
  size_t next = 0;
  bool *child = calloc(em->kb->ninames ? em->kb->ninames : 1, sizeof *child);
  if (!child) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "generate");
  for (size_t i = 0; i < em->kb->ninames; ++i)
    if (em->kb->inames[i].derived)
      child[em->kb->inames[i].outer] = child[em->kb->inames[i].inner] = true;
  for (size_t i = 0; i < em->kb->ninames; ++i)
    if (!child[i]) rank_dfs(em->kb, i, em->rank, &next);
  free(child);
  FCL_TRY(resolve_auto(em->kb, em->rank));
  FCL_TRY(fcl__kb_axes(em->kb, &em->axes));
  em->literals_float = fcl__kb_literals_float(em->kb);
  return FCL_OK;
}

void fcl__emit_free(emitter *em) {
  for (size_t i = 0; i < em->nitems; ++i) free(em->items[i].deps);
  free(em->items);
  if (em->plans)
    for (size_t p = 0; p < em->kb->nprefetches; ++p) fcl__prefetch_plan_free(&em->plans[p]);
  free(em->plans);
  free(em->rank);
  fcl__axes_free(&em->axes);
  fcl_kbuilder_destroy(&em->kb);
  free(em->out.s);
}

fcl_status fcl__kb_prepared_axes(const fcl_kbuilder *kb, fcl__axes *axes) {
  emitter em;
  fcl_status st = fcl__emit_prepare(kb, &em);
  if (st == FCL_OK) {
    *axes = em.axes;
    memset(&em.axes, 0, sizeof em.axes);
  }
  fcl__emit_free(&em);
  return st;
}
