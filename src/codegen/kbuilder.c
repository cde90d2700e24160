/* The kernel builder object: declarations, domains, lookups, copies and the description. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "codegen_impl.h"

/* ---------------- lifetime ---------------- */

fcl_status fcl_kbuilder_create(const char *name, fcl_kbuilder **out) {
  FCL_CHECK_NULL(name, 1);
  FCL_CHECK_NULL(out, 2);
  *out = NULL;
  bool ident = isalpha((unsigned char)name[0]) || name[0] == '_';
  for (const char *c = name; *c; ++c) ident = ident && (isalnum((unsigned char)*c) || *c == '_');
  if (!ident)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 1 (name): '%s' is not a C identifier",
                     name);
  fcl_kbuilder *kb = calloc(1, sizeof *kb);
  if (!kb || !(kb->name = strdup(name))) {
    free(kb);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel builder '%s'", name);
  }
  *out = kb;
  return FCL_OK;
}

static void free_strings(char **s, size_t n) {
  if (!s) return; /* a copy that ran out of memory */
  for (size_t i = 0; i < n; ++i) free(s[i]);
  free(s);
}

static void var_free(fcl__var *v) {
  free(v->name);
  for (size_t d = 0; d < v->ndim; ++d) fcl__expr_free(v->shape[d]);
}

void fcl__insn_free(fcl__insn *in) {
  free(in->id);
  free(in->text);
  free(in->code);
  fcl__expr_free(in->lhs);
  fcl__expr_free(in->rhs);
  fcl__expr_free(in->more_writes);
  free_strings(in->inames, in->ninames);
  free_strings(in->deps, in->ndeps);
  free_strings(in->after, in->nafter);
  free_strings(in->conds, in->nconds);
}

void fcl_kbuilder_destroy(fcl_kbuilder **kbp) {
  if (!kbp || !*kbp) return;
  fcl_kbuilder *kb = *kbp;
  *kbp = NULL;
  for (size_t i = 0; i < kb->nvars; ++i) var_free(&kb->vars[i]);
  free(kb->vars);
  for (size_t i = 0; i < kb->ninames; ++i) {
    free(kb->inames[i].name);
    fcl__expr_free(kb->inames[i].lo);
    fcl__expr_free(kb->inames[i].hi);
    fcl__expr_free(kb->inames[i].min);
    fcl__expr_free(kb->inames[i].value);
  }
  free(kb->inames);
  free_strings(kb->domains, kb->ndomains);
  for (size_t i = 0; i < kb->ninsns; ++i) fcl__insn_free(&kb->insns[i]);
  free(kb->insns);
  for (size_t i = 0; i < kb->nrules; ++i) {
    free(kb->rules[i].name);
    free_strings(kb->rules[i].args, kb->rules[i].nargs);
    fcl__expr_free(kb->rules[i].body);
  }
  free(kb->rules);
  for (size_t i = 0; i < kb->nprefetches; ++i) {
    free(kb->prefetches[i].array);
    free(kb->prefetches[i].tag);
    free(kb->prefetches[i].fetch);
    free_strings(kb->prefetches[i].sweep, kb->prefetches[i].nsweep);
  }
  free(kb->prefetches);
  free_strings(kb->history, kb->nhistory);
  free(kb->name);
  free(kb);
}

static char **dup_strings(char *const *s, size_t n, bool *ok) {
  if (!n) return NULL;
  char **d = calloc(n, sizeof *d);
  if (!d) {
    *ok = false;
    return NULL;
  }
  for (size_t i = 0; i < n; ++i)
    if (!(d[i] = strdup(s[i]))) *ok = false;
  return d;
}

static fcl__expr *dup_expr(const fcl__expr *e, bool *ok) {
  if (!e) return NULL;
  fcl__expr *c = fcl__expr_clone(e);
  if (!c) *ok = false;
  return c;
}

static void *dup_array(const void *src, size_t n, size_t size, bool *ok) {
  if (!n) return NULL;
  void *d = malloc(n * size);
  if (!d) {
    *ok = false;
    return NULL;
  }
  memcpy(d, src, n * size);
  return d;
}

