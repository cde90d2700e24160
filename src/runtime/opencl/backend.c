/* The OpenCL backend's table. */
#include "opencl_backend.h"

const fcl__backend fcl__opencl_backend = {
    .name = "opencl",
    .queue_create = fcl__opencl_queue_create,
    .queue_destroy = fcl__opencl_queue_destroy,
    .queue_flush = fcl__opencl_queue_flush,
    .queue_finish = fcl__opencl_queue_finish,
    .queue_marker = fcl__opencl_queue_marker,
};

const fcl__backend *fcl__context_backend(const fcl_context *context) {
  (void)context; /* every context is an OpenCL one until a second backend is built */
  return &fcl__opencl_backend;
}
