/* Expressions of the kernel language: OpenCL C expression syntax with multi-index subscripts
 * (a[i, j]) parsed into small trees, printed back with the fewest parentheses that keep the
 * meaning, evaluated as integers, and read as affine forms for the index analysis. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_impl.h"

/* ---------------- trees ---------------- */

fcl__expr *fcl__expr_new(fcl__expr_kind kind, const char *text, size_t nkids) {
  fcl__expr *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->kind = kind;
  e->text = strdup(text ? text : "");
  e->kids = nkids ? calloc(nkids, sizeof *e->kids) : NULL;
  e->nkids = nkids;
  if (!e->text || (nkids && !e->kids)) {
    free(e->text);
    free(e->kids);
    free(e);
    return NULL;
  }
  return e;
}

void fcl__expr_free(fcl__expr *e) {
  if (!e) return;
  for (size_t i = 0; i < e->nkids; ++i) fcl__expr_free(e->kids[i]);
  free(e->kids);
  free(e->text);
  free(e->iname);
  free(e->tag);
  free(e);
}

fcl__expr *fcl__expr_num(int64_t value) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)value);
  return fcl__expr_new(E_NUM, buf, 0);
}

fcl__expr *fcl__expr_binary(const char *op, fcl__expr *a, fcl__expr *b) {
  fcl__expr *e = (a && b) ? fcl__expr_new(E_BINARY, op, 2) : NULL;
  if (!e) {
    fcl__expr_free(a);
    fcl__expr_free(b);
    return NULL;
  }
  e->kids[0] = a;
  e->kids[1] = b;
  return e;
}

fcl__expr *fcl__expr_clone(const fcl__expr *e) {
  if (!e) return NULL;
  fcl__expr *c = fcl__expr_new(e->kind, e->text, e->nkids);
  if (!c) return NULL;
  c->id = e->id;
  if ((e->iname && !(c->iname = strdup(e->iname))) || (e->tag && !(c->tag = strdup(e->tag)))) {
    fcl__expr_free(c);
    return NULL;
  }
  for (size_t i = 0; i < e->nkids; ++i)
    if (!(c->kids[i] = fcl__expr_clone(e->kids[i]))) {
      fcl__expr_free(c);
      return NULL;
    }
  return c;
}

void fcl__expr_substitute(fcl__expr *e, const char *name, const fcl__expr *value) {
  if (!e) return;
  for (size_t i = 0; i < e->nkids; ++i) {
    fcl__expr *k = e->kids[i];
    if (k->kind == E_VAR && !strcmp(k->text, name)) {
      fcl__expr *c = fcl__expr_clone(value);
      if (c) {
        fcl__expr_free(k);
        e->kids[i] = c;
      }
    } else {
      fcl__expr_substitute(k, name, value);
    }
  }
}

bool fcl__expr_uses(const fcl__expr *e, const char *name) {
  if (!e) return false;
  if ((e->kind == E_VAR || e->kind == E_SUBSCRIPT) && !strcmp(e->text, name)) return true;
  if (e->kind == E_REDUCE && !strcmp(e->iname, name)) return true;
  for (size_t i = 0; i < e->nkids; ++i)
    if (fcl__expr_uses(e->kids[i], name)) return true;
  return false;
}

bool fcl__expr_is_float_literal(const fcl__expr *e) {
  return e->kind == E_NUM && strpbrk(e->text, ".eE") != NULL;
}

/* ---------------- parser ---------------- */

typedef struct {
  const char *s;
  size_t pos;
  const char *err;
  size_t err_pos;
} parser;

static void skip(parser *p) {
  while (isspace((unsigned char)p->s[p->pos])) p->pos++;
}

static fcl__expr *fail(parser *p, const char *msg) {
  if (!p->err) {
    p->err = msg;
    p->err_pos = p->pos;
  }
  return NULL;
}

static bool accept(parser *p, const char *tok) {
  skip(p);
  size_t n = strlen(tok);
  if (strncmp(p->s + p->pos, tok, n) != 0) return false;
  /* "<" must not match "<<" or "<=", and so on */
  char next = p->s[p->pos + n];
  if (n == 1 && strchr("<>&|=!", tok[0]) && (next == '=' || (next == tok[0] && tok[0] != '!')))
    return false;
  if (n == 2 && (tok[0] == '<' || tok[0] == '>') && tok[1] == tok[0] && next == '=') return false;
  p->pos += n;
  return true;
}

