/* The OpenCL backend's contexts (their asynchronous errors go to the log), and fcl_context_cl /
 * fcl_context_wrap. */
#include <stdlib.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

static void CL_CALLBACK context_notify(const char *errinfo, const void *private_info, size_t cb,
                                       void *user) {
  (void)private_info;
  (void)cb;
  (void)user;
  fcl_log(FCL_LOG_ERROR, "OpenCL context error: %s", errinfo ? errinfo : "(no message)");
}

/* c's devices, flowcl's and OpenCL's, from its OpenCL context c->native. */
static fcl_status read_devices(fcl_context *c) {
  cl_uint n = 0;
  cl_int err = clGetContextInfo(c->native, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL);
  cl_device_id *ids = err == CL_SUCCESS ? malloc(n * sizeof *ids) : NULL;
  c->devices = err == CL_SUCCESS ? malloc(n * sizeof *c->devices) : NULL;
  if (err == CL_SUCCESS && (!ids || !c->devices)) err = CL_OUT_OF_HOST_MEMORY;
  if (err == CL_SUCCESS)
    err = clGetContextInfo(c->native, CL_CONTEXT_DEVICES, n * sizeof *ids, ids, NULL);
  for (cl_uint i = 0; err == CL_SUCCESS && i < n; ++i)
    if (!(c->devices[i] = fcl__device_of(ids[i]))) err = CL_OUT_OF_HOST_MEMORY;
  if (err != CL_SUCCESS) {
    free(ids);
    free(c->devices);
    c->devices = NULL;
    return FCL_CL_ERROR(err, "clGetContextInfo(CL_CONTEXT_DEVICES)");
  }
  c->num_devices = n;
  c->native_devices = ids;
  return FCL_OK;
}

fcl_status fcl__opencl_context_create(fcl_device *const *devices, unsigned num_devices,
                                      fcl_context *c) {
  cl_device_id *native = malloc(num_devices * sizeof *native);
  if (!native) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device list");
  for (unsigned i = 0; i < num_devices; ++i) native[i] = fcl__device_cl(devices[i]);
  cl_int err;
  c->native = clCreateContext(NULL, num_devices, native, context_notify, NULL, &err);
  free(native);
  if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clCreateContext over %u device(s)", num_devices);
  fcl_status st = read_devices(c);
  if (st != FCL_OK) clReleaseContext(c->native);
  return st;
}

void fcl__opencl_context_destroy(fcl_context *c) {
  clReleaseContext(c->native);
  free(c->native_devices);
  free(c->devices);
}

cl_context fcl_context_cl(const fcl_context *context) {
  return context && context->backend == &fcl__opencl_backend ? context->native : NULL;
}

fcl_status fcl_context_wrap(cl_context context, fcl_context **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(out, 2);
  *out = NULL;
  cl_uint n = 0; /* a handle that is not a context fails here, before anything is made */
  FCL_CL_TRY(clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL),
             "argument 1 (context): clGetContextInfo");
  fcl_context *c = NULL;
  FCL_TRY(fcl__context_new(&fcl__opencl_backend, &c));
  clRetainContext(context); /* a valid context: cannot fail */
  c->native = context;
  fcl_status st = read_devices(c);
  if (st != FCL_OK) {
    clReleaseContext(context);
    fcl__context_free(c);
    return st;
  }
  *out = c;
  return FCL_OK;
}