fcl_status fcl_kbuilder_copy(const fcl_kbuilder *kb, fcl_kbuilder **out) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(out, 2);
  *out = NULL;
  fcl_kbuilder *c = calloc(1, sizeof *c);
  if (!c) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "copy of kernel builder '%s'", kb->name);
  bool ok = true;
  *c = *kb; /* counts; every pointer is replaced below */
  c->name = strdup(kb->name);
  ok = c->name != NULL;
  c->vars = dup_array(kb->vars, kb->nvars, sizeof *kb->vars, &ok);
  for (size_t i = 0; c->vars && i < kb->nvars; ++i) {
    c->vars[i].name = strdup(kb->vars[i].name);
    ok = ok && c->vars[i].name;
    for (size_t d = 0; d < kb->vars[i].ndim; ++d)
      c->vars[i].shape[d] = dup_expr(kb->vars[i].shape[d], &ok);
  }
  c->inames = dup_array(kb->inames, kb->ninames, sizeof *kb->inames, &ok);
  for (size_t i = 0; c->inames && i < kb->ninames; ++i) {
    c->inames[i].name = strdup(kb->inames[i].name);
    ok = ok && c->inames[i].name;
    c->inames[i].lo = dup_expr(kb->inames[i].lo, &ok);
    c->inames[i].hi = dup_expr(kb->inames[i].hi, &ok);
    c->inames[i].min = dup_expr(kb->inames[i].min, &ok);
    c->inames[i].value = dup_expr(kb->inames[i].value, &ok);
  }
  c->domains = dup_strings(kb->domains, kb->ndomains, &ok);
  c->insns = dup_array(kb->insns, kb->ninsns, sizeof *kb->insns, &ok);
  for (size_t i = 0; c->insns && i < kb->ninsns; ++i) {
    const fcl__insn *s = &kb->insns[i];
    fcl__insn *d = &c->insns[i];
    d->id = strdup(s->id);
    d->text = strdup(s->text);
    ok = ok && d->id && d->text;
    d->lhs = dup_expr(s->lhs, &ok);
    d->rhs = dup_expr(s->rhs, &ok);
    d->more_writes = dup_expr(s->more_writes, &ok);
    d->code = s->code ? strdup(s->code) : NULL;
    ok = ok && (d->code || !s->code);
    d->inames = dup_strings(s->inames, s->ninames, &ok);
    d->deps = dup_strings(s->deps, s->ndeps, &ok);
    d->after = dup_strings(s->after, s->nafter, &ok);
    d->conds = dup_strings(s->conds, s->nconds, &ok);
  }
  c->rules = dup_array(kb->rules, kb->nrules, sizeof *kb->rules, &ok);
  for (size_t i = 0; c->rules && i < kb->nrules; ++i) {
    c->rules[i].name = strdup(kb->rules[i].name);
    ok = ok && c->rules[i].name;
    c->rules[i].args = dup_strings(kb->rules[i].args, kb->rules[i].nargs, &ok);
    c->rules[i].body = dup_expr(kb->rules[i].body, &ok);
  }
  c->prefetches = dup_array(kb->prefetches, kb->nprefetches, sizeof *kb->prefetches, &ok);
  for (size_t i = 0; c->prefetches && i < kb->nprefetches; ++i) {
    c->prefetches[i].array = strdup(kb->prefetches[i].array);
    c->prefetches[i].fetch = strdup(kb->prefetches[i].fetch);
    c->prefetches[i].tag = kb->prefetches[i].tag ? strdup(kb->prefetches[i].tag) : NULL;
    ok = ok && c->prefetches[i].array && c->prefetches[i].fetch &&
         (!kb->prefetches[i].tag || c->prefetches[i].tag);
    c->prefetches[i].sweep = dup_strings(kb->prefetches[i].sweep, kb->prefetches[i].nsweep, &ok);
  }
  c->history = dup_strings(kb->history, kb->nhistory, &ok);
  if (!ok) {
    /* counts are right and missing pointers are NULL: destroy frees what was copied */
    fcl_kbuilder_destroy(&c);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "copy of kernel builder '%s'", kb->name);
  }
  *out = c;
  return FCL_OK;
}

const char *fcl_kbuilder_name(const fcl_kbuilder *kb) { return kb ? kb->name : NULL; }

/* ---------------- lookups ---------------- */

char *fcl__trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

fcl__var *fcl__kb_var(const fcl_kbuilder *kb, const char *name) {
  for (size_t i = 0; i < kb->nvars; ++i)
    if (!strcmp(kb->vars[i].name, name)) return &kb->vars[i];
  return NULL;
}

