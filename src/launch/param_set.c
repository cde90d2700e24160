/* Parameter value sets: values for a launcher's parameter table, set by name or slot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "launch_impl.h"

fcl_status fcl_param_set_create(const fcl_launcher *launcher, fcl_param_set **out) {
  FCL_CHECK_NULL(launcher, 1);
  FCL_CHECK_NULL(out, 2);
  fcl_param_set *s = calloc(1, sizeof *s);
  size_t n = launcher->num_decls ? launcher->num_decls : 1;
  if (s) {
    s->values = calloc(n, sizeof *s->values);
    s->set = calloc(n, sizeof *s->set);
  }
  if (!s || !s->values || !s->set) {
    if (s) {
      free(s->values);
      free(s->set);
    }
    free(s);
    *out = NULL;
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "parameter set of '%s'", launcher->name);
  }
  s->owner = launcher;
  s->count = launcher->num_decls;
  s->decls = launcher->decls;
  *out = s;
  return FCL_OK;
}

void fcl_param_set_destroy(fcl_param_set **set) {
  if (!set || !*set) return;
  free((*set)->values);
  free((*set)->set);
  free(*set);
  *set = NULL;
}

/* "dt (float), step (int)" */
static void list_params(const fcl_param_set *s, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < s->count && used < size; ++i) {
    int w = snprintf(buf + used, size - used, "%s%s (%s)", i ? ", " : "", s->decls[i].name,
                     fcl_value_type_name(s->decls[i].type));
    if (w > 0) used += (size_t)w;
  }
  if (!s->count) snprintf(buf, size, "none");
}

fcl_status fcl_param_set_slot(const fcl_param_set *set, const char *name, size_t *slot) {
  FCL_CHECK_NULL(set, 1);
  FCL_CHECK_NULL(name, 2);
  FCL_CHECK_NULL(slot, 3);
  for (size_t i = 0; i < set->count; ++i)
    if (!strcmp(set->decls[i].name, name)) {
      *slot = i;
      return FCL_OK;
    }
  char known[1024];
  list_params(set, known, sizeof known);
  return FCL_ERROR(FCL_ERR_NOT_FOUND, "launcher '%s' has no parameter '%s'; its parameters: %s",
                   set->owner->name, name, known);
}

fcl_status fcl_param_set_value(fcl_param_set *set, size_t slot, fcl_value_type type,
                               fcl_value value) {
  FCL_CHECK_NULL(set, 1);
  if (slot >= set->count)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (slot): %zu, but launcher '%s' has %zu "
                     "parameters",
                     slot, set->owner->name, set->count);
  if (type != set->decls[slot].type)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s': parameter '%s' is %s, given %s",
                     set->owner->name, set->decls[slot].name,
                     fcl_value_type_name(set->decls[slot].type), fcl_value_type_name(type));
  set->values[slot] = value;
  set->set[slot] = true;
  return FCL_OK;
}

static fcl_status set_named(fcl_param_set *set, const char *name, fcl_value_type type,
                            fcl_value value) {
  size_t slot;
  FCL_TRY(fcl_param_set_slot(set, name, &slot));
  return fcl_param_set_value(set, slot, type, value);
}

fcl_status fcl_param_set_i32(fcl_param_set *s, const char *n, int32_t v) {
  return set_named(s, n, FCL_TYPE_I32, (fcl_value){.i32 = v});
}
fcl_status fcl_param_set_u32(fcl_param_set *s, const char *n, uint32_t v) {
  return set_named(s, n, FCL_TYPE_U32, (fcl_value){.u32 = v});
}
fcl_status fcl_param_set_i64(fcl_param_set *s, const char *n, int64_t v) {
  return set_named(s, n, FCL_TYPE_I64, (fcl_value){.i64 = v});
}
fcl_status fcl_param_set_u64(fcl_param_set *s, const char *n, uint64_t v) {
  return set_named(s, n, FCL_TYPE_U64, (fcl_value){.u64 = v});
}
fcl_status fcl_param_set_f32(fcl_param_set *s, const char *n, float v) {
  return set_named(s, n, FCL_TYPE_F32, (fcl_value){.f32 = v});
}
fcl_status fcl_param_set_f64(fcl_param_set *s, const char *n, double v) {
  return set_named(s, n, FCL_TYPE_F64, (fcl_value){.f64 = v});
}
fcl_status fcl_param_set_buffer(fcl_param_set *s, const char *n, fcl_mem *v) {
  return set_named(s, n, FCL_TYPE_BUFFER, (fcl_value){.buffer = v});
}
