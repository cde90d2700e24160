/** @file
 * flowcl operators: what a vortex-method step is made of (umbrella of the operator headers
 * this build has). Each operator plans at creation (kernels generated, built and tuned, work
 * arrays allocated) and only enqueues when applied. */
#ifndef FLOWCL_OPERATORS_H
#define FLOWCL_OPERATORS_H

#include "flowcl/version.h"

#if FLOWCL_ENABLE_MPI
#include "flowcl/advection.h"
#include "flowcl/analytics.h"
#include "flowcl/fd.h"
#include "flowcl/penalization.h"
#include "flowcl/problem.h"
#include "flowcl/transfer.h"
#endif
#if FLOWCL_ENABLE_MPI && (FLOWCL_ENABLE_FFTW || FLOWCL_ENABLE_VKFFT)
#include "flowcl/spectral.h"
#endif

#endif /* FLOWCL_OPERATORS_H */
