/* Transformations: tag_inames, split_iname, align_iname, fix_parameters, assume, prioritize_loops,
 * add_prefetch (stream_iname is in stream.c). Each checks its input fully before changing the
 * builder. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "codegen_impl.h"

const char *fcl__tag_text(const fcl__iname *in, char *buf, size_t size) {
  switch (in->tag) {
    case TAG_G: snprintf(buf, size, "g.%d", in->axis); break;
    case TAG_L: snprintf(buf, size, "l.%d", in->axis); break;
    case TAG_L_AUTO: snprintf(buf, size, "l.auto"); break;
    case TAG_UNR: snprintf(buf, size, "unr"); break;
    case TAG_ILP: snprintf(buf, size, "ilp"); break;
    case TAG_VEC: snprintf(buf, size, "vec"); break;
    default: snprintf(buf, size, "for"); break;
  }
  return buf;
}

static bool parse_tag(const char *text, fcl__tag_kind *tag, int *axis) {
  *axis = 0;
  if (!text || !*text || !strcmp(text, "for") || !strcmp(text, "None"))
    *tag = TAG_NONE;
  else if (!strcmp(text, "unr"))
    *tag = TAG_UNR;
  else if (!strcmp(text, "ilp") || !strcmp(text, "ilp.unr") || !strcmp(text, "ilp.seq"))
    *tag = TAG_ILP;
  else if (!strcmp(text, "vec"))
    *tag = TAG_VEC;
  else if (!strcmp(text, "l.auto"))
    *tag = TAG_L_AUTO;
  else if ((text[0] == 'g' || text[0] == 'l') && text[1] == '.' && text[2] >= '0' &&
           text[2] <= '2' && !text[3]) {
    *tag = text[0] == 'g' ? TAG_G : TAG_L;
    *axis = text[2] - '0';
  } else
    return false;
  return true;
}

fcl_status fcl_kbuilder_tag_inames(fcl_kbuilder *kb, const char *tags) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(tags, 2);
  char *copy = strdup(tags);
  if (!copy) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "tags");
  enum { MAXT = 32 };
  fcl__iname *target[MAXT];
  fcl__tag_kind kind[MAXT];
  int axis[MAXT];
  size_t n = 0;
  fcl_status st = FCL_OK;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); st == FCL_OK && tok;
       tok = strtok_r(NULL, ",", &save)) {
    tok = fcl__trim(tok);
    char *colon = strchr(tok, ':');
    if (!colon) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': tag_inames '%s': expected "
                     "'iname:tag' in '%s'",
                     kb->name, tags, tok);
      break;
    }
    *colon = '\0';
    char *name = fcl__trim(tok), *tag = fcl__trim(colon + 1);
    fcl__iname *in = fcl__kb_iname(kb, name);
    if (!in)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': tag_inames: unknown iname '%s'",
                     kb->name, name);
    else if (in->derived)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': tag_inames: iname '%s' was split; "
                     "tag its parts",
                     kb->name, name);
    else if (n == MAXT)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': tag_inames: at most %d tags at once",
                     kb->name, MAXT);
    else if (!parse_tag(tag, &kind[n], &axis[n]))
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': tag_inames: unknown tag '%s' for "
                     "'%s' (g.0-2, l.0-2, l.auto, unr, ilp, vec, for)",
                     kb->name, tag, name);
    if (st != FCL_OK) break;
    char old[16], new[16];
    fcl__iname probe = {.tag = kind[n], .axis = axis[n]};
    fcl__tag_text(&probe, new, sizeof new);
    if (in->streamed && kind[n] != TAG_NONE && kind[n] != TAG_UNR)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': tag_inames: iname '%s' carries "
                     "registers (stream_iname); it stays a sequential loop (for, unr), not %s",
                     kb->name, name, new);
    else if (in->tag != TAG_NONE && (in->tag != kind[n] || in->axis != axis[n]))
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': tag_inames: iname '%s' is already "
                     "tagged %s; it cannot also be %s",
                     kb->name, name, fcl__tag_text(in, old, sizeof old), new);
    for (size_t k = 0; st == FCL_OK && k < n; ++k)
      if (target[k] == in && (kind[k] != kind[n] || axis[k] != axis[n]))
        st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': tag_inames: iname '%s' is tagged "
                       "twice in '%s'",
                       kb->name, name, tags);
    target[n++] = in;
  }
  free(copy);
  if (st != FCL_OK) return st;
  for (size_t k = 0; k < n; ++k) {
    target[k]->tag = kind[k];
    target[k]->axis = axis[k];
  }
  return fcl__kb_history(kb, "tag_inames(%s)", tags);
}

fcl_status fcl_kbuilder_split_iname(fcl_kbuilder *kb, const char *iname, int64_t factor,
                                    const char *outer_tag, const char *inner_tag) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(iname, 2);
  FCL_CHECK_ARG(factor >= 1, 3, "factor", "must be >= 1");
  size_t idx = fcl__kb_iname_index(kb, iname);
  if (idx == SIZE_MAX)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': split_iname: unknown iname '%s'",
                     kb->name, iname);
  const fcl__iname *in = &kb->inames[idx];
  char tag[16];
  if (in->derived)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': split_iname: '%s' was already split",
                     kb->name, iname);
  if (in->streamed)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': split_iname: '%s' carries registers "
                     "(stream_iname); split before streaming",
                     kb->name, iname);
  if (in->tag != TAG_NONE)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': split_iname: '%s' is tagged %s; "
                     "split before tagging",
                     kb->name, iname, fcl__tag_text(in, tag, sizeof tag));
  fcl__tag_kind ko, ki;
  int ao, ai;
  if (!parse_tag(outer_tag, &ko, &ao) || !parse_tag(inner_tag, &ki, &ai))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': split_iname '%s': unknown tag '%s'",
                     kb->name, iname, parse_tag(outer_tag, &ko, &ao) ? inner_tag : outer_tag);
  char on[128], inn[128];
  snprintf(on, sizeof on, "%s_outer", iname);
  snprintf(inn, sizeof inn, "%s_inner", iname);
  if (fcl__kb_iname(kb, on) || fcl__kb_var(kb, on) || fcl__kb_iname(kb, inn) ||
      fcl__kb_var(kb, inn))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': split_iname '%s': the names '%s' / "
                     "'%s' are taken",
                     kb->name, iname, on, inn);
  /* outer in [0, ceil((hi - lo) / factor)), inner in [0, factor) */
  fcl__expr *ext = fcl__expr_fold(
      fcl__expr_binary("-", fcl__expr_clone(in->hi), fcl__expr_clone(in->lo)));
  int64_t c;
  fcl__expr *outer_hi = NULL;
  if (ext && fcl__kb_const(kb, ext, &c))
    outer_hi = fcl__expr_num((c + factor - 1) / factor);
  else if (ext)
    outer_hi = fcl__expr_fold(fcl__expr_binary(
        "/", fcl__expr_binary("+", fcl__expr_clone(ext), fcl__expr_num(factor - 1)),
        fcl__expr_num(factor)));
  fcl__expr_free(ext);
  int64_t lo = 0;
  bool lo_zero = fcl__kb_const(kb, in->lo, &lo) && lo == 0;
  fcl__expr *value = fcl__expr_binary(
      "+", fcl__expr_binary("*", fcl__expr_new(E_VAR, on, 0), fcl__expr_num(factor)),
      fcl__expr_new(E_VAR, inn, 0));
  if (value && !lo_zero) value = fcl__expr_binary("+", fcl__expr_clone(in->lo), value);
  fcl__iname *grown = realloc(kb->inames, (kb->ninames + 2) * sizeof *grown);
  fcl__iname o = {.name = strdup(on),
                  .lo = fcl__expr_num(0),
                  .hi = outer_hi,
                  .tag = ko,
                  .axis = ao,
                  .priority = -1};
  fcl__iname i = {.name = strdup(inn),
                  .lo = fcl__expr_num(0),
                  .hi = fcl__expr_num(factor),
                  .tag = ki,
                  .axis = ai,
                  .priority = -1};
  if (!grown || !value || !o.name || !o.lo || !o.hi || !i.name || !i.lo || !i.hi) {
    if (grown) kb->inames = grown;
    free(o.name), fcl__expr_free(o.lo), fcl__expr_free(o.hi);
    free(i.name), fcl__expr_free(i.lo), fcl__expr_free(i.hi);
    fcl__expr_free(value);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "split_iname");
  }
  kb->inames = grown;
  fcl__iname *split = &kb->inames[idx];
  split->derived = true;
  split->outer = kb->ninames;
  split->inner = kb->ninames + 1;
  split->factor = factor;
  split->value = value;
  kb->inames[kb->ninames++] = o;
  kb->inames[kb->ninames++] = i;
  return fcl__kb_history(kb, "split_iname(%s, %lld, outer=%s, inner=%s)", iname, (long long)factor,
                         outer_tag ? outer_tag : "for", inner_tag ? inner_tag : "for");
}

