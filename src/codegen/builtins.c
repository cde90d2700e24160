/* The OpenCL C built-in functions an instruction may call (OpenCL C 1.2 §6.12: math, integer,
 * common, geometric and relational functions, with their half_ and native_ forms, conversions
 * convert_T and reinterpretations as_T) and the constants it may name undeclared: a call to any
 * other name, once the rules are inlined, is refused when the instruction is added rather than
 * left to the OpenCL compiler. The complex functions conj, real, imag and complex(re, im) are
 * flowcl's own (emit_complex.c). */
#include <stdio.h>
#include <string.h>

#include "codegen_impl.h"

static const char *const names[] = {
    /* math */
    "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atan2", "atanh", "atanpi",
    "atan2pi", "cbrt", "ceil", "copysign", "cos", "cosh", "cospi", "erfc", "erf", "exp", "exp2",
    "exp10", "expm1", "fabs", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "fract", "frexp",
    "hypot", "ilogb", "ldexp", "lgamma", "lgamma_r", "log", "log2", "log10", "log1p", "logb", "mad",
    "maxmag", "minmag", "modf", "nan", "nextafter", "pow", "pown", "powr", "remainder", "remquo",
    "rint", "rootn", "round", "rsqrt", "sin", "sincos", "sinh", "sinpi", "sqrt", "tan", "tanh",
    "tanpi", "tgamma", "trunc",
    /* integer */
    "abs", "abs_diff", "add_sat", "hadd", "rhadd", "clz", "ctz", "mad_hi", "mad_sat", "mul_hi",
    "rotate", "sub_sat", "upsample", "popcount", "mad24", "mul24",
    /* common */
    "clamp", "degrees", "max", "min", "mix", "radians", "step", "smoothstep", "sign",
    /* geometric */
    "cross", "dot", "distance", "length", "normalize", "fast_distance", "fast_length",
    "fast_normalize",
    /* relational */
    "isequal", "isnotequal", "isgreater", "isgreaterequal", "isless", "islessequal",
    "islessgreater", "isfinite", "isinf", "isnan", "isnormal", "isordered", "isunordered",
    "signbit", "any", "all", "bitselect", "select"};

/* the functions that also come as half_NAME and native_NAME */
static const char *const fast[] = {"cos",   "divide", "exp",   "exp2",  "exp10", "log",  "log2",
                                   "log10", "powr",   "recip", "rsqrt", "sin",   "sqrt", "tan"};

bool fcl__cl_builtin_function(const char *name) {
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
    if (!strcmp(name, names[i])) return true;
  const char *rest = !strncmp(name, "half_", 5)     ? name + 5
                     : !strncmp(name, "native_", 7) ? name + 7
                                                    : NULL;
  for (size_t i = 0; rest && i < sizeof fast / sizeof *fast; ++i)
    if (!strcmp(rest, fast[i])) return true;
  return !strncmp(name, "convert_", 8) || !strncmp(name, "as_", 3);
}

int fcl__complex_function_arity(const char *name) {
  if (!strcmp(name, "conj") || !strcmp(name, "real") || !strcmp(name, "imag")) return 1;
  return !strcmp(name, "complex") ? 2 : 0;
}

bool fcl__cl_builtin_constant(const char *name) {
  static const char *const constants[] = {"INFINITY", "NAN",     "MAXFLOAT",    "HUGE_VALF",
                                          "HUGE_VAL", "FLT_MAX", "FLT_MIN",     "FLT_EPSILON",
                                          "DBL_MAX",  "DBL_MIN", "DBL_EPSILON", "INT_MAX",
                                          "INT_MIN",  "true",    "false"};
  if (!strncmp(name, "M_", 2)) return true;
  for (size_t i = 0; i < sizeof constants / sizeof *constants; ++i)
    if (!strcmp(constants[i], name)) return true;
  return false;
}

static bool listed(const char *name, size_t n, const char *const *known) {
  for (size_t i = 0; i < n; ++i)
    if (!strcmp(name, known[i])) return true;
  return false;
}

/* The first unknown name of e, depth first in reading order (NULL: none). */
static const fcl__expr *first_unknown(const fcl__expr *e, size_t n, const char *const *known) {
  bool found = true;
  switch (e->kind) {
    case E_VAR: found = listed(e->text, n, known) || fcl__cl_builtin_constant(e->text); break;
    case E_SUBSCRIPT: found = listed(e->text, n, known); break;
    case E_CALL:
      found = listed(e->text, n, known) || fcl__cl_builtin_function(e->text) ||
              fcl__complex_function_arity(e->text);
      break;
    default: break;
  }
  if (!found) return e;
  for (size_t i = 0; i < e->nkids; ++i) {
    const fcl__expr *u = first_unknown(e->kids[i], n, known);
    if (u) return u;
  }
  return NULL;
}

bool fcl__expr_unknown_name(const char *text, size_t n, const char *const *known, char *unknown,
                            size_t size, bool *called) {
  const char *err;
  size_t pos;
  fcl__expr *e = fcl__expr_parse(text, &err, &pos);
  const fcl__expr *u = e ? first_unknown(e, n, known) : NULL;
  if (u) {
    snprintf(unknown, size, "%s", u->text);
    *called = u->kind == E_CALL;
  }
  fcl__expr_free(e);
  return u != NULL;
}
