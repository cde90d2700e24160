/* The CUDA backend's contexts: a device's primary context (the one the runtime API and the
 * libraries built on it share: cuFFT, NCCL), retained while a flowcl context holds it. */
#include <pthread.h>
#include <stdlib.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "cuda_backend.h"
#include "driver.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

fcl_status fcl__cuda_current(const fcl_device *device) {
  const fcl__cuda_device *d = device->native;
  if (!d->primary)
    return FCL_ERROR(FCL_ERR_INVALID_STATE, "CUDA device %d: no context holds it", d->ordinal);
  FCL_CU_TRY(fcl__cu(NULL)->CtxSetCurrent(d->primary), "cuCtxSetCurrent");
  return FCL_OK;
}

fcl_status fcl__cuda_context_create(fcl_device *const *devices, unsigned num_devices,
                                    fcl_context *c) {
  if (num_devices != 1)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "a CUDA context holds one device (%u given): make one context per GPU",
                     num_devices);
  const fcl__cu_api *cu = fcl__cu(NULL);
  fcl__cuda_device *d = devices[0]->native;
  c->devices = malloc(sizeof *c->devices);
  if (!c->devices) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "context device list");
  pthread_mutex_lock(&lock);
  CUresult r = d->contexts ? CUDA_SUCCESS : cu->DevicePrimaryCtxRetain(&d->primary, d->device);
  if (r == CUDA_SUCCESS) d->contexts++;
  pthread_mutex_unlock(&lock);
  if (r != CUDA_SUCCESS) {
    free(c->devices);
    c->devices = NULL;
    return FCL_CU_ERROR(r, "cuDevicePrimaryCtxRetain");
  }
  c->devices[0] = devices[0];
  c->num_devices = 1;
  c->native = d->primary;
  c->native_devices = NULL;
  return FCL_OK;
}

void fcl__cuda_context_destroy(fcl_context *c) {
  fcl__cuda_device *d = c->devices[0]->native;
  pthread_mutex_lock(&lock);
  if (--d->contexts == 0) {
    if (d->callbacks && fcl__cuda_current(c->devices[0]) == FCL_OK)
      fcl__cu(NULL)->StreamDestroy(d->callbacks);
    d->callbacks = NULL;
    if (fcl__cuda_current(c->devices[0]) == FCL_OK) {
      fcl__cuda_free_deferred(c->devices[0], true);
      fcl__cuda_rect_unload(d);
      fcl__cuda_words_free(d);
      fcl__cuda_stages_free(c->devices[0]);
    }
    fcl__cu(NULL)->DevicePrimaryCtxRelease(d->device);
    d->primary = NULL;
  }
  pthread_mutex_unlock(&lock);
  free(c->devices);
}
