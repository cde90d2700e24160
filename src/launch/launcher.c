/* What every launcher shares: creation, names, parameter tables, calls, statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "launch_impl.h"

/* The scalar values are fcl_dtype's: their names and sizes are the dtype's. */
static bool scalar(fcl_value_type type) {
  switch (type) {
    case FCL_TYPE_I32:
    case FCL_TYPE_U32:
    case FCL_TYPE_I64:
    case FCL_TYPE_U64:
    case FCL_TYPE_F32:
    case FCL_TYPE_F64: return true;
    default: return false;
  }
}

const char *fcl_value_type_name(fcl_value_type type) {
  if (scalar(type)) return fcl_dtype_cl_name((fcl_dtype)type);
  return type == FCL_TYPE_BUFFER ? "buffer" : type == FCL_TYPE_LOCAL ? "local" : "invalid";
}

size_t fcl__value_size(fcl_value_type type) {
  if (scalar(type)) return fcl_dtype_size((fcl_dtype)type);
  return type == FCL_TYPE_BUFFER ? sizeof(fcl_mem *) : 0;
}

bool fcl__value_type_matches(fcl_value_type type, const fcl_kernel_arg_info *arg) {
  if (arg->kind == FCL_ARG_UNKNOWN) return true; /* no metadata: the driver checks sizes */
  switch (type) {
    case FCL_TYPE_BUFFER: return arg->kind == FCL_ARG_GLOBAL || arg->kind == FCL_ARG_CONSTANT;
    case FCL_TYPE_LOCAL: return arg->kind == FCL_ARG_LOCAL;
    case FCL_TYPE_U32:
      return arg->kind == FCL_ARG_SCALAR &&
             (!strcmp(arg->type_name, "uint") || !strcmp(arg->type_name, "unsigned int"));
    case FCL_TYPE_U64:
      return arg->kind == FCL_ARG_SCALAR &&
             (!strcmp(arg->type_name, "ulong") || !strcmp(arg->type_name, "unsigned long"));
    default:
      return arg->kind == FCL_ARG_SCALAR && !strcmp(arg->type_name, fcl_value_type_name(type));
  }
}

fcl_status fcl__launcher_new(fcl__launcher_kind kind, const char *name, fcl_launcher **out) {
  fcl_launcher *l = calloc(1, sizeof *l);
  if (!l || !(l->name = strdup(name ? name : "(unnamed)"))) {
    free(l);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "launcher '%s'", name ? name : "");
  }
  l->kind = kind;
  *out = l;
  return FCL_OK;
}

fcl_status fcl__decl_add(fcl_launcher *l, const char *name, fcl_value_type type, size_t *pos) {
  for (size_t i = 0; i < l->num_decls; ++i) {
    if (strcmp(l->decls[i].name, name) != 0) continue;
    if (l->decls[i].type != type)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "launcher '%s': parameter '%s' is %s here but "
                       "%s in an earlier member",
                       l->name, name, fcl_value_type_name(type),
                       fcl_value_type_name(l->decls[i].type));
    *pos = i;
    return FCL_OK;
  }
  fcl__param_decl *grown = realloc(l->decls, (l->num_decls + 1) * sizeof *grown);
  if (!grown) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "parameter table");
  l->decls = grown;
  if (!(grown[l->num_decls].name = strdup(name)))
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "parameter name");
  grown[l->num_decls].type = type;
  *pos = l->num_decls++;
  return FCL_OK;
}

