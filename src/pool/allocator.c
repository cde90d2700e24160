/* Allocators: deferred, immediate, host-pinned and SVM, behind one ops table. */
#include <stdatomic.h>
#include <stdlib.h>

#include "check.h"
#include "flowcl/opencl.h"
#include "flowcl/pool.h"
#include "runtime_impl.h"

struct fcl_allocator {
  atomic_int refs;
  fcl_allocator_ops ops;
  void *impl;
};

typedef struct {
  fcl_context *context;
  fcl_mem_kind kind;
  fcl_queue *queue; /* immediate allocator only */
  cl_svm_mem_flags svm_flags;
  cl_ulong device_bytes; /* the device's global memory */
  atomic_size_t live;    /* bytes of this allocator's buffers */
} builtin;

static fcl_status buffer_failed(const builtin *b, cl_int err, size_t size) {
  if (err == CL_INVALID_BUFFER_SIZE) {
    fcl_device_info info = {0};
    fcl_device_get_info(fcl_context_device(b->context, 0), &info);
    cl_ulong max = info.max_mem_alloc_size;
    return fcl__error_set(FCL_ERR_INVALID_ARGUMENT, err, __func__, __FILE__, __LINE__,
                          "buffer of %zu bytes exceeds the device's largest allocation (%llu "
                          "bytes): CL_INVALID_BUFFER_SIZE",
                          size, (unsigned long long)max);
  }
  bool oom = err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
             err == CL_OUT_OF_HOST_MEMORY;
  return fcl__error_set(oom ? FCL_ERR_OUT_OF_MEMORY : FCL_ERR_OPENCL, err, __func__, __FILE__,
                        __LINE__, "buffer of %zu bytes: %s (%d)", size, fcl_cl_error_name(err),
                        err);
}

static fcl_status buffer_alloc(void *impl, size_t size, fcl_allocation *out) {
  builtin *b = impl;
  /* Drivers that allocate on first use (PoCL aborts then, NVIDIA faults later) must not be
   * handed more than the device holds: refused here, with the figures. */
  size_t live = atomic_fetch_add(&b->live, size);
  if (b->device_bytes && (cl_ulong)live + size > b->device_bytes) {
    atomic_fetch_sub(&b->live, size);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY,
                     "buffer of %zu bytes: this allocator holds %zu bytes "
                     "and the device memory is %llu bytes",
                     size, live, (unsigned long long)b->device_bytes);
  }
  fcl_mem *m = NULL;
  fcl_status st = fcl_mem_create(b->context, b->kind, size, NULL, &m);
  if (st != FCL_OK) {
    atomic_fetch_sub(&b->live, size);
    return st;
  }
  if (b->queue) { /* immediate: make the memory exist now */
    cl_event ev = NULL;
    cl_mem native = fcl_mem_cl(m);
    cl_int err = clEnqueueMigrateMemObjects(fcl_queue_cl(b->queue), 1, &native,
                                            CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, &ev);
    if (err == CL_SUCCESS && fcl_events_wait(1, &ev) != FCL_OK) /* a counted host sync */
      err = (cl_int)fcl_last_native_error();
    cl_int status = CL_COMPLETE;
    if (ev) {
      clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
      clReleaseEvent(ev);
    }
    if (err == CL_SUCCESS && status < 0) err = status;
    if (err != CL_SUCCESS) {
      fcl_mem_release(&m);
      atomic_fetch_sub(&b->live, size);
      if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
      return buffer_failed(b, err, size);
    }
  }
  *out = (fcl_allocation){m, NULL, size};
  return FCL_OK;
}

static void buffer_free(void *impl, fcl_allocation *a) {
  builtin *b = impl;
  if (a->buffer) {
    fcl_mem_release(&a->buffer);
    atomic_fetch_sub(&b->live, a->size);
  }
  a->buffer = NULL;
}

static fcl_status svm_alloc(void *impl, size_t size, fcl_allocation *out) {
  builtin *b = impl;
  void *p = clSVMAlloc(b->context->cl, b->svm_flags, size, 0);
  if (!p) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "clSVMAlloc of %zu bytes returned NULL", size);
  *out = (fcl_allocation){NULL, p, size};
  return FCL_OK;
}

static void svm_free(void *impl, fcl_allocation *a) {
  builtin *b = impl;
  if (a->svm) clSVMFree(b->context->cl, a->svm);
  a->svm = NULL;
}

static void builtin_destroy(void *impl) {
  builtin *b = impl;
  fcl_queue_release(&b->queue);
  fcl_context_release(&b->context);
  free(b);
}