fcl_status fcl_kbuilder_align_iname(fcl_kbuilder *kb, const char *iname, int64_t alignment) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(iname, 2);
  FCL_CHECK_ARG(alignment >= 1, 3, "alignment", "must be >= 1");
  fcl__iname *in = fcl__kb_iname(kb, iname);
  if (!in)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': align_iname: unknown iname '%s'",
                     kb->name, iname);
  if (in->derived)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': align_iname: '%s' was already split; "
                     "align before splitting",
                     kb->name, iname);
  int64_t lo;
  if (!fcl__kb_const(kb, in->lo, &lo)) {
    char *text = fcl__expr_text(in->lo);
    fcl_status st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                              "kernel '%s': align_iname: the lower "
                              "bound of '%s' (%s) is not a constant",
                              kb->name, iname, text ? text : "?");
    free(text);
    return st;
  }
  int64_t start = lo >= 0 ? lo / alignment * alignment
                          : -((-lo + alignment - 1) / alignment) * alignment;
  if (start != lo) {
    fcl__expr *new_lo = fcl__expr_num(start), *min = in->min ? NULL : fcl__expr_clone(in->lo);
    if (!new_lo || (!in->min && !min)) {
      fcl__expr_free(new_lo);
      fcl__expr_free(min);
      return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "align_iname");
    }
    if (!in->min) in->min = min;
    fcl__expr_free(in->lo);
    in->lo = new_lo;
  }
  return fcl__kb_history(kb, "align_iname(%s, %lld)", iname, (long long)alignment);
}