size_t fcl__kb_iname_index(const fcl_kbuilder *kb, const char *name) {
  for (size_t i = 0; i < kb->ninames; ++i)
    if (!strcmp(kb->inames[i].name, name)) return i;
  return SIZE_MAX;
}

fcl__iname *fcl__kb_iname(const fcl_kbuilder *kb, const char *name) {
  size_t i = fcl__kb_iname_index(kb, name);
  return i == SIZE_MAX ? NULL : &kb->inames[i];
}

fcl__insn *fcl__kb_insn(const fcl_kbuilder *kb, const char *id) {
  for (size_t i = 0; i < kb->ninsns; ++i)
    if (!strcmp(kb->insns[i].id, id)) return &kb->insns[i];
  return NULL;
}

const char *fcl__insn_label(const fcl__insn *insn, char *buf, size_t size) {
  snprintf(buf, size, "insn '%s' (%s)", insn->id, insn->text);
  return buf;
}

fcl_status fcl__kb_history(fcl_kbuilder *kb, const char *format, ...) {
  char line[512];
  va_list ap;
  va_start(ap, format);
  vsnprintf(line, sizeof line, format, ap);
  va_end(ap);
  char **grown = realloc(kb->history, (kb->nhistory + 1) * sizeof *grown);
  if (!grown || !(grown[kb->nhistory] = strdup(line))) {
    if (grown) kb->history = grown;
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel '%s': history", kb->name);
  }
  kb->history = grown;
  kb->nhistory++;
  return FCL_OK;
}

static bool lookup_fixed(void *user, const char *name, int64_t *value) {
  const fcl__var *v = fcl__kb_var(user, name);
  if (!v || v->kind != V_PARAM || !v->fixed) return false;
  *value = v->value;
  return true;
}

bool fcl__kb_const(const fcl_kbuilder *kb, const fcl__expr *e, int64_t *value) {
  return fcl__expr_eval(e, lookup_fixed, (void *)kb, value);
}

typedef struct {
  const fcl_kbuilder *kb;
  const int64_t *values;
} eval_env;

static bool lookup_values(void *user, const char *name, int64_t *value) {
  const eval_env *env = user;
  if (lookup_fixed((void *)env->kb, name, value)) return true;
  size_t k = 0;
  for (size_t i = 0; i < env->kb->nvars; ++i) {
    const fcl__var *v = &env->kb->vars[i];
    if (v->kind != V_PARAM || v->fixed) continue;
    if (!strcmp(v->name, name)) {
      *value = env->values[k];
      return true;
    }
    k++;
  }
  return false;
}

bool fcl__kb_eval(const fcl_kbuilder *kb, const fcl__expr *e, const int64_t *values,
                  int64_t *value) {
  eval_env env = {kb, values};
  return fcl__expr_eval(e, lookup_values, &env, value);
}

const fcl__expr *fcl__kb_expand(void *user, const char *name) {
  const fcl_kbuilder *kb = user;
  const fcl__iname *in = fcl__kb_iname(kb, name);
  if (in && in->derived) return in->value;
  return NULL;
}

void fcl__kb_leaf_inames(const fcl_kbuilder *kb, const fcl__expr *e, char **list, size_t *n,
                         size_t cap) {
  if (!e) return;
  if (e->kind == E_VAR) {
    const fcl__iname *in = fcl__kb_iname(kb, e->text);
    if (in && in->derived) {
      fcl__kb_leaf_inames(kb, in->value, list, n, cap);
    } else if (in) {
      for (size_t i = 0; i < *n; ++i)
        if (!strcmp(list[i], in->name)) return;
      if (*n < cap) list[(*n)++] = in->name;
    }
    return;
  }
  for (size_t i = 0; i < e->nkids; ++i) fcl__kb_leaf_inames(kb, e->kids[i], list, n, cap);
}

void fcl__kb_reduction_leaves(const fcl_kbuilder *kb, const fcl__expr *e, char **list, size_t *n) {
  if (e->kind == E_REDUCE) {
    fcl__expr v = {.kind = E_VAR, .text = e->iname};
    fcl__kb_leaf_inames(kb, &v, list, n, FCL__MAX_LEAVES);
  }
  for (size_t i = 0; i < e->nkids; ++i) fcl__kb_reduction_leaves(kb, e->kids[i], list, n);
}

