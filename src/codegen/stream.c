/* stream_iname: loads of an array carried in private registers along a sequential loop.
 *
 * Accesses that differ only by a constant step along the loop (u[k - 1, j, i], u[k, j, i],
 * u[k + 1, j, i] along k) form a group. Each group gets registers r_0..r_D (one per offset):
 * a prologue before the loop loads r_0..r_{D-1} at the first iteration, each iteration loads
 * r_D, the readers use the registers, and a rotation r_j = r_{j+1} after them carries the
 * window to the next iteration. The rewrite is made of ordinary instructions and private
 * temporaries, so scheduling, guards and vectorization treat it like user code; the rotations
 * are marked carried (their value is for the next iteration) so that the single-writer rule
 * ties each reader to the prologue, not to them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "codegen_impl.h"

#define MAX_GROUPS 16
#define MAX_ACCESSES 64
#define MAX_WINDOW 16

typedef struct {
  fcl__expr *node; /* the access, rewritten in place */
  size_t insn;
  int64_t q; /* offset along the loop, in iterations */
} access;

typedef struct {
  char key[512];
  size_t dim;       /* the index dimension the loop moves */
  int64_t step;     /* index step per iteration */
  const char *lane; /* a vec/ilp iname the access also varies along (NULL: none) */
  access acc[MAX_ACCESSES];
  size_t nacc;
  int64_t window;               /* offsets 0..window: window + 1 registers */
  char reg[MAX_WINDOW + 1][96]; /* their names */
} group;

typedef struct {
  fcl_kbuilder *kb;
  const char *iname, *array;
  group groups[MAX_GROUPS];
  size_t ngroups;
} stream_ctx;

static bool in_list(char *const *list, size_t n, const char *name) {
  for (size_t i = 0; i < n; ++i)
    if (!strcmp(list[i], name)) return true;
  return false;
}

