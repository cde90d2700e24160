/* The CUDA backend's events: a CUDA event recorded after the command (and one before it on a
 * profiling queue); callbacks from a helper stream that waits for the event. */
#include <stdlib.h>
#include <time.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "cuda_backend.h"
#include "driver.h"

void fcl__cuda_event_free(fcl__cuda_event *e) {
  if (!e) return;
  const fcl__cu_api *cu = fcl__cu(NULL);
  if (cu && e->device && fcl__cuda_current(e->device) == FCL_OK) { /* the context lives */
    if (e->end) cu->EventDestroy(e->end);
    if (e->start) cu->EventDestroy(e->start);
    /* a word whose event was never set stays out: a stream may wait on it for ever */
    if (e->word && e->status != FCL_EVENT_SUBMITTED) fcl__cuda_word_give(e->device, e->word);
  }
  if (e->word && e->status == FCL_EVENT_SUBMITTED) fcl__cuda_hold(e->device, -1);
  fcl__cuda_gates_clear(&e->gates);
  if (e->user) pthread_mutex_destroy(&e->lock);
  free(e);
}

void fcl__cuda_event_release(fcl_event *e) { fcl__cuda_event_free(e->native); }

fcl_status fcl__cuda_events_wait(unsigned n, fcl_event *const *events) {
  const fcl__cu_api *cu = fcl__cu(NULL);
  for (unsigned i = 0; i < n; ++i) {
    fcl__cuda_event *e = events[i]->native;
    if (e->user) { /* the host polls the word until another thread sets it */
      while (__atomic_load_n(e->word->host, __ATOMIC_ACQUIRE) != e->target) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
      }
      pthread_mutex_lock(&e->lock);
      const int status = e->status;
      pthread_mutex_unlock(&e->lock);
      if (status < 0)
        return fcl__error_set(FCL_ERR_CUDA, status, __func__, __FILE__, __LINE__,
                              "event %u of %u (a user event) ended in error %d", i, n, status);
      continue;
    }
    FCL_TRY(fcl__cuda_current(e->device));
    FCL_TRY(fcl__cuda_waited(e->device, cu->EventSynchronize(e->end), "cuEventSynchronize"));
    const int failed = fcl__cuda_gates_failed(&e->gates);
    if (failed < 0)
      return fcl__error_set(FCL_ERR_CUDA, failed, __func__, __FILE__, __LINE__,
                            "event %u of %u ended in error %d: its command ran after a user "
                            "event that failed (CUDA ran it: its results are not valid)",
                            i, n, failed);
  }
  return FCL_OK;
}

fcl_status fcl__cuda_event_status(const fcl_event *event, int *status) {
  fcl__cuda_event *e = event->native;
  if (e->user) {
    pthread_mutex_lock(&e->lock);
    *status = e->status;
    pthread_mutex_unlock(&e->lock);
    return FCL_OK;
  }
  FCL_TRY(fcl__cuda_current(e->device));
  CUresult r = fcl__cu(NULL)->EventQuery(e->end);
  if (r == CUDA_SUCCESS) {
    const int failed = fcl__cuda_gates_failed(&e->gates);
    *status = failed < 0 ? failed : FCL_EVENT_COMPLETE;
  } else if (r == CUDA_ERROR_NOT_READY)
    *status = FCL_EVENT_SUBMITTED;
  else
    return FCL_CU_ERROR(r, "cuEventQuery");
  return FCL_OK;
}

fcl_status fcl__cuda_event_profile(const fcl_event *event, fcl_event_times *times) {
  const fcl__cuda_event *e = event->native;
  if (!e->start)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "the event's queue was not made with FCL_QUEUE_PROFILING");
  FCL_TRY(fcl__cuda_current(e->device));
  const CUresult done = fcl__cu(NULL)->EventQuery(e->end);
  if (done == CUDA_ERROR_NOT_READY)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "no profiling times: the event is not complete");
  FCL_CU_TRY(done, "cuEventQuery");
  float ms = 0;
  FCL_CU_TRY(fcl__cu(NULL)->EventElapsedTime(&ms, e->start, e->end), "cuEventElapsedTime");
  /* CUDA measures intervals, not instants: the command's start is the origin */
  times->queued_ns = times->submit_ns = times->start_ns = 0;
  times->end_ns = (uint64_t)((double)ms * 1e6);
  return FCL_OK;
}

