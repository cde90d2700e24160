/* The OpenCL backend's entries of the backend table (src/runtime/opencl, not installed). */
#ifndef FLOWCL_SRC_RUNTIME_OPENCL_BACKEND_H
#define FLOWCL_SRC_RUNTIME_OPENCL_BACKEND_H

#include <stdlib.h>

#include "../backend.h"
#include "../runtime_impl.h"
#include "flowcl/opencl.h"

/* An enqueue's native wait list and event: begin converts flowcl's wait list (on the stack up to
 * 16 events) and readies ev for the event asked for; pass n, list and evp to the OpenCL call and
 * its result to end, which frees the list and, on success, hands *out an fcl_event around ev
 * (CL_OUT_OF_HOST_MEMORY, ev released, when that fails). */
typedef struct {
  cl_uint n;
  const cl_event *list;
  cl_event ev, *evp;
  fcl_event **out;
  cl_event *heap;
  cl_event inline_list[16];
} fcl__cl_sync;
/* The parts off the launch path: a wait list in s (on the heap past 16 events), and *s->out made
 * around s->ev. */
fcl_status fcl__cl_sync_waits(fcl__cl_sync *s, fcl_event *const *wait);
cl_int fcl__cl_sync_wrap(fcl__cl_sync *s);
/* Inline: every enqueue passes here, most without a wait list or an event. */
static inline fcl_status fcl__cl_sync_begin(fcl__cl_sync *s, unsigned num_wait,
                                            fcl_event *const *wait, fcl_event **event) {
  s->n = num_wait;
  s->list = NULL;
  s->heap = NULL;
  s->out = event;
  s->ev = NULL;
  s->evp = event ? &s->ev : NULL;
  if (event) *event = NULL;
  return num_wait ? fcl__cl_sync_waits(s, wait) : FCL_OK;
}
static inline cl_int fcl__cl_sync_end(fcl__cl_sync *s, cl_int err) {
  if (s->heap) {
    free(s->heap);
    s->heap = NULL;
  }
  if (err != CL_SUCCESS || !s->out) return err;
  return fcl__cl_sync_wrap(s);
}

fcl_status fcl__opencl_platform_count(unsigned *count);
fcl_status fcl__opencl_platform_get(unsigned index, fcl_platform **platform);
fcl_status fcl__opencl_platform_info(const fcl_platform *p, fcl_platform_info *info);
fcl_status fcl__opencl_platform_device(const fcl_platform *p, unsigned index, fcl_device **device);
fcl_status fcl__opencl_device_info(const fcl_device *d, fcl_device_info *info);
fcl_status fcl__opencl_device_vendor(const fcl_device *d, const fcl_device_info *info,
                                     fcl__device_vendor *out);

fcl_status fcl__opencl_context_create(fcl_device *const *devices, unsigned num_devices,
                                      fcl_context *c);
void fcl__opencl_context_destroy(fcl_context *c);
/* The OpenCL context and devices of a context of this backend. */
static inline cl_context fcl__context_cl(const fcl_context *c) { return c->native; }
static inline cl_device_id *fcl__context_cl_devices(const fcl_context *c) {
  return c->native_devices;
}

void fcl__opencl_event_release(fcl_event *e);
fcl_status fcl__opencl_events_wait(unsigned n, fcl_event *const *events);
fcl_status fcl__opencl_event_status(const fcl_event *e, int *status);
fcl_status fcl__opencl_event_on_complete(fcl_event *e, fcl_event_callback callback, void *user);
fcl_status fcl__opencl_user_event_create(const fcl_context *context, fcl_event **event);
fcl_status fcl__opencl_user_event_set(fcl_event *e, int status);
fcl_status fcl__opencl_event_profile(const fcl_event *e, fcl_event_times *times);

fcl_status fcl__opencl_queue_create(const fcl_context *context, const fcl_device *device,
                                    unsigned flags, fcl_queue *q);
void fcl__opencl_queue_destroy(fcl_queue *q);
fcl_status fcl__opencl_queue_flush(fcl_queue *q);
fcl_status fcl__opencl_queue_finish(fcl_queue *q);
fcl_status fcl__opencl_queue_marker(fcl_queue *q, bool barrier, unsigned num_wait,
                                    fcl_event *const *wait, fcl_event **event);

/* The flowcl platform / device of an OpenCL one, made on first sight (opencl/device.c; NULL for
 * NULL or out of memory), and the OpenCL device of a flowcl one. */
fcl_platform *fcl__platform_of(cl_platform_id native);
fcl_device *fcl__device_of(cl_device_id native);
static inline cl_device_id fcl__device_cl(const fcl_device *device) {
  return device ? (cl_device_id)device->native : NULL;
}
static inline cl_platform_id fcl__platform_cl(const fcl_platform *platform) {
  return platform ? (cl_platform_id)platform->native : NULL;
}
/* An object of another backend given to an OpenCL-only entry (flowcl/opencl.h): argument pos
 * (arg) refused before any OpenCL call sees its native handle. */
#define FCL_CHECK_OPENCL(backend_of, pos, arg)                                                     \
  do {                                                                                             \
    if ((backend_of) != &fcl__opencl_backend)                                                      \
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,                                                   \
                       "argument %d (%s): of the '%s' backend; this entry is OpenCL's "            \
                       "(flowcl/opencl.h)",                                                        \
                       (pos), (arg), (backend_of)->name);                                          \
  } while (0)

