/* The device backends built into this library, in the order their platforms are numbered. */
#include "backend.h"

const fcl__backend *const fcl__backends[] = {&fcl__opencl_backend};
const size_t fcl__num_backends = sizeof fcl__backends / sizeof *fcl__backends;