/* Fold completed events into the statistics and compact the pending ones (never blocks). */
static void harvest(fcl_launcher *l) {
  size_t kept = 0;
  for (size_t i = 0; i < l->num_events; ++i) {
    fcl_event *e = l->events[i];
    int status = FCL_EVENT_QUEUED;
    fcl_event_status(e, &status);
    if (status > FCL_EVENT_COMPLETE) {
      l->events[kept++] = e;
      continue;
    }
    fcl_event_times t;
    if (status == FCL_EVENT_COMPLETE && fcl_event_profile(e, &t) == FCL_OK) {
      uint64_t start = t.start_ns, end = t.end_ns;
      double ns = end > start ? (double)(end - start) : 0.0;
      fcl_launch_stats *s = &l->stats;
      s->min_ns = s->launches == 0 || ns < s->min_ns ? ns : s->min_ns;
      s->max_ns = ns > s->max_ns ? ns : s->max_ns;
      s->total_ns += ns;
      s->launches++;
      s->bytes += (double)l->bytes_per_launch;
    }
    fcl_event_release(&e);
  }
  l->num_events = kept;
}

void fcl__launcher_record(fcl_launcher *l, fcl_queue *queue, fcl_event *event) {
  if (!event || !(fcl_queue_flags(queue) & FCL_QUEUE_PROFILING)) return;
  if (l->num_events == l->cap_events) {
    harvest(l); /* make room from completed events before growing */
    if (l->num_events == l->cap_events) {
      size_t cap = l->cap_events ? 2 * l->cap_events : 64;
      fcl_event **grown = realloc(l->events, cap * sizeof *grown);
      if (!grown) return; /* statistics are best effort; the launch itself went through */
      l->events = grown;
      l->cap_events = cap;
    }
  }
  fcl_event_retain(event);
  l->events[l->num_events++] = event;
}

static void finish_stats(fcl_launch_stats *s, size_t pending) {
  s->mean_ns = s->launches ? s->total_ns / (double)s->launches : 0.0;
  s->bandwidth_gbs = s->total_ns > 0 && s->bytes > 0 ? s->bytes / s->total_ns : 0.0;
  s->pending = pending;
}

void fcl_launch_stats_add(fcl_launch_stats *sum, const fcl_launch_stats *s) {
  if (!sum || !s) return;
  if (s->launches) {
    sum->min_ns = sum->launches == 0 || s->min_ns < sum->min_ns ? s->min_ns : sum->min_ns;
    sum->max_ns = s->max_ns > sum->max_ns ? s->max_ns : sum->max_ns;
  }
  sum->launches += s->launches;
  sum->total_ns += s->total_ns;
  sum->bytes += s->bytes;
  finish_stats(sum, sum->pending + s->pending);
}

fcl_status fcl_launcher_statistics(fcl_launcher *launcher, fcl_launch_stats *stats) {
  FCL_CHECK_NULL(launcher, 1);
  FCL_CHECK_NULL(stats, 2);
  if (launcher->kind != L_LIST) {
    harvest(launcher);
    *stats = launcher->stats;
    finish_stats(stats, launcher->num_events);
    return FCL_OK;
  }
  fcl_launch_stats sum = {0};
  for (size_t i = 0; i < launcher->num_steps; ++i) {
    fcl_launch_stats s;
    FCL_TRY(fcl_launcher_statistics(launcher->steps[i], &s));
    fcl_launch_stats_add(&sum, &s);
  }
  *stats = sum;
  return FCL_OK;
}

fcl_status fcl_launcher_reset_statistics(fcl_launcher *launcher) {
  FCL_CHECK_NULL(launcher, 1);
  for (size_t i = 0; i < launcher->num_events; ++i) fcl_event_release(&launcher->events[i]);
  launcher->num_events = 0;
  memset(&launcher->stats, 0, sizeof launcher->stats);
  for (size_t i = 0; i < launcher->num_steps; ++i)
    FCL_TRY(fcl_launcher_reset_statistics(launcher->steps[i]));
  return FCL_OK;
}

fcl_status fcl_launcher_set_bytes_per_launch(fcl_launcher *launcher, size_t bytes) {
  FCL_CHECK_NULL(launcher, 1);
  if (launcher->kind == L_LIST || launcher->kind == L_HOST)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s': bytes per launch apply to kernel "
                     "and copy launchers",
                     launcher->name);
  launcher->bytes_per_launch = bytes;
  return FCL_OK;
}