bool fcl__kb_divisible(const fcl_kbuilder *kb, const fcl__expr *lo, const fcl__expr *hi,
                       int64_t factor) {
  fcl__expr *ext = fcl__expr_binary("-", fcl__expr_clone(hi), fcl__expr_clone(lo));
  if (!ext) return false;
  int64_t c;
  bool divisible = false;
  fcl__affine a;
  if (fcl__kb_const(kb, ext, &c)) {
    divisible = c % factor == 0;
  } else if (fcl__affine_of(ext, NULL, NULL, &a)) {
    divisible = a.constant % factor == 0;
    for (size_t i = 0; divisible && i < a.n; ++i) {
      const fcl__var *v = fcl__kb_var(kb, a.sym[i]);
      int64_t m = !v || v->kind != V_PARAM ? 0 : v->fixed ? v->value : v->modulus;
      divisible = m && (a.coef[i] * m) % factor == 0;
    }
  }
  fcl__expr_free(ext);
  return divisible;
}

bool fcl__insn_writes(const fcl__insn *in, const char *name) {
  if (!strcmp(in->lhs->text, name)) return true;
  for (size_t w = 0; in->more_writes && w < in->more_writes->nkids; ++w)
    if (!strcmp(in->more_writes->kids[w]->text, name)) return true;
  return false;
}

/* ---------------- types ---------------- */

static int rank(fcl_dtype t) {
  switch (t) {
    case FCL_FLOAT64: return 9;
    case FCL_FLOAT32: return 8;
    case FCL_UINT64: return 7;
    case FCL_INT64: return 6;
    case FCL_UINT32: return 5;
    default: return 4; /* int and the small types promote to int */
  }
}

/* C99's rules: a complex operand makes the result complex, of the wider of the two precisions
 * (float complex with double gives double complex). */
static fcl_dtype promote(fcl_dtype a, fcl_dtype b) {
  if (fcl__dtype_complex(a) || fcl__dtype_complex(b)) {
    fcl_dtype r = promote(fcl__dtype_real_part(a), fcl__dtype_real_part(b));
    return r == FCL_FLOAT64 ? FCL_COMPLEX128 : FCL_COMPLEX64;
  }
  fcl_dtype r = rank(a) >= rank(b) ? a : b;
  return rank(r) == 4 ? FCL_INT32 : r;
}

bool fcl__kb_literals_float(const fcl_kbuilder *kb) {
  for (size_t i = 0; i < kb->nvars; ++i)
    if (!kb->vars[i].auto_type && kb->vars[i].kind != V_PARAM &&
        fcl__dtype_real_part(kb->vars[i].dtype) == FCL_FLOAT64)
      return false;
  return true;
}

static fcl_dtype type_of(const fcl_kbuilder *kb, const fcl__expr *e, int depth);

static fcl_dtype var_type(const fcl_kbuilder *kb, const fcl__var *v, int depth) {
  if (!v->auto_type) return v->kind == V_PARAM ? FCL_INT32 : v->dtype;
  for (size_t i = 0; i < kb->ninsns && depth < 16; ++i) {
    const fcl__expr *l = kb->insns[i].lhs;
    if (l && !strcmp(l->text, v->name)) return type_of(kb, kb->insns[i].rhs, depth + 1);
  }
  return FCL_INT32;
}

static fcl_dtype cast_type(const char *name) {
  static const struct {
    const char *n;
    fcl_dtype t;
  } map[] = {{"double", FCL_FLOAT64}, {"float", FCL_FLOAT32}, {"ulong", FCL_UINT64},
             {"long", FCL_INT64},     {"uint", FCL_UINT32},   {"size_t", FCL_UINT64}};
  for (size_t i = 0; i < sizeof map / sizeof *map; ++i)
    if (!strcmp(map[i].n, name)) return map[i].t;
  return FCL_INT32;
}

