/* The user events a CUDA command runs after (fcl__cuda_gates, cuda_backend.h): a stream waits
 * for a user event on the device, and runs what follows also when the event fails (CUDA cannot
 * drop queued commands), so each queue and each event keeps the user events it may have run
 * after, and a wait on them reports the failure (runtime.h, fcl_user_event_fail). */
#include <stdlib.h>

#include "../check.h"
#include "cuda_backend.h"

int fcl__cuda_gates_failed(const fcl__cuda_gates *g) {
  for (unsigned i = 0; i < g->count; ++i) {
    int s = FCL_EVENT_SUBMITTED;
    fcl__cuda_event_status(g->events[i], &s);
    if (s < 0) return s;
  }
  return 0;
}

void fcl__cuda_gates_clear(fcl__cuda_gates *g) {
  for (unsigned i = 0; i < g->count; ++i) fcl_event_release(&g->events[i]);
  free(g->events);
  *g = (fcl__cuda_gates){0};
}

/* Keep user event u in g unless it is there or complete. */
static fcl_status add(fcl__cuda_gates *g, fcl_event *u) {
  int s = FCL_EVENT_SUBMITTED;
  fcl__cuda_event_status(u, &s);
  if (s == FCL_EVENT_COMPLETE) return FCL_OK;
  for (unsigned i = 0; i < g->count; ++i)
    if (g->events[i] == u) return FCL_OK;
  if (g->count == g->capacity) {
    const unsigned capacity = g->capacity ? 2 * g->capacity : 4;
    fcl_event **events = realloc(g->events, capacity * sizeof *events);
    if (!events) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "the user events a queue waits for");
    g->events = events;
    g->capacity = capacity;
  }
  g->events[g->count++] = fcl_event_retain(u);
  return FCL_OK;
}

fcl_status fcl__cuda_gates_wait(fcl__cuda_gates *g, unsigned num_wait, fcl_event *const *wait) {
  unsigned kept = 0; /* the completed ones go: nothing follows from them any more */
  for (unsigned i = 0; i < g->count; ++i) {
    int s = FCL_EVENT_SUBMITTED;
    fcl__cuda_event_status(g->events[i], &s);
    if (s == FCL_EVENT_COMPLETE)
      fcl_event_release(&g->events[i]);
    else
      g->events[kept++] = g->events[i];
  }
  g->count = kept;
  for (unsigned i = 0; i < num_wait; ++i) {
    const fcl__cuda_event *w = wait[i]->native;
    if (w->user)
      FCL_TRY(add(g, wait[i]));
    else
      for (unsigned j = 0; j < w->gates.count; ++j) FCL_TRY(add(g, w->gates.events[j]));
  }
  return FCL_OK;
}

fcl_status fcl__cuda_gates_copy(const fcl__cuda_gates *from, fcl__cuda_gates *to) {
  for (unsigned i = 0; i < from->count; ++i) FCL_TRY(add(to, from->events[i]));
  return FCL_OK;
}

fcl_status fcl__cuda_gates_report(const fcl__cuda_gates *g, const char *what) {
  const int s = fcl__cuda_gates_failed(g);
  if (s < 0)
    return fcl__error_set(FCL_ERR_CUDA, s, __func__, __FILE__, __LINE__,
                          "%s ran after a user event that failed with %d (CUDA ran it: its "
                          "results are not valid)",
                          what, s);
  return FCL_OK;
}