/* The leaves an instruction runs over (its inames, expanded). */
static size_t insn_leaves(const fcl_kbuilder *kb, const fcl__insn *in, char **list) {
  size_t n = 0;
  for (size_t i = 0; i < in->ninames; ++i) {
    fcl__expr v = {.kind = E_VAR, .text = in->inames[i]};
    fcl__kb_leaf_inames(kb, &v, list, &n, FCL__MAX_LEAVES);
  }
  return n;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Group key of an access: the other indices as text, the moving index without its constant. */
static bool access_key(const fcl__expr *e, const fcl__affine *f, size_t dim, int64_t step,
                       char *key, size_t size) {
  size_t len = (size_t)snprintf(key, size, "%zu|%lld|%lld|", dim, (long long)step,
                                (long long)(((f->constant % step) + step) % step));
  char *terms[FCL__AFFINE_MAX];
  char buf[FCL__AFFINE_MAX][96];
  size_t nt = 0;
  for (size_t s = 0; s < f->n; ++s) {
    if (!f->coef[s]) continue;
    snprintf(buf[nt], sizeof buf[nt], "%s*%lld", f->sym[s], (long long)f->coef[s]);
    terms[nt] = buf[nt];
    nt++;
  }
  qsort(terms, nt, sizeof *terms, cmp_str);
  for (size_t t = 0; t < nt && len < size; ++t)
    len += (size_t)snprintf(key + len, size - len, "%s+", terms[t]);
  for (size_t d = 0; d < e->nkids && len < size; ++d) {
    if (d == dim) continue;
    char *text = fcl__expr_text(e->kids[d]);
    if (!text) return false;
    len += (size_t)snprintf(key + len, size - len, "|%zu:%s", d, text);
    free(text);
  }
  return len < size;
}

/* Record an access of the array in instruction insn, or leave it (false) when it cannot
 * stream: no single index moves with the loop, or it varies along another sequential loop. */
static bool add_access(stream_ctx *c, size_t insn, fcl__expr *e) {
  const fcl_kbuilder *kb = c->kb;
  size_t dim = SIZE_MAX;
  for (size_t d = 0; d < e->nkids; ++d) {
    char *lv[FCL__MAX_LEAVES];
    size_t n = 0;
    fcl__kb_leaf_inames(kb, e->kids[d], lv, &n, FCL__MAX_LEAVES);
    if (!in_list(lv, n, c->iname)) continue;
    if (dim != SIZE_MAX) return false; /* the loop moves two indices */
    dim = d;
  }
  if (dim == SIZE_MAX) return false;
  char *lv[FCL__MAX_LEAVES];
  size_t n = 0;
  fcl__kb_leaf_inames(kb, e, lv, &n, FCL__MAX_LEAVES);
  const char *lane = NULL;
  for (size_t k = 0; k < n; ++k) {
    const fcl__iname *in = fcl__kb_iname(kb, lv[k]);
    if (!strcmp(lv[k], c->iname) || in->tag == TAG_G || in->tag == TAG_L) continue;
    int64_t lo, hi;
    if ((in->tag != TAG_VEC && in->tag != TAG_ILP) || lane || !fcl__kb_const(kb, in->lo, &lo) ||
        !fcl__kb_const(kb, in->hi, &hi) || hi - lo > 16)
      return false; /* another loop: the register would hold a value per iteration of it */
    lane = in->name;
  }
  fcl__affine f;
  if (!fcl__affine_of(e->kids[dim], fcl__kb_expand, c->kb, &f)) return false;
  int64_t step = fcl__affine_coef(&f, c->iname);
  if (!step) return false;
  fcl__affine_add(&f, c->iname, -step);
  char key[512];
  if (!access_key(e, &f, dim, step, key, sizeof key)) return false;
  group *g = NULL;
  for (size_t i = 0; i < c->ngroups && !g; ++i)
    if (!strcmp(c->groups[i].key, key)) g = &c->groups[i];
  if (!g) {
    if (c->ngroups == MAX_GROUPS) return false;
    g = &c->groups[c->ngroups++];
    memset(g, 0, sizeof *g);
    snprintf(g->key, sizeof g->key, "%s", key);
    g->dim = dim;
    g->step = step;
    g->lane = lane;
  }
  if (g->nacc == MAX_ACCESSES) return false;
  g->acc[g->nacc++] = (access){e, insn,
                               (f.constant - (((f.constant % step) + step) % step)) / step};
  return true;
}

static void collect(stream_ctx *c, size_t insn, fcl__expr *e) {
  if (e->kind == E_REDUCE) return; /* inside a reduction the access moves with its iname */
  if (e->kind == E_SUBSCRIPT && !strcmp(e->text, c->array) && add_access(c, insn, e)) return;
  for (size_t i = 0; i < e->nkids; ++i) collect(c, insn, e->kids[i]);
}

/* Derived inames replaced by their values, down to the leaves (in place; NULL on failure). */
static fcl__expr *expand_derived(const fcl_kbuilder *kb, fcl__expr *e) {
  if (!e) return NULL;
  if (e->kind == E_VAR) {
    const fcl__iname *in = fcl__kb_iname(kb, e->text);
    if (!in || !in->derived) return e;
    fcl__expr_free(e);
    return expand_derived(kb, fcl__expr_clone(in->value));
  }
  for (size_t i = 0; i < e->nkids; ++i)
    if (!(e->kids[i] = expand_derived(kb, e->kids[i]))) return NULL;
  return e;
}

/* The group's access at offset q (from its representative at offset q0), as text; at the
 * loop's first iteration when first. */
static char *access_at(const stream_ctx *c, const group *g, const access *rep, int64_t q,
                       bool first) {
  fcl__expr *e = fcl__expr_clone(rep->node);
  if (!e) return NULL;
  if (q != rep->q) {
    e->kids[g->dim] = fcl__expr_binary("+", e->kids[g->dim], fcl__expr_num((q - rep->q) * g->step));
    if (!e->kids[g->dim]) {
      fcl__expr_free(e);
      return NULL;
    }
  }
  if (first) {
    e = expand_derived(c->kb, e);
    if (e) fcl__expr_substitute(e, c->iname, fcl__kb_iname(c->kb, c->iname)->lo);
  }
  for (size_t d = 0; e && d < e->nkids; ++d) e->kids[d] = fcl__expr_fold(e->kids[d]);
  char *text = e ? fcl__expr_text(e) : NULL;
  fcl__expr_free(e);
  return text;
}

static fcl_status oom(void) { return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "stream_iname"); }

