/* A host-memory allocator with a byte budget, for testing pool logic without a device: blocks
 * are malloc'd (in fcl_allocation.svm) and the budget plays the device's memory size. */
#ifndef FLOWCL_TEST_FAKE_ALLOCATOR_H
#define FLOWCL_TEST_FAKE_ALLOCATOR_H

#include <stdatomic.h>
#include <stdlib.h>

#include "fcl_test.h"

typedef struct {
  size_t budget;
  atomic_size_t used;
  atomic_int outstanding, allocs, frees;
} fake_device;

static fcl_status fake_alloc(void *impl, size_t size, fcl_allocation *out) {
  fake_device *d = impl;
  size_t used = atomic_fetch_add(&d->used, size);
  if (d->budget && used + size > d->budget) {
    atomic_fetch_sub(&d->used, size);
    return FCL_ERR_OUT_OF_MEMORY;
  }
  out->svm = malloc(size);
  out->buffer = NULL;
  out->size = size;
  atomic_fetch_add(&d->outstanding, 1);
  atomic_fetch_add(&d->allocs, 1);
  return out->svm ? FCL_OK : FCL_ERR_OUT_OF_MEMORY;
}

static void fake_free(void *impl, fcl_allocation *a) {
  fake_device *d = impl;
  free(a->svm);
  atomic_fetch_sub(&d->used, a->size);
  atomic_fetch_sub(&d->outstanding, 1);
  atomic_fetch_add(&d->frees, 1);
}

static const fcl_allocator_ops fake_ops = {fake_alloc, fake_free, NULL};

#endif
