/* Shared virtual memory (OpenCL 2.0): support, allocation, fill. */
#include "../check.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

fcl_status fcl_svm_support(const fcl_context *context, bool *fine_grain) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(fine_grain, 2);
  bool fine = true;
  for (cl_uint i = 0; i < context->num_devices; ++i) {
    fcl_device_info d;
    FCL_TRY(fcl_device_get_info(fcl_context_device(context, i), &d));
    if (!(d.svm_capabilities & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER))
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                       "shared virtual memory is not supported by this device ('%s', %s)", d.name,
                       d.version);
    fine = fine && (d.svm_capabilities & CL_DEVICE_SVM_FINE_GRAIN_BUFFER);
  }
  *fine_grain = fine;
  return FCL_OK;
}

fcl_status fcl_svm_alloc(const fcl_context *context, size_t bytes, bool fine_grain, void **ptr) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_ARG(bytes > 0, 2, "bytes", "must be > 0");
  FCL_CHECK_NULL(ptr, 4);
  FCL_CHECK_OPENCL(context->backend, 1, "context");
  cl_svm_mem_flags flags = CL_MEM_READ_WRITE | (fine_grain ? CL_MEM_SVM_FINE_GRAIN_BUFFER : 0);
  *ptr = clSVMAlloc(fcl__context_cl(context), flags, bytes, 0);
  if (!*ptr)
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "clSVMAlloc of %zu bytes (%s) returned NULL", bytes,
                     fine_grain ? "fine-grained" : "coarse-grained");
  return FCL_OK;
}

void fcl_svm_free(const fcl_context *context, void *ptr) {
  if (context && ptr && context->backend == &fcl__opencl_backend)
    clSVMFree(fcl__context_cl(context), ptr);
}

fcl_status fcl_svm_fill(fcl_queue *queue, void *ptr, const void *pattern, size_t pattern_size,
                        size_t bytes, unsigned num_wait, fcl_event *const *wait,
                        fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(ptr, 2);
  FCL_CHECK_NULL(pattern, 3);
  FCL_CHECK_ARG(queue->backend == &fcl__opencl_backend, 1, "queue", "not an OpenCL queue");
  FCL_TRY(fcl__check_waits(num_wait, wait, 7, "wait"));
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  FCL_CL_TRY(fcl__cl_sync_end(&s, clEnqueueSVMMemFill(queue->native, ptr, pattern, pattern_size,
                                                      bytes, s.n, s.list, s.evp)),
             "clEnqueueSVMMemFill of %zu bytes", bytes);
  return FCL_OK;
}
