/* The OpenCL backend's table. */
#include "opencl_backend.h"

const fcl__backend fcl__opencl_backend = {
    .name = "opencl",
    .platform_count = fcl__opencl_platform_count,
    .platform_get = fcl__opencl_platform_get,
    .platform_info = fcl__opencl_platform_info,
    .platform_device = fcl__opencl_platform_device,
    .device_info = fcl__opencl_device_info,
    .device_vendor = fcl__opencl_device_vendor,
    .queue_create = fcl__opencl_queue_create,
    .queue_destroy = fcl__opencl_queue_destroy,
    .queue_flush = fcl__opencl_queue_flush,
    .queue_finish = fcl__opencl_queue_finish,
    .queue_marker = fcl__opencl_queue_marker,
    .event_release = fcl__opencl_event_release,
    .events_wait = fcl__opencl_events_wait,
    .event_status = fcl__opencl_event_status,
    .event_on_complete = fcl__opencl_event_on_complete,
    .user_event_create = fcl__opencl_user_event_create,
    .user_event_set = fcl__opencl_user_event_set,
    .event_profile = fcl__opencl_event_profile,
    .kernel_create = fcl__opencl_kernel_create,
    .kernel_destroy = fcl__opencl_kernel_destroy,
    .kernel_set_arg = fcl__opencl_kernel_set_arg,
    .kernel_enqueue = fcl__opencl_kernel_enqueue,
    .kernel_work_group_info = fcl__opencl_kernel_work_group_info,
    .mem_create = fcl__opencl_mem_create,
    .mem_destroy = fcl__opencl_mem_destroy,
    .mem_write = fcl__opencl_mem_write,
    .mem_read = fcl__opencl_mem_read,
    .mem_copy = fcl__opencl_mem_copy,
    .mem_fill = fcl__opencl_mem_fill,
    .mem_commit = fcl__opencl_mem_commit,
    .mem_rect = fcl__opencl_mem_rect,
    .mem_map = fcl__opencl_mem_map,
    .mem_unmap = fcl__opencl_mem_unmap,
};

const fcl__backend *fcl__context_backend(const fcl_context *context) {
  (void)context; /* every context is an OpenCL one until a second backend is built */
  return &fcl__opencl_backend;
}
