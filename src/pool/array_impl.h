/* Device array layout shared by array.c and array_transfer.c (not installed). */
#ifndef FLOWCL_SRC_POOL_ARRAY_IMPL_H
#define FLOWCL_SRC_POOL_ARRAY_IMPL_H

#include <stdatomic.h>

#include "flowcl/array.h"

/* The memory under one or more arrays. */
typedef struct {
  atomic_int refs;
  fcl_pool *pool; /* NULL for a wrapped buffer */
  fcl_pool_block *block;
  cl_mem buffer; /* the block's buffer, or the wrapped (retained) buffer */
  size_t size;
} fcl__storage;

struct fcl_array {
  fcl__storage *storage;
  cl_command_queue queue;
  fcl_dtype dtype;
  int ndim;
  size_t shape[FCL_ARRAY_MAX_DIMS];
  size_t strides[FCL_ARRAY_MAX_DIMS];
  size_t offset;
  bool readonly; /* writes through this view are refused */
};

/* C-ordered packed strides of shape, in bytes. */
void fcl__packed_strides(int ndim, const size_t *shape, size_t itemsize, size_t *strides);

#endif
