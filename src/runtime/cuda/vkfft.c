/* The CUDA backend's VkFFT plans (VkFFT's CUDA build, VKFFT_BACKEND 1), for vkfft.h. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "../vkfft.h"
#include "cuda_backend.h"
#include "driver.h"

/* VkFFT calls these driver functions by name; in this file only they go through the driver API
 * the backend loads at run time (a library linked to libcuda would not start where there is no
 * NVIDIA driver). Its runtime-API calls (cudaMalloc, cudaMemcpy, ...) are libcudart's, which
 * loads the driver itself when first called. */
#undef cuModuleGetGlobal
#undef cuMemcpyHtoD
#define cuDeviceGetAttribute(v, a, d) fcl__cu(NULL)->DeviceGetAttribute(v, a, d)
#define cuModuleLoadDataEx(m, image, n, o, v) fcl__cu(NULL)->ModuleLoadDataEx(m, image, n, o, v)
#define cuModuleGetFunction(f, m, name) fcl__cu(NULL)->ModuleGetFunction(f, m, name)
#define cuModuleGetGlobal(p, s, m, name) fcl__cu(NULL)->ModuleGetGlobal(p, s, m, name)
#define cuModuleUnload(m) fcl__cu(NULL)->ModuleUnload(m)
#define cuMemcpyHtoD(d, s, n) fcl__cu(NULL)->MemcpyHtoD(d, s, n)
#define cuFuncSetAttribute(f, a, v) fcl__cu(NULL)->FuncSetAttribute(f, a, v)
#define cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sh, st, p, e)                                    \
  fcl__cu(NULL)->LaunchKernel(f, gx, gy, gz, bx, by, bz, sh, st, p, e)
#define VKFFT_BACKEND 1 /* CUDA */
#include <vkFFT.h>

#include "../vkfft_shape.h"

typedef struct {
  fcl__vkfft base;
  VkFFTApplication app;
  /* VkFFT keeps pointers to these and reads them at every append: they live with the plan */
  CUdevice device;
  cudaStream_t stream;
  uint64_t input_bytes, bytes;
} plan;

static fcl_status vk_error(VkFFTResult r, const char *what) {
  return fcl__error_set(FCL_ERR_FFT, (int)r, __func__, __FILE__, __LINE__,
                        "VkFFT %d: %s (VkFFTResult %d; VkFFT %d, CUDA)", (int)r, what, (int)r,
                        VkFFTGetVersion());
}

static void *pointer(const fcl_mem *m) {
  return m ? (void *)(uintptr_t)((const fcl__cuda_mem *)m->native)->ptr : NULL;
}

fcl_status fcl__cuda_vkfft_plan(fcl_queue *queue, const fcl__vkfft_config *config, const char *what,
                                fcl__vkfft **out) {
  FCL_TRY(fcl__cuda_current(queue->device));
  plan *p = calloc(1, sizeof *p);
  if (!p) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "VkFFT plan");
  p->base.backend = &fcl__cuda_backend;
  p->device = ((const fcl__cuda_device *)queue->device->native)->device;
  p->stream = queue->native;
  p->input_bytes = config->input_bytes;
  p->bytes = config->bytes;
  void *input = pointer(config->input), *buffer = pointer(config->buffer);
  VkFFTConfiguration c;
  memset(&c, 0, sizeof c);
  c.device = &p->device;
  c.stream = &p->stream;
  c.num_streams = 1;
  fcl__vkfft_shape(&c, config);
  if (config->input) {
    c.inputBuffer = &input;
    c.inputBufferSize = &p->input_bytes;
  }
  c.buffer = &buffer;
  c.bufferSize = &p->bytes;
  VkFFTResult r = initializeVkFFT(&p->app, c);
  if (r != VKFFT_SUCCESS) {
    deleteVkFFT(&p->app);
    free(p);
    return vk_error(r, what);
  }
  *out = &p->base;
  return FCL_OK;
}

fcl_status fcl__cuda_vkfft_append(fcl__vkfft *base, fcl_queue *queue, fcl_mem *input,
                                  fcl_mem *buffer, int direction, const char *what) {
  plan *p = (plan *)base;
  FCL_TRY(fcl__cuda_current(queue->device));
  p->stream = queue->native;
  void *native = pointer(buffer), *native_in = pointer(input);
  VkFFTLaunchParams lp;
  memset(&lp, 0, sizeof lp);
  lp.buffer = &native;
  if (input) lp.inputBuffer = &native_in;
  VkFFTResult r = VkFFTAppend(&p->app, direction, &lp);
  return r == VKFFT_SUCCESS ? FCL_OK : vk_error(r, what);
}

void fcl__cuda_vkfft_destroy(fcl__vkfft *base) {
  plan *p = (plan *)base;
  deleteVkFFT(&p->app);
  free(p);
}