const char *fcl_launcher_name(const fcl_launcher *launcher) {
  return launcher ? launcher->name : "";
}

size_t fcl_launcher_num_params(const fcl_launcher *launcher) {
  return launcher ? launcher->num_decls : 0;
}

fcl_status fcl_launcher_param(const fcl_launcher *launcher, size_t i, const char **name,
                              fcl_value_type *type) {
  FCL_CHECK_NULL(launcher, 1);
  if (i >= launcher->num_decls)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s' has %zu parameters; %zu is out of "
                     "range",
                     launcher->name, launcher->num_decls, i);
  if (name) *name = launcher->decls[i].name;
  if (type) *type = launcher->decls[i].type;
  return FCL_OK;
}

bool fcl_launcher_global_size_configured(const fcl_launcher *l) {
  if (!l) return false;
  if (l->kind == L_KERNEL || l->kind == L_ITERATIVE) return l->work_dim > 0 || l->size_fn;
  for (size_t i = 0; i < l->num_steps; ++i)
    if (!fcl_launcher_global_size_configured(l->steps[i])) return false;
  return true;
}

bool fcl_launcher_queue_configured(const fcl_launcher *l) {
  if (!l) return false;
  if (l->kind == L_KERNEL || l->kind == L_ITERATIVE) return l->queue != NULL;
  if (l->kind != L_LIST) return false;
  for (size_t i = 0; i < l->num_steps; ++i)
    if (!fcl_launcher_queue_configured(l->steps[i])) return false;
  return l->num_steps > 0;
}

fcl_status fcl_launcher_configure(fcl_launcher *launcher, fcl_queue *queue, unsigned work_dim,
                                  const size_t *global, const size_t *local) {
  FCL_CHECK_NULL(launcher, 1);
  fcl_launcher *l = launcher;
  if (l->kind != L_KERNEL && l->kind != L_ITERATIVE)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s' is not a kernel launcher", l->name);
  FCL_CHECK_ARG(work_dim <= 3, 3, "work_dim", "must be 0 (keep), 1, 2 or 3");
  FCL_CHECK_ARG(work_dim == 0 || global, 4, "global", "must not be NULL when work_dim > 0");
  if (queue) {
    fcl_queue_retain(queue);
    fcl_queue_release(&l->queue);
    l->queue = queue;
  }
  if (work_dim) {
    for (unsigned i = 0; i < work_dim; ++i)
      if (global[i] == 0)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 4 (global): size %u is 0", i);
    l->work_dim = work_dim;
    memset(l->global, 0, sizeof l->global);
    memset(l->local, 0, sizeof l->local);
    memcpy(l->global, global, work_dim * sizeof *global);
    l->has_local = local != NULL;
    if (local) memcpy(l->local, local, work_dim * sizeof *local);
  }
  return FCL_OK;
}

fcl_status fcl_launcher_set_work_size_fn(fcl_launcher *launcher, fcl_work_size_fn fn, void *user,
                                         void (*destroy)(void *user)) {
  FCL_CHECK_NULL(launcher, 1);
  FCL_CHECK_NULL(fn, 2);
  fcl_launcher *l = launcher;
  if (l->kind != L_KERNEL && l->kind != L_ITERATIVE)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s' is not a kernel launcher", l->name);
  fcl_value *scratch = calloc(l->num_decls ? l->num_decls : 1, sizeof *scratch);
  if (!scratch) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "launcher '%s': work-size values", l->name);
  if (l->size_destroy) l->size_destroy(l->size_user);
  free(l->size_values);
  l->size_fn = fn;
  l->size_user = user;
  l->size_destroy = destroy;
  l->size_values = scratch;
  return FCL_OK;
}

