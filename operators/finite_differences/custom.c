/* The custom-kernel operator: the caller's instructions (codegen syntax) over the interior of
 * fields, with arrays indexed relative to the interior point. The subscripts are rewritten to
 * the padded storage here, after checking that every offset stays within the ghosts the
 * binding declares. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fd_impl.h"
#include "flowcl/codegen.h"
#include "str.h"

/* One subscript "<iname>", "<iname> + n" or "<iname> - n" into its offset. */
static bool parse_offset(const char *s, size_t n, char iname, int *offset) {
  while (n && isspace((unsigned char)*s)) ++s, --n;
  while (n && isspace((unsigned char)s[n - 1])) --n;
  if (!n || *s != iname || (n > 1 && (isalnum((unsigned char)s[1]) || s[1] == '_'))) return false;
  ++s, --n;
  while (n && isspace((unsigned char)*s)) ++s, --n;
  if (!n) return *offset = 0, true;
  const int sign = *s == '+' ? 1 : *s == '-' ? -1 : 0;
  if (!sign) return false;
  ++s, --n;
  while (n && isspace((unsigned char)*s)) ++s, --n;
  int v = 0;
  if (!n) return false;
  for (; n; ++s, --n) {
    if (!isdigit((unsigned char)*s) || v > 1000) return false;
    v = 10 * v + (*s - '0');
  }
  *offset = sign * v;
  return true;
}

static const fcl_fd_binding *bound(const fcl_fd_binding *b, size_t nb, const char *s, size_t n) {
  for (size_t i = 0; i < nb; ++i)
    if (strlen(b[i].name) == n && !strncmp(b[i].name, s, n)) return &b[i];
  return NULL;
}

/* Whether the subscript closed at close is assigned without being read ("a[..] = ...", not
 * "a[..] == ..." nor a compound assignment), given that it starts a statement. */
static bool plain_store(const char *close) {
  const char *q = close + 1;
  while (*q == ' ' || *q == '\t') ++q;
  return q[0] == '=' && q[1] != '=';
}

/* Rewrite "a[k + dk, j + dj, i + di]" of every bound array a into padded storage indices;
 * reads[i]: binding i is read somewhere (anywhere but as the target of a plain store). */
static fcl_status rewrite(const char *src, const fcl_fd_binding *b, size_t nb, fcl__str *out,
                          bool *reads) {
  const char *p = src;
  bool statement_start = true;
  while (*p) {
    if (!(isalpha((unsigned char)*p) || *p == '_')) {
      if (*p == '\n' || *p == ';')
        statement_start = true;
      else if (!isspace((unsigned char)*p) && *p != '<' && *p != '>')
        statement_start = false;
      fcl__str_printf(out, "%c", *p++);
      continue;
    }
    const bool at_start = statement_start;
    statement_start = false;
    const char *w = p;
    while (isalnum((unsigned char)*p) || *p == '_') ++p;
    fcl__str_printf(out, "%.*s", (int)(p - w), w);
    const fcl_fd_binding *a = bound(b, nb, w, (size_t)(p - w));
    const char *q = p;
    while (*q == ' ') ++q;
    if (!a || *q != '[') continue;
    const char *close = strchr(q, ']');
    if (!close)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "custom kernel: '%s[' is not closed", a->name);
    const int *g = fcl_topology_origin(fcl_field_topology(a->field)); /* interior point 0 */
    const char *part = q + 1;
    for (int d = 0; d < 3; ++d) {
      const char *end = d < 2 ? memchr(part, ',', (size_t)(close - part)) : close;
      int off = 0;
      if (!end || !parse_offset(part, (size_t)(end - part), "kji"[d], &off) ||
          (d == 2 && memchr(part, ',', (size_t)(close - part))))
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "custom kernel: '%.*s': a bound array is "
                         "indexed [k + dk, j + dj, i + di] with integer offsets",
                         (int)(close - w + 1), w);
      const int axis = 2 - d;
      if (abs(off) > a->ghosts)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "custom kernel: '%.*s' reaches %d points "
                         "along axis %d, beyond the %d ghosts binding '%s' declares",
                         (int)(close - w + 1), w, abs(off), axis, a->ghosts, a->name);
      fcl__str_printf(out, "%s%c + %d", d ? ", " : "[", "kji"[d], g[axis] + off);
      part = end + 1;
    }
    fcl__str_printf(out, "]");
    if (!(at_start && plain_store(close))) reads[a - b] = true;
    p = close + 1;
  }
  return out->failed ? FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "custom kernel") : FCL_OK;
}

