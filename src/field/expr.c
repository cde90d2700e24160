/* Field expressions on the device: one generated kernel (codegen layer) per expression and
 * field layout, with the grid's origin, spacing and this rank's offsets as constants and the
 * time t and the caller's names as scalar parameters, so that a new value costs no build. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "codegen_impl.h" /* fcl__expr_unknown_name */
#include "str.h"
#include "field_impl.h"

enum { MAX_NAME = 32 };

struct fcl_field_expr {
  const fcl_topology *topo; /* the layout it was built for */
  fcl_dtype dtype;
  size_t padded[3];
  fcl_launcher *launcher;
  fcl_param_set *params;
  size_t nparams; /* t, then the caller's */
  char names[FCL_FIELD_EXPR_MAX_PARAMS + 1][MAX_NAME];
};

static bool identifier(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (; *s; ++s)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
  return true;
}

static fcl_status check_params(size_t n, const char *const *p) {
  if (n > FCL_FIELD_EXPR_MAX_PARAMS)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (nparams): %zu (at most %d)", n,
                     FCL_FIELD_EXPR_MAX_PARAMS);
  if (n && !p) return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 4 (params): NULL");
  static const char *const taken[] = {"x", "y", "z", "i", "j", "k", "u", "t"};
  for (size_t i = 0; i < n; ++i) {
    if (!p[i] || !identifier(p[i]) || strlen(p[i]) >= MAX_NAME)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "parameter %zu: '%s' is not a name (letters, "
                       "digits and '_', under %d characters)",
                       i, p[i] ? p[i] : "(null)", MAX_NAME);
    for (size_t r = 0; r < sizeof taken / sizeof *taken; ++r)
      if (!strcmp(p[i], taken[r]))
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "parameter '%s': the name is taken (x, y, z "
                         "are the coordinates, t the time; i, j, k and u are the kernel's)",
                         p[i]);
    for (size_t j = 0; j < i; ++j)
      if (!strcmp(p[i], p[j]))
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "parameter name '%s' used twice", p[i]);
  }
  return FCL_OK;
}

/* An expression naming what is neither a coordinate, t, a parameter nor an OpenCL C built-in:
 * refused here, with the expression and the names it has, rather than by the kernel builder,
 * whose message quotes the generated instruction. */
static fcl_status check_names(const fcl_field *f, const char *expression, size_t n,
                              const char *const *p) {
  const char *names[4 + FCL_FIELD_EXPR_MAX_PARAMS] = {"x", "y", "z", "t"};
  for (size_t i = 0; i < n; ++i) names[4 + i] = p[i];
  char unknown[64];
  bool called;
  if (!fcl__expr_unknown_name(expression, 4 + n, names, unknown, sizeof unknown, &called))
    return FCL_OK;
  char list[FCL_FIELD_EXPR_MAX_PARAMS * (MAX_NAME + 2)] = "none";
  for (size_t i = 0, len = 0; i < n; ++i)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", p[i]);
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "field '%s': expression '%s': unknown %s '%s' (%sparameters: %s; "
                   "coordinates x, y, z; time t)",
                   f->name, expression, called ? "function" : "name", unknown,
                   called ? "not an OpenCL C built-in; " : "", list);
}

/* Planes of z per work-item: a work-item walks them in a loop, so that the terms of the
 * expression that do not depend on z (sin(x), a function of t) are computed once per work-item
 * rather than per point (the OpenCL compiler hoists them out of the loop). On the H200 at
 * 256^3, amp sin(pi x) cos(pi t / period) in double: 2.05-2.07 times a copy of the field with one
 * plane per work-item, 1.24 with 16. */
enum { PLANES = 16 };

/* A constant in the field's precision (float arithmetic in float fields). */
static const char *lit(char *buf, double v, fcl_dtype dtype) {
  snprintf(buf, 40, dtype == FCL_FLOAT64 ? "%.17e" : "%.9ef", v);
  return buf;
}

/* The kernel: u[interior point] = expression, x, y, z from the point's global index. */
static fcl_status describe(const fcl_field *f, const fcl_field_expr *e, const char *expression,
                           fcl_kbuilder *kb) {
  const fcl_topology *t = f->topo;
  const char *type = f->dtype == FCL_FLOAT64 ? "double" : "float";
  char text[192], o[40], h[40];
  snprintf(text, sizeof text, "%zu, %zu, %zu", f->padded[2], f->padded[1], f->padded[0]);
  FCL_TRY(fcl_kbuilder_add_array(kb, "u", f->dtype, text));
  for (size_t p = 0; p < e->nparams; ++p)
    FCL_TRY(fcl_kbuilder_add_scalar(kb, e->names[p], f->dtype));
  snprintf(text, sizeof text, "{ [k, j, i]: 0 <= k < %lld and 0 <= j < %lld and 0 <= i < %lld }",
           (long long)t->local[2], (long long)t->local[1], (long long)t->local[0]);
  FCL_TRY(fcl_kbuilder_add_domain(kb, text));
  /* coordinates: origin + (offset + local index) * spacing, 0 beyond the domain's dim */
  static const char *const coord[3] = {"x", "y", "z"}, *const idx[3] = {"i", "j", "k"};
  fcl__str insns = {0};
  for (int a = 0; a < 3; ++a) {
    if (a < t->domain.dim)
      fcl__str_printf(&insns, "<%s> %s = %s + (%s + %lld) * %s {id=%s}\n", type, coord[a],
                      lit(o, t->domain.origin[a], f->dtype), idx[a], (long long)t->offset[a],
                      lit(h, fcl_domain_spacing(&t->domain, a), f->dtype), coord[a]);
    else
      fcl__str_printf(&insns, "<%s> %s = 0 {id=%s}\n", type, coord[a], coord[a]);
  }
  fcl__str_printf(&insns, "u[k + %d, j + %d, i + %d] = %s {id=value, dep=x:y:z}", t->origin[2],
                  t->origin[1], t->origin[0], expression);
  const fcl_status st = insns.failed
                            ? FCL_ERROR(FCL_ERR_OUT_OF_MEMORY,
                                        "field '%s': the expression's kernel text", f->name)
                            : fcl_kbuilder_add_instructions(kb, insns.s);
  free(insns.s);
  FCL_TRY(st);
  FCL_TRY(fcl_kbuilder_split_iname(kb, "i", 64, "g.0", "l.0"));
  FCL_TRY(fcl_kbuilder_tag_inames(kb, "j:g.1"));
  if (t->local[2] < 2 * PLANES) return fcl_kbuilder_tag_inames(kb, "k:g.2");
  return fcl_kbuilder_split_iname(kb, "k", PLANES, "g.2", NULL);
}

