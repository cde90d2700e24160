/* The driver API loaded from libcuda.so.1 on first use. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "../check.h"
#include "driver.h"

static fcl__cu_api api;
static const fcl__cu_api *loaded;
static char reason[256] = "";
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(reason, sizeof reason, "no NVIDIA driver (libcuda.so.1: %s)", dlerror());
    return;
  }
  /* POSIX guarantees that a data pointer from dlsym converts to a function pointer */
#define FCL__CU_LOAD(name, symbol, params)                                                         \
  *(void **)&api.name = dlsym(lib, symbol);                                                        \
  if (!api.name) {                                                                                 \
    snprintf(reason, sizeof reason, "libcuda.so.1 has no %s (a driver older than CUDA 12.8)",      \
             symbol);                                                                              \
    return;                                                                                        \
  }
  FCL__CU_ENTRIES(FCL__CU_LOAD)
#undef FCL__CU_LOAD
  CUresult r = api.Init(0);
  if (r != CUDA_SUCCESS) {
    const char *name = "?";
    api.GetErrorName(r, &name);
    snprintf(reason, sizeof reason, "cuInit failed: %s", name);
    return;
  }
  loaded = &api; /* the library stays open for the life of the process */
}

const fcl__cu_api *fcl__cu(const char **why) {
  pthread_once(&once, load);
  if (why) *why = reason;
  return loaded;
}

fcl_status fcl__cu_error(CUresult r, const char *call, const char *func, const char *file,
                         int line) {
  const char *name = "CUDA_ERROR_UNKNOWN", *text = "unknown error";
  if (loaded) {
    loaded->GetErrorName(r, &name);
    loaded->GetErrorString(r, &text);
  }
  fcl_status st = r == CUDA_ERROR_OUT_OF_MEMORY ? FCL_ERR_OUT_OF_MEMORY : FCL_ERR_CUDA;
  return fcl__error_set(st, (int)r, func, file, line, "%s: %s (%s)", call, name, text);
}