/* A callback waiting for an event. */
struct fcl__cuda_callback {
  fcl__cuda_callback *next;
  fcl_event *event; /* retained until called */
  fcl_event_callback callback;
  void *user;
};

static void CUDA_CB call_back(void *arg) {
  fcl__cuda_callback *c = arg;
  const int failed = fcl__cuda_gates_failed(&((const fcl__cuda_event *)c->event->native)->gates);
  c->callback(c->event, failed < 0 ? failed : FCL_EVENT_COMPLETE, c->user);
  fcl_event_release(&c->event);
  free(c);
}

fcl_status fcl__cuda_event_on_complete(fcl_event *event, fcl_event_callback callback, void *user) {
  fcl__cuda_event *e = event->native;
  fcl__cuda_callback *c = calloc(1, sizeof *c);
  if (!c) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "event callback");
  *c = (fcl__cuda_callback){NULL, fcl_event_retain(event), callback, user};
  if (e->user) { /* called when the event is set, or now if it was */
    pthread_mutex_lock(&e->lock);
    const int status = e->status;
    if (status == FCL_EVENT_SUBMITTED) {
      c->next = e->callbacks;
      e->callbacks = c;
    }
    pthread_mutex_unlock(&e->lock);
    if (status != FCL_EVENT_SUBMITTED) {
      callback(event, status, user);
      fcl_event_release(&c->event);
      free(c);
    }
    return FCL_OK;
  }
  /* a stream of the device's own waits for the event, then runs the callback on a driver
   * thread */
  FCL_TRY(fcl__cuda_current(e->device));
  const fcl__cu_api *cu = fcl__cu(NULL);
  fcl__cuda_device *d = e->device->native;
  CUresult r = CUDA_SUCCESS;
  if (!d->callbacks) r = cu->StreamCreate(&d->callbacks, CU_STREAM_NON_BLOCKING);
  if (r == CUDA_SUCCESS) r = cu->StreamWaitEvent(d->callbacks, e->end, 0);
  if (r == CUDA_SUCCESS) r = cu->LaunchHostFunc(d->callbacks, call_back, c);
  if (r != CUDA_SUCCESS) {
    fcl_event_release(&c->event);
    free(c);
    return FCL_CU_ERROR(r, "cuLaunchHostFunc (event callback)");
  }
  return FCL_OK;
}

fcl_status fcl__cuda_user_event_create(const fcl_context *context, fcl_event **event) {
  FCL_TRY(fcl__cuda_current(context->devices[0]));
  fcl__cuda_event *e = calloc(1, sizeof *e);
  if (!e) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "user event");
  e->user = true;
  e->device = context->devices[0];
  e->status = FCL_EVENT_SUBMITTED;
  pthread_mutex_init(&e->lock, NULL);
  const fcl_status st = fcl__cuda_word_take(e->device, &e->word);
  if (st != FCL_OK) {
    fcl__cuda_event_free(e);
    return st;
  }
  e->target = *e->word->host + 1;
  fcl__cuda_hold(e->device, 1); /* until set: frees wait (deferred_free.c) */
  return fcl__event_new(&fcl__cuda_backend, e, event);
}

fcl_status fcl__cuda_user_event_set(fcl_event *event, int status) {
  fcl__cuda_event *e = event->native;
  if (!e->user) return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 1 (event): not a user event");
  pthread_mutex_lock(&e->lock);
  const bool set = e->status != FCL_EVENT_SUBMITTED;
  if (!set) e->status = status;
  fcl__cuda_callback *list = set ? NULL : e->callbacks;
  e->callbacks = NULL;
  /* the device reads the word: waiting streams go on (after a failure too: CUDA cannot cancel
   * the commands behind it, so they run) */
  if (!set) __atomic_store_n(e->word->host, e->target, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&e->lock);
  if (!set) fcl__cuda_hold(e->device, -1);
  if (set) return FCL_ERROR(FCL_ERR_INVALID_STATE, "the user event was set already");
  while (list) {
    fcl__cuda_callback *next = list->next;
    list->callback(list->event, status, list->user);
    fcl_event_release(&list->event);
    free(list);
    list = next;
  }
  return FCL_OK;
}
