/* List launchers (ordered steps on one queue) and copy steps. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "launch_impl.h"

fcl_status fcl_launcher_create_list(const char *name, fcl_launcher **out) {
  FCL_CHECK_NULL(out, 2);
  *out = NULL;
  return fcl__launcher_new(L_LIST, name, out);
}

/* Append one non-list launcher, mapping its parameters into the list's table. */
static fcl_status push_one(fcl_launcher *list, fcl_launcher *step) {
  size_t before = list->num_decls;
  size_t *map = malloc((step->num_decls ? step->num_decls : 1) * sizeof *map);
  if (!map) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "parameter map of '%s'", step->name);
  fcl_status st = FCL_OK;
  for (size_t j = 0; st == FCL_OK && j < step->num_decls; ++j)
    st = fcl__decl_add(list, step->decls[j].name, step->decls[j].type, &map[j]);
  if (st == FCL_OK && list->num_steps == list->cap_steps) {
    size_t cap = list->cap_steps ? 2 * list->cap_steps : 8;
    fcl_launcher **steps = realloc(list->steps, cap * sizeof *steps);
    if (steps) list->steps = steps;
    size_t **maps = steps ? realloc(list->maps, cap * sizeof *maps) : NULL;
    if (maps) list->maps = maps;
    if (!steps || !maps)
      st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "list of %zu steps", cap);
    else
      list->cap_steps = cap;
  }
  if (st != FCL_OK) { /* roll the table back: the list is unchanged */
    for (size_t i = before; i < list->num_decls; ++i) free(list->decls[i].name);
    list->num_decls = before;
    free(map);
    return st;
  }
  list->steps[list->num_steps] = step;
  list->maps[list->num_steps++] = map;
  return FCL_OK;
}

fcl_status fcl_launcher_list_push(fcl_launcher *list, fcl_launcher *launcher) {
  FCL_CHECK_NULL(list, 1);
  if (list->kind != L_LIST)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 1 (list): launcher '%s' is not a list",
                     list->name);
  if (!launcher) return FCL_OK;
  if (launcher == list)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "list '%s' cannot contain itself", list->name);
  if (launcher->kind != L_LIST) return push_one(list, launcher);
  /* Flatten: move the inner list's steps, then drop its shell. */
  size_t pushed = 0, decls_before = list->num_decls;
  fcl_status st = FCL_OK;
  for (; pushed < launcher->num_steps; ++pushed)
    if ((st = push_one(list, launcher->steps[pushed])) != FCL_OK) break;
  if (st != FCL_OK) { /* undo: the list is unchanged and the inner list keeps its steps */
    for (size_t i = 0; i < pushed; ++i) free(list->maps[--list->num_steps]);
    for (size_t i = decls_before; i < list->num_decls; ++i) free(list->decls[i].name);
    list->num_decls = decls_before;
    return st;
  }
  for (size_t i = 0; i < launcher->num_steps; ++i) free(launcher->maps[i]);
  launcher->num_steps = 0;
  fcl_launcher_destroy(&launcher);
  return FCL_OK;
}

fcl_status fcl_launcher_as_list(fcl_launcher *launcher, const char *name, fcl_launcher **list) {
  FCL_CHECK_NULL(launcher, 1);
  FCL_CHECK_NULL(list, 3);
  FCL_TRY(fcl_launcher_create_list(name, list));
  fcl_status st = fcl_launcher_list_push(*list, launcher);
  if (st != FCL_OK) {
    (*list)->num_steps = 0;
    fcl_launcher_destroy(list);
  }
  return st;
}

size_t fcl_launcher_list_size(const fcl_launcher *list) {
  return list && list->kind == L_LIST ? list->num_steps : 0;
}

fcl_launcher *fcl_launcher_list_get(const fcl_launcher *list, size_t i) {
  return list && list->kind == L_LIST && i < list->num_steps ? list->steps[i] : NULL;
}

void fcl__list_destroy(fcl_launcher *l) {
  for (size_t i = 0; i < l->num_steps; ++i) {
    fcl_launcher_destroy(&l->steps[i]);
    free(l->maps[i]);
  }
  free(l->steps);
  free(l->maps);
}

