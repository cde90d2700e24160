/* The OpenCL backend's queues: command queues with flags, markers and barriers, flush and finish;
 * and the OpenCL-only ones (flowcl/opencl.h): wrapping, on-device queues, native kernels. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue for OpenCL 1.x platforms */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "flowcl/opencl.h"
#include "opencl_backend.h"

static fcl_status device_name(cl_device_id device, char *buf, size_t size) {
  FCL_CL_TRY(clGetDeviceInfo(device, CL_DEVICE_NAME, size, buf, NULL), "clGetDeviceInfo");
  return FCL_OK;
}

static int device_major_version(cl_device_id device) {
  char version[256] = "";
  clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof version, version, NULL);
  int major = 1;
  sscanf(version, "OpenCL %d", &major);
  return major;
}

fcl_status fcl__opencl_queue_create(const fcl_context *context, const fcl_device *fdevice,
                                    unsigned flags, fcl_queue *q) {
  cl_device_id device = fcl__device_cl(fdevice);
  cl_command_queue_properties supported = 0, wanted = 0;
  FCL_CL_TRY(
      clGetDeviceInfo(device, CL_DEVICE_QUEUE_PROPERTIES, sizeof supported, &supported, NULL),
      "clGetDeviceInfo(CL_DEVICE_QUEUE_PROPERTIES)");
  if (flags & FCL_QUEUE_OUT_OF_ORDER) wanted |= CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
  if (flags & FCL_QUEUE_PROFILING) wanted |= CL_QUEUE_PROFILING_ENABLE;
  if ((wanted & supported) != wanted) {
    char name[256] = "";
    device_name(device, name, sizeof name);
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "device '%s' does not support %s queues", name,
                     (wanted & ~supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) ? "out-of-order"
                                                                                    : "profiling");
  }
  cl_int err;
  cl_command_queue native;
  if (device_major_version(device) >= 2) {
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, wanted, 0};
    native = clCreateCommandQueueWithProperties(fcl__context_cl(context), device, props, &err);
  } else {
    native = clCreateCommandQueue(fcl__context_cl(context), device, wanted, &err);
  }
  if (err != CL_SUCCESS)
    return FCL_CL_ERROR(err, "clCreateCommandQueueWithProperties(flags 0x%x)", flags);
  q->native = native;
  return FCL_OK;
}

void fcl__opencl_queue_destroy(fcl_queue *q) { clReleaseCommandQueue(q->native); }

fcl_status fcl__opencl_queue_flush(fcl_queue *q) {
  FCL_CL_TRY(clFlush(q->native), "clFlush");
  return FCL_OK;
}

fcl_status fcl__opencl_queue_finish(fcl_queue *q) {
  FCL_CL_TRY(clFinish(q->native), "clFinish");
  return FCL_OK;
}

fcl_status fcl__opencl_queue_marker(fcl_queue *q, bool barrier, unsigned num_wait,
                                    fcl_event *const *wait, fcl_event **event) {
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  if (barrier)
    FCL_CL_TRY(fcl__cl_sync_end(&s, clEnqueueBarrierWithWaitList(q->native, s.n, s.list, s.evp)),
               "clEnqueueBarrierWithWaitList");
  else
    FCL_CL_TRY(fcl__cl_sync_end(&s, clEnqueueMarkerWithWaitList(q->native, s.n, s.list, s.evp)),
               "clEnqueueMarkerWithWaitList");
  return FCL_OK;
}

cl_command_queue fcl_queue_cl(const fcl_queue *queue) {
  return queue && queue->backend == &fcl__opencl_backend ? queue->native : NULL;
}

fcl_status fcl_queue_wrap(const fcl_context *context, cl_command_queue native, fcl_queue **queue) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(native, 2);
  FCL_CHECK_NULL(queue, 3);
  *queue = NULL;
  cl_context owner = NULL;
  cl_device_id device = NULL;
  cl_command_queue_properties props = 0;
  FCL_CL_TRY(clGetCommandQueueInfo(native, CL_QUEUE_CONTEXT, sizeof owner, &owner, NULL),
             "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)");
  if (owner != fcl__context_cl(context))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (native): a queue of another OpenCL context");
  FCL_CL_TRY(clGetCommandQueueInfo(native, CL_QUEUE_DEVICE, sizeof device, &device, NULL),
             "clGetCommandQueueInfo(CL_QUEUE_DEVICE)");
  FCL_CL_TRY(clGetCommandQueueInfo(native, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL),
             "clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)");
  unsigned flags = ((props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) ? FCL_QUEUE_OUT_OF_ORDER : 0) |
                   ((props & CL_QUEUE_PROFILING_ENABLE) ? FCL_QUEUE_PROFILING : 0);
  fcl_queue *q;
  FCL_TRY(fcl__queue_new(&fcl__opencl_backend, fcl__device_of(device), flags, &q));
  FCL_CL_TRY(clRetainCommandQueue(native), "clRetainCommandQueue");
  q->native = native;
  *queue = q;
  return FCL_OK;
}

