/* Instructions and substitution rules: parsing "[<type>] lhs[idx] = expr {attrs}" and
 * "name(args) := expr", inlining rules, recognising reductions, checking every name. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "codegen_impl.h"

typedef struct {
  fcl_kbuilder *kb;
  const char *stmt; /* the statement, for messages */
} ctx;

#define STMT_ERROR(c, ...) stmt_error((c), __func__, __FILE__, __LINE__, __VA_ARGS__)

static fcl_status stmt_error(const ctx *c, const char *func, const char *file, int line,
                             const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static fcl_status stmt_error(const ctx *c, const char *func, const char *file, int line,
                             const char *format, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, format);
  vsnprintf(msg, sizeof msg, format, ap);
  va_end(ap);
  return fcl__error_set(FCL_ERR_INVALID_ARGUMENT, 0, func, file, line, "kernel '%s': %s: %s",
                        c->kb->name, c->stmt, msg);
}

/* ---------------- substitution rules ---------------- */

static fcl__rule *find_rule(const fcl_kbuilder *kb, const char *name) {
  for (size_t i = 0; i < kb->nrules; ++i)
    if (!strcmp(kb->rules[i].name, name)) return &kb->rules[i];
  return NULL;
}

/* A tagged rule use: the array accesses of its body that carry no tag of their own take it. */
static fcl_status tag_accesses(fcl__expr *e, const char *tag) {
  for (size_t i = 0; i < e->nkids; ++i) FCL_TRY(tag_accesses(e->kids[i], tag));
  if (e->kind == E_SUBSCRIPT && !e->tag && !(e->tag = strdup(tag)))
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "tag");
  return FCL_OK;
}

/* Inline rule calls in place (e may be replaced); depth bounds recursion. */
static fcl_status inline_rules(const ctx *c, fcl__expr **ep, int depth) {
  fcl__expr *e = *ep;
  for (size_t i = 0; i < e->nkids; ++i) FCL_TRY(inline_rules(c, &e->kids[i], depth));
  if (e->kind != E_CALL) return FCL_OK;
  const fcl__rule *r = find_rule(c->kb, e->text);
  if (!r) return FCL_OK;
  if (depth > 32) return STMT_ERROR(c, "substitution rule '%s' expands recursively", r->name);
  if (e->nkids != r->nargs)
    return STMT_ERROR(c, "rule '%s' takes %zu arguments, %zu given", r->name, r->nargs, e->nkids);
  fcl__expr *body = fcl__expr_clone(r->body);
  if (!body) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "rule");
  /* two steps so that an argument mentioning another parameter's name is not rewritten */
  char tmp[64];
  for (size_t a = 0; a < r->nargs; ++a) {
    snprintf(tmp, sizeof tmp, "__fcl_rule_arg%zu", a);
    fcl__expr *v = fcl__expr_new(E_VAR, tmp, 0);
    fcl__expr holder = {.kind = E_CALL, .kids = &body, .nkids = 1};
    if (v) fcl__expr_substitute(&holder, r->args[a], v);
    fcl__expr_free(v);
  }
  for (size_t a = 0; a < r->nargs; ++a) {
    snprintf(tmp, sizeof tmp, "__fcl_rule_arg%zu", a);
    fcl__expr holder = {.kind = E_CALL, .kids = &body, .nkids = 1};
    fcl__expr_substitute(&holder, tmp, e->kids[a]);
  }
  if (e->tag) FCL_TRY(tag_accesses(body, e->tag));
  fcl__expr_free(e);
  *ep = body;
  return inline_rules(c, ep, depth + 1);
}

/* ---------------- reductions and name checks ---------------- */

static fcl_status resolve_reductions(const ctx *c, fcl__expr *e) {
  for (size_t i = 0; i < e->nkids; ++i) FCL_TRY(resolve_reductions(c, e->kids[i]));
  if (e->kind != E_CALL) return FCL_OK;
  bool is_sum = !strcmp(e->text, "sum");
  bool minmax = !strcmp(e->text, "max") || !strcmp(e->text, "min");
  if (!is_sum && !minmax) return FCL_OK;
  bool over_iname = e->nkids == 2 && e->kids[0]->kind == E_VAR &&
                    fcl__kb_iname(c->kb, e->kids[0]->text) != NULL;
  if (!over_iname) {
    if (is_sum)
      return STMT_ERROR(c, "sum(iname, expr) needs an iname as its first argument (domains must "
                           "be added before the instructions that use them)");
    return FCL_OK; /* the OpenCL max(a, b) */
  }
  e->kind = E_REDUCE;
  e->iname = e->kids[0]->text;
  e->kids[0]->text = NULL;
  fcl__expr_free(e->kids[0]);
  e->kids[0] = e->kids[1];
  e->nkids = 1;
  return FCL_OK;
}

