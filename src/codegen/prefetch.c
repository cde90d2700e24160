/* Prefetch footprints: which box of a global array the sweep inames of a work-group touch.
 *
 * Every access a[e_0, ..., e_{D-1}] is read as affine forms in the leaf inames and parameters.
 * The accesses must differ only by constants (a stencil's neighbours), so that per dimension
 *   e_d = sum_s c_{d,s} * s + rest_d + k_d      (s: sweep inames, rest_d: the others)
 * with the same c and rest for every access. The box spans the sweep ranges plus the spread
 * of k_d; its corner is rest_d + min k_d + the most negative sweep term. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "codegen_impl.h"

size_t fcl__kb_prefetch_of(const fcl_kbuilder *kb, const char *array) {
  for (size_t i = 0; i < kb->nprefetches; ++i)
    if (!strcmp(kb->prefetches[i].array, array)) return i;
  return SIZE_MAX;
}

size_t fcl__kb_prefetch_of_access(const fcl_kbuilder *kb, const fcl__expr *e) {
  const size_t i = fcl__kb_prefetch_of(kb, e->text);
  if (i == SIZE_MAX || !kb->prefetches[i].tag) return i;
  return e->tag && !strcmp(e->tag, kb->prefetches[i].tag) ? i : SIZE_MAX;
}

void fcl__prefetch_plan_free(fcl__prefetch_plan *plan) {
  for (size_t d = 0; d < plan->ndim; ++d) fcl__expr_free(plan->base[d]);
  memset(plan, 0, sizeof *plan);
}

static bool is_sweep(const fcl__prefetch_plan *p, const char *sym) {
  for (size_t s = 0; s < p->nsweep; ++s)
    if (!strcmp(p->sweep[s], sym)) return true;
  return false;
}

/* Collect the accesses of array in e that read the prefetch (its tag, if it has one). */
static void collect(const fcl__expr *e, const fcl__prefetch *pf, const fcl__expr **list, size_t *n,
                    size_t cap) {
  if (e->kind == E_SUBSCRIPT && !strcmp(e->text, pf->array) &&
      (!pf->tag || (e->tag && !strcmp(e->tag, pf->tag))) && *n < cap)
    list[(*n)++] = e;
  for (size_t i = 0; i < e->nkids; ++i) collect(e->kids[i], pf, list, n, cap);
}

static fcl__expr *affine_expr(const fcl__affine *a, const fcl__prefetch_plan *p, bool sweep_part,
                              int64_t constant) {
  fcl__expr *e = fcl__expr_num(constant);
  for (size_t k = 0; e && k < a->n; ++k) {
    if (!a->coef[k] || is_sweep(p, a->sym[k]) != sweep_part) continue;
    fcl__expr *term = fcl__expr_new(E_VAR, a->sym[k], 0);
    if (a->coef[k] != 1) term = fcl__expr_binary("*", fcl__expr_num(a->coef[k]), term);
    e = fcl__expr_binary("+", e, term);
  }
  return e;
}