fcl_status fcl_allocator_create_custom(const fcl_allocator_ops *ops, void *impl,
                                       fcl_allocator **out) {
  FCL_CHECK_NULL(ops, 1);
  FCL_CHECK_NULL(out, 3);
  FCL_CHECK_ARG(ops->alloc && ops->free, 1, "ops", "alloc and free must be set");
  *out = NULL;
  fcl_allocator *a = calloc(1, sizeof *a);
  if (!a) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "allocator object");
  atomic_init(&a->refs, 1);
  a->ops = *ops;
  a->impl = impl;
  *out = a;
  return FCL_OK;
}

static fcl_status create_builtin(fcl_context *context, fcl_mem_kind kind, fcl_queue *queue,
                                 const fcl_allocator_ops *ops, cl_svm_mem_flags svm_flags,
                                 fcl_allocator **out) {
  builtin *b = calloc(1, sizeof *b);
  if (!b) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "allocator state");
  b->context = fcl_context_retain(context);
  b->kind = kind;
  b->svm_flags = svm_flags;
  atomic_init(&b->live, 0);
  fcl_device_info info = {0};
  fcl_device_get_info(fcl_context_device(context, 0), &info);
  b->device_bytes = info.global_mem_size;
  if (queue) {
    fcl_queue_retain(queue);
    b->queue = queue;
  }
  fcl_status st = fcl_allocator_create_custom(ops, b, out);
  if (st != FCL_OK) builtin_destroy(b);
  return st;
}

static const fcl_allocator_ops buffer_ops = {buffer_alloc, buffer_free, builtin_destroy};
static const fcl_allocator_ops svm_ops = {svm_alloc, svm_free, builtin_destroy};

fcl_status fcl_allocator_create_deferred(fcl_context *context, fcl_mem_kind kind,
                                         fcl_allocator **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_ARG(kind == FCL_MEM_DEVICE || kind == FCL_MEM_PINNED, 2, "kind",
                "FCL_MEM_DEVICE or FCL_MEM_PINNED");
  FCL_CHECK_NULL(out, 3);
  return create_builtin(context, kind, NULL, &buffer_ops, 0, out);
}

fcl_status fcl_allocator_create_immediate(fcl_context *context, fcl_queue *queue, fcl_mem_kind kind,
                                          fcl_allocator **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(queue, 2);
  FCL_CHECK_ARG(kind == FCL_MEM_DEVICE || kind == FCL_MEM_PINNED, 3, "kind",
                "FCL_MEM_DEVICE or FCL_MEM_PINNED");
  FCL_CHECK_NULL(out, 4);
  return create_builtin(context, kind, queue, &buffer_ops, 0, out);
}

fcl_status fcl_allocator_create_host_pinned(fcl_context *context, fcl_allocator **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(out, 2);
  return create_builtin(context, FCL_MEM_PINNED, NULL, &buffer_ops, 0, out);
}

fcl_status fcl_allocator_create_svm(fcl_context *context, fcl_allocator **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(out, 2);
  *out = NULL;
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
  return create_builtin(context, FCL_MEM_DEVICE, NULL, &svm_ops,
                        CL_MEM_READ_WRITE | (fine ? CL_MEM_SVM_FINE_GRAIN_BUFFER : 0), out);
}

fcl_allocator *fcl_allocator_retain(fcl_allocator *allocator) {
  if (allocator) atomic_fetch_add(&allocator->refs, 1);
  return allocator;
}

void fcl_allocator_release(fcl_allocator **allocator) {
  if (!allocator || !*allocator) return;
  fcl_allocator *a = *allocator;
  *allocator = NULL;
  if (atomic_fetch_sub(&a->refs, 1) != 1) return;
  if (a->ops.destroy) a->ops.destroy(a->impl);
  free(a);
}

fcl_status fcl_allocator_alloc(fcl_allocator *allocator, size_t size, fcl_allocation *out) {
  FCL_CHECK_NULL(allocator, 1);
  FCL_CHECK_ARG(size > 0, 2, "size", "must be > 0");
  FCL_CHECK_NULL(out, 3);
  *out = (fcl_allocation){NULL, NULL, 0};
  return allocator->ops.alloc(allocator->impl, size, out);
}

void fcl_allocator_free(fcl_allocator *allocator, fcl_allocation *allocation) {
  if (!allocator || !allocation) return;
  allocator->ops.free(allocator->impl, allocation);
  allocation->size = 0;
}
