/* The device backends built into this library, in the order their platforms are numbered. */
#include "backend.h"

const fcl__backend *const fcl__backends[] = {
    &fcl__opencl_backend,
#if FLOWCL_HAVE_CUDA
    &fcl__cuda_backend,
#endif
};
const size_t fcl__num_backends = sizeof fcl__backends / sizeof *fcl__backends;