static bool is_type_name(const char *name) {
  static const char *bases[] = {"char", "uchar", "short", "ushort", "int",    "uint",
                                "long", "ulong", "float", "double", "size_t", "bool"};
  for (size_t i = 0; i < sizeof bases / sizeof *bases; ++i) {
    size_t n = strlen(bases[i]);
    if (strncmp(name, bases[i], n) != 0) continue;
    const char *rest = name + n;
    if (!*rest || !strcmp(rest, "2") || !strcmp(rest, "3") || !strcmp(rest, "4") ||
        !strcmp(rest, "8") || !strcmp(rest, "16"))
      return true;
  }
  return false;
}

static char *read_ident(parser *p) {
  skip(p);
  size_t start = p->pos;
  if (!(isalpha((unsigned char)p->s[start]) || p->s[start] == '_')) return NULL;
  while (isalnum((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_') p->pos++;
  return strndup(p->s + start, p->pos - start);
}

static fcl__expr *parse_ternary(parser *p);

static fcl__expr *parse_list(parser *p, fcl__expr *node, const char *close) {
  /* arguments or indices up to close; node grows */
  skip(p);
  if (accept(p, close)) return node;
  for (;;) {
    fcl__expr *arg = parse_ternary(p);
    if (!arg) {
      fcl__expr_free(node);
      return NULL;
    }
    fcl__expr **grown = realloc(node->kids, (node->nkids + 1) * sizeof *grown);
    if (!grown) {
      fcl__expr_free(arg);
      fcl__expr_free(node);
      return fail(p, "out of memory");
    }
    node->kids = grown;
    node->kids[node->nkids++] = arg;
    if (accept(p, close)) return node;
    if (!accept(p, ",")) {
      fcl__expr_free(node);
      return fail(p, close[0] == ')' ? "expected ',' or ')'" : "expected ',' or ']'");
    }
  }
}

static fcl__expr *parse_primary(parser *p) {
  skip(p);
  char c = p->s[p->pos];
  if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)p->s[p->pos + 1]))) {
    size_t start = p->pos;
    while (isalnum((unsigned char)p->s[p->pos]) || p->s[p->pos] == '.' ||
           ((p->s[p->pos] == '+' || p->s[p->pos] == '-') &&
            (p->s[p->pos - 1] == 'e' || p->s[p->pos - 1] == 'E') &&
            !(p->s[start] == '0' && (p->s[start + 1] == 'x' || p->s[start + 1] == 'X'))))
      p->pos++;
    char *text = strndup(p->s + start, p->pos - start);
    fcl__expr *e = text ? fcl__expr_new(E_NUM, text, 0) : NULL;
    free(text);
    if (!e) return fail(p, "out of memory");
    if (!fcl__expr_is_float_literal(e)) { /* the evaluator's int64_t must hold it */
      errno = 0;
      char *end;
      unsigned long long v = strtoull(e->text, &end, 0);
      if (errno == ERANGE || v > INT64_MAX) {
        fcl__expr_free(e);
        p->pos = start;
        return fail(p, "integer literal out of range (more than 2^63 - 1)");
      }
    }
    return e;
  }
  if (accept(p, "(")) {
    fcl__expr *e = parse_ternary(p);
    if (e && !accept(p, ")")) {
      fcl__expr_free(e);
      return fail(p, "expected ')'");
    }
    return e;
  }
  char *name = read_ident(p);
  if (!name) return fail(p, "expected a number, a name or '('");
  char *tag = NULL; /* name$tag: directly after the name */
  if (p->s[p->pos] == '$') {
    p->pos++;
    if (!(tag = read_ident(p))) {
      free(name);
      return fail(p, "expected a tag name after '$'");
    }
    skip(p);
    if (p->s[p->pos] != '[' && p->s[p->pos] != '(') {
      free(name);
      free(tag);
      return fail(p, "a '$' tag goes on an array access or a rule's use: name$tag[...] or "
                     "name$tag(...)");
    }
  }
  fcl__expr *e = NULL;
  if (accept(p, "(")) {
    e = fcl__expr_new(E_CALL, name, 0);
    e = e ? parse_list(p, e, ")") : fail(p, "out of memory");
  } else if (accept(p, "[")) {
    e = fcl__expr_new(E_SUBSCRIPT, name, 0);
    e = e ? parse_list(p, e, "]") : fail(p, "out of memory");
    if (e && e->nkids == 0) {
      fcl__expr_free(e);
      e = fail(p, "empty subscript");
    }
  } else {
    e = fcl__expr_new(E_VAR, name, 0);
    if (!e) fail(p, "out of memory");
  }
  free(name);
  if (e && tag) {
    e->tag = tag;
    tag = NULL;
  }
  free(tag);
  return e;
}