static fcl_status check_names(const ctx *c, const fcl__expr *e) {
  const fcl_kbuilder *kb = c->kb;
  switch (e->kind) {
    case E_VAR: {
      const fcl__var *v = fcl__kb_var(kb, e->text);
      if (v && (v->kind == V_ARRAY || (v->kind == V_TEMP && v->ndim)))
        return STMT_ERROR(c, "array '%s' is used without indices", e->text);
      if (!v && !fcl__kb_iname(kb, e->text) && !fcl__cl_builtin_constant(e->text))
        return STMT_ERROR(c, "unknown name '%s'", e->text);
      break;
    }
    case E_SUBSCRIPT: {
      const fcl__var *v = fcl__kb_var(kb, e->text);
      if (!v) return STMT_ERROR(c, "unknown array '%s'", e->text);
      if ((v->kind != V_ARRAY && v->kind != V_TEMP) || v->ndim == 0)
        return STMT_ERROR(c, "'%s' is not an array", e->text);
      if (e->nkids != v->ndim)
        return STMT_ERROR(c, "'%s' has %zu dimensions, %zu indices given", e->text, v->ndim,
                          e->nkids);
      break;
    }
    case E_CALL:
      if (fcl__kb_var(kb, e->text) || fcl__kb_iname(kb, e->text))
        return STMT_ERROR(c, "'%s' is not a function", e->text);
      if (e->tag)
        return STMT_ERROR(c,
                          "'%s$%s': '$' tags go on array accesses and rule uses, not on the "
                          "function '%s'",
                          e->text, e->tag, e->text);
      if (fcl__complex_function_arity(e->text)) {
        if ((int)e->nkids != fcl__complex_function_arity(e->text))
          return STMT_ERROR(c, "%s() takes %d argument(s), %zu given", e->text,
                            fcl__complex_function_arity(e->text), e->nkids);
        break;
      }
      if (!fcl__cl_builtin_function(e->text))
        return STMT_ERROR(c, "unknown function '%s' (neither an OpenCL C built-in nor a rule)",
                          e->text);
      break;
    case E_REDUCE: {
      const fcl__iname *in = fcl__kb_iname(kb, e->iname);
      if (!in) return STMT_ERROR(c, "unknown reduction iname '%s'", e->iname);
      break;
    }
    default: break;
  }
  for (size_t i = 0; i < e->nkids; ++i) FCL_TRY(check_names(c, e->kids[i]));
  return FCL_OK;
}

/* Complex values support + - * /, unary -, conj, real, imag, abs, exp, sums and the ternary's
 * branches: anything else of a complex operand is an error naming the operation. */
static fcl_status check_complex(const ctx *c, const fcl__expr *e) {
  const fcl_kbuilder *kb = c->kb;
  bool complex_kid = false;
  for (size_t i = 0; i < e->nkids; ++i)
    complex_kid = complex_kid || fcl__dtype_complex(fcl__kb_type_of(kb, e->kids[i]));
  static const char *arith[] = {"+", "-", "*", "/"};
  bool allowed = true;
  const char *what = e->text;
  switch (e->kind) {
    case E_BINARY:
      allowed = false;
      for (size_t i = 0; i < sizeof arith / sizeof *arith; ++i)
        allowed = allowed || !strcmp(e->text, arith[i]);
      break;
    case E_UNARY: allowed = !strcmp(e->text, "-") || !strcmp(e->text, "+"); break;
    case E_CALL:
      allowed = !strcmp(e->text, "abs") || !strcmp(e->text, "exp") ||
                (fcl__complex_function_arity(e->text) && strcmp(e->text, "complex"));
      break;
    case E_TERNARY:
      allowed = !fcl__dtype_complex(fcl__kb_type_of(kb, e->kids[0]));
      what = "?: (as its condition)";
      break;
    case E_REDUCE: allowed = !strcmp(e->text, "sum"); break;
    case E_SUBSCRIPT:
      allowed = false;
      what = "[] (as an index)";
      break;
    case E_CAST:
      allowed = false;
      what = "a cast (use real(), imag() or abs())";
      break;
    default: break;
  }
  if (complex_kid && !allowed)
    return STMT_ERROR(c,
                      "'%s' of a complex value: complex values support + - * /, unary -, conj, "
                      "real, imag, abs, exp, sum and the branches of ?:",
                      what);
  for (size_t i = 0; i < e->nkids; ++i) FCL_TRY(check_complex(c, e->kids[i]));
  return FCL_OK;
}

