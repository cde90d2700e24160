/* Complex values in generated OpenCL C: a cfloat/cdouble is a float2/double2 holding (real,
 * imaginary). Sums, differences, negation and products or quotients by a real act on both parts
 * as OpenCL's vector arithmetic does; complex products and quotients, conj, abs and exp go
 * through small functions printed before the kernel (only those of the precisions used). A
 * real operand meeting a complex one becomes (x, 0), a cfloat meeting a cdouble is widened, as
 * C99's complex arithmetic has it. */
#include <string.h>

#include "emit_impl.h"

/* The prefix of the helpers of complex type t ("fcl_c64", "fcl_c128"); records the use. */
static const char *helpers(emitter *em, fcl_dtype t) {
  em->complex_used[t == FCL_COMPLEX128] = true;
  return t == FCL_COMPLEX128 ? "fcl_c128" : "fcl_c64";
}

static fcl_dtype type_of(const emitter *em, const fcl__expr *e) {
  return fcl__kb_type_of(em->kb, e);
}

void fcl__emit_print_as(emitter *em, fcl__str *out, const fcl__expr *e, fcl_dtype t) {
  fcl_dtype have = type_of(em, e);
  if (!fcl__dtype_complex(t) || have == t) {
    fcl__emit_print_to(em, out, e);
  } else if (fcl__dtype_complex(have)) { /* cfloat -> cdouble (or back) */
    fcl__str_printf(out, "convert_%s(", type_name(t));
    fcl__emit_print_to(em, out, e);
    fcl__str_printf(out, ")");
  } else {
    fcl__str_printf(out, "FCL_VEC2(%s, (%s)(", type_name(t), type_name(fcl__dtype_real_part(t)));
    fcl__emit_print_to(em, out, e);
    fcl__str_printf(out, "), 0)");
  }
}

/* A real operand of a product or quotient with a complex one, in the parts' type. */
static void print_real_as(emitter *em, fcl__str *out, const fcl__expr *e, fcl_dtype t) {
  fcl__str_printf(out, "(%s)(", type_name(fcl__dtype_real_part(t)));
  fcl__emit_print_to(em, out, e);
  fcl__str_printf(out, ")");
}

static void print_call(emitter *em, fcl__str *out, const char *fn, fcl_dtype t, const fcl__expr *a,
                       const fcl__expr *b) {
  fcl__str_printf(out, "%s_%s(", helpers(em, t), fn);
  fcl__emit_print_as(em, out, a, t);
  if (b) {
    fcl__str_printf(out, ", ");
    fcl__emit_print_as(em, out, b, t);
  }
  fcl__str_printf(out, ")");
}

static bool print_binary(emitter *em, fcl__str *out, const fcl__expr *e, fcl_dtype t) {
  const fcl__expr *a = e->kids[0], *b = e->kids[1];
  bool ca = fcl__dtype_complex(type_of(em, a)), cb = fcl__dtype_complex(type_of(em, b));
  char op = e->text[0];
  if (op == '*' && ca && cb) {
    print_call(em, out, "mul", t, a, b);
  } else if (op == '/' && cb) {
    print_call(em, out, "div", t, a, b);
  } else if (op == '*' || op == '/') { /* one side real: scale both parts */
    fcl__str_printf(out, "(");
    if (ca)
      fcl__emit_print_as(em, out, a, t);
    else
      print_real_as(em, out, a, t);
    fcl__str_printf(out, " %c ", op);
    if (cb)
      fcl__emit_print_as(em, out, b, t);
    else
      print_real_as(em, out, b, t);
    fcl__str_printf(out, ")");
  } else { /* + and - */
    fcl__str_printf(out, "(");
    fcl__emit_print_as(em, out, a, t);
    fcl__str_printf(out, " %c ", op);
    fcl__emit_print_as(em, out, b, t);
    fcl__str_printf(out, ")");
  }
  return true;
}

