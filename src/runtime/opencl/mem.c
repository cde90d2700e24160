/* The OpenCL backend's memory: buffers (device, CL_MEM_ALLOC_HOST_PTR pinned, CL_MEM_USE_HOST_PTR
 * over the caller's memory) and their transfers; and fcl_mem_cl / fcl_mem_wrap. */
#include <stdlib.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

fcl_status fcl__opencl_mem_create(fcl_context *context, fcl_mem *m, void *host) {
  cl_mem_flags flags = CL_MEM_READ_WRITE;
  if (m->kind == FCL_MEM_PINNED) flags |= CL_MEM_ALLOC_HOST_PTR;
  if (m->kind == FCL_MEM_HOST) flags |= CL_MEM_USE_HOST_PTR;
  if (m->kind != FCL_MEM_HOST && host) flags |= CL_MEM_COPY_HOST_PTR;
  cl_int err;
  m->native = clCreateBuffer(fcl__context_cl(context), flags, m->size, host, &err);
  if (err == CL_INVALID_BUFFER_SIZE) {
    cl_ulong max = 0;
    clGetDeviceInfo(fcl__context_cl_devices(context)[0], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max,
                    &max, NULL);
    return fcl__error_set(FCL_ERR_INVALID_ARGUMENT, err, __func__, __FILE__, __LINE__,
                          "a buffer of %zu bytes exceeds the device's largest allocation (%llu "
                          "bytes)",
                          m->size, (unsigned long long)max);
  }
  if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clCreateBuffer of %zu bytes", m->size);
  return FCL_OK;
}

void fcl__opencl_mem_destroy(fcl_mem *m) { clReleaseMemObject(m->native); }

fcl_status fcl__opencl_mem_write(fcl_queue *q, fcl_mem *dst, size_t offset, size_t bytes,
                                 const void *host, bool blocking, unsigned num_wait,
                                 fcl_event *const *wait, fcl_event **event) {
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  FCL_CL_TRY(fcl__cl_sync_end(&s, clEnqueueWriteBuffer(q->native, dst->native, blocking, offset,
                                                       bytes, host, s.n, s.list, s.evp)),
             "clEnqueueWriteBuffer of %zu bytes", bytes);
  return FCL_OK;
}

fcl_status fcl__opencl_mem_read(fcl_queue *q, const fcl_mem *src, size_t offset, size_t bytes,
                                void *host, bool blocking, unsigned num_wait,
                                fcl_event *const *wait, fcl_event **event) {
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  FCL_CL_TRY(fcl__cl_sync_end(&s, clEnqueueReadBuffer(q->native, src->native, blocking, offset,
                                                      bytes, host, s.n, s.list, s.evp)),
             "clEnqueueReadBuffer of %zu bytes", bytes);
  return FCL_OK;
}

fcl_status fcl__opencl_mem_copy(fcl_queue *q, const fcl_mem *src, size_t src_offset, fcl_mem *dst,
                                size_t dst_offset, size_t bytes, unsigned num_wait,
                                fcl_event *const *wait, fcl_event **event) {
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  FCL_CL_TRY(
      fcl__cl_sync_end(&s, clEnqueueCopyBuffer(q->native, src->native, dst->native, src_offset,
                                               dst_offset, bytes, s.n, s.list, s.evp)),
      "clEnqueueCopyBuffer of %zu bytes", bytes);
  return FCL_OK;
}

fcl_status fcl__opencl_mem_fill(fcl_queue *q, fcl_mem *dst, const void *pattern,
                                size_t pattern_size, size_t offset, size_t bytes, unsigned num_wait,
                                fcl_event *const *wait, fcl_event **event) {
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  FCL_CL_TRY(fcl__cl_sync_end(&s, clEnqueueFillBuffer(q->native, dst->native, pattern, pattern_size,
                                                      offset, bytes, s.n, s.list, s.evp)),
             "clEnqueueFillBuffer of %zu bytes", bytes);
  return FCL_OK;
}

fcl_status fcl__opencl_mem_commit(fcl_queue *q, fcl_mem *m) {
  cl_event ev = NULL;
  cl_mem native = m->native;
  cl_int err = clEnqueueMigrateMemObjects(q->native, 1, &native,
                                          CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, &ev);
  if (err == CL_SUCCESS) err = clWaitForEvents(1, &ev);
  cl_int status = CL_COMPLETE;
  if (ev) {
    clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    clReleaseEvent(ev);
  }
  if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST || (err == CL_SUCCESS && status < 0))
    err = status < 0 ? status : CL_MEM_OBJECT_ALLOCATION_FAILURE;
  if (err == CL_SUCCESS) return FCL_OK;
  bool oom = err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
             err == CL_OUT_OF_HOST_MEMORY;
  return fcl__error_set(oom ? FCL_ERR_OUT_OF_MEMORY : FCL_ERR_OPENCL, err, __func__, __FILE__,
                        __LINE__, "making a buffer of %zu bytes exist on the device: %s (%d)",
                        m->size, fcl_cl_error_name(err), err);
}

