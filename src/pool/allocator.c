/* Allocators: deferred, immediate, host-pinned and SVM, behind one ops table. */
#include <stdatomic.h>
#include <stdlib.h>

#include "check.h"
#include "flowcl/opencl.h" /* shared virtual memory (fcl_svm_*): OpenCL alone has it */
#include "flowcl/pool.h"

struct fcl_allocator {
  atomic_int refs;
  fcl_allocator_ops ops;
  void *impl;
};

typedef struct {
  fcl_context *context;
  fcl_mem_kind kind;
  fcl_queue *queue;      /* immediate allocator only */
  bool svm_fine;         /* SVM allocator: fine-grained buffers */
  uint64_t device_bytes; /* the device's global memory */
  atomic_size_t live;    /* bytes of this allocator's buffers */
} builtin;

static fcl_status buffer_alloc(void *impl, size_t size, fcl_allocation *out) {
  builtin *b = impl;
  /* Drivers that allocate on first use (PoCL aborts then, NVIDIA faults later) must not be
   * handed more than the device holds: refused here, with the figures. */
  size_t live = atomic_fetch_add(&b->live, size);
  if (b->device_bytes && (uint64_t)live + size > b->device_bytes) {
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
  if (b->queue && (st = fcl_mem_commit(b->queue, m)) != FCL_OK) { /* immediate: exist now */
    fcl_mem_release(&m);
    atomic_fetch_sub(&b->live, size);
    return st;
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
  void *p = NULL;
  FCL_TRY(fcl_svm_alloc(b->context, size, b->svm_fine, &p));
  *out = (fcl_allocation){NULL, p, size};
  return FCL_OK;
}

static void svm_free(void *impl, fcl_allocation *a) {
  builtin *b = impl;
  fcl_svm_free(b->context, a->svm);
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
                                 const fcl_allocator_ops *ops, bool svm_fine, fcl_allocator **out) {
  builtin *b = calloc(1, sizeof *b);
  if (!b) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "allocator state");
  b->context = fcl_context_retain(context);
  b->kind = kind;
  b->svm_fine = svm_fine;
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
  return create_builtin(context, kind, NULL, &buffer_ops, false, out);
}

fcl_status fcl_allocator_create_immediate(fcl_context *context, fcl_queue *queue, fcl_mem_kind kind,
                                          fcl_allocator **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(queue, 2);
  FCL_CHECK_ARG(kind == FCL_MEM_DEVICE || kind == FCL_MEM_PINNED, 3, "kind",
                "FCL_MEM_DEVICE or FCL_MEM_PINNED");
  FCL_CHECK_NULL(out, 4);
  return create_builtin(context, kind, queue, &buffer_ops, false, out);
}

fcl_status fcl_allocator_create_host_pinned(fcl_context *context, fcl_allocator **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(out, 2);
  return create_builtin(context, FCL_MEM_PINNED, NULL, &buffer_ops, false, out);
}

fcl_status fcl_allocator_create_svm(fcl_context *context, fcl_allocator **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(out, 2);
  *out = NULL;
  bool fine = false;
  FCL_TRY(fcl_svm_support(context, &fine));
  return create_builtin(context, FCL_MEM_DEVICE, NULL, &svm_ops, fine, out);
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
