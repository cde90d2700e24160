/* VkFFT's kernels through flowcl's program binary cache (included by fft_vkfft.c only, before
 * vkFFT.h). VkFFT compiles every kernel with clCreateProgramWithSource + clBuildProgram, and its
 * own binary reload is broken for OpenCL in 1.2.26 (it copies binaries as text). In this one
 * translation unit the two calls are replaced: a source whose binary is in the cache (same key
 * as every flowcl program: source, options, device, driver, flowcl version) becomes a program
 * from that binary; otherwise the program is built from source and its binary stored after the
 * build. Entries are checksummed and written atomically by the cache itself. */
#ifndef FLOWCL_FFT_VKFFT_CACHE_H
#define FLOWCL_FFT_VKFFT_CACHE_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_impl.h"

#define VK_CACHE_OPTIONS "vkfft" /* kept apart from flowcl's own programs of the same text */

/* Programs built from source whose binaries are to be stored, by handle. */
enum { VK_PENDING = 64 };
static struct {
  pthread_mutex_t lock;
  cl_program program[VK_PENDING];
  char key[VK_PENDING][65];
} vk_pending = {PTHREAD_MUTEX_INITIALIZER, {0}, {{0}}};

static fcl_device *vk_context_device(cl_context ctx) {
  fcl_device *dev = NULL;
  clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL);
  return dev;
}

static cl_program vk_create_program(cl_context ctx, cl_uint count, const char **strings,
                                    const size_t *lengths, cl_int *err) {
  fcl_device *dev = vk_context_device(ctx);
  char key[65];
  bool keyed = false;
  if (count == 1 && dev && fcl__cache_enabled()) {
    size_t n = lengths && lengths[0] ? lengths[0] : strlen(strings[0]);
    char *text = malloc(n + 1);
    if (text) {
      memcpy(text, strings[0], n);
      text[n] = '\0';
      keyed = fcl__cache_key(text, VK_CACHE_OPTIONS, dev, key) == FCL_OK;
      free(text);
    }
  }
  fcl__cache_entry entry;
  int lock = keyed ? fcl__cache_lock(key) : -1; /* see program_cache.c */
  if (keyed && fcl__cache_load(key, &entry)) {
    const unsigned char *bin = entry.binary;
    cl_int status;
    cl_program p = clCreateProgramWithBinary(ctx, 1, &dev, &entry.binary_size, &bin, &status, err);
    fcl__cache_entry_free(&entry);
    fcl__cache_unlock(lock);
    if (p && *err == CL_SUCCESS) return p;
    if (p) clReleaseProgram(p);
  } else {
    fcl__cache_unlock(lock);
  }
  cl_program p = clCreateProgramWithSource(ctx, count, strings, lengths, err);
  if (p && keyed) {
    pthread_mutex_lock(&vk_pending.lock);
    for (int i = 0; i < VK_PENDING; ++i)
      if (!vk_pending.program[i]) {
        vk_pending.program[i] = p;
        memcpy(vk_pending.key[i], key, sizeof key);
        break;
      }
    pthread_mutex_unlock(&vk_pending.lock);
  }
  return p;
}

static cl_int vk_build_program(cl_program p, cl_uint n, fcl_device *const *devs,
                               const char *options, void(CL_CALLBACK *notify)(cl_program, void *),
                               void *user) {
  char key[65] = "";
  pthread_mutex_lock(&vk_pending.lock);
  for (int i = 0; i < VK_PENDING; ++i)
    if (vk_pending.program[i] == p) {
      memcpy(key, vk_pending.key[i], sizeof key);
      vk_pending.program[i] = NULL;
    }
  pthread_mutex_unlock(&vk_pending.lock);
  int lock = key[0] ? fcl__cache_lock(key) : -1; /* the build and its serialization */
  cl_int rc = clBuildProgram(p, n, devs, options, notify, user);
  size_t size = 0;
  if (rc != CL_SUCCESS || !key[0] ||
      clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      !size) {
    fcl__cache_unlock(lock);
    return rc;
  }
  fcl__cache_entry entry = {.binary = malloc(size), .binary_size = size};
  if (entry.binary && clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof entry.binary, &entry.binary,
                                       NULL) == CL_SUCCESS)
    fcl__cache_store(key, &entry);
  fcl__cache_unlock(lock);
  free(entry.binary);
  return rc;
}

#define clCreateProgramWithSource vk_create_program
#define clBuildProgram vk_build_program

#endif
