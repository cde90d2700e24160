/* Frees that would wait for a device a user event may hold (cuda_backend.h, fcl__cuda_hold):
 * kept until no user event of the device is pending, so that releasing memory never waits for a
 * stream that only the releasing thread could let go. */
#include <pthread.h>

#include "cuda_backend.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* every device's counts and lists */

void fcl__cuda_hold(const fcl_device *device, int delta) {
  fcl__cuda_device *d = device->native;
  pthread_mutex_lock(&lock);
  d->user_events_pending += delta;
  pthread_mutex_unlock(&lock);
}

bool fcl__cuda_user_events_pending(const fcl_device *device) {
  const fcl__cuda_device *d = device->native;
  pthread_mutex_lock(&lock);
  const bool pending = d->user_events_pending > 0;
  pthread_mutex_unlock(&lock);
  return pending;
}

bool fcl__cuda_free_later(fcl__cuda_mem *cm) {
  fcl__cuda_device *d = cm->device->native;
  pthread_mutex_lock(&lock);
  const bool later = d->user_events_pending > 0;
  if (later) {
    cm->next_deferred = d->deferred;
    d->deferred = cm;
  }
  pthread_mutex_unlock(&lock);
  return later;
}

void fcl__cuda_free_deferred(const fcl_device *device, bool force) {
  fcl__cuda_device *d = device->native;
  pthread_mutex_lock(&lock);
  fcl__cuda_mem *list = NULL;
  if (force || d->user_events_pending == 0) {
    list = d->deferred;
    d->deferred = NULL;
  }
  pthread_mutex_unlock(&lock);
  while (list) {
    fcl__cuda_mem *next = list->next_deferred;
    fcl__cuda_mem_free(list);
    list = next;
  }
}
