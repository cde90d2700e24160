/* Programs that another library builds itself, through the program binary cache (see
 * cached_program.h). */
#include "cached_program.h"

#include <stdlib.h>
#include <string.h>

#include "../runtime_impl.h"
#include "opencl_backend.h"

/* The count strings as one NUL-terminated text (malloc'd; NULL when out of memory). */
static char *joined(cl_uint count, const char **strings, const size_t *lengths) {
  size_t total = 0, at = 0;
  for (cl_uint i = 0; i < count; ++i)
    total += lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
  char *text = malloc(total + 1);
  for (cl_uint i = 0; text && i < count; ++i) {
    const size_t n = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
    memcpy(text + at, strings[i], n);
    at += n;
  }
  if (text) text[at] = '\0';
  return text;
}

/* The context's device when it has one only (an entry holds one device's binary), else NULL. */
static cl_device_id only_device(cl_context context) {
  cl_uint n = 0;
  cl_device_id device = NULL;
  if (clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL) != CL_SUCCESS ||
      n != 1 ||
      clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, NULL) != CL_SUCCESS)
    return NULL;
  return device;
}

/* The program built from key's cached binary; NULL on a miss or a binary the driver refuses. */
static cl_program from_cache(cl_context context, cl_device_id device, const char *key) {
  fcl__cache_entry entry;
  if (!fcl__cache_load(key, &entry)) return NULL;
  const unsigned char *binary = entry.binary;
  cl_int status, err;
  cl_program p = clCreateProgramWithBinary(context, 1, &device, &entry.binary_size, &binary,
                                           &status, &err);
  fcl__cache_entry_free(&entry);
  if (p && err == CL_SUCCESS && clBuildProgram(p, 1, &device, NULL, NULL, NULL) == CL_SUCCESS)
    return p;
  if (p) clReleaseProgram(p);
  fcl_log(FCL_LOG_WARNING, "driver refused the cached binary %s: compiling from source", key);
  return NULL;
}

/* Store the binary of p (built for one device) under key. */
static void store(cl_program p, const char *key) {
  size_t size = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || !size)
    return;
  fcl__cache_entry entry = {.binary = malloc(size), .binary_size = size};
  if (entry.binary && clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof entry.binary, &entry.binary,
                                       NULL) == CL_SUCCESS)
    fcl__cache_store(key, &entry);
  free(entry.binary);
}

cl_program fcl__cached_program_create(cl_context context, cl_uint count, const char **strings,
                                      const size_t *lengths, const char *tag, cl_int *err) {
  cl_int ignored;
  if (!err) err = &ignored;
  cl_device_id device = fcl__cache_enabled() ? only_device(context) : NULL;
  char *text = device ? joined(count, strings, lengths) : NULL;
  char key[65];
  const bool keyed = text && fcl__cache_key(text, tag, fcl__device_of(device), key) == FCL_OK;
  free(text);
  if (!keyed) return clCreateProgramWithSource(context, count, strings, lengths, err);
  const int lock = fcl__cache_lock(key); /* until stored: see program_cache.c */
  cl_program p = from_cache(context, device, key);
  if (p) {
    *err = CL_SUCCESS;
    fcl__count_program_built();
  } else if ((p = clCreateProgramWithSource(context, count, strings, lengths, err)) &&
             clBuildProgram(p, 1, &device, NULL, NULL, NULL) == CL_SUCCESS) {
    store(p, key);
    fcl__count_program_built();
    fcl__count_program_compiled();
  }
  fcl__cache_unlock(lock);
  return p;
}

/* Whether p is built for the devices (every device of p when n is 0). */
static bool built(cl_program p, cl_uint n, const cl_device_id *devices) {
  cl_device_id all[16];
  if (!n || !devices) {
    if (clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof n, &n, NULL) != CL_SUCCESS || !n ||
        n > 16 || clGetProgramInfo(p, CL_PROGRAM_DEVICES, n * sizeof *all, all, NULL) != CL_SUCCESS)
      return false;
    devices = all;
  }
  for (cl_uint i = 0; i < n; ++i) {
    cl_build_status status = CL_BUILD_NONE;
    if (clGetProgramBuildInfo(p, devices[i], CL_PROGRAM_BUILD_STATUS, sizeof status, &status,
                              NULL) != CL_SUCCESS ||
        status != CL_BUILD_SUCCESS)
      return false;
  }
  return true;
}

cl_int fcl__cached_program_build(cl_program program, cl_uint num_devices,
                                 const cl_device_id *devices, const char *options,
                                 void(CL_CALLBACK *notify)(cl_program, void *), void *user) {
  if (program && built(program, num_devices, devices)) {
    if (notify) notify(program, user);
    return CL_SUCCESS;
  }
  cl_int err = clBuildProgram(program, num_devices, devices, options, notify, user);
  if (err == CL_SUCCESS) {
    fcl__count_program_built();
    fcl__count_program_compiled();
  }
  return err;
}