/* Whether the device has on-device queues: OpenCL 2.x requires them, 3.0 reports them in
 * CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, 1.x has none. */
static bool device_queues(cl_device_id device) {
  int major = device_major_version(device);
  if (major < 2) return false;
  if (major == 2) return true;
  cl_device_device_enqueue_capabilities caps = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, sizeof caps, &caps, NULL) !=
      CL_SUCCESS)
    return false;
  return (caps & CL_DEVICE_QUEUE_SUPPORTED) != 0;
}

fcl_status fcl_queue_create_on_device(const fcl_context *context, const fcl_device *device,
                                      cl_uint size, bool make_default, fcl_queue **queue) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(queue, 5);
  *queue = NULL;
  cl_device_id dev = device ? fcl__device_cl(device) : fcl__context_cl_devices(context)[0];
  if (fcl__context_device_index(context, fcl__device_of(dev)) < 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (device): not a device of the context");
  char name[256] = "";
  device_name(dev, name, sizeof name);
  if (!device_queues(dev))
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "device '%s' has no on-device queues (device-side enqueue: OpenCL 2.x, or "
                     "CL_DEVICE_QUEUE_SUPPORTED in CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES)",
                     name);
  cl_uint max = 0, preferred = 0;
  FCL_CL_TRY(clGetDeviceInfo(dev, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, sizeof max, &max, NULL),
             "clGetDeviceInfo(CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE)");
  FCL_CL_TRY(clGetDeviceInfo(dev, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE, sizeof preferred,
                             &preferred, NULL),
             "clGetDeviceInfo(CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE)");
  if (size > max)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 3 (size): %u bytes, over the %u that device '%s' allows", size, max,
                     name);
  cl_queue_properties flags = CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                              (make_default ? CL_QUEUE_ON_DEVICE_DEFAULT : 0);
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, flags, CL_QUEUE_SIZE, size ? size : preferred,
                                 0};
  fcl_queue *q;
  FCL_TRY(fcl__queue_new(&fcl__opencl_backend, fcl__device_of(dev), FCL_QUEUE_OUT_OF_ORDER, &q));
  cl_int err;
  q->native = clCreateCommandQueueWithProperties(fcl__context_cl(context), dev, props, &err);
  if (err != CL_SUCCESS) {
    free(q);
    return FCL_CL_ERROR(err, "clCreateCommandQueueWithProperties(on device '%s', %u bytes)", name,
                        size ? size : preferred);
  }
  *queue = q;
  return FCL_OK;
}

fcl_status fcl_queue_enqueue_native(fcl_queue *queue, fcl_native_fn fn, const void *args,
                                    size_t args_size, unsigned num_wait, fcl_event *const *wait,
                                    fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(fn, 2);
  FCL_CHECK_ARG(args_size == 0 || args, 3, "args", "must not be NULL when args_size > 0");
  FCL_CHECK_ARG(queue->backend == &fcl__opencl_backend, 1, "queue", "not an OpenCL queue");
  FCL_TRY(fcl__check_waits(num_wait, wait, 6, "wait"));
  cl_device_exec_capabilities caps = 0;
  FCL_CL_TRY(clGetDeviceInfo(fcl__device_cl(queue->device), CL_DEVICE_EXECUTION_CAPABILITIES,
                             sizeof caps, &caps, NULL),
             "clGetDeviceInfo(CL_DEVICE_EXECUTION_CAPABILITIES)");
  if (!(caps & CL_EXEC_NATIVE_KERNEL)) {
    char name[256] = "";
    device_name(fcl__device_cl(queue->device), name, sizeof name);
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "native kernels (host callbacks as commands) are not supported by this "
                     "device ('%s'); use an event callback or a host step instead",
                     name);
  }
  /* OpenCL copies args_size bytes; the function pointer travels as the callback itself. */
  unsigned char empty = 0;
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  FCL_CL_TRY(fcl__cl_sync_end(&s, clEnqueueNativeKernel(
                                      queue->native, (void(CL_CALLBACK *)(void *))fn,
                                      args_size ? (void *)args : &empty, args_size ? args_size : 1,
                                      0, NULL, NULL, s.n, s.list, s.evp)),
             "clEnqueueNativeKernel");
  return FCL_OK;
}
