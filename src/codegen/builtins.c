/* The OpenCL C built-in functions an instruction may call (OpenCL C 1.2 §6.12: math, integer,
 * common, geometric and relational functions, with their half_ and native_ forms, conversions
 * convert_T and reinterpretations as_T): a call to any other name, once the rules are inlined,
 * is refused when the instruction is added rather than left to the OpenCL compiler. The complex
 * functions conj, real, imag and complex(re, im) are flowcl's own (emit_complex.c). */
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
