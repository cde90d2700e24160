/* The OpenCL backend's platforms and devices: one fcl_platform / fcl_device per OpenCL handle,
 * made on first sight and kept for the life of the process (OpenCL's root devices live as long;
 * a list, since a machine has a handful). */
#include <pthread.h>
#include <stdlib.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "flowcl/opencl.h"
#include "opencl_backend.h"

typedef struct known {
  struct known *next;
  fcl_platform platform; /* for a platform entry */
  fcl_device device;     /* for a device entry */
} known;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static known *platforms, *devices;

fcl_platform *fcl__platform_of(cl_platform_id native) {
  if (!native) return NULL;
  pthread_mutex_lock(&lock);
  known *k = platforms;
  while (k && k->platform.native != native) k = k->next;
  if (!k && (k = calloc(1, sizeof *k))) {
    k->platform = (fcl_platform){&fcl__opencl_backend, native};
    k->next = platforms;
    platforms = k;
  }
  pthread_mutex_unlock(&lock);
  return k ? &k->platform : NULL;
}

fcl_device *fcl__device_of(cl_device_id native) {
  if (!native) return NULL;
  cl_platform_id platform = NULL;
  clGetDeviceInfo(native, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
  fcl_platform *p = fcl__platform_of(platform);
  pthread_mutex_lock(&lock);
  known *k = devices;
  while (k && k->device.native != native) k = k->next;
  if (!k && (k = calloc(1, sizeof *k))) {
    k->device = (fcl_device){&fcl__opencl_backend, native, p};
    k->next = devices;
    devices = k;
  }
  pthread_mutex_unlock(&lock);
  return k ? &k->device : NULL;
}

cl_platform_id fcl_platform_cl(const fcl_platform *platform) {
  return platform && platform->backend == &fcl__opencl_backend ? platform->native : NULL;
}

cl_device_id fcl_device_cl(const fcl_device *device) {
  return device && device->backend == &fcl__opencl_backend ? device->native : NULL;
}

fcl_status fcl_platform_from_cl(cl_platform_id native, fcl_platform **platform) {
  FCL_CHECK_NULL(native, 1);
  FCL_CHECK_NULL(platform, 2);
  size_t size = 0;
  if (clGetPlatformInfo(native, CL_PLATFORM_NAME, 0, NULL, &size) != CL_SUCCESS)
    return FCL_ERROR(FCL_ERR_NOT_FOUND, "argument 1 (native): not an OpenCL platform");
  if (!(*platform = fcl__platform_of(native)))
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "platform object");
  return FCL_OK;
}

fcl_status fcl_device_from_cl(cl_device_id native, fcl_device **device) {
  FCL_CHECK_NULL(native, 1);
  FCL_CHECK_NULL(device, 2);
  cl_platform_id platform = NULL;
  if (clGetDeviceInfo(native, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) != CL_SUCCESS)
    return FCL_ERROR(FCL_ERR_NOT_FOUND, "argument 1 (native): not an OpenCL device");
  if (!(*device = fcl__device_of(native))) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device object");
  return FCL_OK;
}
