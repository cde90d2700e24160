/* The CUDA backend's own declarations (not installed): NVRTC compilation (nvrtc.c). */
#ifndef FLOWCL_SRC_RUNTIME_CUDA_CUDA_BACKEND_H
#define FLOWCL_SRC_RUNTIME_CUDA_CUDA_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "flowcl/error.h"

/* The CUDA prelude (kernels/prelude_cuda.h, embedded at build time). */
extern const char fcl__prelude_cuda[];

/* What one NVRTC compilation made: the image (a cubin, or PTX text with its NUL) and the
 * compiler's log (NULL when empty), both malloc'd. */
typedef struct {
  char *image;
  size_t size;
  char *log;
} fcl__nvrtc_output;

/* Compiles source (prelude_length bytes of prelude, then the program's text) called name for
 * compute capability cc_major.cc_minor: a cubin, or PTX when ptx. options are OpenCL-style build
 * options: -D macros become #define lines between the prelude and the text (numbered from 1
 * again), -I and NVRTC's own --options pass, OpenCL's -cl- switches with a CUDA meaning are
 * translated (-cl-nv-maxrregcount=N, -cl-fast-relaxed-math, ...), its math hints are dropped;
 * anything else is FCL_ERR_INVALID_ARGUMENT naming it. Errors: FCL_ERR_BUILD_FAILED when NVRTC
 * rejects the text (out->log says why), FCL_ERR_CUDA for NVRTC's own failures. out is filled
 * either way; free it with fcl__nvrtc_output_free. */
fcl_status fcl__nvrtc_compile(const char *source, size_t prelude_length, const char *name,
                              const char *options, int cc_major, int cc_minor, bool ptx,
                              fcl__nvrtc_output *out);
void fcl__nvrtc_output_free(fcl__nvrtc_output *out);
/* NVRTC's version (part of a cached binary's key). */
fcl_status fcl__nvrtc_version(int *major, int *minor);

#endif