/* The range [lo, hi] an affine index takes over the inames' domains, when every bound and
 * extent is a constant (false otherwise: nothing can be said at build time). */
static bool index_range(const fcl_kbuilder *kb, const fcl__expr *index, int64_t *lo, int64_t *hi) {
  fcl__affine a;
  if (!fcl__affine_of(index, NULL, NULL, &a)) return false;
  *lo = *hi = a.constant;
  for (size_t k = 0; k < a.n; ++k) {
    const fcl__iname *in = fcl__kb_iname(kb, a.sym[k]);
    int64_t b0, b1;
    if (!in || in->derived || !fcl__kb_const(kb, in->lo, &b0) || !fcl__kb_const(kb, in->hi, &b1))
      return false;
    if (b1 <= b0) return false; /* an empty loop reads nothing */
    const int64_t c = a.coef[k], first = c * b0, last = c * (b1 - 1);
    *lo += first < last ? first : last;
    *hi += first < last ? last : first;
  }
  return true;
}

/* Accesses that leave their array where the sizes are known: an error naming the access. Only
 * accesses made on every path are judged: not those under a ternary's branches or after && and
 * ||, which the program may guard. */
static fcl_status check_bounds(const ctx *c, const fcl__expr *e) {
  if (e->kind == E_TERNARY) return check_bounds(c, e->kids[0]);
  if (e->kind == E_BINARY && (!strcmp(e->text, "&&") || !strcmp(e->text, "||")))
    return check_bounds(c, e->kids[0]);
  if (e->kind == E_SUBSCRIPT) {
    const fcl__var *v = fcl__kb_var(c->kb, e->text);
    for (size_t d = 0; v && d < e->nkids && d < v->ndim; ++d) {
      int64_t extent, lo, hi;
      if (!fcl__kb_const(c->kb, v->shape[d], &extent) || !index_range(c->kb, e->kids[d], &lo, &hi))
        continue;
      if (lo < 0 || hi >= extent) {
        char *text = fcl__expr_text(e);
        fcl_status st = STMT_ERROR(c,
                                   "'%s' reaches index %lld along axis %zu of '%s', whose "
                                   "extent is %lld",
                                   text ? text : e->text, (long long)(lo < 0 ? lo : hi), d, v->name,
                                   (long long)extent);
        free(text);
        return st;
      }
    }
  }
  for (size_t i = 0; i < e->nkids; ++i) FCL_TRY(check_bounds(c, e->kids[i]));
  return FCL_OK;
}

/* Inames an expression uses outside the reductions that bind them. */
static void used_inames(const fcl_kbuilder *kb, const fcl__expr *e, const char **bound,
                        size_t nbound, char **list, size_t *n, size_t cap) {
  if (e->kind == E_VAR && fcl__kb_iname(kb, e->text)) {
    for (size_t i = 0; i < nbound; ++i)
      if (!strcmp(bound[i], e->text)) return;
    for (size_t i = 0; i < *n; ++i)
      if (!strcmp(list[i], e->text)) return;
    if (*n < cap) list[(*n)++] = e->text;
    return;
  }
  const char *inner[16];
  size_t ninner = nbound < 15 ? nbound : 15;
  if (ninner) memcpy(inner, bound, ninner * sizeof *inner);
  if (e->kind == E_REDUCE) inner[ninner++] = e->iname;
  for (size_t i = 0; i < e->nkids; ++i) used_inames(kb, e->kids[i], inner, ninner, list, n, cap);
}

/* ---------------- statements ---------------- */

static fcl_status split_list(const char *value, char ***out, size_t *n) {
  *out = NULL;
  *n = 0;
  char *copy = strdup(value);
  if (!copy) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "attribute");
  fcl_status st = FCL_OK;
  for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok;
       tok = strtok_r(NULL, ":", &save)) {
    tok = fcl__trim(tok);
    if (!*tok) continue;
    char **grown = realloc(*out, (*n + 1) * sizeof *grown);
    if (!grown || !(grown[*n] = strdup(tok))) {
      if (grown) *out = grown;
      st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "attribute");
      break;
    }
    *out = grown;
    (*n)++;
  }
  free(copy);
  return st;
}

