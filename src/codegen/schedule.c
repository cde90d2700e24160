/* Dependencies between instructions and their order in the generated code. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "codegen_impl.h"

/* Variables (arrays and temporaries) an expression reads. */
static void reads(const fcl_kbuilder *kb, const fcl__expr *e, const char **list, size_t *n,
                  size_t cap) {
  if (e->kind == E_VAR || e->kind == E_SUBSCRIPT) {
    const fcl__var *v = fcl__kb_var(kb, e->text);
    bool seen = false;
    for (size_t i = 0; i < *n; ++i) seen = seen || !strcmp(list[i], e->text);
    if (v && (v->kind == V_ARRAY || v->kind == V_TEMP) && !seen && *n < cap) list[(*n)++] = v->name;
  }
  for (size_t i = 0; i < e->nkids; ++i) reads(kb, e->kids[i], list, n, cap);
}

static size_t item_reads(const fcl_kbuilder *kb, const fcl__item *it, const char **list,
                         size_t cap) {
  size_t n = 0;
  if (!it->insn) return 0;
  reads(kb, it->insn->rhs, list, &n, cap);
  for (size_t i = 0; i < it->insn->lhs->nkids; ++i)
    reads(kb, it->insn->lhs->kids[i], list, &n, cap);
  for (size_t w = 0; it->insn->more_writes && w < it->insn->more_writes->nkids; ++w)
    for (size_t i = 0; i < it->insn->more_writes->kids[w]->nkids; ++i)
      reads(kb, it->insn->more_writes->kids[w]->kids[i], list, &n, cap);
  for (size_t i = 0; i < it->insn->nconds && n < cap; ++i) list[n++] = it->insn->conds[i];
  return n;
}

static fcl_status add_dep(fcl__item *it, size_t dep) {
  for (size_t i = 0; i < it->ndeps; ++i)
    if (it->deps[i] == dep) return FCL_OK;
  size_t *grown = realloc(it->deps, (it->ndeps + 1) * sizeof *grown);
  if (!grown) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "dependencies");
  it->deps = grown;
  it->deps[it->ndeps++] = dep;
  return FCL_OK;
}

fcl_status fcl__items_resolve_deps(const fcl_kbuilder *kb, fcl__item *items, size_t n) {
  char label[512];
  for (size_t i = 0; i < n; ++i) {
    fcl__item *it = &items[i];
    if (!it->insn) continue;
    if (it->insn->deps_given) {
      for (size_t d = 0; d < it->insn->ndeps; ++d) {
        bool matched = false;
        for (size_t j = 0; j < n; ++j) {
          if (j == i || !items[j].insn || fnmatch(it->insn->deps[d], items[j].id, 0) != 0) continue;
          matched = true;
          FCL_TRY(add_dep(it, j));
        }
        if (!matched)
          return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                           "kernel '%s': %s: dep '%s' matches no "
                           "instruction",
                           kb->name, fcl__insn_label(it->insn, label, sizeof label),
                           it->insn->deps[d]);
      }
    } else {
      /* a reader depends on the single writer of what it reads */
      const char *rd[64];
      size_t nr = item_reads(kb, it, rd, 64);
      for (size_t r = 0; r < nr; ++r) {
        size_t writer = SIZE_MAX, writers = 0;
        for (size_t j = 0; j < n; ++j)
          if (j != i && items[j].insn && !items[j].insn->carried &&
              fcl__insn_writes(items[j].insn, rd[r])) {
            writer = j;
            writers++;
          }
        if (writers == 1) FCL_TRY(add_dep(it, writer));
      }
    }
    for (size_t d = 0; d < it->insn->nafter; ++d)
      for (size_t j = 0; j < n; ++j)
        if (j != i && items[j].insn && !strcmp(it->insn->after[d], items[j].id))
          FCL_TRY(add_dep(it, j));
    /* prefetch copies come before every reader of their array */
    for (size_t j = 0; j < n; ++j)
      if (!items[j].insn && (fcl__expr_uses(it->insn->rhs, items[j].plan->array->name) ||
                             fcl__expr_uses(it->insn->lhs, items[j].plan->array->name)))
        FCL_TRY(add_dep(it, j));
  }
  return FCL_OK;
}

/* Length of the common prefix of an item's loops and the open loops. */
static size_t common(const fcl__item *it, const char **stack, size_t depth) {
  size_t k = 0;
  while (k < depth && k < it->nloops && !strcmp(it->loops[k], stack[k])) k++;
  return k;
}

static fcl_status cycle_error(const fcl_kbuilder *kb, const fcl__item *items, size_t n,
                              const bool *done) {
  /* follow unfinished dependencies from an unfinished item until one repeats */
  size_t start = 0;
  while (start < n && done[start]) start++;
  size_t path[64], len = 0, cur = start;
  for (;;) {
    for (size_t k = 0; k < len; ++k)
      if (path[k] == cur) {
        char msg[1024] = "";
        for (size_t m = k; m < len; ++m) {
          size_t used = strlen(msg);
          snprintf(msg + used, sizeof msg - used, "insn '%s' (%s) -> ", items[path[m]].id,
                   items[path[m]].insn ? items[path[m]].insn->text : "prefetch");
        }
        size_t used = strlen(msg);
        snprintf(msg + used, sizeof msg - used, "insn '%s'", items[cur].id);
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': dependency cycle: %s", kb->name,
                         msg);
      }
    if (len == 64) break;
    path[len++] = cur;
    size_t next = SIZE_MAX;
    for (size_t d = 0; d < items[cur].ndeps && next == SIZE_MAX; ++d)
      if (!done[items[cur].deps[d]]) next = items[cur].deps[d];
    if (next == SIZE_MAX) break;
    cur = next;
  }
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': dependency cycle through insn '%s'",
                   kb->name, items[start].id);
}

fcl_status fcl__items_schedule(const fcl_kbuilder *kb, const fcl__item *items, size_t n,
                               size_t *order) {
  bool *done = calloc(n ? n : 1, sizeof *done);
  if (!done) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "schedule");
  const char *stack[FCL__MAX_LEAVES];
  size_t depth = 0;
  for (size_t placed = 0; placed < n; ++placed) {
    size_t best = SIZE_MAX;
    int best_prio = 0;
    size_t best_fit = 0;
    for (size_t i = 0; i < n; ++i) {
      if (done[i]) continue;
      bool ready = true;
      for (size_t d = 0; d < items[i].ndeps && ready; ++d) ready = done[items[i].deps[d]];
      if (!ready) continue;
      int prio = items[i].insn ? items[i].insn->priority : 0;
      size_t fit = common(&items[i], stack, depth);
      if (best == SIZE_MAX || prio > best_prio || (prio == best_prio && fit > best_fit)) {
        best = i;
        best_prio = prio;
        best_fit = fit;
      }
    }
    if (best == SIZE_MAX) {
      fcl_status st = cycle_error(kb, items, n, done);
      free(done);
      return st;
    }
    done[best] = true;
    order[placed] = best;
    depth = items[best].nloops;
    memcpy(stack, items[best].loops, depth * sizeof *stack);
  }
  free(done);
  return FCL_OK;
}