fcl_status fcl__list_call(fcl_launcher *l, fcl_queue *q, unsigned num_wait, fcl_event *const *wait,
                          const fcl_value *values, const bool *set, fcl_event **event) {
  if (l->num_steps == 0) return num_wait ? fcl_events_wait(num_wait, wait) : FCL_OK;
  /* On an in-order queue the queue itself orders the steps: events are only made where they
   * are needed (before a host step, for the caller, for statistics), as a raw loop would. On an
   * out-of-order queue (or with steps on their own queues) each step waits for the previous. */
  bool chain = !q || (fcl_queue_flags(q) & FCL_QUEUE_OUT_OF_ORDER);
  fcl_event *prev = NULL;
  fcl_status st = FCL_OK;
  for (size_t i = 0; i < l->num_steps && st == FCL_OK; ++i) {
    fcl_launcher *s = l->steps[i];
    bool last = i + 1 == l->num_steps;
    bool want = chain || (last && event) || (!last && l->steps[i + 1]->kind == L_HOST);
    unsigned nw = i == 0 ? num_wait : prev != NULL;
    fcl_event *const *w = i == 0 ? wait : (nw ? &prev : NULL);
    fcl_event *ev = NULL, **evp = want ? &ev : NULL;
    switch (s->kind) {
      case L_KERNEL:
      case L_ITERATIVE: st = fcl__kernel_call(s, q, nw, w, values, set, l->maps[i], evp); break;
      case L_COPY:
        st = q ? fcl__copy_call(s, q, nw, w, evp)
               : FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                           "list '%s': copy step '%s' needs the list to "
                           "be called with a queue",
                           l->name, s->name);
        break;
      case L_HOST: /* runs once everything before it in this call is done */
        if (s->host_enqueues && !chain && q) { /* in order after the earlier steps: no wait */
          if (nw) st = fcl_queue_barrier(q, nw, w, NULL);
          if (st == FCL_OK) st = s->host_fn(s->host_user, q);
          /* the step's event: a marker after what fn enqueued */
          if (st == FCL_OK && evp) st = fcl_queue_marker(q, 0, NULL, evp);
          break;
        }
        if (nw)
          st = fcl_events_wait(nw, w);
        else if (i > 0 && q)
          st = fcl_queue_finish(q);
        if (st == FCL_OK) st = s->host_fn(s->host_user, q);
        break;
      case L_LIST: st = FCL_ERROR(FCL_ERR_INTERNAL, "nested list in '%s'", l->name); break;
    }
    if (prev) fcl_event_release(&prev);
    prev = ev;
  }
  if (st != FCL_OK) {
    if (prev) fcl_event_release(&prev);
    return st;
  }
  if (event)
    *event = prev;
  else if (prev)
    fcl_event_release(&prev);
  return FCL_OK;
}

static fcl_status copy_new(const char *name, fcl__copy c, size_t bytes, fcl_launcher **out) {
  *out = NULL;
  FCL_TRY(fcl__launcher_new(L_COPY, name, out));
  (*out)->copy = c;
  (*out)->bytes_per_launch = bytes;
  (*out)->trace = fcl__trace_matches(name, NULL);
  return FCL_OK;
}

fcl_status fcl_launcher_create_copy_h2d(const char *name, const void *src, fcl_mem *dst,
                                        size_t dst_offset, size_t bytes, fcl_launcher **out) {
  FCL_CHECK_NULL(src, 2);
  FCL_CHECK_NULL(dst, 3);
  FCL_CHECK_ARG(bytes > 0, 5, "bytes", "must be > 0");
  FCL_CHECK_NULL(out, 6);
  fcl__copy c = {
      .kind = COPY_H2D, .src_host = src, .dst = dst, .dst_offset = dst_offset, .bytes = bytes};
  return copy_new(name, c, bytes, out);
}

fcl_status fcl_launcher_create_copy_d2h(const char *name, fcl_mem *src, size_t src_offset,
                                        void *dst, size_t bytes, fcl_launcher **out) {
  FCL_CHECK_NULL(src, 2);
  FCL_CHECK_NULL(dst, 4);
  FCL_CHECK_ARG(bytes > 0, 5, "bytes", "must be > 0");
  FCL_CHECK_NULL(out, 6);
  fcl__copy c = {
      .kind = COPY_D2H, .dst_host = dst, .src = src, .src_offset = src_offset, .bytes = bytes};
  return copy_new(name, c, bytes, out);
}

fcl_status fcl_launcher_create_copy_d2d(const char *name, fcl_mem *src, size_t src_offset,
                                        fcl_mem *dst, size_t dst_offset, size_t bytes,
                                        fcl_launcher **out) {
  FCL_CHECK_NULL(src, 2);
  FCL_CHECK_NULL(dst, 4);
  FCL_CHECK_ARG(bytes > 0, 6, "bytes", "must be > 0");
  FCL_CHECK_NULL(out, 7);
  fcl__copy c = {.kind = COPY_D2D,
                 .src = src,
                 .dst = dst,
                 .src_offset = src_offset,
                 .dst_offset = dst_offset,
                 .bytes = bytes};
  return copy_new(name, c, 2 * bytes, out); /* read + write */
}

