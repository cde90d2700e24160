/* A printable description of a kernel builder (loopy's "print kernel"). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "codegen_impl.h"

static void expr(fcl__str *b, const fcl__expr *e) { fcl__expr_print(b, e, NULL, NULL); }

fcl_status fcl_kbuilder_describe(const fcl_kbuilder *kb, char **text) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(text, 2);
  *text = NULL;
  fcl__str b = {0};
  fcl__str_printf(&b, "kernel %s\n", kb->name);
  static const char *kinds[] = {"parameter", "array", "scalar", "temporary"};
  for (size_t i = 0; i < kb->nvars; ++i) {
    const fcl__var *v = &kb->vars[i];
    fcl__str_printf(&b, "  %-9s %s", kinds[v->kind], v->name);
    if (v->kind == V_PARAM) {
      if (v->fixed) fcl__str_printf(&b, " = %lld", (long long)v->value);
      if (v->modulus) fcl__str_printf(&b, " (multiple of %lld)", (long long)v->modulus);
      if (v->lower != INT64_MIN) fcl__str_printf(&b, " (>= %lld)", (long long)v->lower);
    } else {
      fcl__str_printf(&b, ": %s%s", v->auto_type ? "auto " : "", fcl_dtype_cl_name(v->dtype));
      if (v->kind == V_TEMP)
        fcl__str_printf(&b, " %s", v->scope == FCL_TEMP_LOCAL ? "local" : "private");
      if (v->ndim) {
        fcl__str_printf(&b, " [");
        for (size_t d = 0; d < v->ndim; ++d) {
          if (d) fcl__str_printf(&b, ", ");
          expr(&b, v->shape[d]);
        }
        fcl__str_printf(&b, "]");
      }
      if (v->kind == V_ARRAY) fcl__str_printf(&b, v->written ? " (written)" : " (read only)");
    }
    fcl__str_printf(&b, "\n");
  }
  for (size_t i = 0; i < kb->ndomains; ++i) fcl__str_printf(&b, "  domain    %s\n", kb->domains[i]);
  for (size_t i = 0; i < kb->ninames; ++i) {
    const fcl__iname *in = &kb->inames[i];
    char tag[16];
    fcl__str_printf(&b, "  iname     %s in [", in->name);
    expr(&b, in->lo);
    fcl__str_printf(&b, ", ");
    expr(&b, in->hi);
    if (in->derived) {
      fcl__str_printf(&b, ") = ");
      expr(&b, in->value);
      fcl__str_printf(&b, "\n");
    } else {
      fcl__str_printf(&b, ") %s\n", fcl__tag_text(in, tag, sizeof tag));
    }
  }
  for (size_t i = 0; i < kb->nrules; ++i) {
    const fcl__rule *r = &kb->rules[i];
    fcl__str_printf(&b, "  rule      %s(", r->name);
    for (size_t a = 0; a < r->nargs; ++a) fcl__str_printf(&b, "%s%s", a ? ", " : "", r->args[a]);
    fcl__str_printf(&b, ") := ");
    expr(&b, r->body);
    fcl__str_printf(&b, "\n");
  }
  for (size_t i = 0; i < kb->ninsns; ++i) {
    const fcl__insn *in = &kb->insns[i];
    fcl__str_printf(&b, "  insn      %s: ", in->id);
    if (in->code) {
      fcl__str_printf(&b, "C block writing ");
      expr(&b, in->lhs);
      for (size_t w = 0; in->more_writes && w < in->more_writes->nkids; ++w) {
        fcl__str_printf(&b, ", ");
        expr(&b, in->more_writes->kids[w]);
      }
      fcl__str_printf(&b, " reading (");
      for (size_t r = 0; r < in->rhs->nkids; ++r) {
        fcl__str_printf(&b, "%s", r ? ", " : "");
        expr(&b, in->rhs->kids[r]);
      }
      fcl__str_printf(&b, ")");
    } else {
      expr(&b, in->lhs);
      fcl__str_printf(&b, " = ");
      expr(&b, in->rhs);
    }
    fcl__str_printf(&b, "  {inames=");
    for (size_t k = 0; k < in->ninames; ++k)
      fcl__str_printf(&b, "%s%s", k ? ":" : "", in->inames[k]);
    if (in->ndeps) {
      fcl__str_printf(&b, ", dep=");
      for (size_t k = 0; k < in->ndeps; ++k) fcl__str_printf(&b, "%s%s", k ? ":" : "", in->deps[k]);
    }
    if (in->nafter) {
      fcl__str_printf(&b, ", after=");
      for (size_t k = 0; k < in->nafter; ++k)
        fcl__str_printf(&b, "%s%s", k ? ":" : "", in->after[k]);
    }
    if (in->nconds) {
      fcl__str_printf(&b, ", if=");
      for (size_t k = 0; k < in->nconds; ++k)
        fcl__str_printf(&b, "%s%s", k ? ":" : "", in->conds[k]);
    }
    if (in->priority) fcl__str_printf(&b, ", priority=%d", in->priority);
    fcl__str_printf(&b, "}\n");
  }
  for (size_t i = 0; i < kb->nhistory; ++i) fcl__str_printf(&b, "  applied   %s\n", kb->history[i]);
  if (b.failed) {
    free(b.s);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "description of kernel '%s'", kb->name);
  }
  *text = b.s;
  return FCL_OK;
}
