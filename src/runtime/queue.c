/* Queues: arguments checked and host syncs counted here, the work done by the queue's backend. */
#include <stdlib.h>

#include "backend.h"
#include "check.h"
#include "runtime_impl.h"

fcl_status fcl__queue_new(const fcl__backend *backend, fcl_device *device, unsigned flags,
                          fcl_queue **out) {
  fcl_queue *q = calloc(1, sizeof *q);
  if (!q) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "queue object");
  q->backend = backend;
  atomic_init(&q->refs, 1);
  q->device = device;
  q->flags = flags;
  *out = q;
  return FCL_OK;
}

fcl_status fcl_queue_create(const fcl_context *context, const fcl_device *device, unsigned flags,
                            fcl_queue **queue) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(queue, 4);
  FCL_CHECK_ARG((flags & ~(unsigned)(FCL_QUEUE_OUT_OF_ORDER | FCL_QUEUE_PROFILING)) == 0, 3,
                "flags", "only FCL_QUEUE_OUT_OF_ORDER and FCL_QUEUE_PROFILING are defined");
  *queue = NULL;
  fcl_device *dev = device ? (fcl_device *)device : fcl_context_device(context, 0);
  if (fcl__context_device_index(context, dev) < 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (device): not a device of the context");
  const fcl__backend *backend = context->backend;
  fcl_queue *q;
  FCL_TRY(fcl__queue_new(backend, dev, flags, &q));
  fcl_status st = backend->queue_create(context, dev, flags, q);
  if (st != FCL_OK) {
    free(q);
    return st;
  }
  *queue = q;
  return FCL_OK;
}

fcl_queue *fcl_queue_retain(fcl_queue *queue) {
  if (queue) atomic_fetch_add(&queue->refs, 1);
  return queue;
}

void fcl_queue_release(fcl_queue **queue) {
  if (!queue || !*queue) return;
  fcl_queue *q = *queue;
  *queue = NULL;
  if (atomic_fetch_sub(&q->refs, 1) != 1) return;
  q->backend->queue_destroy(q);
  free(q);
}

fcl_status fcl_queue_device(const fcl_queue *queue, fcl_device **device) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(device, 2);
  *device = queue->device;
  return FCL_OK;
}

unsigned fcl_queue_flags(const fcl_queue *queue) { return queue ? queue->flags : 0; }

fcl_status fcl_queue_barrier(fcl_queue *queue, unsigned num_wait, fcl_event *const *wait,
                             fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_TRY(fcl__check_waits(num_wait, wait, 3, "wait"));
  return queue->backend->queue_marker(queue, true, num_wait, wait, event);
}

fcl_status fcl_queue_marker(fcl_queue *queue, unsigned num_wait, fcl_event *const *wait,
                            fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_TRY(fcl__check_waits(num_wait, wait, 3, "wait"));
  return queue->backend->queue_marker(queue, false, num_wait, wait, event);
}

fcl_status fcl_queue_flush(fcl_queue *queue) {
  FCL_CHECK_NULL(queue, 1);
  return queue->backend->queue_flush(queue);
}

fcl_status fcl_queue_finish(fcl_queue *queue) {
  FCL_CHECK_NULL(queue, 1);
  fcl__count_host_sync();
  return queue->backend->queue_finish(queue);
}