fcl_status fcl_launcher_call(fcl_launcher *launcher, fcl_queue *queue, const fcl_param_set *params,
                             unsigned num_wait, fcl_event *const *wait, fcl_event **event) {
  if (event) *event = NULL;
  if (!launcher) return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 1 (launcher): NULL");
  if (num_wait && !wait)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 5 (wait): NULL with %u events", num_wait);
  if (params && params->owner != launcher)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 3 (params): made for launcher '%s', "
                     "not '%s'",
                     params->owner->name, launcher->name);
  if (!params && launcher->num_decls)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s' has %zu parameters (first: '%s') "
                     "but no parameter set was given",
                     launcher->name, launcher->num_decls, launcher->decls[0].name);
  const fcl_value *values = params ? params->values : NULL;
  const bool *set = params ? params->set : NULL;
  switch (launcher->kind) {
    case L_KERNEL:
    case L_ITERATIVE:
      return fcl__kernel_call(launcher, queue, num_wait, wait, values, set, NULL, event);
    case L_LIST: return fcl__list_call(launcher, queue, num_wait, wait, values, set, event);
    case L_COPY:
      if (!queue)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "copy launcher '%s' needs a queue",
                         launcher->name);
      return fcl__copy_call(launcher, queue, num_wait, wait, event);
    case L_HOST:
      if (num_wait) FCL_TRY(fcl_events_wait(num_wait, wait));
      return launcher->host_fn(launcher->host_user, queue);
  }
  return FCL_ERROR(FCL_ERR_INTERNAL, "launcher kind %d", (int)launcher->kind);
}

fcl_status fcl_launcher_create_host(const char *name, fcl_host_fn fn, void *user,
                                    fcl_launcher **out) {
  FCL_CHECK_NULL(fn, 2);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  FCL_TRY(fcl__launcher_new(L_HOST, name, out));
  (*out)->host_fn = fn;
  (*out)->host_user = user;
  return FCL_OK;
}

fcl_status fcl_launcher_create_host_enqueue(const char *name, fcl_host_fn fn, void *user,
                                            fcl_launcher **out) {
  FCL_TRY(fcl_launcher_create_host(name, fn, user, out));
  (*out)->host_enqueues = true;
  return FCL_OK;
}

static fcl_mem *rebound(fcl_mem *m, size_t n, fcl_mem *const *old, fcl_mem *const *now) {
  for (size_t i = 0; i < n; ++i)
    if (m == old[i]) return now[i];
  return m;
}

fcl_status fcl_launcher_rebind(fcl_launcher *launcher, size_t n, fcl_mem *const *old,
                               fcl_mem *const *now) {
  FCL_CHECK_NULL(launcher, 1);
  FCL_CHECK_ARG(n == 0 || (old && now), 3, "old", "old and now must not be NULL when n > 0");
  fcl_launcher *l = launcher;
  for (size_t i = 0; i < l->num_steps; ++i) FCL_TRY(fcl_launcher_rebind(l->steps[i], n, old, now));
  if (l->kind == L_COPY) {
    l->copy.src = rebound(l->copy.src, n, old, now);
    l->copy.dst = rebound(l->copy.dst, n, old, now);
  }
  for (size_t i = 0; i < l->num_fixed; ++i) {
    fcl_arg *a = &l->fixed[i];
    if (a->type != FCL_TYPE_BUFFER) continue;
    fcl_mem *m = rebound(a->value.buffer, n, old, now);
    if (m == a->value.buffer) continue;
    FCL_TRY(fcl_kernel_set_arg_buffer(l->kernel, a->index, m));
    a->value.buffer = m;
  }
  return FCL_OK;
}

void fcl_launcher_destroy(fcl_launcher **launcher) {
  if (!launcher || !*launcher) return;
  fcl_launcher *l = *launcher;
  *launcher = NULL;
  for (size_t i = 0; i < l->num_events; ++i) fcl_event_release(&l->events[i]);
  free(l->events);
  for (size_t i = 0; i < l->num_decls; ++i) free(l->decls[i].name);
  free(l->decls);
  fcl__kernel_destroy(l);
  fcl__list_destroy(l);
  free(l->name);
  free(l);
}