/* Colon-separated list of the leaves of the readers, but the loop's ("" if none). */
static void leaves_text(const stream_ctx *c, const fcl__insn *reader, bool with_loop, char *out,
                        size_t size) {
  char *lv[FCL__MAX_LEAVES];
  size_t n = insn_leaves(c->kb, reader, lv), len = 0;
  out[0] = '\0';
  for (size_t k = 0; k < n && len < size; ++k)
    if (with_loop || strcmp(lv[k], c->iname))
      len += (size_t)snprintf(out + len, size - len, "%s%s", len ? ":" : "", lv[k]);
}

/* Add an instruction id to a colon-separated list unless it is there. */
static void list_add(char *list, size_t size, const char *id) {
  size_t len = strlen(list), n = strlen(id);
  for (const char *p = list; (p = strstr(p, id)); p += n)
    if ((p == list || p[-1] == ':') && (p[n] == ':' || !p[n])) return;
  snprintf(list + len, size - len, "%s%s", len ? ":" : "", id);
}

/* Registers, prologue, load and rotations of one group (their text appended to text); its
 * accesses become registers. */
static fcl_status stream_group(stream_ctx *c, group *g, size_t gi, fcl_dtype dtype,
                               fcl__str *text) {
  fcl_kbuilder *kb = c->kb;
  int64_t qmin = g->acc[0].q, qmax = g->acc[0].q;
  const access *rep = &g->acc[0];
  for (size_t a = 1; a < g->nacc; ++a) {
    if (g->acc[a].q < qmin) qmin = g->acc[a].q, rep = &g->acc[a];
    if (g->acc[a].q > qmax) qmax = g->acc[a].q;
  }
  g->window = qmax - qmin;
  const int64_t D = g->window;
  char shape[32] = "", idx[112] = "";
  int64_t lane_lo = 0;
  if (g->lane) {
    const fcl__iname *ln = fcl__kb_iname(kb, g->lane);
    int64_t hi = 0;
    fcl__kb_const(kb, ln->lo, &lane_lo);
    fcl__kb_const(kb, ln->hi, &hi);
    snprintf(shape, sizeof shape, "%lld", (long long)(hi - lane_lo));
    if (lane_lo)
      snprintf(idx, sizeof idx, "[%s - %lld]", g->lane, (long long)lane_lo);
    else
      snprintf(idx, sizeof idx, "[%s]", g->lane);
  }
  for (int64_t j = 0; j <= D; ++j) {
    /* <array>_s<group>_<offset>, with a numeric suffix if the kernel already has that name */
    snprintf(g->reg[j], sizeof g->reg[j], "%s_s%zu_%lld", c->array, gi, (long long)j);
    for (int k = 1; (fcl__kb_var(kb, g->reg[j]) || fcl__kb_iname(kb, g->reg[j])) && k < 100; ++k)
      snprintf(g->reg[j], sizeof g->reg[j], "%s_s%zu_%lld_%d", c->array, gi, (long long)j, k);
    FCL_TRY(
        fcl_kbuilder_add_temporary(kb, g->reg[j], dtype, FCL_TEMP_PRIVATE, g->lane ? shape : NULL));
  }
  char readers[1024] = "";
  for (size_t a = 0; a < g->nacc; ++a)
    list_add(readers, sizeof readers, kb->insns[g->acc[a].insn].id);
  char outer[512], all[512];
  leaves_text(c, &kb->insns[g->acc[0].insn], false, outer, sizeof outer);
  leaves_text(c, &kb->insns[g->acc[0].insn], true, all, sizeof all);
  for (int64_t j = 0; j <= D; ++j) {
    char *src = access_at(c, g, rep, qmin + j, j < D);
    if (!src) return oom();
    if (j < D) /* the prologue: before the loop, at its first iteration */
      fcl__str_printf(text, "%s%s = %s {id=%s_pre%s%s}\n", g->reg[j], idx, src, g->reg[j],
                      *outer ? ", inames=" : "", outer);
    else /* each iteration loads the newest offset */
      fcl__str_printf(text, "%s%s = %s {id=%s_load, inames=%s}\n", g->reg[j], idx, src, g->reg[j],
                      all);
    free(src);
  }
  for (int64_t j = 0; j < D; ++j) { /* after the readers: the window moves one iteration */
    fcl__str_printf(text, "%s%s = %s%s {id=%s_rot, inames=%s, dep=%s", g->reg[j], idx,
                    g->reg[j + 1], idx, g->reg[j], all, readers);
    if (j) fcl__str_printf(text, ":%s_rot", g->reg[j - 1]);
    fcl__str_printf(text, "}\n");
  }
  for (size_t a = 0; a < g->nacc; ++a) { /* accesses -> registers, r[lane - lo] with a lane */
    fcl__expr *e = g->acc[a].node;
    for (size_t d = 0; d < e->nkids; ++d) fcl__expr_free(e->kids[d]);
    free(e->kids);
    e->kids = NULL;
    e->nkids = 0;
    char *name = strdup(g->reg[g->acc[a].q - qmin]);
    if (!name) return oom();
    free(e->text);
    e->text = name;
    if (!g->lane) {
      e->kind = E_VAR;
      continue;
    }
    fcl__expr *ix = fcl__expr_new(E_VAR, g->lane, 0);
    if (ix && lane_lo) ix = fcl__expr_binary("-", ix, fcl__expr_num(lane_lo));
    e->kids = calloc(1, sizeof *e->kids);
    if (!ix || !e->kids) {
      fcl__expr_free(ix);
      return oom();
    }
    e->kids[0] = ix;
    e->nkids = 1;
  }
  return FCL_OK;
}

