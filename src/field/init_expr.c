/* Field initialisation on the device from an expression of the coordinates: one generated
 * kernel (codegen layer) with the grid's origin, spacing and this rank's offsets as constants. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "field_impl.h"

fcl_status fcl_field_init_expr(fcl_field *f, int comp, const char *expression) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(expression, 3);
  FCL_TRY(fcl__field_check_comp(f, comp, 2));
  const fcl_topology *t = f->topo;
  const char *type = f->dtype == FCL_FLOAT64 ? "double" : "float";
  char text[1024];
  fcl_kbuilder *kb = NULL;
  fcl_launcher *l = NULL;
  FCL_TRY(fcl_kbuilder_create("field_init", &kb));
  snprintf(text, sizeof text, "%zu, %zu, %zu", f->padded[2], f->padded[1], f->padded[0]);
  fcl_status st = fcl_kbuilder_add_array(kb, "u", f->dtype, text);
  snprintf(text, sizeof text, "{ [k, j, i]: 0 <= k < %lld and 0 <= j < %lld and 0 <= i < %lld }",
           (long long)t->local[2], (long long)t->local[1], (long long)t->local[0]);
  if (st == FCL_OK) st = fcl_kbuilder_add_domain(kb, text);
  /* coordinates: origin + (offset + local index) * spacing, 0 beyond the domain's dim */
  static const char *const coord[3] = {"x", "y", "z"}, *const idx[3] = {"i", "j", "k"};
  size_t len = 0;
  for (int a = 0; a < 3 && st == FCL_OK; ++a) {
    if (a < t->domain.dim)
      len += (size_t)snprintf(text + len, sizeof text - len, "<%s> %s = %.17g + (%s + %lld) * "
                              "%.17g {id=%s}\n", type, coord[a], t->domain.origin[a], idx[a],
                              (long long)t->offset[a], fcl_domain_spacing(&t->domain, a),
                              coord[a]);
    else
      len += (size_t)snprintf(text + len, sizeof text - len, "<%s> %s = 0 {id=%s}\n", type,
                              coord[a], coord[a]);
  }
  int n = snprintf(text + len, sizeof text - len,
                   "u[k + %d, j + %d, i + %d] = %s {id=value, dep=x:y:z}", t->ghosts[2],
                   t->ghosts[1], t->ghosts[0], expression);
  if (st == FCL_OK && (n < 0 || (size_t)n >= sizeof text - len))
    st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "field '%s': init expression too long (%zu "
                   "characters)", f->name, strlen(expression));
  if (st == FCL_OK) st = fcl_kbuilder_add_instructions(kb, text);
  if (st == FCL_OK) st = fcl_kbuilder_split_iname(kb, "i", 64, "g.0", "l.0");
  if (st == FCL_OK) st = fcl_kbuilder_tag_inames(kb, "j:g.1, k:g.2");
  if (st == FCL_OK) st = fcl_kbuilder_build(kb, f->context, NULL, f->queue, &l);
  fcl_param_set *ps = NULL;
  if (st == FCL_OK) st = fcl_param_set_create(l, &ps);
  if (st == FCL_OK) st = fcl_param_set_buffer(ps, "u", fcl_field_buffer(f, comp));
  if (st == FCL_OK) st = fcl_launcher_call(l, f->queue, 0, NULL, ps, NULL);
  if (st == FCL_OK) st = fcl_queue_finish(f->queue);
  fcl_param_set_destroy(&ps);
  fcl_launcher_destroy(&l);
  fcl_kbuilder_destroy(&kb);
  return st;
}
