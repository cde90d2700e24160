/* The OpenCL backend's programs: from source or binaries, build, build logs and status,
 * binaries, a rebuild from cached binaries; and fcl_program_cl. */
#include <stdlib.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

fcl_status fcl__opencl_program_create_source(fcl_program *p) {
  cl_int err;
  p->native = clCreateProgramWithSource(fcl__context_cl(p->context), 1, (const char **)&p->source,
                                        NULL, &err);
  if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clCreateProgramWithSource(%s)", p->origin);
  return FCL_OK;
}

fcl_status fcl__opencl_program_create_binaries(fcl_program *p, unsigned n,
                                               fcl_device *const *devices, const size_t *sizes,
                                               const unsigned char *const *binaries) {
  cl_int err = CL_OUT_OF_HOST_MEMORY;
  cl_int *status = calloc(n, sizeof *status);
  cl_device_id *native = malloc(n * sizeof *native);
  if (status && native) {
    for (unsigned i = 0; i < n; ++i) native[i] = fcl__device_cl(devices[i]);
    p->native = clCreateProgramWithBinary(fcl__context_cl(p->context), n, native, sizes,
                                          (const unsigned char **)binaries, status, &err);
  }
  cl_int first = status ? status[0] : 0;
  free(native);
  free(status);
  if (err != CL_SUCCESS)
    return FCL_CL_ERROR(err, "clCreateProgramWithBinary (first device's binary status %s)",
                        fcl_cl_error_name(first));
  return FCL_OK;
}

void fcl__opencl_program_destroy(fcl_program *p) {
  if (p->native) clReleaseProgram(p->native);
}

fcl_status fcl__opencl_program_build(fcl_program *p, const char *options) {
  FCL_CL_TRY(clBuildProgram(p->native, p->context->num_devices, fcl__context_cl_devices(p->context),
                            options, NULL, NULL),
             "clBuildProgram");
  return FCL_OK;
}

fcl_status fcl__opencl_program_load(fcl_program *p, const size_t *sizes,
                                    const unsigned char *const *binaries, const char *options) {
  unsigned n = p->context->num_devices;
  cl_int err;
  cl_program cl = clCreateProgramWithBinary(fcl__context_cl(p->context), n,
                                            fcl__context_cl_devices(p->context), sizes,
                                            (const unsigned char **)binaries, NULL, &err);
  if (err == CL_SUCCESS)
    err = clBuildProgram(cl, n, fcl__context_cl_devices(p->context), options, NULL, NULL);
  if (err != CL_SUCCESS) {
    if (cl) clReleaseProgram(cl);
    return FCL_CL_ERROR(err, "a program from binaries");
  }
  if (p->native) clReleaseProgram(p->native);
  p->native = cl;
  return FCL_OK;
}

char *fcl__opencl_program_build_log(const fcl_program *p, unsigned i) {
  cl_device_id device = fcl__context_cl_devices(p->context)[i];
  size_t n = 0;
  if (clGetProgramBuildInfo(p->native, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS)
    return NULL;
  char *log = calloc(n + 1, 1);
  if (log &&
      clGetProgramBuildInfo(p->native, device, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS)
    log[0] = '\0';
  return log;
}

fcl_status fcl__opencl_program_binaries(fcl_program *p, size_t *sizes, unsigned char **binaries) {
  unsigned n = p->context->num_devices;
  cl_int err = clGetProgramInfo(p->native, CL_PROGRAM_BINARY_SIZES, n * sizeof *sizes, sizes, NULL);
  for (unsigned i = 0; err == CL_SUCCESS && i < n; ++i)
    if (sizes[i] && !(binaries[i] = malloc(sizes[i]))) err = CL_OUT_OF_HOST_MEMORY;
  if (err == CL_SUCCESS)
    err = clGetProgramInfo(p->native, CL_PROGRAM_BINARIES, n * sizeof *binaries, binaries, NULL);
  if (err != CL_SUCCESS) {
    for (unsigned i = 0; i < n; ++i) {
      free(binaries[i]);
      binaries[i] = NULL;
    }
    return FCL_CL_ERROR(err, "clGetProgramInfo(CL_PROGRAM_BINARIES) of %s", p->origin);
  }
  return FCL_OK;
}

_Static_assert(CL_BUILD_SUCCESS == FCL_BUILD_SUCCESS && CL_BUILD_NONE == FCL_BUILD_NONE &&
                   CL_BUILD_ERROR == FCL_BUILD_ERROR &&
                   CL_BUILD_IN_PROGRESS == FCL_BUILD_IN_PROGRESS,
               "OpenCL's build states are flowcl's");

fcl_status fcl__opencl_program_build_status(const fcl_program *p, const fcl_device *d,
                                            fcl_build_status *status) {
  cl_build_status native = CL_BUILD_NONE;
  FCL_CL_TRY(clGetProgramBuildInfo(p->native, fcl__device_cl(d), CL_PROGRAM_BUILD_STATUS,
                                   sizeof native, &native, NULL),
             "clGetProgramBuildInfo(CL_PROGRAM_BUILD_STATUS)");
  *status = (fcl_build_status)native; /* the same values */
  return FCL_OK;
}

cl_program fcl_program_cl(const fcl_program *program) {
  return program && program->context->backend == &fcl__opencl_backend ? program->native : NULL;
}