static fcl__expr *parse_unary(parser *p) {
  skip(p);
  static const char *ops[] = {"-", "+", "!", "~"};
  for (size_t i = 0; i < 4; ++i) {
    if (p->s[p->pos] == ops[i][0] && p->s[p->pos + 1] != ops[i][0] && p->s[p->pos + 1] != '=') {
      p->pos++;
      fcl__expr *k = parse_unary(p);
      if (!k) return NULL;
      fcl__expr *e = fcl__expr_new(E_UNARY, ops[i], 1);
      if (!e) {
        fcl__expr_free(k);
        return fail(p, "out of memory");
      }
      e->kids[0] = k;
      return e;
    }
  }
  /* cast: '(' type ')' */
  if (p->s[p->pos] == '(') {
    parser save = *p;
    p->pos++;
    char *name = read_ident(p);
    if (name && is_type_name(name) && accept(p, ")")) {
      fcl__expr *k = parse_unary(p);
      fcl__expr *e = k ? fcl__expr_new(E_CAST, name, 1) : NULL;
      free(name);
      if (!e) {
        fcl__expr_free(k);
        return k ? fail(p, "out of memory") : NULL;
      }
      e->kids[0] = k;
      return e;
    }
    free(name);
    *p = save;
  }
  return parse_primary(p);
}

/* Binary levels from loosest to tightest. */
static const char *const levels[][4] = {{"||", NULL},
                                        {"&&", NULL},
                                        {"|", NULL},
                                        {"^", NULL},
                                        {"&", NULL},
                                        {"==", "!=", NULL},
                                        {"<=", ">=", "<", ">"},
                                        {"<<", ">>", NULL},
                                        {"+", "-", NULL},
                                        {"*", "/", "%", NULL}};
enum { NUM_LEVELS = sizeof levels / sizeof *levels };

static fcl__expr *parse_level(parser *p, int level) {
  if (level == NUM_LEVELS) return parse_unary(p);
  fcl__expr *left = parse_level(p, level + 1);
  while (left) {
    const char *op = NULL;
    for (int i = 0; i < 4 && levels[level][i]; ++i)
      if (accept(p, levels[level][i])) {
        op = levels[level][i];
        break;
      }
    if (!op) break;
    fcl__expr *right = parse_level(p, level + 1);
    if (!right) {
      fcl__expr_free(left);
      return NULL;
    }
    left = fcl__expr_binary(op, left, right);
    if (!left) return fail(p, "out of memory");
  }
  return left;
}

static fcl__expr *parse_ternary(parser *p) {
  fcl__expr *cond = parse_level(p, 0);
  if (!cond || !accept(p, "?")) return cond;
  fcl__expr *a = parse_ternary(p);
  if (a && !accept(p, ":")) {
    fcl__expr_free(a);
    a = fail(p, "expected ':'");
  }
  fcl__expr *b = a ? parse_ternary(p) : NULL;
  fcl__expr *e = b ? fcl__expr_new(E_TERNARY, "?", 3) : NULL;
  if (!e) {
    fcl__expr_free(cond);
    fcl__expr_free(a);
    fcl__expr_free(b);
    return NULL;
  }
  e->kids[0] = cond;
  e->kids[1] = a;
  e->kids[2] = b;
  return e;
}