static bool identifier(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (; *s; ++s)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
  return true;
}

/* The scalars' names: identifiers, distinct, not a binding's, an iname's nor a built-in's. */
static fcl_status check_scalars(size_t ns, const char *const *s, size_t nb,
                                const fcl_fd_binding *b) {
  if (ns > FCL_FD_MAX_SCALARS)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 4 (nscalars): %zu (at most %d)", ns,
                     FCL_FD_MAX_SCALARS);
  if (ns && !s) return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 5 (scalars): NULL");
  static const char *const reserved[] = {"i", "j", "k", "dt", FCL__FD_T, FCL__FD_STEP};
  for (size_t i = 0; i < ns; ++i) {
    if (!s[i] || !identifier(s[i]) || strlen(s[i]) >= 32)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "scalar %zu: '%s' is not a name (letters, "
                       "digits and '_', under 32 characters)",
                       i, s[i] ? s[i] : "(null)");
    for (size_t r = 0; r < sizeof reserved / sizeof *reserved; ++r)
      if (!strcmp(s[i], reserved[r]))
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "scalar '%s': the name is taken (i, j, k "
                         "index the point; dt, t and step_index are given by the time loop)",
                         s[i]);
    for (size_t j = 0; j < nb; ++j)
      if (!strcmp(s[i], b[j].name))
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "scalar '%s': a binding has that name", s[i]);
    for (size_t j = 0; j < i; ++j)
      if (!strcmp(s[i], s[j]))
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "scalar name '%s' used twice", s[i]);
  }
  return FCL_OK;
}

static fcl_status check_bindings(size_t nb, const fcl_fd_binding *b) {
  if (nb < 1 || nb > 16)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (nbindings): %zu (1 to 16)", nb);
  for (size_t i = 0; i < nb; ++i) {
    if (!b[i].name || !b[i].field)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "binding %zu: name and field are required", i);
    if (b[i].comp < 0 || b[i].comp >= fcl_field_ncomp(b[i].field))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "binding '%s': component %d of '%s' (it has "
                       "%d)",
                       b[i].name, b[i].comp, fcl_field_name(b[i].field),
                       fcl_field_ncomp(b[i].field));
    const fcl_topology *t = fcl_field_topology(b[i].field);
    const int dim = fcl_topology_domain(t)->dim;
    for (int a = 0; a < dim; ++a)
      if (b[i].ghosts < 0 || b[i].ghosts > fcl_topology_ghosts(t)[a])
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "binding '%s': reads %d ghosts of '%s', "
                         "its topology has %d on axis %d",
                         b[i].name, b[i].ghosts, fcl_field_name(b[i].field),
                         fcl_topology_ghosts(t)[a], a);
    if (t != fcl_field_topology(b[0].field) ||
        fcl_field_dtype(b[i].field) != fcl_field_dtype(b[0].field) ||
        fcl_field_queue(b[i].field) != fcl_field_queue(b[0].field))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "bindings '%s' and '%s': fields '%s' and '%s' "
                       "are not on one topology, precision and queue",
                       b[0].name, b[i].name, fcl_field_name(b[0].field),
                       fcl_field_name(b[i].field));
    for (size_t j = 0; j < i; ++j)
      if (!strcmp(b[i].name, b[j].name))
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "binding name '%s' used twice", b[i].name);
    if (!strcmp(b[i].name, "dt") || !strcmp(b[i].name, FCL__FD_T) ||
        !strcmp(b[i].name, FCL__FD_STEP))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "binding '%s': the name is taken (dt, t and "
                       "step_index are given by the time loop)",
                       b[i].name);
  }
  return FCL_OK;
}