static fcl_dtype type_of(const fcl_kbuilder *kb, const fcl__expr *e, int depth) {
  switch (e->kind) {
    case E_NUM:
      if (fcl__expr_is_float_literal(e)) {
        char last = e->text[strlen(e->text) - 1];
        return (last == 'f' || last == 'F' || fcl__kb_literals_float(kb)) ? FCL_FLOAT32
                                                                          : FCL_FLOAT64;
      }
      return strpbrk(e->text, "lL") ? FCL_INT64 : FCL_INT32;
    case E_VAR:
    case E_SUBSCRIPT: {
      const fcl__var *v = fcl__kb_var(kb, e->text);
      if (v) return var_type(kb, v, depth);
      if (!strncmp(e->text, "M_", 2) || !strcmp(e->text, "INFINITY") || !strcmp(e->text, "NAN"))
        return fcl__kb_literals_float(kb) ? FCL_FLOAT32 : FCL_FLOAT64;
      return FCL_INT32; /* inames */
    }
    case E_CAST: return cast_type(e->text);
    case E_UNARY: return e->text[0] == '!' ? FCL_INT32 : type_of(kb, e->kids[0], depth);
    case E_BINARY: {
      static const char *logical[] = {"<", "<=", ">", ">=", "==", "!=", "&&", "||"};
      for (size_t i = 0; i < sizeof logical / sizeof *logical; ++i)
        if (!strcmp(e->text, logical[i])) return FCL_INT32;
      return promote(type_of(kb, e->kids[0], depth), type_of(kb, e->kids[1], depth));
    }
    case E_TERNARY: return promote(type_of(kb, e->kids[1], depth), type_of(kb, e->kids[2], depth));
    case E_CALL: {
      fcl_dtype t = FCL_INT32;
      for (size_t i = 0; i < e->nkids; ++i) t = promote(t, type_of(kb, e->kids[i], depth));
      if (!strcmp(e->text, "complex")) /* complex(re, im): at least float */
        return promote(t, fcl__kb_literals_float(kb) ? FCL_COMPLEX64 : FCL_COMPLEX128);
      if (fcl__dtype_complex(t) &&
          (!strcmp(e->text, "real") || !strcmp(e->text, "imag") || !strcmp(e->text, "abs")))
        return fcl__dtype_real_part(t);
      return t;
    }
    case E_REDUCE: return type_of(kb, e->kids[0], depth);
  }
  return FCL_INT32;
}

fcl_dtype fcl__kb_type_of(const fcl_kbuilder *kb, const fcl__expr *e) { return type_of(kb, e, 0); }

/* ---------------- declarations ---------------- */

static bool is_ident(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (; *s; ++s)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return true;
}

static fcl_status check_new_name(const fcl_kbuilder *kb, const char *name, const char *what) {
  if (!is_ident(name))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': %s name '%s' is not a C identifier",
                     kb->name, what, name ? name : "(null)");
  if (fcl__kb_var(kb, name) || fcl__kb_iname(kb, name))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': %s '%s': the name is already used",
                     kb->name, what, name);
  return FCL_OK;
}

static bool only_params(const fcl_kbuilder *kb, const fcl__expr *e, const char **bad) {
  if (e->kind == E_VAR) {
    const fcl__var *v = fcl__kb_var(kb, e->text);
    if (!v || v->kind != V_PARAM) {
      *bad = e->text;
      return false;
    }
  }
  for (size_t i = 0; i < e->nkids; ++i)
    if (!only_params(kb, e->kids[i], bad)) return false;
  return true;
}

/* Parse "a, b + 1" into shape expressions of parameters. */
static fcl_status parse_shape(const fcl_kbuilder *kb, const char *name, const char *shape,
                              fcl__var *v) {
  v->ndim = 0;
  const char *s = shape ? shape : "";
  while (*s && isspace((unsigned char)*s)) s++;
  if (*s == '(') s++; /* "(n, m)" as in numpy */
  while (*s) {
    while (*s && isspace((unsigned char)*s)) s++;
    if (!*s || *s == ')') break;
    const char *end, *err;
    fcl__expr *e = fcl__expr_parse_prefix(s, &end, &err);
    if (!e)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': shape of '%s' (%s): %s at '%s'",
                       kb->name, name, shape, err, end);
    if (v->ndim == FCL_KB_MAX_DIMS) {
      fcl__expr_free(e);
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': shape of '%s' (%s): more than %d "
                       "dimensions",
                       kb->name, name, shape, FCL_KB_MAX_DIMS);
    }
    v->shape[v->ndim++] = e;
    const char *bad = NULL;
    if (!only_params(kb, e, &bad))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': shape of '%s' (%s): '%s' is not a "
                       "parameter",
                       kb->name, name, shape, bad);
    s = end;
    while (*s && isspace((unsigned char)*s)) s++;
    if (*s == ',')
      s++;
    else if (*s && *s != ')')
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': shape of '%s' (%s): expected ',' "
                       "at '%s'",
                       kb->name, name, shape, s);
  }
  return FCL_OK;
}