/* "name OP value" items separated by sep ("," or " and "). */
typedef struct {
  fcl__var *param;
  int64_t value;
  int kind; /* 0: fix, 1: modulus, 2: lower bound */
} fact;

static fcl_status parse_int(const char *s, int64_t *v) {
  char *end;
  long long x = strtoll(s, &end, 0);
  while (isspace((unsigned char)*end)) end++;
  if (end == s || *end) return FCL_ERR_INVALID_ARGUMENT;
  *v = x;
  return FCL_OK;
}

static fcl_status check_fact(const fcl_kbuilder *kb, const fcl__var *p, int kind, int64_t v,
                             const char *what) {
  int64_t m = kind == 1 ? v : p->modulus, lower = kind == 2 ? v : p->lower;
  if (p->fixed || kind == 0) {
    int64_t x = kind == 0 ? v : p->value;
    if ((m && x % m) || (lower != INT64_MIN && x < lower))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': %s: %s = %lld contradicts the "
                       "assumptions about it",
                       kb->name, what, p->name, (long long)x);
  }
  return FCL_OK;
}

fcl_status fcl_kbuilder_fix_parameters(fcl_kbuilder *kb, const char *values) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(values, 2);
  char *copy = strdup(values);
  if (!copy) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fix_parameters");
  fact facts[32];
  size_t n = 0;
  fcl_status st = FCL_OK;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); st == FCL_OK && tok;
       tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    if (eq) *eq = '\0';
    char *name = fcl__trim(tok);
    fcl__var *p = fcl__kb_var(kb, name);
    int64_t v = 0;
    if (!eq || parse_int(fcl__trim(eq + 1), &v) != FCL_OK)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': fix_parameters '%s': expected "
                     "'name=integer' items",
                     kb->name, values);
    else if (!p || p->kind != V_PARAM)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': fix_parameters: '%s' is not a "
                     "parameter",
                     kb->name, name);
    else if (p->fixed && p->value != v)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': fix_parameters: '%s' is already "
                     "fixed to %lld",
                     kb->name, name, (long long)p->value);
    else if (n == 32)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': fix_parameters: too many", kb->name);
    else
      st = check_fact(kb, p, 0, v, "fix_parameters");
    if (st == FCL_OK) facts[n++] = (fact){p, v, 0};
  }
  free(copy);
  if (st != FCL_OK) return st;
  for (size_t k = 0; k < n; ++k) {
    facts[k].param->fixed = true;
    facts[k].param->value = facts[k].value;
  }
  return fcl__kb_history(kb, "fix_parameters(%s)", values);
}

static int64_t gcd(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}