static fcl_status parse_attrs(const ctx *c, char *attrs, fcl__insn *in, bool *inames_plus,
                              char ***inames, size_t *ninames, char *id_prefix, size_t size) {
  static const char *const keys[] = {"id", "dep", "inames", "if", "priority", "id_prefix"};
  bool seen[sizeof keys / sizeof *keys] = {false};
  for (char *save = NULL, *tok = strtok_r(attrs, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    tok = fcl__trim(tok);
    if (!*tok) continue;
    char *eq = strchr(tok, '=');
    if (!eq) return STMT_ERROR(c, "attribute '%s' needs a value (key=value)", tok);
    *eq = '\0';
    char *key = fcl__trim(tok), *value = fcl__trim(eq + 1);
    for (size_t k = 0; k < sizeof keys / sizeof *keys; ++k)
      if (!strcmp(key, keys[k])) {
        if (seen[k]) return STMT_ERROR(c, "attribute '%s' given twice (one list: a:b:c)", key);
        seen[k] = true;
      }
    if ((!strcmp(key, "id") && id_prefix[0]) || (!strcmp(key, "id_prefix") && in->id))
      return STMT_ERROR(c, "id and id_prefix both given (one or the other)");
    if (!strcmp(key, "id")) {
      free(in->id);
      if (!(in->id = strdup(value))) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "id");
    } else if (!strcmp(key, "id_prefix")) {
      if (!*value || strlen(value) >= size - 24)
        return STMT_ERROR(c, "id_prefix '%s': empty or too long", value);
      strcpy(id_prefix, value);
    } else if (!strcmp(key, "dep")) {
      FCL_TRY(split_list(value, &in->deps, &in->ndeps));
      in->deps_given = true;
    } else if (!strcmp(key, "inames")) {
      *inames_plus = value[0] == '+';
      FCL_TRY(split_list(value + (*inames_plus ? 1 : 0), inames, ninames));
    } else if (!strcmp(key, "if")) {
      FCL_TRY(split_list(value, &in->conds, &in->nconds));
    } else if (!strcmp(key, "priority")) {
      char *end;
      long p = strtol(value, &end, 10);
      if (*end || end == value) return STMT_ERROR(c, "priority '%s' is not an integer", value);
      in->priority = (int)p;
    } else {
      return STMT_ERROR(c, "unknown attribute '%s' (id, id_prefix, dep, inames, if, priority)",
                        key);
    }
  }
  return FCL_OK;
}

static fcl_status parse_expr(const ctx *c, const char *text, const char *what, fcl__expr **out) {
  const char *err;
  size_t pos;
  *out = fcl__expr_parse(text, &err, &pos);
  if (!*out) return STMT_ERROR(c, "%s: %s at '%s'", what, err, text + pos);
  return FCL_OK;
}

static fcl_status add_rule(const ctx *c, char *head, char *body) {
  fcl_kbuilder *kb = c->kb;
  fcl__expr *h = NULL, *b = NULL;
  FCL_TRY(parse_expr(c, head, "rule head", &h));
  fcl_status st = FCL_OK;
  if (h->kind != E_CALL && h->kind != E_VAR) st = STMT_ERROR(c, "a rule head is 'name(arg, ...)'");
  for (size_t i = 0; st == FCL_OK && i < h->nkids; ++i)
    if (h->kids[i]->kind != E_VAR) st = STMT_ERROR(c, "rule arguments must be names");
  if (st == FCL_OK && (find_rule(kb, h->text) || fcl__kb_var(kb, h->text)))
    st = STMT_ERROR(c, "the name '%s' is already used", h->text);
  if (st == FCL_OK) st = parse_expr(c, body, "rule body", &b);
  if (st == FCL_OK) st = inline_rules(c, &b, 0);
  fcl__rule r = {0};
  if (st == FCL_OK) {
    r.name = strdup(h->text);
    r.args = h->nkids ? calloc(h->nkids, sizeof *r.args) : NULL;
    r.nargs = h->nkids;
    for (size_t i = 0; i < h->nkids && r.args; ++i) r.args[i] = strdup(h->kids[i]->text);
    fcl__rule *grown = realloc(kb->rules, (kb->nrules + 1) * sizeof *grown);
    if (grown) kb->rules = grown;
    if (!grown || !r.name || (h->nkids && !r.args)) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "rule");
  }
  if (st == FCL_OK) {
    r.body = b;
    b = NULL;
    kb->rules[kb->nrules++] = r;
  } else {
    free(r.name);
    for (size_t i = 0; r.args && i < r.nargs; ++i) free(r.args[i]);
    free(r.args);
  }
  fcl__expr_free(h);
  fcl__expr_free(b);
  return st;
}