static fcl_status add_var(fcl_kbuilder *kb, const fcl__var *proto, const char *shape) {
  fcl__var v = *proto;
  v.ndim = 0;
  fcl_status st = parse_shape(kb, proto->name, shape, &v);
  fcl__var *grown = st == FCL_OK ? realloc(kb->vars, (kb->nvars + 1) * sizeof *grown) : NULL;
  if (st == FCL_OK && (!grown || !(v.name = strdup(proto->name)))) {
    if (grown) kb->vars = grown;
    st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel '%s': variable '%s'", kb->name, proto->name);
  }
  if (st != FCL_OK) {
    for (size_t d = 0; d < v.ndim; ++d) fcl__expr_free(v.shape[d]);
    return st;
  }
  kb->vars = grown;
  kb->vars[kb->nvars++] = v;
  return FCL_OK;
}

static bool valid_dtype(fcl_dtype t) { return fcl_dtype_size(t) != 0; }

fcl_status fcl_kbuilder_add_param(fcl_kbuilder *kb, const char *name) {
  FCL_CHECK_NULL(kb, 1);
  FCL_TRY(check_new_name(kb, name, "parameter"));
  fcl__var v = {.name = (char *)name, .kind = V_PARAM, .dtype = FCL_INT32, .lower = INT64_MIN};
  return add_var(kb, &v, NULL);
}

fcl_status fcl_kbuilder_add_array(fcl_kbuilder *kb, const char *name, fcl_dtype dtype,
                                  const char *shape) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_ARG(valid_dtype(dtype), 3, "dtype", "is not a valid fcl_dtype");
  FCL_CHECK_ARG(shape && *shape, 4, "shape", "must name at least one dimension");
  FCL_TRY(check_new_name(kb, name, "array"));
  fcl__var v = {.name = (char *)name, .kind = V_ARRAY, .dtype = dtype};
  return add_var(kb, &v, shape);
}

fcl_status fcl_kbuilder_add_scalar(fcl_kbuilder *kb, const char *name, fcl_dtype dtype) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_ARG(valid_dtype(dtype), 3, "dtype", "is not a valid fcl_dtype");
  FCL_TRY(check_new_name(kb, name, "scalar"));
  fcl__var v = {.name = (char *)name, .kind = V_SCALAR, .dtype = dtype};
  return add_var(kb, &v, NULL);
}

fcl_status fcl_kbuilder_add_temporary(fcl_kbuilder *kb, const char *name, fcl_dtype dtype,
                                      fcl_temp_scope scope, const char *shape) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_ARG(valid_dtype(dtype), 3, "dtype", "is not a valid fcl_dtype");
  FCL_CHECK_ARG(scope == FCL_TEMP_PRIVATE || scope == FCL_TEMP_LOCAL, 4, "scope",
                "must be FCL_TEMP_PRIVATE or FCL_TEMP_LOCAL");
  FCL_TRY(check_new_name(kb, name, "temporary"));
  fcl__var v = {.name = (char *)name, .kind = V_TEMP, .dtype = dtype, .scope = scope};
  FCL_TRY(add_var(kb, &v, shape));
  fcl__var *t = &kb->vars[kb->nvars - 1];
  for (size_t d = 0; d < t->ndim; ++d) {
    int64_t n;
    if (!fcl__kb_const(kb, t->shape[d], &n) || n <= 0) {
      var_free(t);
      kb->nvars--;
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': temporary '%s': shape (%s) must "
                       "be positive constants (fix the parameters first)",
                       kb->name, name, shape);
    }
  }
  return FCL_OK;
}

/* Public argument queries. */
size_t fcl_kbuilder_num_params(const fcl_kbuilder *kb) {
  size_t n = 0;
  for (size_t i = 0; kb && i < kb->nvars; ++i)
    n += kb->vars[i].kind == V_PARAM && !kb->vars[i].fixed;
  return n;
}

const char *fcl_kbuilder_param_name(const fcl_kbuilder *kb, size_t i) {
  for (size_t k = 0; kb && k < kb->nvars; ++k)
    if (kb->vars[k].kind == V_PARAM && !kb->vars[k].fixed && i-- == 0) return kb->vars[k].name;
  return NULL;
}

static const fcl__var *arg_at(const fcl_kbuilder *kb, size_t i) {
  for (size_t k = 0; kb && k < kb->nvars; ++k)
    if ((kb->vars[k].kind == V_ARRAY || kb->vars[k].kind == V_SCALAR) && i-- == 0)
      return &kb->vars[k];
  return NULL;
}