/* Which bindings the instructions write (the codegen layer knows). */
static fcl_status written_arrays(const char *name, size_t nb, const fcl_fd_binding *b,
                                 const fcl_fd *op, const char *instructions, bool *written) {
  fcl_kbuilder *kb = NULL;
  FCL_TRY(fcl_kbuilder_create(name, &kb));
  fcl_status st = FCL_OK;
  const size_t *p = fcl_field_padded_shape(b[0].field);
  char shape[96];
  snprintf(shape, sizeof shape, "%zu, %zu, %zu", p[2], p[1], p[0]);
  for (size_t i = 0; i < nb && st == FCL_OK; ++i)
    st = fcl_kbuilder_add_array(kb, b[i].name, fcl_field_dtype(b[i].field), shape);
  if (st == FCL_OK) st = fcl_kbuilder_add_scalar(kb, "dt", fcl_field_dtype(b[0].field));
  for (size_t s = 0; s < op->nscalars && st == FCL_OK; ++s)
    st = fcl_kbuilder_add_scalar(
        kb, op->scalars[s],
        strcmp(op->scalars[s], FCL__FD_STEP) ? fcl_field_dtype(b[0].field) : FCL_INT64);
  if (st == FCL_OK)
    st = fcl_kbuilder_add_domain(kb, "{ [k, j, i]: 0 <= k < 1 and 0 <= j < 1 and 0 <= i < 1 }");
  if (st == FCL_OK) st = fcl_kbuilder_add_instructions(kb, instructions);
  for (size_t i = 0; i < nb && st == FCL_OK; ++i) {
    const char *n;
    bool is_array;
    fcl_dtype t;
    st = fcl_kbuilder_arg(kb, i, &n, &is_array, &t, &written[i]);
  }
  fcl_kbuilder_destroy(&kb);
  return st;
}

fcl_status fcl_fd_kernel_create(const char *name, size_t nbindings, const fcl_fd_binding *bindings,
                                const char *instructions, double bytes_per_point, fcl_fd **out) {
  FCL_CHECK_NULL(instructions, 4);
  FCL_CHECK_NULL(out, 6);
  return fcl_fd_kernel_create_with_scalars(name, nbindings, bindings, 0, NULL, instructions,
                                           bytes_per_point, out);
}

fcl_status fcl_fd_kernel_create_with_scalars(const char *name, size_t nbindings,
                                             const fcl_fd_binding *bindings, size_t nscalars,
                                             const char *const *scalars, const char *instructions,
                                             double bytes_per_point, fcl_fd **out) {
  FCL_CHECK_NULL(name, 1);
  FCL_CHECK_NULL(bindings, 3);
  FCL_CHECK_NULL(instructions, 6);
  FCL_CHECK_NULL(out, 8);
  *out = NULL;
  FCL_TRY(check_bindings(nbindings, bindings));
  FCL_TRY(check_scalars(nscalars, scalars, nbindings, bindings));
  fcl_fd *op = NULL;
  FCL_TRY(fcl__fd_new(name, &op));
  strcpy(op->scalars[op->nscalars++], FCL__FD_T);
  strcpy(op->scalars[op->nscalars++], FCL__FD_STEP);
  for (size_t s = 0; s < nscalars; ++s) strcpy(op->scalars[op->nscalars++], scalars[s]);
  fcl__str t = {0};
  bool written[16] = {false}, reads[16] = {false};
  fcl_status st = rewrite(instructions, bindings, nbindings, &t, reads);
  if (st == FCL_OK) st = written_arrays("custom", nbindings, bindings, op, t.s ? t.s : "", written);
  fcl__fd_array arrays[16];
  for (size_t i = 0; i < nbindings && st == FCL_OK; ++i) {
    arrays[i] = (fcl__fd_array){bindings[i].name, bindings[i].field, bindings[i].comp};
    st = fcl__fd_use(op, bindings[i].field, bindings[i].ghosts, reads[i], written[i]);
  }
  bool any = false;
  for (size_t i = 0; i < nbindings; ++i) any |= written[i];
  if (st == FCL_OK && !any)
    st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "custom kernel '%s' writes none of its bindings",
                   name);
  char kernel[64];
  snprintf(kernel, sizeof kernel, "%s", name);
  for (char *c = kernel; *c; ++c)
    if (!isalnum((unsigned char)*c)) *c = '_';
  if (!isalpha((unsigned char)kernel[0])) kernel[0] = 'k';
  if (st == FCL_OK) {
    op->dt_param = "dt";
    op->dt_scale = 1;
    const int64_t *n = fcl_topology_local_resolution(fcl_field_topology(bindings[0].field));
    st = fcl__fd_add_kernel(op, kernel, bindings[0].field, nbindings, arrays, &t,
                            bytes_per_point * (double)(n[0] * n[1] * n[2]));
  }
  free(t.s);
  if (st != FCL_OK) fcl_fd_destroy(&op);
  *out = op;
  return st;
}
