/* Holding the device back from a second thread (see fcl_test_gate.h). */
#include "fcl_test_gate.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct fcl_test_gate {
  fcl_event *event;
  double seconds;
  int status;
  atomic_bool opened;
  pthread_t thread;
};

static void *open_later(void *arg) {
  fcl_test_gate *g = arg;
  struct timespec ts = {(time_t)g->seconds, (long)((g->seconds - floor(g->seconds)) * 1e9)};
  nanosleep(&ts, NULL);
  atomic_store(&g->opened, true);
  if (g->status == FCL_EVENT_COMPLETE)
    fcl_user_event_complete(g->event);
  else
    fcl_user_event_fail(g->event, g->status);
  return NULL;
}

fcl_test_gate *fcl_test_gate_hold(fcl_context *ctx, fcl_queue *queue, double seconds, int status) {
  fcl_test_gate *g = calloc(1, sizeof *g);
  CHECK(g != NULL);
  if (!g) return NULL;
  g->seconds = seconds;
  g->status = status;
  atomic_init(&g->opened, false);
  CHECK_OK(fcl_user_event_create(ctx, &g->event));
  if (g->event && queue) CHECK_OK(fcl_queue_barrier(queue, 1, &g->event, NULL));
  if (!g->event || pthread_create(&g->thread, NULL, open_later, g) != 0) {
    CHECKF(false, "%s", "no gate: the user event or its thread could not be made");
    if (g->event) fcl_event_release(&g->event);
    free(g);
    return NULL;
  }
  return g;
}

fcl_event *fcl_test_gate_event(const fcl_test_gate *gate) { return gate ? gate->event : NULL; }

bool fcl_test_gate_opened(fcl_test_gate *gate) { return gate && atomic_load(&gate->opened); }

void fcl_test_gate_join(fcl_test_gate **gate) {
  if (!gate || !*gate) return;
  pthread_join((*gate)->thread, NULL);
  fcl_event_release(&(*gate)->event);
  free(*gate);
  *gate = NULL;
}