static fcl_dtype type_named(const char *name, bool *ok) {
  static const struct {
    const char *n;
    fcl_dtype t;
  } map[] = {{"float", FCL_FLOAT32}, {"double", FCL_FLOAT64},  {"int", FCL_INT32},
             {"uint", FCL_UINT32},   {"long", FCL_INT64},      {"ulong", FCL_UINT64},
             {"short", FCL_INT16},   {"ushort", FCL_UINT16},   {"char", FCL_INT8},
             {"uchar", FCL_UINT8},   {"float32", FCL_FLOAT32}, {"float64", FCL_FLOAT64},
             {"int32", FCL_INT32},   {"int64", FCL_INT64}};
  for (size_t i = 0; i < sizeof map / sizeof *map; ++i)
    if (!strcmp(map[i].n, name)) {
      *ok = true;
      return map[i].t;
    }
  *ok = false;
  return FCL_INT32;
}

/* A temporary declared by its first assignment ("<float> t[i] = ..."). */
static fcl_status declare_temp(const ctx *c, const char *type, const fcl__expr *lhs) {
  fcl_kbuilder *kb = c->kb;
  if (fcl__kb_var(kb, lhs->text) || fcl__kb_iname(kb, lhs->text))
    return STMT_ERROR(c, "'%s' is declared again", lhs->text);
  bool ok = true;
  fcl_dtype t = *type ? type_named(type, &ok) : FCL_FLOAT32;
  if (!ok) return STMT_ERROR(c, "unknown type '<%s>'", type);
  char shape[256] = "";
  for (size_t d = 0; d < lhs->nkids; ++d) {
    const fcl__expr *x = lhs->kids[d];
    const fcl__iname *in = x->kind == E_VAR ? fcl__kb_iname(kb, x->text) : NULL;
    int64_t lo, hi;
    if (!in || !fcl__kb_const(kb, in->lo, &lo) || !fcl__kb_const(kb, in->hi, &hi) || lo != 0)
      return STMT_ERROR(c, "the indices of a declared temporary must be inames over [0, constant)");
    size_t len = strlen(shape);
    snprintf(shape + len, sizeof shape - len, "%s%lld", d ? ", " : "", (long long)hi);
  }
  FCL_TRY(fcl_kbuilder_add_temporary(kb, lhs->text, t, FCL_TEMP_PRIVATE, shape));
  kb->vars[kb->nvars - 1].auto_type = !*type;
  return FCL_OK;
}

/* Position of the assignment '=' (not ==, <=, >=, !=) at depth 0, or NULL. */
static char *find_assign(char *s) {
  int depth = 0;
  for (char *p = s; *p; ++p) {
    if (*p == '(' || *p == '[')
      depth++;
    else if (*p == ')' || *p == ']')
      depth--;
    else if (*p == '=' && depth == 0 && p[1] != '=' && (p == s || !strchr("=!<>", p[-1])))
      return p;
  }
  return NULL;
}

/* Name the instruction, check its if= conditions, infer its inames and add it to the builder (on
 * an earlier failure st, or a failure here, free it instead). Takes given. */