/* After the instructions are added: readers with explicit deps gain the prologue and the load;
 * the rotations are marked carried. */
static fcl_status link_group(stream_ctx *c, const group *g) {
  fcl_kbuilder *kb = c->kb;
  for (size_t a = 0; a < g->nacc; ++a) {
    fcl__insn *in = &kb->insns[g->acc[a].insn];
    for (int64_t j = 0; in->deps_given && j <= g->window; ++j) {
      char id[128];
      snprintf(id, sizeof id, "%s_%s", g->reg[j], j < g->window ? "pre" : "load");
      bool have = false;
      for (size_t d = 0; d < in->ndeps; ++d) have = have || !strcmp(in->deps[d], id);
      if (have) continue;
      char **grown = realloc(in->deps, (in->ndeps + 1) * sizeof *grown);
      if (!grown) return oom();
      in->deps = grown;
      if (!(in->deps[in->ndeps] = strdup(id))) return oom();
      in->ndeps++;
    }
  }
  for (int64_t j = 0; j < g->window; ++j) {
    char id[128];
    snprintf(id, sizeof id, "%s_rot", g->reg[j]);
    fcl__kb_insn(kb, id)->carried = true;
  }
  /* everything in the loop comes after the prologue: otherwise the scheduler may run the
   * instructions that do not read the registers in a loop of their own before it, and a
   * private value they pass to the others would leave that loop with its last iteration's */
  for (size_t i = 0; i < kb->ninsns; ++i) {
    fcl__insn *in = &kb->insns[i];
    char *leaves[FCL__MAX_LEAVES];
    const size_t nl = insn_leaves(kb, in, leaves);
    if (!in_list(leaves, nl, c->iname)) continue;
    for (int64_t j = 0; j < g->window; ++j) {
      char **grown = realloc(in->after, (in->nafter + 1) * sizeof *grown);
      if (!grown) return oom();
      in->after = grown;
      if (!(in->after[in->nafter] = malloc(strlen(g->reg[j]) + 5))) return oom();
      sprintf(in->after[in->nafter++], "%s_pre", g->reg[j]);
    }
  }
  return FCL_OK;
}