static size_t rect_bytes(const fcl_rect *r) { return r->region[0] * r->region[1] * r->region[2]; }

fcl_status fcl_launcher_create_copy_rect_h2d(const char *name, const void *src, fcl_mem *dst,
                                             const fcl_rect *rect, fcl_launcher **out) {
  FCL_CHECK_NULL(src, 2);
  FCL_CHECK_NULL(dst, 3);
  FCL_CHECK_NULL(rect, 4);
  FCL_CHECK_NULL(out, 5);
  fcl__copy c = {.kind = COPY_H2D, .rect = true, .src_host = src, .dst = dst, .r = *rect};
  return copy_new(name, c, rect_bytes(rect), out);
}

fcl_status fcl_launcher_create_copy_rect_d2h(const char *name, fcl_mem *src, void *dst,
                                             const fcl_rect *rect, fcl_launcher **out) {
  FCL_CHECK_NULL(src, 2);
  FCL_CHECK_NULL(dst, 3);
  FCL_CHECK_NULL(rect, 4);
  FCL_CHECK_NULL(out, 5);
  fcl__copy c = {.kind = COPY_D2H, .rect = true, .dst_host = dst, .src = src, .r = *rect};
  return copy_new(name, c, rect_bytes(rect), out);
}

fcl_status fcl_launcher_create_copy_rect_d2d(const char *name, fcl_mem *src, fcl_mem *dst,
                                             const fcl_rect *rect, fcl_launcher **out) {
  FCL_CHECK_NULL(src, 2);
  FCL_CHECK_NULL(dst, 3);
  FCL_CHECK_NULL(rect, 4);
  FCL_CHECK_NULL(out, 5);
  fcl__copy c = {.kind = COPY_D2D, .rect = true, .src = src, .dst = dst, .r = *rect};
  return copy_new(name, c, 2 * rect_bytes(rect), out);
}

fcl_status fcl__copy_call(fcl_launcher *l, fcl_queue *q, unsigned num_wait, fcl_event *const *wait,
                          fcl_event **event) {
  const fcl__copy *c = &l->copy;
  const fcl_rect *r = &c->r;
  bool profile = fcl_queue_flags(q) & FCL_QUEUE_PROFILING;
  fcl_event *ev = NULL, **evp = (event || profile) ? &ev : NULL;
  fcl_status st;
  if (l->trace)
    fcl_log(FCL_LOG_INFO, "trace: copy '%s' (%s, %zu bytes)", l->name,
            c->kind == COPY_H2D   ? "host->device"
            : c->kind == COPY_D2H ? "device->host"
                                  : "device->device",
            c->rect ? rect_bytes(r) : c->bytes);
  switch (c->kind) {
    case COPY_H2D:
      st = c->rect ? fcl_mem_write_rect(q, c->dst, c->src_host, r, FCL_NON_BLOCKING, num_wait, wait,
                                        evp)
                   : fcl_mem_write(q, c->dst, c->dst_offset, c->bytes, c->src_host,
                                   FCL_NON_BLOCKING, num_wait, wait, evp);
      break;
    case COPY_D2H:
      st = c->rect
               ? fcl_mem_read_rect(q, c->src, c->dst_host, r, FCL_NON_BLOCKING, num_wait, wait, evp)
               : fcl_mem_read(q, c->src, c->src_offset, c->bytes, c->dst_host, FCL_NON_BLOCKING,
                              num_wait, wait, evp);
      break;
    default:
      st = c->rect ? fcl_mem_copy_rect(q, c->src, c->dst, r, num_wait, wait, evp)
                   : fcl_mem_copy(q, c->src, c->src_offset, c->dst, c->dst_offset, c->bytes,
                                  num_wait, wait, evp);
  }
  if (st != FCL_OK) {
    return fcl__error_set(st, fcl_last_native_error(), __func__, __FILE__, __LINE__,
                          "copy launcher '%s' (%zu bytes): %s", l->name,
                          c->rect ? rect_bytes(r) : c->bytes, fcl_last_error());
  }
  if (profile) fcl__launcher_record(l, q, ev);
  if (event)
    *event = ev;
  else if (ev)
    fcl_event_release(&ev);
  return FCL_OK;
}
