/* The shape of a VkFFT plan from flowcl's configuration (not installed): included by each
 * backend's VkFFT file after <vkFFT.h>, whose configuration has the same fields in every build
 * (the device, queue and buffer fields, which differ, are the backend's to set). */
#ifndef FLOWCL_SRC_RUNTIME_VKFFT_SHAPE_H
#define FLOWCL_SRC_RUNTIME_VKFFT_SHAPE_H

#include "vkfft.h"

static inline void fcl__vkfft_shape(VkFFTConfiguration *c, const fcl__vkfft_config *config) {
  c->doublePrecision = config->double_precision;
  c->FFTdim = config->dims;
  for (int i = 0; i < 3; ++i) {
    c->size[i] = config->size[i];
    c->omitDimension[i] = config->omit[i];
    c->inputBufferStride[i] = config->input_stride[i];
    c->bufferStride[i] = config->stride[i];
  }
  c->performR2C = config->r2c;
  c->isInputFormatted = config->input_formatted;
  c->inverseReturnToInputBuffer = config->inverse_to_input;
  c->inputBufferOffset = config->input_offset;
  /* Twiddles from tables VkFFT computes on the host (in double), on every backend: its default
   * for float on NVIDIA and AMD computes them in the kernels with each API's own sine, so that
   * VkFFT's CUDA and OpenCL builds differed by 1.6e-6 in a 64^3 TGV's energy after 20 steps
   * (3.5e-8 with the tables, at no cost measured: docs/benchmarks.md). */
  c->useLUT = 1;
}

#endif