static fcl_status stream(fcl_kbuilder *kb, const char *iname, const char *array) {
  fcl__iname *loop = fcl__kb_iname(kb, iname);
  const fcl__var *arr = fcl__kb_var(kb, array);
  char tag[16];
  if (!loop)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': stream_iname: unknown iname '%s'",
                     kb->name, iname);
  if (loop->derived)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': stream_iname: '%s' was split; "
                     "stream along one of its parts",
                     kb->name, iname);
  if (loop->tag != TAG_NONE && loop->tag != TAG_UNR)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': stream_iname: '%s' is tagged %s; "
                     "only a sequential loop (for, unr) carries registers",
                     kb->name, iname, fcl__tag_text(loop, tag, sizeof tag));
  if (loop->min)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': stream_iname: '%s' was aligned; its "
                     "first iterations are outside the domain",
                     kb->name, iname);
  if (!arr || arr->kind != V_ARRAY)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': stream_iname: '%s' is not a global "
                     "array argument",
                     kb->name, array);
  if (fcl__kb_prefetch_of(kb, array) != SIZE_MAX)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': stream_iname: '%s' is prefetched "
                     "into local memory; stream or prefetch it, not both",
                     kb->name, array);
  const fcl_dtype dtype = arr->dtype; /* vars move as temporaries are added */
  stream_ctx c = {.kb = kb, .iname = iname, .array = array};
  char label[512];
  for (size_t i = 0; i < kb->ninsns; ++i) {
    fcl__insn *in = &kb->insns[i];
    char *lv[FCL__MAX_LEAVES];
    size_t n = insn_leaves(kb, in, lv);
    if (!in_list(lv, n, iname)) continue;
    if (fcl__insn_writes(in, array))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': stream_iname: %s writes '%s' in "
                       "the loop over '%s'; only arrays read there can stream",
                       kb->name, fcl__insn_label(in, label, sizeof label), array, iname);
    if (in->code && fcl__expr_uses(in->rhs, array))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': stream_iname: C block %s reads '%s' by its own code, "
                       "which registers cannot serve",
                       kb->name, fcl__insn_label(in, label, sizeof label), array);
    bool seq = false; /* readers inside another sequential loop keep their loads */
    for (size_t k = 0; k < n; ++k) {
      const fcl__iname *l = fcl__kb_iname(kb, lv[k]);
      seq = seq || (strcmp(lv[k], iname) && (l->tag == TAG_NONE || l->tag == TAG_UNR));
    }
    if (!seq && !in->nconds && !in->carried) collect(&c, i, in->rhs);
  }
  /* the readers of a group share their loops (the registers live in them) */
  size_t streamed = 0;
  fcl__str text = {0};
  for (size_t gi = 0; gi < c.ngroups; ++gi) {
    group *g = &c.groups[gi];
    int64_t qmin = g->acc[0].q, qmax = g->acc[0].q;
    bool same = true;
    char *l0[FCL__MAX_LEAVES], *la[FCL__MAX_LEAVES];
    size_t n0 = insn_leaves(kb, &kb->insns[g->acc[0].insn], l0);
    for (size_t a = 1; a < g->nacc; ++a) {
      qmin = g->acc[a].q < qmin ? g->acc[a].q : qmin;
      qmax = g->acc[a].q > qmax ? g->acc[a].q : qmax;
      size_t na = insn_leaves(kb, &kb->insns[g->acc[a].insn], la);
      same = same && na == n0;
      for (size_t k = 0; same && k < na; ++k) same = in_list(l0, n0, la[k]);
    }
    g->window = 0; /* not streamed */
    if (qmax == qmin || qmax - qmin > MAX_WINDOW || !same) continue;
    fcl_status st = stream_group(&c, g, gi, dtype, &text);
    if (st != FCL_OK) {
      free(text.s);
      return st;
    }
    streamed++;
  }
  if (!streamed) {
    free(text.s);
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': stream_iname: no accesses of '%s' "
                     "reuse each other along '%s' (needed: accesses that differ by a constant "
                     "step along it, in instructions whose other inames are work-item, vec or "
                     "ilp inames)",
                     kb->name, array, iname);
  }
  /* one call: adding instructions rebuilds the instruction list the accesses pointed into */
  fcl_status st = text.failed ? oom() : fcl_kbuilder_add_instructions(kb, text.s);
  free(text.s);
  FCL_TRY(st);
  for (size_t gi = 0; gi < c.ngroups; ++gi)
    if (c.groups[gi].window) FCL_TRY(link_group(&c, &c.groups[gi]));
  loop = fcl__kb_iname(kb, iname);
  loop->streamed = true;
  return fcl__kb_history(kb, "stream_iname(%s, %s): %zu register window%s", iname, array, streamed,
                         streamed == 1 ? "" : "s");
}

fcl_status fcl_kbuilder_stream_iname(fcl_kbuilder *kb, const char *iname, const char *array) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(iname, 2);
  FCL_CHECK_NULL(array, 3);
  fcl_kbuilder *work = NULL; /* all or nothing */
  FCL_TRY(fcl_kbuilder_copy(kb, &work));
  fcl_status st = stream(work, iname, array);
  if (st == FCL_OK) {
    fcl_kbuilder swap = *kb;
    *kb = *work;
    *work = swap;
  }
  fcl_kbuilder_destroy(&work);
  return st;
}
