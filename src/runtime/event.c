/* Events: references, wait lists, host waits, status, callbacks, user events, profiling times;
 * arguments checked and host syncs counted here, the work done by the event's backend. */
#include <stdlib.h>

#include "backend.h"
#include "check.h"
#include "runtime_impl.h"

fcl_status fcl__event_new(const fcl__backend *backend, void *native, fcl_event **out) {
  fcl_event *e = malloc(sizeof *e);
  if (!e) {
    fcl_event tmp = {.backend = backend, .native = native};
    backend->event_release(&tmp);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "event object");
  }
  e->backend = backend;
  atomic_init(&e->refs, 1);
  e->native = native;
  *out = e;
  return FCL_OK;
}

fcl_status fcl__check_waits(unsigned num_wait, fcl_event *const *wait, int pos, const char *name) {
  if (num_wait == 0) return FCL_OK;
  if (!wait)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument %d (%s): must not be NULL when its count is %u", pos, name,
                     num_wait);
  for (unsigned i = 0; i < num_wait; ++i) {
    if (!wait[i])
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument %d (%s): event %u of %u is NULL", pos,
                       name, i, num_wait);
    if (wait[i]->backend != wait[0]->backend)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument %d (%s): event %u is of backend '%s', event 0 of '%s'", pos, name,
                       i, wait[i]->backend->name, wait[0]->backend->name);
  }
  return FCL_OK;
}

fcl_event *fcl_event_retain(fcl_event *event) {
  if (event) atomic_fetch_add(&event->refs, 1);
  return event;
}

void fcl_event_release(fcl_event **event) {
  if (!event || !*event) return;
  fcl_event *e = *event;
  *event = NULL;
  if (atomic_fetch_sub(&e->refs, 1) != 1) return;
  e->backend->event_release(e);
  free(e);
}

fcl_status fcl_events_wait(unsigned num_events, fcl_event *const *events) {
  if (num_events == 0) return FCL_OK;
  FCL_TRY(fcl__check_waits(num_events, events, 2, "events"));
  for (unsigned i = 0; i < num_events; ++i) {
    int s = FCL_EVENT_QUEUED;
    events[i]->backend->event_status(events[i], &s);
    if (s > FCL_EVENT_COMPLETE) { /* one not done: this wait holds the host */
      fcl__count_host_sync();
      break;
    }
  }
  return events[0]->backend->events_wait(num_events, events);
}

fcl_status fcl_event_status(const fcl_event *event, int *status) {
  FCL_CHECK_NULL(event, 1);
  FCL_CHECK_NULL(status, 2);
  return event->backend->event_status(event, status);
}

const char *fcl_event_status_name(int status) {
  switch (status) {
    case FCL_EVENT_COMPLETE: return "complete";
    case FCL_EVENT_RUNNING: return "running";
    case FCL_EVENT_SUBMITTED: return "submitted";
    case FCL_EVENT_QUEUED: return "queued";
    default: return "error";
  }
}

fcl_status fcl_event_on_complete(fcl_event *event, fcl_event_callback callback, void *user) {
  FCL_CHECK_NULL(event, 1);
  FCL_CHECK_NULL(callback, 2);
  return event->backend->event_on_complete(event, callback, user);
}

fcl_status fcl_user_event_create(const fcl_context *context, fcl_event **event) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(event, 2);
  *event = NULL;
  return context->backend->user_event_create(context, event);
}

fcl_status fcl_user_event_complete(fcl_event *event) {
  FCL_CHECK_NULL(event, 1);
  return event->backend->user_event_set(event, FCL_EVENT_COMPLETE);
}

fcl_status fcl_user_event_fail(fcl_event *event, int error) {
  FCL_CHECK_NULL(event, 1);
  FCL_CHECK_ARG(error < 0, 2, "error", "must be a negative error code");
  return event->backend->user_event_set(event, error);
}

fcl_status fcl_event_profile(const fcl_event *event, fcl_event_times *times) {
  FCL_CHECK_NULL(event, 1);
  FCL_CHECK_NULL(times, 2);
  return event->backend->event_profile(event, times);
}
