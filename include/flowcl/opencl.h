/** @file
 * OpenCL interop: native handles in and out of flowcl's objects, and the features only OpenCL
 * has (on-device queues, native kernels).
 *
 * Code that includes this header works with OpenCL alone; the rest of flowcl's API is the same
 * on every backend. A handle taken out (fcl_queue_cl) stays owned by its flowcl object: retain it
 * to keep it longer. A handle put in (fcl_queue_wrap) is retained by the new object, so the
 * caller keeps its own reference. */
#ifndef FLOWCL_OPENCL_H
#define FLOWCL_OPENCL_H

#include "flowcl/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The OpenCL platform and device of a flowcl one (NULL for NULL). @{ */
cl_platform_id fcl_platform_cl(const fcl_platform *platform);
cl_device_id fcl_device_cl(const fcl_device *device);
/** @} */
/** The flowcl platform or device of an OpenCL one (a root device of an installed platform;
 * FCL_ERR_NOT_FOUND otherwise). @{ */
fcl_status fcl_platform_from_cl(cl_platform_id native, fcl_platform **platform);
fcl_status fcl_device_from_cl(cl_device_id native, fcl_device **device);
/** @} */

/** The OpenCL context (owned by the fcl_context: retain it to keep it longer). */
cl_context fcl_context_cl(const fcl_context *context);
/** Wrap a caller's context: flowcl retains it for its own use and releases that reference when
 * the fcl_context is released; the caller's reference is untouched. */
fcl_status fcl_context_wrap(cl_context context, fcl_context **out);

/** The OpenCL command queue of queue (NULL for NULL or a queue of another backend). */
cl_command_queue fcl_queue_cl(const fcl_queue *queue);
/** A flowcl queue around an OpenCL command queue of context's OpenCL context (retained; the
 * caller's reference stays the caller's). Its flags are read from the queue's properties. A
 * queue of another OpenCL context is FCL_ERR_INVALID_ARGUMENT. */
fcl_status fcl_queue_wrap(const fcl_context *context, cl_command_queue native, fcl_queue **queue);

/** An on-device queue (OpenCL 2.0 device-side enqueue: kernels enqueue kernels on it) of size
 * bytes (0: the device's preferred size), the device's default one when make_default. A device
 * without on-device queues (OpenCL 3.0 made them optional; PoCL's CPU device and NVIDIA's
 * OpenCL have none) is FCL_ERR_NOT_SUPPORTED naming the device and the missing capability; a
 * size over the device's maximum is FCL_ERR_INVALID_ARGUMENT giving it. Release with
 * fcl_queue_release. */
fcl_status fcl_queue_create_on_device(const fcl_context *context, const fcl_device *device,
                                      cl_uint size, bool make_default, fcl_queue **queue);
/** An on-device queue (fcl_queue_create_on_device) for a queue_t argument; another declared type
 * is FCL_ERR_INVALID_ARGUMENT naming it. */
fcl_status fcl_kernel_set_arg_queue(fcl_kernel *kernel, cl_uint index, fcl_queue *queue);

/** Host callback run by the device as a command (clEnqueueNativeKernel): args_size bytes at args
 * are copied and handed to fn. FCL_ERR_NOT_SUPPORTED naming the device when it cannot. */
typedef void (*fcl_native_fn)(void *args);
/** Enqueue fn on queue as a native kernel after the wait list (fcl_native_fn says how). */
fcl_status fcl_queue_enqueue_native(fcl_queue *queue, fcl_native_fn fn, const void *args,
                                    size_t args_size, cl_uint num_wait, const cl_event *wait,
                                    cl_event *event);

#ifdef __cplusplus
}
#endif

#endif