static fcl_status finish_insn(const ctx *c, fcl__insn *in, char **given, size_t ngiven, bool plus,
                              const char *prefix, fcl_status st) {
  fcl_kbuilder *kb = c->kb;
  if (st == FCL_OK && !in->id && prefix[0]) { /* the prefix itself, else prefix_0, prefix_1 ... */
    char id[96];
    snprintf(id, sizeof id, "%s", prefix);
    for (size_t n = 0; fcl__kb_insn(kb, id); ++n) snprintf(id, sizeof id, "%s_%zu", prefix, n);
    if (!(in->id = strdup(id))) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "instruction");
  } else if (st == FCL_OK && !in->id) {
    char id[32];
    do snprintf(id, sizeof id, "insn_%zu", kb->next_insn++);
    while (fcl__kb_insn(kb, id));
    if (!(in->id = strdup(id))) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "instruction");
  } else if (st == FCL_OK && fcl__kb_insn(kb, in->id)) {
    st = STMT_ERROR(c, "id '%s' is already used", in->id);
  }
  for (size_t i = 0; st == FCL_OK && i < in->nconds; ++i) {
    const fcl__var *v = fcl__kb_var(kb, in->conds[i]);
    if (!v || v->ndim) st = STMT_ERROR(c, "if=%s: not a scalar variable", in->conds[i]);
  }
  /* inames: the given ones, or those used (plus the given ones with '+') */
  char *used[32];
  size_t nused = 0;
  if (st == FCL_OK && (!ngiven || plus)) {
    used_inames(kb, in->lhs, NULL, 0, used, &nused, 32);
    used_inames(kb, in->rhs, NULL, 0, used, &nused, 32);
    if (in->more_writes) used_inames(kb, in->more_writes, NULL, 0, used, &nused, 32);
  }
  for (size_t i = 0; st == FCL_OK && i < ngiven; ++i) {
    if (!fcl__kb_iname(kb, given[i])) st = STMT_ERROR(c, "inames=: unknown iname '%s'", given[i]);
    bool dup = false;
    for (size_t k = 0; k < nused; ++k) dup = dup || !strcmp(used[k], given[i]);
    if (!dup && nused < 32) used[nused++] = given[i];
  }
  in->inames_given = ngiven && !plus;
  if (st == FCL_OK && nused) {
    in->inames = calloc(nused, sizeof *in->inames);
    for (size_t i = 0; in->inames && i < nused; ++i)
      if ((in->inames[i] = strdup(used[i]))) in->ninames++;
    if (in->ninames != nused) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "instruction");
  }
  /* the text without the quotes of the label */
  if (st == FCL_OK && !(in->text = strndup(c->stmt + 1, strlen(c->stmt) - 2)))
    st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "insn");
  fcl__insn *grown = st == FCL_OK ? realloc(kb->insns, (kb->ninsns + 1) * sizeof *grown) : NULL;
  if (st == FCL_OK && !grown) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "instruction");
  for (size_t i = 0; i < ngiven; ++i) free(given[i]);
  free(given);
  if (st != FCL_OK) {
    fcl__insn_free(in);
    return st;
  }
  fcl__kb_var(kb, in->lhs->text)->written = true;
  for (size_t w = 0; in->more_writes && w < in->more_writes->nkids; ++w)
    fcl__kb_var(kb, in->more_writes->kids[w]->text)->written = true;
  kb->insns = grown;
  kb->insns[kb->ninsns++] = *in;
  return FCL_OK;
}