fcl_status fcl_field_expr_create(const fcl_field *f, const char *expression, size_t nparams,
                                 const char *const *params, fcl_field_expr **out) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(expression, 2);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  FCL_TRY(check_params(nparams, params));
  FCL_TRY(check_names(f, expression, nparams, params));
  fcl_field_expr *e = calloc(1, sizeof *e);
  if (!e) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "field '%s': expression", f->name);
  e->topo = f->topo;
  e->dtype = f->dtype;
  memcpy(e->padded, f->padded, sizeof e->padded);
  strcpy(e->names[e->nparams++], "t");
  for (size_t p = 0; p < nparams; ++p) strcpy(e->names[e->nparams++], params[p]);
  fcl_kbuilder *kb = NULL;
  fcl_status st = fcl_kbuilder_create("field_expr", &kb);
  if (st == FCL_OK) st = describe(f, e, expression, kb);
  if (st == FCL_OK) st = fcl_kbuilder_build(kb, f->context, NULL, f->queue, &e->launcher);
  fcl_kbuilder_destroy(&kb);
  /* an evaluation writes the interior of one component and reads no array */
  const int64_t *n = f->topo->local;
  if (st == FCL_OK)
    st = fcl_launcher_set_bytes_per_launch(e->launcher,
                                           (size_t)(n[0] * n[1] * n[2]) * fcl_dtype_size(f->dtype));
  if (st == FCL_OK) st = fcl_param_set_create(e->launcher, &e->params);
  for (size_t p = 0; p < e->nparams && st == FCL_OK; ++p)
    st = fcl_field_expr_set(e, e->names[p], 0);
  if (st != FCL_OK) {
    fcl_field_expr_destroy(&e);
    return st;
  }
  *out = e;
  return FCL_OK;
}

fcl_status fcl_field_expr_set(fcl_field_expr *e, const char *name, double value) {
  FCL_CHECK_NULL(e, 1);
  FCL_CHECK_NULL(name, 2);
  size_t p = 0;
  while (p < e->nparams && strcmp(e->names[p], name)) ++p;
  if (p == e->nparams) {
    char list[(FCL_FIELD_EXPR_MAX_PARAMS + 1) * (MAX_NAME + 2)] = "";
    size_t len = 0;
    for (size_t i = 0; i < e->nparams; ++i)
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", e->names[i]);
    return FCL_ERROR(FCL_ERR_NOT_FOUND, "field expression: no parameter '%s' (it has: %s)", name,
                     list);
  }
  if (e->dtype == FCL_FLOAT64) return fcl_param_set_f64(e->params, name, value);
  return fcl_param_set_f32(e->params, name, (float)value);
}

fcl_status fcl_field_expr_eval(fcl_field_expr *e, fcl_field *f, int comp) {
  FCL_CHECK_NULL(e, 1);
  FCL_CHECK_NULL(f, 2);
  FCL_TRY(fcl__field_check_comp(f, comp, 3));
  if (f->topo != e->topo || f->dtype != e->dtype || memcmp(f->padded, e->padded, sizeof f->padded))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (f): field '%s' is not of the layout the "
                     "expression was built for (its topology, precision and padding)",
                     f->name);
  FCL_TRY(fcl_param_set_buffer(e->params, "u", fcl_field_buffer(f, comp)));
  return fcl_launcher_call(e->launcher, f->queue, e->params, 0, NULL, NULL);
}

fcl_launcher *fcl_field_expr_launcher(const fcl_field_expr *e) { return e ? e->launcher : NULL; }

void fcl_field_expr_destroy(fcl_field_expr **e) {
  if (!e || !*e) return;
  fcl_param_set_destroy(&(*e)->params);
  fcl_launcher_destroy(&(*e)->launcher);
  free(*e);
  *e = NULL;
}

fcl_status fcl_field_init_expr(fcl_field *f, int comp, const char *expression) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(expression, 3);
  FCL_TRY(fcl__field_check_comp(f, comp, 2));
  fcl_field_expr *e = NULL;
  FCL_TRY(fcl_field_expr_create(f, expression, 0, NULL, &e));
  fcl_status st = fcl_field_expr_eval(e, f, comp);
  if (st == FCL_OK) st = fcl_queue_finish(f->queue);
  fcl_field_expr_destroy(&e);
  return st;
}
