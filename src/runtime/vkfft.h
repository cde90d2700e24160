/* The runtime's binding of VkFFT (not installed): plans of the VkFFT build for a queue's backend
 * (OpenCL's: VKFFT_BACKEND 3), configured in terms of flowcl's objects, so that the FFT layer
 * names no device API. Built with VkFFT (FLOWCL_ENABLE_VKFFT). VkFFT's kernels go through the
 * runtime's program cache. */
#ifndef FLOWCL_SRC_RUNTIME_VKFFT_H
#define FLOWCL_SRC_RUNTIME_VKFFT_H

#include <stdbool.h>
#include <stdint.h>

#include "flowcl/runtime.h"

/* A plan's shape and buffers, in VkFFT's terms (its configuration's fields named in the
 * comments; everything not set is 0). */
typedef struct fcl__vkfft_config {
  unsigned dims;               /* FFTdim: 1 to 3 */
  uint64_t size[3];            /* size: points per dimension (1 past dims) */
  bool omit[3];                /* omitDimension: dimensions left untransformed (batches) */
  uint64_t input_stride[3];    /* inputBufferStride, elements (0: none) */
  uint64_t stride[3];          /* bufferStride, elements (0: packed) */
  bool r2c;                    /* performR2C */
  bool input_formatted;        /* isInputFormatted: real input in a buffer of its own */
  bool inverse_to_input;       /* inverseReturnToInputBuffer */
  uint64_t input_offset;       /* inputBufferOffset, bytes */
  uint64_t input_bytes, bytes; /* inputBufferSize (with input), bufferSize */
  bool double_precision;       /* doublePrecision */
  fcl_mem *input, *buffer;     /* buffers of those sizes to plan with (input: NULL without) */
} fcl__vkfft_config;

/* A plan of one backend (the backend's own object begins with this). */
typedef struct fcl__vkfft {
  const struct fcl__backend *backend;
} fcl__vkfft;

/* A plan for queue's device from config into *out (what names it in errors); a failed kernel
 * build is tried once more (PoCL 5 has been seen to fail one, with an empty log, when four ranks
 * compile at once, and to succeed alone). A backend without VkFFT: FCL_ERR_NOT_SUPPORTED. */
fcl_status fcl__vkfft_plan(fcl_queue *queue, const fcl__vkfft_config *config, const char *what,
                           fcl__vkfft **out);
/* Enqueue the plan on queue: buffer (its in/out), input (NULL, or its input buffer);
 * direction -1 forward, 1 backward. */
fcl_status fcl__vkfft_append(fcl__vkfft *plan, fcl_queue *queue, fcl_mem *input, fcl_mem *buffer,
                             int direction, const char *what);
/* Free the plan and set *plan to NULL (accepts NULL). */
void fcl__vkfft_destroy(fcl__vkfft **plan);
/* The local memory, bytes, that VkFFT's kernels may take on queue's device (its
 * sharedMemorySize: OpenCL's local memory size, CUDA's opt-in maximum per block, which is
 * larger): how many whole columns its strided passes keep there. A backend without VkFFT:
 * FCL_ERR_NOT_SUPPORTED. */
fcl_status fcl__vkfft_local_mem(fcl_queue *queue, size_t *bytes);

#endif
