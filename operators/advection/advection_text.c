/* Text of the advection kernels (advection_kernel.c, advection_walk.c): literals of the
 * kernel's precision and the remeshing kernel Lambda_{p,r} as an expression. */
#include <stdio.h>

#include "advection_impl.h"

const char *fcl__adv_lit(char buf[40], double v, fcl_dtype dtype) {
  snprintf(buf, 40, dtype == FCL_FLOAT64 ? "%.17e" : "%.9ef", v);
  return buf;
}

/* Piece j of Lambda_{p,r} at |x|, Horner in |x| - j. */
static void piece(fcl__str *t, const fcl__adv_kernel_spec *s, int j) {
  const fcl__remesh_formula *f = s->formula;
  char l[40];
  for (int k = 0; k <= f->degree; ++k) {
    fcl__str_printf(t, "%s", fcl__adv_lit(l, f->coef[j][k], s->dtype));
    if (k < f->degree) fcl__str_printf(t, " + (fabs(x) - %d) * (", j);
  }
  for (int k = 0; k < f->degree; ++k) fcl__str_printf(t, ")");
}

void fcl__adv_weight_expr(fcl__str *t, const fcl__adv_kernel_spec *s, int lo, int hi) {
  const int S = s->formula->support;
  char l[40];
  const int last = hi < S ? hi : S - 1;
  for (int j = lo; j < last; ++j) {
    fcl__str_printf(t, "fabs(x) < %d ? ", j + 1);
    piece(t, s, j);
    fcl__str_printf(t, " : ");
  }
  if (hi >= S) fcl__str_printf(t, "fabs(x) < %d ? ", S);
  piece(t, s, last);
  if (hi >= S) fcl__str_printf(t, " : %s", fcl__adv_lit(l, 0, s->dtype));
}
