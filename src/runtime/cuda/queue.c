/* The CUDA backend's queues: a non-blocking stream per queue (in order: CUDA has no out-of-order
 * stream), and the commands' events (fcl__cuda_before / fcl__cuda_after around every enqueue). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "cuda_backend.h"
#include "driver.h"

fcl_status fcl__cuda_queue_create(const fcl_context *context, const fcl_device *device,
                                  unsigned flags, fcl_queue *q) {
  (void)context;
  if (flags & FCL_QUEUE_OUT_OF_ORDER)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "CUDA streams run in order: no out-of-order queue");
  FCL_TRY(fcl__cuda_current(device));
  fcl__cuda_queue *cq = calloc(1, sizeof *cq);
  if (!cq) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "CUDA queue");
  CUresult r = fcl__cu(NULL)->StreamCreate(&cq->stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    free(cq);
    return FCL_CU_ERROR(r, "cuStreamCreate");
  }
  pthread_mutex_init(&cq->lock, NULL);
  q->native = cq;
  return FCL_OK;
}

void fcl__cuda_queue_destroy(fcl_queue *q) {
  fcl__cuda_queue *cq = q->native;
  if (fcl__cuda_current(q->device) == FCL_OK) fcl__cu(NULL)->StreamDestroy(cq->stream);
  fcl__cuda_gates_clear(&cq->gates);
  pthread_mutex_destroy(&cq->lock);
  free(cq);
}

fcl_status fcl__cuda_queue_flush(fcl_queue *q) {
  (void)q; /* a stream submits as it is given work */
  return FCL_OK;
}

fcl_status fcl__cuda_queue_sync(fcl_queue *q, const char *call) {
  fcl__cuda_queue *cq = q->native;
  FCL_TRY(fcl__cuda_waited(q->device, fcl__cu(NULL)->StreamSynchronize(cq->stream), call));
  pthread_mutex_lock(&cq->lock);
  const fcl_status st = fcl__cuda_gates_report(&cq->gates, "a command of the queue");
  pthread_mutex_unlock(&cq->lock);
  return st;
}

fcl_status fcl__cuda_queue_finish(fcl_queue *q) {
  FCL_TRY(fcl__cuda_current(q->device));
  return fcl__cuda_queue_sync(q, "cuStreamSynchronize");
}

static pthread_mutex_t link_failures = PTHREAD_MUTEX_INITIALIZER; /* every device's */

fcl_status fcl__cuda_waited(const fcl_device *device, CUresult r, const char *call) {
  fcl__cuda_device *d = device->native;
  if (__atomic_load_n(&d->failed_links, __ATOMIC_ACQUIRE) > 0) {
    char why[sizeof d->link_failure] = "";
    pthread_mutex_lock(&link_failures);
    const bool failed = d->failed_links > 0;
    if (failed) memcpy(why, d->link_failure, sizeof why);
    pthread_mutex_unlock(&link_failures);
    if (failed) return FCL_ERROR(FCL_ERR_CUDA, "CUDA device %d: %s", d->ordinal, why);
  }
  return r == CUDA_SUCCESS ? FCL_OK : FCL_CU_ERROR(r, call);
}

void fcl__cuda_device_link_failed(const fcl_device *device, const char *why) {
  fcl__cuda_device *d = device->native;
  pthread_mutex_lock(&link_failures);
  if (d->failed_links == 0)
    snprintf(d->link_failure, sizeof d->link_failure, "a link was aborted: %s", why);
  __atomic_add_fetch(&d->failed_links, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&link_failures);
}

void fcl__cuda_device_link_released(const fcl_device *device) {
  fcl__cuda_device *d = device->native;
  pthread_mutex_lock(&link_failures);
  __atomic_sub_fetch(&d->failed_links, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&link_failures);
}

fcl_status fcl__cuda_before(fcl_queue *q, unsigned num_wait, fcl_event *const *wait,
                            bool want_event, fcl__cuda_event **ev) {
  *ev = NULL;
  FCL_TRY(fcl__cuda_current(q->device));
  const fcl__cu_api *cu = fcl__cu(NULL);
  fcl__cuda_queue *cq = q->native;
  for (unsigned i = 0; i < num_wait; ++i) {
    const fcl__cuda_event *w = wait[i]->native;
    if (w->user)
      FCL_CU_TRY(
          cu->StreamWaitValue32(cq->stream, w->word->device, w->target, CU_STREAM_WAIT_VALUE_GEQ),
          "cuStreamWaitValue32 (a user event)");
    else
      FCL_CU_TRY(cu->StreamWaitEvent(cq->stream, w->end, 0), "cuStreamWaitEvent");
  }
  const bool profile = (q->flags & FCL_QUEUE_PROFILING) != 0;
  fcl__cuda_event *e = NULL;
  if (want_event || profile) {
    e = calloc(1, sizeof *e);
    if (!e) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "CUDA event");
    e->device = q->device;
  }
  /* the stream runs everything after the wait list: the queue keeps its user events */
  pthread_mutex_lock(&cq->lock);
  fcl_status st = fcl__cuda_gates_wait(&cq->gates, num_wait, wait);
  if (st == FCL_OK && e) st = fcl__cuda_gates_copy(&cq->gates, &e->gates);
  pthread_mutex_unlock(&cq->lock);
  if (st != FCL_OK || !e) {
    fcl__cuda_event_free(e);
    return st;
  }
  unsigned flags = profile ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
  CUresult r = cu->EventCreate(&e->end, flags);
  if (r == CUDA_SUCCESS && profile) r = cu->EventCreate(&e->start, flags);
  if (r == CUDA_SUCCESS && profile) r = cu->EventRecord(e->start, cq->stream);
  if (r != CUDA_SUCCESS) {
    fcl__cuda_event_free(e);
    return FCL_CU_ERROR(r, "cuEventCreate");
  }
  *ev = e;
  return FCL_OK;
}

fcl_status fcl__cuda_after(fcl_queue *q, fcl__cuda_event *e, fcl_event **event) {
  if (!e) return FCL_OK;
  CUresult r = fcl__cu(NULL)->EventRecord(e->end, fcl__cuda_stream(q));
  if (r != CUDA_SUCCESS) {
    fcl__cuda_event_free(e);
    return FCL_CU_ERROR(r, "cuEventRecord");
  }
  if (!event) {
    fcl__cuda_event_free(e); /* recorded for profiling only: nobody asked for it */
    return FCL_OK;
  }
  return fcl__event_new(&fcl__cuda_backend, e, event);
}

fcl_status fcl__cuda_queue_marker(fcl_queue *q, bool barrier, unsigned num_wait,
                                  fcl_event *const *wait, fcl_event **event) {
  (void)barrier; /* a stream is in order: every marker is a barrier */
  fcl__cuda_event *e;
  FCL_TRY(fcl__cuda_before(q, num_wait, wait, event != NULL, &e));
  return fcl__cuda_after(q, e, event);
}
