/* The OpenCL backend's entries of the backend table (src/runtime/opencl, not installed). */
#ifndef FLOWCL_SRC_RUNTIME_OPENCL_BACKEND_H
#define FLOWCL_SRC_RUNTIME_OPENCL_BACKEND_H

#include "../backend.h"

fcl_status fcl__opencl_queue_create(const fcl_context *context, const fcl_device *device,
                                    unsigned flags, fcl_queue *q);
void fcl__opencl_queue_destroy(fcl_queue *q);
fcl_status fcl__opencl_queue_flush(fcl_queue *q);
fcl_status fcl__opencl_queue_finish(fcl_queue *q);
fcl_status fcl__opencl_queue_marker(fcl_queue *q, bool barrier, cl_uint num_wait,
                                    const cl_event *wait, cl_event *event);

fcl_status fcl__opencl_mem_create(fcl_context *context, fcl_mem *m, void *host);
void fcl__opencl_mem_destroy(fcl_mem *m);
fcl_status fcl__opencl_mem_write(fcl_queue *q, fcl_mem *dst, size_t offset, size_t bytes,
                                 const void *host, bool blocking, cl_uint num_wait,
                                 const cl_event *wait, cl_event *event);
fcl_status fcl__opencl_mem_read(fcl_queue *q, const fcl_mem *src, size_t offset, size_t bytes,
                                void *host, bool blocking, cl_uint num_wait, const cl_event *wait,
                                cl_event *event);
fcl_status fcl__opencl_mem_copy(fcl_queue *q, const fcl_mem *src, size_t src_offset, fcl_mem *dst,
                                size_t dst_offset, size_t bytes, cl_uint num_wait,
                                const cl_event *wait, cl_event *event);
fcl_status fcl__opencl_mem_fill(fcl_queue *q, fcl_mem *dst, const void *pattern,
                                size_t pattern_size, size_t offset, size_t bytes, cl_uint num_wait,
                                const cl_event *wait, cl_event *event);
fcl_status fcl__opencl_mem_rect(fcl_queue *q, const fcl_mem *src, fcl_mem *dst, void *host,
                                const fcl_rect *r, bool blocking, cl_uint num_wait,
                                const cl_event *wait, cl_event *event);
fcl_status fcl__opencl_mem_map(fcl_queue *q, fcl_mem *m, unsigned flags, size_t offset,
                               size_t bytes, cl_uint num_wait, const cl_event *wait, void **host);
fcl_status fcl__opencl_mem_unmap(fcl_queue *q, fcl_mem *m, void *host, cl_uint num_wait,
                                 const cl_event *wait, cl_event *event);

#endif
