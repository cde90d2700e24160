/* Command queues: creation with flags, barrier, marker, flush, finish, native kernels. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue for OpenCL 1.x platforms */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "runtime_impl.h"

static fcl_status device_name(cl_device_id device, char *buf, size_t size) {
  FCL_CL_TRY(clGetDeviceInfo(device, CL_DEVICE_NAME, size, buf, NULL), "clGetDeviceInfo");
  return FCL_OK;
}

fcl_status fcl_queue_create(const fcl_context *context, cl_device_id device, unsigned flags,
                            cl_command_queue *queue) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(queue, 4);
  FCL_CHECK_ARG((flags & ~(unsigned)(FCL_QUEUE_OUT_OF_ORDER | FCL_QUEUE_PROFILING)) == 0, 3,
                "flags", "only FCL_QUEUE_OUT_OF_ORDER and FCL_QUEUE_PROFILING are defined");
  *queue = NULL;
  if (!device) device = context->devices[0];
  if (fcl__context_device_index(context, device) < 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (device): not a device of the context");
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
  char version[256] = "";
  clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof version, version, NULL);
  int major = 1;
  sscanf(version, "OpenCL %d", &major);
  if (major >= 2) {
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, wanted, 0};
    *queue = clCreateCommandQueueWithProperties(context->cl, device, props, &err);
  } else {
    *queue = clCreateCommandQueue(context->cl, device, wanted, &err);
  }
  if (err != CL_SUCCESS) {
    *queue = NULL;
    return FCL_CL_ERROR(err, "clCreateCommandQueueWithProperties(flags 0x%x)", flags);
  }
  return FCL_OK;
}

/* Whether the device has on-device queues: OpenCL 2.x requires them, 3.0 reports them in
 * CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, 1.x has none. */
static bool device_queues(cl_device_id device) {
  char version[256] = "";
  clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof version, version, NULL);
  int major = 1;
  sscanf(version, "OpenCL %d", &major);
  if (major < 2) return false;
  if (major == 2) return true;
  cl_device_device_enqueue_capabilities caps = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, sizeof caps, &caps, NULL) !=
      CL_SUCCESS)
    return false;
  return (caps & CL_DEVICE_QUEUE_SUPPORTED) != 0;
}

fcl_status fcl_queue_create_on_device(const fcl_context *context, cl_device_id device, cl_uint size,
                                      bool make_default, cl_command_queue *queue) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(queue, 5);
  *queue = NULL;
  if (!device) device = context->devices[0];
  if (fcl__context_device_index(context, device) < 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (device): not a device of the context");
  char name[256] = "";
  device_name(device, name, sizeof name);
  if (!device_queues(device))
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "device '%s' has no on-device queues (device-side enqueue: OpenCL 2.x, or "
                     "CL_DEVICE_QUEUE_SUPPORTED in CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES)",
                     name);
  cl_uint max = 0, preferred = 0;
  FCL_CL_TRY(clGetDeviceInfo(device, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, sizeof max, &max, NULL),
             "clGetDeviceInfo(CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE)");
  FCL_CL_TRY(clGetDeviceInfo(device, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE, sizeof preferred,
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
  cl_int err;
  *queue = clCreateCommandQueueWithProperties(context->cl, device, props, &err);
  if (err != CL_SUCCESS) {
    *queue = NULL;
    return FCL_CL_ERROR(err, "clCreateCommandQueueWithProperties(on device '%s', %u bytes)", name,
                        size ? size : preferred);
  }
  return FCL_OK;
}

fcl_status fcl_queue_device(cl_command_queue queue, cl_device_id *device) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(device, 2);
  FCL_CL_TRY(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof *device, device, NULL),
             "clGetCommandQueueInfo(CL_QUEUE_DEVICE)");
  return FCL_OK;
}

fcl_status fcl_queue_barrier(cl_command_queue queue, cl_uint num_wait, const cl_event *wait,
                             cl_event *event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_ARG(num_wait == 0 || wait, 3, "wait", "must not be NULL when num_wait > 0");
  FCL_CL_TRY(clEnqueueBarrierWithWaitList(queue, num_wait, wait, event),
             "clEnqueueBarrierWithWaitList");
  return FCL_OK;
}

fcl_status fcl_queue_marker(cl_command_queue queue, cl_uint num_wait, const cl_event *wait,
                            cl_event *event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_ARG(num_wait == 0 || wait, 3, "wait", "must not be NULL when num_wait > 0");
  FCL_CL_TRY(clEnqueueMarkerWithWaitList(queue, num_wait, wait, event),
             "clEnqueueMarkerWithWaitList");
  return FCL_OK;
}

fcl_status fcl_queue_flush(cl_command_queue queue) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CL_TRY(clFlush(queue), "clFlush");
  return FCL_OK;
}

fcl_status fcl_queue_finish(cl_command_queue queue) {
  FCL_CHECK_NULL(queue, 1);
  fcl__count_host_sync();
  FCL_CL_TRY(clFinish(queue), "clFinish");
  return FCL_OK;
}

fcl_status fcl_queue_enqueue_native(cl_command_queue queue, fcl_native_fn fn, const void *args,
                                    size_t args_size, cl_uint num_wait, const cl_event *wait,
                                    cl_event *event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(fn, 2);
  FCL_CHECK_ARG(args_size == 0 || args, 3, "args", "must not be NULL when args_size > 0");
  cl_device_id device;
  FCL_TRY(fcl_queue_device(queue, &device));
  cl_device_exec_capabilities caps = 0;
  FCL_CL_TRY(clGetDeviceInfo(device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL),
             "clGetDeviceInfo(CL_DEVICE_EXECUTION_CAPABILITIES)");
  if (!(caps & CL_EXEC_NATIVE_KERNEL)) {
    char name[256] = "";
    device_name(device, name, sizeof name);
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "native kernels (host callbacks as commands) are not supported by this "
                     "device ('%s'); use an event callback or a host step instead",
                     name);
  }
  /* OpenCL copies args_size bytes; the function pointer travels as the callback itself. */
  unsigned char empty = 0;
  FCL_CL_TRY(clEnqueueNativeKernel(queue, (void(CL_CALLBACK *)(void *))fn,
                                   args_size ? (void *)args : &empty, args_size ? args_size : 1, 0,
                                   NULL, NULL, num_wait, wait, event),
             "clEnqueueNativeKernel");
  return FCL_OK;
}
