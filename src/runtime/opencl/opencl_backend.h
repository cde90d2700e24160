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

#endif