fcl_status fcl__opencl_mem_rect(fcl_queue *q, const fcl_mem *src, fcl_mem *dst, void *host,
                                const fcl_rect *r, bool blocking, unsigned num_wait,
                                fcl_event *const *wait, fcl_event **event) {
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  if (src && dst) {
    FCL_CL_TRY(
        fcl__cl_sync_end(&s, clEnqueueCopyBufferRect(
                                 q->native, src->native, dst->native, r->src_origin, r->dst_origin,
                                 r->region, r->src_row_pitch, r->src_slice_pitch, r->dst_row_pitch,
                                 r->dst_slice_pitch, s.n, s.list, s.evp)),
        "clEnqueueCopyBufferRect");
  } else if (dst) { /* host (the source side) to dst */
    FCL_CL_TRY(
        fcl__cl_sync_end(&s, clEnqueueWriteBufferRect(
                                 q->native, dst->native, blocking, r->dst_origin, r->src_origin,
                                 r->region, r->dst_row_pitch, r->dst_slice_pitch, r->src_row_pitch,
                                 r->src_slice_pitch, host, s.n, s.list, s.evp)),
        "clEnqueueWriteBufferRect");
  } else { /* src to host (the destination side) */
    FCL_CL_TRY(
        fcl__cl_sync_end(&s, clEnqueueReadBufferRect(
                                 q->native, src->native, blocking, r->src_origin, r->dst_origin,
                                 r->region, r->src_row_pitch, r->src_slice_pitch, r->dst_row_pitch,
                                 r->dst_slice_pitch, host, s.n, s.list, s.evp)),
        "clEnqueueReadBufferRect");
  }
  return FCL_OK;
}

fcl_status fcl__opencl_mem_map(fcl_queue *q, fcl_mem *m, unsigned flags, size_t offset,
                               size_t bytes, unsigned num_wait, fcl_event *const *wait,
                               void **host) {
  cl_map_flags how = ((flags & FCL_MAP_READ) ? CL_MAP_READ : 0) |
                     ((flags & FCL_MAP_WRITE) ? CL_MAP_WRITE : 0);
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, NULL));
  cl_int err;
  *host = clEnqueueMapBuffer(q->native, m->native, CL_TRUE, how, offset, bytes, s.n, s.list, NULL,
                             &err);
  fcl__cl_sync_end(&s, err);
  if (err != CL_SUCCESS) {
    *host = NULL;
    return FCL_CL_ERROR(err, "clEnqueueMapBuffer of %zu bytes", bytes);
  }
  return FCL_OK;
}

fcl_status fcl__opencl_mem_unmap(fcl_queue *q, fcl_mem *m, void *host, unsigned num_wait,
                                 fcl_event *const *wait, fcl_event **event) {
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  FCL_CL_TRY(
      fcl__cl_sync_end(&s, clEnqueueUnmapMemObject(q->native, m->native, host, s.n, s.list, s.evp)),
      "clEnqueueUnmapMemObject");
  return FCL_OK;
}

cl_mem fcl_mem_cl(const fcl_mem *mem) {
  return mem && mem->backend == &fcl__opencl_backend ? mem->native : NULL;
}

fcl_status fcl_mem_wrap(const fcl_context *context, cl_mem native, fcl_mem **mem) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(native, 2);
  FCL_CHECK_NULL(mem, 3);
  *mem = NULL;
  cl_context owner = NULL;
  cl_mem_object_type type = 0;
  cl_mem_flags flags = 0;
  size_t size = 0;
  FCL_CL_TRY(clGetMemObjectInfo(native, CL_MEM_CONTEXT, sizeof owner, &owner, NULL),
             "clGetMemObjectInfo(CL_MEM_CONTEXT)");
  if (owner != fcl__context_cl(context))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (native): a buffer of another OpenCL context");
  FCL_CL_TRY(clGetMemObjectInfo(native, CL_MEM_TYPE, sizeof type, &type, NULL),
             "clGetMemObjectInfo(CL_MEM_TYPE)");
  if (type != CL_MEM_OBJECT_BUFFER)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (native): not a buffer (an image?)");
  FCL_CL_TRY(clGetMemObjectInfo(native, CL_MEM_SIZE, sizeof size, &size, NULL),
             "clGetMemObjectInfo(CL_MEM_SIZE)");
  FCL_CL_TRY(clGetMemObjectInfo(native, CL_MEM_FLAGS, sizeof flags, &flags, NULL),
             "clGetMemObjectInfo(CL_MEM_FLAGS)");
  fcl_mem *m = calloc(1, sizeof *m);
  if (!m) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "memory object");
  m->backend = &fcl__opencl_backend;
  atomic_init(&m->refs, 1);
  m->serial = fcl__mem_serial();
  m->size = size;
  m->kind = (flags & CL_MEM_USE_HOST_PTR)     ? FCL_MEM_HOST
            : (flags & CL_MEM_ALLOC_HOST_PTR) ? FCL_MEM_PINNED
                                              : FCL_MEM_DEVICE;
  cl_int err = clRetainMemObject(native);
  if (err != CL_SUCCESS) {
    free(m);
    return FCL_CL_ERROR(err, "clRetainMemObject");
  }
  m->native = native;
  *mem = m;
  return FCL_OK;
}
