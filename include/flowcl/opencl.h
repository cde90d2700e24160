/** @file
 * OpenCL interop: native handles in and out of flowcl's objects, and the features only OpenCL
 * has: on-device queues, native kernels, built-in kernels, SPIR-V, separate compilation and
 * linking, kernel capture as a plain OpenCL program, and (flowcl/image.h, included here)
 * images, samplers and memory-object queries.
 *
 * Code that includes this header works with OpenCL alone; the rest of flowcl's API is the same
 * on every backend. A handle taken out (fcl_queue_cl) stays owned by its flowcl object: retain it
 * to keep it longer. A handle put in (fcl_queue_wrap) is retained by the new object, so the
 * caller keeps its own reference. */
#ifndef FLOWCL_OPENCL_H
#define FLOWCL_OPENCL_H

#ifndef CL_TARGET_OPENCL_VERSION
/** The OpenCL API version the headers expose (3.0), unless the includer chose one first. */
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include "flowcl/image.h"
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

/** The OpenCL program and kernel (owned by the fcl_program / fcl_kernel). @{ */
cl_program fcl_program_cl(const fcl_program *program);
cl_kernel fcl_kernel_cl(const fcl_kernel *kernel);
/** @} */

/** The OpenCL context (owned by the fcl_context: retain it to keep it longer). */
cl_context fcl_context_cl(const fcl_context *context);
/** Wrap a caller's context: flowcl retains it for its own use and releases that reference when
 * the fcl_context is released; the caller's reference is untouched. */
fcl_status fcl_context_wrap(cl_context context, fcl_context **out);

/** The OpenCL event of event (NULL for NULL or an event of another backend; owned by event). */
cl_event fcl_event_cl(const fcl_event *event);
/** An event around an OpenCL event (retained: the caller's reference stays the caller's), e.g.
 * for a wait list of flowcl's functions; release it with fcl_event_release. */
fcl_status fcl_event_wrap(cl_event native, fcl_event **event);

/** The OpenCL buffer of mem (NULL for NULL or memory of another backend). */
cl_mem fcl_mem_cl(const fcl_mem *mem);
/** A flowcl fcl_mem around an OpenCL buffer of context's OpenCL context (retained; the caller's
 * reference stays the caller's); its kind is read from its flags (CL_MEM_USE_HOST_PTR: host,
 * CL_MEM_ALLOC_HOST_PTR: pinned). An image or a buffer of another context is
 * FCL_ERR_INVALID_ARGUMENT. */
fcl_status fcl_mem_wrap(const fcl_context *context, cl_mem native, fcl_mem **mem);

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
                                    size_t args_size, unsigned num_wait, fcl_event *const *wait,
                                    fcl_event **event);

/* ---- shared virtual memory (OpenCL 2.0) ---- */

/** Whether every device of context has coarse-grained SVM buffers (else FCL_ERR_NOT_SUPPORTED
 * naming the device) and, in *fine_grain, whether every one has fine-grained ones. */
fcl_status fcl_svm_support(const fcl_context *context, bool *fine_grain);
/** bytes of SVM (fine-grained when asked) into *ptr; free with fcl_svm_free. */
fcl_status fcl_svm_alloc(const fcl_context *context, size_t bytes, bool fine_grain, void **ptr);
/** Free what fcl_svm_alloc returned (accepts NULL). */
void fcl_svm_free(const fcl_context *context, void *ptr);
/** Fill bytes of SVM at ptr with a pattern after the wait list. */
fcl_status fcl_svm_fill(fcl_queue *queue, void *ptr, const void *pattern, size_t pattern_size,
                        size_t bytes, unsigned num_wait, fcl_event *const *wait, fcl_event **event);

/* ---- programs: built-in kernels, SPIR-V, separate compilation and linking ---- */

/** A program of built-in kernels of the context's devices: names separated by ';' as
 * CL_DEVICE_BUILT_IN_KERNELS lists them (fcl_device_info.built_in_kernels; PoCL has
 * "pocl.add.i8"). A name that a device does not list is FCL_ERR_NOT_FOUND naming it and what
 * the device has. Ready for fcl_kernel_create at once (fcl_program_build does nothing). */
fcl_status fcl_program_create_built_in(fcl_context *context, const char *names, fcl_program **out);
/** A program from bytes that are SPIR-V when they start with its magic number (0x07230203, in
 * either byte order: fcl_program_create_il), else OpenCL C source of size bytes. */
fcl_status fcl_program_create_bytes(fcl_context *context, const void *bytes, size_t size,
                                    const char *origin, fcl_program **out);
/** Let the platform free its compiler's resources (a hint: later builds still work). */
fcl_status fcl_platform_unload_compiler(const fcl_platform *platform);

/** A program from SPIR-V (OpenCL 2.1+ or cl_khr_il_program); FCL_ERR_NOT_SUPPORTED naming the
 * device when a device of the context accepts no IL. */
fcl_status fcl_program_create_il(fcl_context *context, const void *il, size_t size,
                                 fcl_program **out);

/** Compile only (clCompileProgram), with embedded headers: header_names[i] is the include name
 * of the source program headers[i]. */
fcl_status fcl_program_compile(fcl_program *program, const char *options, cl_uint num_headers,
                               fcl_program *const *headers, const char *const *header_names);
/** Link compiled programs into a new executable program. */
fcl_status fcl_program_link(fcl_context *context, cl_uint num_programs,
                            fcl_program *const *programs, const char *options, fcl_program **out);

/** An image (flowcl/image.h: fcl_image_mem) for an image2d_t / image3d_t argument, and a sampler
 * for a sampler_t one; another declared type is FCL_ERR_INVALID_ARGUMENT naming it. @{ */
fcl_status fcl_kernel_set_arg_image(fcl_kernel *kernel, cl_uint index, cl_mem image);
fcl_status fcl_kernel_set_arg_sampler(fcl_kernel *kernel, cl_uint index, cl_sampler sampler);
/** @} */

/** Instead of launching, write to path a self-contained C program that rebuilds this kernel from
 * its source and options, recreates every argument (buffer contents are read now, blocking, from
 * queue) and runs this one launch with plain OpenCL. Built with `cc file.c -lOpenCL`, it runs on
 * the device chosen by its first argument ("platform:device" indices, default 0:0) and writes
 * every buffer argument after the launch to the file named by its second argument (default
 * "capture.out"), in argument order. The file is written to a temporary name and renamed.
 * Errors: an argument not set (FCL_ERR_INVALID_STATE), a program without source or an image,
 * sampler or queue argument (FCL_ERR_NOT_SUPPORTED), a file that cannot be written
 * (FCL_ERR_IO). */
fcl_status fcl_kernel_capture(fcl_kernel *kernel, fcl_queue *queue, cl_uint work_dim,
                              const size_t *global, const size_t *local, const size_t *offset,
                              unsigned flags, const char *path);

#ifdef __cplusplus
}
#endif

#endif