fcl__expr *fcl__expr_parse(const char *text, const char **err, size_t *pos) {
  parser p = {text, 0, NULL, 0};
  fcl__expr *e = parse_ternary(&p);
  skip(&p);
  if (e && p.s[p.pos]) {
    fcl__expr_free(e);
    e = fail(&p, "unexpected text after the expression");
  }
  if (!e) {
    *err = p.err ? p.err : "syntax error";
    *pos = p.err ? p.err_pos : p.pos;
  }
  return e;
}

fcl__expr *fcl__expr_parse_prefix(const char *text, const char **end, const char **err) {
  parser p = {text, 0, NULL, 0};
  fcl__expr *e = parse_ternary(&p);
  skip(&p);
  *end = text + (e ? p.pos : p.err_pos);
  if (!e) *err = p.err ? p.err : "syntax error";
  return e;
}

/* ---------------- printing ---------------- */

static int precedence(const fcl__expr *e) {
  switch (e->kind) {
    case E_TERNARY: return 1;
    case E_BINARY:
      for (int l = 0; l < NUM_LEVELS; ++l)
        for (int i = 0; i < 4 && levels[l][i]; ++i)
          if (!strcmp(levels[l][i], e->text)) return 2 + l;
      return 2;
    case E_UNARY:
    case E_CAST: return 2 + NUM_LEVELS;
    default: return 3 + NUM_LEVELS;
  }
}

static void print_child(fcl__str *out, const fcl__expr *k, int min_prec, fcl__print_hook hook,
                        void *user) {
  bool paren = precedence(k) < min_prec;
  if (paren) fcl__str_printf(out, "(");
  fcl__expr_print(out, k, hook, user);
  if (paren) fcl__str_printf(out, ")");
}

void fcl__expr_print(fcl__str *out, const fcl__expr *e, fcl__print_hook hook, void *user) {
  if (hook && hook(user, out, e)) return;
  int prec = precedence(e);
  switch (e->kind) {
    case E_NUM:
    case E_VAR: fcl__str_printf(out, "%s", e->text); break;
    case E_UNARY:
      fcl__str_printf(out, "%s", e->text);
      /* "- -x" must not print as "--x" */
      if (e->kids[0]->kind == E_UNARY) fcl__str_printf(out, " ");
      print_child(out, e->kids[0], prec, hook, user);
      break;
    case E_CAST:
      fcl__str_printf(out, "(%s)", e->text);
      print_child(out, e->kids[0], prec, hook, user);
      break;
    case E_BINARY:
      print_child(out, e->kids[0], prec, hook, user);
      fcl__str_printf(out, " %s ", e->text);
      print_child(out, e->kids[1], prec + 1, hook, user); /* left to right: keep (a - (b - c)) */
      break;
    case E_TERNARY:
      print_child(out, e->kids[0], prec + 1, hook, user);
      fcl__str_printf(out, " ? ");
      print_child(out, e->kids[1], prec, hook, user);
      fcl__str_printf(out, " : ");
      print_child(out, e->kids[2], prec, hook, user);
      break;
    case E_CALL:
    case E_SUBSCRIPT:
      fcl__str_printf(out, "%s%s%s%s", e->text, e->tag ? "$" : "", e->tag ? e->tag : "",
                      e->kind == E_CALL ? "(" : "[");
      for (size_t i = 0; i < e->nkids; ++i) {
        if (i) fcl__str_printf(out, ", ");
        fcl__expr_print(out, e->kids[i], hook, user);
      }
      fcl__str_printf(out, "%s", e->kind == E_CALL ? ")" : "]");
      break;
    case E_REDUCE:
      fcl__str_printf(out, "%s(%s, ", e->text, e->iname);
      fcl__expr_print(out, e->kids[0], hook, user);
      fcl__str_printf(out, ")");
      break;
  }
}

char *fcl__expr_text(const fcl__expr *e) {
  fcl__str b = {0};
  fcl__expr_print(&b, e, NULL, NULL);
  if (b.failed) {
    free(b.s);
    return NULL;
  }
  return b.s ? b.s : strdup("");
}

/* ---------------- integer evaluation ---------------- */

