/* A kernel's signature from its C++ symbol: kernels are compiled with C++ linkage (the CUDA
 * prelude's FCL_KERNEL), so the Itanium-mangled name NVRTC gives each one spells its parameters'
 * types, which CUDA's driver does not report. The subset read here is what a kernel's
 * parameters can be: builtin types, named types (vectors, structs), the local-memory parameter
 * template, pointers, qualifiers and substitutions. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"

typedef struct {
  fcl_arg_kind kind;
  char type[64];
  size_t size;
} type_info;

typedef struct {
  const char *p;
  type_info subs[64]; /* substitution candidates, in order */
  int nsubs;
  bool bad;
} parser;

static void add_sub(parser *ps, const type_info *t) {
  if (ps->nsubs < 64) ps->subs[ps->nsubs++] = *t;
}

static const struct {
  char code;
  const char *name;
  size_t size;
} builtins[] = {{'v', "void", 0},  {'b', "bool", 1},  {'c', "char", 1},   {'a', "char", 1},
                {'h', "uchar", 1}, {'s', "short", 2}, {'t', "ushort", 2}, {'i', "int", 4},
                {'j', "uint", 4},  {'l', "long", 8},  {'m', "ulong", 8},  {'x', "long", 8},
                {'y', "ulong", 8}, {'f', "float", 4}, {'d', "double", 8}};

/* Bytes of a named vector type as OpenCL lays it out (0: unknown, unchecked). */
static size_t named_size(const char *name) {
  static const struct {
    const char *prefix;
    size_t lane;
  } lanes[] = {{"double", 8}, {"float", 4},  {"ulong", 8}, {"long", 8},  {"uint", 4},
               {"int", 4},    {"ushort", 2}, {"short", 2}, {"uchar", 1}, {"char", 1}};
  for (size_t i = 0; i < sizeof lanes / sizeof *lanes; ++i) {
    size_t n = strlen(lanes[i].prefix);
    if (strncmp(name, lanes[i].prefix, n) == 0 && isdigit((unsigned char)name[n])) {
      int w = atoi(name + n);
      return (size_t)(w == 3 ? 4 : w) * lanes[i].lane;
    }
  }
  return 0;
}

static void parse_type(parser *ps, type_info *out);

/* Template arguments I<type>E after the template t (its name): the local-memory parameter
 * fcl__local_param<T> becomes a local T*; the instantiation is a substitution candidate. */
static void instantiate(parser *ps, type_info *t) {
  ps->p++;
  type_info arg;
  parse_type(ps, &arg);
  if (*ps->p != 'E') {
    ps->bad = true;
    return;
  }
  ps->p++;
  if (strcmp(t->type, "fcl__local_param") == 0) {
    t->kind = FCL_ARG_LOCAL;
    snprintf(t->type, sizeof t->type, "%.62s*", arg.type);
    t->size = 0;
  }
  add_sub(ps, t);
}

/* <number><identifier>, into buf. */
static bool source_name(parser *ps, char *buf, size_t size) {
  char *end;
  long n = strtol(ps->p, &end, 10);
  if (end == ps->p || n <= 0 || (size_t)n >= size || strlen(end) < (size_t)n) return false;
  memcpy(buf, end, (size_t)n);
  buf[n] = '\0';
  ps->p = end + n;
  return true;
}

static void parse_type(parser *ps, type_info *out) {
  memset(out, 0, sizeof *out);
  const char c = *ps->p;
  for (size_t i = 0; i < sizeof builtins / sizeof *builtins; ++i)
    if (c == builtins[i].code) {
      ps->p++;
      out->kind = FCL_ARG_SCALAR;
      snprintf(out->type, sizeof out->type, "%s", builtins[i].name);
      out->size = builtins[i].size;
      return;
    }
  if (c == 'K' || c == 'V' || c == 'r') { /* a qualified type: the qualifier drops out */
    ps->p++;
    parse_type(ps, out);
    add_sub(ps, out);
    return;
  }
  if (c == 'P') {
    ps->p++;
    type_info pointee;
    parse_type(ps, &pointee);
    out->kind = FCL_ARG_GLOBAL;
    snprintf(out->type, sizeof out->type, "%.62s*", pointee.type);
    add_sub(ps, out);
    return;
  }
  if (c == 'S') { /* S_ is the first candidate, S<base 36>_ the ones after */
    ps->p++;
    int index = 0;
    if (*ps->p != '_') {
      char *end;
      index = (int)strtol(ps->p, &end, 36) + 1;
      ps->p = end;
    }
    if (*ps->p != '_' || index >= ps->nsubs) {
      ps->bad = true;
      return;
    }
    ps->p++;
    *out = ps->subs[index];
    if (*ps->p == 'I') instantiate(ps, out); /* a template named by a substitution */
    return;
  }
  if (isdigit((unsigned char)c)) {
    char name[64];
    if (!source_name(ps, name, sizeof name)) {
      ps->bad = true;
      return;
    }
    if (strcmp(name, "double4_32a") == 0) strcpy(name, "double4"); /* the prelude's double4 */
    type_info named = {FCL_ARG_SCALAR, "", named_size(name)};
    snprintf(named.type, sizeof named.type, "%s", name);
    add_sub(ps, &named);
    if (*ps->p == 'I') instantiate(ps, &named);
    *out = named;
    return;
  }
  ps->bad = true;
}

