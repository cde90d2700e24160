/* Reference-counted OpenCL contexts whose asynchronous errors go to the log. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "runtime_impl.h"

static void CL_CALLBACK context_notify(const char *errinfo, const void *private_info, size_t cb,
                                       void *user) {
  (void)private_info;
  (void)cb;
  (void)user;
  fcl_log(FCL_LOG_ERROR, "OpenCL context error: %s", errinfo ? errinfo : "(no message)");
}

/* Fill devices of an fcl_context from its cl_context. */
static fcl_status wrap_cl(cl_context cl, fcl_context **out) {
  fcl_context *c = calloc(1, sizeof *c);
  if (!c) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "context object");
  atomic_init(&c->refs, 1);
  atomic_init(&c->memo_refs, 0);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&c->memo_lock, &attr);
  pthread_mutexattr_destroy(&attr);
  c->cl = cl;
  cl_int err = clGetContextInfo(cl, CL_CONTEXT_NUM_DEVICES, sizeof c->num_devices, &c->num_devices,
                                NULL);
  if (err == CL_SUCCESS) {
    c->devices = malloc(c->num_devices * sizeof *c->devices);
    if (!c->devices)
      err = CL_OUT_OF_HOST_MEMORY;
    else
      err = clGetContextInfo(cl, CL_CONTEXT_DEVICES, c->num_devices * sizeof *c->devices,
                             c->devices, NULL);
  }
  if (err != CL_SUCCESS) {
    pthread_mutex_destroy(&c->memo_lock);
    free(c->devices);
    free(c);
    return FCL_CL_ERROR(err, "clGetContextInfo(CL_CONTEXT_DEVICES)");
  }
  *out = c;
  return FCL_OK;
}

fcl_status fcl_context_create(unsigned num_devices, fcl_device *const *devices, fcl_context **out) {
  FCL_CHECK_ARG(num_devices > 0, 1, "num_devices", "must be > 0");
  FCL_CHECK_NULL(devices, 2);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  cl_device_id *native = malloc(num_devices * sizeof *native);
  if (!native) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device list");
  for (unsigned i = 0; i < num_devices; ++i) native[i] = fcl__device_cl(devices[i]);
  cl_int err;
  cl_context cl = clCreateContext(NULL, num_devices, native, context_notify, NULL, &err);
  free(native);
  if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clCreateContext over %u device(s)", num_devices);
  fcl_status st = wrap_cl(cl, out);
  if (st != FCL_OK) clReleaseContext(cl);
  return st;
}

fcl_status fcl_context_create_from_type(const fcl_platform *platform, fcl_device_type type,
                                        fcl_context **out) {
  FCL_CHECK_NULL(platform, 1);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   (cl_context_properties)fcl__platform_cl(platform), 0};
  cl_int err;
  cl_context cl = clCreateContextFromType(
      props, type == FCL_DEVICE_ALL ? CL_DEVICE_TYPE_ALL : (cl_device_type)type, context_notify,
      NULL, &err);
  if (err != CL_SUCCESS)
    return FCL_CL_ERROR(err, "clCreateContextFromType(%s)", fcl_device_type_name(type));
  fcl_status st = wrap_cl(cl, out);
  if (st != FCL_OK) clReleaseContext(cl);
  return st;
}

fcl_status fcl_context_create_default(fcl_context **out) {
  FCL_CHECK_NULL(out, 1);
  *out = NULL;
  fcl_device_entry e;
  FCL_TRY(fcl_device_select(NULL, &e));
  return fcl_context_create(1, &e.device, out);
}

fcl_status fcl_context_wrap(cl_context context, fcl_context **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(out, 2);
  *out = NULL;
  FCL_CL_TRY(clRetainContext(context), "clRetainContext of the caller's context");
  fcl_status st = wrap_cl(context, out);
  if (st != FCL_OK) clReleaseContext(context);
  return st;
}

fcl_context *fcl_context_retain(fcl_context *context) {
  if (context) atomic_fetch_add(&context->refs, 1);
  return context;
}

void fcl_context_release(fcl_context **context) {
  if (!context || !*context) return;
  fcl_context *c = *context;
  *context = NULL;
  int left = atomic_fetch_sub(&c->refs, 1) - 1;
  if (left > 0) {
    /* Only memoized objects still hold the context: destroy them; the last one's release
     * comes back here with left == 0 and frees the context. */
    if (left == atomic_load(&c->memo_refs)) fcl__context_memo_destroy_all(c);
    return;
  }
  fcl__context_memo_destroy_all(c);
  pthread_mutex_destroy(&c->memo_lock);
  clReleaseContext(c->cl);
  free(c->devices);
  free(c);
}

cl_context fcl_context_cl(const fcl_context *context) { return context ? context->cl : NULL; }
unsigned fcl_context_num_devices(const fcl_context *context) {
  return context ? context->num_devices : 0;
}
fcl_device *fcl_context_device(const fcl_context *context, unsigned index) {
  return (context && index < context->num_devices) ? fcl__device_of(context->devices[index]) : NULL;
}

int fcl__context_device_index(const fcl_context *context, cl_device_id device) {
  for (cl_uint i = 0; i < context->num_devices; ++i)
    if (context->devices[i] == device) return (int)i;
  return -1;
}