static bool print_function(emitter *em, fcl__str *out, const fcl__expr *e, fcl_dtype t) {
  const char *f = e->text;
  const fcl__expr *z = e->nkids ? e->kids[0] : NULL;
  fcl_dtype zt = z ? type_of(em, z) : t;
  if (!strcmp(f, "complex")) {
    fcl__str_printf(out, "FCL_VEC2(%s, ", type_name(t));
    print_real_as(em, out, e->kids[0], t);
    fcl__str_printf(out, ", ");
    print_real_as(em, out, e->kids[1], t);
    fcl__str_printf(out, ")");
    return true;
  }
  bool real_z = !fcl__dtype_complex(zt);
  if (real_z && (!strcmp(f, "real") || !strcmp(f, "conj"))) { /* of a real: itself */
    fcl__str_printf(out, "(");
    fcl__emit_print_to(em, out, z);
    fcl__str_printf(out, ")");
    return true;
  }
  if (real_z && !strcmp(f, "imag")) {
    fcl__str_printf(out, "((%s)0)", type_name(zt == FCL_FLOAT64 ? FCL_FLOAT64 : FCL_FLOAT32));
    return true;
  }
  if (real_z) return false; /* abs, exp of a real: OpenCL's own */
  if (!strcmp(f, "real") || !strcmp(f, "imag")) {
    fcl__str_printf(out, "(");
    fcl__emit_print_to(em, out, z);
    fcl__str_printf(out, ").%c", f[0] == 'r' ? 'x' : 'y');
    return true;
  }
  print_call(em, out, f, zt, z, NULL); /* conj, abs, exp */
  return true;
}

bool fcl__emit_complex_node(emitter *em, fcl__str *out, const fcl__expr *e) {
  if (e->kind == E_CALL && fcl__complex_function_arity(e->text))
    return print_function(em, out, e, type_of(em, e));
  fcl_dtype t = type_of(em, e);
  switch (e->kind) {
    case E_BINARY: return fcl__dtype_complex(t) && print_binary(em, out, e, t);
    case E_CALL:
      return e->nkids && fcl__dtype_complex(type_of(em, e->kids[0])) &&
             print_function(em, out, e, t);
    case E_TERNARY:
      if (!fcl__dtype_complex(t)) return false;
      fcl__str_printf(out, "(");
      fcl__emit_print_to(em, out, e->kids[0]);
      fcl__str_printf(out, " ? ");
      fcl__emit_print_as(em, out, e->kids[1], t);
      fcl__str_printf(out, " : ");
      fcl__emit_print_as(em, out, e->kids[2], t);
      fcl__str_printf(out, ")");
      return true;
    default: return false;
  }
}

static bool involves(const fcl_kbuilder *kb, const fcl__expr *e) {
  if (fcl__dtype_complex(fcl__kb_type_of(kb, e))) return true;
  for (size_t i = 0; i < e->nkids; ++i)
    if (involves(kb, e->kids[i])) return true;
  return false;
}

bool fcl__emit_involves_complex(const emitter *em, const fcl__insn *in) {
  return !in->code && (involves(em->kb, in->lhs) || involves(em->kb, in->rhs));
}

/* Products and quotients as C99 Annex G's naive forms, the quotient scaled by the larger part of
 * the divisor (Smith's method) so that |b|^2 neither overflows nor underflows needlessly. */
static const char helper_text[] =
    "static inline R2 P_mul(R2 a, R2 b) {\n"
    "  return FCL_VEC2(R2, a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);\n"
    "}\n"
    "static inline R2 P_div(R2 a, R2 b) {\n"
    "  if (fabs(b.x) >= fabs(b.y)) {\n"
    "    R r = b.y / b.x, d = b.x + b.y * r;\n"
    "    return FCL_VEC2(R2, (a.x + a.y * r) / d, (a.y - a.x * r) / d);\n"
    "  }\n"
    "  R r = b.x / b.y, d = b.x * r + b.y;\n"
    "  return FCL_VEC2(R2, (a.x * r + a.y) / d, (a.y * r - a.x) / d);\n"
    "}\n"
    "static inline R2 P_conj(R2 a) { return FCL_VEC2(R2, a.x, -a.y); }\n"
    "static inline R P_abs(R2 a) { return hypot(a.x, a.y); }\n"
    "static inline R2 P_exp(R2 a) {\n"
    "  R m = exp(a.x);\n"
    "  return FCL_VEC2(R2, m * cos(a.y), m * sin(a.y));\n"
    "}\n";

/* helper_text with R2, R and P_ replaced for one precision. */
static void print_helpers(fcl__str *out, const char *r, const char *prefix) {
  for (const char *s = helper_text; *s;) {
    if (s[0] == 'R' && s[1] == '2') {
      fcl__str_printf(out, "%s2", r);
      s += 2;
    } else if (s[0] == 'R') {
      fcl__str_printf(out, "%s", r);
      s += 1;
    } else if (s[0] == 'P' && s[1] == '_') {
      fcl__str_printf(out, "%s_", prefix);
      s += 2;
    } else {
      fcl__str_printf(out, "%c", *s++);
    }
  }
}

void fcl__emit_complex_helpers(emitter *em, fcl__str *out) {
  if (em->complex_used[0]) print_helpers(out, "float", "fcl_c64");
  if (em->complex_used[1]) print_helpers(out, "double", "fcl_c128");
}