fcl_status fcl__cuda_signature(const char *symbol, char **name, unsigned *num_args,
                               fcl__arg_meta **args) {
  *name = NULL;
  *num_args = 0;
  *args = NULL;
  if (strncmp(symbol, "_Z", 2) != 0) { /* C linkage: the name alone */
    *name = strdup(symbol);
    return *name ? FCL_OK : FCL_ERR_OUT_OF_MEMORY;
  }
  parser *ps = calloc(1, sizeof *ps);
  char buf[256];
  if (!ps) return FCL_ERR_OUT_OF_MEMORY;
  ps->p = symbol + 2;
  if (!source_name(ps, buf, sizeof buf)) {
    free(ps);
    return FCL_ERR_NOT_SUPPORTED;
  }
  type_info list[256];
  unsigned n = 0;
  while (*ps->p && !ps->bad && n < 256) parse_type(ps, &list[n++]);
  if (n == 1 && strcmp(list[0].type, "void") == 0) n = 0; /* f(void) */
  fcl_status st = ps->bad ? FCL_ERR_NOT_SUPPORTED : FCL_OK;
  free(ps);
  if (st != FCL_OK) return st;
  *name = strdup(buf);
  *args = calloc(n ? n : 1, sizeof **args);
  bool ok = *name && *args;
  for (unsigned i = 0; ok && i < n; ++i) {
    (*args)[i] = (fcl__arg_meta){strdup(""), strdup(list[i].type), list[i].kind,
                                 list[i].kind == FCL_ARG_SCALAR ? list[i].size : 0};
    ok = (*args)[i].name && (*args)[i].type_name;
  }
  *num_args = n;
  return ok ? FCL_OK : FCL_ERR_OUT_OF_MEMORY;
}

/* The last identifier of text[0, n) (a parameter's name), into out. */
static void last_identifier(const char *text, size_t n, char *out, size_t size) {
  size_t end = n;
  out[0] = '\0';
  while (end > 0 && !(isalnum((unsigned char)text[end - 1]) || text[end - 1] == '_')) --end;
  size_t begin = end;
  while (begin > 0 && (isalnum((unsigned char)text[begin - 1]) || text[begin - 1] == '_')) --begin;
  if (end > begin && !isdigit((unsigned char)text[begin]) && end - begin < size) {
    memcpy(out, text + begin, end - begin);
    out[end - begin] = '\0';
  }
}

void fcl__cuda_arg_names(const char *source, const char *kernel, fcl__arg_meta *args, unsigned n) {
  const size_t len = strlen(kernel);
  for (const char *p = source; (p = strstr(p, kernel)) != NULL; p += len) {
    /* "void NAME (" : the definition, not a call */
    const char *q = p + len, *b = p;
    if (p > source && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
    while (*q == ' ' || *q == '\t' || *q == '\n') ++q;
    if (*q != '(') continue;
    while (b > source && isspace((unsigned char)b[-1])) --b;
    if (b - source < 4 || strncmp(b - 4, "void", 4) != 0) continue;
    /* the parameters: split at the commas outside parentheses */
    char names[256][64];
    unsigned count = 0;
    int depth = 0;
    const char *start = q + 1;
    bool empty = true;
    for (const char *c = q + 1; *c; ++c) {
      if (*c == '(') depth++;
      if (!isspace((unsigned char)*c) && *c != ')') empty = false;
      if ((*c == ',' && depth == 0) || (*c == ')' && depth-- == 0)) {
        if (count == 256) return;
        last_identifier(start, (size_t)(c - start), names[count], sizeof names[count]);
        count++;
        start = c + 1;
        if (*c == ')') break;
      }
    }
    if (empty) count = 0;
    if (count != n) return; /* parameters behind a macro: their names stay unknown */
    for (unsigned i = 0; i < n; ++i) {
      char *name = strdup(names[i]);
      if (!name) return;
      free(args[i].name);
      args[i].name = name;
    }
    return;
  }
}