fcl_status fcl__prefetch_plan_make(const fcl_kbuilder *kb, size_t index, fcl__prefetch_plan *p) {
  memset(p, 0, sizeof *p);
  const fcl__prefetch *pf = &kb->prefetches[index];
  p->index = index;
  p->array = fcl__kb_var(kb, pf->array);
  p->ndim = 0;
  char *leaves[FCL__MAX_LEAVES];
  size_t nleaves = 0;
  for (size_t s = 0; s < pf->nsweep; ++s) {
    fcl__expr *v = fcl__expr_new(E_VAR, pf->sweep[s], 0);
    if (!v) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "prefetch");
    fcl__kb_leaf_inames(kb, v, leaves, &nleaves, FCL__MAX_LEAVES);
    fcl__expr_free(v);
  }
  int64_t lo[FCL__MAX_LEAVES], hi[FCL__MAX_LEAVES];
  for (size_t s = 0; s < nleaves; ++s) {
    const fcl__iname *in = fcl__kb_iname(kb, leaves[s]);
    if (!fcl__kb_const(kb, in->lo, &lo[s]) || !fcl__kb_const(kb, in->hi, &hi[s]))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': prefetch of '%s': sweep iname '%s' "
                       "needs a constant range (split it or fix the parameters)",
                       kb->name, pf->array, leaves[s]);
    if (in->tag == TAG_G)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': prefetch of '%s': sweep iname '%s' "
                       "is tagged g.%d; a work-group can only fetch for itself",
                       kb->name, pf->array, leaves[s], in->axis);
    p->sweep[p->nsweep++] = in->name;
  }
  const fcl__expr *acc[256];
  size_t nacc = 0;
  for (size_t i = 0; i < kb->ninsns; ++i) {
    collect(kb->insns[i].rhs, pf, acc, &nacc, 256);
    collect(kb->insns[i].lhs, pf, acc, &nacc, 256);
  }
  if (!nacc)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': prefetch of '%s': no instruction "
                     "reads it (add the instructions first)",
                     kb->name, pf->array);
  size_t ndim = acc[0]->nkids;
  fcl__affine ref[FCL_KB_MAX_DIMS];
  int64_t kmin[FCL_KB_MAX_DIMS], kmax[FCL_KB_MAX_DIMS];
  for (size_t a = 0; a < nacc; ++a) {
    for (size_t d = 0; d < ndim; ++d) {
      fcl__affine f;
      if (!fcl__affine_of(acc[a]->kids[d], fcl__kb_expand, (void *)kb, &f)) {
        char *t = fcl__expr_text(acc[a]);
        fcl_status st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                                  "kernel '%s': prefetch of '%s': index "
                                  "%zu of %s is not affine in the inames",
                                  kb->name, pf->array, d, t ? t : "?");
        free(t);
        return st;
      }
      if (a == 0) {
        ref[d] = f;
        kmin[d] = kmax[d] = f.constant;
        continue;
      }
      bool same = true;
      for (size_t k = 0; k < f.n; ++k)
        same = same && fcl__affine_coef(&ref[d], f.sym[k]) == f.coef[k];
      for (size_t k = 0; k < ref[d].n; ++k)
        same = same && fcl__affine_coef(&f, ref[d].sym[k]) == ref[d].coef[k];
      if (!same) {
        char *t0 = fcl__expr_text(acc[0]), *t1 = fcl__expr_text(acc[a]);
        fcl_status st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                                  "kernel '%s': prefetch of '%s': "
                                  "accesses %s and %s are not translates of each other",
                                  kb->name, pf->array, t0 ? t0 : "?", t1 ? t1 : "?");
        free(t0);
        free(t1);
        return st;
      }
      if (f.constant < kmin[d]) kmin[d] = f.constant;
      if (f.constant > kmax[d]) kmax[d] = f.constant;
    }
  }
  /* the fill loops: sequential leaf inames outside the sweep; local ones are an error */
  for (size_t d = 0; d < ndim; ++d)
    for (size_t k = 0; k < ref[d].n; ++k) {
      const fcl__iname *in = fcl__kb_iname(kb, ref[d].sym[k]);
      if (!in || !ref[d].coef[k] || is_sweep(p, in->name)) continue;
      if (in->tag == TAG_L || in->tag == TAG_L_AUTO)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "kernel '%s': prefetch of '%s': the accesses "
                         "depend on local iname '%s', which is not swept",
                         kb->name, pf->array, in->name);
      if (in->tag == TAG_G) continue;
      for (size_t i = 0; i < kb->ninsns; ++i) {
        if (!fcl__expr_uses(kb->insns[i].rhs, pf->array)) continue;
        char *red[FCL__MAX_LEAVES];
        size_t nred = 0;
        fcl__kb_reduction_leaves(kb, kb->insns[i].rhs, red, &nred);
        for (size_t r = 0; r < nred; ++r)
          if (!strcmp(red[r], in->name))
            return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                             "kernel '%s': prefetch of '%s': the "
                             "accesses move with reduction iname '%s'; sweep it too",
                             kb->name, pf->array, in->name);
      }
      bool seen = false;
      for (size_t l = 0; l < p->nloops; ++l) seen = seen || p->loops[l] == in->name;
      if (!seen && p->nloops < FCL__MAX_LEAVES) p->loops[p->nloops++] = in->name;
    }
  p->ndim = ndim;
  for (size_t d = 0; d < ndim; ++d) {
    int64_t span = kmax[d] - kmin[d], off = 0;
    for (size_t s = 0; s < p->nsweep; ++s) {
      int64_t c = fcl__affine_coef(&ref[d], p->sweep[s]);
      span += (c < 0 ? -c : c) * (hi[s] - 1 - lo[s]);
      off += c > 0 ? c * lo[s] : c * (hi[s] - 1);
    }
    p->box[d] = span + 1;
    p->shift[d] = kmin[d] + off;
    p->base[d] = fcl__expr_fold(affine_expr(&ref[d], p, false, kmin[d] + off));
    if (!p->base[d]) {
      fcl__prefetch_plan_free(p);
      return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "prefetch");
    }
  }
  int64_t stride = 1;
  for (size_t d = ndim; d-- > 0;) {
    p->stride[d] = stride;
    stride *= p->box[d] + (d == ndim - 1 ? pf->pad : 0);
  }
  p->size = stride;
  return FCL_OK;
}

fcl__expr *fcl__prefetch_offset(const fcl_kbuilder *kb, const fcl__prefetch_plan *p,
                                const fcl__expr *access) {
  fcl__expr *sum = fcl__expr_num(0);
  for (size_t d = 0; sum && d < p->ndim; ++d) {
    fcl__affine f;
    if (!fcl__affine_of(access->kids[d], fcl__kb_expand, (void *)kb, &f)) {
      fcl__expr_free(sum);
      return NULL;
    }
    fcl__expr *dim = affine_expr(&f, p, true, f.constant - p->shift[d]);
    if (p->stride[d] != 1) dim = fcl__expr_binary("*", dim, fcl__expr_num(p->stride[d]));
    sum = fcl__expr_binary("+", sum, dim);
  }
  return sum;
}
