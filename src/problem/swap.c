/* The swap of two fields as a node of a problem's step (fcl_field_swap_operator). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flowcl/problem.h"

typedef struct {
  fcl_field *a, *b;
  char name[160];
} swap_data;

static fcl_status swap_apply(void *data, const fcl_step_info *info) {
  (void)info;
  swap_data *s = data;
  return fcl_field_swap(s->a, s->b);
}

fcl_status fcl_field_swap_operator(fcl_field *a, fcl_field *b, fcl_operator *out) {
  FCL_CHECK_NULL(a, 1);
  FCL_CHECK_NULL(b, 2);
  FCL_CHECK_NULL(out, 3);
  if (a == b)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "swap: '%s' with itself", fcl_field_name(a));
  if (fcl_field_topology(a) != fcl_field_topology(b) || fcl_field_ncomp(a) != fcl_field_ncomp(b) ||
      fcl_field_dtype(a) != fcl_field_dtype(b) || fcl_field_context(a) != fcl_field_context(b) ||
      fcl_field_queue(a) != fcl_field_queue(b))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "swap of '%s' and '%s': they differ in topology, components, precision, "
                     "context or queue",
                     fcl_field_name(a), fcl_field_name(b));
  swap_data *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "swap operator");
  s->a = a;
  s->b = b;
  snprintf(s->name, sizeof s->name, "swap(%s, %s)", fcl_field_name(a), fcl_field_name(b));
  *out = (fcl_operator){.name = s->name,
                        .data = s,
                        .apply = swap_apply,
                        .destroy = free,
                        .nuses = 2,
                        .uses = {{a, 0, true, true}, {b, 0, true, true}}};
  return FCL_OK;
}
