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
}

#endif