fcl_status fcl_kbuilder_assume(fcl_kbuilder *kb, const char *assumptions) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(assumptions, 2);
  char *copy = strdup(assumptions);
  if (!copy) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "assume");
  fact facts[32];
  size_t n = 0;
  fcl_status st = FCL_OK;
  for (char *c = copy; st == FCL_OK && c && *c;) {
    char *and = strstr(c, " and ");
    if (and) *and = '\0';
    char *item = fcl__trim(c), name[64] = "", op[64] = "", rest[64] = "";
    int64_t a = 0, b = 0;
    fcl__var *p = NULL;
    int kind = -1;
    if (sscanf(item, "%63[A-Za-z0-9_] mod %63[0-9] = %63s", name, op, rest) == 3 ||
        sscanf(item, "%63[A-Za-z0-9_] %% %63[0-9] == %63s", name, op, rest) == 3) {
      if (parse_int(op, &a) == FCL_OK && parse_int(rest, &b) == FCL_OK && b == 0 && a > 0) kind = 1;
    } else if (sscanf(item, "%63[A-Za-z0-9_] %7[<>=] %63s", name, op, rest) == 3 &&
               parse_int(rest, &a) == FCL_OK) {
      if (!strcmp(op, ">="))
        kind = 2;
      else if (!strcmp(op, ">"))
        kind = 2, a += 1;
    }
    p = fcl__kb_var(kb, name);
    if (kind < 0)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': assume: '%s' is not 'p mod k = 0' "
                     "or 'p >= c'",
                     kb->name, item);
    else if (!p || p->kind != V_PARAM)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': assume: '%s' is not a parameter",
                     kb->name, name);
    else if (n == 32)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': assume: too many", kb->name);
    else
      st = check_fact(kb, p, kind, a, "assume");
    if (st == FCL_OK) facts[n++] = (fact){p, a, kind};
    c = and? and+5 : NULL;
  }
  free(copy);
  if (st != FCL_OK) return st;
  for (size_t k = 0; k < n; ++k) {
    fcl__var *p = facts[k].param;
    if (facts[k].kind == 1) {
      int64_t m = p->modulus ? p->modulus : 1, v = facts[k].value;
      p->modulus = m / gcd(m, v) * v; /* lcm: every assumed divisor holds */
    } else if (p->lower == INT64_MIN || facts[k].value > p->lower) {
      p->lower = facts[k].value;
    }
  }
  return fcl__kb_history(kb, "assume(%s)", assumptions);
}

fcl_status fcl_kbuilder_prioritize_loops(fcl_kbuilder *kb, const char *order) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(order, 2);
  char *copy = strdup(order);
  if (!copy) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "prioritize_loops");
  fcl__iname *list[32];
  size_t n = 0;
  fcl_status st = FCL_OK;
  for (char *save = NULL, *tok = strtok_r(copy, ",:", &save); st == FCL_OK && tok;
       tok = strtok_r(NULL, ",:", &save)) {
    char *name = fcl__trim(tok);
    fcl__iname *in = fcl__kb_iname(kb, name);
    if (!in)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': prioritize_loops: unknown iname "
                     "'%s'",
                     kb->name, name);
    else if (in->derived)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': prioritize_loops: '%s' was split; "
                     "order its parts",
                     kb->name, name);
    else if (n == 32)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': prioritize_loops: too many", kb->name);
    else
      list[n++] = in;
  }
  free(copy);
  if (st != FCL_OK) return st;
  for (size_t k = 0; k < kb->ninames; ++k) kb->inames[k].priority = -1;
  for (size_t k = 0; k < n; ++k) list[k]->priority = (int)k;
  return fcl__kb_history(kb, "prioritize_loops(%s)", order);
}

/* Whether some instruction reads array with this '$' tag. */
static bool tagged_in(const fcl__expr *e, const char *array, const char *tag) {
  if (!e) return false;
  if (e->kind == E_SUBSCRIPT && !strcmp(e->text, array) && e->tag && !strcmp(e->tag, tag))
    return true;
  for (size_t i = 0; i < e->nkids; ++i)
    if (tagged_in(e->kids[i], array, tag)) return true;
  return false;
}

static bool has_tagged_access(const fcl_kbuilder *kb, const char *array, const char *tag) {
  for (size_t i = 0; i < kb->ninsns; ++i)
    if (tagged_in(kb->insns[i].rhs, array, tag)) return true;
  return false;
}