static fcl_status add_insn(const ctx *c, char *stmt) {
  fcl_kbuilder *kb = c->kb;
  fcl__insn in = {.priority = 0};
  char **given = NULL;
  size_t ngiven = 0;
  bool plus = false;
  char prefix[64] = "";
  fcl_status st = FCL_OK;
  /* attributes: a trailing {...} */
  size_t len = strlen(stmt);
  if (len && stmt[len - 1] == '}') {
    char *open = strrchr(stmt, '{');
    if (!open) return STMT_ERROR(c, "unbalanced '}'");
    stmt[len - 1] = '\0';
    *open = '\0';
    st = parse_attrs(c, open + 1, &in, &plus, &given, &ngiven, prefix, sizeof prefix);
  }
  char *body = fcl__trim(stmt), type[32] = "";
  bool declares = false;
  if (st == FCL_OK && body[0] == '<') {
    char *gt = strchr(body, '>');
    if (!gt || (size_t)(gt - body) >= sizeof type)
      st = STMT_ERROR(c, "bad type '<...>'");
    else {
      memcpy(type, body + 1, (size_t)(gt - body - 1));
      type[gt - body - 1] = '\0';
      char *t = fcl__trim(type);
      memmove(type, t, strlen(t) + 1);
      declares = true;
      body = fcl__trim(gt + 1);
    }
  }
  char *eq = st == FCL_OK ? find_assign(body) : NULL;
  if (st == FCL_OK && !eq) st = STMT_ERROR(c, "expected 'lhs = expression'");
  char op = 0;
  if (st == FCL_OK) {
    *eq = '\0';
    if (eq > body && strchr("+-*/", eq[-1])) {
      op = eq[-1];
      eq[-1] = '\0';
    }
    st = parse_expr(c, fcl__trim(body), "left side", &in.lhs);
  }
  if (st == FCL_OK) st = parse_expr(c, fcl__trim(eq + 1), "right side", &in.rhs);
  if (st == FCL_OK && in.lhs->kind != E_VAR && in.lhs->kind != E_SUBSCRIPT)
    st = STMT_ERROR(c, "the left side must be a variable or an array element");
  if (st == FCL_OK && op) {
    char ops[2] = {op, '\0'};
    fcl__expr *l = fcl__expr_clone(in.lhs);
    in.rhs = fcl__expr_binary(ops, l, in.rhs);
    if (!in.rhs) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "instruction");
  }
  if (st == FCL_OK && declares) {
    if (op)
      st = STMT_ERROR(c, "a declaration cannot be a compound assignment");
    else
      st = declare_temp(c, type, in.lhs);
  }
  if (st == FCL_OK) {
    const fcl__var *v = fcl__kb_var(kb, in.lhs->text);
    if (!v)
      st = STMT_ERROR(c, "unknown variable '%s' on the left side", in.lhs->text);
    else if (v->kind != V_ARRAY && v->kind != V_TEMP)
      st = STMT_ERROR(c, "cannot assign to %s '%s'",
                      v->kind == V_PARAM ? "parameter" : "scalar argument", v->name);
  }
  if (st == FCL_OK && fcl__kb_iname(kb, in.lhs->text))
    st = STMT_ERROR(c, "cannot assign to iname '%s'", in.lhs->text);
  if (st == FCL_OK) st = inline_rules(c, &in.rhs, 0);
  if (st == FCL_OK) st = resolve_reductions(c, in.rhs);
  if (st == FCL_OK) st = check_names(c, in.lhs);
  if (st == FCL_OK) st = check_names(c, in.rhs);
  if (st == FCL_OK) st = check_complex(c, in.lhs);
  if (st == FCL_OK) st = check_complex(c, in.rhs);
  if (st == FCL_OK) {
    const fcl__var *v = fcl__kb_var(kb, in.lhs->text);
    if (!v->auto_type && !fcl__dtype_complex(v->dtype) &&
        fcl__dtype_complex(fcl__kb_type_of(kb, in.rhs)))
      st = STMT_ERROR(c,
                      "a complex value assigned to '%s' of type %s (take real(), imag() or abs())",
                      v->name, fcl_dtype_cl_name(v->dtype));
  }
  if (st == FCL_OK && !in.nconds) st = check_bounds(c, in.lhs); /* if= may guard them */
  if (st == FCL_OK && !in.nconds) st = check_bounds(c, in.rhs);
  return finish_insn(c, &in, given, ngiven, plus, prefix, st);
}

fcl_status fcl_kbuilder_add_instructions(fcl_kbuilder *kb, const char *text) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(text, 2);
  /* all or nothing: work on a copy, keep it on success */
  fcl_kbuilder *work = NULL;
  FCL_TRY(fcl_kbuilder_copy(kb, &work));
  char *copy = strdup(text);
  fcl_status st = copy ? FCL_OK : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "instructions");
  for (char *save = NULL, *line = copy ? strtok_r(copy, "\n;", &save) : NULL; st == FCL_OK && line;
       line = strtok_r(NULL, "\n;", &save)) {
    char *stmt = fcl__trim(line);
    if (!*stmt || stmt[0] == '#' || !strncmp(stmt, "//", 2)) continue;
    char label[512];
    snprintf(label, sizeof label, "'%s'", stmt);
    ctx c = {work, label};
    char *rule = strstr(stmt, ":=");
    if (rule) {
      *rule = '\0';
      st = add_rule(&c, fcl__trim(stmt), fcl__trim(rule + 2));
    } else {
      st = add_insn(&c, stmt);
    }
  }
  free(copy);
  if (st == FCL_OK) {
    fcl_kbuilder swap = *kb;
    *kb = *work;
    *work = swap;
  }
  fcl_kbuilder_destroy(&work);
  return st;
}

/* ---------------- C blocks ---------------- */

/* A comma-separated list of variables and array accesses ("u[i, j], t, v"; NULL or "": none) as
 * the arguments of a call node named name. Writes must be arrays or typed temporaries. */