size_t fcl_kbuilder_num_args(const fcl_kbuilder *kb) {
  size_t n = 0;
  for (size_t i = 0; kb && i < kb->nvars; ++i)
    n += kb->vars[i].kind == V_ARRAY || kb->vars[i].kind == V_SCALAR;
  return n;
}

fcl_status fcl_kbuilder_arg(const fcl_kbuilder *kb, size_t i, const char **name, bool *is_array,
                            fcl_dtype *dtype, bool *written) {
  FCL_CHECK_NULL(kb, 1);
  const fcl__var *v = arg_at(kb, i);
  if (!v)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (i): kernel '%s' has %zu arguments",
                     kb->name, fcl_kbuilder_num_args(kb));
  if (name) *name = v->name;
  if (is_array) *is_array = v->kind == V_ARRAY;
  if (dtype) *dtype = v->dtype;
  if (written) *written = v->written;
  return FCL_OK;
}

fcl_status fcl_kbuilder_arg_shape(const fcl_kbuilder *kb, size_t i, const int64_t *param_values,
                                  size_t *ndim, size_t shape[FCL_KB_MAX_DIMS]) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_ARG(param_values || fcl_kbuilder_num_params(kb) == 0, 3, "param_values",
                "must not be NULL when the kernel has parameters");
  FCL_CHECK_NULL(ndim, 4);
  FCL_CHECK_NULL(shape, 5);
  const fcl__var *v = arg_at(kb, i);
  if (!v || v->kind != V_ARRAY)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (i): argument %zu of kernel '%s' is "
                     "not an array",
                     i, kb->name);
  *ndim = v->ndim;
  for (size_t d = 0; d < v->ndim; ++d) {
    int64_t n;
    if (!fcl__kb_eval(kb, v->shape[d], param_values, &n) || n < 0)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': shape of '%s' is negative or "
                       "cannot be evaluated for these parameter values",
                       kb->name, v->name);
    shape[d] = (size_t)n;
  }
  return FCL_OK;
}

/* ---------------- domains ---------------- */

static bool is_relational(const fcl__expr *e) {
  return e->kind == E_BINARY && (!strcmp(e->text, "<") || !strcmp(e->text, "<=") ||
                                 !strcmp(e->text, ">") || !strcmp(e->text, ">="));
}

/* A chain "a <= i < b" parses as ((a <= i) < b): flatten it into terms and operators. */
static size_t flatten_chain(fcl__expr *e, fcl__expr **terms, const char **ops, size_t cap) {
  if (!is_relational(e)) {
    terms[0] = e;
    return 1;
  }
  size_t n = flatten_chain(e->kids[0], terms, ops, cap);
  if (n >= cap) return cap + 1;
  ops[n - 1] = e->text;
  terms[n] = e->kids[1];
  return n + 1;
}

