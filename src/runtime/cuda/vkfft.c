/* The CUDA backend's VkFFT plans (VkFFT's CUDA build, VKFFT_BACKEND 1), for vkfft.h; their
 * kernels through flowcl's program cache. */
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

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
#define cuMemcpyHtoD(d, s, n) vk_constants(d, s, n)
#define cuFuncSetAttribute(f, a, v) fcl__cu(NULL)->FuncSetAttribute(f, a, v)
#define cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sh, st, p, e)                                    \
  fcl__cu(NULL)->LaunchKernel(f, gx, gy, gz, bx, by, bz, sh, st, p, e)
/* VkFFT writes a kernel's launch constants (its work-group shifts where a dispatch is split)
 * with cuMemcpyHtoD, on the legacy stream, which the queues' streams do not wait for: a constant
 * written for the next launch could reach an earlier one still queued. They go on the stream of
 * the plan being made or appended instead, in order with its kernels (from pageable memory
 * cuMemcpyHtoDAsync stages the bytes before it returns). */
static _Thread_local CUstream launching;
static CUresult vk_constants(CUdeviceptr dst, const void *src, size_t bytes) {
  return fcl__cu(NULL)->MemcpyHtoDAsync(dst, src, bytes, launching);
}

/* VkFFT compiles each kernel through NVRTC to PTX, which the driver compiles again at every
 * load; its NVRTC calls go through flowcl's program cache instead: the kernel's text keyed like
 * any program's (the planning device, NVRTC's version), compiled once to a cubin for the
 * device and read from the cache after (counted as programs built and compiled). */
typedef struct {
  char *source;
  unsigned char *binary;
  size_t size;
  char *log;
} vk_program;
static _Thread_local const fcl_device *planning; /* the device of the plan being made */

static nvrtcResult vk_create(nvrtcProgram *prog, const char *src) {
  vk_program *p = calloc(1, sizeof *p);
  if (p) p->source = strdup(src);
  if (!p || !p->source) {
    free(p);
    return NVRTC_ERROR_OUT_OF_MEMORY;
  }
  *prog = (nvrtcProgram)(void *)p;
  return NVRTC_SUCCESS;
}

/* Takes the cubin of out (or its log on a failure). */
static nvrtcResult vk_take(vk_program *p, fcl_status st, fcl__nvrtc_output *out) {
  if (st != FCL_OK) {
    p->log = out->log;
    out->log = NULL;
    fcl__nvrtc_output_free(out);
    return NVRTC_ERROR_COMPILATION;
  }
  p->binary = (unsigned char *)out->image;
  p->size = out->size;
  out->image = NULL;
  fcl__nvrtc_output_free(out);
  return NVRTC_SUCCESS;
}

static nvrtcResult vk_compile(nvrtcProgram prog) {
  vk_program *p = (vk_program *)(void *)prog;
  const fcl__cuda_device *d = planning->native;
  int major = 0, minor = 0;
  if (fcl__cu(NULL)->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                        d->device) != CUDA_SUCCESS ||
      fcl__cu(NULL)->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                        d->device) != CUDA_SUCCESS)
    return NVRTC_ERROR_INVALID_INPUT;
  char key[65];
  const bool keyed = fcl__cache_enabled() &&
                     fcl__cache_key(p->source, "vkfft", planning, key) == FCL_OK;
  const int lock = keyed ? fcl__cache_lock(key) : -1; /* until stored: see program_cache.c */
  fcl__cache_entry entry;
  if (keyed && fcl__cache_load(key, &entry)) {
    p->binary = entry.binary;
    p->size = entry.binary_size;
    entry.binary = NULL;
    fcl__cache_entry_free(&entry);
    fcl__cache_unlock(lock);
    fcl__count_program_built();
    return NVRTC_SUCCESS;
  }
  fcl__nvrtc_output out;
  nvrtcResult r = vk_take(
      p, fcl__nvrtc_compile(p->source, 0, "VkFFT.cu", "", major, minor, false, &out), &out);
  if (r == NVRTC_SUCCESS && keyed) {
    fcl__cache_entry fresh = {.binary = p->binary, .binary_size = p->size};
    fcl__cache_store(key, &fresh);
  }
  fcl__cache_unlock(lock);
  if (r == NVRTC_SUCCESS) {
    fcl__count_program_built();
    fcl__count_program_compiled();
  }
  return r;
}

/* The cubin where VkFFT asks for PTX: the driver loads either. */
static nvrtcResult vk_code_size(nvrtcProgram prog, size_t *size) {
  *size = ((vk_program *)(void *)prog)->size;
  return NVRTC_SUCCESS;
}
static nvrtcResult vk_code(nvrtcProgram prog, char *code) {
  vk_program *p = (vk_program *)(void *)prog;
  memcpy(code, p->binary, p->size);
  return NVRTC_SUCCESS;
}
static nvrtcResult vk_log(nvrtcProgram prog, char *log) {
  vk_program *p = (vk_program *)(void *)prog;
  strcpy(log, p->log ? p->log : "");
  return NVRTC_SUCCESS;
}
static nvrtcResult vk_destroy(nvrtcProgram *prog) {
  vk_program *p = (vk_program *)(void *)*prog;
  if (p) {
    free(p->source);
    free(p->binary);
    free(p->log);
    free(p);
  }
  *prog = NULL;
  return NVRTC_SUCCESS;
}
#define nvrtcCreateProgram(prog, src, name, n, headers, names) vk_create(prog, src)
#define nvrtcCompileProgram(prog, n, options) vk_compile(prog)
#define nvrtcGetPTXSize(prog, size) vk_code_size(prog, size)
#define nvrtcGetPTX(prog, code) vk_code(prog, code)
#define nvrtcGetProgramLog(prog, log) vk_log(prog, log)
#define nvrtcDestroyProgram(prog) vk_destroy(prog)

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
  p->stream = fcl__cuda_stream(queue);
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
  planning = queue->device;
  launching = p->stream;
  VkFFTResult r = initializeVkFFT(&p->app, c);
  planning = NULL;
  /* VkFFT uploads its tables (twiddles, Bluestein's phases) with cudaMemcpy on the legacy stream,
   * which returns before the copy lands: waited for here, before a queue's kernel reads them. */
  CUresult sync = fcl__cu(NULL)->StreamSynchronize(CU_STREAM_LEGACY);
  if (r != VKFFT_SUCCESS || sync != CUDA_SUCCESS) {
    deleteVkFFT(&p->app);
    free(p);
    return r != VKFFT_SUCCESS ? vk_error(r, what)
                              : FCL_CU_ERROR(sync, "cuStreamSynchronize (VkFFT's tables)");
  }
  *out = &p->base;
  return FCL_OK;
}

fcl_status fcl__cuda_vkfft_append(fcl__vkfft *base, fcl_queue *queue, fcl_mem *input,
                                  fcl_mem *buffer, int direction, const char *what) {
  plan *p = (plan *)base;
  FCL_TRY(fcl__cuda_current(queue->device));
  p->stream = fcl__cuda_stream(queue);
  launching = p->stream;
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

fcl_status fcl__cuda_vkfft_local_mem(const fcl_device *d, size_t *bytes) {
  FCL_TRY(fcl__cuda_current(d));
  int value = 0; /* what VkFFT's CUDA build sets its sharedMemorySize to */
  FCL_CU_TRY(fcl__cu(NULL)->DeviceGetAttribute(
                 &value, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                 ((const fcl__cuda_device *)d->native)->device),
             "cuDeviceGetAttribute (shared memory per block, opt-in)");
  *bytes = (size_t)value;
  return FCL_OK;
}
