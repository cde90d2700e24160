/* FLOWCL_TRACE: log the matching launches with their sizes and argument values. */
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "launch_impl.h"

bool fcl__trace_matches(const char *launcher_name, const char *kernel_name) {
  const char *pattern = getenv("FLOWCL_TRACE");
  if (!pattern || !*pattern) return false;
  bool match = (launcher_name && fnmatch(pattern, launcher_name, 0) == 0) ||
               (kernel_name && fnmatch(pattern, kernel_name, 0) == 0);
  if (match && fcl_log_get_level() > FCL_LOG_INFO) fcl_log_set_level(FCL_LOG_INFO);
  return match;
}

static int format_value(char *buf, size_t size, fcl_value_type type, const fcl_value *v) {
  switch (type) {
    case FCL_TYPE_I32: return snprintf(buf, size, "int %d", (int)v->i32);
    case FCL_TYPE_U32: return snprintf(buf, size, "uint %u", (unsigned)v->u32);
    case FCL_TYPE_I64: return snprintf(buf, size, "long %lld", (long long)v->i64);
    case FCL_TYPE_U64: return snprintf(buf, size, "ulong %llu", (unsigned long long)v->u64);
    case FCL_TYPE_F32: return snprintf(buf, size, "float %.9g", (double)v->f32);
    case FCL_TYPE_F64: return snprintf(buf, size, "double %.17g", v->f64);
    case FCL_TYPE_BUFFER: return snprintf(buf, size, "buffer %p", (void *)v->buffer);
    case FCL_TYPE_LOCAL: return snprintf(buf, size, "local %zu bytes", v->local_bytes);
  }
  return 0;
}

void fcl__trace_launch(const fcl_launcher *l, unsigned work_dim, const size_t *global,
                       const size_t *local, const fcl_value *values, const size_t *map) {
  char line[4096];
  int n = snprintf(line, sizeof line, "trace: launcher '%s' kernel '%s' global (", l->name,
                   l->kernel_name);
  for (unsigned i = 0; i < work_dim && n > 0 && (size_t)n < sizeof line; ++i)
    n += snprintf(line + n, sizeof line - (size_t)n, "%s%zu", i ? ", " : "", global[i]);
  if (n > 0 && (size_t)n < sizeof line)
    n += snprintf(line + n, sizeof line - (size_t)n, ") local ");
  for (unsigned i = 0; local && i < work_dim && n > 0 && (size_t)n < sizeof line; ++i)
    n += snprintf(line + n, sizeof line - (size_t)n, "%s%zu%s", i ? ", " : "(", local[i],
                  i + 1 == work_dim ? ")" : "");
  if (!local && n > 0 && (size_t)n < sizeof line)
    n += snprintf(line + n, sizeof line - (size_t)n, "auto");
  for (size_t i = 0; i < l->num_fixed && n > 0 && (size_t)n < sizeof line; ++i) {
    n += snprintf(line + n, sizeof line - (size_t)n, "; [%u] ", l->fixed[i].index);
    if (n > 0 && (size_t)n < sizeof line)
      n += format_value(line + n, sizeof line - (size_t)n, l->fixed[i].type, &l->fixed[i].value);
  }
  for (size_t j = 0; j < l->num_param_args && n > 0 && (size_t)n < sizeof line; ++j) {
    const fcl__param_arg *p = &l->param_args[j];
    n += snprintf(line + n, sizeof line - (size_t)n, "; [%u] ", p->index);
    if (n <= 0 || (size_t)n >= sizeof line) break;
    if (p->decl == SIZE_MAX) { /* generated: the value just set */
      n += format_value(line + n, sizeof line - (size_t)n, p->type, &p->last);
      n += snprintf(line + n, sizeof line - (size_t)n, " (generated)");
    } else {
      size_t slot = map ? map[p->decl] : p->decl;
      n += format_value(line + n, sizeof line - (size_t)n, p->type, &values[slot]);
      n += snprintf(line + n, sizeof line - (size_t)n, " (%s)", l->decls[p->decl].name);
    }
  }
  fcl_log(FCL_LOG_INFO, "%s", line);
}
