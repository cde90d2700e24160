/* Device array layout shared by array.c and array_transfer.c (not installed). */
#ifndef FLOWCL_SRC_POOL_ARRAY_IMPL_H
#define FLOWCL_SRC_POOL_ARRAY_IMPL_H

#include <stdatomic.h>

#include "flowcl/array.h"

/* The memory under one or more arrays. */
typedef struct fcl__storage {
  atomic_int refs;
  fcl_pool *pool; /* NULL for a wrapped buffer */
  fcl_pool_block *block;
  fcl_mem *buffer; /* the block's buffer, or the wrapped (retained) buffer */
  size_t size;     /* bytes of the arrays it was created for (a pool block may have more) */
  struct fcl__storage *prev, *next; /* the live storages over pool blocks */
} fcl__storage;

struct fcl_array {
  fcl__storage *storage;
  fcl_queue *queue;
  fcl_dtype dtype;
  int ndim;
  size_t shape[FCL_ARRAY_MAX_DIMS];
  size_t strides[FCL_ARRAY_MAX_DIMS];
  size_t offset;
  bool readonly; /* writes through this view are refused */
};

/* Whether buffer is the pool block of a live array's storage, and then the bytes the storage
 * was created with (*bytes): the block may be larger, a pool rounding requests up to its bin,
 * so its CL_MEM_SIZE overstates what a kernel may use of it. */
bool fcl__array_buffer_bytes(fcl_mem *buffer, size_t *bytes);
/* Counts the storages over pool blocks created and released so far: what fcl__array_buffer_bytes
 * said of a buffer holds while the count is unchanged (a released block's buffer may come back
 * under a smaller array). */
size_t fcl__array_pooled_changes(void);

/* C-ordered packed strides of shape, in bytes. */
void fcl__packed_strides(int ndim, const size_t *shape, size_t itemsize, size_t *strides);

#endif
