/** @file
 * flowcl: OpenCL + MPI building blocks for HPC fluid solvers. Umbrella header. */
#ifndef FLOWCL_H
#define FLOWCL_H

#include "flowcl/error.h"
#include "flowcl/runtime.h"
#include "flowcl/pool.h"
#include "flowcl/array.h"
#include "flowcl/launch.h"
#include "flowcl/codegen.h"
#include "flowcl/tune.h"
#include "flowcl/version.h"
#if FLOWCL_ENABLE_MPI
#include "flowcl/field.h"
#endif
#if FLOWCL_ENABLE_MPI && FLOWCL_ENABLE_HDF5
#include "flowcl/io.h"
#endif
#if FLOWCL_ENABLE_MPI && (FLOWCL_ENABLE_FFTW || FLOWCL_ENABLE_VKFFT)
#include "flowcl/fft.h"
#endif
#include "flowcl/operators.h"

#endif