static fcl_status parse_accesses(const ctx *c, const char *text, const char *name, bool writes,
                                 fcl__expr **out) {
  const fcl_kbuilder *kb = c->kb;
  *out = fcl__expr_new(E_CALL, name, 0);
  if (!*out) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "C block");
  const char *what = writes ? "writes" : "reads";
  for (const char *p = text ? text : ""; *p;) {
    while (isspace((unsigned char)*p)) p++;
    if (!*p) break;
    const char *end, *err;
    fcl__expr *e = fcl__expr_parse_prefix(p, &end, &err);
    if (!e) return STMT_ERROR(c, "%s: %s at '%s'", what, err, p);
    fcl__expr **grown = realloc((*out)->kids, ((*out)->nkids + 1) * sizeof *grown);
    if (!grown) {
      fcl__expr_free(e);
      return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "C block");
    }
    (*out)->kids = grown;
    (*out)->kids[(*out)->nkids++] = e;
    const fcl__var *v = fcl__kb_var(kb, e->text);
    if (e->kind != E_VAR && e->kind != E_SUBSCRIPT)
      return STMT_ERROR(c, "%s: '%.*s' is not a variable or an array access", what, (int)(end - p),
                        p);
    if (!v || v->kind == V_PARAM)
      return STMT_ERROR(c, "%s: '%s' is not an argument or a temporary", what, e->text);
    if (writes && v->kind == V_SCALAR)
      return STMT_ERROR(c, "writes: '%s' is a scalar argument (read only)", e->text);
    if (writes && v->auto_type)
      return STMT_ERROR(c, "writes: temporary '%s' has no declared type", e->text);
    if (e->kind == E_SUBSCRIPT) { /* a bare array name stands for the whole array */
      FCL_TRY(check_names(c, e));
      FCL_TRY(check_bounds(c, e));
    }
    p = end;
    if (*p == ',')
      p++;
    else if (*p)
      return STMT_ERROR(c, "%s: unexpected '%c' (a comma-separated list)", what, *p);
  }
  return FCL_OK;
}

static fcl_status add_c_block(const ctx *c, const char *code, const char *writes, const char *reads,
                              const char *attributes) {
  fcl__insn in = {.priority = 0};
  char **given = NULL;
  size_t ngiven = 0;
  bool plus = false;
  char prefix[64] = "";
  fcl__expr *w = NULL;
  fcl_status st = FCL_OK;
  char *attrs = strdup(attributes ? attributes : "");
  if (!attrs || !(in.code = strdup(code))) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "C block");
  if (st == FCL_OK) { /* "{id=..., dep=...}" or without the braces */
    char *a = fcl__trim(attrs);
    size_t len = strlen(a);
    if (len && a[0] == '{' && a[len - 1] == '}') {
      a[len - 1] = '\0';
      a++;
    }
    st = parse_attrs(c, a, &in, &plus, &given, &ngiven, prefix, sizeof prefix);
  }
  free(attrs);
  if (st == FCL_OK) st = parse_accesses(c, writes, "C block writes", true, &w);
  if (st == FCL_OK && !w->nkids)
    st = STMT_ERROR(c, "writes: a C block must write something (its place in the schedule)");
  if (st == FCL_OK) st = parse_accesses(c, reads, "C block", false, &in.rhs);
  if (st == FCL_OK) { /* the first write is lhs, the others more_writes */
    in.lhs = w->kids[0];
    memmove(w->kids, w->kids + 1, --w->nkids * sizeof *w->kids);
    if (w->nkids)
      in.more_writes = w;
    else
      fcl__expr_free(w);
    w = NULL;
  }
  fcl__expr_free(w);
  return finish_insn(c, &in, given, ngiven, plus, prefix, st);
}

fcl_status fcl_kbuilder_add_c_block(fcl_kbuilder *kb, const char *code, const char *writes,
                                    const char *reads, const char *attributes) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(code, 2);
  FCL_CHECK_NULL(writes, 3);
  /* messages name the block by its first line */
  char label[96];
  size_t first = strcspn(code, "\n");
  snprintf(label, sizeof label, "'C block: %.*s%s'", (int)(first < 60 ? first : 60), code,
           first > 60 || code[first] ? " ..." : "");
  fcl_kbuilder *work = NULL; /* all or nothing */
  FCL_TRY(fcl_kbuilder_copy(kb, &work));
  ctx c = {work, label};
  fcl_status st = add_c_block(&c, code, writes, reads, attributes);
  if (st == FCL_OK) {
    fcl_kbuilder swap = *kb;
    *kb = *work;
    *work = swap;
  }
  fcl_kbuilder_destroy(&work);
  return st;
}