bool fcl__expr_eval(const fcl__expr *e, fcl__lookup lookup, void *user, int64_t *value) {
  int64_t a = 0, b = 0, c = 0;
  switch (e->kind) {
    case E_NUM: {
      if (fcl__expr_is_float_literal(e)) return false;
      char *end;
      errno = 0;
      long long v = strtoll(e->text, &end, 0);
      while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L') end++;
      if (*end || errno == ERANGE) return false;
      *value = v;
      return true;
    }
    case E_VAR: return lookup && lookup(user, e->text, value);
    case E_UNARY:
      if (!fcl__expr_eval(e->kids[0], lookup, user, &a)) return false;
      if (e->text[0] == '-' && a == INT64_MIN) return false; /* no value: it overflows */
      *value = e->text[0] == '-' ? -a : e->text[0] == '+' ? a : e->text[0] == '!' ? !a : ~a;
      return true;
    case E_CAST: return fcl__expr_eval(e->kids[0], lookup, user, value);
    case E_TERNARY:
      if (!fcl__expr_eval(e->kids[0], lookup, user, &a)) return false;
      return fcl__expr_eval(e->kids[a ? 1 : 2], lookup, user, value);
    case E_CALL:
      if (e->nkids != 2 || (strcmp(e->text, "min") && strcmp(e->text, "max"))) return false;
      if (!fcl__expr_eval(e->kids[0], lookup, user, &a) ||
          !fcl__expr_eval(e->kids[1], lookup, user, &b))
        return false;
      *value = (e->text[1] == 'i') == (a < b) ? a : b;
      return true;
    case E_BINARY: {
      if (!fcl__expr_eval(e->kids[0], lookup, user, &a) ||
          !fcl__expr_eval(e->kids[1], lookup, user, &b))
        return false;
      const char *op = e->text;
      /* an operation that overflows int64_t has no value here (C leaves it undefined) */
      if (!strcmp(op, "+")) {
        if (__builtin_add_overflow(a, b, &c)) return false;
      } else if (!strcmp(op, "-")) {
        if (__builtin_sub_overflow(a, b, &c)) return false;
      } else if (!strcmp(op, "*")) {
        if (__builtin_mul_overflow(a, b, &c)) return false;
      } else if (!strcmp(op, "/") || !strcmp(op, "%")) {
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        c = op[0] == '/' ? a / b : a % b;
      } else if (!strcmp(op, "<"))
        c = a < b;
      else if (!strcmp(op, "<="))
        c = a <= b;
      else if (!strcmp(op, ">"))
        c = a > b;
      else if (!strcmp(op, ">="))
        c = a >= b;
      else if (!strcmp(op, "=="))
        c = a == b;
      else if (!strcmp(op, "!="))
        c = a != b;
      else if (!strcmp(op, "&&"))
        c = a && b;
      else if (!strcmp(op, "||"))
        c = a || b;
      else if (!strcmp(op, "<<")) {
        if (a < 0 || b < 0 || b > 62 || a > (INT64_MAX >> b)) return false;
        c = a << b;
      } else if (!strcmp(op, ">>")) {
        if (b < 0 || b > 63) return false;
        c = a >> b;
      } else if (!strcmp(op, "&"))
        c = a & b;
      else if (!strcmp(op, "|"))
        c = a | b;
      else if (!strcmp(op, "^"))
        c = a ^ b;
      else
        return false;
      *value = c;
      return true;
    }
    default: return false;
  }
}

/* ---------------- affine forms ---------------- */

int64_t fcl__affine_coef(const fcl__affine *a, const char *sym) {
  for (size_t i = 0; i < a->n; ++i)
    if (!strcmp(a->sym[i], sym)) return a->coef[i];
  return 0;
}

void fcl__affine_add(fcl__affine *a, const char *sym, int64_t coef) {
  for (size_t i = 0; i < a->n; ++i)
    if (!strcmp(a->sym[i], sym)) {
      a->coef[i] += coef;
      return;
    }
  if (a->n < FCL__AFFINE_MAX && coef) {
    a->sym[a->n] = sym;
    a->coef[a->n++] = coef;
  }
}