fcl_status fcl_kbuilder_add_domain(fcl_kbuilder *kb, const char *domain) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(domain, 2);
  const char *s = strchr(domain, '{'), *colon = s ? strchr(s, ':') : NULL;
  const char *lb = s ? strchr(s, '[') : NULL, *rb = lb ? strchr(lb, ']') : NULL;
  const char *close = colon ? strrchr(colon, '}') : NULL;
  if (!s || !lb || !rb || !colon || !close || rb > colon)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': domain '%s': expected "
                     "\"{ [i, j]: 0 <= i < n and 0 <= j < m }\"",
                     kb->name, domain);
  enum { MAXN = 8 };
  char names[MAXN][64];
  fcl__expr *lo[MAXN] = {0}, *hi[MAXN] = {0};
  size_t n = 0;
  fcl_status st = FCL_OK;
  for (const char *p = lb + 1; p < rb && st == FCL_OK;) {
    while (p < rb && (isspace((unsigned char)*p) || *p == ',')) p++;
    const char *q = p;
    while (q < rb && (isalnum((unsigned char)*q) || *q == '_')) q++;
    if (q == p) {
      if (p < rb)
        st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': domain '%s': bad iname list",
                       kb->name, domain);
      break;
    }
    if (n == MAXN || (size_t)(q - p) >= sizeof names[0]) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': domain '%s': at most %d inames of "
                     "at most 63 characters",
                     kb->name, domain, MAXN);
      break;
    }
    memcpy(names[n], p, (size_t)(q - p));
    names[n][q - p] = '\0';
    st = check_new_name(kb, names[n], "iname");
    for (size_t k = 0; st == FCL_OK && k < n; ++k)
      if (!strcmp(names[k], names[n]))
        st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': domain '%s': iname '%s' twice",
                       kb->name, domain, names[n]);
    n++;
    p = q;
  }
  /* conditions: split on the word "and" */
  char *conds = strndup(colon + 1, (size_t)(close - colon - 1));
  if (!conds && st == FCL_OK) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "domain");
  for (char *c = conds; st == FCL_OK && c && *c;) {
    char *and = strstr(c, " and ");
    if (and) *and = '\0';
    const char *err;
    size_t pos;
    fcl__expr *e = fcl__expr_parse(c, &err, &pos);
    if (!e) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "kernel '%s': domain '%s': condition '%s': %s",
                     kb->name, domain, c, err);
      break;
    }
    fcl__expr *terms[4];
    const char *ops[3];
    size_t nt = flatten_chain(e, terms, ops, 3);
    for (size_t t = 0; st == FCL_OK && nt >= 2 && nt <= 3 && t < nt; ++t) {
      if (terms[t]->kind != E_VAR) continue;
      size_t k = 0;
      while (k < n && strcmp(names[k], terms[t]->text)) k++;
      if (k == n) continue;
      /* bounds on either side: "x OP i" gives lo or hi depending on OP */
      for (int side = -1; side <= 1; side += 2) {
        if ((side < 0 && t == 0) || (side > 0 && t + 1 >= nt)) continue;
        size_t o = side < 0 ? t - 1 : t + 1; /* the other term */
        const char *op = ops[side < 0 ? t - 1 : t];
        const char *bad = NULL;
        if (!only_params(kb, terms[o], &bad)) {
          st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "kernel '%s': domain '%s': bound '%s' of "
                         "iname '%s' may only use parameters (rectangular domains)",
                         kb->name, domain, bad, names[k]);
          break;
        }
        /* normalise to "other OP' i" with OP' in {<, <=} for a lower bound, etc. */
        bool less = op[0] == '<', strict = op[1] != '=';
        bool is_lower = side < 0 ? less : !less;
        fcl__expr *b = fcl__expr_clone(terms[o]);
        if (is_lower && strict) b = fcl__expr_binary("+", b, fcl__expr_num(1));
        if (!is_lower && !strict) b = fcl__expr_binary("+", b, fcl__expr_num(1));
        fcl__expr **slot = is_lower ? &lo[k] : &hi[k];
        if (*slot) {
          fcl__expr_free(b);
          st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "kernel '%s': domain '%s': iname '%s' has two "
                         "%s bounds",
                         kb->name, domain, names[k], is_lower ? "lower" : "upper");
          break;
        }
        *slot = b;
      }
    }
    if (st == FCL_OK && (nt < 2 || nt > 3))
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': domain '%s': condition '%s' is not "
                     "'a <= i < b'",
                     kb->name, domain, c);
    fcl__expr_free(e);
    c = and? and+5 : NULL;
  }
  free(conds);
  for (size_t k = 0; st == FCL_OK && k < n; ++k)
    if (!lo[k] || !hi[k])
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "kernel '%s': domain '%s': iname '%s' has no %s "
                     "bound",
                     kb->name, domain, names[k], lo[k] ? "upper" : "lower");
  fcl__iname *grown = NULL;
  char *text = NULL;
  char **doms = NULL;
  if (st == FCL_OK) {
    grown = realloc(kb->inames, (kb->ninames + n) * sizeof *grown);
    if (grown) kb->inames = grown;
    doms = realloc(kb->domains, (kb->ndomains + 1) * sizeof *doms);
    if (doms) kb->domains = doms;
    text = strdup(domain);
    if (!grown || !doms || !text) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "domain");
  }
  for (size_t k = 0; st == FCL_OK && k < n; ++k) {
    char *nm = strdup(names[k]);
    if (!nm) {
      st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "domain");
      break;
    }
    kb->inames[kb->ninames] = (fcl__iname){
        .name = nm, .lo = lo[k], .hi = hi[k], .tag = TAG_NONE, .priority = -1};
    lo[k] = hi[k] = NULL;
    kb->ninames++;
  }
  if (st == FCL_OK)
    kb->domains[kb->ndomains++] = text;
  else
    free(text);
  for (size_t k = 0; k < n; ++k) {
    fcl__expr_free(lo[k]);
    fcl__expr_free(hi[k]);
  }
  return st;
}