/* Records an OpenCL failure: status FCL_ERR_OPENCL (FCL_ERR_OUT_OF_MEMORY for the allocation
 * codes), native code cl_error, message "<what>: CL_NAME (code)". */
fcl_status fcl__error_cl(int code, const char *func, const char *file, int line, const char *format,
                         ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

#define FCL_CL_ERROR(cl_error, ...)                                                                \
  fcl__error_cl((cl_error), __func__, __FILE__, __LINE__, __VA_ARGS__)

/* Call an OpenCL function returning cl_int; on failure record it and return. */
#define FCL_CL_TRY(call, ...)                                                                      \
  do {                                                                                             \
    cl_int fcl_cl_err_ = (call);                                                                   \
    if (fcl_cl_err_ != CL_SUCCESS) return FCL_CL_ERROR(fcl_cl_err_, __VA_ARGS__);                  \
  } while (0)

/* kernels/prelude_opencl.h (embedded at build time): the kernel vocabulary in OpenCL C. */
extern const char fcl__prelude_opencl[];

fcl_status fcl__opencl_program_create_source(fcl_program *p);
fcl_status fcl__opencl_program_create_binaries(fcl_program *p, unsigned n,
                                               fcl_device *const *devices, const size_t *sizes,
                                               const unsigned char *const *binaries);
void fcl__opencl_program_destroy(fcl_program *p);
fcl_status fcl__opencl_program_build(fcl_program *p, const char *options);
fcl_status fcl__opencl_program_load(fcl_program *p, const size_t *sizes,
                                    const unsigned char *const *binaries, const char *options);
char *fcl__opencl_program_build_log(const fcl_program *p, unsigned i);
fcl_status fcl__opencl_program_binaries(fcl_program *p, size_t *sizes, unsigned char **binaries);
fcl_status fcl__opencl_program_build_status(const fcl_program *p, const fcl_device *d,
                                            fcl_build_status *status);
fcl_status fcl__opencl_program_load_meta(fcl_program *p, const char *cached_meta);

struct fcl__vkfft_config;
struct fcl__vkfft;
fcl_status fcl__opencl_vkfft_plan(fcl_queue *queue, const struct fcl__vkfft_config *config,
                                  const char *what, struct fcl__vkfft **out);
fcl_status fcl__opencl_vkfft_append(struct fcl__vkfft *plan, fcl_queue *queue, fcl_mem *input,
                                    fcl_mem *buffer, int direction, const char *what);
void fcl__opencl_vkfft_destroy(struct fcl__vkfft *plan);
fcl_status fcl__opencl_vkfft_local_mem(const fcl_device *d, size_t *bytes);

fcl_status fcl__opencl_kernel_create(fcl_program *p, const char *name, fcl_kernel *k);
void fcl__opencl_kernel_destroy(fcl_kernel *k);
fcl_status fcl__opencl_kernel_set_arg(fcl_kernel *k, unsigned index, int how, size_t size,
                                      const void *value);
fcl_status fcl__opencl_kernel_enqueue(fcl_kernel *k, fcl_queue *q, unsigned dim,
                                      const size_t *global, const size_t *local,
                                      const size_t *offset, unsigned num_wait,
                                      fcl_event *const *wait, fcl_event **event);
fcl_status fcl__opencl_kernel_work_group_info(const fcl_kernel *k, const fcl_device *d,
                                              fcl_kernel_work_group_info *info);

fcl_status fcl__opencl_mem_create(fcl_context *context, fcl_mem *m, void *host);
void fcl__opencl_mem_destroy(fcl_mem *m);
fcl_status fcl__opencl_mem_write(fcl_queue *q, fcl_mem *dst, size_t offset, size_t bytes,
                                 const void *host, bool blocking, unsigned num_wait,
                                 fcl_event *const *wait, fcl_event **event);
fcl_status fcl__opencl_mem_read(fcl_queue *q, const fcl_mem *src, size_t offset, size_t bytes,
                                void *host, bool blocking, unsigned num_wait,
                                fcl_event *const *wait, fcl_event **event);
fcl_status fcl__opencl_mem_copy(fcl_queue *q, const fcl_mem *src, size_t src_offset, fcl_mem *dst,
                                size_t dst_offset, size_t bytes, unsigned num_wait,
                                fcl_event *const *wait, fcl_event **event);
fcl_status fcl__opencl_mem_fill(fcl_queue *q, fcl_mem *dst, const void *pattern,
                                size_t pattern_size, size_t offset, size_t bytes, unsigned num_wait,
                                fcl_event *const *wait, fcl_event **event);
fcl_status fcl__opencl_mem_commit(fcl_queue *q, fcl_mem *m);
fcl_status fcl__opencl_mem_rect(fcl_queue *q, const fcl_mem *src, fcl_mem *dst, void *host,
                                const fcl_rect *r, bool blocking, unsigned num_wait,
                                fcl_event *const *wait, fcl_event **event);
fcl_status fcl__opencl_mem_map(fcl_queue *q, fcl_mem *m, unsigned flags, size_t offset,
                               size_t bytes, unsigned num_wait, fcl_event *const *wait,
                               void **host);
fcl_status fcl__opencl_mem_unmap(fcl_queue *q, fcl_mem *m, void *host, unsigned num_wait,
                                 fcl_event *const *wait, fcl_event **event);

#endif