static void affine_scale(fcl__affine *a, int64_t k) {
  a->constant *= k;
  for (size_t i = 0; i < a->n; ++i) a->coef[i] *= k;
}

static bool affine_is_const(const fcl__affine *a) {
  for (size_t i = 0; i < a->n; ++i)
    if (a->coef[i]) return false;
  return true;
}

bool fcl__affine_of(const fcl__expr *e, fcl__expand expand, void *user, fcl__affine *out) {
  memset(out, 0, sizeof *out);
  fcl__affine a, b;
  switch (e->kind) {
    case E_NUM: return fcl__expr_eval(e, NULL, NULL, &out->constant);
    case E_VAR: {
      const fcl__expr *x = expand ? expand(user, e->text) : NULL;
      if (x) return fcl__affine_of(x, expand, user, out);
      fcl__affine_add(out, e->text, 1);
      return out->n == 1;
    }
    case E_CAST: return fcl__affine_of(e->kids[0], expand, user, out);
    case E_UNARY:
      if (e->text[0] != '-' && e->text[0] != '+') return false;
      if (!fcl__affine_of(e->kids[0], expand, user, out)) return false;
      if (e->text[0] == '-') affine_scale(out, -1);
      return true;
    case E_BINARY:
      if (!fcl__affine_of(e->kids[0], expand, user, &a) ||
          !fcl__affine_of(e->kids[1], expand, user, &b))
        return false;
      if (!strcmp(e->text, "+") || !strcmp(e->text, "-")) {
        int64_t s = e->text[0] == '-' ? -1 : 1;
        *out = a;
        out->constant += s * b.constant;
        for (size_t i = 0; i < b.n; ++i) fcl__affine_add(out, b.sym[i], s * b.coef[i]);
        return true;
      }
      if (!strcmp(e->text, "*")) {
        if (affine_is_const(&a)) {
          *out = b;
          affine_scale(out, a.constant);
          return true;
        }
        if (affine_is_const(&b)) {
          *out = a;
          affine_scale(out, b.constant);
          return true;
        }
        return false;
      }
      if ((!strcmp(e->text, "/") || !strcmp(e->text, "%")) && affine_is_const(&a) &&
          affine_is_const(&b) && b.constant) {
        out->constant = e->text[0] == '/' ? a.constant / b.constant : a.constant % b.constant;
        return true;
      }
      return false;
    default: return false;
  }
}

/* ---------------- folding ---------------- */

static bool is_int(const fcl__expr *e, int64_t v) {
  int64_t x;
  return e->kind == E_NUM && fcl__expr_eval(e, NULL, NULL, &x) && x == v;
}

/* Fold integer constants and drop "+ 0", "* 1" in index arithmetic (in place). */
fcl__expr *fcl__expr_fold(fcl__expr *e) {
  if (!e) return NULL;
  for (size_t i = 0; i < e->nkids; ++i) e->kids[i] = fcl__expr_fold(e->kids[i]);
  if (e->kind != E_BINARY) return e;
  int64_t v;
  const char *op = e->text;
  bool additive = !strcmp(op, "+") || !strcmp(op, "-");
  if ((additive || !strcmp(op, "*")) && fcl__expr_eval(e, NULL, NULL, &v)) {
    fcl__expr *n = fcl__expr_num(v);
    if (n) {
      fcl__expr_free(e);
      return n;
    }
    return e;
  }
  fcl__expr *keep = NULL;
  if (additive && is_int(e->kids[1], 0))
    keep = e->kids[0];
  else if (!strcmp(op, "+") && is_int(e->kids[0], 0))
    keep = e->kids[1];
  else if (!strcmp(op, "*") && is_int(e->kids[1], 1))
    keep = e->kids[0];
  else if (!strcmp(op, "*") && is_int(e->kids[0], 1))
    keep = e->kids[1];
  if (!keep) return e;
  /* detach the kept child and free the rest */
  for (size_t i = 0; i < e->nkids; ++i)
    if (e->kids[i] == keep) e->kids[i] = NULL;
  for (size_t i = 0; i < e->nkids; ++i) fcl__expr_free(e->kids[i]);
  e->nkids = 0;
  fcl__expr_free(e);
  return keep;
}