fcl_status fcl_kbuilder_add_prefetch(fcl_kbuilder *kb, fcl_prefetch prefetch) {
  FCL_CHECK_NULL(kb, 1);
  const char *array_spec = prefetch.array, *sweep = prefetch.sweep;
  const char *fetch_name = prefetch.fetch_name;
  const int pad = prefetch.pad;
  FCL_CHECK_ARG(array_spec, 2, "prefetch.array", "must not be NULL");
  FCL_CHECK_ARG(sweep, 2, "prefetch.sweep", "must not be NULL");
  FCL_CHECK_ARG(pad >= 0 && pad <= 64, 2, "prefetch.pad", "must be in [0, 64]");
  /* "a" or "a$tag": the accesses that read the copy */
  char array[128], tag[64] = "";
  const char *dollar = strchr(array_spec, '$');
  const size_t alen = dollar ? (size_t)(dollar - array_spec) : strlen(array_spec);
  if (alen >= sizeof array || (dollar && (!dollar[1] || strlen(dollar + 1) >= sizeof tag)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': add_prefetch: '%s' is not an array name, or name$tag", kb->name,
                     array_spec);
  memcpy(array, array_spec, alen);
  array[alen] = '\0';
  if (dollar) strcpy(tag, dollar + 1);
  const fcl__var *a = fcl__kb_var(kb, array);
  if (!a || a->kind != V_ARRAY)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': add_prefetch: '%s' is not an array "
                     "argument",
                     kb->name, array);
  if (a->written)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': add_prefetch: '%s' is written by the "
                     "kernel; only read-only arrays can be prefetched",
                     kb->name, array);
  for (size_t i = 0; i < kb->nprefetches; ++i)
    if (!strcmp(kb->prefetches[i].array, array))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': add_prefetch: '%s' is already "
                       "prefetched",
                       kb->name, array);
  if (*tag && !has_tagged_access(kb, array, tag))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': add_prefetch: no access '%s$%s[...]' in the instructions",
                     kb->name, array, tag);
  char fetch[160];
  snprintf(fetch, sizeof fetch, "%s", fetch_name ? fetch_name : "");
  if (!fetch_name) snprintf(fetch, sizeof fetch, "%s_fetch", array);
  if (fcl__kb_var(kb, fetch) || fcl__kb_iname(kb, fetch))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': add_prefetch: the name '%s' is taken",
                     kb->name, fetch);
  fcl__prefetch pf = {
      .array = strdup(array), .tag = *tag ? strdup(tag) : NULL, .fetch = strdup(fetch), .pad = pad};
  char *copy = strdup(sweep);
  fcl_status st = pf.array && pf.fetch && copy && (!*tag || pf.tag)
                      ? FCL_OK
                      : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "prefetch");
  for (char *save = NULL, *tok = copy ? strtok_r(copy, ",:", &save) : NULL; st == FCL_OK && tok;
       tok = strtok_r(NULL, ",:", &save)) {
    char *name = fcl__trim(tok);
    if (!fcl__kb_iname(kb, name)) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': add_prefetch of '%s': unknown sweep "
                     "iname '%s'",
                     kb->name, array, name);
      break;
    }
    char **grown = realloc(pf.sweep, (pf.nsweep + 1) * sizeof *grown);
    if (!grown || !(grown[pf.nsweep] = strdup(name))) {
      if (grown) pf.sweep = grown;
      st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "prefetch");
      break;
    }
    pf.sweep = grown;
    pf.nsweep++;
  }
  free(copy);
  if (st == FCL_OK && !pf.nsweep)
    st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': add_prefetch of '%s': no sweep inames",
                   kb->name, array);
  fcl__prefetch *grown = st == FCL_OK
                             ? realloc(kb->prefetches, (kb->nprefetches + 1) * sizeof *grown)
                             : NULL;
  if (st == FCL_OK && !grown) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "prefetch");
  if (st == FCL_OK) {
    kb->prefetches = grown;
    kb->prefetches[kb->nprefetches++] = pf;
    /* the footprint must be computable now; undo if not */
    fcl__prefetch_plan plan;
    st = fcl__prefetch_plan_make(kb, kb->nprefetches - 1, &plan);
    if (st == FCL_OK)
      fcl__prefetch_plan_free(&plan);
    else
      kb->nprefetches--;
  }
  if (st != FCL_OK) {
    free(pf.array);
    free(pf.tag);
    free(pf.fetch);
    for (size_t i = 0; i < pf.nsweep; ++i) free(pf.sweep[i]);
    free(pf.sweep);
    return st;
  }
  return fcl__kb_history(kb, "add_prefetch(%s, sweep=%s, into=%s, pad=%d)", array_spec, sweep,
                         fetch, pad);
}
